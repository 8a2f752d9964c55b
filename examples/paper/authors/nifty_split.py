"""Write NIFTY's own split (utils.load_bail / load_credit of chirag126/nifty, called unchanged:
labels shuffled per class with random.seed(20), train = the first min(50%, label_number/2) of
each class, val = the next 25% of each class, test = the last 25%) as split.json in a data
folder for fairmp, beside links to the csv and edge files.

    /usr/bin/python3 nifty_split.py --repo /tmp/nifty --data $FAIRMP_DATA --out /tmp/nifty-data
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

ap = argparse.ArgumentParser()
ap.add_argument('--repo', required=True)
ap.add_argument('--data', required=True)
ap.add_argument('--out', required=True)
a = ap.parse_args()
sys.path[:0] = [os.path.join(HERE, 'shim'), os.path.abspath(a.repo)]
import utils  # NIFTY's utils.py

for ds, loader, sens, label, n in (('bail', utils.load_bail, 'WHITE', 'RECID', 100),
                                   ('credit', utils.load_credit, 'Age', 'NoDefaultNextMonth', 6000)):
    d = os.path.join(a.out, ds)
    os.makedirs(d, exist_ok=True)
    for f in ('%s.csv' % ds, '%s_edges.txt' % ds):
        if not os.path.exists(os.path.join(d, f)):
            os.symlink(os.path.join(os.path.abspath(a.data), ds, f), os.path.join(d, f))
    _, _, _, tr, va, te, _ = loader(ds, sens, label, path=d, label_number=n)
    split = {'train': [int(i) for i in tr], 'val': [int(i) for i in va], 'test': [int(i) for i in te]}
    tmp = os.path.join(d, 'split.json.tmp')
    with open(tmp, 'w') as f:
        json.dump(split, f)
    os.replace(tmp, os.path.join(d, 'split.json'))
    print(ds, {k: len(v) for k, v in split.items()})
