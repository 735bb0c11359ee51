"""The public part of JAX's core (``jax.core``): tracers and abstract values.

Libraries use it for ``isinstance(x, jax.core.Tracer)`` (is this value being traced?) and
to evaluate jaxprs.
"""
from jaxlite._src.core.core import (
    AbstractValue as AbstractValue,
    Atom as Atom,
    Primitive as Primitive,
    ShapedArray as ShapedArray,
    Trace as Trace,
    Tracer as Tracer,
    eval_jaxpr as eval_jaxpr,
)
from jaxlite._src.api import ensure_compile_time_eval as ensure_compile_time_eval

import functools as _functools
import warnings as _warnings

# Names JAX 0.10.2 still serves from jax.core with a DeprecationWarning (distrax imports
# valid_jaxtype from here on JAX versions without jax.extend.core.valid_jaxtype; TFP's JAX
# substrate registers its variable type in pytype_aval_mappings).
_deprecations = {
    "valid_jaxtype": "jax.core.valid_jaxtype is deprecated. Use jax.extend.core.valid_jaxtype.",
    "pytype_aval_mappings": "jax.core.pytype_aval_mappings is deprecated.",
}


@_functools.cache   # JAX warns on the first read of each name only
def __getattr__(name):
  if name in _deprecations:
    from jaxlite._src.core import pytypes
    _warnings.warn(_deprecations[name], DeprecationWarning, stacklevel=2)
    return getattr(pytypes, name)
  raise AttributeError(f"module 'jax.core' has no attribute {name!r}")
