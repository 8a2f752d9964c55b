# Copied from the project's PyTorch peer (shared/peers/data.py, an independent
# PyTorch 1.13 implementation kept beside the project) for examples/paper/peers-export;
# unchanged.
"""Data loading for the FMP peer (FairGNN NBA; NIFTY bail / credit).

Run as a script to (re)build the split files and the bail/credit similarity graphs:
    /usr/bin/python3 peers/data.py
"""
import csv, json, os, random, sys, time
import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import cdist

ROOT = os.environ.get('FAIRMP_DATA') or os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'data')
# name -> (csv, label column, sens column, columns dropped from features besides label,
#          NIFTY similarity threshold, train/val fractions)
SPECS = {
    'nba':    dict(label='SALARY', sens='country', drop=['user_id', 'country'], frac=(0.8, None)),
    'bail':   dict(label='RECID', sens='WHITE', drop=[], thresh=0.6, frac=(0.5, 0.25)),
    'credit': dict(label='NoDefaultNextMonth', sens='Age', drop=['Single'], thresh=0.7, frac=(0.5, 0.25)),
}


def read_csv(path):
    with open(path) as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def minmax(x):  # per column to [-1, 1] over all nodes
    lo, hi = x.min(0), x.max(0)
    return 2 * (x - lo) / np.where(hi > lo, hi - lo, 1) - 1


def make_split(labels, frac):
    label_idx = np.where(labels >= 0)[0].tolist()
    random.seed(20)
    random.shuffle(label_idx)
    L = len(label_idx)
    a = int(frac[0] * L)
    if frac[1] is None:  # NBA: val = test
        return dict(train=label_idx[:a], val=label_idx[a:], test=label_idx[a:])
    b = int((frac[0] + frac[1]) * L)
    return dict(train=label_idx[:a], val=label_idx[a:b], test=label_idx[b:])


def similarity_edges(x, thresh, block=1000):
    """NIFTY graph: keep (i, j), j != i, with 1/(1+dist_ij) > thresh * max_{k != i} 1/(1+dist_ik)."""
    out = []
    for s in range(0, len(x), block):
        sim = 1.0 / (1.0 + cdist(x[s:s + block], x))
        rows = np.arange(s, min(s + block, len(x)))
        sim[rows - s, rows] = -np.inf                      # exclude self from the max
        keep = sim > thresh * sim.max(1, keepdims=True)
        i, j = np.nonzero(keep)
        out.append(np.stack([i + s, j], 1))
    return np.concatenate(out)


def load(name):
    """Returns dict(x, y, s, adj (scipy CSR, symmetric, binary, no self loops), split)."""
    spec, d = SPECS[name], os.path.join(ROOT, name)
    header, rows = read_csv(os.path.join(d, name + '.csv'))
    raw = np.array([[float(v) for v in r] for r in rows])
    col = lambda c: raw[:, header.index(c)]
    # features: every column except the label, the sensitive column and the dropped ones (as fairmp's loaders)
    feat_cols = [i for i, c in enumerate(header) if c not in [spec['label'], spec['sens']] + spec['drop']]
    x = minmax(raw[:, feat_cols])
    y = col(spec['label']).astype(np.int64)
    y[y > 1] = 1
    s = (col(spec['sens']) > 0).astype(np.int64)
    n = len(y)
    if name == 'nba':
        uid = {int(r[0]): i for i, r in enumerate(rows)}     # exact ints (ids exceed 2^53)
        with open(os.path.join(d, 'nba_relationship.txt')) as f:
            e = np.array([[uid[int(a)], uid[int(b)]] for a, b in (l.split() for l in f if l.strip())])
    else:
        e = np.loadtxt(os.path.join(d, name + '_edges.txt'), dtype=np.int64)
    A = sp.coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n)).tocsr()
    A = ((A + A.T) > 0).astype(np.float64)
    A = (A - sp.diags(A.diagonal())).tocsr()  # drop self loops (added back in normalized_adj)
    A.eliminate_zeros()
    with open(os.path.join(d, 'split.json')) as f:
        split = json.load(f)
    return dict(x=x, y=y, s=s, adj=A, split=split, feat_names=[header[i] for i in feat_cols])


def normalized_adj(A):
    """Ahat = D^-1/2 (A + I) D^-1/2 as scipy CSR."""
    A = A + sp.eye(A.shape[0])
    dinv = 1.0 / np.sqrt(np.asarray(A.sum(1)).ravel())
    return sp.diags(dinv) @ A @ sp.diags(dinv)


if __name__ == '__main__':
    for name in sys.argv[1:] or SPECS:
        spec, d = SPECS[name], os.path.join(ROOT, name)
        header, rows = read_csv(os.path.join(d, name + '.csv'))
        raw = np.array([[float(v) for v in r] for r in rows])
        labels = raw[:, header.index(spec['label'])]
        split = make_split(labels, spec['frac'])
        with open(os.path.join(d, 'split.json'), 'w') as f:
            json.dump(split, f)
        print(name, {k: len(v) for k, v in split.items()})
        if 'thresh' in spec:
            t = time.time()
            # NIFTY builds the graph on the raw (unnormalised) columns minus the label (credit: minus 'Single')
            cols = [i for i, c in enumerate(header) if c not in [spec['label']] + spec['drop']]
            e = similarity_edges(raw[:, cols], spec['thresh'])
            np.savetxt(os.path.join(d, name + '_edges.txt'), e, fmt='%d')
            und = {(min(a, b), max(a, b)) for a, b in e.tolist()}
            print(f'{name}: {len(e)} directed pairs, {len(und)} undirected edges, {time.time() - t:.1f}s')
