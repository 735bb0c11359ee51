"""``jaxlite.scipy.interpolate`` (``jax.scipy.interpolate``)."""
from jaxlite._src.libraries.scipy.interpolate import RegularGridInterpolator  # noqa: F401
