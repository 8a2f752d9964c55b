"""dgl.nn.pytorch.GraphConv (DGL 1.0, norm='both'|'none'|'right'|'left'), no edge weights.
GATConv, SGConv and APPNPConv are imported by FMP's module.py but never built by main.py."""
import torch
from torch import nn


class GraphConv(nn.Module):
    def __init__(self, in_feats, out_feats, norm='both', weight=True, bias=True,
                 activation=None, allow_zero_in_degree=False):
        super().__init__()
        self._in_feats = in_feats
        self._out_feats = out_feats
        self._norm = norm
        self._allow_zero_in_degree = allow_zero_in_degree
        if weight:
            self.weight = nn.Parameter(torch.Tensor(in_feats, out_feats))
        else:
            self.register_parameter('weight', None)
        if bias:
            self.bias = nn.Parameter(torch.Tensor(out_feats))
        else:
            self.register_parameter('bias', None)
        # As in DGL: reset_parameters is looked up on the instance, so a subclass's
        # override runs here instead (FMP's does, leaving its unused weight uninitialised).
        self.reset_parameters()
        self._activation = activation

    def reset_parameters(self):
        if self.weight is not None:
            nn.init.xavier_uniform_(self.weight)
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def forward(self, graph, feat, weight=None, edge_weight=None):
        if edge_weight is not None:
            raise NotImplementedError('shim: GraphConv edge_weight is not provided')
        if not self._allow_zero_in_degree and bool((graph.in_degrees() == 0).any()):
            raise RuntimeError('shim GraphConv: 0-in-degree nodes (DGL raises DGLError here)')
        if weight is None:
            weight = self.weight
        feat_src = feat
        if self._norm in ('left', 'both'):
            degs = graph.out_degrees().to(feat_src).clamp(min=1)
            norm = torch.pow(degs, -0.5) if self._norm == 'both' else 1.0 / degs
            feat_src = feat_src * norm.view(-1, *([1] * (feat_src.dim() - 1)))
        if weight is not None and self._in_feats > self._out_feats:
            feat_src = torch.matmul(feat_src, weight)
            rst = torch.sparse.mm(graph.adj_sum(), feat_src)
        else:
            rst = torch.sparse.mm(graph.adj_sum(), feat_src)
            if weight is not None:
                rst = torch.matmul(rst, weight)
        if self._norm in ('right', 'both'):
            degs = graph.in_degrees().to(feat_src).clamp(min=1)
            norm = torch.pow(degs, -0.5) if self._norm == 'both' else 1.0 / degs
            rst = rst * norm.view(-1, *([1] * (rst.dim() - 1)))
        if self.bias is not None:
            rst = rst + self.bias
        if self._activation is not None:
            rst = self._activation(rst)
        return rst


class _NotBuilt(nn.Module):
    def __init__(self, *args, **kwargs):
        raise NotImplementedError('shim: %s is not provided (FMP main.py never builds it)'
                                  % type(self).__name__)


class GATConv(_NotBuilt):
    pass


class SGConv(_NotBuilt):
    pass


class APPNPConv(_NotBuilt):
    pass
