from .conv import GraphConv, GATConv, SGConv, APPNPConv  # noqa: F401
