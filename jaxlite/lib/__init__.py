"""``jax.lib``: in JAX 0.10.2 it holds only ``__version__``, the version of the jaxlib it
runs on (equinox's tests read it). jaxlite has no compiled half, so it reports the JAX
release whose API it implements, as ``jax.__version__`` does under the alias."""
from jaxlite._src.base.version import jax_api_version as __version__  # noqa: F401
