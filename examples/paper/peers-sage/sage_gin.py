"""GraphSAGE and GIN in plain PyTorch, by PyTorch Geometric's definitions, on Bail or Credit.

PyG is not installable here, so the two layers are written from PyG's source
(torch_geometric/nn/conv/sage_conv.py and gin_conv.py):

  SAGEConv(in, out, aggr='mean'):  out_i = lin_l(mean_{j in N(i)} x_j) + lin_r(x_i)
      lin_l = Linear(in, out, bias=True), lin_r = Linear(in, out, bias=False);
      no self-loop, no normalisation; an isolated node's mean is 0 (scatter-mean).
  GINConv(nn, train_eps=True):     out_i = nn((1 + eps) * x_i + sum_{j in N(i)} x_j)
      eps a learnable scalar, 0 at start.

The neighbour mean and sum are products with the sparse matrices D^-1 A and A
(A the symmetric adjacency without self-loops), which equal PyG's scatter-mean
and scatter-add over the edge list.

Protocol (fairmp's examples/paper/baselines -methods plain): 2 layers, 64
hidden, ReLU, dropout 0.5 after the hidden layer, Adam lr 1e-3, weight decay
1e-5, 300 epochs, full batch, test metrics at the best validation accuracy.
Data: as fairmp's loaders and the project's PyTorch peer (shared/peers/data.py):
features = every column but the label and the sensitive one, min-max scaled to
[-1, 1]; the data folder's split.json.

Example:  OMP_NUM_THREADS=1 /usr/bin/python3 sage_gin.py --dataset bail --models sage,gin --seeds 3
"""
import argparse, csv, json, os, time, warnings
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

SPECS = {
    'bail': dict(label='RECID', sens='WHITE', drop=[]),
    'credit': dict(label='NoDefaultNextMonth', sens='Age', drop=['Single']),
}


def load(root, name):
    spec, d = SPECS[name], os.path.join(root, name)
    with open(os.path.join(d, name + '.csv')) as f:
        rows = list(csv.reader(f))
    header, raw = rows[0], np.array([[float(v) for v in r] for r in rows[1:]])
    cols = [i for i, c in enumerate(header) if c not in [spec['label'], spec['sens']] + spec['drop']]
    x = raw[:, cols]
    lo, hi = x.min(0), x.max(0)
    x = 2 * (x - lo) / np.where(hi > lo, hi - lo, 1) - 1
    y = raw[:, header.index(spec['label'])].astype(np.int64)
    y[y > 1] = 1
    s = (raw[:, header.index(spec['sens'])] > 0).astype(np.int64)
    e = np.loadtxt(os.path.join(d, name + '_edges.txt'), dtype=np.int64)
    e = np.concatenate([e, e[:, ::-1]])
    e = e[e[:, 0] != e[:, 1]]
    e = np.unique(e, axis=0)  # symmetric, binary, no self-loops
    with open(os.path.join(d, 'split.json')) as f:
        split = json.load(f)
    return x, y, s, e, split


def sparse(e, vals, n):
    return torch.sparse_coo_tensor(torch.tensor(e.T), torch.tensor(vals, dtype=torch.float32), (n, n)).coalesce()


class SpMM(torch.autograd.Function):
    """M @ X, with the backward Mᵀ @ grad by a transpose built once (torch.sparse.mm's own
    backward transposes M at every step)."""
    @staticmethod
    def forward(ctx, m, x):
        ctx.mt = m.mt
        return m.m @ x

    @staticmethod
    def backward(ctx, g):
        return None, ctx.mt @ g


class Sparse:  # compressed rows: faster than COO in this torch build
    def __init__(self, e, vals, n):
        coo = sparse(e, vals, n)
        self.m, self.mt = coo.to_sparse_csr(), coo.t().coalesce().to_sparse_csr()

    def __matmul__(self, x):
        return SpMM.apply(self, x)


class SAGEConv(nn.Module):
    def __init__(self, i, o):
        super().__init__()
        self.lin_l, self.lin_r = nn.Linear(i, o, bias=True), nn.Linear(i, o, bias=False)

    def forward(self, x, mean, adj):
        return self.lin_l(mean @ x) + self.lin_r(x)


class GINConv(nn.Module):
    def __init__(self, i, h, o):
        super().__init__()
        self.nn = nn.Sequential(nn.Linear(i, h), nn.ReLU(), nn.Linear(h, o))
        self.eps = nn.Parameter(torch.zeros(1))

    def forward(self, x, mean, adj):
        return self.nn((1 + self.eps) * x + adj @ x)


class Net(nn.Module):  # conv -> ReLU -> dropout(0.5) -> conv
    def __init__(self, kind, d, h=64, c=2):
        super().__init__()
        if kind == 'sage':
            self.c1, self.c2 = SAGEConv(d, h), SAGEConv(h, c)
        else:
            self.c1, self.c2 = GINConv(d, h, h), GINConv(h, h, c)

    def forward(self, x, mean, adj):
        h = F.dropout(F.relu(self.c1(x, mean, adj)), 0.5, self.training)
        return self.c2(h, mean, adj)


def main():
    warnings.filterwarnings('ignore', message='Sparse CSR tensor support is in beta')
    p = argparse.ArgumentParser()
    p.add_argument('--data', default=os.environ.get('FAIRMP_DATA', ''))
    p.add_argument('--dataset', default='bail')
    p.add_argument('--models', default='sage,gin')
    p.add_argument('--seeds', type=int, default=3)
    p.add_argument('--epochs', type=int, default=300)
    p.add_argument('--split', default='', help="a split JSON to check against the data folder's (baselines -save-split)")
    args = p.parse_args()
    x, y, s, e, split = load(args.data, args.dataset)
    if args.split:
        with open(args.split) as f:
            other = json.load(f)
        for k in ('train', 'val', 'test'):
            assert sorted(other[k]) == sorted(split[k]), f'split {k} differs from {args.split}'
    n = len(y)
    deg = np.bincount(e[:, 0], minlength=n).astype(np.float64)
    mean = Sparse(e, 1 / deg[e[:, 0]], n)
    adj = Sparse(e, np.ones(len(e)), n)
    xt, yt, st = torch.tensor(x, dtype=torch.float32), torch.tensor(y), torch.tensor(s)
    idx = {k: torch.tensor(v) for k, v in split.items()}
    print(f'{args.dataset}: n={n} d={x.shape[1]} directed edges={len(e)} isolated={int((deg == 0).sum())} '
          f'split={ {k: len(v) for k, v in idx.items()} } threads={torch.get_num_threads()}', flush=True)

    def metrics(z, i):
        pred, yy, ss = z[i].argmax(1), yt[i], st[i]
        rate = lambda m: pred[m].float().mean().item()
        return [100 * (pred == yy).float().mean().item(), 100 * abs(rate(ss == 0) - rate(ss == 1)),
                100 * abs(rate((ss == 0) & (yy == 1)) - rate((ss == 1) & (yy == 1)))]

    for kind in args.models.split(','):
        rows, secs = [], []
        for seed in range(1, args.seeds + 1):
            torch.manual_seed(seed)
            m = Net(kind, x.shape[1])
            opt = torch.optim.Adam(m.parameters(), lr=1e-3, weight_decay=1e-5)
            best_val, best = -1, None
            t = time.perf_counter()
            for ep in range(args.epochs):
                m.train()
                opt.zero_grad()
                F.cross_entropy(m(xt, mean, adj)[idx['train']], yt[idx['train']]).backward()
                opt.step()
                m.eval()
                with torch.no_grad():
                    z = m(xt, mean, adj)
                val = metrics(z, idx['val'])[0]
                if val > best_val:
                    best_val, best = val, metrics(z, idx['test']) + [ep]
            secs.append((time.perf_counter() - t) / args.epochs)
            rows.append(best)
            print(f'{kind} seed {seed}: acc {best[0]:.2f} ΔDP {best[1]:.2f} ΔEO {best[2]:.2f} '
                  f'(epoch {best[3]}), {secs[-1] * 1000:.1f} ms an epoch', flush=True)
        a = np.array(rows)[:, :3]
        print(f'{kind}: acc {a[:, 0].mean():.2f} ± {a[:, 0].std():.2f}, ΔDP {a[:, 1].mean():.2f} ± {a[:, 1].std():.2f}, '
              f'ΔEO {a[:, 2].mean():.2f} ± {a[:, 2].std():.2f}; median {np.median(secs) * 1000:.1f} ms an epoch '
              f'(train + evaluation)', flush=True)


if __name__ == '__main__':
    main()
