"""Run the authors' FairVGNN code (yuwvandy/FairVGNN, fairvgnn.py or fairvgnn_credit.py)
unchanged on CPU and save, for every run, the test scores of the epoch the script reports.

    OMP_NUM_THREADS=1 /usr/bin/python3 run_fairvgnn.py --repo /tmp/fairvgnn --data DIR \
        --out results/fairvgnn_bail.csv -- --dataset=bail --encoder=GCN ...

DIR holds <dataset>/<dataset>.csv and <dataset>_edges.txt (the script reads ./dataset/<name>/).
--script fairvgnn_credit.py picks the repository's Credit script (run_credit.sh uses it).
Everything after `--` goes to the script. What the runner changes, and nothing else:
  1. sys.path: ./shim (PyG's utils, scatter, Data as stand-ins; GINConv/SAGEConv raise if
     built) before the repo;
  2. a scratch working directory holding dataset/<name>/ as links to DIR;
  3. torch.set_num_threads(1). The device is the script's own choice (CPU: no CUDA here).
Three observing wrappers, which draw no random numbers and change no value:
  - utils.seed_everything (called once at the start of each run, fairvgnn.py:58): marks a
    new run and its CPU clock;
  - learn.roc_auc_score: remembers its last arguments (evaluate_ged3 calls it on the
    validation and then the test scores, learn.py:350-353);
  - learn.evaluate_ged3: after each epoch's evaluation, applies the script's own selection
    rule (fairvgnn.py:185-192: val AUC + F1 + accuracy - alpha (ΔDP + ΔEO) > best, best
    updated without alpha) and keeps that epoch's test scores (the mean logit over the K
    hard Gumbel masks, learn.py:307-325). p1 = sigmoid(score): ŷ = 1 iff score > 0, as the
    script. The script's own per-run accuracies are compared with these at the end.
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
    ap.add_argument('--data', required=True, help='folder holding <dataset>/')
    ap.add_argument('--out', required=True)
    ap.add_argument('--script', default='fairvgnn.py')
    a = ap.parse_args(ours)
    repo, data, out = (os.path.abspath(p) for p in (a.repo, a.data, a.out))
    ds = [t.split('=', 1)[1].strip("'") for t in theirs if t.startswith('--dataset=')][0]

    import torch
    torch.set_num_threads(1)
    work = tempfile.mkdtemp(prefix='fairvgnn-run-')
    os.makedirs(os.path.join(work, 'dataset', ds))
    for f in ('%s.csv' % ds, '%s_edges.txt' % ds):
        os.symlink(os.path.join(data, ds, f), os.path.join(work, 'dataset', ds, f))
    os.chdir(work)
    sys.path[:0] = [os.path.join(HERE, 'shim'), repo]

    import utils
    import learn
    runs = []          # per run: dict(best, epoch, scores, y, s, node, cpu0, cpu1)
    orig_seed, orig_auc, orig_eval = utils.seed_everything, learn.roc_auc_score, learn.evaluate_ged3
    last = {}

    def seed_everything(seed=0):
        c = time.process_time()
        if runs:
            runs[-1]['cpu1'], runs[-1]['wall1'] = c, time.time()
        runs.append({'best': 0, 'epoch': -1, 'n': 0, 'cpu0': c, 'wall0': time.time()})
        return orig_seed(seed)

    def roc_auc_score(y, score, *args, **kw):
        last['y'], last['score'] = y, score
        return orig_auc(y, score, *args, **kw)

    def evaluate_ged3(x, classifier, discriminator, generator, encoder, data, args):
        res = orig_eval(x, classifier, discriminator, generator, encoder, data, args)
        accs, aucs, f1s, dp, eo = res
        r = runs[-1]
        if aucs['val'] + f1s['val'] + accs['val'] - args.alpha * (dp['val'] + eo['val']) > r['best']:
            r['best'] = aucs['val'] + f1s['val'] + accs['val'] - (dp['val'] + eo['val'])
            r['epoch'] = r['n']
            r['score'] = last['score'].reshape(-1).copy()
            r['acc'] = accs['test']
            if 'y' not in r:
                m = data.test_mask.cpu()
                r['node'] = torch.nonzero(m).view(-1).numpy()
                r['yt'] = data.y[m].long().numpy()
                r['st'] = data.sens[m].long().numpy()
        r['n'] += 1
        return res

    utils.seed_everything = seed_everything
    learn.roc_auc_score = roc_auc_score
    learn.evaluate_ged3 = evaluate_ged3

    script = os.path.join(repo, a.script)
    sys.argv = [script] + theirs
    g = {'__name__': '__main__', '__file__': script}
    t0, c0 = time.time(), time.process_time()
    exec(compile(open(script).read(), script, 'exec'), g)
    secs, cpu = time.time() - t0, time.process_time() - c0
    runs[-1]['cpu1'], runs[-1]['wall1'] = time.process_time(), time.time()

    import numpy as np
    tmp = out + '.tmp'
    with open(tmp, 'w', newline='') as f:
        w = csv.writer(f)
        w.writerow(['run', 'node', 'y', 's', 'p1', 'seconds', 'cpu_seconds_total', 'epoch'])
        for k, r in enumerate(runs):
            p = 1 / (1 + np.exp(-r['score'].astype(np.float64)))
            mine = ((r['score'] > 0).astype(int) == r['yt']).mean()
            print('run_fairvgnn: run %d: epoch %d selected, test accuracy %.4f (script: %.4f), %.1f CPU s' % (
                k, r['epoch'], mine, float(g['acc'][k]), r['cpu1'] - r['cpu0']))
            for i in range(len(p)):
                w.writerow([k, int(r['node'][i]), int(r['yt'][i]), int(r['st'][i]), '%.6f' % p[i],
                            '%.3f' % (r['wall1'] - r['wall0']), '%.3f' % (r['cpu1'] - r['cpu0']), r['epoch']])
    os.replace(tmp, out)
    print('run_fairvgnn: wrote %s (%.1f s in all, %.1f s CPU)' % (out, secs, cpu))


if __name__ == '__main__':
    main()
