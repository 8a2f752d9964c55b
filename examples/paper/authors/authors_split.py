"""Write the split of an authors' loader, called unchanged, as split.json in a data folder for
fairmp's baselines (beside links to the data files), as nifty_split.py does for NIFTY.

    /usr/bin/python3 authors_split.py --repo /tmp/fairgnn --code fairgnn --data /tmp/fairgnn/dataset/NBA --out /tmp/fairgnn-data
    /usr/bin/python3 authors_split.py --repo /tmp/fairvgnn --code fairvgnn --data DIR --out /tmp/fairvgnn-data

fairgnn: src/utils.py load_pokec('nba', 'country', 'SALARY', label_number=100, sens_number=50,
  seed=20, test_idx=True), as train_fairGNN.py:85-102 calls it: the labelled nodes shuffled with
  random.seed(20), train = the first 100, test = the rest whose group is known, validation =
  test. Also writes sens_train.json: the 50 nodes whose group the estimator is given.
fairvgnn: dataset.py load_bail / load_credit (label_number 100 / 6000, dataset.py:328-337):
  per class, train = the first min(50%, label_number/2), val = the next 25%, test = the rest.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

ap = argparse.ArgumentParser()
ap.add_argument('--repo', required=True)
ap.add_argument('--code', required=True, choices=['fairgnn', 'fairvgnn'])
ap.add_argument('--data', required=True, help='fairgnn: the NBA folder; fairvgnn: a folder holding bail/ and credit/')
ap.add_argument('--out', required=True)
ap.add_argument('--datasets', default='bail,credit', help='fairvgnn only')
a = ap.parse_args()
repo = os.path.abspath(a.repo)


def write(d, split, name='split.json'):
    tmp = os.path.join(d, name + '.tmp')
    with open(tmp, 'w') as f:
        json.dump(split, f)
    os.replace(tmp, os.path.join(d, name))
    print(d, name, {k: len(v) for k, v in split.items()})


def link(src, d, files):
    os.makedirs(d, exist_ok=True)
    for f in files:
        if not os.path.exists(os.path.join(d, f)):
            os.symlink(os.path.join(os.path.abspath(src), f), os.path.join(d, f))


if a.code == 'fairgnn':
    sys.path[:0] = [os.path.join(HERE, 'shim'), os.path.join(repo, 'src')]
    import utils  # FairGNN's src/utils.py
    d = os.path.join(a.out, 'nba')
    link(a.data, d, ('nba.csv', 'nba_relationship.txt'))
    _, _, _, tr, va, te, _, st = utils.load_pokec('nba', 'country', 'SALARY', path=d, label_number=100,
                                                  sens_number=50, seed=20, test_idx=True)
    tr, va, te = ([int(i) for i in x] for x in (tr, va, te))
    if set(va) == set(te):  # the same nodes in another order (idx_test went through a set)
        va = te
    write(d, {'train': tr, 'val': va, 'test': te})
    write(d, {'sens_train': [int(i) for i in st]}, 'sens_train.json')
else:
    sys.path[:0] = [os.path.join(HERE, 'shim'), repo]
    import dataset  # FairVGNN's dataset.py
    import torch
    for ds in a.datasets.split(','):
        d = os.path.join(a.out, ds)
        link(os.path.join(a.data, ds), d, ('%s.csv' % ds, '%s_edges.txt' % ds))
        load, n = {'bail': (dataset.load_bail, 100), 'credit': (dataset.load_credit, 6000)}[ds]
        _, _, _, _, tr, va, te, _ = load(ds, path=d, label_number=n)
        idx = lambda m: [int(i) for i in torch.nonzero(m).view(-1)]
        write(d, {'train': idx(tr), 'val': idx(va), 'test': idx(te)})
