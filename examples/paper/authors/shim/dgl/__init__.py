"""Minimal CPU stand-in for the parts of DGL 1.0 that FMP (zhimengj0326/FMP) calls:
dgl.from_scipy, dgl.remove_self_loop, dgl.add_self_loop, DGLGraph.to /
number_of_edges / number_of_nodes / in_degrees / out_degrees, and
dgl.nn.pytorch.GraphConv (norm='both'). DGL is not installable here (no PyPI).
FairGNN (EnyanDai/FairGNN, DGL 0.4.3) builds its graph with the old mutable API:
DGLGraph() then G.from_scipy_sparse_matrix(A) (one edge u->v per stored non-zero).

Semantics checked against DGL 1.0:
- from_scipy(A): one directed edge u->v per stored non-zero A[u, v] (values ignored).
- remove_self_loop: drops every edge u->u; add_self_loop: appends one u->u per node.
- GraphConv(norm='both'): h_src * out_deg^-1/2, sum over in-edges, * in_deg^-1/2,
  degrees clamped to >= 1; weight/bias applied as in DGL when present.
"""
import numpy as np
import torch


class DGLGraph(object):
    def __init__(self, src=None, dst=None, num_nodes=0):
        self.src = src if src is not None else torch.zeros(0, dtype=torch.int64)
        self.dst = dst if dst is not None else torch.zeros(0, dtype=torch.int64)
        self._n = int(num_nodes)
        self._adj = None

    def from_scipy_sparse_matrix(self, sp_mat):
        """DGL 0.4's in-place constructor: replaces the graph by from_scipy(sp_mat)."""
        g = from_scipy(sp_mat)
        self.src, self.dst, self._n, self._adj = g.src, g.dst, g._n, None

    def number_of_nodes(self):
        return self._n

    num_nodes = number_of_nodes

    def number_of_edges(self):
        return int(self.src.numel())

    num_edges = number_of_edges

    def out_degrees(self):
        return torch.bincount(self.src, minlength=self._n)

    def in_degrees(self):
        return torch.bincount(self.dst, minlength=self._n)

    def to(self, device):
        return DGLGraph(self.src.to(device), self.dst.to(device), self._n)

    def adj_sum(self):
        """Sparse (dst x src) matrix of ones: the sum over in-edges (cached)."""
        if self._adj is None:
            idx = torch.stack([self.dst, self.src])
            val = torch.ones(self.src.numel())
            self._adj = torch.sparse_coo_tensor(idx, val, (self._n, self._n)).coalesce()
        return self._adj


def graph(data, num_nodes=None):
    src, dst = data
    src = torch.as_tensor(src, dtype=torch.int64)
    dst = torch.as_tensor(dst, dtype=torch.int64)
    if num_nodes is None:
        num_nodes = int(max(src.max(), dst.max())) + 1
    return DGLGraph(src, dst, num_nodes)


def from_scipy(sp_mat, eweight_name=None, idtype=None, device=None):
    coo = sp_mat.tocoo()
    keep = coo.data != 0
    return DGLGraph(torch.from_numpy(coo.row[keep].astype(np.int64)),
                    torch.from_numpy(coo.col[keep].astype(np.int64)), sp_mat.shape[0])


def remove_self_loop(g):
    keep = g.src != g.dst
    return DGLGraph(g.src[keep], g.dst[keep], g._n)


def add_self_loop(g):
    loop = torch.arange(g._n, dtype=torch.int64, device=g.src.device)
    return DGLGraph(torch.cat([g.src, loop]), torch.cat([g.dst, loop]), g._n)
