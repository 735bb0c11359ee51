"""Statistics in ``jaxlite.numpy``: cumulative sums, order statistics (median, quantiles),
NaN-ignoring reductions, weighted averages, histograms (1-, 2- and D-dimensional, and
``digitize``), covariance, differences (with ``gradient`` and ``unwrap``), convolution and
interpolation."""
from __future__ import annotations

import builtins

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.core.array import Array
from jaxlite._src.lax import bits as _bits
from jaxlite._src.lax.call import staged
from jaxlite._src.lax.convolution import conv_general_dilated
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import indexing as lax_ix
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.lax import sorting as lax_sort
from jaxlite._src.lax.sharding_constraint import accepts_out_sharding
from jaxlite._src.libraries.numpy import creation, indexing, lax_numpy, reductions, ufuncs
from jaxlite._src.libraries.numpy.sorting import searchsorted, where
from jaxlite._src.libraries.numpy.util import (as_operand, axis_tuple, canonicalize_axes,
                                     canonicalize_axis, check_arraylike, ensure_arraylike,
                                     promote_dtypes, promote_dtypes_inexact)

__all__ = [
    "cumsum", "cumprod", "cumulative_sum", "cumulative_prod", "nancumsum", "nancumprod",
    "diff", "ediff1d", "gradient", "unwrap", "ptp", "median", "quantile", "percentile",
    "nanmedian", "nanquantile", "nanpercentile", "nansum", "nanprod", "nanmax", "nanmin",
    "nanmean", "nanvar", "nanstd", "nanargmax", "nanargmin", "average", "histogram",
    "histogram_bin_edges", "histogram2d", "histogramdd", "bincount", "digitize", "cov",
    "corrcoef", "convolve", "correlate", "interp", "trapezoid",
]


def _c(x, value):
  return lax._const(x, value)


def _isnan(a):
  return lax.ne(a, a)


def _where(pred, a, b):
  return lax_numpy.where(pred, a, b)


# -- cumulative reductions
def _cumulative(name, lax_fn, a, axis, dtype, nan_value=None, promote_integers=False):
  """JAX's cumulative reduction: over the flattened array if ``axis`` is None (or ``a``
  is a Python or NumPy scalar), computed and returned in a strongly typed dtype."""
  check_arraylike(name, a)
  if axis is None or np.isscalar(a):
    a = as_operand(a)
    a = lax_shapes.reshape(a, (a.size,))
  a = as_operand(a)
  axis = canonicalize_axis(0 if axis is None else axis, a.ndim)
  if nan_value is not None:
    a = _where(_isnan(a), _c(a, nan_value), a)
  if dtype is None:
    result = (reductions.promote_integer_dtype(a.dtype)
              if promote_integers or a.dtype == np.bool_ else a.dtype)
    compute = result
  else:
    dtypes.check_user_dtype_supported(dtype, name)
    result = dtypes.canonicalize_dtype(dtype)
    if result == np.bool_:
      # lax accumulates numbers only; nonzero values (which could cancel) count as one
      a = a if a.dtype == np.bool_ else lax.ne(a, _c(a, 0))
      compute = reductions.promote_integer_dtype(result)
    else:
      compute = result
  out = lax_fn(lax.convert_element_type(a, compute), axis)
  return lax.convert_element_type(out, result)


@staged(static_argnames=("axis", "dtype", "out"))
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
  """The Array API's running sum: like ``cumsum`` (small integers accumulate in the
  default integer type, as ``sum`` does), optionally starting with a zero."""
  return _cumulative_api("cumulative_sum", "sum", lax_sort.cumsum, x, axis, dtype,
                         include_initial, 0, promote_integers=True)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
  """The Array API's running product: like ``cumprod``, optionally starting with a one."""
  return _cumulative_api("cumulative_prod", "product", lax_sort.cumprod, x, axis, dtype,
                         include_initial, 1)


def _cumulative_api(name, what, lax_fn, x, axis, dtype, include_initial, identity,
                    promote_integers=False):
  check_arraylike(name, x)
  x = as_operand(x)
  if x.ndim == 0:
    raise ValueError(f"The input must be non-scalar to take a cumulative {what}, however "
                     "a scalar value or scalar array was given.")
  if axis is None:
    if x.ndim > 1:
      raise ValueError(f"The input array has rank {x.ndim}, however axis was not set to "
                       "an explicit value. The axis argument is only optional for "
                       "one-dimensional arrays.")
    axis = 0
  axis = canonicalize_axis(axis, x.ndim)
  out = _cumulative(name, lax_fn, x, axis, dtype, promote_integers=promote_integers)
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


def gradient(f, *varargs, axis=None, edge_order=None):
  """Central differences inside, one-sided differences at the edges (NumPy's
  ``gradient`` with ``edge_order=1``); ``varargs`` are scalar spacings or coordinates."""
  if edge_order is not None:
    raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not "
                              "supported.")
  (f,) = ensure_arraylike("gradient", f)
  f = f.astype(dtypes.to_inexact_dtype(f.dtype))   # int32 -> float32 also with x64 on
  axes = tuple(range(f.ndim)) if axis is None else (
      (canonicalize_axis(axis, f.ndim),) if isinstance(axis, int)
      else tuple(canonicalize_axis(a, f.ndim) for a in axis))
  if len(varargs) == 0:
    spacing = [1.0] * len(axes)
  elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
    spacing = list(varargs) * len(axes)
  elif len(varargs) == len(axes):
    spacing = list(varargs)
  else:
    raise TypeError("Invalid number of spacing arguments")
  out = []
  for ax, h in zip(axes, spacing):
    n = f.shape[ax]
    if n < 2:
      raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                       "least 2 elements are required.")
    sl = lambda a, b: indexing.take(f, creation.arange(a, n + b if b <= 0 else b), axis=ax)
    if np.ndim(h) == 0:
      inner = (sl(2, 0) - sl(0, -2)) / (2.0 * h)
      first = (sl(1, 2) - sl(0, 1)) / h
      last = (sl(n - 1, 0) - sl(n - 2, -1)) / h
    else:
      x = creation.asarray(h)
      dx = diff(x)
      shape = [1] * f.ndim
      shape[ax] = -1
      d1, d2 = lax_numpy.reshape(dx[:-1], shape), lax_numpy.reshape(dx[1:], shape)
      inner = (-(d2 / (d1 * (d1 + d2))) * sl(0, -2) + ((d2 - d1) / (d1 * d2)) * sl(1, -1)
               + (d1 / (d2 * (d1 + d2))) * sl(2, 0))
      first = (sl(1, 2) - sl(0, 1)) / dx[0]
      last = (sl(n - 1, 0) - sl(n - 2, -1)) / dx[-1]
    out.append(lax_numpy.concatenate([first, inner, last], axis=ax) if n > 2
               else lax_numpy.concatenate([first, last], axis=ax))
  return out[0] if len(axes) == 1 else out


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
  """Remove jumps larger than ``discont`` along ``axis`` by adding multiples of
  ``period`` (``numpy.unwrap``); ``p`` and ``period`` are promoted together, as in JAX."""
  (p,) = ensure_arraylike("unwrap", p)
  p, period = promote_dtypes(p, period)
  if dtypes.is_complex(p.dtype):
    raise ValueError("jnp.unwrap does not support complex inputs.")
  if p.shape[axis] == 0:
    return p
  discont = period / 2 if discont is None else discont
  interval = period // 2 if dtypes.is_integer(p.dtype) else period / 2
  dd = diff(p, axis=axis)
  ddmod = ufuncs.mod(dd + interval, period) - interval
  ddmod = where((ddmod == -interval) & (dd > 0), interval, ddmod)
  ph_correct = where(ufuncs.abs(dd) < discont, 0, ddmod - dd)
  n = p.shape[axis]
  first = lax_shapes.slice_in_dim(p, 0, 1, axis=axis)
  rest = lax_shapes.slice_in_dim(p, 1, n, axis=axis) + cumsum(ph_correct, axis=axis)
  return lax_numpy.concatenate([first, rest], axis=axis)


def ptp(a, axis=None, out=None, keepdims=False):
  """The range ``max - min`` along ``axis``."""
  _no_out("ptp", out)
  return ufuncs.subtract(reductions.max(a, axis, keepdims=keepdims),
                         reductions.min(a, axis, keepdims=keepdims))


# -- order statistics
_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _quantile(a, q, axis, method, keepdims, squash_nans, weights=None):
  """JAX's quantile: ``q``'s quantiles of ``a`` along ``axis``, the axes of ``q`` first.

  The positions ``q * (n - 1)`` are computed in ``q``'s dtype; the result has ``a``'s
  (inexact) dtype and is never weakly typed. ``squash_nans`` drops NaNs (nanquantile);
  otherwise a slice with a NaN gives NaN.
  """
  if method not in _METHODS:
    raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', "
                     "'nearest' or 'inverted_cdf'")
  a, q = as_operand(a), as_operand(q)
  a, weights = _quantile_operands(a, weights, axis, method)
  if dtypes.is_complex(a.dtype):
    raise ValueError("quantile does not support complex input, as the operation is "
                     "poorly defined.")
  a, weights, axis, kept_shape = _to_one_axis(a, weights, axis, keepdims)
  if q.ndim > 1:
    raise ValueError(f"q must be have rank <= 1, got shape {q.shape}")
  if method == "inverted_cdf":
    result = _inverted_cdf(a, q, weights, axis, keepdims, squash_nans)
  else:
    gather = _nan_squashed_values if squash_nans else _sorted_values
    low_value, high_value, low_weight, high_weight = gather(a, q, axis, keepdims)
    result = _interpolate(method, q, low_value, high_value, low_weight, high_weight)
  if keepdims and kept_shape is not None:
    result = lax_shapes.reshape(result, q.shape + kept_shape)
  return lax.convert_element_type(result, a.dtype)


def _quantile_operands(a, weights, axis, method):
  """``a`` (and ``weights``) promoted to an inexact dtype, ``weights`` broadcast to
  ``a``'s shape; weights need the inverted_cdf method."""
  if weights is None:
    return promote_dtypes_inexact(a)[0], None
  weights = as_operand(weights)
  if dtypes.is_complex(weights.dtype):
    raise ValueError("Weights cannot be complex types.")
  if method != "inverted_cdf":
    raise NotImplementedError(f"{method} doesn't support weights. Only method "
                              "'inverted_cdf' supports weights.")
  a, weights = promote_dtypes_inexact(a, weights)
  if weights.shape != a.shape:
    if axis is None:
      raise ValueError("Weights shape must match 'a' shape when axis is None.")
    axes = canonicalize_axes(axis, a.ndim)
    reduced = tuple(a.shape[d] for d in axes)
    if weights.shape != reduced:
      raise ValueError(f"Weights shape {weights.shape} must match reduction axes {reduced}")
    weights = lax_shapes.broadcast_in_dim(weights, a.shape, axes)
  return a, weights


def _to_one_axis(a, weights, axis, keepdims):
  """``a`` (and ``weights``) with the axes to reduce merged into one; returns them, that
  axis, and the shape ``keepdims`` gives the result (None: the gathered shape is it)."""
  if axis is None:
    kept_shape = (1,) * a.ndim if keepdims else None
    flat = lambda x: lax_shapes.reshape(x, (x.size,))
    return flat(a), None if weights is None else flat(weights), 0, kept_shape
  if not isinstance(axis, tuple):
    return a, weights, canonicalize_axis(axis, a.ndim), None
  axes = tuple(canonicalize_axis(d, a.ndim) for d in axis)
  if len(set(axes)) != len(axes):
    raise ValueError("repeated axis")
  kept = [d for d in range(a.ndim) if d not in axes]
  n = int(np.prod([a.shape[d] for d in axes], dtype=np.int64))
  merge = lambda x: lax_shapes.reshape(lax_shapes.transpose(x, kept + list(axes)),
                                       tuple(a.shape[d] for d in kept) + (n,))
  kept_shape = tuple(1 if d in axes else s for d, s in enumerate(a.shape))
  return merge(a), None if weights is None else merge(weights), len(kept), kept_shape


def _positions(q, count):
  """The fractional positions ``q * (count - 1)``: their floor and ceiling (as float) and
  the weights of the values there."""
  q = lax.mul(q, lax.sub(count, _c(count, 1)))
  low, high = lax.floor(q), lax.ceil(q)
  high_weight = lax.sub(q, low)
  return low, high, lax.sub(_c(high_weight, 1), high_weight), high_weight


def _sorted_values(a, q, axis, keepdims):
  """quantile: the sorted values at the floor and ceiling of each position (a slice with
  a NaN is all NaN), gathered with ``q``'s axes first, and their weights."""
  any_nan = reductions.any(_isnan(a), axis=axis, keepdims=True)
  a = lax_sort.sort(_where(any_nan, np.nan, a), axis)
  n = a.shape[axis]
  count = lax.convert_element_type(as_operand(n), q.dtype)
  low, high, low_weight, high_weight = _positions(q, count)
  last = lax.sub(count, _c(count, 1))
  low, high = (lax.convert_element_type(lax.clamp(_c(i, 0), i, last), dtypes.default_int_dtype())
               for i in (low, high))
  slice_sizes = tuple(1 if d == axis else s for d, s in enumerate(a.shape))
  dnums = lax_ix.GatherDimensionNumbers(
      offset_dims=tuple(range(q.ndim, a.ndim + q.ndim - (0 if keepdims else 1))),
      collapsed_slice_dims=() if keepdims else (axis,), start_index_map=(axis,))
  take = lambda i: lax_ix.gather(a, lax_shapes.expand_dims(i, (i.ndim,)), dnums, slice_sizes)
  low_value, high_value = take(low), take(high)
  spread = lambda w: lax_shapes.broadcast_in_dim(w, low_value.shape, tuple(range(q.ndim)))
  return low_value, high_value, spread(low_weight), spread(high_weight)


def _nan_squashed_values(a, q, axis, keepdims):
  """nanquantile: as ``_sorted_values`` over the non-NaN values of each slice (NaNs
  sort last), indexed with ``a[...]`` as JAX does."""
  a = lax_sort.sort(_where(_isnan(a), np.nan, a), axis)
  counts = reductions.sum(lax.bitwise_not(_isnan(a)), axis=axis, dtype=q.dtype,
                          keepdims=keepdims)
  reduced_shape, q_ndim = counts.shape, q.ndim
  q = lax_shapes.expand_dims(q, tuple(range(q_ndim, len(reduced_shape) + q_ndim)))
  counts = lax_shapes.expand_dims(counts, tuple(range(q_ndim)))
  low, high, low_weight, high_weight = _positions(q, counts)
  last = ufuncs.subtract(counts, 1)
  int_dtype = dtypes.default_int_dtype()
  low, high = (lax.convert_element_type(lax.max(_c(i, 0), lax.min(i, last)), int_dtype)
               for i in (low, high))
  index = [lax_shapes.broadcasted_iota(int_dtype, low.shape, d + q_ndim)
           for d in range(len(reduced_shape))]
  if keepdims:
    index[axis] = low
  else:
    index.insert(axis, low)
  low_value = a[tuple(index)]
  index[axis] = high
  return low_value, a[tuple(index)], low_weight, high_weight


def _interpolate(method, q, low_value, high_value, low_weight, high_weight):
  if method == "linear":
    as_q = lambda v: lax.convert_element_type(v, q.dtype)
    return lax.add(lax.mul(as_q(low_value), low_weight), lax.mul(as_q(high_value), high_weight))
  if method == "lower":
    return low_value
  if method == "higher":
    return high_value
  if method == "nearest":   # ties go to the lower value
    return lax.select(lax.le(high_weight, _c(high_weight, 0.5)), low_value, high_value)
  return lax.mul(lax.add(low_value, high_value), _c(low_value, 0.5))   # midpoint


def _inverted_cdf(a, q, weights, axis, keepdims, squash_nans):
  """The smallest value whose cumulative weight reaches ``q`` of the total weight (all
  weights 1 without ``weights``); NaN where a weight is negative or NaN, and where data
  is NaN (nanquantile: where all of it is)."""
  if squash_nans:
    a = _where(_isnan(a), np.nan, a)
  else:
    a = _where(reductions.any(_isnan(a), axis=axis, keepdims=True), np.nan, a)
  if weights is None:
    a = lax_sort.sort(a, axis)
    weights = lax.broadcast_like(_c(a, 1.0), a)
  else:
    a, weights = lax_sort.sort_key_val(a, weights, axis)
  zeros = lax.broadcast_like(_c(weights, 0), weights)
  bad_weights = lax.bitwise_or(lax.lt(weights, zeros), _isnan(weights))
  nan_data = _isnan(a)
  if squash_nans:
    valid = reductions.sum(lax.bitwise_not(nan_data), axis=axis, dtype=q.dtype,
                           keepdims=keepdims)
    nan_out = lax.eq(valid, _c(valid, 0))
  else:
    valid = None
    nan_out = reductions.any(nan_data, axis=axis, keepdims=keepdims)
  clean = lax.select(lax.bitwise_or(bad_weights, nan_data), zeros, weights)
  idx = _cdf_index(cumsum(clean, axis=axis), q, axis, keepdims, valid)
  result = _take_along(a, idx, axis, q.ndim, keepdims)
  nan_out = lax.bitwise_or(reductions.any(bad_weights, axis=axis, keepdims=keepdims), nan_out)
  return _where(lax_shapes.expand_dims(nan_out, tuple(range(q.ndim))), np.nan, result)


def _cdf_index(cum_weights, q, axis, keepdims, valid):
  """Per ``q`` (leading axes), the first index along ``axis`` whose cumulative weight
  reaches ``q`` of the total, clamped to the ``valid`` count (default: all) minus one."""
  lead = tuple(range(q.ndim))
  total = lax_ix.index_in_dim(cum_weights, -1, axis, keepdims)
  target = lax.mul(lax_shapes.reshape(q, q.shape + (1,) * total.ndim),
                   lax_shapes.expand_dims(total, lead))
  if not keepdims:
    target = lax_shapes.expand_dims(target, (axis + q.ndim,))
  is_less = lax.lt(lax_shapes.expand_dims(cum_weights, lead), target)
  int_dtype = dtypes.default_int_dtype()
  idx = reductions.sum(lax.convert_element_type(is_less, int_dtype), axis=axis + q.ndim,
                       keepdims=keepdims)
  if valid is None:
    n = lax.convert_element_type(as_operand(cum_weights.shape[axis]), q.dtype)
    valid = lax.broadcast_like(n, total)
  last = lax.convert_element_type(lax.sub(valid, _c(valid, 1)), int_dtype)
  idx = lax.max(_c(idx, 0), lax.min(idx, lax_shapes.expand_dims(last, lead)))
  return lax_shapes.squeeze(idx, (q.ndim + axis,)) if keepdims else idx


def _take_along(a, idx, axis, q_ndim, keepdims):
  """``a``'s values at ``idx`` (``q``'s axes first, then ``a``'s without ``axis``) along
  ``axis``; the result is laid out as ``idx`` (with ``axis`` kept if ``keepdims``)."""
  from jaxlite._src.libraries.numpy.indexing import take_along_axis
  if q_ndim == 0:
    out = take_along_axis(a, lax_shapes.expand_dims(idx, (axis,)), axis=axis)
    out = lax_shapes.squeeze(out, (axis,))
  else:   # q's axes move to ``axis``, where the values of one slice are taken
    perm = [*range(q_ndim, q_ndim + axis), *range(q_ndim), *range(q_ndim + axis, idx.ndim)]
    out = take_along_axis(a, lax_shapes.transpose(idx, perm), axis=axis)
    out = lax_shapes.transpose(out, [perm.index(i) for i in range(len(perm))])
  return lax_shapes.expand_dims(out, (q_ndim + axis,)) if keepdims else out


def _check_unsupported(name, out, overwrite_input):
  if overwrite_input or out is not None:
    raise ValueError(f"jax.numpy.{name} does not support overwrite_input=True or "
                     "out != None")


def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None):
  """The ``q``-th quantiles (``q`` in [0, 1]) along ``axis``; NaN if a slice has NaNs.

  ``method`` is one of 'linear', 'lower', 'higher', 'midpoint', 'nearest' and
  'inverted_cdf' (the only one that takes ``weights``, which broadcast along ``axis``).
  The axes of ``q`` come first in the result.
  """
  check_arraylike("quantile", a, q)
  _check_unsupported("quantile", out, overwrite_input)
  return _quantile(a, q, axis, method, keepdims, False, weights)


@accepts_out_sharding("jnp.percentile")
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):
  """The ``q``-th percentiles (``q`` in [0, 100]) along ``axis``; see ``quantile``."""
  check_arraylike("percentile", a, q)
  q, = promote_dtypes_inexact(q)
  return quantile(a, ufuncs.true_divide(q, 100), axis, out, overwrite_input, method,
                  keepdims, weights=weights)


def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
  """The median along ``axis`` (the mean of the two middle values for even counts)."""
  check_arraylike("median", a)
  return quantile(a, 0.5, axis, out, overwrite_input, "midpoint", keepdims)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None):
  """``quantile`` ignoring NaNs (NaN only for all-NaN slices)."""
  check_arraylike("nanquantile", a, q)
  _check_unsupported("nanquantile", out, overwrite_input)
  return _quantile(a, q, axis, method, keepdims, True, weights)


def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=False, *, weights=None):
  """``percentile`` ignoring NaNs."""
  check_arraylike("nanpercentile", a, q)
  q, = promote_dtypes_inexact(q)
  return nanquantile(a, ufuncs.true_divide(q, 100), axis, out, overwrite_input, method,
                     keepdims, weights=weights)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
  """``median`` ignoring NaNs."""
  check_arraylike("nanmedian", a)
  return nanquantile(a, 0.5, axis, out, overwrite_input, "midpoint", keepdims)


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
  squared = reductions.squared_magnitude(_where(nan, 0, lax.sub(a, mean)))
  count = reductions.sum(lax.bitwise_not(nan), axis, keepdims=keepdims, where=where)
  count = ufuncs.subtract(count, ddof)
  empty = lax.le(count, _c(count, 0))
  # as JAX: a Python NaN promotes an integer total (an integer ``dtype``) to a weak float
  total = _where(empty, np.nan, reductions.sum(squared, axis, keepdims=keepdims, where=where))
  divisor = lax.convert_element_type(_where(empty, 1, count), total.dtype)
  return lax.convert_element_type(lax.div(total, divisor), dtype)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None,
           mean=None):
  """``std`` of the non-NaN elements: the square root of ``nanvar`` (whose ``dtype``
  must then be inexact)."""
  return lax.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where, mean))


# -- weighted statistics
def average(a, axis=None, weights=None, returned=False, keepdims=False):
  """The weighted mean along ``axis``; with ``returned`` also the sum of the weights.

  ``weights`` has ``a``'s shape, or the shape of the reduced axes of ``a`` (in the order
  ``axis`` lists them).
  """
  check_arraylike("average", a)
  a = as_operand(a)
  axes = canonicalize_axes(axis, a.ndim)
  if weights is None:   # every weight 1
    a, = promote_dtypes_inexact(a)
    avg = reductions.mean(a, axis, keepdims=keepdims)
    n = int(np.prod([a.shape[d] for d in axes], dtype=np.int64))
    total = as_operand(np.array(n, avg.dtype))
  else:
    check_arraylike("average", weights)
    a, weights = promote_dtypes_inexact(a, weights)
    if a.shape != weights.shape:
      weights = _weights_along(a, weights, axis, axes)
    total = reductions.sum(weights, axis, keepdims=keepdims)
    avg = ufuncs.true_divide(reductions.sum(ufuncs.multiply(a, weights), axis,
                                            keepdims=keepdims), total)
  if returned:
    return avg, lax_numpy.broadcast_to(total, avg.shape)
  return avg


def _weights_along(a, weights, axis, axes):
  """``weights`` of the reduced axes' shape (in ``axis``'s order), reshaped to broadcast
  against ``a``."""
  if axis is None:
    raise ValueError("Axis must be specified when shapes of a and weights differ.")
  order = tuple(canonicalize_axis(d, a.ndim) for d in axis_tuple(axis))
  if weights.shape != tuple(a.shape[d] for d in order):
    raise ValueError("Shape of weights must be consistent with shape of a along specified "
                     "axis.")
  shape = tuple(n if d in axes else 1 for d, n in enumerate(a.shape))
  return lax_shapes.reshape(weights, shape, tuple(int(i) for i in np.argsort(order)))


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
  xw = xc if w is None else ufuncs.multiply(xc, w[None, :])
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
@accepts_out_sharding("jnp.bincount")
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
  from jaxlite._src.libraries.numpy.creation import zeros
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
  from jaxlite._src.libraries.numpy.creation import zeros
  counts = zeros((nb,), edges.dtype).at[index].add(w, mode="drop")
  if density:
    widths = ufuncs.subtract(edges[1:], edges[:-1])
    counts = ufuncs.true_divide(ufuncs.true_divide(counts, widths), reductions.sum(counts))
  return counts, edges


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
  """A D-dimensional histogram of ``sample`` (shape ``(N, D)``): counts and bin edges.

  The counts are integers unless ``weights`` or ``density`` are given (as in JAX).
  """
  if weights is None:
    (sample,) = ensure_arraylike("histogramdd", sample)
    (sample,) = promote_dtypes_inexact(sample)
  else:
    sample, weights = ensure_arraylike("histogramdd", sample, weights)
    if weights.shape != sample.shape[:1]:
      raise ValueError("should have one weight for each sample.")
    sample, weights = promote_dtypes_inexact(sample, weights)
  if sample.ndim != 2:
    raise ValueError(f"histogramdd: sample must be 2-D, got shape {sample.shape}")
  n, d = sample.shape
  if range is not None and (len(range) != d or any(
      r is not None and np.shape(r)[0] != 2 for r in range)):
    raise ValueError(f"For sample.shape={(n, d)}, range must be a sequence of {d} pairs or "
                     f"Nones; got {range=}")
  try:
    bins = list(bins)
  except TypeError:
    bins = [bins] * d   # one bin count for every dimension
  if len(bins) != d:
    raise ValueError("should be a bin for each dimension.")
  edges, index = [], []
  for i in builtins.range(d):
    col = sample[:, i]
    e = histogram_bin_edges(col, bins[i], None if range is None else range[i], weights)
    ix = searchsorted(e, col, side="right")
    index.append(where(col == e[-1], ix - 1, ix))   # the last edge is inclusive
    edges.append(e)
  # outliers below and above get their own bins, dropped at the end
  nbins = tuple(e.shape[0] + 1 for e in edges)
  flat = indexing.ravel_multi_index(tuple(index), nbins, mode="clip")
  counts = lax_numpy.reshape(bincount(flat, weights, length=int(np.prod(nbins))), nbins)
  counts = counts[(slice(1, -1),) * d]
  if density:
    counts = counts.astype(sample.dtype)
    counts = counts / counts.sum()
    for width in indexing.ix_(*[diff(e) for e in edges]):
      counts = counts / width
  return counts, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
  """A 2-D histogram of the points ``(x[i], y[i])``: counts, x edges, y edges."""
  x, y = ensure_arraylike("histogram2d", x, y)
  try:
    n = len(bins)
  except TypeError:
    n = 1
  if n not in (1, 2):
    bins = [creation.asarray(bins)] * 2   # one array of edges for both axes
  counts, (ex, ey) = histogramdd(lax_numpy.transpose(creation.asarray([x, y])), bins, range,
                                 weights, density)
  return counts, ex, ey


def digitize(x, bins, right=False, *, method=None):
  """Index of the bin each ``x`` falls in, for increasing or decreasing ``bins``."""
  x, bins = ensure_arraylike("digitize", x, bins)
  if bins.ndim != 1:
    raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
  if bins.shape[0] == 0:
    return creation.zeros(x.shape, dtype=np.int32)
  side = "left" if right else "right"
  kw = {} if method is None else {"method": method}
  increasing = searchsorted(bins, x, side=side, **kw)
  decreasing = bins.shape[0] - searchsorted(bins[::-1], x, side=side, **kw)
  return where(bins[-1] >= bins[0], increasing, decreasing).astype(np.int32)


# -- convolution, interpolation, integration
def _convolve(name, a, v, mode, precision, preferred_element_type):
  """``convolve`` (``name``) or ``correlate`` of 1-D ``a`` and ``v``, as JAX computes it:
  one ``conv_general_dilated`` with ``precision`` (on a TPU the default multiplies in
  bf16 passes, so the answers are JAX's there too)."""
  check_arraylike(name, a, v)
  a, v = as_operand(a), as_operand(v)
  if a.ndim != 1 or v.ndim != 1:
    raise ValueError(f"{name}() only support 1-dimensional inputs.")
  if preferred_element_type is None:
    a, v = promote_dtypes_inexact(a, v)
  if a.shape[0] == 0 or v.shape[0] == 0:
    raise ValueError(f"{name}: inputs cannot be empty, got shapes {a.shape} and {v.shape}.")
  reverse = False
  if name == "correlate":
    v = _conj(v)
    if a.shape[0] < v.shape[0]:
      a, v, reverse = v, a, True
  else:
    if a.shape[0] < v.shape[0]:
      a, v = v, a
    v = lax_shapes.rev(v, (0,))
  m = v.shape[0]
  pads = {"valid": (0, 0), "same": (m // 2, m - m // 2 - 1), "full": (m - 1, m - 1)}
  if mode not in pads:
    raise ValueError("mode must be one of ['full', 'same', 'valid']")
  out = conv_general_dilated(lax_shapes.broadcast_in_dim(a, (1, 1, a.shape[0]), (2,)),
                             lax_shapes.broadcast_in_dim(v, (1, 1, m), (2,)), (1,),
                             [pads[mode]], precision=precision,
                             preferred_element_type=preferred_element_type)
  out = lax_shapes.rev(out, (2,)) if reverse else out
  return lax_shapes.squeeze(out, (0, 1))


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
  """The discrete linear convolution of two 1-D arrays (``mode``: full, same, valid)."""
  return _convolve("convolve", a, v, mode, precision, preferred_element_type)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
  """The cross-correlation ``c[k] = sum_n a[n + k] * conj(v[n])`` of two 1-D arrays."""
  return _convolve("correlate", a, v, mode, precision, preferred_element_type)


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
  x_axis = axis   # an N-d x is differenced along its own axis, broadcast against y's
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
      d = diff(x, axis=x_axis)
  lo = lax_shapes.slice_in_dim(y, 0, builtins.max(n - 1, 0), axis=axis)
  hi = lax_shapes.slice_in_dim(y, builtins.min(1, n), n, axis=axis)
  return ufuncs.multiply(0.5, reductions.sum(ufuncs.multiply(d, ufuncs.add(lo, hi)), axis))


# -- methods of Array and Tracer that belong to this module
for _cls in (Array, core.Tracer):
  _cls.cumsum = cumsum
  _cls.cumprod = cumprod
  _cls.ptp = ptp


def _asarray(x):
  from jaxlite._src.libraries.numpy.creation import asarray
  return asarray(x)
