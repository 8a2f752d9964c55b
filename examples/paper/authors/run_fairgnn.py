"""Run the authors' FairGNN code (EnyanDai/FairGNN, src/train_fairGNN.py) unchanged on CPU and
save the test scores of the epoch the script reports.

    OMP_NUM_THREADS=1 /usr/bin/python3 run_fairgnn.py --repo /tmp/fairgnn \
        --out results/fairgnn_nba_s42.csv -- --seed=42 --epochs=2000 --model=GCN --dataset=nba ...

Everything after `--` goes to train_fairGNN.py, run in the repository's src/ folder (it reads
../dataset/NBA and ./checkpoint/GCN_sens_nba_ns_50, the repository's own files). What the
runner changes, and nothing else:
  1. sys.path: ./shim (dgl: DGLGraph().from_scipy_sparse_matrix and GraphConv with symmetric
     normalisation, as DGL 0.4.3 on a symmetric graph) before src/;
  2. torch.load(..., map_location='cpu') (the estimator checkpoint was saved on a GPU);
  3. torch.set_num_threads(1). The script itself picks the CPU (no CUDA here).
One observing wrapper, which draws no random numbers and changes no value: sklearn's
roc_auc_score (the script imports it at train_fairGNN.py:144 and calls it on the validation
and then the test scores every epoch, :162, :170) remembers the test call's scores; when the
script's best_fair changes (its selection, :172-180: validation accuracy > --acc, validation
AUC > --roc, lowest validation ΔDP + ΔEO) the scores of that epoch are kept.
p1 = sigmoid(score): ŷ = 1 iff score > 0, as the script.
"""
import argparse
import csv
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    argv = sys.argv[1:]
    cut = argv.index('--') if '--' in argv else len(argv)
    ours, theirs = argv[:cut], argv[cut + 1:]
    ap = argparse.ArgumentParser()
    ap.add_argument('--repo', required=True)
    ap.add_argument('--out', required=True)
    a = ap.parse_args(ours)
    repo, out = os.path.abspath(a.repo), os.path.abspath(a.out)

    import numpy as np
    import torch
    import sklearn.metrics
    torch.set_num_threads(1)
    src = os.path.join(repo, 'src')
    os.chdir(src)
    sys.path[:0] = [os.path.join(HERE, 'shim'), src]

    orig_load = torch.load

    def load_cpu(f, *args, **kw):
        kw.setdefault('map_location', 'cpu')
        return orig_load(f, *args, **kw)
    torch.load = load_cpu

    g = {'__name__': '__main__'}
    st = {'calls': 0, 'fair': None, 'pending': None, 'kept': None, 'epoch': -1}
    orig_auc = sklearn.metrics.roc_auc_score

    def check():
        # called before each epoch's first AUC and at the end: did the last epoch get selected?
        bf = g.get('best_fair')
        if st['pending'] is not None and bf is not None and bf != st['fair']:
            st['kept'], st['epoch'] = st['pending'], st['calls'] // 2 - 1
        st['fair'] = bf

    def roc_auc_score(y, score, *args, **kw):
        if st['calls'] % 2 == 0:
            check()
        else:
            st['pending'] = (np.asarray(score).reshape(-1).copy(), np.asarray(y).reshape(-1).copy())
        st['calls'] += 1
        return orig_auc(y, score, *args, **kw)
    sklearn.metrics.roc_auc_score = roc_auc_score

    script = os.path.join(src, 'train_fairGNN.py')
    sys.argv = [script] + theirs
    g['__file__'] = script
    t0, c0 = time.time(), time.process_time()
    exec(compile(open(script).read(), script, 'exec'), g)
    secs, cpu = time.time() - t0, time.process_time() - c0
    check()

    if st['kept'] is None:
        print('run_fairgnn: no epoch passed the thresholds; nothing written')
        return
    score, y = st['kept']
    idx = g['idx_test'].cpu().numpy()
    s = g['sens'].cpu().numpy()[idx].astype(int)
    assert (y == g['labels'].cpu().numpy()[idx]).all()
    p = 1 / (1 + np.exp(-score.astype(np.float64)))
    mine = ((score > 0).astype(int) == y).mean()
    print('run_fairgnn: epoch %d selected, test accuracy %.4f (script: %.4f)' % (
        st['epoch'] + 1, mine, g['best_result']['acc']))
    tmp = out + '.tmp'
    with open(tmp, 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(['run', 'node', 'y', 's', 'p1', 'seconds', 'cpu_seconds_total', 'epoch'])
        for i in range(len(p)):
            w.writerow([0, int(idx[i]), int(y[i]), int(s[i]), '%.6f' % p[i], '%.3f' % secs,
                        '%.3f' % cpu, st['epoch'] + 1])
    os.replace(tmp, out)
    print('run_fairgnn: wrote %s (%.1f s in all, %.1f s CPU)' % (out, secs, cpu))


if __name__ == '__main__':
    main()
