"""Reductions in ``jaxlite.numpy``: sum, prod, max, min, mean, var, std, any, all, argmax."""
from __future__ import annotations

import builtins

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.lax import bits
from jaxlite._src.lax import elementwise as lax_ew
from jaxlite._src.lax import reductions as lax_red
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.libraries.numpy import util
from jaxlite._src.libraries.numpy.lax_numpy import broadcast_to, where as select
from jaxlite._src.libraries.numpy.util import as_operand, check_arraylike


def check_where(name, where):
  """``where`` as a boolean array (or None); JAX rejects masks of other dtypes."""
  if where is None:
    return None
  check_arraylike(name, where)
  where = as_operand(where)
  if where.dtype != np.bool_:
    raise ValueError(f"jnp.{name}: where must be None or a boolean array; got "
                     f"where.dtype={where.dtype!r}.")
  return where


def _fill_value(dtype, identity):
  """The reduction's ``identity`` (0, 1 or +-inf) in ``dtype``: where a ``where`` mask is
  false, the element is replaced by it. Infinities become the integer extremes."""
  if dtype == np.bool_:
    return np.array(identity > 0, np.bool_)
  if np.isinf(identity) and not dtypes.is_inexact(dtype):
    info = np.iinfo(dtype)
    return np.array(info.min if identity < 0 else info.max, dtype)
  return np.array(identity, dtype)


def _masked(a, where, identity):
  """``a`` with the elements ``where`` excludes replaced by the reduction's identity."""
  return select(where, a, as_operand(_fill_value(a.dtype, identity)))


# name: (lax reduction, the binary op it folds with, its identity); booleans sum and
# multiply as ``any`` and ``all`` (the lax sum and product take numbers only, as in JAX)
_REDUCERS = {
    "sum": (lax_red.reduce_sum, lax_ew.add, 0),
    "prod": (lax_red.reduce_prod, lax_ew.mul, 1),
    "max": (lax_red.reduce_max, lax_ew.max, -np.inf),
    "min": (lax_red.reduce_min, lax_ew.min, np.inf),
    "any": (lax_red.reduce_or, lax_ew.bitwise_or, False),
    "all": (lax_red.reduce_and, lax_ew.bitwise_and, True),
}
_BOOL_REDUCER = {"sum": "any", "prod": "all"}


def _reduction(a, name, axis, dtype, keepdims, initial, where, *, preproc=None,
               has_identity=True, upcast_f16=False, promote_integers=False):
  """JAX's ``_reduction``: ``a`` (after ``preproc``) converted to the computation dtype,
  reduced over ``axis``, combined with ``initial``, returned in the result dtype. The
  conversions make every result strongly typed, as in JAX."""
  check_arraylike(name, a)
  a = as_operand(a)
  where = check_where(name, where)
  if initial is None and not has_identity and where is not None:
    raise ValueError(f"reduction operation {name} does not have an identity, so to use a "
                     "where mask one has to specify 'initial'")
  a = preproc(a) if preproc else a
  axes = util.canonicalize_axes(axis, a.ndim)
  if initial is None and not has_identity and builtins.any(a.shape[i] == 0 for i in axes):
    raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
  if dtype is not None:
    result_dtype = _user_dtype(dtype, name)
  else:
    result_dtype = promote_integer_dtype(a.dtype) if promote_integers else a.dtype
  compute = _upcast_f16(result_dtype) if upcast_f16 else result_dtype
  a = lax_ew.convert_element_type(a, compute)
  if compute == np.bool_:
    name = _BOOL_REDUCER.get(name, name)
  reduce, combine, identity = _REDUCERS[name]
  if where is not None:
    # a mask of higher rank broadcasts ``a`` up; the axes stay those of ``a`` (as JAX)
    a = _masked(a, where, identity)
  out = reduce(a, axes)
  if initial is not None:
    init = lax_ew.convert_element_type(as_operand(initial), compute)
    if init.ndim:
      raise ValueError(f"initial value must be a scalar. Got array of shape {init.shape}")
    out = combine(init, out)
  if keepdims:
    out = lax_shapes.expand_dims(out, axes)
  return lax_ew.convert_element_type(out, result_dtype)


def promote_integer_dtype(dtype):
  """The dtype ``sum`` and ``prod`` accumulate ``dtype`` in: booleans and integers
  narrower than the default integer widen to it (unsigned ones to the default unsigned)."""
  if dtype == np.bool_:
    return dtypes.default_int_dtype()
  if dtypes.issubdtype(dtype, np.unsignedinteger):
    return builtins.max(dtype, dtypes.default_uint_dtype(), key=lambda d: d.itemsize)
  if dtypes.issubdtype(dtype, np.integer):
    return builtins.max(dtype, dtypes.default_int_dtype(), key=lambda d: d.itemsize)
  return dtype


def _cast_to_bool(a):
  """``a != 0`` as JAX's ``any``/``all`` see it: a complex number by its real part."""
  if dtypes.is_complex(a.dtype):
    a = bits.real(a)
  return lax_ew.convert_element_type(a, np.bool_)


def _cast_to_numeric(a):
  return util.promote_dtypes_numeric(a)[0]


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
        promote_integers=True):
  """Sum of elements over ``axis`` (``numpy.sum``); bools and small ints sum as int32.
  Elements where the boolean ``where`` is false count as 0."""
  _no_out("sum", out)
  return _reduction(a, "sum", axis, dtype, keepdims, initial, where,
                    preproc=_cast_to_numeric, upcast_f16=dtype is None,
                    promote_integers=promote_integers)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
         promote_integers=True):
  """Product of elements over ``axis`` (``numpy.prod``); elements where the boolean
  ``where`` is false count as 1."""
  _no_out("prod", out)
  return _reduction(a, "prod", axis, dtype, keepdims, initial, where,
                    preproc=_cast_to_numeric, upcast_f16=dtype is None,
                    promote_integers=promote_integers)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
  """Maximum over ``axis`` (``numpy.max``); NaN propagates. A ``where`` mask needs an
  ``initial`` value, the result for slices the mask leaves empty."""
  _no_out("max", out)
  return _reduction(a, "max", axis, None, keepdims, initial, where, has_identity=False)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
  """Minimum over ``axis`` (``numpy.min``); NaN propagates. A ``where`` mask needs an
  ``initial`` value, the result for slices the mask leaves empty."""
  _no_out("min", out)
  return _reduction(a, "min", axis, None, keepdims, initial, where, has_identity=False)


amax, amin = max, min


def all(a, axis=None, out=None, keepdims=False, *, where=None):
  """Whether all elements over ``axis`` (where the boolean ``where`` holds) are true."""
  _no_out("all", out)
  return _reduction(a, "all", axis, None, keepdims, None, where, preproc=_cast_to_bool)


def any(a, axis=None, out=None, keepdims=False, *, where=None):
  """Whether any element over ``axis`` (where the boolean ``where`` holds) is true."""
  _no_out("any", out)
  return _reduction(a, "any", axis, None, keepdims, None, where, preproc=_cast_to_bool)


def _no_out(name, out):
  if out is not None:
    raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported: JAX "
                              "arrays are immutable; use the returned array.")


def _upcast_f16(dtype):
  """Half-precision floats accumulate in float32, as in JAX."""
  return np.dtype(np.float32) if dtypes.is_half_float(dtype) else dtype


def _user_dtype(dtype, name):
  dtypes.check_user_dtype_supported(dtype, name)
  return dtypes.canonicalize_dtype(dtype)


def _count(a, axis, keepdims, where, dtype):
  """The number of elements each reduction over ``axis`` sees, in ``dtype``."""
  if where is None:
    axes = util.canonicalize_axes(axis, a.ndim)
    n = int(np.prod([a.shape[i] for i in axes], dtype=np.int64))
    return as_operand(np.array(n, dtype))
  return sum(broadcast_to(where, a.shape), axis, dtype=dtype, keepdims=keepdims)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
  """Arithmetic mean over ``axis`` (of the elements where the boolean ``where`` holds);
  integers average in the default float type."""
  _no_out("mean", out)
  check_arraylike("mean", a)
  a = as_operand(a)
  where = check_where("mean", where)
  result_dtype = (dtypes.to_inexact_dtype(a.dtype) if dtype is None
                  else _user_dtype(dtype, "mean"))
  compute = _upcast_f16(result_dtype) if dtypes.is_inexact(result_dtype) else result_dtype
  total = sum(a, axis, dtype=compute, keepdims=keepdims, where=where)
  count = _count(a, axis, keepdims, where, compute)
  return lax_ew.convert_element_type(lax_ew.div(total, count), result_dtype)


_mean = mean   # ``var`` and ``std`` take a ``mean`` argument


def _var_dtypes(a_dtype, dtype):
  """The dtype variance is computed in and the dtype it is returned in."""
  if dtype is not None:
    if not dtypes.is_complex(dtype) and dtypes.is_complex(a_dtype):
      raise ValueError("jax.numpy.var does not yet support real dtype parameters when "
                       "computing the variance of an array of complex values.")
    return _upcast_f16(dtype), dtype
  if not dtypes.is_inexact(a_dtype):
    dtype = dtypes.to_inexact_dtype(a_dtype)
    return dtype, dtype
  return _upcast_f16(a_dtype), np.array(0, a_dtype).real.dtype


def _correction(ddof, correction):
  if correction is None:
    return ddof
  if not isinstance(ddof, int) or ddof != 0:
    raise ValueError("ddof and correction can't be provided simultaneously.")
  return correction


def squared_magnitude(centered):
  """``|centered|**2``, real also for complex input."""
  if dtypes.is_complex(centered.dtype):
    return bits.real(lax_ew.mul(centered, bits.conj(centered)))
  return lax_ew.mul(centered, centered)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
  """Variance over ``axis``: squared deviations from ``mean`` (computed if not given)
  summed and divided by ``N - correction`` (``ddof``); NaN where that is not positive.
  A boolean ``where`` restricts both the mean and the sum to the elements it selects."""
  correction = _correction(ddof, correction)
  _no_out("var", out)
  check_arraylike("var", a)
  a = as_operand(a)
  where = check_where("var", where)
  if dtype is not None:
    dtype = _user_dtype(dtype, "var")
  compute, dtype = _var_dtypes(a.dtype, dtype)
  a = lax_ew.convert_element_type(a, compute)
  if mean is None:
    mean = _mean(a, axis, dtype=compute, keepdims=True, where=where)
  else:
    check_arraylike("var", mean)
    mean = lax_ew.convert_element_type(as_operand(mean), compute)
  squared = squared_magnitude(lax_ew.sub(a, mean))
  count = _count(a, axis, keepdims, where, squared.dtype)
  count = lax_ew.sub(count, lax_ew.convert_element_type(as_operand(correction), count.dtype))
  total = sum(squared, axis, dtype=squared.dtype, keepdims=keepdims, where=where)
  out = lax_ew.convert_element_type(lax_ew.div(total, count), dtype)
  # a Python NaN, promoted as jnp.where does: an integer ``dtype`` gives a weak float
  return select(lax_ew.gt(count, lax_ew._const(count, 0)), out, np.nan)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
  """Standard deviation over ``axis``: the square root of ``var``."""
  correction = _correction(ddof, correction)
  if dtype is not None:
    dtype = _user_dtype(dtype, "std")
    if not dtypes.is_inexact(dtype):
      raise ValueError(f"dtype argument to jnp.std must be inexact; got {dtype}")
  _no_out("std", out)
  return lax_ew.sqrt(var(a, axis, dtype, correction=correction, keepdims=keepdims,
                         where=where, mean=mean))


def _arg_reduce(name, lax_fn, a, axis, keepdims):
  check_arraylike(name, a)
  a = as_operand(a)
  if axis is None:
    kept = tuple(range(a.ndim))   # keepdims keeps every axis of the flattened input
    a = lax_shapes.reshape(a, (a.size,))
    axis = 0
  else:
    axis = util.canonicalize_axis(axis, a.ndim)
    kept = (axis,)
  if a.shape[axis] == 0:
    raise ValueError(f"attempt to get {name} of an empty sequence")
  out = lax_fn(a, axis, dtypes.default_int_dtype())
  return lax_shapes.expand_dims(out, kept) if keepdims else out


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
  check_arraylike("count_nonzero", a)
  a = as_operand(a)
  return sum(lax_ew.ne(a, lax_ew._const(a, 0)), axis, dtype=dtypes.default_int_dtype(),
             keepdims=keepdims)

