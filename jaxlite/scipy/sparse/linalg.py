"""``jaxlite.scipy.sparse.linalg`` (``jax.scipy.sparse.linalg``): Krylov solvers."""
from jaxlite._src.libraries.scipy.sparse_linalg import bicgstab, cg, gmres  # noqa: F401
