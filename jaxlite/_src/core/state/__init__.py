"""Mutable array references: their types and the scopes that carry their values while a
function is traced (``types.py``); the operations are in ``lax/state.py``."""
from jaxlite._src.core.state.types import AbstractRef, Ref  # noqa: F401
