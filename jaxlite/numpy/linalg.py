"""``jaxlite.numpy.linalg``: linear algebra (``jax.numpy.linalg``)."""
from jaxlite._src.libraries.numpy.linalg import *  # noqa: F401,F403
from jaxlite._src.libraries.numpy.linalg import __all__  # noqa: F401
