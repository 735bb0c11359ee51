"""Reductions in ``jaxlite.numpy``: sum, prod, max, min, mean, var, std, any, all, argmax."""
from __future__ import annotations

import builtins

import numpy as np

from jaxlite._src import dtypes
from jaxlite._src.lax import elementwise as lax_ew
from jaxlite._src.lax import reductions as lax_red
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.numpy import util
from jaxlite._src.numpy.util import as_operand, check_arraylike


def _reduction(a, name, lax_reduce, axis, dtype, keepdims, initial, where, promote, identity):
  check_arraylike(name, a)
  a = as_operand(a)
  if where is not None:
    raise NotImplementedError(f"jnp.{name}: the `where` argument is not supported yet; "
                              "mask the input with jnp.where(mask, x, identity) first.")
  axes = util.canonicalize_axes(axis, a.ndim)
  if dtype is not None:
    dtypes.check_user_dtype_supported(dtype, name)
    a = lax_ew._convert_element_type(a, dtypes.canonicalize_dtype(dtype), a.weak_type)
  else:
    a = promote(a)
  if identity is None and builtins.any(a.shape[i] == 0 for i in axes):
    raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
  out = lax_reduce(a, axes)
  if initial is not None:
    init = lax_ew._convert_element_type(as_operand(initial), out.dtype, out.weak_type)
    out = _COMBINE[name](out, init)
  if keepdims:
    out = lax_shapes.expand_dims(out, axes)
  return out


def _to_int_if_bool(a):
  if a.dtype == np.bool_ or (dtypes.is_integer(a.dtype) and
                             a.dtype.itemsize < dtypes.default_int_dtype().itemsize):
    # NumPy sums small integers and booleans in the default integer type
    target = (dtypes.default_uint_dtype() if dtypes.issubdtype(a.dtype, np.unsignedinteger)
              else dtypes.default_int_dtype())
    return lax_ew._convert_element_type(a, target, a.weak_type)
  return a


_same = lambda a: a
_to_bool = lambda a: a if a.dtype == np.bool_ else lax_ew.ne(a, as_operand(np.zeros((), a.dtype)))
_COMBINE = {"sum": lax_ew.add, "prod": lax_ew.mul, "max": lax_ew.max, "min": lax_ew.min}


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
        promote_integers=True):
  """Sum of elements over ``axis`` (``numpy.sum``); bools and small ints sum as int32."""
  _no_out("sum", out)
  return _reduction(a, "sum", lax_red.reduce_sum, axis, dtype, keepdims, initial, where,
                    _to_int_if_bool if promote_integers else _same, 0)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
         promote_integers=True):
  """Product of elements over ``axis`` (``numpy.prod``)."""
  _no_out("prod", out)
  return _reduction(a, "prod", lax_red.reduce_prod, axis, dtype, keepdims, initial, where,
                    _to_int_if_bool if promote_integers else _same, 1)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
  """Maximum over ``axis`` (``numpy.max``); NaN propagates."""
  _no_out("max", out)
  return _reduction(a, "max", lax_red.reduce_max, axis, None, keepdims, initial, where,
                    _same, None if initial is None else initial)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
  """Minimum over ``axis`` (``numpy.min``); NaN propagates."""
  _no_out("min", out)
  return _reduction(a, "min", lax_red.reduce_min, axis, None, keepdims, initial, where,
                    _same, None if initial is None else initial)


amax, amin = max, min


def all(a, axis=None, out=None, keepdims=False, *, where=None):
  """Whether all elements over ``axis`` are true."""
  _no_out("all", out)
  return _reduction(a, "all", lax_red.reduce_and, axis, None, keepdims, None, where,
                    _to_bool, True)


def any(a, axis=None, out=None, keepdims=False, *, where=None):
  """Whether any element over ``axis`` is true."""
  _no_out("any", out)
  return _reduction(a, "any", lax_red.reduce_or, axis, None, keepdims, None, where,
                    _to_bool, False)


def _no_out(name, out):
  if out is not None:
    raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported: JAX "
                              "arrays are immutable; use the returned array.")


def _inexact_dtype(dtype):
  """The floating type integers average in: float64 only for 64-bit integers (as JAX)."""
  if dtypes.is_inexact(dtype):
    return dtype
  return dtypes.canonicalize_dtype(np.float64 if dtype.itemsize == 8 else np.float32)


def _count(a, axes):
  return int(np.prod([a.shape[i] for i in axes], dtype=np.int64))


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
  """Arithmetic mean over ``axis``; integers average in the default float type."""
  _no_out("mean", out)
  check_arraylike("mean", a)
  a = as_operand(a)
  axes = util.canonicalize_axes(axis, a.ndim)
  if dtype is None:
    dtype = _inexact_dtype(a.dtype)
  total = sum(a, axis, dtype=dtype, keepdims=keepdims, where=where)
  n = _count(a, axes)
  return lax_ew.div(total, as_operand(np.array(n, total.dtype)))


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        correction=None):
  """Variance over ``axis``, dividing by ``N - ddof``."""
  _no_out("var", out)
  if correction is not None:
    ddof = correction
  a = as_operand(a)
  axes = util.canonicalize_axes(axis, a.ndim)
  compute = _inexact_dtype(a.dtype)
  a = lax_ew._convert_element_type(a, compute)
  centered = lax_ew.sub(a, mean(a, axis, keepdims=True))
  if dtypes.is_complex(compute):
    centered = lax_ew.abs(centered)  # |z|^2, real, as NumPy's var of complex input
  squared = lax_ew.mul(centered, centered)
  n = _count(a, axes) - ddof
  total = sum(squared, axis, keepdims=keepdims)
  divisor = as_operand(np.array(n if n > 0 else np.nan, total.dtype))
  out = lax_ew.div(total, divisor)
  return out if dtype is None else lax_ew.convert_element_type(out, dtype)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        correction=None):
  """Standard deviation over ``axis``."""
  return lax_ew.sqrt(var(a, axis, dtype, out, ddof, keepdims, where=where,
                         correction=correction))


def _arg_reduce(name, lax_fn, a, axis, keepdims):
  check_arraylike(name, a)
  a = as_operand(a)
  if axis is None:
    a = lax_shapes.reshape(a, (a.size,))
    axis = 0
  axis = util.canonicalize_axis(axis, a.ndim)
  if a.shape[axis] == 0:
    raise ValueError(f"attempt to get {name} of an empty sequence")
  out = lax_fn(a, axis, dtypes.default_int_dtype())
  return lax_shapes.expand_dims(out, (axis,)) if keepdims else out


def argmax(a, axis=None, out=None, keepdims=None):
  """Index of the first maximum (over the flattened array if ``axis`` is None)."""
  _no_out("argmax", out)
  return _arg_reduce("argmax", lax_red.argmax, a, axis, keepdims)


def argmin(a, axis=None, out=None, keepdims=None):
  """Index of the first minimum (over the flattened array if ``axis`` is None)."""
  _no_out("argmin", out)
  return _arg_reduce("argmin", lax_red.argmin, a, axis, keepdims)


def count_nonzero(a, axis=None, keepdims=False):
  """The number of non-zero elements over ``axis``."""
  return sum(_to_bool(as_operand(a)), axis, keepdims=keepdims)

