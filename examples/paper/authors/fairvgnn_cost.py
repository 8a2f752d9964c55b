"""CPU seconds of one forward+backward pass of the authors' FairVGNN encoder (model.py:66-124:
Linear(18 -> 16, no bias), propagation, + bias) on Bail, through each of its two propagations:
utils.propagate2 (the default --prop scatter: x[row] gathered per edge, summed with
torch_scatter.scatter, here the shim's index_add_) and torch.spmm with the normalised sparse
adjacency (--prop spmm). An epoch of fairvgnn.py at run_bail.sh's settings is
K (d_epochs + c_epochs + g_epochs) = 10 (5 + 10 + 10) = 250 such passes, plus K forward
passes for the evaluation.

    OMP_NUM_THREADS=1 /usr/bin/python3 fairvgnn_cost.py --repo /tmp/fairvgnn --data DIR
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument('--repo', required=True)
ap.add_argument('--data', required=True, help='folder holding bail/')
ap.add_argument('--reps', type=int, default=10)
a = ap.parse_args()
sys.path[:0] = [os.path.join(HERE, 'shim'), os.path.abspath(a.repo)]
import torch
torch.set_num_threads(1)
os.chdir(os.path.abspath(a.data) + '/..')
import dataset  # FairVGNN's dataset.py
from utils import propagate2  # FairVGNN's utils.py

adj_norm_sp, edge_index, features, *_ = dataset.load_bail('bail', path=os.path.join(os.path.abspath(a.data), 'bail'), label_number=100)
torch.manual_seed(0)
lin = torch.nn.Linear(features.shape[1], 16, bias=False)
bias = torch.nn.Parameter(torch.zeros(16))


def cpu(f):
    f()
    c = time.process_time()
    for _ in range(a.reps):
        f()
    return (time.process_time() - c) / a.reps


def scatter_pass():
    (propagate2(lin(features), edge_index) + bias).sum().backward()


def spmm_pass():
    (torch.spmm(adj_norm_sp, lin(features)) + bias).sum().backward()


def gcn_layer_only():
    (propagate2(lin(features), edge_index) + bias).sum()


print('nodes %d, stored edges %d' % (features.shape[0], edge_index.shape[1]))
s1, s2, s3 = cpu(scatter_pass), cpu(spmm_pass), cpu(gcn_layer_only)
print('scatter (default): %.4f CPU s a forward+backward pass -> %.0f CPU s an epoch (250 passes)' % (s1, 250 * s1))
print('spmm:              %.4f CPU s a forward+backward pass -> %.1f CPU s an epoch (250 passes)' % (s2, 250 * s2))
print('scatter forward only: %.4f CPU s' % s3)
