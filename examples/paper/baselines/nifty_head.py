"""NIFTY's vanilla GCN (chirag126/nifty: models/gcn.py, the training loop of nifty_sota_gnn.py)
with a head of one logit under BCE (the repository's) or of two logits under cross-entropy
(fairmp's), everything else the repository's: its load_bail and scaling, GCNConv (d -> 16) then a
Xavier-initialised Linear with zero bias, Adam lr 1e-3 weight decay 1e-5, epochs 0..300, the
epoch of lowest validation loss kept, seeds as the script sets them. It answers whether the head
alone moves the test accuracy (README: "Protocols as presets").

    OMP_NUM_THREADS=1 /usr/bin/python3 nifty_head.py --repo /tmp/nifty --data $FAIRMP_DATA \
        --classes 1 --seeds 1,2,3,4,5 > results/nifty_head_1.txt

Prints one line per seed (test accuracy, AUC, the epoch kept) and the mean and population std.
"""
import argparse
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

ap = argparse.ArgumentParser()
ap.add_argument('--repo', required=True, help="a checkout of chirag126/nifty (its .py files)")
ap.add_argument('--data', required=True, help='folder holding bail/bail.csv and bail/bail_edges.txt')
ap.add_argument('--classes', type=int, choices=(1, 2), required=True)
ap.add_argument('--seeds', default='1,2,3,4,5')
ap.add_argument('--epochs', type=int, default=300)
a = ap.parse_args()
sys.path[:0] = [os.path.join(HERE, '..', 'authors', 'shim'), os.path.abspath(a.repo)]

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402
from torch_geometric.nn import GCNConv  # noqa: E402
from torch_geometric.utils import convert  # noqa: E402

import utils  # NIFTY's utils.py  # noqa: E402

torch.set_num_threads(1)
work = tempfile.mkdtemp(prefix='nifty-head-')
os.makedirs(os.path.join(work, 'bail'))
for f in ('bail.csv', 'bail_edges.txt'):
    os.symlink(os.path.join(os.path.abspath(a.data), 'bail', f), os.path.join(work, 'bail', f))
adj, features, labels, idx_train, idx_val, idx_test, sens = utils.load_bail(
    'bail', 'WHITE', 'RECID', path=os.path.join(work, 'bail'), label_number=100)
norm = utils.feature_norm(features)
norm[:, 0] = features[:, 0]
features = norm
edge_index = convert.from_scipy_sparse_matrix(adj)[0]


class Model(nn.Module):
    """models/gcn.py's GCN with nclass outputs."""

    def __init__(self, nfeat, nclass):
        super().__init__()
        self.gc1 = GCNConv(nfeat, 16)
        self.fc = nn.Linear(16, nclass)
        nn.init.xavier_uniform_(self.fc.weight.data)
        self.fc.bias.data.fill_(0.0)

    def forward(self, x, ei):
        return self.fc(self.gc1(x, ei))


def loss(out, idx):
    if a.classes == 1:
        return F.binary_cross_entropy_with_logits(out[idx], labels[idx].unsqueeze(1).float())
    return F.cross_entropy(out[idx], labels[idx])


def p1(out):
    if a.classes == 1:
        return torch.sigmoid(out.squeeze())
    return torch.softmax(out, dim=1)[:, 1]


accs, aucs = [], []
for seed in (int(s) for s in a.seeds.split(',')):
    np.random.seed(seed)
    torch.manual_seed(seed)
    model = Model(features.shape[1], a.classes)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-5)
    best, best_epoch, state = 100.0, -1, None
    for epoch in range(a.epochs + 1):
        model.train()
        opt.zero_grad()
        loss(model(features, edge_index), idx_train).backward()
        opt.step()
        model.eval()
        with torch.no_grad():
            lv = loss(model(features, edge_index), idx_val).item()
        if lv < best:
            best, best_epoch = lv, epoch
            state = {k: v.clone() for k, v in model.state_dict().items()}
    model.load_state_dict(state)
    model.eval()
    with torch.no_grad():
        p = p1(model(features, edge_index))[idx_test].numpy()
    y = labels[idx_test].numpy()
    acc = float(((p > 0.5) == (y == 1)).mean())
    auc = float(roc_auc_score(y, p))
    accs.append(acc)
    aucs.append(auc)
    print('seed %d classes %d accuracy %.2f AUC %.2f epoch kept %d' % (seed, a.classes, 100 * acc, 100 * auc, best_epoch), flush=True)
print('mean accuracy %.2f ± %.2f, AUC %.2f ± %.2f (%d seeds)' % (100 * np.mean(accs), 100 * np.std(accs), 100 * np.mean(aucs), 100 * np.std(aucs), len(accs)))
