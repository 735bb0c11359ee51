"""``jax.interpreters.xla``, as JAX 0.10.2 has it: ``canonicalize_dtype_handlers`` (the
per-type table of value canonicalization TFP's JAX substrate extends), ``apply_primitive``
and ``Backend``."""
from jaxlite._src.compiler import Backend as Backend
from jaxlite._src.core.pytypes import canonicalize_dtype_handlers as canonicalize_dtype_handlers

__all__ = ["apply_primitive", "canonicalize_dtype_handlers", "Backend"]


def apply_primitive(prim, *args, **params):
  """Apply primitive ``prim`` to concrete ``args`` (``prim.bind`` outside any
  transformation)."""
  return prim.bind(*args, **params)
