"""Which Python values are JAX values: ``jax.core.valid_jaxtype`` and the per-type tables
``jax.core.pytype_aval_mappings`` and ``jax.interpreters.xla.canonicalize_dtype_handlers``.

jaxlite takes as array values its arrays and tracers, NumPy arrays and scalars of the
dtypes it supports, Python's bool/int/float/complex and objects with ``__jax_array__``
(``core.get_aval`` and ``array.as_operand``). The two tables list those types, mapping each
to its abstract value (``pytype_aval_mappings``) or to its value with the canonical dtype
(``canonicalize_dtype_handlers``), so that code reading ``table[np.ndarray]`` gets the
function JAX has there. A type a library adds is kept in the table, but jaxlite's own
conversions do not consult the tables: they accept the types above only.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.core.array import Array


def valid_jaxtype(x) -> bool:
  """Whether ``x`` is a value JAX computes with (an array, tracer, NumPy value of a
  numeric or boolean dtype, or Python scalar)."""
  try:
    aval = core.get_aval(x)
  except (TypeError, ValueError):
    return False
  dtype = getattr(aval, "dtype", None)
  return dtype is None or dtypes.is_jax_dtype(dtype) or dtype.kind in "biufc"


def _numpy_scalar_types():
  found = {t for t in np.sctypeDict.values()
           if isinstance(t, type) and issubclass(t, np.generic)
           and np.dtype(t).kind in "biufc"}
  for name in ("bfloat16", "float8_e4m3fn", "float8_e5m2", "int4", "uint4"):
    try:
      found.add(np.dtype(name).type)
    except TypeError:
      pass
  return sorted(found, key=lambda t: t.__name__)


def _aval_of_numpy(x):
  return core.ShapedArray(np.shape(x), dtypes.canonicalize_dtype(np.result_type(x)))


def _aval_of_python_scalar(x):
  return core.get_aval(x)


def _canonical_numpy(x):
  return np.asarray(x, dtypes.canonicalize_dtype(np.result_type(x)))


def _canonical_python_scalar(x):
  return np.asarray(x, dtypes.python_scalar_dtype(x))


pytype_aval_mappings: dict = {
    np.ndarray: _aval_of_numpy,
    **{t: _aval_of_numpy for t in _numpy_scalar_types()},
    **{t: _aval_of_python_scalar for t in (bool, int, float, complex)},
    Array: lambda x: x.aval,
    core.Tracer: lambda x: x.aval,
    core.ShapeDtypeStruct: lambda x: x.aval,
}

class _CanonicalizeHandlers(dict):
  """JAX 0.10.2's ``canonicalize_dtype_handlers``: a type without its own handler gets the
  generic one (NumPy's value at the canonical dtype), as any type does in JAX's table."""

  def __missing__(self, key):
    return _canonical_numpy


canonicalize_dtype_handlers: dict = _CanonicalizeHandlers({
    np.ndarray: _canonical_numpy,
    **{t: _canonical_numpy for t in _numpy_scalar_types()},
    **{t: _canonical_python_scalar for t in (bool, int, float, complex)},
    Array: lambda x: x,
})
