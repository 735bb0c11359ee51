"""``jaxlite.scipy.linalg`` (``jax.scipy.linalg``)."""
from jaxlite._src.scipy.linalg import *  # noqa: F401,F403
