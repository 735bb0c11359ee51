"""``jax.experimental.pjit``: ``pjit``, which JAX 0.10.2 still serves as ``jax.jit`` with
a DeprecationWarning on its first read."""
import functools as _functools
import warnings as _warnings

_deprecations = {
    "pjit": "jax.experimental.pjit.pjit has been deprecated. Please use `jax.jit` instead.",
}


def _pjit(fun, *args, **kwargs):
  """``jax.jit(fun, ...)``: ``in_shardings``, ``out_shardings`` and the rest as jit's."""
  from jaxlite._src.jit import jit
  return jit(fun, *args, **kwargs)


@_functools.cache   # JAX warns on the first read of each name only
def __getattr__(name):
  if name in _deprecations:
    _warnings.warn(_deprecations[name], DeprecationWarning, stacklevel=2)
    return _pjit
  raise AttributeError(f"module 'jax.experimental.pjit' has no attribute {name!r}")
