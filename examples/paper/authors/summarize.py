"""Summarise saved test predictions: per run accuracy, AUC, ΔDP, ΔEO (in %), the share of
test nodes predicted positive, mean ± population std over runs, and a bootstrap interval.

    /usr/bin/python3 summarize.py --label "FMP authors λ1=3 λ2=3" results/fmp_nba_default.csv ...

Input CSV columns: run, node, y, s, p1 (P(y=1)), seconds; ŷ = 1 iff p1 > 0.5, as every one of
the authors' repositories thresholds. The interval: 2000 resamples of the test nodes (with
replacement; one draw shared by the runs when they share a test set), the mean over runs
recomputed on each, 2.5 and 97.5 percentiles. A run whose predictions select >= 95% or <= 5%
of the test nodes is flagged NEAR-CONSTANT (its ΔDP is near 0 by construction).
A positional argument may join several CSVs with commas: their runs form one row.
Prints one Markdown row per argument and, with --csv, appends the same numbers to a CSV.
"""
import argparse
import csv
import os
import numpy as np
from sklearn.metrics import roc_auc_score


def metrics(y, s, p):
    yh = (p > 0.5).astype(int)
    acc = (yh == y).mean()
    try:
        auc = roc_auc_score(y, p)
    except ValueError:
        auc = float('nan')
    s0, s1 = s == 0, s == 1
    dp = abs(yh[s0].mean() - yh[s1].mean())
    eo = abs(yh[s0 & (y == 1)].mean() - yh[s1 & (y == 1)].mean())
    return np.array([acc, auc, dp, eo]) * 100, yh.mean() * 100


def load(spec):
    """spec: one CSV, or several joined by commas (each file's runs become further runs)."""
    runs = {}
    for j, path in enumerate(spec.split(',')):
        with open(path) as f:
            for r in csv.DictReader(f):
                d = runs.setdefault((j, int(r['run'])), {'node': [], 'y': [], 's': [], 'p': [], 'sec': 0.0, 'cpu': float('nan')})
                d['node'].append(int(r['node']))
                d['y'].append(int(r['y']))
                d['s'].append(int(r['s']))
                d['p'].append(float(r['p1']))
                d['sec'] = float(r['seconds'])
                d['cpu'] = float(r['cpu_seconds_total']) if r.get('cpu_seconds_total') else float('nan')
    out = []
    for k in sorted(runs):
        d = runs[k]
        out.append({kk: np.array(v) if isinstance(v, list) else v for kk, v in d.items()})
    return out


def summarize(runs, B=2000, seed=0):
    per = np.array([metrics(r['y'], r['s'], r['p'])[0] for r in runs])
    sel = np.array([metrics(r['y'], r['s'], r['p'])[1] for r in runs])
    secs = np.array([r['sec'] for r in runs])
    cpus = np.array([r['cpu'] for r in runs])
    rng = np.random.default_rng(seed)
    same = all(np.array_equal(r['node'], runs[0]['node']) for r in runs)
    boots = []
    for _ in range(B):
        vals = []
        shared = rng.integers(0, len(runs[0]['y']), len(runs[0]['y'])) if same else None
        for r in runs:
            i = shared if same else rng.integers(0, len(r['y']), len(r['y']))
            vals.append(metrics(r['y'][i], r['s'][i], r['p'][i])[0])
        boots.append(np.nanmean(vals, axis=0))
    boots = np.array(boots)
    lo, hi = np.nanpercentile(boots, 2.5, axis=0), np.nanpercentile(boots, 97.5, axis=0)
    return per, sel, secs, cpus, lo, hi


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('files', nargs='+')
    ap.add_argument('--label', action='append', default=[])
    ap.add_argument('--csv', default='')
    a = ap.parse_intermixed_args()
    names = ['acc', 'auc', 'dp', 'eo']
    rows = []
    print('| run | n | Acc | AUC | ΔDP | ΔEO | selected % (min–max) | s/run (CPU s) | flags |')
    print('|---|---|---|---|---|---|---|---|---|')
    for j, path in enumerate(a.files):
        label = a.label[j] if j < len(a.label) else os.path.basename(path)
        runs = load(path)
        per, sel, secs, cpus, lo, hi = summarize(runs)
        mean, std = np.nanmean(per, axis=0), np.nanstd(per, axis=0)
        flags = [i for i, x in enumerate(sel) if x >= 95 or x <= 5]
        flag = ('NEAR-CONSTANT runs %s' % flags) if flags else ''
        cells = ['%.2f ± %.2f [%.2f, %.2f]' % (mean[i], std[i], lo[i], hi[i]) for i in range(4)]
        cpu = '' if np.isnan(cpus).all() else ' (%.1f)' % np.nanmean(cpus)
        print('| %s | %d | %s | %.1f (%.1f–%.1f) | %.1f%s | %s |' % (
            label, len(runs), ' | '.join(cells), sel.mean(), sel.min(), sel.max(),
            secs.mean(), cpu, flag))
        row = {'label': label, 'file': os.path.basename(path), 'runs': len(runs)}
        for i, n in enumerate(names):
            row.update({n: '%.2f' % mean[i], n + '_std': '%.2f' % std[i],
                        n + '_lo': '%.2f' % lo[i], n + '_hi': '%.2f' % hi[i]})
        row.update({'selected_mean': '%.1f' % sel.mean(), 'selected_min': '%.1f' % sel.min(),
                    'selected_max': '%.1f' % sel.max(), 'seconds_run': '%.2f' % secs.mean(), 'cpu_seconds_run': '%.2f' % np.nanmean(cpus) if not np.isnan(cpus).all() else '',
                    'near_constant_runs': len(flags)})
        rows.append(row)
    if a.csv:
        new = not os.path.exists(a.csv)
        with open(a.csv, 'a', newline='') as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            if new:
                w.writeheader()
            w.writerows(rows)


if __name__ == '__main__':
    main()
