"""``jaxlite.scipy.sparse`` (``jax.scipy.sparse``)."""
from jaxlite.scipy.sparse import linalg  # noqa: F401
