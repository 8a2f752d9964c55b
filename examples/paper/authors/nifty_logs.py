"""Mean ± population std over runs of what NIFTY's script prints itself (AUC, parity,
equality, F1, counterfactual fairness, robustness score), from run_nifty.py's logs, in %.

    /usr/bin/python3 nifty_logs.py results/nifty_bail_gcn_s*.csv.log
"""
import re
import sys
import numpy as np

keys = [('AUC', r'The AUCROC of estimator: ([0-9.]+)'), ('parity', r'Parity: ([0-9.e-]+)'),
        ('equality', r'Equality: ([0-9.e-]+)'), ('F1', r'F1-score: ([0-9.e-]+)'),
        ('CF', r'CounterFactual Fairness: ([0-9.e-]+)'), ('robustness', r'Robustness Score: ([0-9.e-]+)')]
vals = {k: [] for k, _ in keys}
for path in sys.argv[1:]:
    text = open(path).read()
    for k, pat in keys:
        m = re.search(pat, text)
        if m:
            vals[k].append(float(m.group(1)) * 100)
print('runs: %d  ' % len(vals['AUC']) + '  '.join(
    '%s %.2f ± %.2f' % (k, np.mean(v), np.std(v)) for k, v in vals.items() if v))
