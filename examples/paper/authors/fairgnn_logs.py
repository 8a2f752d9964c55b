"""Read what FairGNN's train_fairGNN.py prints for every epoch that passes its thresholds
(validation accuracy > --acc and AUC > --roc: train_fairGNN.py:172-197) and report, per log,
the test numbers of two selections among those epochs: the script's own (lowest validation
ΔDP + ΔEO, :174) and the highest validation accuracy (the first such epoch), the rule
fairmp's baselines applies by default. On NBA validation = test, so both are read on the
test nodes.

    /usr/bin/python3 fairgnn_logs.py results/fairgnn_nba_gcn_s*.csv.log
"""
import re
import sys

import numpy as np

EP = re.compile(r'Epoch: (\d+) .*acc_val: ([\d.]+) roc_val: ([\d.]+) parity_val: ([\d.]+) equality: ([\d.]+)')
TE = re.compile(r'Test: accuracy: ([\d.]+) roc: ([\d.]+) acc_sens: ([\d.]+) parity: ([\d.]+) equality: ([\d.]+)')
rows = {'script (lowest val ΔDP+ΔEO)': [], 'highest val accuracy': []}
print('| log | eligible epochs | script: epoch, acc, AUC, ΔDP, ΔEO | highest val acc: epoch, acc, AUC, ΔDP, ΔEO |')
print('|---|---|---|---|---|')
for path in sys.argv[1:]:
    eps = []
    lines = open(path).read().splitlines()
    for i, l in enumerate(lines):
        m = EP.search(l)
        if m and i + 1 < len(lines):
            t = TE.search(lines[i + 1])
            if t:
                eps.append((int(m.group(1)), float(m.group(2)), float(m.group(4)) + float(m.group(5)),
                            [float(t.group(k)) * 100 for k in (1, 2, 4, 5)]))
    if not eps:
        print('| %s | 0 | – | – |' % path)
        continue
    best_fair = min(eps, key=lambda e: (e[2], e[0]))       # strict <: the first minimum
    best_acc = min(eps, key=lambda e: (-e[1], e[0]))
    rows['script (lowest val ΔDP+ΔEO)'].append(best_fair[3])
    rows['highest val accuracy'].append(best_acc[3])
    f = lambda e: '%d, %s' % (e[0], ', '.join('%.2f' % v for v in e[3]))
    print('| %s | %d | %s | %s |' % (path.split('/')[-1], len(eps), f(best_fair), f(best_acc)))
print()
print('| selection | runs | accuracy | AUC | ΔDP | ΔEO |')
print('|---|---|---|---|---|---|')
for k, v in rows.items():
    if v:
        a = np.array(v)
        print('| %s | %d | %s |' % (k, len(v), ' | '.join('%.2f ± %.2f' % (a[:, i].mean(), a[:, i].std()) for i in range(4))))
