"""``jaxlite.scipy.spatial.transform`` (``jax.scipy.spatial.transform``): ``Rotation`` and
``Slerp``."""
from jaxlite._src.libraries.scipy.spatial_transform import Rotation, Slerp  # noqa: F401
