"""Sorting, searching, set operations and selection in ``jaxlite.numpy``.

Functions whose output size depends on the data (``nonzero``, ``unique``, the set
operations, ``compress``) take a static ``size=``: they pad with ``fill_value`` or
truncate to it. Without ``size`` they need concrete input, and under ``jit`` (or any
staging) they raise a ``ConcretizationTypeError`` saying so, as JAX's do.
"""
from __future__ import annotations

import builtins
import collections
import operator

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.lax.call import staged
from jaxlite._src.lax.custom_derivatives import stop_gradient
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import reductions as lax_red
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.lax import sorting as lax_sort
from jaxlite._src.libraries.numpy import lax_numpy
from jaxlite._src.libraries.numpy.creation import zeros
from jaxlite._src.libraries.numpy.indexing import take
from jaxlite._src.libraries.numpy.util import (as_operand, canonicalize_axis, check_arraylike,
                                     ensure_arraylike, promote_dtypes)

__all__ = [
    "sort", "argsort", "lexsort", "partition", "argpartition", "searchsorted", "nonzero",
    "where",
    "argwhere", "flatnonzero", "unique", "unique_all", "unique_counts", "unique_inverse",
    "unique_values", "union1d", "intersect1d", "setdiff1d", "setxor1d", "isin", "extract",
    "select", "piecewise", "compress", "sort_complex",
]

def _index_dtype():
  """Indices are of the default integer type (int64 with x64 on), as JAX's."""
  return dtypes.default_int_dtype()


def _iota(n, dtype=None):
  return lax_shapes.iota(dtype or _index_dtype(), n)


def _c(x, value):
  return lax._const(x, value)


def _flat(a):
  return lax_shapes.reshape(a, (a.size,)) if a.ndim != 1 else a


def _prepare_axis(name, a, axis):
  check_arraylike(name, a)
  a = as_operand(a)
  if axis is None:
    return _flat(a), 0
  if a.ndim == 0:
    raise ValueError(f"{name}: axis {axis} is out of bounds for array of dimension 0")
  return a, canonicalize_axis(axis, a.ndim)


@staged(static_argnames=("axis", "kind", "order", "stable", "descending"))
def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
  """A sorted copy of ``a`` along ``axis`` (flattened when ``axis`` is None).

  NaNs sort to the end. ``descending=True`` reverses the ascending sort, as JAX's does, so
  elements that compare equal but differ (a subnormal and a zero, which XLA's CPU sort
  ties) come out in reverse order. ``kind`` and ``order`` are not supported (as in JAX).
  """
  if order is not None:
    raise ValueError("'order' argument to sort is not supported.")
  a, axis = _prepare_axis("sort", a, axis)
  out = lax_sort.sort(a, axis, stable)
  return lax_shapes.rev(out, (axis,)) if descending else out


def sort_complex(a):
  """``a`` flattened along its last axis, sorted by real then imaginary part, as complex."""
  check_arraylike("sort_complex", a)
  a = as_operand(a)
  out = sort(a, axis=0 if a.ndim else None)
  if not dtypes.is_complex(out.dtype):   # complex64 unless it computes in float64
    wide = dtypes.to_inexact_dtype(out.dtype) == np.float64
    out = lax.convert_element_type(out, np.dtype(np.complex128 if wide else np.complex64))
  return out


@staged(static_argnames=("axis", "kind", "order", "stable", "descending", "dtype"))
def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False,
            dtype=None):
  """The indices that sort ``a`` along ``axis`` (int32 by default)."""
  if order is not None:
    raise ValueError("'order' argument to argsort is not supported.")
  a, axis = _prepare_axis("argsort", a, axis)
  index_dtype = dtypes.canonicalize_dtype(dtype or dtypes.default_int_dtype())
  n = a.shape[axis]
  iota = lax_shapes.broadcasted_iota(index_dtype, a.shape, axis)
  if descending:
    _, perm = lax_sort.sort((lax_shapes.rev(a, (axis,)), iota), axis, stable, 1)
    return lax.sub(as_operand(np.array(n - 1, index_dtype)), lax_shapes.rev(perm, (axis,)))
  _, perm = lax_sort.sort((a, iota), axis, stable, 1)
  return perm


def lexsort(keys, axis=-1):
  """The indices that sort by the last key, then the one before, and so on."""
  keys = [as_operand(k) for k in keys]
  if not keys:
    raise TypeError("need sequence of keys with len > 0 in lexsort")
  if len({k.shape for k in keys}) > 1:
    raise ValueError("all keys need to be the same shape")
  if keys[0].ndim == 0:
    return as_operand(np.array(0, _index_dtype()))
  axis = canonicalize_axis(axis, keys[0].ndim)
  iota = lax_shapes.broadcasted_iota(_index_dtype(), keys[0].shape, axis)
  return lax_sort.sort((*keys[::-1], iota), axis, True, len(keys))[-1]


def partition(a, kth, axis=-1):
  """``a`` with the element at ``kth`` where a full sort would put it (``numpy.partition``).

  As in JAX, the ``kth + 1`` smallest elements come first in ascending order and the rest
  follow in descending order (both parts come from ``lax.top_k``).
  """
  arr, axis, kth = _prepare_partition("partition", a, kth, axis)
  bottom = lax.neg(lax_sort.top_k(_negated_for_top_k(arr), kth + 1)[0])
  if dtypes.issubdtype(arr.dtype, np.unsignedinteger):
    bottom = lax.sub(bottom, _c(bottom, 1))
  top = lax_sort.top_k(arr, arr.shape[-1] - kth - 1)[0]
  return lax_numpy.swapaxes(lax_shapes.concatenate([bottom, top], arr.ndim - 1), -1, axis)


def argpartition(a, kth, axis=-1):
  """Indices that partition ``a`` around ``kth`` (``numpy.argpartition``), in the order
  ``partition`` puts the values."""
  arr, axis, kth = _prepare_partition("argpartition", a, kth, axis)
  bottom = lax_sort.top_k(_negated_for_top_k(arr), kth + 1)[1]
  # the rest by index, through a proxy that ranks the bottom ones last (values may repeat)
  n = arr.shape[-1]
  positions = lax_shapes.broadcasted_iota(np.int32, bottom.shape + (n,), bottom.ndim)
  taken = lax_red.reduce_or(lax.eq(positions, lax_numpy.expand_dims(bottom, -1)),
                            (bottom.ndim - 1,))
  proxy = lax.convert_element_type(lax.bitwise_not(taken), np.float32)
  top = lax_sort.top_k(proxy, n - kth - 1)[1]
  return lax_numpy.swapaxes(lax_shapes.concatenate([bottom, top], arr.ndim - 1), -1, axis)


def _prepare_partition(name, a, kth, axis):
  """``a`` with ``axis`` moved last, the axis, and ``kth`` checked and made nonnegative."""
  check_arraylike(name, a)
  arr = as_operand(a)
  if dtypes.is_complex(arr.dtype):
    raise NotImplementedError(f"jnp.{name} for complex dtype is not implemented.")
  axis = canonicalize_axis(axis, arr.ndim)
  kth = canonicalize_axis(core.concrete_or_error(
      operator.index, kth, f"The kth argument of {name} must be static."), arr.shape[axis])
  return lax_numpy.swapaxes(arr, axis, -1), axis, kth


def _negated_for_top_k(arr):
  """``-arr`` for ``top_k`` to find the smallest entries; unsigned values shift by one first
  so that 0 stays the smallest (as JAX does)."""
  if dtypes.issubdtype(arr.dtype, np.unsignedinteger):
    arr = lax.add(arr, _c(arr, 1))
  return lax.neg(arr)


def _nan_last_less(x, y, or_equal):
  """``x < y`` (or ``<=``) in the order sort uses: NaN after every number."""
  cmp = lax.le(x, y) if or_equal else lax.lt(x, y)
  if not dtypes.is_inexact(x.dtype):
    return cmp
  x_nan, y_nan = lax.ne(x, x), lax.ne(y, y)
  # NaN on the right: true unless the left is NaN too (then `<=` holds, `<` does not)
  nan_case = lax.bitwise_and(y_nan, lax.bitwise_not(x_nan) if not or_equal else y_nan)
  return lax.bitwise_or(cmp, nan_case)


def searchsorted(a, v, side="left", sorter=None, *, method="scan"):
  """Where ``v``'s elements would be inserted into sorted 1-D ``a`` to keep it sorted.

  ``side='left'`` gives the first suitable index, ``'right'`` the last. The result has
  ``v``'s shape and dtype int32. All ``method`` values compute the same answer here by
  comparing every pair, which costs ``len(a) * v.size``.
  """
  check_arraylike("searchsorted", a, v)
  if side not in ("left", "right"):
    raise ValueError(f"invalid argument {side=!r}, expected 'left' or 'right'")
  if method not in ("scan", "scan_unrolled", "sort", "compare_all"):
    raise ValueError(f"method={method!r} not recognized")
  a, v = promote_dtypes(a, v)
  if a.ndim != 1:
    raise ValueError("a should be 1-dimensional")
  if sorter is not None:
    a = lax_sort.take_along_axis(a, as_operand(sorter).astype(np.int32), 0)
  if a.shape[0] == 0:
    return lax.broadcast_like(as_operand(np.array(0, np.int32)), v)
  vv = lax_shapes.expand_dims(v, (v.ndim,))
  aa = lax_shapes.reshape(a, (1,) * v.ndim + a.shape)
  shape = v.shape + a.shape
  vv, aa = (lax_shapes.broadcast_to_shape(t, shape) for t in (vv, aa))
  before = _nan_last_less(aa, vv, or_equal=(side == "right"))
  return lax_red.reduce_sum(lax.convert_element_type(before, np.int32), (v.ndim,))


def _static_size(name, count, size):
  if size is not None:
    return core.concrete_or_error(
        int, size, f"The size argument of jnp.{name} must be a static integer.")
  return core.concrete_or_error(
      int, count, f"The size argument of jnp.{name} must be statically specified to use "
      f"jnp.{name} within JAX transformations.")


def _first_true(mask, size):
  """Positions of the first ``size`` true entries of 1-D ``mask`` (in order), padded with
  0, and how many there are."""
  n = mask.shape[0]
  order = lax_sort.sort((lax.convert_element_type(lax.bitwise_not(mask), np.int8),
                         _iota(n)), 0, True, 1)[1]
  if size > n:
    order = lax_shapes.pad(order, as_operand(np.array(0, _index_dtype())), [(0, size - n, 0)])
  return lax_shapes.slice(order, (0,), (size,))


def _count(mask):
  return lax_red.reduce_sum(lax.convert_element_type(mask, _index_dtype()), (0,))


def _to_bool(a):
  return a if a.dtype == np.bool_ else lax.ne(a, _c(a, 0))


def nonzero(a, *, size=None, fill_value=None):
  """The indices of the nonzero elements, one integer array per axis.

  Parameters
  ----------
  a : array_like
  size : int, optional
    The static number of indices to return; needed under ``jit``. Missing entries are
    ``fill_value`` (default 0); extra nonzeros are dropped.
  fill_value : scalar or tuple of scalars, optional
    The padding, for all axes or one per axis.
  """
  check_arraylike("nonzero", a)
  a = as_operand(a)
  if a.ndim == 0:
    raise ValueError("Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(scalar)"
                     ".nonzero() instead.")
  mask = _flat(_to_bool(a))
  count = _count(mask)
  size = _static_size("nonzero", count, size)
  flat_index = _first_true(mask, size)
  valid = lax.lt(_iota(size), lax.broadcast_like(count, flat_index))
  fills = fill_value if isinstance(fill_value, (tuple, list)) else (fill_value,) * a.ndim
  if len(fills) != a.ndim or builtins.any(np.shape(f) != () for f in fills):
    raise ValueError(f"fill_value must be a scalar or a tuple of length {a.ndim}; got "
                     f"{fill_value}")
  out, stride = [], 1
  for dim in reversed(a.shape):
    coord = flat_index if dim == 0 else lax.rem(lax.div(flat_index, _c(flat_index, stride)),
                                                _c(flat_index, dim))
    out.append(coord)
    stride *= builtins.max(dim, 1)
  out = out[::-1]
  if fill_value is None:   # the padding is index 0
    return tuple(lax.select(valid, c, lax.broadcast_like(_c(c, 0), c)) for c in out)
  # as jnp.where(valid, index, fill): a float fill gives float indices, as in JAX
  return tuple(lax_numpy.where(valid, c, f) for c, f in zip(out, fills))


def flatnonzero(a, *, size=None, fill_value=None):
  """The indices of the nonzero elements of ``ravel(a)``."""
  check_arraylike("flatnonzero", a)
  return nonzero(_flat(as_operand(a)), size=size, fill_value=fill_value)[0]


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
  """``x`` where ``condition`` else ``y``, elementwise with broadcasting; with one
  argument, the indices of the nonzero elements of ``condition`` (``jnp.nonzero``).

  Both ``x`` and ``y`` are always computed; under ``grad`` a NaN in the branch not taken
  still reaches the gradient (see the sharp-bits docs for the double-``where`` fix).

  Parameters
  ----------
  condition : array_like
  x, y : array_like, optional
    Both or neither.
  size, fill_value : optional
    One-argument form only: the static number of indices (needed under ``jit``) and the
    padding beyond the nonzero count, as in ``jnp.nonzero``.
  """
  if x is None and y is None:
    check_arraylike("where", condition)
    return nonzero(condition, size=size, fill_value=fill_value)
  check_arraylike("where", condition, x, y)
  if size is not None or fill_value is not None:
    raise ValueError("size and fill_value arguments cannot be used in three-term where "
                     "function.")
  return lax_numpy._where(condition, x, y)


def argwhere(a, *, size=None, fill_value=None):
  """The indices of the nonzero elements, as an array of shape ``(count, a.ndim)``."""
  check_arraylike("argwhere", a)
  a = as_operand(a)
  if a.ndim == 0:
    result = argwhere(lax_shapes.reshape(a, (1,)), size=size, fill_value=fill_value)
    return lax_shapes.slice(result, (0, 0), (result.shape[0], 0))
  return lax_numpy.stack(nonzero(a, size=size, fill_value=fill_value), axis=1)


def _isin_mask(element, test):
  """For each entry of 1-D ``element``, whether it occurs in 1-D ``test``."""
  if test.shape[0] == 0 or element.shape[0] == 0:
    return zeros(element.shape, bool)
  eq = lax.eq(lax_shapes.broadcast_in_dim(element, element.shape + test.shape, (0,)),
              lax_shapes.broadcast_in_dim(test, element.shape + test.shape, (1,)))
  return lax_red.reduce_or(eq, (1,))


def isin(element, test_elements, assume_unique=False, invert=False, *, method="auto"):
  """Whether each element of ``element`` occurs in ``test_elements`` (``element``'s shape).

  Every pair is compared, so the cost is ``element.size * test_elements.size``.
  """
  check_arraylike("isin", element, test_elements)
  element, test = promote_dtypes(element, test_elements)
  mask = lax_shapes.reshape(_isin_mask(_flat(element), _flat(test)), element.shape)
  return lax.bitwise_not(mask) if invert else mask


def _unique_sorted(columns, keep, size, fill_value, default_fill, name, equal_nan=True):
  """The sorted distinct rows of the 1-D ``columns`` (one array per key) where ``keep`` is true.

  Rows compare lexicographically, column by column. Returns
  ``(unique_columns, first_index, valid, count, new, perm, n)`` where the extras serve
  ``unique``'s return_* options.
  """
  n = columns[0].shape[0]
  iota = _iota(n)
  dropped = lax.convert_element_type(lax.bitwise_not(keep), np.int8)
  _, *cols, perm = lax_sort.sort((dropped, *columns, iota), 0, True, 1 + len(columns))
  kept = lax_sort.take_along_axis(keep, perm, 0) if n else keep
  if n:
    differs = None
    for col in cols:
      prev = lax_shapes.slice(col, (0,), (n - 1,))
      cur = lax_shapes.slice(col, (1,), (n,))
      col_differs = lax.ne(cur, prev)
      if equal_nan and dtypes.is_inexact(col.dtype):
        col_differs = lax.bitwise_and(col_differs, lax.bitwise_not(lax.bitwise_and(
            lax.ne(cur, cur), lax.ne(prev, prev))))
      differs = col_differs if differs is None else lax.bitwise_or(differs, col_differs)
    start = lax_shapes.concatenate([as_operand(np.ones((1,), bool)), differs], 0)
    new = lax.bitwise_and(start, kept)
  else:
    new = kept
  count = _count(new)
  size = _static_size(name, count, size)
  idx = _first_true(new, size)
  valid = lax.lt(_iota(size), lax.broadcast_like(count, idx))
  uniq_cols = []
  for col in cols:
    if n:
      uniq = lax_sort.take_along_axis(col, lax.select(valid, idx, lax.broadcast_like(
          as_operand(np.array(0, _index_dtype())), idx)), 0)
    else:
      uniq = (lax.broadcast_like(_c(col, 0), idx) if size
              else lax.convert_element_type(idx, col.dtype))
    if fill_value is not None:
      fill = lax.convert_element_type(as_operand(fill_value), uniq.dtype)
    elif default_fill == "min" and size and n:
      # the smallest value found; 0 if there is none (as JAX's set operations pad)
      smallest = lax_shapes.reshape(lax_shapes.slice(uniq, (0,), (1,)), ())
      fill = lax.select(lax.gt(count, _c(count, 0)), smallest, _c(smallest, 0))
    else:
      fill = _c(uniq, 0)
    uniq_cols.append(lax.select(valid, uniq, lax.broadcast_like(fill, uniq)))
  return tuple(uniq_cols), idx, valid, count, new, perm, n


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           *, equal_nan=True, size=None, fill_value=None, sorted=True):
  """The sorted distinct elements (or slices along ``axis``) of ``ar``, optionally where they are.

  Parameters
  ----------
  ar : array_like
  return_index : bool
    Also return the index of the first occurrence of each unique value.
  return_inverse : bool
    Also return, for each element of ``ar``, the index of its value in the result
    (shaped like ``ar``).
  return_counts : bool
    Also return how often each unique value occurs.
  axis : int, optional
    Find unique slices along this axis (compared lexicographically) instead of unique
    elements of the flattened array; the inverse is then 1-D.
  equal_nan : bool
    Whether NaNs count as one value.
  size : int, optional
    The static length of the result (needed under ``jit``); missing entries are
    ``fill_value`` (default: the smallest unique value), with count 0.
  """
  check_arraylike("unique", ar)
  a = as_operand(ar)
  if a.size == 0 and size and fill_value is None:
    raise ValueError("jnp.unique: for zero-sized input with nonzero size argument, fill_value "
                     "must be specified")
  if axis is None:
    columns, inverse_shape = (_flat(a),), a.shape
  else:
    # Unique slices along ``axis``: each slice is a row of keys compared lexicographically.
    axis = canonicalize_axis(axis, a.ndim)
    moved = lax_numpy.moveaxis(a, axis, 0)
    slice_shape = moved.shape[1:]
    width = int(np.prod(slice_shape))
    rows = lax_shapes.reshape(moved, (moved.shape[0], width))
    columns = tuple(lax_shapes.reshape(lax_shapes.slice(rows, (0, j), (rows.shape[0], j + 1)),
                                       (rows.shape[0],)) for j in range(width))
    columns = columns or (lax_shapes.broadcast_in_dim(as_operand(np.array(0, _index_dtype())),
                                                       (rows.shape[0],), ()),)
    inverse_shape = (moved.shape[0],)
  n = columns[0].shape[0]
  uniq_cols, idx, valid, count, new, perm, _ = _unique_sorted(
      columns, lax.broadcast_like(as_operand(np.array(True)), columns[0]), size, fill_value,
      "min", "unique", equal_nan)
  if axis is None:
    uniq = uniq_cols[0]
  elif width:
    uniq = lax_numpy.moveaxis(lax_shapes.reshape(lax_numpy.stack(uniq_cols, axis=1),
                                                 (idx.shape[0], *slice_shape)), 0, axis)
  else:
    uniq = lax_numpy.moveaxis(lax_shapes.broadcast_in_dim(
        _c(a, 0), (idx.shape[0], *slice_shape), ()), 0, axis)
  if not (return_index or return_inverse or return_counts):
    return uniq
  out = [uniq]
  size = idx.shape[0]
  zero_index = as_operand(np.array(0, _index_dtype()))
  if return_index:
    first = lax_sort.take_along_axis(perm, idx, 0) if n else idx
    pad = lax_shapes.slice(first, (0,), (builtins.min(size, 1),))
    pad = lax_shapes.reshape(pad, ()) if size else zero_index
    out.append(lax.select(valid, first, lax.broadcast_like(pad, first)))
  if return_inverse:
    group = lax.sub(lax_sort.cumsum(lax.convert_element_type(new, _index_dtype())), _c(zero_index, 1)) \
        if n else perm
    inverse_perm = lax_sort.sort((perm, _iota(n)), 0, True, 1)[1] if n else perm
    inverse = lax_sort.take_along_axis(group, inverse_perm, 0) if n else perm
    out.append(lax_shapes.reshape(inverse, inverse_shape))
  if return_counts:
    if n:
      nxt = lax_shapes.concatenate([lax_shapes.slice(idx, (1,), (size,)),
                                    as_operand(np.array([n], _index_dtype()))], 0) if size else idx
      last = lax.lt(_iota(size), lax.broadcast_like(lax.sub(count, _c(count, 1)), idx))
      ends = lax.select(last, nxt, lax.broadcast_like(as_operand(np.array(n, _index_dtype())), idx))
      counts = lax.select(valid, lax.sub(ends, idx), lax.broadcast_like(zero_index, idx))
    else:
      counts = idx
    out.append(counts)
  return tuple(out)


# the array API's unique functions: named tuples of what unique returns
_UniqueAllResult = collections.namedtuple(
    "_UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
_UniqueCountsResult = collections.namedtuple("_UniqueCountsResult", ["values", "counts"])
_UniqueInverseResult = collections.namedtuple(
    "_UniqueInverseResult", ["values", "inverse_indices"])


def unique_all(x, /, *, size=None, fill_value=None):
  """Unique values of ``x`` with first indices, inverse indices (shaped like ``x``)
  and counts."""
  (x,) = ensure_arraylike("unique_all", x)
  values, indices, inverse, counts = unique(
      x, return_index=True, return_inverse=True, return_counts=True, equal_nan=False,
      size=size, fill_value=fill_value)
  return _UniqueAllResult(values, indices, lax_numpy.reshape(inverse, x.shape), counts)


def unique_counts(x, /, *, size=None, fill_value=None):
  """Unique values of ``x`` and how often each occurs."""
  (x,) = ensure_arraylike("unique_counts", x)
  values, counts = unique(x, return_counts=True, equal_nan=False, size=size,
                          fill_value=fill_value)
  return _UniqueCountsResult(values, counts)


def unique_inverse(x, /, *, size=None, fill_value=None):
  """Unique values of ``x`` and the indices (shaped like ``x``) that rebuild ``x``."""
  (x,) = ensure_arraylike("unique_inverse", x)
  values, inverse = unique(x, return_inverse=True, equal_nan=False, size=size,
                           fill_value=fill_value)
  return _UniqueInverseResult(values, lax_numpy.reshape(inverse, x.shape))


def unique_values(x, /, *, size=None, fill_value=None):
  """The sorted unique values of ``x``."""
  (x,) = ensure_arraylike("unique_values", x)
  return unique(x, equal_nan=False, size=size, fill_value=fill_value)


def _set_op(name, values, keep, size, fill_value, default_fill):
  return _unique_sorted((values,), keep, size, fill_value, default_fill, name)[0][0]


def _flat_pair(name, ar1, ar2):
  check_arraylike(name, ar1, ar2)
  a, b = promote_dtypes(ar1, ar2)
  return _flat(a), _flat(b)


def union1d(ar1, ar2, *, size=None, fill_value=None):
  """The sorted distinct values found in either array."""
  a, b = _flat_pair("union1d", ar1, ar2)
  both = lax_shapes.concatenate([a, b], 0)
  return _set_op("union1d", both, lax.broadcast_like(as_operand(np.array(True)), both), size,
                 fill_value, "min")


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
  """The sorted distinct values found in both arrays (``numpy.intersect1d``).

  With ``return_indices``, also the index of each value's first occurrence in the
  flattened ``ar1`` and ``ar2``; entries past the intersection (with ``size``) are the
  sizes of ``ar1`` and ``ar2``.
  """
  a, b = _flat_pair("intersect1d", ar1, ar2)
  if not return_indices:
    return _set_op("intersect1d", a, _isin_mask(a, b), size, fill_value, "min")
  # each array's values that occur in the other: the same sorted set, so the groups match
  out = []
  for x, other in ((a, b), (b, a)):
    vals, idx, valid, _, _, perm, n = _unique_sorted((x,), _isin_mask(x, other), size,
                                                      fill_value, "min", "intersect1d")
    first = lax_sort.take_along_axis(perm, idx, 0) if n else idx
    out.append((vals[0], lax.select(valid, first, lax.broadcast_like(_c(first, n), first))))
  (vals, first_a), (_, first_b) = out
  return vals, first_a, first_b


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
  """The sorted distinct values of ``ar1`` that are not in ``ar2`` (padding: 0)."""
  a, b = _flat_pair("setdiff1d", ar1, ar2)
  return _set_op("setdiff1d", a, lax.bitwise_not(_isin_mask(a, b)), size, fill_value, "zero")


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
  """The sorted distinct values found in exactly one of the arrays."""
  a, b = _flat_pair("setxor1d", ar1, ar2)
  both = lax_shapes.concatenate([a, b], 0)
  in_both = lax.bitwise_and(_isin_mask(both, a), _isin_mask(both, b))
  return _set_op("setxor1d", both, lax.bitwise_not(in_both), size, fill_value, "min")


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
  """The slices of ``a`` along ``axis`` where 1-D ``condition`` is true (``a`` flattened
  when ``axis`` is None); ``size`` pads with ``fill_value`` or truncates.

  As in JAX, ``a`` is cut to the length of ``condition``; without ``size``, a true entry of
  ``condition`` past the end of ``a`` is an error (and so needs a concrete condition).
  """
  if out is not None:
    raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
  check_arraylike("compress", condition, a, fill_value)
  condition = _to_bool(as_operand(condition))
  if condition.ndim != 1:
    raise ValueError("condition must be a 1D array")
  a, axis = _prepare_axis("compress", a, axis)
  moved = lax_numpy.moveaxis(a, axis, 0)
  n = builtins.min(moved.shape[0], condition.shape[0])
  extra = lax_shapes.slice(condition, (n,), condition.shape)
  condition = lax_shapes.slice(condition, (0,), (n,))
  moved = lax_shapes.slice_in_dim(moved, 0, n, axis=0)
  if size is None:
    if lax_red.reduce_or(extra, (0,)):
      raise ValueError("condition contains entries that are out of bounds")
  elif not 0 <= size <= n:
    raise ValueError("size must be positive and not greater than the size of the array axis;"
                     f" got {size=} for a.shape[axis]={n}")
  count = _count(condition)
  size = _static_size("compress", count, size)
  fill = lax.convert_element_type(as_operand(fill_value), a.dtype)
  if n == 0:
    shape = (size,) + moved.shape[1:]
    taken = lax.broadcast_like(fill, lax_shapes.broadcast_to_shape(_c(moved, 0), shape))
    return lax_numpy.moveaxis(taken, 0, axis)
  idx = _first_true(condition, size)
  valid = lax.lt(_iota(size), lax.broadcast_like(count, idx))
  taken = take(moved, idx, axis=0, mode="clip")
  mask = lax_shapes.broadcast_in_dim(valid, taken.shape, (0,))
  return lax_numpy.moveaxis(lax.select(mask, taken, lax.broadcast_like(fill, taken)), 0, axis)


def extract(condition, arr, *, size=None, fill_value=0):
  """The elements of ``arr`` where ``condition`` is true, flattened (``numpy.extract``)."""
  check_arraylike("extract", condition, arr)
  return compress(_flat(as_operand(condition)), _flat(as_operand(arr)), size=size,
                  fill_value=fill_value)


def select(condlist, choicelist, default=0):
  """Pick, elementwise, from the first choice whose condition holds (nonzero), else
  ``default``; conditions, choices and default broadcast together."""
  if len(condlist) != len(choicelist):
    raise ValueError(f"condlist must have length equal to choicelist ({len(condlist)} vs "
                     f"{len(choicelist)})")
  if not condlist:
    raise ValueError("condlist must be non-empty")
  check_arraylike("select", *condlist, *choicelist, default)
  choices = promote_dtypes(default, *choicelist)
  conds = [_to_bool(as_operand(c)) for c in condlist]
  result = choices[0]
  for cond, choice in reversed(list(zip(conds, choices[1:]))):
    result = lax_numpy.where(cond, choice, result)
  return result


def piecewise(x, condlist, funclist, *args, **kw):
  """Evaluate ``funclist[i]`` where ``condlist[i]`` holds (the last true condition wins;
  a last extra function or constant covers the rest); every function is evaluated on
  all of ``x``, but, as JAX's vectorized ``switch``, only the elements it is chosen for
  carry its gradient, so NaN in a branch not taken stays out of ``grad``."""
  check_arraylike("piecewise", x)
  x = as_operand(x)
  conds = condlist if isinstance(condlist, (list, tuple)) else (
      [condlist] if as_operand(condlist).ndim == x.ndim else list(condlist))
  conds = [lax_shapes.broadcast_to_shape(_to_bool(as_operand(c)), x.shape) for c in conds]
  if len(funclist) == len(conds) + 1:
    funclist = [funclist[-1]] + list(funclist[:-1])
  elif len(funclist) == len(conds):
    funclist = [0] + list(funclist)
  else:
    raise ValueError(f"with {len(conds)} condition(s), either {len(conds)} or "
                     f"{len(conds) + 1} functions are expected")
  # which function each element takes: the number of its last true condition, 0 if none
  which = lax.broadcast_like(as_operand(np.int32(0)), x)
  for i, cond in enumerate(conds, 1):
    which = lax.select(cond, lax.broadcast_like(_c(which, i), x), which)

  def value(i, f):
    if callable(f):
      chosen = lax.eq(which, _c(which, i))
      out = f(lax.select(chosen, x, stop_gradient(x)), *args, **kw)
    else:
      out = f
    out = lax.convert_element_type(as_operand(out), x.dtype)
    return lax.broadcast_like(out, x) if out.ndim == 0 else out

  return lax.select_n(which, *[value(i, f) for i, f in enumerate(funclist)])

