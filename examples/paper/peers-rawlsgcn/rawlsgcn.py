"""RawlsGCN-Graph (Kang, Zhu, Xia, Luo & Tong, WWW 2022) and a plain GCN, on the same split.

An independent PyTorch 1.13 implementation, written from the paper and from fairmp's documentation
(layers.Propagation.DoublyStochastic, graph.DoublyStochastic, fairtrain.RawlsGCNConfig,
metrics.GroupByDegree and metrics.DegreeBias), not from fairmp's Go code nor the authors' code.
Style of peers-nifty: full batch, float32, 2 threads, Adam lr 1e-3 and weight decay 1e-5, 300 epochs,
best-validation-accuracy selection.

RawlsGCN-Graph trains the GCN on the doubly stochastic scaling P = D1 (D^-1/2 (A+I) D^-1/2) D2 of the
GCN matrix (every row and column sums to 1), computed here by the textbook Sinkhorn-Knopp iteration
(alternate row and column scalings) to a tolerance of 1e-6.

Example:  FAIRMP_DATA=/work/shared/data /usr/bin/python3 rawlsgcn.py --dataset bail --seeds 3 \
              --out results/bail_torch.csv
Selftest: /usr/bin/python3 rawlsgcn.py --selftest
"""
import argparse, csv, json, math, os, statistics, time
import numpy as np
import scipy.sparse as sp
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_num_threads(2)
ROOT = os.environ.get('FAIRMP_DATA') or '/work/shared/data'
# (label, sensitive, other dropped columns): fairmp's presets.
SPECS = {'bail': ('RECID', 'WHITE', []), 'credit': ('NoDefaultNextMonth', 'Age', ['Single'])}


# ---------------------------------------------------------------- data

def load(name):
    """Features: every column but the label, the sensitive one and the dropped ones, min-max scaled to
    [-1, 1] over all nodes. Labels and groups: value > 0. Graph: symmetrised, self-loops removed. Split:
    the data set's split.json (fairmp's)."""
    label, sens, drop = SPECS[name]
    with open(os.path.join(ROOT, name, name + '.csv')) as f:
        rows = list(csv.reader(f))
    header, raw = rows[0], np.array(rows[1:], dtype=np.float64)
    cols = [i for i, c in enumerate(header) if c not in [label, sens] + drop]
    x = raw[:, cols]
    lo, hi = x.min(0), x.max(0)
    xs = 2 * (x - lo) / np.where(hi > lo, hi - lo, 1) - 1
    y = (raw[:, header.index(label)] > 0).astype(np.int64)
    s = (raw[:, header.index(sens)] > 0).astype(np.int64)
    n = len(y)
    e = np.loadtxt(os.path.join(ROOT, name, name + '_edges.txt'), dtype=np.int64)
    A = sp.coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n)).tocsr()
    A = ((A + A.T) > 0).astype(np.float64).tolil()
    A.setdiag(0)
    A = A.tocsr()
    A.eliminate_zeros()
    with open(os.path.join(ROOT, name, 'split.json')) as f:
        split = {k: torch.tensor(v) for k, v in json.load(f).items()}
    return dict(x=torch.tensor(xs, dtype=torch.float32), y=torch.tensor(y), s=s, A=A, n=n, split=split)


def gcn_norm(A):
    """D^-1/2 (A + I) D^-1/2 (scipy CSR)."""
    Ah = (A + sp.identity(A.shape[0], format='csr')).tocsr()
    d = np.asarray(Ah.sum(1)).ravel()
    Di = sp.diags(1 / np.sqrt(d))
    return (Di @ Ah @ Di).tocsr()


class NotConverged(Exception):
    pass


def sinkhorn_knopp(M, tol=1e-6, max_iter=5000):
    """Alternating Sinkhorn-Knopp on a square non-negative CSR matrix M: c <- 1, then repeatedly
    r = 1 / (M c) (rows sum to 1) and c = 1 / (M^T r) (columns sum to 1), until every column sum of
    diag(r) M diag(c), which the row step leaves off 1, is within tol. Returns (P, iterations); raises
    NotConverged after max_iter. (On Bail this textbook iteration needs about 1,100 iterations for 1e-6:
    hence the cap of 5000, not fairmp's 1000, which its symmetric iteration reaches in 28.)"""
    MT = M.T.tocsr()
    c = np.ones(M.shape[0])
    for it in range(max_iter + 1):
        r = 1 / (M @ c)
        colsum = c * (MT @ r)
        if np.max(np.abs(colsum - 1)) <= tol:
            return (sp.diags(r) @ M @ sp.diags(c)).tocsr(), it
        c = 1 / (MT @ r)
    raise NotConverged('Sinkhorn-Knopp: %d iterations, column sums off 1 by %.3g' % (max_iter, np.max(np.abs(colsum - 1))))


def to_torch(M):
    M = M.tocoo()
    return torch.sparse_coo_tensor(np.vstack([M.row, M.col]), M.data, M.shape, dtype=torch.float32).coalesce()


# ---------------------------------------------------------------- model

class SpMM(torch.autograd.Function):
    """A @ X with its exact backward A^T @ grad (A need not be symmetric: P is so only within tol)."""
    @staticmethod
    def forward(ctx, A, AT, X):
        ctx.AT = AT
        return torch.sparse.mm(A, X)

    @staticmethod
    def backward(ctx, g):
        return None, None, torch.sparse.mm(ctx.AT, g)


class Lin(nn.Module):  # x W + b, W glorot-uniform (in x out), b zeros: fairmp's GCNConv init
    def __init__(self, i, o):
        super().__init__()
        self.W, self.b = nn.Parameter(nn.init.xavier_uniform_(torch.empty(i, o))), nn.Parameter(torch.zeros(o))


class GCN(nn.Module):  # A relu-dropout(A X W1 + b1) W2 + b2
    def __init__(self, d, h=64, out=2, dropout=0.5):
        super().__init__()
        self.l1, self.l2, self.p = Lin(d, h), Lin(h, out), dropout

    def forward(self, x, A, AT):
        h = F.relu(SpMM.apply(A, AT, x @ self.l1.W) + self.l1.b)
        h = F.dropout(h, self.p, self.training)
        return SpMM.apply(A, AT, h @ self.l2.W) + self.l2.b


# ---------------------------------------------------------------- degree groups and measures

def quantile_groups(deg, buckets):
    """fairmp's GroupByDegree rule, from its doc: cut the nodes at the quantiles of their degrees; group g
    ends where the count of nodes of smaller or equal degree first reaches (g+1)/buckets of them; nodes
    of one degree share a group; a last group smaller than half a share joins the one before it.
    Returns the group of each node (ascending degree) and the groups' (lo, hi) degrees."""
    vals, cnts = np.unique(deg, return_counts=True)
    share = len(deg) / buckets
    ends, cum = [], 0
    for k, c in enumerate(cnts):
        cum += c
        if len(ends) < buckets - 1 and cum >= (len(ends) + 1) * share - 1e-9:
            ends.append(k + 1)
    if not ends or ends[-1] != len(vals):
        ends.append(len(vals))
    if len(ends) >= 2 and cnts[ends[-2]:ends[-1]].sum() < share / 2:
        ends = ends[:-2] + [ends[-1]]
    of, start, ranges = {}, 0, []
    for g, end in enumerate(ends):
        for v in vals[start:end]:
            of[v] = g
        ranges.append((int(vals[start]), int(vals[end - 1])))
        start = end
    return np.array([of[v] for v in deg]), ranges


def percentile(xs, point, level=0.95):
    """Percentile interval: the order statistics ceil(q B) (R's type 1), q = (1-level)/2 and 1-q."""
    xs = np.sort(np.asarray(xs))
    B = len(xs)
    k = lambda q: min(max(int(math.ceil(round(q * B, 9))), 1), B) - 1
    a = (1 - level) / 2
    return point, xs[k(a)], xs[k(1 - a)]


def group_acc_stats(correct, groups, G):
    acc = np.array([correct[groups == g].mean() for g in range(G)])
    return acc.max() - acc.min(), acc.min()


def bootstrap_gap(correct, groups, G, resamples=1000, seed=1):
    """Stratified bootstrap (within each degree group) of the accuracy gap and the worst accuracy."""
    rng = np.random.default_rng(seed)
    members = [np.flatnonzero(groups == g) for g in range(G)]
    gaps, worsts = [], []
    for _ in range(resamples):
        acc = np.array([correct[m[rng.integers(0, len(m), len(m))]].mean() for m in members])
        gaps.append(acc.max() - acc.min())
        worsts.append(acc.min())
    gap, worst = group_acc_stats(correct, groups, G)
    return percentile(gaps, gap), percentile(worsts, worst)


def measures(logits, D, buckets):
    """Test accuracy, ΔDP, RawlsGCN's bias (sample variance over distinct degrees of the mean NLL) and
    the accuracy gap and worst accuracy over degree quantile groups (with 95% intervals), in %."""
    te = D['split']['test'].numpy()
    y = D['y'].numpy()[te]
    pred = logits.argmax(1).numpy()[te]
    nll = -F.log_softmax(logits, 1).numpy()[te, y]
    s = D['s'][te]
    deg = np.asarray(D['A'].sum(1)).ravel().astype(np.int64)[te]
    correct = (pred == y).astype(np.float64)
    dp = abs(pred[s == 0].mean() - pred[s == 1].mean())
    bias = statistics.variance([float(nll[deg == v].mean()) for v in np.unique(deg)])
    groups, ranges = quantile_groups(deg, buckets)
    gap, worst = bootstrap_gap(correct, groups, len(ranges))
    return dict(acc=100 * correct.mean(), dp=100 * dp, bias=bias, gap=[100 * v for v in gap],
                worst=[100 * v for v in worst], degrees=len(np.unique(deg)), ranges=ranges)


# ---------------------------------------------------------------- training

def fit(D, A, seed, epochs):
    """Train the GCN on matrix A; return the best-validation model's logits, that epoch, and the median
    training step (forward, backward, Adam) in ms."""
    torch.manual_seed(seed)
    x, y = D['x'], D['y']
    tr, va = D['split']['train'], D['split']['val']
    At, ATt = to_torch(A), to_torch(A.T.tocsr())
    model = GCN(x.shape[1])
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-5)
    best_val, best_state, best_ep, steps = -1.0, None, -1, []
    for ep in range(1, epochs + 1):
        t0 = time.perf_counter()
        model.train(); opt.zero_grad()
        loss = F.cross_entropy(model(x, At, ATt)[tr], y[tr])
        loss.backward(); opt.step()
        steps.append(1e3 * (time.perf_counter() - t0))
        model.eval()
        with torch.no_grad():
            val = (model(x, At, ATt)[va].argmax(1) == y[va]).float().mean().item()
        if val > best_val:
            best_val, best_ep = val, ep
            best_state = {k: v.clone() for k, v in model.state_dict().items()}
    model.load_state_dict(best_state); model.eval()
    with torch.no_grad():
        logits = model(x, At, ATt)
    return logits, best_ep, statistics.median(steps)


# ---------------------------------------------------------------- selftest

def selftest():
    # The path 0 - 1 - 2 with self-loops scales to D(A+I)D with d0 = d2 = phi^-1/2, d1 = phi^-3/2.
    A = sp.csr_matrix(np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], dtype=np.float64))
    P, _ = sinkhorn_knopp(gcn_norm(A), tol=1e-12)
    phi = (1 + 5 ** 0.5) / 2
    want = np.array([[1 / phi, phi ** -2, 0], [phi ** -2, phi ** -3, phi ** -2], [0, phi ** -2, 1 / phi]])
    assert np.allclose(P.toarray(), want, atol=1e-10), P.toarray()
    # A random graph: rows and columns sum to 1 within tol; the pattern is kept.
    rng = np.random.default_rng(3)
    e = rng.integers(0, 200, (600, 2))
    R = sp.coo_matrix((np.ones(600), (e[:, 0], e[:, 1])), shape=(200, 200)).tocsr()
    R = ((R + R.T) > 0).astype(np.float64).tolil(); R.setdiag(0); R = R.tocsr(); R.eliminate_zeros()
    M = gcn_norm(R)
    P, it = sinkhorn_knopp(M)
    assert np.abs(np.asarray(P.sum(0)).ravel() - 1).max() <= 1e-6 + 1e-12
    assert np.abs(np.asarray(P.sum(1)).ravel() - 1).max() <= 1e-12
    assert (P != 0).nnz == M.nnz and it > 0
    # A star without self-loops has no doubly stochastic scaling.
    S = sp.csr_matrix(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]], dtype=np.float64))
    try:
        sinkhorn_knopp(S, max_iter=50)
        raise AssertionError('the star converged')
    except NotConverged:
        pass
    # The quantile rule on the doc's example.
    g, ranges = quantile_groups(np.array([3, 1, 8, 1, 2, 3, 5, 3]), 2)
    assert list(g) == [0, 0, 1, 0, 0, 0, 1, 0] and ranges == [(1, 3), (5, 8)], (g, ranges)
    g, _ = quantile_groups(np.array([1, 1, 1, 2, 2, 2, 9]), 2)
    assert list(g) == [0] * 7
    print('selftest ok')


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--dataset', default='bail', choices=sorted(SPECS))
    ap.add_argument('--seeds', type=int, default=3)
    ap.add_argument('--epochs', type=int, default=300)
    ap.add_argument('--buckets', type=int, default=4)
    ap.add_argument('--out', default='')
    ap.add_argument('--selftest', action='store_true')
    args = ap.parse_args()
    if args.selftest:
        return selftest()
    D = load(args.dataset)
    mats = {}
    t0 = time.perf_counter(); mats['GCN'] = gcn_norm(D['A'])
    print('matrix D^-1/2(A+I)D^-1/2: built in %.1f ms' % (1e3 * (time.perf_counter() - t0)))
    t0 = time.perf_counter(); mats['RawlsGCN-Graph'], it = sinkhorn_knopp(mats['GCN'])
    print('matrix doubly stochastic: built in %.1f ms (%d Sinkhorn-Knopp iterations from the GCN matrix)'
          % (1e3 * (time.perf_counter() - t0), it))
    rows = []
    print('| method | seed | accuracy | ΔDP | bias (loss variance, per degree) | accuracy gap, degree groups [95%] '
          '| worst group accuracy [95%] | best epoch | ms a step | s a run |')
    print('|---|---|---|---|---|---|---|---|---|---|')
    for method in ['GCN', 'RawlsGCN-Graph']:
        res = []
        for seed in range(args.seeds):
            t0 = time.perf_counter()
            logits, ep, ms = fit(D, mats[method], seed, args.epochs)
            m = measures(logits, D, args.buckets)
            secs = time.perf_counter() - t0
            res.append(m)
            print('| %s | %d | %.2f | %.2f | %.4f | %.2f [%.2f, %.2f] | %.2f [%.2f, %.2f] | %d | %.1f | %.1f |' % (
                method, seed, m['acc'], m['dp'], m['bias'], *m['gap'], *m['worst'], ep, ms, secs), flush=True)
            rows.append([method, seed, m['acc'], m['dp'], m['bias'], *m['gap'], *m['worst'], ep, ms, secs,
                         m['degrees'], len(m['ranges'])])
        f = lambda k, i=None: [r[k] if i is None else r[k][i] for r in res]
        ms2 = lambda v, d=2: '%.*f ± %.*f' % (d, np.mean(v), d, np.std(v))
        print('| **%s mean ± std** | | **%s** | **%s** | **%s** | **%s** | **%s** | | | |' % (
            method, ms2(f('acc')), ms2(f('dp')), ms2(f('bias'), 4), ms2(f('gap', 0)), ms2(f('worst', 0))))
    print('degree groups of the test nodes: %d distinct degrees; quantile groups %s' % (
        res[0]['degrees'], ', '.join('%d-%d' % r for r in res[0]['ranges'])))
    if args.out:
        with open(args.out, 'w', newline='') as fh:
            w = csv.writer(fh)
            w.writerow(['method', 'seed', 'accuracy', 'dp', 'bias', 'acc_gap', 'acc_gap_lo', 'acc_gap_hi',
                        'worst_acc', 'worst_lo', 'worst_hi', 'best_epoch', 'ms_per_step', 'seconds',
                        'degree_groups', 'buckets'])
            w.writerows(rows)


if __name__ == '__main__':
    main()
