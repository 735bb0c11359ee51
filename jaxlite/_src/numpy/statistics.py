"""Statistics in ``jaxlite.numpy``: cumulative sums, order statistics (median, quantiles),
NaN-ignoring reductions, weighted averages, histograms, covariance, differences,
convolution and interpolation."""
from __future__ import annotations

import builtins

import numpy as np

from jaxlite._src import core
from jaxlite._src import dtypes
from jaxlite._src.array import Array
from jaxlite._src.lax import bits as _bits
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.lax import sorting as lax_sort
from jaxlite._src.numpy import lax_numpy, reductions, ufuncs
from jaxlite._src.numpy.sorting import searchsorted
from jaxlite._src.numpy.util import (as_operand, canonicalize_axes, canonicalize_axis,
                                     check_arraylike, promote_args_inexact,
                                     promote_dtypes_inexact)

__all__ = [
    "cumsum", "cumprod", "cumulative_sum", "cumulative_prod", "nancumsum", "nancumprod",
    "diff", "ediff1d", "ptp", "median", "quantile", "percentile", "nanmedian",
    "nanquantile", "nanpercentile", "nansum", "nanprod", "nanmax", "nanmin", "nanmean",
    "nanvar", "nanstd", "nanargmax", "nanargmin", "average", "histogram",
    "histogram_bin_edges", "bincount", "cov", "corrcoef", "convolve", "correlate", "interp",
    "trapezoid",
]


def _c(x, value):
  return lax._const(x, value)


def _isnan(a):
  return lax.ne(a, a)


def _where(pred, a, b):
  return lax_numpy.where(pred, a, b)


# -- cumulative reductions
def _cumulative(name, lax_fn, a, axis, dtype, nan_value=None):
  check_arraylike(name, a)
  a = as_operand(a)
  if axis is None:
    a, axis = lax_shapes.reshape(a, (a.size,)), 0
  else:
    axis = canonicalize_axis(axis, builtins.max(a.ndim, 1))
  if nan_value is not None and dtypes.is_inexact(a.dtype):
    a = _where(_isnan(a), _c(a, nan_value), a)
  if dtype is not None:
    dtypes.check_user_dtype_supported(dtype, name)
  elif a.dtype == np.bool_:  # as in NumPy, booleans accumulate as the default integer
    dtype = dtypes.default_int_dtype()
  # always converted, as in JAX: a weakly typed input gives a strongly typed result
  a = lax.convert_element_type(a, a.dtype if dtype is None else dtype)
  if a.ndim == 0:
    return a
  return lax_fn(a, axis)


def cumsum(a, axis=None, dtype=None, out=None):
  """The running sum along ``axis`` (the flattened array if None); bools sum as int."""
  _no_out("cumsum", out)
  return _cumulative("cumsum", lax_sort.cumsum, a, axis, dtype)


def cumprod(a, axis=None, dtype=None, out=None):
  """The running product along ``axis`` (the flattened array if None)."""
  _no_out("cumprod", out)
  return _cumulative("cumprod", lax_sort.cumprod, a, axis, dtype)


def nancumsum(a, axis=None, dtype=None, out=None):
  """``cumsum`` with NaNs counted as zero."""
  _no_out("nancumsum", out)
  return _cumulative("nancumsum", lax_sort.cumsum, a, axis, dtype, 0)


def nancumprod(a, axis=None, dtype=None, out=None):
  """``cumprod`` with NaNs counted as one."""
  _no_out("nancumprod", out)
  return _cumulative("nancumprod", lax_sort.cumprod, a, axis, dtype, 1)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
  """The Array API's running sum: like ``cumsum``, optionally starting with a zero."""
  return _cumulative_api("cumulative_sum", cumsum, x, axis, dtype, include_initial, 0)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
  """The Array API's running product: like ``cumprod``, optionally starting with a one."""
  return _cumulative_api("cumulative_prod", cumprod, x, axis, dtype, include_initial, 1)


def _cumulative_api(name, fn, x, axis, dtype, include_initial, identity):
  check_arraylike(name, x)
  x = as_operand(x)
  if x.ndim == 0:
    raise ValueError("The input must be non-scalar to take a cumulative operation, "
                     "but got a scalar.")
  if axis is None:
    if x.ndim > 1:
      raise ValueError(f"The input array has rank {x.ndim}, however axis was not set to "
                       "an explicit value. The axis argument is only optional for 1D arrays.")
    axis = 0
  axis = canonicalize_axis(axis, x.ndim)
  out = fn(x, axis, dtype)
  if include_initial:
    config = [(0, 0, 0)] * out.ndim
    config[axis] = (1, 0, 0)
    out = lax_shapes.pad(out, _c(out, identity), config)
  return out


def _no_out(name, out):
  if out is not None:
    raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")


# -- differences
def diff(a, n=1, axis=-1, prepend=None, append=None):
  """The ``n``-th discrete difference along ``axis``; booleans give ``!=``."""
  check_arraylike("diff", a)
  a = as_operand(a)
  n = core.concrete_or_error(int, n, "The `n` argument to jnp.diff must be static.")
  if n < 0:
    raise ValueError(f"order must be non-negative but got {n}")
  if n == 0:
    return a
  if a.ndim == 0:
    raise ValueError("diff requires input that is at least one dimensional; got 0-d")
  axis = canonicalize_axis(axis, a.ndim)

  def edge(extra):
    extra = as_operand(extra)
    if extra.ndim == 0:
      shape = list(a.shape)
      shape[axis] = 1
      extra = lax_shapes.broadcast_to_shape(extra, tuple(shape))
    return extra

  parts = ([edge(prepend)] if prepend is not None else []) + [a] + (
      [edge(append)] if append is not None else [])
  if len(parts) > 1:
    a = lax_numpy.concatenate(parts, axis)
  for _ in range(n):
    size = a.shape[axis]
    hi = lax_shapes.slice_in_dim(a, 1, size, axis=axis)
    lo = lax_shapes.slice_in_dim(a, 0, builtins.max(size - 1, 0), axis=axis)
    a = lax.ne(hi, lo) if a.dtype == np.bool_ else ufuncs.subtract(hi, lo)
  return a


def ediff1d(ary, to_end=None, to_begin=None):
  """Differences of consecutive elements of the flattened array, with optional ends."""
  check_arraylike("ediff1d", ary)
  flat = lax_numpy.ravel(ary)
  out = ufuncs.subtract(flat[1:], flat[:-1]) if flat.shape[0] else flat
  parts = [lax_numpy.ravel(_asarray(to_begin)).astype(out.dtype)] if to_begin is not None \
      else []
  parts.append(out)
  if to_end is not None:
    parts.append(lax_numpy.ravel(_asarray(to_end)).astype(out.dtype))
  return lax_numpy.concatenate(parts) if len(parts) > 1 else out


def ptp(a, axis=None, out=None, keepdims=False):
  """The range ``max - min`` along ``axis``."""
  _no_out("ptp", out)
  return ufuncs.subtract(reductions.max(a, axis, keepdims=keepdims),
                         reductions.min(a, axis, keepdims=keepdims))


# -- order statistics
_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name, a, q, axis, method, keepdims, ignore_nan):
  check_arraylike(name, a, q)
  if method not in _METHODS:
    raise ValueError(f"{name}: method must be one of {_METHODS}, got {method!r}")
  a, q = promote_dtypes_inexact(a, q)
  if dtypes.is_complex(a.dtype):
    raise ValueError(f"{name} does not support complex input")
  if q.ndim > 1:
    raise ValueError(f"q must be zero- or one-dimensional, got shape {q.shape}")
  ndim = a.ndim
  axes = canonicalize_axes(axis, ndim)
  kept = [d for d in range(ndim) if d not in axes]
  moved = lax_shapes.transpose(a, kept + list(axes)) if ndim else a
  batch = tuple(a.shape[d] for d in kept)
  n = int(np.prod([a.shape[d] for d in axes], dtype=np.int64))
  x = lax_shapes.reshape(moved, batch + (n,))
  s = lax_sort.sort(x, len(batch))
  if ignore_nan:
    count = reductions.sum(lax.bitwise_not(_isnan(x)), axis=-1)
    count = lax.convert_element_type(count, a.dtype)
  else:
    count = lax.broadcast_like(_c(a, n), s[..., 0]) if batch else _c(a, n)
  q_shape = q.shape
  # positions in the sorted data, shape q_shape + batch
  pos_shape = q_shape + batch
  qb = lax_shapes.broadcast_in_dim(q, pos_shape, tuple(range(len(q_shape))))
  cb = lax_shapes.broadcast_in_dim(count, pos_shape, tuple(range(len(q_shape),
                                                                 len(pos_shape))))
  last = lax.max(lax.sub(cb, _c(cb, 1)), _c(cb, 0))
  pos = lax.mul(qb, last)
  low, high = lax.floor(pos), lax.ceil(pos)
  sb = lax_shapes.broadcast_in_dim(s, pos_shape + (n,),
                                   tuple(range(len(q_shape), len(pos_shape) + 1)))

  def at(index):
    if n == 0:
      return lax.broadcast_like(_c(s, np.nan), index)
    index = lax.convert_element_type(lax.min(lax.max(index, _c(index, 0)), last), np.int32)
    taken = lax_sort.take_along_axis(sb, lax_shapes.expand_dims(index, (len(pos_shape),)),
                                     len(pos_shape))
    return lax_shapes.reshape(taken, pos_shape)

  if method == "linear":
    frac = lax.sub(pos, low)
    out = lax.add(lax.mul(at(low), lax.sub(_c(frac, 1), frac)), lax.mul(at(high), frac))
  elif method == "lower":
    out = at(low)
  elif method == "higher":
    out = at(high)
  elif method == "midpoint":
    out = lax.mul(lax.add(at(low), at(high)), _c(pos, 0.5))
  else:
    out = at(ufuncs.round(pos))
  if ignore_nan:
    out = _where(lax.eq(cb, _c(cb, 0)), _c(out, np.nan), out)
  elif n:
    has_nan = reductions.any(_isnan(x), axis=-1)
    has_nan = lax_shapes.broadcast_in_dim(has_nan, pos_shape,
                                          tuple(range(len(q_shape), len(pos_shape))))
    out = _where(has_nan, _c(out, np.nan), out)
  if keepdims:
    full = [1 if d in axes else a.shape[d] for d in range(ndim)]
    out = lax_shapes.reshape(out, q_shape + tuple(full))
  return out


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
  """The ``q``-th quantiles (``q`` in [0, 1]) along ``axis``; NaN if a slice has NaNs.

  ``method`` is one of 'linear', 'lower', 'higher', 'midpoint', 'nearest'. The axes of
  ``q`` come first in the result. ``weights`` is not supported.
  """
  _no_out("quantile", out)
  _no_weights("quantile", weights)
  return _quantile("quantile", a, q, axis, method, keepdims, False)


def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):
  """The ``q``-th percentiles (``q`` in [0, 100]) along ``axis``; see ``quantile``."""
  _no_out("percentile", out)
  _no_weights("percentile", weights)
  q, = promote_args_inexact("percentile", q)
  return _quantile("percentile", a, lax.div(q, _c(q, 100)), axis, method, keepdims, False)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
  """The median along ``axis`` (the mean of the two middle values for even counts)."""
  _no_out("median", out)
  return _quantile("median", a, 0.5, axis, "midpoint", keepdims, False)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False):
  """``quantile`` ignoring NaNs (NaN only for all-NaN slices)."""
  _no_out("nanquantile", out)
  return _quantile("nanquantile", a, q, axis, method, keepdims, True)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False):
  """``percentile`` ignoring NaNs."""
  _no_out("nanpercentile", out)
  q, = promote_args_inexact("nanpercentile", q)
  return _quantile("nanpercentile", a, lax.div(q, _c(q, 100)), axis, method, keepdims, True)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
  """``median`` ignoring NaNs."""
  _no_out("nanmedian", out)
  return _quantile("nanmedian", a, 0.5, axis, "midpoint", keepdims, True)


def _no_weights(name, weights):
  if weights is not None:
    raise NotImplementedError(f"jnp.{name}(weights=...) is not supported by jaxlite.")


# -- NaN-ignoring reductions
def _nan_reduction(name, reduce, identity, nan_if_all_nan, a, axis, keepdims, where,
                   **kwargs):
  """``reduce`` with NaNs replaced by its ``identity``; optionally NaN where a whole
  slice is NaN (the mask ``where`` does not enter that test, as in JAX)."""
  check_arraylike(name, a)
  a = as_operand(a)
  where = reductions.check_where(name, where)
  if not dtypes.is_inexact(a.dtype):
    return reduce(a, axis=axis, keepdims=keepdims, where=where, **kwargs)
  filled = _where(_isnan(a), as_operand(reductions._fill_value(a.dtype, identity)), a)
  out = reduce(filled, axis=axis, keepdims=keepdims, where=where, **kwargs)
  if not nan_if_all_nan:
    return out
  all_nan = reductions.all(_isnan(a), axis, keepdims=keepdims)
  return _where(all_nan, _c(out, np.nan), out)


def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
  """``sum`` with NaNs counted as zero."""
  return _nan_reduction("nansum", reductions.sum, 0, False, a, axis, keepdims, where,
                        dtype=dtype, out=out, initial=initial)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
  """``prod`` with NaNs counted as one."""
  return _nan_reduction("nanprod", reductions.prod, 1, False, a, axis, keepdims, where,
                        dtype=dtype, out=out, initial=initial)


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
  """``max`` ignoring NaNs (NaN for all-NaN slices unless ``initial`` is given)."""
  return _nan_reduction("nanmax", reductions.max, -np.inf, initial is None, a, axis,
                        keepdims, where, out=out, initial=initial)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
  """``min`` ignoring NaNs (NaN for all-NaN slices unless ``initial`` is given)."""
  return _nan_reduction("nanmin", reductions.min, np.inf, initial is None, a, axis,
                        keepdims, where, out=out, initial=initial)


def _nan_arg(name, arg_reduce, fill, a, axis, out, keepdims):
  filled, mask = _replace_nan(name, a, fill)
  result = arg_reduce(filled, axis, out, keepdims)
  if mask is None:
    return result
  all_nan = reductions.all(mask, axis, keepdims=bool(keepdims))
  return _where(all_nan, _c(result, -1), result)


def _replace_nan(name, a, value):
  check_arraylike(name, a)
  a = as_operand(a)
  if not dtypes.is_inexact(a.dtype):
    return a, None
  mask = _isnan(a)
  return _where(mask, _c(a, value), a), mask


def nanargmax(a, axis=None, out=None, keepdims=None):
  """``argmax`` ignoring NaNs; -1 for all-NaN slices."""
  return _nan_arg("nanargmax", reductions.argmax, -np.inf, a, axis, out, keepdims)


def nanargmin(a, axis=None, out=None, keepdims=None):
  """``argmin`` ignoring NaNs; -1 for all-NaN slices."""
  return _nan_arg("nanargmin", reductions.argmin, np.inf, a, axis, out, keepdims)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
  """``mean`` of the non-NaN elements (NaN for all-NaN slices)."""
  _no_out("nanmean", out)
  check_arraylike("nanmean", a)
  a = as_operand(a)
  where = reductions.check_where("nanmean", where)
  if not dtypes.is_inexact(a.dtype):
    return reductions.mean(a, axis, dtype, keepdims=keepdims, where=where)
  dtype = a.dtype if dtype is None else reductions._user_dtype(dtype, "nanmean")
  count = reductions.sum(lax.bitwise_not(_isnan(a)), axis, dtype=dtype, keepdims=keepdims,
                         where=where)
  total = nansum(a, axis, dtype=dtype, keepdims=keepdims, where=where)
  return lax.div(total, count)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None,
           mean=None):
  """``var`` of the non-NaN elements (NaN where fewer than ``ddof + 1`` remain)."""
  _no_out("nanvar", out)
  check_arraylike("nanvar", a)
  a = as_operand(a)
  where = reductions.check_where("nanvar", where)
  if dtype is not None:
    dtype = reductions._user_dtype(dtype, "nanvar")
  compute, dtype = reductions._var_dtypes(a.dtype, dtype)
  a = lax.convert_element_type(a, compute)
  if mean is None:
    mean = nanmean(a, axis, dtype=compute, keepdims=True, where=where)
  else:
    check_arraylike("nanvar", mean)
    mean = lax.convert_element_type(as_operand(mean), compute)
  nan = _isnan(a)
  squared = reductions.squared_magnitude(_where(nan, _c(a, 0), lax.sub(a, mean)))
  count = reductions.sum(lax.bitwise_not(nan), axis, keepdims=keepdims, where=where)
  count = lax.sub(count, _c(count, ddof))
  empty = lax.le(count, _c(count, 0))
  total = reductions.sum(squared, axis, keepdims=keepdims, where=where)
  total = _where(empty, _c(total, np.nan), total)
  divisor = lax.convert_element_type(_where(empty, _c(count, 1), count), total.dtype)
  return lax.convert_element_type(lax.div(total, divisor), dtype)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None,
           mean=None):
  """``std`` of the non-NaN elements: the square root of ``nanvar``."""
  return ufuncs.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where, mean))


# -- weighted statistics
def average(a, axis=None, weights=None, returned=False, keepdims=False):
  """The weighted mean along ``axis``; with ``returned`` also the sum of the weights."""
  check_arraylike("average", a)
  if weights is None:
    avg = reductions.mean(a, axis, keepdims=keepdims)
    a = as_operand(a)
    n = int(np.prod([a.shape[d] for d in canonicalize_axes(axis, a.ndim)], dtype=np.int64))
    total = lax.broadcast_like(_c(avg, n), avg) if avg.ndim else as_operand(
        np.array(n, avg.dtype))
  else:
    a, weights = promote_dtypes_inexact(a, weights)
    if a.shape != weights.shape:
      if axis is None:
        raise ValueError("Axis must be specified when shapes of a and weights differ.")
      if weights.ndim != 1:
        raise ValueError("1D weights expected when shapes of a and weights differ.")
      ax = canonicalize_axis(axis, a.ndim)
      if weights.shape[0] != a.shape[ax]:
        raise ValueError("Length of weights not compatible with specified axis.")
      weights = lax_shapes.broadcast_in_dim(weights, a.shape, (ax,))
    total = reductions.sum(weights, axis, keepdims=keepdims)
    avg = ufuncs.true_divide(reductions.sum(ufuncs.multiply(a, weights), axis,
                                            keepdims=keepdims), total)
  if returned:
    return avg, lax_numpy.broadcast_to(total, avg.shape)
  return avg


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
        dtype=None):
  """The covariance matrix of the variables in the rows (``rowvar``) or columns of ``m``
  (and ``y``), with optional frequency and analytic weights, as ``numpy.cov``."""
  check_arraylike("cov", m)
  m = as_operand(m)
  if m.ndim > 2:
    raise ValueError("m has more than 2 dimensions")
  x = lax_numpy.atleast_2d(m)
  if not rowvar and x.shape[0] != 1:
    x = x.T
  if x.shape[0] == 0:
    return as_operand(np.array([], np.float32).reshape(0, 0))
  if y is not None:
    y = lax_numpy.atleast_2d(as_operand(y))
    if not rowvar and y.shape[0] != 1:
      y = y.T
    x = lax_numpy.concatenate([x, y], axis=0)
  x, = promote_dtypes_inexact(x) if dtype is None else [x.astype(dtype)]
  if ddof is None:
    ddof = 0 if bias else 1
  n = x.shape[1]
  w = None
  if fweights is not None:
    w = as_operand(fweights).astype(x.dtype)
  if aweights is not None:
    aw = as_operand(aweights).astype(x.dtype)
    w = aw if w is None else ufuncs.multiply(w, aw)
  if w is None:
    avg = reductions.mean(x, axis=1)
    w_sum = _c(avg, n)
    fact = _c(avg, n - ddof)
  else:
    avg, w_sum = average(x, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    if ddof == 0:
      fact = w_sum
    elif aweights is None:
      fact = ufuncs.subtract(w_sum, ddof)
    else:
      aw = as_operand(aweights).astype(x.dtype)
      fact = ufuncs.subtract(w_sum, ufuncs.true_divide(
          ufuncs.multiply(ddof, reductions.sum(ufuncs.multiply(w, aw))), w_sum))
  fact = ufuncs.maximum(fact, 0)
  xc = ufuncs.subtract(x, avg[:, None])
  xw = xc if w is None else ufuncs.multiply(xc, w)
  c = lax_numpy.matmul(xw, _conj(xc).T)
  return lax_numpy.squeeze(ufuncs.true_divide(c, fact))


def _conj(x):
  return _bits.conj(x) if dtypes.is_complex(x.dtype) else x


def corrcoef(x, y=None, rowvar=True, dtype=None):
  """Pearson correlation coefficients: ``cov`` normalized by the standard deviations and
  clipped to [-1, 1] (the real and imaginary parts separately for complex input)."""
  c = cov(x, y, rowvar, dtype=dtype)
  if c.ndim == 0:
    return ufuncs.true_divide(c, c)
  d = _diag(c)
  std = ufuncs.sqrt(_bits.real(d) if dtypes.is_complex(d.dtype) else d)
  c = ufuncs.true_divide(ufuncs.true_divide(c, std[:, None]), std[None, :])
  if dtypes.is_complex(c.dtype):
    return _bits.complex(ufuncs.clip(_bits.real(c), -1, 1), ufuncs.clip(_bits.imag(c), -1, 1))
  return ufuncs.clip(c, -1, 1)


def _diag(c):
  n = c.shape[0]
  eye = lax.eq(lax_shapes.broadcasted_iota(np.int32, (n, n), 0),
               lax_shapes.broadcasted_iota(np.int32, (n, n), 1))
  return reductions.sum(_where(eye, c, _c(c, 0)), axis=1)


# -- histograms and counting
def bincount(x, weights=None, minlength=0, *, length=None):
  """How often each non-negative integer occurs in 1-D ``x`` (summing ``weights``).

  ``length`` fixes the output size statically (needed under ``jit``); values at or beyond
  it are dropped, and negative values count as 0, as in JAX.
  """
  check_arraylike("bincount", x)
  x = as_operand(x)
  if x.dtype == np.bool_:
    x = lax.convert_element_type(x, np.int32)
  if not dtypes.is_integer(x.dtype):
    raise TypeError(f"x argument to bincount must have an integer type; got {x.dtype}")
  if x.ndim != 1:
    raise ValueError("only 1-dimensional input supported.")
  minlength = core.concrete_or_error(int, minlength, "The error occurred because of "
                                     "argument 'minlength' of jnp.bincount.")
  if length is None:
    biggest = core.concrete_or_error(
        int, reductions.max(x, initial=0) if x.shape[0] else 0,
        "The error occurred because of argument 'x' of jnp.bincount. To avoid this error, "
        "pass a static `length` argument.")
    length = builtins.max(minlength, biggest + 1 if x.shape[0] else 0)
  if weights is None:
    weights = as_operand(np.array(1, dtypes.default_int_dtype()))
  else:
    weights = as_operand(weights)
    if weights.shape != x.shape:
      raise ValueError(f"type of weights must match type of x. Got typeof(x)="
                       f"{x.aval.str_short()} and typeof(weights)={weights.aval.str_short()}")
  from jaxlite._src.numpy.creation import zeros
  out = zeros((length,), weights.dtype)
  return out.at[lax.max(x, _c(x, 0))].add(weights, mode="drop")


def histogram_bin_edges(a, bins=10, range=None, weights=None):
  """The edges of ``bins`` equal bins spanning ``range`` (default: the data's range)."""
  check_arraylike("histogram_bin_edges", a)
  a, = promote_dtypes_inexact(lax_numpy.ravel(a))
  if not isinstance(bins, int):
    bins_arr = as_operand(bins)
    if bins_arr.ndim == 1:
      return promote_dtypes_inexact(bins_arr)[0]
    bins = core.concrete_or_error(int, bins_arr, "bins must be static.")
  if range is None:
    lo, hi = reductions.min(a), reductions.max(a)
  else:
    lo, hi = (lax.convert_element_type(as_operand(v), a.dtype) for v in range)
  # widen an empty range by 0.5 on each side, as NumPy does
  same = lax.eq(lo, hi)
  lo = _where(same, lax.sub(lo, _c(lo, 0.5)), lo)
  hi = _where(same, lax.add(hi, _c(hi, 0.5)), hi)
  steps = lax.div(lax.convert_element_type(lax_shapes.iota(np.int32, bins + 1), a.dtype),
                  _c(lo, bins))
  return lax.add(lo, lax.mul(steps, lax.sub(hi, lo)))


def histogram(a, bins=10, range=None, weights=None, density=None):
  """Counts (or densities) of ``a``'s values in ``bins``; returns ``(hist, bin_edges)``.

  The last bin includes its right edge; values outside the range are not counted.
  """
  check_arraylike("histogram", a)
  edges = histogram_bin_edges(a, bins, range)
  flat = lax_numpy.ravel(as_operand(a)).astype(edges.dtype)
  nb = edges.shape[0] - 1
  w = lax.broadcast_like(_c(edges, 1), flat) if weights is None else \
      lax_numpy.ravel(as_operand(weights)).astype(edges.dtype)
  index = lax.sub(searchsorted(edges, flat, side="right"), as_operand(np.int32(1)))
  at_right_edge = lax.eq(flat, lax.broadcast_like(edges[-1], flat))
  index = _where(at_right_edge, as_operand(np.int32(nb - 1)), index)
  outside = lax.bitwise_or(lax.lt(index, _c(index, 0)), lax.ge(index, _c(index, nb)))
  index = _where(outside, as_operand(np.int32(nb)), index)
  from jaxlite._src.numpy.creation import zeros
  counts = zeros((nb,), edges.dtype).at[index].add(w, mode="drop")
  if density:
    widths = ufuncs.subtract(edges[1:], edges[:-1])
    counts = ufuncs.true_divide(ufuncs.true_divide(counts, widths), reductions.sum(counts))
  return counts, edges


# -- convolution, interpolation, integration
def _convolve_full(a, v):
  # sum over the taps of v of shifted copies of a: len(v) static steps, all lax ops
  m = v.shape[0]
  out = None
  for j in builtins.range(m):
    shifted = lax_shapes.pad(a, _c(a, 0), [(j, m - 1 - j, 0)])
    tap = lax_shapes.reshape(lax_shapes.slice(v, (j,), (j + 1,)), ())
    term = lax.mul(shifted, lax.broadcast_like(tap, shifted))
    out = term if out is None else lax.add(out, term)
  return out


def _convolve(name, a, v, mode):
  check_arraylike(name, a, v)
  a, v = promote_dtypes_inexact(a, v)
  if a.ndim != 1 or v.ndim != 1:
    raise ValueError(f"{name}() only support 1-dimensional inputs.")
  if a.shape[0] == 0 or v.shape[0] == 0:
    raise ValueError(f"{name}: inputs cannot be empty, got shapes {a.shape} and {v.shape}.")
  if mode not in ("full", "same", "valid"):
    raise ValueError("mode must be one of ['full', 'same', 'valid']")
  swapped = v.shape[0] > a.shape[0]
  if swapped:
    a, v = v, a
  full = _convolve_full(a, v)
  n, m = a.shape[0], v.shape[0]
  if mode == "same":
    start = (m - 1) // 2
    return full[start:start + n]
  if mode == "valid":
    return full[m - 1:n]
  return full


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
  """The discrete linear convolution of two 1-D arrays (``mode``: full, same, valid)."""
  return _convolve("convolve", a, v, mode)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
  """The cross-correlation ``c[k] = sum_n a[n + k] * conj(v[n])`` of two 1-D arrays."""
  check_arraylike("correlate", a, v)
  a, v = promote_dtypes_inexact(a, v)
  if v.ndim != 1:
    raise ValueError("correlate() only support 1-dimensional inputs.")
  if v.shape[0] > a.shape[0]:
    # numpy swaps and then reverses (and conjugates) the result
    out = _convolve("correlate", v, lax_shapes.rev(_conj(a), (0,)), mode)
    return _conj(lax_shapes.rev(out, (0,)))
  return _convolve("correlate", a, lax_shapes.rev(_conj(v), (0,)), mode)


def interp(x, xp, fp, left=None, right=None, period=None):
  """Piecewise-linear interpolation of the points ``(xp, fp)`` at ``x``.

  ``xp`` must be increasing. Below ``xp[0]`` the result is ``left`` (default ``fp[0]``),
  above ``xp[-1]`` it is ``right`` (default ``fp[-1]``). ``period`` is not supported.
  """
  check_arraylike("interp", x, xp, fp)
  if period is not None:
    raise NotImplementedError("jnp.interp(period=...) is not supported by jaxlite.")
  x, xp, fp = promote_dtypes_inexact(x, xp, fp)
  if xp.ndim != 1 or fp.ndim != 1 or xp.shape != fp.shape or xp.shape[0] == 0:
    raise ValueError("xp and fp must be one-dimensional arrays of equal size")
  n = xp.shape[0]
  i = ufuncs.clip(searchsorted(xp, x, side="right"), 1, builtins.max(n - 1, 1))
  i_lo = lax.sub(i, as_operand(np.int32(1)))
  take = lambda arr, idx: lax_shapes.reshape(
      lax_sort.take_along_axis(arr, lax_shapes.reshape(idx, (idx.size,)), 0), idx.shape)
  xlo, xhi, flo, fhi = take(xp, i_lo), take(xp, i), take(fp, i_lo), take(fp, i)
  dx = lax.sub(xhi, xlo)
  safe_dx = _where(lax.eq(dx, _c(dx, 0)), _c(dx, 1), dx)
  df = lax.sub(fhi, flo)
  out = lax.add(flo, lax.mul(lax.div(lax.sub(x, xlo), safe_dx), df))
  out = _where(lax.eq(dx, _c(dx, 0)), flo, out)
  left = fp[0] if left is None else as_operand(left).astype(fp.dtype)
  right = fp[-1] if right is None else as_operand(right).astype(fp.dtype)
  out = _where(lax.lt(x, xp[0]), left, out)
  return _where(lax.gt(x, xp[-1]), right, out)


def trapezoid(y, x=None, dx=1.0, axis=-1):
  """The integral of ``y`` along ``axis`` by the trapezoidal rule (samples at ``x`` or
  spaced ``dx`` apart)."""
  check_arraylike("trapezoid", y)
  y, = promote_dtypes_inexact(y)
  axis = canonicalize_axis(axis, y.ndim)
  n = y.shape[axis]
  if x is None:
    d = as_operand(dx)
  else:
    x, = promote_dtypes_inexact(x)
    if x.ndim == 1:
      d = diff(x)
      shape = [1] * y.ndim
      shape[axis] = d.shape[0]
      d = lax_shapes.reshape(d, tuple(shape))
    else:
      d = diff(x, axis=axis)
  lo = lax_shapes.slice_in_dim(y, 0, builtins.max(n - 1, 0), axis=axis)
  hi = lax_shapes.slice_in_dim(y, builtins.min(1, n), n, axis=axis)
  return ufuncs.multiply(0.5, reductions.sum(ufuncs.multiply(d, ufuncs.add(lo, hi)), axis))


# -- methods of Array and Tracer that belong to this module
for _cls in (Array, core.Tracer):
  _cls.cumsum = cumsum
  _cls.cumprod = cumprod
  _cls.ptp = ptp


def _asarray(x):
  from jaxlite._src.numpy.creation import asarray
  return asarray(x)
