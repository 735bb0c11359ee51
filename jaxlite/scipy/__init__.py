"""``jaxlite.scipy``: SciPy's API on jaxlite arrays (``jax.scipy``)."""
from jaxlite.scipy import special, stats  # noqa: F401
from jaxlite.scipy import linalg  # noqa
