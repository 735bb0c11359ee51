"""Mutable array references (JAX's ``jax.Ref`` and ``jax._src.state``), which jaxlite does
not implement: see ``types``."""
from jaxlite._src.core.state.types import (  # noqa: F401
    AbstractRef, Ref, addupdate, empty_ref, free_ref, freeze, get, new_ref, set, swap)
