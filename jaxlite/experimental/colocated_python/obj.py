"""``jax.experimental.colocated_python.obj``: the colocated class API (``api``'s)."""
from jaxlite.experimental.colocated_python.api import colocated_python_class

__all__ = ["colocated_python_class"]
