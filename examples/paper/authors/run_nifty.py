"""Run the authors' NIFTY code (chirag126/nifty, nifty_sota_gnn.py) unchanged on CPU and
save the test predictions of the model it reports.

    OMP_NUM_THREADS=1 /usr/bin/python3 run_nifty.py --repo /tmp/nifty --data $FAIRMP_DATA \
        --out results/nifty_bail_gcn_s1.csv -- --dataset bail --model gcn --seed 1 ...

Everything after `--` goes to nifty_sota_gnn.py. What the runner changes, and nothing else:
  1. sys.path: ./shim (PyG 1.6's GCNConv and dropout_adj; import-only stand-ins for dgl, ipdb,
     aif360 and deeprobust) before the repo;
  2. a scratch working directory holding dataset/<name>/<name>.csv and <name>_edges.txt as
     links to --data (the script reads ./dataset/<name>; the repository's own edge files are
     not in the stored snapshot, so the edges are $FAIRMP_DATA's, built with NIFTY's recipe);
     the script's checkpoints (weights_*.pt) are written there;
  3. torch.set_num_threads(1). The device is the script's own choice (CPU: no CUDA here).
After the script ends, its variables output (logits of the reported model), labels, sens,
idx_test are read from its namespace: ŷ = 1 iff logit > 0, as the script; p1 = sigmoid(logit).
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
    cut = argv.index('--') if '--' in argv else len(argv)
    ours, theirs = argv[:cut], argv[cut + 1:]
    ap = argparse.ArgumentParser()
    ap.add_argument('--repo', required=True)
    ap.add_argument('--data', required=True, help='folder holding bail/ and credit/')
    ap.add_argument('--out', required=True)
    a = ap.parse_args(ours)
    repo, data, out = (os.path.abspath(p) for p in (a.repo, a.data, a.out))
    ds = theirs[theirs.index('--dataset') + 1]

    import torch
    torch.set_num_threads(1)
    work = tempfile.mkdtemp(prefix='nifty-run-')
    os.makedirs(os.path.join(work, 'dataset', ds))
    for f in ('%s.csv' % ds, '%s_edges.txt' % ds):
        os.symlink(os.path.join(data, ds, f), os.path.join(work, 'dataset', ds, f))
    os.chdir(work)
    sys.path[:0] = [os.path.join(HERE, 'shim'), repo]
    script = os.path.join(repo, 'nifty_sota_gnn.py')
    sys.argv = [script] + theirs
    g = {'__name__': '__main__', '__file__': script}
    t0 = time.time()
    c0 = time.process_time()
    exec(compile(open(script).read(), script, 'exec'), g)
    secs = time.time() - t0
    cpu = time.process_time() - c0
    train_secs = time.time() - g['t_total']

    out_t = g['output'].detach().squeeze()
    idx = g['idx_test']
    p = torch.sigmoid(out_t[idx])
    y, s = g['labels'][idx], g['sens'][idx]
    tmp = out + '.tmp'
    with open(tmp, 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(['run', 'node', 'y', 's', 'p1', 'seconds', 'seconds_total', 'cpu_seconds_total'])
        for k in range(idx.numel()):
            w.writerow([0, int(idx[k]), int(y[k]), int(s[k]), '%.6f' % float(p[k]),
                        '%.3f' % train_secs, '%.3f' % secs, '%.3f' % cpu])
    os.replace(tmp, out)
    print('run_nifty: wrote %s (%.1f s training+evaluation, %.1f s in all, %.1f s CPU)' % (out, train_secs, secs, cpu))


if __name__ == '__main__':
    main()
