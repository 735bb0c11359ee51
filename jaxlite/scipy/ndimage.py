"""``jaxlite.scipy.ndimage`` (``jax.scipy.ndimage``)."""
from jaxlite._src.libraries.scipy.ndimage import map_coordinates  # noqa: F401
