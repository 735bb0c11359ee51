"""``jaxlite.lax.linalg``: matrix decompositions and triangular solves."""
from jaxlite._src.lax.linalg import (
    cholesky, triangular_solve, lu, qr, svd, eigh, eig, symmetrize, cholesky_p,
    triangular_solve_p, lu_p, qr_p, svd_p, eigh_p, eig_p, EigImplementation,
    EighImplementation, SvdAlgorithm, cholesky_update, hessenberg, householder_product,
    lu_pivots_to_permutation, ormqr, qdwh, symmetric_product, tridiagonal,
    tridiagonal_solve, schur, schur_p, hessenberg_p)
