"""``jax.ref``: mutable array references, which jaxlite does not implement.

The names are JAX's, so that libraries import; making or using a reference raises
NotImplementedError that says what to do instead, and ``isinstance(x, Ref)`` is False for
every jaxlite value.
"""
from jaxlite._src.core.state.types import (  # noqa: F401
    AbstractRef as AbstractRef,
    Ref as Ref,
    addupdate as addupdate,
    empty_ref as empty_ref,
    free_ref as free_ref,
    freeze as freeze,
    get as get,
    new_ref as new_ref,
    set as set,
    swap as swap,
)
