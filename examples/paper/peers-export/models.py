# Copied from the project's PyTorch peer (shared/peers/models.py, an independent
# PyTorch 1.13 implementation kept beside the project) for examples/paper/peers-export;
# unchanged.
"""Models for the FMP peer: MLP, GCN, SGC, APPNP, GAT (sparse) and FMP (paper / warm variants).

All graph models take a symmetric normalised adjacency `A` (torch sparse) and use `spmm(A, X)`.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SymSpMM(torch.autograd.Function):
    """A @ X for a *symmetric* sparse A; backward is A @ grad (avoids re-transposing A every step)."""
    @staticmethod
    def forward(ctx, A, X):
        ctx.A = A
        return torch.sparse.mm(A, X)

    @staticmethod
    def backward(ctx, g):
        return None, torch.sparse.mm(ctx.A, g)


SYMMETRIC = True  # False: plain torch.sparse.mm autograd (transposes A in every backward)


def spmm(A, X):
    return SymSpMM.apply(A, X) if SYMMETRIC else torch.sparse.mm(A, X)


def mlp(d, h=64, c=2):
    return nn.Sequential(nn.Linear(d, h), nn.ReLU(), nn.Linear(h, c))


class MLP(nn.Module):
    def __init__(self, d, h=64, c=2):
        super().__init__()
        self.f = mlp(d, h, c)

    def forward(self, x, A):
        return self.f(x)


class GCN(nn.Module):  # two GCN layers: Ahat relu(Ahat X W1 + b1) W2 + b2
    def __init__(self, d, h=64, c=2):
        super().__init__()
        self.l1, self.l2 = nn.Linear(d, h, bias=False), nn.Linear(h, c, bias=False)
        self.b1, self.b2 = nn.Parameter(torch.zeros(h)), nn.Parameter(torch.zeros(c))

    def forward(self, x, A):
        h = F.relu(spmm(A, self.l1(x)) + self.b1)
        return spmm(A, self.l2(h)) + self.b2


class SGC(nn.Module):  # logits = (Ahat^K X) W, with Ahat^K X cached
    def __init__(self, d, c=2, K=2):
        super().__init__()
        self.lin, self.K, self.cache = nn.Linear(d, c), K, None

    def forward(self, x, A):
        if self.cache is None:
            with torch.no_grad():
                z = x
                for _ in range(self.K):
                    z = spmm(A, z)
                self.cache = z
        return self.lin(self.cache)


class APPNP(nn.Module):  # H = MLP(X); Z <- (1 - alpha) Ahat Z + alpha H, K times
    def __init__(self, d, h=64, c=2, K=10, alpha=0.1):
        super().__init__()
        self.f, self.K, self.alpha = mlp(d, h, c), K, alpha

    def forward(self, x, A):
        h = z = self.f(x)
        for _ in range(self.K):
            z = (1 - self.alpha) * spmm(A, z) + self.alpha * h
        return z


class GATConv(nn.Module):
    """Multi-head graph attention on an edge list (src -> dst, self loops included), heads concatenated."""
    def __init__(self, d, out, heads):
        super().__init__()
        self.lin = nn.Linear(d, heads * out, bias=False)
        self.a_src = nn.Parameter(torch.empty(1, heads, out))
        self.a_dst = nn.Parameter(torch.empty(1, heads, out))
        self.bias = nn.Parameter(torch.zeros(heads * out))
        self.H, self.C = heads, out
        for p in (self.lin.weight, self.a_src, self.a_dst):
            nn.init.xavier_uniform_(p)

    def forward(self, x, edge_index):
        src, dst = edge_index
        n = x.shape[0]
        h = self.lin(x).view(n, self.H, self.C)
        e = F.leaky_relu((h * self.a_src).sum(-1)[src] + (h * self.a_dst).sum(-1)[dst], 0.2)  # (E, H)
        with torch.no_grad():  # per-destination max for a stable softmax
            emax = e.new_full((n, self.H), -1e30).scatter_reduce(0, dst[:, None].expand_as(e), e, 'amax')
        w = torch.exp(e - emax[dst])
        den = e.new_zeros(n, self.H).index_add_(0, dst, w)
        alpha = w / den[dst]
        out = h.new_zeros(n, self.H, self.C).index_add_(0, dst, h[src] * alpha[..., None])
        return out.reshape(n, -1) + self.bias


class GAT(nn.Module):  # GATConv(d, 16 x 4 heads) -> ELU -> Linear(64, 2)
    def __init__(self, d, h=16, heads=4, c=2):
        super().__init__()
        self.conv, self.lin = GATConv(d, h, heads), nn.Linear(h * heads, c)

    def forward(self, x, A):  # A: coalesced COO Ahat; its pattern is the edge set of A + I
        return self.lin(F.elu(self.conv(x, A.indices())))


def fmp_propagate(xt, A, delta, lam_s, lam_f, K=2, variant='paper'):
    """Fair message passing on logits xt (n x c).

    delta: (n,) with +1/n_plus (s=1), -1/n_minus (s=0), 0 (unknown sens).
    gamma = 1/(1+lam_s), beta = 1/(2 gamma);  grad(F, u) = d/dF <u, delta^T SF(F)>.
    variant 'paper': u_0 = 0, carried over steps.  'warm': u re-initialised each step as
    delta SF(F_k) / (gamma ||delta||^2) before the Fbar step.  Projection: clamp to [-lam_f, lam_f].
    """
    gamma = 1.0 / (1.0 + lam_s)
    beta = 1.0 / (2.0 * gamma)
    d = delta[:, None]

    def grad(P, u):  # P = SF(F); U = delta^T u (n x c)
        UP = (d * u) * P
        return UP - UP.sum(1, keepdim=True) * P

    Fk, u = xt, xt.new_zeros(1, xt.shape[1])
    for _ in range(K):
        P = torch.softmax(Fk, 1)
        xagg = (gamma * xt + (1 - gamma) * spmm(A, Fk)) if lam_s > 0 else xt  # lam_s=0: gamma=1
        if variant == 'warm':
            u = (d * P).sum(0, keepdim=True) / (gamma * (delta ** 2).sum())
        Fbar = xagg - gamma * grad(P, u)
        ubar = u + beta * (d * torch.softmax(Fbar, 1)).sum(0, keepdim=True)
        u = ubar.clamp(-lam_f, lam_f)
        Fk = xagg - gamma * grad(P, u)
    return Fk


class FMP(nn.Module):
    def __init__(self, d, delta, lam_s, lam_f, K=2, variant='paper', h=64, c=2):
        super().__init__()
        self.f, self.delta = mlp(d, h, c), delta
        self.args = dict(lam_s=lam_s, lam_f=lam_f, K=K, variant=variant)

    def forward(self, x, A):
        return fmp_propagate(self.f(x), A, self.delta, **self.args)


def make_delta(s, known=None):
    """Delta_s: +1/n_plus for s=1, -1/n_minus for s=0, 0 where sens unknown (known=False)."""
    known = torch.ones_like(s, dtype=torch.bool) if known is None else known
    pos, neg = known & (s == 1), known & (s == 0)
    delta = torch.zeros(len(s))
    delta[pos] = 1.0 / pos.sum()
    delta[neg] = -1.0 / neg.sum()
    return delta


def build(name, d, delta=None, **kw):
    if name == 'fmp':
        return FMP(d, delta, **kw)
    return dict(mlp=MLP, gcn=GCN, sgc=SGC, appnp=APPNP, gat=GAT)[name](d)
