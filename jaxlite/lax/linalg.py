"""``jaxlite.lax.linalg``: matrix decompositions and triangular solves."""
from jaxlite._src.lax.linalg import (
    cholesky, triangular_solve, lu, qr, svd, eigh, eig, symmetrize, cholesky_p,
    triangular_solve_p, lu_p, qr_p, svd_p, eigh_p, eig_p)
from jaxlite._src.numpy.lax_linalg_extra import *  # noqa
