"""Imported by NIFTY's models/prognn.py; never called on the runs here."""


class PGD(object):
    def __init__(self, *a, **k):
        raise NotImplementedError('shim: deeprobust is not provided')


class prox_operators(object):
    pass
