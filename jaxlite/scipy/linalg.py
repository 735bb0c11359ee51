"""``jaxlite.scipy.linalg`` (``jax.scipy.linalg``)."""
from jaxlite._src.libraries.scipy.linalg import *  # noqa: F401,F403
