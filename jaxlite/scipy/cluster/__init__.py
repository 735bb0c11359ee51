"""``jaxlite.scipy.cluster`` (``jax.scipy.cluster``)."""
from jaxlite.scipy.cluster import vq  # noqa: F401
