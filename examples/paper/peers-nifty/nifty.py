"""NIFTY (Agarwal, Lakkaraju & Zitnik, UAI 2021) on a GCN encoder, and a plain GCN baseline.

An independent PyTorch 1.13 implementation, written from the paper and from the specification in
fairmp's layers/fairtrain/nifty.go (NIFTYConfig's doc comment), not from the authors' code. Style of
shared/peers: full batch, Adam lr 1e-3, weight decay 1e-5, best-validation-accuracy selection.

Example:  FAIRMP_DATA=/work/shared/data /usr/bin/python3 nifty.py --dataset bail \
              --split /tmp/bail_split100.json --seeds 3 --epochs 300 --out results/bail_train100.csv
Selftest: /usr/bin/python3 nifty.py --selftest
"""
import argparse, csv, json, os, time
import numpy as np
import scipy.sparse as sp
import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.environ.get('FAIRMP_DATA') or os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', '..', 'shared', 'data')
SPECS = {'bail': ('RECID', 'WHITE'), 'credit': ('NoDefaultNextMonth', 'Age')}  # (label, sensitive)


# ---------------------------------------------------------------- data

def load(name, split_path):
    """Features: every column but the label, min-max scaled to [-1, 1] over all nodes, except the
    sensitive column, kept 0/1 at its position (NIFTY's protocol). Graph: symmetrised, no self loops."""
    label, sens = SPECS[name]
    with open(os.path.join(ROOT, name, name + '.csv')) as f:
        rows = list(csv.reader(f))
    header, raw = rows[0], np.array(rows[1:], dtype=np.float64)
    cols = [i for i, c in enumerate(header) if c != label]
    x = raw[:, cols]
    sc = [header[i] for i in cols].index(sens)
    lo, hi = x.min(0), x.max(0)
    xs = 2 * (x - lo) / np.where(hi > lo, hi - lo, 1) - 1
    xs[:, sc] = x[:, sc]
    assert set(np.unique(x[:, sc])) <= {0.0, 1.0}, 'sensitive column is not 0/1'
    y = (raw[:, header.index(label)] > 0).astype(np.int64)
    n = len(y)
    e = np.loadtxt(os.path.join(ROOT, name, name + '_edges.txt'), dtype=np.int64)
    A = sp.coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n)).tocsr()
    A = sp.triu((A + A.T) > 0, k=1).tocoo()  # undirected edges i < j, self loops removed
    und = np.stack([A.row, A.col], 1)
    with open(split_path) as f:
        split = {k: torch.tensor(v) for k, v in json.load(f).items()}
    return dict(x=torch.tensor(xs, dtype=torch.float32), y=torch.tensor(y), s=torch.tensor(x[:, sc].astype(np.int64)),
                sc=sc, n=n, und=und, split=split, names=[header[i] for i in cols])


def gcn_adj(n, und):
    """D^-1/2 (A + I) D^-1/2 (torch sparse COO) of the undirected edge list und (i < j)."""
    loops = np.arange(n)
    i = np.concatenate([und[:, 0], und[:, 1], loops])
    j = np.concatenate([und[:, 1], und[:, 0], loops])
    deg = np.bincount(i, minlength=n).astype(np.float64)
    v = 1.0 / np.sqrt(deg[i] * deg[j])
    return torch.sparse_coo_tensor(np.vstack([i, j]), v, (n, n), dtype=torch.float32).coalesce()


def drop_edges(und, p, rng):
    """Each undirected edge dropped whole with probability p."""
    return und[rng.random(len(und)) >= p]


def flip(x, sc):
    """Copy of x with column sc flipped 0 <-> 1 (other values left alone)."""
    out = x.clone()
    c = out[:, sc]
    out[:, sc] = torch.where(c == 0, torch.ones_like(c), torch.where(c == 1, torch.zeros_like(c), c))
    return out


def perturb_view(x, sc, p, g):
    """Training view's features: each non-sensitive column chosen with probability p; one N(0, 1) draw
    added to every entry of the chosen columns (the spec's PerturbFeatures)."""
    chosen = torch.rand(x.shape[1], generator=g) < p
    chosen[sc] = False
    noise = torch.randn(1, generator=g)
    out = x.clone()
    out[:, chosen] += noise
    return out


# ---------------------------------------------------------------- models

class SymSpMM(torch.autograd.Function):
    """A @ X for a symmetric sparse A; the backward is A @ grad. Copied from shared/peers/models.py."""
    @staticmethod
    def forward(ctx, A, X):
        ctx.A = A
        return torch.sparse.mm(A, X)

    @staticmethod
    def backward(ctx, g):
        return None, torch.sparse.mm(ctx.A, g)


class Lin(nn.Module):  # x W + b, W glorot-uniform (in x out), b zeros: fairmp's Linear and GCNConv init
    def __init__(self, i, o):
        super().__init__()
        self.W, self.b = nn.Parameter(nn.init.xavier_uniform_(torch.empty(i, o))), nn.Parameter(torch.zeros(o))

    def forward(self, x):
        return x @ self.W + self.b


class GCN(nn.Module):  # A relu-dropout(A X W1 + b1) W2 + b2 (no activation after the last layer)
    def __init__(self, d, h, out, dropout=0.5):
        super().__init__()
        self.l1, self.l2, self.p = Lin(d, h), Lin(h, out), dropout

    def forward(self, x, A, mask=None):
        h = F.relu(SymSpMM.apply(A, x @ self.l1.W) + self.l1.b)
        h = h * mask if (mask is not None and self.training) else F.dropout(h, self.p, self.training)
        return SymSpMM.apply(A, h @ self.l2.W) + self.l2.b


def mlp2(i, h, o):
    return nn.Sequential(Lin(i, h), nn.ReLU(), Lin(h, o))


class NIFTY(nn.Module):
    """Encoder = GCN body (d -> hidden -> width) + linear head (width -> classes); projector
    width -> proj -> width and predictor width -> width -> width, trained alongside."""
    def __init__(self, d, hidden=64, width=16, proj=16, classes=2):
        super().__init__()
        self.body, self.head = GCN(d, hidden, width), Lin(width, classes)
        self.proj, self.pred = mlp2(width, proj, width), mlp2(width, width, width)

    def forward(self, x, A, rep=False, mask=None):
        z = self.body(x, A, mask)
        out = self.head(z)
        return (z, out) if rep else out


class Plain(nn.Module):  # the baseline: GCN d -> 64 -> classes
    def __init__(self, d, hidden=64, classes=2):
        super().__init__()
        self.body = GCN(d, hidden, classes)

    def forward(self, x, A):
        return self.body(x, A)


@torch.no_grad()
def lipschitz(model):
    """Divide every weight matrix (2-D, both sides > 1) by its largest singular value (exact SVD)."""
    for p in model.parameters():
        if p.dim() == 2 and min(p.shape) > 1:
            p.div_(torch.linalg.matrix_norm(p, ord=2))


def neg_cos(q, p):  # mean negative cosine similarity, p's gradient stopped
    return -F.cosine_similarity(q, p.detach(), dim=1, eps=1e-8).mean()


# ---------------------------------------------------------------- training and metrics

def fit(D, method, seed, args):
    """Train `method` ('gcn' or 'nifty'); return the model at its best-validation epoch and that epoch."""
    torch.manual_seed(seed)
    x, y, A, sc = D['x'], D['y'], D['A'], D['sc']
    tr, va = D['split']['train'], D['split']['val']
    model = Plain(x.shape[1]) if method == 'gcn' else NIFTY(x.shape[1])
    if method == 'nifty':
        g, rng, lam = torch.Generator().manual_seed(seed), np.random.default_rng(seed), args.sim_coeff
        views_A = [gcn_adj(D['n'], drop_edges(D['und'], 0.1, rng)) for _ in range(2)]  # once per run
        lipschitz(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-5)
    best_val, best_state, best_ep = -1.0, None, -1
    for ep in range(1, args.epochs + 1):
        model.train(); opt.zero_grad()
        if method == 'gcn':
            loss = F.cross_entropy(model(x, A)[tr], y[tr])
        else:
            x1 = perturb_view(x, sc, 0.1, g)
            x2 = flip(perturb_view(x, sc, 0.1, g), sc)  # the counterfactual view
            mask = (torch.rand(D['n'], 64) >= 0.5).float() / 0.5 if args.shared_dropout else None
            z1, o1 = model(x1, views_A[0], rep=True, mask=mask)
            z2, o2 = model(x2, views_A[1], rep=True, mask=mask)
            ce = F.cross_entropy(o1[tr], y[tr]) + F.cross_entropy(o2[tr], y[tr])
            p1, p2 = model.proj(z1[tr]), model.proj(z2[tr])
            q1, q2 = model.pred(p1), model.pred(p2)
            # (2/(1-lam)) * [(1-lam) * (CE1 + CE2)/2 + lam * S], S = (D(q1, sg p2) + D(q2, sg p1))/2
            loss = ce + lam / (1 - lam) * (neg_cos(q1, p2) + neg_cos(q2, p1))
        loss.backward(); opt.step()
        if method == 'nifty':
            lipschitz(model)
        model.eval()
        with torch.no_grad():
            val = (model(x, A)[va].argmax(1) == y[va]).float().mean().item()
        if val > best_val:
            best_val, best_ep = val, ep
            best_state = {k: v.clone() for k, v in model.state_dict().items()}
    model.load_state_dict(best_state); model.eval()
    return model, best_ep, best_val


def group_metrics(pred, y, s):
    rate = lambda m: pred[m].float().mean().item() if m.any() else 0.0
    acc = (pred == y).float().mean().item()
    dp = abs(rate(s == 0) - rate(s == 1))
    eo = abs(rate((s == 0) & (y == 1)) - rate((s == 1) & (y == 1)))
    return 100 * acc, 100 * dp, 100 * eo


@torch.no_grad()
def evaluate(model, D, seed):
    x, A, sc, te = D['x'], D['A'], D['sc'], D['split']['test']
    pred = model(x, A).argmax(1)
    cf = model(flip(x, sc), A).argmax(1)  # every node's sensitive feature flipped
    g = torch.Generator().manual_seed(seed)  # instability: N(0,1) per non-sensitive entry + 10% edges dropped
    noise = torch.randn(x.shape, generator=g)
    noise[:, sc] = 0
    A_drop = gcn_adj(D['n'], drop_edges(D['und'], 0.1, np.random.default_rng(seed)))
    noisy = model(x + noise, A_drop).argmax(1)
    acc, dp, eo = group_metrics(pred[te], D['y'][te], D['s'][te])
    unf = 100 * (pred[te] != cf[te]).float().mean().item()
    ins = 100 * (pred[te] != noisy[te]).float().mean().item()
    return dict(acc=acc, dp=dp, eo=eo, cf=unf, instab=ins)


# ---------------------------------------------------------------- selftest

def selftest():
    torch.manual_seed(0)
    m = NIFTY(7)
    for p in m.parameters():
        p.data.normal_(0, 3)
    lipschitz(m)
    mats = [p for p in m.parameters() if p.dim() == 2 and min(p.shape) > 1]
    assert len(mats) == 7, len(mats)  # W1, W2, head, 2 projector, 2 predictor
    for p in mats:
        sv = torch.linalg.svdvals(p)
        assert abs(sv[0].item() - 1) < 1e-5, sv[0].item()
    x = torch.randn(50, 7)
    sc = 3
    x[:, sc] = (torch.rand(50) < 0.4).float()
    xf = flip(x, sc)
    assert torch.equal(xf[:, sc], 1 - x[:, sc]), 'sensitive column not flipped'
    others = [j for j in range(7) if j != sc]
    assert torch.equal(xf[:, others], x[:, others]), 'flip changed a non-sensitive column'
    assert torch.equal(flip(xf, sc), x)
    g = torch.Generator().manual_seed(1)
    for _ in range(20):
        xp = perturb_view(x, sc, 0.5, g)
        assert torch.equal(xp[:, sc], x[:, sc]), 'perturbation touched the sensitive column'
    und = np.array([[0, 1], [1, 2], [2, 3]])
    Ad = gcn_adj(5, und).to_dense()
    assert torch.allclose(Ad, Ad.T) and abs(Ad[4, 4].item() - 1) < 1e-6  # symmetric; isolated node keeps its loop
    assert abs(Ad[0, 1].item() - 1 / np.sqrt(2 * 3)) < 1e-6
    print('selftest ok: spectral norms', ' '.join(f'{torch.linalg.svdvals(p)[0].item():.6f}' for p in mats),
          '| flip changes only column', sc)


# ---------------------------------------------------------------- main

def main():
    p = argparse.ArgumentParser()
    p.add_argument('--dataset', default='bail', choices=list(SPECS))
    p.add_argument('--split', default=None, help='JSON {"train","val","test"} (default: the data folder\'s split.json)')
    p.add_argument('--methods', default='gcn,nifty')
    p.add_argument('--seeds', default='3', help='count ("3" -> 0..2) or list ("2,3")')
    p.add_argument('--epochs', type=int, default=300)
    p.add_argument('--sim_coeff', type=float, default=0.5)
    p.add_argument('--shared_dropout', action='store_true', help='one dropout mask per epoch for both views')
    p.add_argument('--out', default=None, help='per-run CSV')
    p.add_argument('--threads', type=int, default=2)
    p.add_argument('--selftest', action='store_true')
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    if args.selftest:
        return selftest()
    D = load(args.dataset, args.split or os.path.join(ROOT, args.dataset, 'split.json'))
    D['A'] = gcn_adj(D['n'], D['und'])
    sp_ = D['split']
    print(f"{args.dataset}: n={D['n']} d={D['x'].shape[1]} (sensitive {D['names'][D['sc']]} at column {D['sc']}) "
          f"undirected edges={len(D['und'])} split={ {k: len(v) for k, v in sp_.items()} } "
          f"train labels={np.bincount(D['y'][sp_['train']].numpy()).tolist()} sim_coeff={args.sim_coeff} "
          f"epochs={args.epochs} shared_dropout={args.shared_dropout}", flush=True)
    seeds = list(range(int(args.seeds))) if ',' not in args.seeds else [int(t) for t in args.seeds.split(',') if t]
    keys = ['acc', 'dp', 'eo', 'cf', 'instab']
    head = f"{'method':<7}{'seed':>5}{'acc':>8}{'ΔDP':>8}{'ΔEO':>8}{'CF':>8}{'instab':>8}{'best ep':>9}{'val acc':>9}{'s/run':>8}"
    rows = []
    print(head, flush=True)
    for method in [m for m in args.methods.split(',') if m]:
        for seed in seeds:
            t = time.time()
            model, ep, val = fit(D, method, seed, args)
            r = dict(method=method, seed=seed, **evaluate(model, D, seed), best_epoch=ep, val_acc=100 * val,
                     seconds=time.time() - t)
            rows.append(r)
            print(f"{method:<7}{seed:>5}" + ''.join(f'{r[k]:8.2f}' for k in keys) +
                  f"{ep:9d}{100 * val:9.2f}{r['seconds']:8.1f}", flush=True)
            if args.out:
                os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
                with open(args.out, 'w', newline='') as f:
                    w = csv.DictWriter(f, fieldnames=list(rows[0]))
                    w.writeheader(); w.writerows(rows)
    print('\nmean ± std (population std over seeds), test nodes, %')
    print(f"{'method':<7}" + ''.join(f'{k:>16}' for k in keys) + f"{'s/run':>8}")
    for method in dict.fromkeys(r['method'] for r in rows):
        a = np.array([[r[k] for k in keys] for r in rows if r['method'] == method])
        secs = np.mean([r['seconds'] for r in rows if r['method'] == method])
        print(f'{method:<7}' + ''.join(f'{m:9.2f} ± {s:4.2f}' for m, s in zip(a.mean(0), a.std(0))) + f'{secs:8.1f}')


if __name__ == '__main__':
    main()
