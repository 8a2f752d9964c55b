"""Imported by FMP's fmp.py (gcn_norm); FMP's DGL path never calls it."""


def gcn_norm(*args, **kwargs):
    raise NotImplementedError('shim: gcn_norm is not provided (FMP does not call it)')
