"""``jaxlite.image`` (``jax.image``): image resampling."""
from jaxlite._src.libraries.image import ResizeMethod, resize, scale_and_translate  # noqa: F401
