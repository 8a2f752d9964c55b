from . import from_scipy_sparse_matrix  # noqa: F401
