"""``jaxlite.scipy.cluster.vq`` (``jax.scipy.cluster.vq``)."""
from jaxlite._src.libraries.scipy.cluster import vq  # noqa: F401
