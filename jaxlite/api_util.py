"""``jax.api_util``: what libraries that call JAX's tracing entry points use with them."""
from jaxlite._src.base.api_util import DebugInfo as _DebugInfo
from jaxlite._src.base.api_util import debug_info as _debug_info
from jaxlite._src.core.core import get_aval as _get_aval
from jaxlite._src.base.linear_util import (
    flatten_fun as flatten_fun,
    flatten_fun_nokwargs as flatten_fun_nokwargs,
)


def debug_info(traced_for: str, fun, args, kwargs, *, static_argnums=(),
               static_argnames=(), result_paths_thunk=None, sourceinfo=None,
               signature=None) -> _DebugInfo:
  """What error messages say about ``fun`` traced for ``traced_for`` on ``args``."""
  return _debug_info(traced_for, fun, args, kwargs, tuple(static_argnums))


def shaped_abstractify(x):
  """The ShapedArray of an array, tracer, NumPy value or Python scalar."""
  aval = getattr(x, "aval", None)
  if aval is None and hasattr(x, "shape") and hasattr(x, "dtype"):
    from jaxlite._src.core.core import ShapedArray
    return ShapedArray(x.shape, x.dtype, getattr(x, "weak_type", False))
  return _get_aval(x)


def safe_map(f, *args):
  args = [list(a) for a in args]
  n = len(args[0])
  for a in args[1:]:
    if len(a) != n:
      raise ValueError(f"length mismatch: {[len(a) for a in args]}")
  return list(map(f, *args))
