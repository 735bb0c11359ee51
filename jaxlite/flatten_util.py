"""Flattening pytrees into one vector (``jax.flatten_util``)."""
from jaxlite._src.libraries.flatten_util import ravel_pytree as ravel_pytree
