"""Run the authors' FMP code (zhimengj0326/FMP, main.py) unchanged on CPU, and save
every run's last-epoch test predictions.

    OMP_NUM_THREADS=1 /usr/bin/python3 run_fmp.py --repo /tmp/fmp --data $FAIRMP_DATA/nba \
        --out results/fmp_nba_default.csv -- --seed=42 --epochs=300 --num-hidden=64 ...

Everything after `--` goes to main.py as its own arguments. What the runner changes, and
nothing else:
  1. sys.path: ./shim (CPU stand-ins for dgl, torch_geometric, torch_sparse) before the repo;
  2. main.py's source, in memory, two literal substitutions: the device line
     `torch.device('cuda:{}'.format(args.gpu))` -> `torch.device('cpu')`, and the data path
     `"/data/zhimengj/dataset/NBA"` -> --data;
  3. torch.Tensor.cuda and torch.nn.Module.cuda return self (fairgnn.py:59 and fmp.py:112
     call .cuda());
  4. torch.set_num_threads(1) and torch.manual_seed(--seed of main.py) before main.py runs
     (main.py seeds numpy and the CUDA generator only, so on CPU its runs were unseeded);
  5. two wrappers that only observe: fairgnn.get_model (marks the start of a run) and
     utils.fair_metric (keeps the test call's probabilities; it calls the original).
It runs in a scratch working directory (main.py writes log/ there).
"""
import argparse
import csv
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    argv = sys.argv[1:]
    if '--' in argv:
        cut = argv.index('--')
        ours, theirs = argv[:cut], argv[cut + 1:]
    else:
        ours, theirs = argv, []
    ap = argparse.ArgumentParser()
    ap.add_argument('--repo', required=True, help='work tree of zhimengj0326/FMP')
    ap.add_argument('--data', required=True, help='folder with nba.csv, nba_relationship.txt')
    ap.add_argument('--out', required=True, help='CSV of test predictions (run,node,y,s,p1)')
    a = ap.parse_args(ours)
    repo = os.path.abspath(a.repo)
    data = os.path.abspath(a.data)
    out = os.path.abspath(a.out)

    import torch
    torch.set_num_threads(1)
    seed = 42
    for t in theirs:
        if t.startswith('--seed='):
            seed = int(t.split('=', 1)[1])
    torch.manual_seed(seed)
    torch.Tensor.cuda = lambda self, *args, **kw: self
    torch.nn.Module.cuda = lambda self, *args, **kw: self

    sys.path[:0] = [os.path.join(HERE, 'shim'), repo]
    import utils
    import fairgnn

    runs = []  # per run: dict(t0, t_last, test)
    orig_get_model = fairgnn.get_model

    def get_model(*args, **kw):
        runs.append({'t0': time.time(), 't_last': None, 'test': None})
        return orig_get_model(*args, **kw)
    fairgnn.get_model = get_model

    orig_fair_metric = utils.fair_metric
    calls = [0]

    def fair_metric(output, labels, sens, idx):
        r = orig_fair_metric(output, labels, sens, idx)
        calls[0] += 1
        if calls[0] % 3 == 0:  # main.py calls it for train, val, test in that order
            runs[-1]['test'] = (idx.detach().clone(), output.detach()[idx].clone(),
                                labels.detach()[idx].clone(), (sens.detach()[idx] > 0).clone(),
                                r)
            runs[-1]['t_last'] = time.time()
        return r
    utils.fair_metric = fair_metric

    src = open(os.path.join(repo, 'main.py')).read()
    subs = [("torch.device('cuda:{}'.format(args.gpu))", "torch.device('cpu')"),
            ('"/data/zhimengj/dataset/NBA"', repr(data))]
    for old, new in subs:
        if src.count(old) != 1:
            sys.exit('run_fmp: expected one %r in main.py, found %d' % (old, src.count(old)))
        src = src.replace(old, new)

    work = tempfile.mkdtemp(prefix='fmp-run-')
    os.chdir(work)
    sys.argv = [os.path.join(repo, 'main.py')] + theirs
    g = {'__name__': '__main__', '__file__': sys.argv[0]}
    exec(compile(src, sys.argv[0], 'exec'), g)

    tmp = out + '.tmp'
    with open(tmp, 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(['run', 'node', 'y', 's', 'p1', 'seconds', 'their_dsp', 'their_deo'])
        for i, r in enumerate(runs):
            idx, p, y, s, (dsp, deo) = r['test']
            secs = r['t_last'] - r['t0']
            for k in range(idx.numel()):
                w.writerow([i, int(idx[k]), int(y[k]), int(s[k]), '%.6f' % float(p[k]),
                            '%.3f' % secs, '%.6f' % dsp, '%.6f' % deo])
    os.replace(tmp, out)
    print('run_fmp: wrote %s (%d runs)' % (out, len(runs)))


if __name__ == '__main__':
    main()
