"""REDRESS (Dong, Kang, Tong & Li, KDD 2021) on a GCN, a plain GCN baseline, and InFoRM's individual bias
(Kang, He, Maciejewski & Tong, KDD 2020).

An independent PyTorch implementation, written from the papers and from the specification in fairmp's doc
comments (REDRESSConfig and RankingLoss in layers/fairtrain, CosineTopK and InFoRMBias in metrics), not from
fairmp's Go code nor from the authors' code. The ranking loss is written as a loss and differentiated by autograd
(fairmp writes its gradient by hand). Style of ../peers-nifty: full batch, Adam lr 1e-3, weight decay 1e-5,
best-validation-accuracy selection, float32, 2 threads.

Example:  FAIRMP_DATA=/work/shared/data /usr/bin/python3 redress.py --dataset bail \
              --split /tmp/bail_split100.json --seeds 3 --epochs 300 --out results/bail_train100.csv
Selftest: /usr/bin/python3 redress.py --selftest
"""
import argparse, csv, json, math, os, time
import numpy as np
import scipy.sparse as sp
import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.environ.get('FAIRMP_DATA') or os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', '..', '..', 'shared', 'data')
SPECS = {'bail': ('RECID', 'WHITE'), 'credit': ('NoDefaultNextMonth', 'Age')}  # (label, sensitive)


# ---------------------------------------------------------------- data

def load(name, split_path):
    """fairmp's default features: every column but the label and the sensitive one, min-max scaled to [-1, 1]
    over all nodes. Graph: symmetrised, no self loops."""
    label, sens = SPECS[name]
    with open(os.path.join(ROOT, name, name + '.csv')) as f:
        rows = list(csv.reader(f))
    header, raw = rows[0], np.array(rows[1:], dtype=np.float64)
    cols = [i for i, c in enumerate(header) if c not in (label, sens)]
    x = raw[:, cols]
    lo, hi = x.min(0), x.max(0)
    xs = 2 * (x - lo) / np.where(hi > lo, hi - lo, 1) - 1
    y = (raw[:, header.index(label)] > 0).astype(np.int64)
    s = raw[:, header.index(sens)].astype(np.int64)
    n = len(y)
    e = np.loadtxt(os.path.join(ROOT, name, name + '_edges.txt'), dtype=np.int64)
    A = sp.coo_matrix((np.ones(len(e)), (e[:, 0], e[:, 1])), shape=(n, n)).tocsr()
    A = sp.triu((A + A.T) > 0, k=1).tocoo()
    und = np.stack([A.row, A.col], 1)
    with open(split_path) as f:
        split = {k: torch.tensor(v) for k, v in json.load(f).items()}
    return dict(x=torch.tensor(xs, dtype=torch.float32), y=torch.tensor(y), s=torch.tensor(s), n=n, und=und,
                split=split, names=[header[i] for i in cols])


def gcn_adj(n, und):
    """D^-1/2 (A + I) D^-1/2 as a torch sparse matrix."""
    loops = np.arange(n)
    i = np.concatenate([und[:, 0], und[:, 1], loops])
    j = np.concatenate([und[:, 1], und[:, 0], loops])
    deg = np.bincount(i, minlength=n).astype(np.float64)
    v = 1.0 / np.sqrt(deg[i] * deg[j])
    return torch.sparse_coo_tensor(np.vstack([i, j]), v, (n, n), dtype=torch.float32).coalesce()


# ---------------------------------------------------------------- model

class Lin(nn.Module):  # x W + b, W glorot-uniform, b zeros
    def __init__(self, i, o):
        super().__init__()
        self.W, self.b = nn.Parameter(nn.init.xavier_uniform_(torch.empty(i, o))), nn.Parameter(torch.zeros(o))


class GCN(nn.Module):  # A dropout(relu(A X W1 + b1)) W2 + b2
    def __init__(self, d, h=64, out=2, dropout=0.5):
        super().__init__()
        self.l1, self.l2, self.p = Lin(d, h), Lin(h, out), dropout

    def forward(self, x, A):
        h = F.relu(torch.sparse.mm(A, x @ self.l1.W) + self.l1.b)
        h = F.dropout(h, self.p, self.training)
        return torch.sparse.mm(A, h @ self.l2.W) + self.l2.b


# ---------------------------------------------------------------- REDRESS's ranking

def simi(v):
    """5 (cos + 1) between all rows of v (a row of norm 0 counts as norm 1, so its cosine is 0)."""
    nrm = v.norm(dim=1, keepdim=True)
    u = v / torch.where(nrm == 0, torch.ones_like(nrm), nrm)
    return 5 * (u @ u.T + 1)


def top_k(S, k):
    """Each row's k largest entries off the diagonal: (values, column indices), largest first."""
    S = S.clone()
    S.fill_diagonal_(-math.inf)
    return torch.topk(S, k, dim=1)


class Ranking:
    """The input side of REDRESS's loss over a node set, fixed for a run: the feature similarities s and each
    anchor's ideal DCG@k (IDCG)."""
    def __init__(self, x, k):
        self.s = simi(x.double())
        self.k = min(k, x.shape[0] - 1)
        self.disc = 1 / torch.log2(torch.arange(self.k, dtype=torch.float64) + 2)  # 1/log2(1 + position)
        best, _ = top_k(self.s, self.k)
        self.idcg = ((2 ** best - 1) * self.disc).sum(1)
        a, b = torch.triu_indices(self.k, self.k, offset=1)
        self.a, self.b = a, b  # every pair of list positions, a above b

    def lists(self, z):
        """The anchors' top-k lists by output similarity (no gradient) and the pairs' weights |ΔNDCG@k| and
        targets P̄, all constants of the loss."""
        with torch.no_grad():
            _, idx = top_k(simi(z.double()), self.k)
            sx = torch.gather(self.s, 1, idx)  # input similarity of each list entry
            g = 2 ** sx - 1
            ga, gb, sa, sb = g[:, self.a], g[:, self.b], sx[:, self.a], sx[:, self.b]
            w = ((ga - gb) * (self.disc[self.a] - self.disc[self.b])).abs() / self.idcg[:, None]
            w = torch.where(self.idcg[:, None] > 0, w, torch.zeros_like(w))
            target = torch.where(sa > sb, torch.ones_like(sa), torch.where(sa < sb, torch.zeros_like(sa), 0.5 * torch.ones_like(sa)))
        return idx, w, target

    def loss(self, z, sigma):
        """Σ_i Σ_{a<b in K(i)} |ΔNDCG|_ab · BCE(sigmoid(σ (ŝ_ia − ŝ_ib)), P̄_ab): the paper's Eq. 8 over the
        anchors' top-k lists by output similarity, summed over the anchors."""
        idx, w, target = self.lists(z)
        sy = torch.gather(simi(z), 1, idx)  # with gradient
        t = sigma * (sy[:, self.a] - sy[:, self.b])
        l = F.binary_cross_entropy_with_logits(t, target.to(t.dtype), weight=w.to(t.dtype), reduction='sum')
        return l

    def ndcg(self, z):
        """Mean NDCG@k of the anchors' lists by output similarity, graded by input similarity."""
        with torch.no_grad():
            _, idx = top_k(simi(z.double()), self.k)
            dcg = ((2 ** torch.gather(self.s, 1, idx) - 1) * self.disc).sum(1)
            ok = self.idcg > 0
            return (dcg[ok] / self.idcg[ok]).mean().item()


# ---------------------------------------------------------------- InFoRM's bias

def cosine_topk_graph(x, k):
    """InFoRM's similarity graph of rows x (the nodes it is built on): cosine similarity, each node linked to
    its k most similar other nodes, the links symmetrised (union), links of cosine <= 0 dropped. Returns
    (i, j, w) with i < j."""
    nrm = x.norm(dim=1, keepdim=True)
    u = x / torch.where(nrm == 0, torch.ones_like(nrm), nrm)
    C = (u @ u.T).double()
    C.fill_diagonal_(-math.inf)
    val, idx = torch.topk(C, min(k, x.shape[0] - 1), dim=1)
    rows = torch.arange(x.shape[0])[:, None].expand_as(idx)
    keep = val > 0
    i, j, w = rows[keep], idx[keep], val[keep]
    lo, hi = torch.minimum(i, j), torch.maximum(i, j)
    key = lo * x.shape[0] + hi
    key, first = np.unique(key.numpy(), return_index=True)
    return lo[first], hi[first], w[first]


def inform_bias(probs, graph):
    """Tr(Yᵀ (D − S) Y) = Σ_{i<j} S_ij ‖Y_i − Y_j‖², Y the class probabilities (all columns)."""
    i, j, w = graph
    return (w * ((probs[i].double() - probs[j].double()) ** 2).sum(1)).sum().item()


# ---------------------------------------------------------------- training and metrics

def fit(D, method, seed, args):
    torch.manual_seed(seed)
    x, y, A = D['x'], D['y'], D['A']
    tr, va = D['split']['train'], D['split']['val']
    model = GCN(x.shape[1], args.hidden)
    rank = Ranking(x[tr], args.topk) if method == 'redress' else None
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-5)
    best_val, best_state, best_ep = -1.0, None, -1
    for ep in range(1, args.epochs + 1):
        model.train(); opt.zero_grad()
        out = model(x, A)
        loss = F.cross_entropy(out[tr], y[tr])
        if rank is not None and ep > args.warmup:
            loss = loss + args.gamma * rank.loss(out[tr], args.sigma)
        loss.backward(); opt.step()
        model.eval()
        with torch.no_grad():
            val = (model(x, A)[va].argmax(1) == y[va]).float().mean().item()
        if val > best_val or (args.select == 'last' and ep == args.epochs):
            best_val, best_ep = val, ep
            best_state = {k: v.clone() for k, v in model.state_dict().items()}
    model.load_state_dict(best_state); model.eval()
    return model, best_ep, best_val


@torch.no_grad()
def evaluate(model, D, args):
    x, te, s, y = D['x'], D['split']['test'], D['s'], D['y']
    out = model(x, D['A'])
    pred = out.argmax(1)[te]
    rate = lambda m: pred[m].float().mean().item()
    acc = (pred == y[te]).float().mean().item()
    dp = abs(rate(s[te] == 0) - rate(s[te] == 1))
    bias = inform_bias(F.softmax(out[te], 1), D['graph'])
    ndcg = D['test_rank'].ndcg(out[te])
    return dict(acc=100 * acc, dp=100 * dp, inform=bias, ndcg=ndcg)


# ---------------------------------------------------------------- selftest

def selftest():
    # The ranking loss on three nodes, computed by hand in fairmp's TestRankingLossByHand from the paper's
    # definitions: features x0=(1,0), x1=(0.6,0.8), x2=(0,1); outputs z0=(1,0), z1=(0,1), z2=(0.8,0.6); k=2,
    # σ=0.5. Similarities 5(cos+1): s01=8, s02=5, s12=9; ŝ01=5, ŝ02=9, ŝ12=8.
    x = torch.tensor([[1, 0], [0.6, 0.8], [0, 1]], dtype=torch.float64)
    z = torch.tensor([[1, 0], [0, 1], [0.8, 0.6]], dtype=torch.float64, requires_grad=True)
    D = 1 / math.log2(3)
    sp_ = lambda t: math.log1p(math.exp(t))
    want = (224 * (1 - D) / (255 + 31 * D) * sp_(2) + 256 * (1 - D) / (511 + 255 * D) * sp_(-1.5)
            + 480 * (1 - D) / (511 + 31 * D) * sp_(0.5))
    got = Ranking(x, 2).loss(z, 0.5).item()
    assert abs(got - want) < 1e-12 and abs(want - 0.99400) < 5e-6, (got, want)
    # Autograd's gradient against central differences (the lists are constant near a point without ties).
    g = torch.Generator().manual_seed(1)
    xr, zr = torch.rand(12, 4, generator=g, dtype=torch.float64) * 2 - 1, torch.rand(12, 3, generator=g, dtype=torch.float64) * 4 - 2
    R = Ranking(xr, 4)
    zr.requires_grad_(True)
    assert torch.autograd.gradcheck(lambda v: R.loss(v, 1.0), (zr,), eps=1e-6, atol=1e-7)
    # InFoRM on four points: x0=(1,0), x1=(1,1), x2=(0,1), x3=(-1,0), k=1: pairs {0,1}, {1,2} of weight 1/√2;
    # probabilities (.9,.1), (.6,.4), (.2,.8), (.5,.5): bias = (0.18 + 0.32)/√2.
    pts = torch.tensor([[1., 0], [1, 1], [0, 1], [-1, 0]])
    graph = cosine_topk_graph(pts, 1)
    assert graph[0].tolist() == [0, 1] and graph[1].tolist() == [1, 2], graph
    probs = torch.tensor([[.9, .1], [.6, .4], [.2, .8], [.5, .5]])
    b = inform_bias(probs, graph)
    assert abs(b - 0.5 / math.sqrt(2)) < 1e-7, b
    print(f'selftest ok: ranking loss {got:.5f} (hand {want:.5f}), gradcheck passed, InFoRM bias {b:.5f} (hand {0.5 / math.sqrt(2):.5f})')


# ---------------------------------------------------------------- main

def main():
    p = argparse.ArgumentParser()
    p.add_argument('--dataset', default='bail', choices=list(SPECS))
    p.add_argument('--split', default=None, help='JSON {"train","val","test"} (default: the data folder\'s split.json)')
    p.add_argument('--methods', default='gcn,redress')
    p.add_argument('--seeds', default='3', help='count ("3" -> 0..2) or list ("2,3")')
    p.add_argument('--epochs', type=int, default=300)
    p.add_argument('--hidden', type=int, default=64)
    p.add_argument('--gamma', type=float, default=1.0)
    p.add_argument('--sigma', type=float, default=0.01)
    p.add_argument('--topk', type=int, default=10)
    p.add_argument('--warmup', type=int, default=0)
    p.add_argument('--select', default='best', choices=['best', 'last'], help='parameters kept: best validation accuracy (first on ties) or the last epoch')
    p.add_argument('--k', type=int, default=10, help="neighbours per test node in InFoRM's similarity graph")
    p.add_argument('--out', default=None, help='per-run CSV')
    p.add_argument('--threads', type=int, default=2)
    p.add_argument('--selftest', action='store_true')
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    if args.selftest:
        return selftest()
    D = load(args.dataset, args.split or os.path.join(ROOT, args.dataset, 'split.json'))
    D['A'] = gcn_adj(D['n'], D['und'])
    te = D['split']['test']
    D['graph'] = cosine_topk_graph(D['x'][te], args.k)
    D['test_rank'] = Ranking(D['x'][te], args.topk)
    sp_ = D['split']
    print(f"{args.dataset}: n={D['n']} d={D['x'].shape[1]} split={ {k: len(v) for k, v in sp_.items()} } "
          f"InFoRM graph on the test nodes: k={args.k}, {len(D['graph'][0])} pairs, weight {D['graph'][2].sum().item():.1f}; "
          f"select={args.select} gamma={args.gamma} sigma={args.sigma} topk={args.topk} warmup={args.warmup} epochs={args.epochs}", flush=True)
    seeds = list(range(int(args.seeds))) if ',' not in args.seeds else [int(t) for t in args.seeds.split(',') if t]
    keys = ['acc', 'dp', 'inform', 'ndcg']
    print(f"{'method':<8}{'seed':>5}{'acc':>8}{'ΔDP':>8}{'InFoRM':>10}{'NDCG':>8}{'kept ep':>9}{'s/run':>8}", flush=True)
    rows = []
    for method in [m for m in args.methods.split(',') if m]:
        for seed in seeds:
            t = time.time()
            model, ep, val = fit(D, method, seed, args)
            r = dict(method=method, seed=seed, **evaluate(model, D, args), best_epoch=ep, val_acc=100 * val,
                     seconds=time.time() - t)
            rows.append(r)
            print(f"{method:<8}{seed:>5}{r['acc']:8.2f}{r['dp']:8.2f}{r['inform']:10.1f}{r['ndcg']:8.4f}{ep:9d}{r['seconds']:8.1f}", flush=True)
            if args.out:
                os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
                with open(args.out, 'w', newline='') as f:
                    w = csv.DictWriter(f, fieldnames=list(rows[0]))
                    w.writeheader(); w.writerows(rows)
    print('\nmean ± std (population std over seeds), test nodes; acc and ΔDP in %')
    for method in dict.fromkeys(r['method'] for r in rows):
        a = np.array([[r[k] for k in keys] for r in rows if r['method'] == method])
        secs = np.mean([r['seconds'] for r in rows if r['method'] == method])
        m, s = a.mean(0), a.std(0)
        print(f'{method:<8} acc {m[0]:.2f} ± {s[0]:.2f}  ΔDP {m[1]:.2f} ± {s[1]:.2f}  InFoRM {m[2]:.1f} ± {s[2]:.1f}  '
              f'NDCG@{args.topk} {m[3]:.4f} ± {s[3]:.4f}  s/run {secs:.1f}')


if __name__ == '__main__':
    main()
