"""Names NIFTY imports from aif360 0.3; none is called on the runs here."""


def _missing(*a, **k):
    raise NotImplementedError('shim: aif360 metrics are not provided')


statistical_parity_difference = equal_opportunity_difference = _missing
consistency_score = generalized_entropy_error = _missing
