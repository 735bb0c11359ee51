"""``jax.experimental.colocated_python.func``: the colocated function API (``api``'s)."""
from jaxlite.experimental.colocated_python.api import ColocatedFunction, colocated_python

__all__ = ["ColocatedFunction", "colocated_python"]
