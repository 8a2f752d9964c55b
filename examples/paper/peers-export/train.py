# Copied from the project's PyTorch peer (shared/peers/train.py, an independent
# PyTorch 1.13 implementation kept beside the project) for examples/paper/peers-export;
# one change: --export_logits FILE.npy saves the best-validation epoch's
# logits of every node (float32, n x 2, rows in the node table's order) for `debias -scores`.
"""Train/evaluate baselines and FMP on a fairness dataset; print mean +- population std over seeds.

Example:  /usr/bin/python3 ../shared/peers/train.py --dataset nba --models mlp,gcn --variants "" --seeds 1 --epochs 100
"""
import argparse, itertools, json, os, time, warnings
import numpy as np
import torch
import torch.nn.functional as F
from data import load, normalized_adj
from models import build, make_delta

p = argparse.ArgumentParser()
p.add_argument('--dataset', default='nba')
p.add_argument('--models', default='mlp,gcn,sgc,appnp,gat')
p.add_argument('--variants', default='paper,warm')
p.add_argument('--lam_s', default='0,1,5,10')
p.add_argument('--lam_f', default='0,10,100,1000')
p.add_argument('--K', type=int, default=2)
p.add_argument('--seeds', default='5', help='count ("5" -> 0..4) or list ("2,3")')
p.add_argument('--epochs', type=int, default=300)
p.add_argument('--out', default=None)
p.add_argument('--threads', type=int, default=2)
p.add_argument('--export_logits', default=None, help='save the best-validation logits of every node (.npy; one model, one seed)')
args = p.parse_args()
torch.set_num_threads(args.threads)
warnings.filterwarnings('ignore', message='scatter_reduce')

D = load(args.dataset)
x = torch.tensor(D['x'], dtype=torch.float32)
y, s = torch.tensor(D['y']), torch.tensor(D['s'])
Ah = normalized_adj(D['adj']).tocoo()
A = torch.sparse_coo_tensor(np.vstack([Ah.row, Ah.col]), Ah.data, Ah.shape, dtype=torch.float32).coalesce()
idx = {k: torch.tensor(v) for k, v in D['split'].items()}
delta = make_delta(s)  # all nodes' sens
print(f"{args.dataset}: n={len(y)} d={x.shape[1]} undirected edges={D['adj'].nnz // 2} "
      f"split={ {k: len(v) for k, v in idx.items()} }", flush=True)


def metrics(logits, i):
    pred, yy, ss = logits[i].argmax(1), y[i], s[i]
    acc = (pred == yy).float().mean().item()
    rate = lambda m: pred[m].float().mean().item() if m.any() else 0.0
    dp = abs(rate(ss == 0) - rate(ss == 1))
    eo = abs(rate((ss == 0) & (yy == 1)) - rate((ss == 1) & (yy == 1)))
    return [100 * acc, 100 * dp, 100 * eo]


def run(name, seed, **kw):
    torch.manual_seed(seed)
    model = build(name, x.shape[1], delta, **kw)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-5)
    best_val, best = -1, None
    for ep in range(args.epochs):
        model.train(); opt.zero_grad()
        F.cross_entropy(model(x, A)[idx['train']], y[idx['train']]).backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            out = model(x, A)
        val = metrics(out, idx['val'])[0]
        if val > best_val:
            best_val, best = val, metrics(out, idx['test']) + [ep]
            best_out = out.detach().clone()
    if args.export_logits:
        np.save(args.export_logits, best_out.numpy().astype(np.float32))
        print(f'saved the logits of epoch {best[3]} to {args.export_logits}', flush=True)
    return dict(best=best, last=metrics(out, idx['test']))


seeds = list(range(int(args.seeds))) if ',' not in args.seeds else [int(t) for t in args.seeds.split(',') if t]


def save(results):  # rewritten after every seed, so partial results survive an interruption
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, 'w') as f:
            json.dump(dict(args=vars(args), results=results), f, indent=1)


configs = [(m, {}) for m in args.models.split(',') if m]
for v, ls, lf in itertools.product(args.variants.split(','), args.lam_s.split(','), args.lam_f.split(',')):
    if v:
        configs.append(('fmp', dict(variant=v, lam_s=float(ls), lam_f=float(lf), K=args.K)))

fmt = lambda a: ' '.join(f'{m:6.2f}±{sd:5.2f}' for m, sd in zip(a.mean(0), a.std(0)))
print(f"{'model':<34}{'best-val: acc DP EO':^42}{'last epoch: acc DP EO':^42} ep*  s/run")
results = []
if args.export_logits and (len(configs) != 1 or len(seeds) != 1):
    p.error('--export_logits saves one run: give one model, --variants "" and one seed')
for name, kw in configs:
    t, runs = time.time(), []
    label = name if not kw else f"fmp-{kw['variant']} ls={kw['lam_s']:g} lf={kw['lam_f']:g}"
    for seed in seeds:
        runs.append(dict(seed=seed, **run(name, seed, **kw)))
        save(results + [dict(model=name, config=kw, label=label, runs=runs, partial=True)])
    best = np.array([r['best'][:3] for r in runs]); last = np.array([r['last'] for r in runs])
    ep = np.mean([r['best'][3] for r in runs])
    print(f'{label:<34}{fmt(best)}  {fmt(last)} {ep:4.0f} {(time.time() - t) / len(seeds):5.1f}', flush=True)
    results.append(dict(model=name, config=kw, label=label, runs=runs,
                        best_mean=best.mean(0).tolist(), best_std=best.std(0).tolist(),
                        last_mean=last.mean(0).tolist(), last_std=last.std(0).tolist()))
    save(results)
