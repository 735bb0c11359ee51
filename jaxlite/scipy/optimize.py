"""``jaxlite.scipy.optimize`` (``jax.scipy.optimize``): ``minimize`` with BFGS."""
from jaxlite._src.scipy_optimize import OptimizeResults, minimize  # noqa: F401
