"""``jax.ref``: mutable array references (``jax.new_ref``, ``ref[...]`` reads and writes,
``jax.freeze``); see ``jaxlite/_src/core/state/types.py`` for how traced programs carry
them."""
from jaxlite._src.core.state.types import (  # noqa: F401
    AbstractRef as AbstractRef,
    Ref as Ref,
)
from jaxlite._src.lax.state import (  # noqa: F401
    addupdate as addupdate,
    empty_ref as empty_ref,
    free_ref as free_ref,
    freeze as freeze,
    get as get,
    new_ref as new_ref,
    set as set,
    swap as swap,
)
