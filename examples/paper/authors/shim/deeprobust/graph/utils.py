"""Imported by NIFTY's models/prognn.py; never called on the runs here."""


def accuracy(*a, **k):
    raise NotImplementedError('shim: deeprobust is not provided')
