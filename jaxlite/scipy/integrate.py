"""``jaxlite.scipy.integrate`` (``jax.scipy.integrate``)."""
from jaxlite._src.libraries.scipy.integrate import trapezoid  # noqa: F401
