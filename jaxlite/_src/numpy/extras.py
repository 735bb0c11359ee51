"""The rest of ``jax.numpy``: index tricks, array-API aliases, I/O wrappers, ``ufunc``,
``vectorize``, small dtype aliases and assorted routines, each composed from the other
``jaxlite.numpy`` functions (so from lax primitives) rather than new primitives.

``jaxlite.numpy`` imports this module last, so every other ``jnp`` name exists here.
"""
from __future__ import annotations

import builtins
import collections
import functools
import re

import numpy as np

from jaxlite._src.numpy import namespace as jnp
from jaxlite._src import core
from jaxlite._src import dtypes
from jaxlite._src import errors
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.lax.control_flow import vmap_axis
from jaxlite._src.numpy.util import (as_operand, check_arraylike, canonicalize_axis,
                                     promote_dtypes, promote_dtypes_inexact)

__all__ = [
    "ComplexWarning", "apply_over_axes", "array_equiv", "array_repr", "array_str",
    "bitwise_invert", "c_", "r_", "s_", "index_exp", "mgrid", "ogrid", "can_cast",
    "single", "double", "csingle", "cdouble", "uint", "character", "flexible", "object_",
    "choose", "concat", "diag_indices_from", "tril_indices_from", "triu_indices_from",
    "digitize", "fill_diagonal", "frombuffer", "fromfile", "fromiter",
    "fromfunction", "fromstring", "frompyfunc", "ufunc", "get_printoptions",
    "set_printoptions", "printoptions", "gradient", "histogram2d", "histogramdd", "isdtype",
    "iterable", "ix_", "load", "save", "savez", "mask_indices", "matvec", "vecmat", "vecdot",
    "place", "put", "put_along_axis", "polydiv", "polyfit", "roots", "pow", "rollaxis",
    "trim_zeros", "unique_all", "unique_counts", "unique_inverse", "unique_values",
    "packbits", "unpackbits", "unstack", "unwrap", "vectorize"]

ComplexWarning = np.exceptions.ComplexWarning
single, double, csingle, cdouble, uint = (
    jnp.float32, jnp.float64, jnp.complex64, jnp.complex128, jnp.uint64)
character, flexible, object_ = np.character, np.flexible, np.object_
get_printoptions, set_printoptions, printoptions = (
    np.get_printoptions, np.set_printoptions, np.printoptions)
iterable = np.iterable
s_, index_exp = np.s_, np.index_exp


def _arr(name, *xs):
  check_arraylike(name, *xs)
  return [as_operand(x) for x in xs]


# -- aliases from the array API ---------------------------------------------------------
def bitwise_invert(x, /):
  """Bitwise NOT, elementwise (the array-API name of ``jnp.invert``)."""
  return jnp.invert(x)


def pow(x1, x2, /):  # noqa: A001 (the array-API name shadows the builtin, as in JAX)
  """``x1 ** x2`` elementwise (the array-API name of ``jnp.power``)."""
  return jnp.power(x1, x2)


def concat(arrays, /, *, axis=0):
  """Join arrays along an existing axis (the array-API name of ``jnp.concatenate``)."""
  return jnp.concatenate(arrays, axis=axis)


def unstack(x, /, *, axis=0):
  """Split ``x`` along ``axis`` into a tuple of arrays with that axis removed."""
  (x,) = _arr("unstack", x)
  if x.ndim == 0:
    raise ValueError("Unstack requires arrays with rank > 0, however a scalar array was "
                     "passed.")
  axis = canonicalize_axis(axis, x.ndim)
  return tuple(jnp.take(x, i, axis=axis) for i in range(x.shape[axis]))


def rollaxis(a, axis, start=0):
  """Move ``axis`` so that it sits before position ``start`` (prefer ``jnp.moveaxis``)."""
  (a,) = _arr("rollaxis", a)
  n = a.ndim
  axis = canonicalize_axis(axis, n)
  if not -n <= start <= n:
    raise ValueError(f"start={start} must satisfy {-n}<=start<={n}")
  start = start + n if start < 0 else start
  if start > axis:
    start -= 1
  return jnp.moveaxis(a, axis, start)


def matvec(x1, x2, /):
  """Batched matrix-vector product: ``x1[..., i, j] * x2[..., j]`` summed over ``j``."""
  x1, x2 = _arr("matvec", x1, x2)
  return jnp.matmul(x1, x2[..., None])[..., 0]


def vecmat(x1, x2, /):
  """Batched vector-matrix product: ``conj(x1[..., i]) * x2[..., i, j]`` summed over ``i``."""
  x1, x2 = _arr("vecmat", x1, x2)
  return jnp.matmul(jnp.conj(x1)[..., None, :], x2)[..., 0, :]


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
  """Batched vector dot product over ``axis``, conjugating ``x1`` (array-API ``vecdot``)."""
  x1, x2 = _arr("vecdot", x1, x2)
  if x1.shape[axis] != x2.shape[axis]:
    raise ValueError("axes must match; got shapes "
                     f"{x1.shape} and {x2.shape} with axis={axis}")
  x1, x2 = jnp.broadcast_arrays(x1, x2)
  x1, x2 = jnp.moveaxis(x1, axis, -1), jnp.moveaxis(x2, axis, -1)
  out = jnp.matmul(jnp.conj(x1)[..., None, :], x2[..., :, None], precision=precision,
                   preferred_element_type=preferred_element_type)
  return out[..., 0, 0]


# -- comparisons, printing, dtypes ------------------------------------------------------
def array_equiv(a1, a2):
  """True when ``a1`` and ``a2`` broadcast to one shape and are equal everywhere."""
  a1, a2 = _arr("array_equiv", a1, a2)
  try:
    jnp.broadcast_shapes(a1.shape, a2.shape)
  except ValueError:
    return jnp.array(False)
  return jnp.all(jnp.equal(a1, a2))


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
  """The ``repr`` of an array, as ``numpy.array_repr`` writes it (prefixed ``Array``)."""
  text = np.array_repr(np.asarray(arr), max_line_width, precision, suppress_small)
  return "Array" + text[len("array"):] if text.startswith("array") else text


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
  """The ``str`` of an array, as ``numpy.array_str`` writes it."""
  return np.array_str(np.asarray(a), max_line_width, precision, suppress_small)


def can_cast(from_, to, casting="safe"):
  """Whether NumPy's casting rules allow ``from_`` to become ``to`` (``numpy.can_cast``)."""
  if not isinstance(from_, (np.dtype, type, str)):
    from_ = dtypes.dtype(from_)
  return np.can_cast(dtypes.np_dtype(getattr(from_, "dtype", from_)),
                     dtypes.np_dtype(getattr(to, "dtype", to)), casting)


_ISDTYPE_KINDS = {
    "bool": lambda d: d == np.dtype(bool),
    "signed integer": lambda d: dtypes.issubdtype(d, np.signedinteger),
    "unsigned integer": lambda d: dtypes.issubdtype(d, np.unsignedinteger),
    "integral": lambda d: dtypes.issubdtype(d, np.integer),
    "real floating": lambda d: dtypes.issubdtype(d, np.floating),
    "complex floating": lambda d: dtypes.issubdtype(d, np.complexfloating),
    "numeric": lambda d: dtypes.issubdtype(d, np.number) and d != np.dtype(bool),
}


def isdtype(dtype, kind):
  """Whether ``dtype`` is of ``kind``: a dtype, one of the array-API kind names
  (``'bool'``, ``'signed integer'``, ``'unsigned integer'``, ``'integral'``,
  ``'real floating'``, ``'complex floating'``, ``'numeric'``) or a tuple of them."""
  d = dtypes.np_dtype(getattr(dtype, "dtype", dtype))
  kinds = kind if isinstance(kind, tuple) else (kind,)
  for k in kinds:
    if isinstance(k, str):
      if k not in _ISDTYPE_KINDS:
        raise ValueError(f"Unrecognized {k=!r}")
      if _ISDTYPE_KINDS[k](d):
        return True
    elif d == dtypes.np_dtype(getattr(k, "dtype", k)):
      return True
  return False


# -- index tricks -----------------------------------------------------------------------
def ix_(*args):
  """Open meshes from 1-D index arrays: ``a[ix_(rows, cols)]`` selects a cross product."""
  out = []
  for i, a in enumerate(args):
    (a,) = _arr("ix_", a)
    if a.ndim != 1:
      raise ValueError(f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape "
                       f"{a.shape}")
    if a.dtype == np.bool_:
      raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
    shape = [1] * len(args)
    shape[i] = a.shape[0]
    out.append(jnp.reshape(a, shape))
  return tuple(out)


def diag_indices_from(arr):
  """Indices of the main diagonal of a square n-dimensional array."""
  (arr,) = _arr("diag_indices_from", arr)
  if arr.ndim < 2 or len(set(arr.shape)) != 1:
    raise ValueError("Input must be at least 2-d and all dimensions must be of equal "
                     f"length, got shape {arr.shape}")
  return jnp.diag_indices(arr.shape[0], arr.ndim)


def _shape2d(name, arr):
  shape = arr.shape if hasattr(arr, "shape") else np.shape(arr)
  if len(shape) != 2:
    raise ValueError(f"jnp.{name}: input array must be 2-D, got shape {tuple(shape)}")
  return shape


def tril_indices_from(arr, k=0):
  """Indices of the lower triangle of a 2-D array (``numpy.tril_indices_from``)."""
  n, m = _shape2d("tril_indices_from", arr)
  return jnp.tril_indices(n, k=k, m=m)


def triu_indices_from(arr, k=0):
  """Indices of the upper triangle of a 2-D array (``numpy.triu_indices_from``)."""
  n, m = _shape2d("triu_indices_from", arr)
  return jnp.triu_indices(n, k=k, m=m)


def mask_indices(n, mask_func, k=0, *, size=None):
  """Indices where ``mask_func(ones((n, n)), k)`` is nonzero (e.g. ``jnp.triu``)."""
  return jnp.nonzero(mask_func(jnp.ones((n, n)), k), size=size)


def _grid_slices(key, sparse):
  key = key if isinstance(key, tuple) else (key,)
  axes = []
  for s in key:
    if not isinstance(s, slice):
      raise IndexError(f"mgrid/ogrid take slices, got {s!r}")
    step = s.step if s.step is not None else 1
    if isinstance(step, complex):
      axes.append(jnp.linspace(s.start or 0, s.stop, int(abs(step))))
    else:
      axes.append(jnp.arange(s.start or 0, s.stop, step))
  if len(key) == 1 and not isinstance(key, tuple):
    return axes[0]
  grids = jnp.meshgrid(*axes, indexing="ij", sparse=sparse)
  return list(grids) if sparse else jnp.stack(grids, 0)


class _Mgrid:
  """``mgrid[0:3, 0:2]``: a dense grid of coordinates, stacked along axis 0."""

  def __getitem__(self, key):
    if isinstance(key, slice):
      return _grid_slices((key,), False)[0]
    return _grid_slices(key, False)


class _Ogrid:
  """``ogrid[0:3, 0:2]``: an open (broadcastable) grid of coordinates, one per axis."""

  def __getitem__(self, key):
    if isinstance(key, slice):
      return _grid_slices((key,), True)[0]
    return _grid_slices(key, True)


mgrid, ogrid = _Mgrid(), _Ogrid()


class _AxisConcat:
  """``r_`` and ``c_``: concatenate slices, scalars and arrays along an axis."""

  def __init__(self, axis, ndmin, trans1d):
    self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

  def __getitem__(self, key):
    key = key if isinstance(key, tuple) else (key,)
    axis, ndmin, trans1d, matrix = self.axis, self.ndmin, self.trans1d, None
    items = []
    for i, item in enumerate(key):
      if isinstance(item, str):
        if i != 0:
          raise ValueError("string directive must be placed at the beginning")
        if item in ("r", "c"):
          matrix = item
          continue
        parts = [int(p) for p in item.split(",")]
        axis = parts[0]
        ndmin = parts[1] if len(parts) > 1 else ndmin
        trans1d = parts[2] if len(parts) > 2 else trans1d
        continue
      if isinstance(item, slice):
        arr = _grid_slices((item,), False)[0]
      else:
        arr = jnp.asarray(item)
      if arr.ndim < ndmin:
        # NumPy's rule: new axes go first, then the array's own axes start at trans1d.
        shape = (1,) * (ndmin - arr.ndim) + arr.shape
        arr = jnp.reshape(arr, shape)
        if trans1d != -1 and item is not None and np.ndim(item) < ndmin:
          k = np.ndim(item) if not isinstance(item, slice) else 1
          order = list(range(ndmin - k, ndmin))
          rest = list(range(ndmin - k))
          t = trans1d % ndmin
          perm = rest[:t] + order + rest[t:]
          arr = jnp.transpose(arr, np.argsort(perm))
      items.append(arr)
    out = jnp.concatenate([jnp.atleast_1d(a) for a in items], axis=axis)
    if matrix is not None:
      out = jnp.atleast_2d(out)
      out = out.T if matrix == "c" else out
    return out

  def __len__(self):
    return 0


r_ = _AxisConcat(0, 1, -1)
c_ = _AxisConcat(-1, 2, 0)


# -- creation and I/O -------------------------------------------------------------------
def frombuffer(buffer, dtype=float, count=-1, offset=0):
  """An array from the bytes of ``buffer`` (``numpy.frombuffer``, copied)."""
  return jnp.asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string, dtype=float, count=-1, *, sep):
  """An array from a text string of separated numbers (``numpy.fromstring``)."""
  return jnp.asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def _impure(name, what):
  def fun(*args, **kwargs):
    raise NotImplementedError(
        f"jnp.{name}() is not implemented because it may be non-pure and thus unsafe for "
        f"use with JIT and other JAX transformations. Consider using "
        f"jnp.asarray(np.{name}(...)) instead, although care should be taken if "
        f"np.{name} is used within a jax transformations because of its potential "
        f"side-effect of consuming the {what} object.")
  fun.__name__ = name
  fun.__doc__ = f"Not implemented, as in JAX: ``np.{name}`` consumes a {what}."
  return fun


fromfile = _impure("fromfile", "file")
fromiter = _impure("fromiter", "iterable")


def fromfunction(function, shape, *, dtype=float, **kwargs):
  """``function(*indices)`` where ``indices`` are the coordinate grids of ``shape``."""
  shape = (shape,) if isinstance(shape, int) else tuple(shape)
  grids = [jnp.reshape(jnp.arange(n, dtype=dtype), [n if j == i else 1
                                                    for j in range(len(shape))])
           for i, n in enumerate(shape)]
  return function(*[jnp.broadcast_to(g, shape) for g in grids], **kwargs)


def load(file, *args, **kwargs):
  """``numpy.load``, returning an Array when the file holds one array."""
  out = np.load(file, *args, **kwargs)
  if isinstance(out, np.ndarray) and out.dtype != object:
    return jnp.asarray(out)
  return out


def save(file, arr, allow_pickle=True):
  """``numpy.save`` of an Array."""
  return np.save(file, np.asarray(arr), allow_pickle=allow_pickle)


def savez(file, *args, allow_pickle=True, **kwds):
  """``numpy.savez`` of Arrays."""
  return np.savez(file, *[np.asarray(a) for a in args], allow_pickle=allow_pickle,
                  **{k: np.asarray(v) for k, v in kwds.items()})


# -- routines ---------------------------------------------------------------------------
def apply_over_axes(func, a, axes):
  """Apply ``func(a, axis)`` over each axis in turn, keeping each result's rank."""
  (a,) = _arr("apply_over_axes", a)
  for axis in axes:
    b = func(a, axis)
    if b.ndim == a.ndim - 1:
      b = jnp.expand_dims(b, axis)
    elif b.ndim != a.ndim:
      raise ValueError("function is not returning an array of the correct shape")
    a = b
  return a


def choose(a, choices, out=None, mode="raise"):
  """Pick ``choices[a[i]][i]`` elementwise. ``mode='raise'`` cannot raise on traced
  indices, so (as in JAX) it behaves like ``'clip'`` under ``jit``, ``'wrap'`` and
  ``'clip'`` are as in NumPy."""
  if out is not None:
    raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
  (a,) = _arr("choose", a)
  choices = [as_operand(c) for c in choices]
  n = len(choices)
  if mode == "raise":
    if not isinstance(a, core.Tracer) and (np.any(np.asarray(a) < 0)
                                           or np.any(np.asarray(a) >= n)):
      raise ValueError("invalid entry in choice array")
    a = jnp.clip(a, 0, n - 1)
  elif mode == "wrap":
    a = jnp.mod(a, n)
  elif mode == "clip":
    a = jnp.clip(a, 0, n - 1)
  else:
    raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
  a, *choices = jnp.broadcast_arrays(a, *choices)
  return jnp.take_along_axis(jnp.stack(choices, 0), a[None], axis=0)[0]


def digitize(x, bins, right=False, *, method=None):
  """Index of the bin each ``x`` falls in, for increasing or decreasing ``bins``."""
  x, bins = _arr("digitize", x, bins)
  if bins.ndim != 1:
    raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
  if bins.shape[0] == 0:
    return jnp.zeros(x.shape, dtype=jnp.int32)
  side = "left" if right else "right"
  kw = {} if method is None else {"method": method}
  increasing = jnp.searchsorted(bins, x, side=side, **kw)
  decreasing = bins.shape[0] - jnp.searchsorted(bins[::-1], x, side=side, **kw)
  return jnp.where(bins[-1] >= bins[0], increasing, decreasing).astype(jnp.int32)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
  """``a`` with its main diagonal set to ``val`` (repeated cyclically). Pass
  ``inplace=False``: JAX arrays are immutable."""
  if inplace:
    raise ValueError("JAX arrays are immutable, must use inplace=False")
  a, val = _arr("fill_diagonal", a, val)
  if a.ndim < 2:
    raise ValueError("array must be at least 2-d")
  if a.ndim > 2 and len(set(a.shape)) != 1:
    raise ValueError("All dimensions of input must be of equal length")
  n = min(a.shape)
  if a.ndim == 2 and wrap:
    rows = np.arange(0, a.size, a.shape[1] + 1)
    idx = (rows // a.shape[1], rows % a.shape[1])
    count = len(rows)
  else:
    idx = (np.arange(n),) * a.ndim
    count = n
  vals = jnp.ravel(val)
  vals = jnp.resize(vals, (count,)) if vals.size else vals
  return a.at[idx].set(vals.astype(a.dtype))


def place(arr, mask, vals, *, inplace=True):
  """``arr`` with the positions where ``mask`` is true set to ``vals`` in order (repeated
  as needed); traceable. Pass ``inplace=False``: JAX arrays are immutable."""
  arr, mask, vals = _arr("place", arr, mask, vals)
  vals = jnp.ravel(vals)
  if inplace:
    raise ValueError("jax.numpy.place cannot modify arrays in-place, because JAX arrays "
                     "are immutable. Pass inplace=False to instead return an updated array.")
  if arr.size != mask.size:
    raise ValueError("place: arr and mask must be the same size")
  if not vals.size:
    raise ValueError("Cannot place values from an empty array")
  if not arr.size:
    return arr
  # the true positions first, then out-of-range ones that the update drops
  where = jnp.nonzero(jnp.ravel(mask), size=mask.size, fill_value=mask.size)[0]
  vals = jnp.resize(vals, where.shape)
  return jnp.reshape(jnp.ravel(arr).at[where].set(vals, mode="drop"), arr.shape)


def put(a, ind, v, mode=None, *, inplace=True):
  """``a`` with its flattened positions ``ind`` set to ``v`` (repeated as needed). Pass
  ``inplace=False``: JAX arrays are immutable."""
  if inplace:
    raise ValueError("jax.numpy.put cannot modify arrays in-place, because JAX arrays are "
                     "immutable. Pass inplace=False to instead return an updated array.")
  a, ind, v = _arr("put", a, ind, v)
  ind, v = jnp.ravel(ind), jnp.ravel(v)
  if not ind.size or not v.size:
    return a
  v = jnp.resize(v, ind.shape)
  if mode == "wrap":
    ind = jnp.mod(ind, a.size)
  elif mode == "clip":
    ind = jnp.clip(ind, 0, a.size - 1)
  elif mode not in (None, "fill", "raise"):
    raise ValueError(f"mode should be one of 'wrap' or 'clip'; got {mode=}")
  scatter_mode = "drop" if mode in (None, "fill") else None
  flat = jnp.ravel(a).at[ind].set(v.astype(a.dtype), mode=scatter_mode)
  return jnp.reshape(flat, a.shape)


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
  """``arr`` with ``values`` written at ``indices`` along ``axis`` (the inverse of
  ``take_along_axis``). Pass ``inplace=False``: JAX arrays are immutable."""
  if inplace:
    raise ValueError("jax.numpy.put_along_axis cannot modify arrays in-place, because JAX "
                     "arrays are immutable. Pass inplace=False to instead return an "
                     "updated array.")
  arr, indices, values = _arr("put_along_axis", arr, indices, values)
  if axis is None:
    return jnp.reshape(put(jnp.ravel(arr), indices, values, inplace=False), arr.shape)
  axis = canonicalize_axis(axis, arr.ndim)
  if indices.ndim != arr.ndim:
    raise ValueError("indices and arr must have the same number of dimensions")
  shape = jnp.broadcast_shapes(
      tuple(1 if i == axis else s for i, s in enumerate(arr.shape)),
      tuple(1 if i == axis else s for i, s in enumerate(indices.shape)))
  idx_shape = tuple(indices.shape[i] if i == axis else shape[i] for i in range(arr.ndim))
  indices = jnp.broadcast_to(indices, idx_shape)
  indices = jnp.where(indices < 0, indices + arr.shape[axis], indices)
  grid = list(jnp.indices(idx_shape, sparse=True))
  grid[axis] = indices
  return arr.at[tuple(grid)].set(jnp.broadcast_to(values, idx_shape).astype(arr.dtype),
                                 mode=mode)


def gradient(f, *varargs, axis=None, edge_order=None):
  """Central differences inside, one-sided differences at the edges (NumPy's
  ``gradient`` with ``edge_order=1``); ``varargs`` are scalar spacings or coordinates."""
  if edge_order is not None:
    raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not "
                              "supported.")
  (f,) = _arr("gradient", f)
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
    sl = lambda a, b: jnp.take(f, jnp.arange(a, n + b if b <= 0 else b), axis=ax)
    if np.ndim(h) == 0:
      inner = (sl(2, 0) - sl(0, -2)) / (2.0 * h)
      first = (sl(1, 2) - sl(0, 1)) / h
      last = (sl(n - 1, 0) - sl(n - 2, -1)) / h
    else:
      x = jnp.asarray(h)
      dx = jnp.diff(x)
      shape = [1] * f.ndim
      shape[ax] = -1
      d1, d2 = jnp.reshape(dx[:-1], shape), jnp.reshape(dx[1:], shape)
      inner = (-(d2 / (d1 * (d1 + d2))) * sl(0, -2) + ((d2 - d1) / (d1 * d2)) * sl(1, -1)
               + (d1 / (d2 * (d1 + d2))) * sl(2, 0))
      first = (sl(1, 2) - sl(0, 1)) / dx[0]
      last = (sl(n - 1, 0) - sl(n - 2, -1)) / dx[-1]
    out.append(jnp.concatenate([first, inner, last], axis=ax) if n > 2
               else jnp.concatenate([first, last], axis=ax))
  return out[0] if len(axes) == 1 else out


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
  """A D-dimensional histogram of ``sample`` (shape ``(N, D)``): counts and bin edges.

  The counts are integers unless ``weights`` or ``density`` are given (as in JAX).
  """
  if weights is None:
    (sample,) = _arr("histogramdd", sample)
    (sample,) = promote_dtypes_inexact(sample)
  else:
    sample, weights = _arr("histogramdd", sample, weights)
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
    e = jnp.histogram_bin_edges(col, bins[i], None if range is None else range[i], weights)
    ix = jnp.searchsorted(e, col, side="right")
    index.append(jnp.where(col == e[-1], ix - 1, ix))   # the last edge is inclusive
    edges.append(e)
  # outliers below and above get their own bins, dropped at the end
  nbins = tuple(e.shape[0] + 1 for e in edges)
  flat = jnp.ravel_multi_index(tuple(index), nbins, mode="clip")
  counts = jnp.reshape(jnp.bincount(flat, weights, length=int(np.prod(nbins))), nbins)
  counts = counts[(slice(1, -1),) * d]
  if density:
    counts = counts.astype(sample.dtype)
    counts = counts / counts.sum()
    for width in ix_(*[jnp.diff(e) for e in edges]):
      counts = counts / width
  return counts, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
  """A 2-D histogram of the points ``(x[i], y[i])``: counts, x edges, y edges."""
  x, y = _arr("histogram2d", x, y)
  try:
    n = len(bins)
  except TypeError:
    n = 1
  if n not in (1, 2):
    bins = [jnp.asarray(bins)] * 2   # one array of edges for both axes
  counts, (ex, ey) = histogramdd(jnp.transpose(jnp.asarray([x, y])), bins, range, weights,
                                 density)
  return counts, ex, ey


def polydiv(u, v, *, trim_leading_zeros=False):
  """Quotient and remainder of polynomial division ``u / v`` (highest power first)."""
  u, v = _arr("polydiv", u, v)
  dtype = jnp.result_type(u, v, 1.0)
  u, v = u.astype(dtype), v.astype(dtype)
  m, n = u.shape[0] - 1, v.shape[0] - 1
  scale = 1.0 / v[0]
  q = jnp.zeros((max(m - n + 1, 1),), dtype)
  r = u
  for k in builtins.range(0, m - n + 1):
    d = scale * r[k]
    q = q.at[k].set(d)
    r = r.at[k:k + n + 1].add(-d * v)
  if trim_leading_zeros:
    r = trim_zeros(r, trim="f")
  return q, r


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
  """Least-squares polynomial fit of degree ``deg`` (coefficients highest power first)."""
  x, y = _arr("polyfit", x, y)
  deg = core.concrete_or_error(int, deg, "deg must be int")
  if deg < 0:
    raise ValueError("expected deg >= 0")
  dtype = jnp.result_type(x, y, 1.0)
  x, y = x.astype(dtype), y.astype(dtype)
  order = deg + 1
  rcond = x.shape[0] * float(np.finfo(dtype).eps) if rcond is None else rcond
  lhs = jnp.vander(x, order)
  rhs = y
  if w is not None:
    w = jnp.asarray(w, dtype)
    lhs = lhs * w[:, None]
    rhs = rhs * (w if rhs.ndim == 1 else w[:, None])
  scale = jnp.sqrt(jnp.sum(lhs * lhs, axis=0))
  lhs = lhs / scale
  c, resids, rank, s = jnp.linalg.lstsq(lhs, rhs, rcond)
  c = (c.T / scale).T
  if full:
    return c, resids, rank, s, rcond
  if cov:
    vbase = jnp.linalg.inv(jnp.dot(lhs.T, lhs)) / jnp.outer(scale, scale)
    fac = 1.0 if cov == "unscaled" else resids / (x.shape[0] - order)
    return c, (vbase * fac if c.ndim == 1 else vbase[:, :, None] * fac)
  return c


def roots(p, *, strip_zeros=True):
  """Roots of the polynomial with coefficients ``p`` (highest power first), as the
  eigenvalues of its companion matrix; always complex. ``strip_zeros`` needs a concrete
  ``p``; under ``jit`` pass ``strip_zeros=False`` (leading zeros then give NaN roots)."""
  (p,) = _arr("roots", p)
  if p.ndim != 1:
    raise ValueError("Input must be a rank-1 array.")
  if strip_zeros:
    p = trim_zeros(p, trim="f")
  if p.shape[0] < 2:
    return jnp.zeros((0,), jnp.result_type(p, 1.0, 1j))
  n_trailing = 0
  if strip_zeros:
    pn = np.asarray(p)
    n_trailing = len(pn) - len(np.trim_zeros(pn, "b"))
    p = p[:len(pn) - n_trailing]
  dtype = jnp.result_type(p, 1.0)
  p = p.astype(dtype)
  n = p.shape[0] - 1
  if n == 0:
    out = jnp.zeros((0,), dtype)
  else:
    comp = jnp.zeros((n, n), dtype)
    comp = comp.at[0, :].set(-p[1:] / p[0])
    if n > 1:
      comp = comp.at[np.arange(1, n), np.arange(n - 1)].set(1)
    out = jnp.linalg.eigvals(comp)
  if n_trailing:
    out = jnp.concatenate([out, jnp.zeros((n_trailing,), out.dtype)])
  return out


def trim_zeros(filt, trim="fb", axis=None):
  """``filt`` without its leading (``'f'``) and/or trailing (``'b'``) zeros. The output
  shape depends on the values, so ``filt`` must be concrete (not usable under ``jit``)."""
  (filt,) = _arr("trim_zeros", filt)
  if isinstance(filt, core.Tracer):
    raise errors.ConcretizationTypeError(
        filt, "jnp.trim_zeros: the output shape depends on the values of filt.\n")
  arr = np.asarray(filt)
  if arr.ndim == 0:
    raise TypeError("Cannot trim zeros of a 0-dimensional array.")
  if arr.ndim == 1 and axis is None:
    nz = np.flatnonzero(arr)
    if nz.size == 0:
      return filt[:0]
    start = nz[0] if "f" in trim.lower() else 0
    stop = nz[-1] + 1 if "b" in trim.lower() else arr.shape[0]
    return filt[start:stop]
  out = np.trim_zeros(arr, trim, axis=axis)
  index = tuple(slice(None) for _ in builtins.range(arr.ndim))
  nz = np.argwhere(arr)
  if nz.size == 0:
    return jnp.asarray(out)
  axes = builtins.range(arr.ndim) if axis is None else (
      [axis] if isinstance(axis, int) else axis)
  index = list(index)
  for ax in axes:
    lo = nz[:, ax].min() if "f" in trim.lower() else 0
    hi = nz[:, ax].max() + 1 if "b" in trim.lower() else arr.shape[ax]
    index[ax] = slice(int(lo), int(hi))
  return filt[tuple(index)]


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
  """Remove jumps larger than ``discont`` along ``axis`` by adding multiples of
  ``period`` (``numpy.unwrap``); ``p`` and ``period`` are promoted together, as in JAX."""
  (p,) = _arr("unwrap", p)
  p, period = promote_dtypes(p, period)
  if dtypes.is_complex(p.dtype):
    raise ValueError("jnp.unwrap does not support complex inputs.")
  if p.shape[axis] == 0:
    return p
  discont = period / 2 if discont is None else discont
  interval = period // 2 if dtypes.is_integer(p.dtype) else period / 2
  dd = jnp.diff(p, axis=axis)
  ddmod = jnp.mod(dd + interval, period) - interval
  ddmod = jnp.where((ddmod == -interval) & (dd > 0), interval, ddmod)
  ph_correct = jnp.where(jnp.abs(dd) < discont, 0, ddmod - dd)
  n = p.shape[axis]
  first = lax_shapes.slice_in_dim(p, 0, 1, axis=axis)
  rest = lax_shapes.slice_in_dim(p, 1, n, axis=axis) + jnp.cumsum(ph_correct, axis=axis)
  return jnp.concatenate([first, rest], axis=axis)


def packbits(a, axis=None, bitorder="big"):
  """Pack the truth values of ``a`` into the bits of uint8 values along ``axis``."""
  (a,) = _arr("packbits", a)
  if not (dtypes.issubdtype(a.dtype, np.integer) or a.dtype == np.dtype(bool)):
    raise TypeError('Expected an input array of integer or boolean data type')
  if bitorder not in ("little", "big"):
    raise ValueError("'order' must be either 'little' or 'big'")
  a = (a > 0).astype(jnp.uint8)
  if axis is None:
    a, axis = jnp.ravel(a), 0
  axis = canonicalize_axis(axis, a.ndim)
  a = jnp.moveaxis(a, axis, -1)
  n = a.shape[-1]
  pad = -n % 8
  a = jnp.concatenate([a, jnp.zeros(a.shape[:-1] + (pad,), jnp.uint8)], axis=-1)
  a = jnp.reshape(a, a.shape[:-1] + (a.shape[-1] // 8, 8))
  shifts = np.arange(8, dtype=np.uint8)
  shifts = shifts[::-1] if bitorder == "big" else shifts
  packed = jnp.sum(jnp.left_shift(a, jnp.asarray(shifts)), axis=-1, dtype=jnp.uint8)
  return jnp.moveaxis(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder="big"):
  """Unpack the bits of uint8 values into an array of 0/1 uint8 values along ``axis``."""
  (a,) = _arr("unpackbits", a)
  if a.dtype != np.dtype(np.uint8):
    raise TypeError("Expected an input array of unsigned byte data type")
  if bitorder not in ("little", "big"):
    raise ValueError("'order' must be either 'little' or 'big'")
  shifts = np.arange(8, dtype=np.uint8)
  shifts = shifts[::-1] if bitorder == "big" else shifts
  bits = jnp.bitwise_and(jnp.right_shift(a[..., None], jnp.asarray(shifts)), 1)
  bits = bits.astype(jnp.uint8)
  if axis is None:
    bits, axis = jnp.ravel(bits), 0
  else:
    axis = canonicalize_axis(axis, a.ndim)
    bits = jnp.moveaxis(bits, -1, axis + 1)
    bits = jnp.reshape(bits, a.shape[:axis] + (a.shape[axis] * 8,) + a.shape[axis + 1:])
  if count is not None:
    n = bits.shape[axis]
    if count > n:
      pad = [(0, 0)] * bits.ndim
      pad[axis] = (0, count - n)
      bits = jnp.pad(bits, pad)
    else:
      bits = jnp.take(bits, jnp.arange(count), axis=axis)
  return bits


# -- unique (array API) -----------------------------------------------------------------
_UniqueAllResult = collections.namedtuple(
    "_UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
_UniqueCountsResult = collections.namedtuple("_UniqueCountsResult", ["values", "counts"])
_UniqueInverseResult = collections.namedtuple(
    "_UniqueInverseResult", ["values", "inverse_indices"])


def unique_all(x, /, *, size=None, fill_value=None):
  """Unique values of ``x`` with first indices, inverse indices (shaped like ``x``)
  and counts."""
  (x,) = _arr("unique_all", x)
  values, indices, inverse, counts = jnp.unique(
      x, return_index=True, return_inverse=True, return_counts=True, equal_nan=False,
      size=size, fill_value=fill_value)
  return _UniqueAllResult(values, indices, jnp.reshape(inverse, x.shape), counts)


def unique_counts(x, /, *, size=None, fill_value=None):
  """Unique values of ``x`` and how often each occurs."""
  (x,) = _arr("unique_counts", x)
  values, counts = jnp.unique(x, return_counts=True, equal_nan=False, size=size,
                              fill_value=fill_value)
  return _UniqueCountsResult(values, counts)


def unique_inverse(x, /, *, size=None, fill_value=None):
  """Unique values of ``x`` and the indices (shaped like ``x``) that rebuild ``x``."""
  (x,) = _arr("unique_inverse", x)
  values, inverse = jnp.unique(x, return_inverse=True, equal_nan=False, size=size,
                               fill_value=fill_value)
  return _UniqueInverseResult(values, jnp.reshape(inverse, x.shape))


def unique_values(x, /, *, size=None, fill_value=None):
  """The sorted unique values of ``x``."""
  (x,) = _arr("unique_values", x)
  return jnp.unique(x, equal_nan=False, size=size, fill_value=fill_value)


# -- vectorize and ufunc ----------------------------------------------------------------
_DIMS = r"\w+"
_CORE = rf"(?:{_DIMS}(?:,{_DIMS})*)?"
_ARG = rf"\({_CORE}\)"
_SIGNATURE = re.compile(rf"^{_ARG}(?:,{_ARG})*->{_ARG}(?:,{_ARG})*$")


def _parse_signature(signature):
  if not _SIGNATURE.match(signature.replace(" ", "")):
    raise ValueError(f"not a valid gufunc signature: {signature}")
  ins, outs = signature.replace(" ", "").split("->")
  parse = lambda s: [tuple(re.findall(_DIMS, arg)) for arg in re.findall(r"\((.*?)\)", s)]
  return parse(ins), parse(outs)


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
  """Make ``pyfunc`` broadcast over leading ("loop") dimensions, like
  ``numpy.vectorize``, by ``vmap``-ing it once over the flattened loop dimensions.
  ``signature`` (e.g. ``'(n),(n)->()'``) names the core dimensions each argument keeps."""

  @functools.wraps(pyfunc)
  def wrapped(*args, **kwargs):
    excluded_pos = {e for e in excluded if isinstance(e, int)}
    excluded_kw = {e for e in excluded if isinstance(e, str)}
    fixed_kw = {k: v for k, v in kwargs.items() if k in excluded_kw}
    kwargs = {k: v for k, v in kwargs.items() if k not in excluded_kw}
    names = list(kwargs)
    all_args = list(args) + [kwargs[k] for k in names]
    vec_pos = [i for i in builtins.range(len(all_args)) if i not in excluded_pos]
    operands = [jnp.asarray(all_args[i]) for i in vec_pos]
    if signature is None:
      in_core = [()] * len(operands)
      out_core = None
    else:
      in_core, out_core = _parse_signature(signature)
      if len(in_core) != len(operands):
        raise TypeError(f"wrong number of positional arguments: expected "
                        f"{len(in_core)}, got {len(operands)}")
    sizes = {}
    loop_shapes = []
    for op, dims in zip(operands, in_core):
      if op.ndim < len(dims):
        raise ValueError(f"input with shape {op.shape} does not have enough dimensions "
                         f"for all core dimensions {dims}")
      core_shape = op.shape[op.ndim - len(dims):]
      for d, n in zip(dims, core_shape):
        if sizes.setdefault(d, n) != n:
          raise ValueError(f"inconsistent size for core dimension {d!r}: {n} vs "
                           f"{sizes[d]}")
      loop_shapes.append(op.shape[:op.ndim - len(dims)])
    loop = jnp.broadcast_shapes(*loop_shapes) if loop_shapes else ()
    nloop = int(np.prod(loop))
    flat = [jnp.reshape(jnp.broadcast_to(op, loop + op.shape[op.ndim - len(d):]),
                        (nloop,) + op.shape[op.ndim - len(d):])
            for op, d in zip(operands, in_core)]

    def call(*vals):
      full = list(all_args)
      for i, v in zip(vec_pos, vals):
        full[i] = v
      pos, kw = full[:len(args)], dict(zip(names, full[len(args):]))
      return pyfunc(*pos, **kw, **fixed_kw)

    out = vmap_axis(lambda xs: call(*xs), tuple(flat), nloop) if flat else call()
    reshape = lambda o: jnp.reshape(o, loop + o.shape[1:])
    if isinstance(out, tuple):
      return tuple(reshape(o) for o in out)
    return reshape(out)

  return wrapped


class ufunc:
  """A universal function built from a scalar function: call it elementwise with
  broadcasting, or use ``outer``, ``reduce``, ``accumulate``, ``at`` and ``reduceat``
  (``jax.numpy.ufunc``). ``reduce`` and ``accumulate`` need ``nin == 2, nout == 1``."""

  def __init__(self, func, /, nin, nout, *, name=None, nargs=None, identity=None,
               call=None, reduce=None, accumulate=None, at=None, reduceat=None):
    self.__name__ = name or getattr(func, "__name__", "<unnamed>")
    self._func, self.nin, self.nout = func, int(nin), int(nout)
    self.nargs = nargs or self.nin
    self.identity = identity
    self._call, self._reduce, self._accumulate = call, reduce, accumulate
    self._at, self._reduceat = at, reduceat

  def __repr__(self):
    return f"<jnp.ufunc '{self.__name__}'>"

  def __call__(self, *args, out=None, where=None):
    if out is not None:
      raise NotImplementedError(f"out argument of {self}")
    if where is not None:
      raise NotImplementedError(f"where argument of {self}")
    if self._call is not None:
      return self._call(*args)
    return vectorize(self._func)(*args)

  def outer(self, A, B, /):
    """``self(a, b)`` for every pair of elements of ``A`` and ``B``."""
    if self.nin != 2:
      raise ValueError("outer only supported for binary ufuncs")
    A, B = jnp.asarray(A), jnp.asarray(B)
    return self(A.reshape(A.shape + (1,) * B.ndim), B)

  def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None,
             where=None):
    """Fold ``self`` over ``axis`` from the left."""
    if self.nin != 2 or self.nout != 1:
      raise ValueError("reduce only supported for binary ufuncs with a single output")
    if out is not None or where is not None:
      raise NotImplementedError(f"out and where arguments of {self}.reduce")
    if self._reduce is not None:
      return self._reduce(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial)
    a = jnp.asarray(a, dtype=dtype)
    if axis is None:
      a, axis = jnp.ravel(a), 0
    axis = canonicalize_axis(axis, a.ndim)
    items = unstack(a, axis=axis)
    if initial is None and not items:
      if self.identity is None:
        raise ValueError(f"zero-size array to reduction operation {self.__name__} which "
                         "has no identity")
      initial = self.identity
    acc = None if initial is None else jnp.full(a.shape[:axis] + a.shape[axis + 1:],
                                                initial, a.dtype)
    for item in items:
      acc = item if acc is None else self(acc, item)
    return jnp.expand_dims(acc, axis) if keepdims else acc

  def accumulate(self, a, axis=0, dtype=None, out=None):
    """Running fold of ``self`` along ``axis``."""
    if self.nin != 2 or self.nout != 1:
      raise ValueError("accumulate only supported for binary ufuncs with a single output")
    if out is not None:
      raise NotImplementedError(f"out argument of {self}.accumulate")
    if self._accumulate is not None:
      return self._accumulate(a, axis=axis, dtype=dtype)
    a = jnp.asarray(a, dtype=dtype)
    axis = canonicalize_axis(axis, a.ndim)
    items = unstack(a, axis=axis)
    if not items:
      return a
    # the running values have the ufunc's result type (bool for logical_and of ints)
    out_dtype = jnp.result_type(self(items[0], items[0]))
    outs = [items[0].astype(out_dtype)]
    for item in items[1:]:
      outs.append(self(outs[-1], item).astype(out_dtype))
    return jnp.stack(outs, axis=axis)

  def at(self, a, indices, b=None, /, *, inplace=True):
    """``a`` with ``a[indices] = self(a[indices], b)`` applied, repeated indices in
    turn. Pass ``inplace=False``: JAX arrays are immutable."""
    if inplace:
      raise NotImplementedError("jnp.ufunc.at: JAX arrays are immutable; pass "
                                "inplace=False.")
    if self._at is not None:
      return self._at(a, indices, b)
    a = jnp.asarray(a)
    idx = np.asarray(indices).reshape(-1)
    bs = None if b is None else jnp.broadcast_to(jnp.asarray(b), idx.shape)
    for k, i in enumerate(idx):
      args = (a[i],) if bs is None else (a[i], bs[k])
      a = a.at[i].set(jnp.asarray(self(*args)).astype(a.dtype))
    return a

  def reduceat(self, a, indices, axis=0, dtype=None, out=None):
    """``reduce`` over each slice ``a[indices[i]:indices[i+1]]`` along ``axis``."""
    if out is not None:
      raise NotImplementedError(f"out argument of {self}.reduceat")
    if self._reduceat is not None:
      return self._reduceat(a, indices, axis=axis, dtype=dtype)
    a = jnp.asarray(a, dtype=dtype)
    axis = canonicalize_axis(axis, a.ndim)
    idx = [int(i) for i in np.asarray(indices).reshape(-1)]
    n = a.shape[axis]
    outs = []
    for k, start in enumerate(idx):
      stop = idx[k + 1] if k + 1 < len(idx) else n
      if stop <= start:
        outs.append(jnp.take(a, start, axis=axis))
      else:
        outs.append(self.reduce(jnp.take(a, jnp.arange(start, stop), axis=axis),
                                axis=axis))
    return jnp.stack(outs, axis=axis)


def frompyfunc(func, /, nin, nout, *, identity=None):
  """A ``jnp.ufunc`` from a scalar Python function of ``nin`` arguments."""
  return ufunc(func, nin, nout, identity=identity)


def _reduce_with(reduction, takes_dtype):
  """``ufunc.reduce`` by a ``jnp`` reduction (``sum`` for ``add``, ...)."""
  def reduce(a, *, axis, dtype, keepdims, initial):
    if takes_dtype:
      return reduction(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial)
    return reduction(jnp.asarray(a, dtype=dtype), axis=axis, keepdims=keepdims,
                     initial=initial)
  return reduce


def _accumulate_with(scan):
  """``ufunc.accumulate`` by a ``jnp`` running reduction (``cumsum`` for ``add``)."""
  return lambda a, *, axis, dtype: scan(a, axis=axis, dtype=dtype)


def _at_with(method):
  """``ufunc.at`` by an ``x.at[...]`` update (``add`` for ``add``)."""
  return lambda a, indices, b: getattr(jnp.asarray(a).at[indices], method)(b)


# JAX's jnp.add, jnp.multiply, ... are ufunc objects, with NumPy's identities; the
# elementwise call stays the plain function's, and reduce/accumulate/at use the matching
# reduction or scatter where there is one.
_UFUNCS = {
    "add": (2, 0, _reduce_with(jnp.sum, True), _accumulate_with(jnp.cumsum), "add"),
    "multiply": (2, 1, _reduce_with(jnp.prod, True), _accumulate_with(jnp.cumprod),
                 "multiply"),
    "maximum": (2, None, _reduce_with(jnp.max, False), None, "max"),
    "minimum": (2, None, _reduce_with(jnp.min, False), None, "min"),
    "subtract": (2, None, None, None, None),
    "bitwise_and": (2, -1, None, None, None), "bitwise_or": (2, 0, None, None, None),
    "bitwise_xor": (2, 0, None, None, None), "logical_and": (2, True, None, None, None),
    "logical_or": (2, False, None, None, None), "logical_xor": (2, False, None, None, None),
    "logaddexp": (2, -np.inf, None, None, None), "logaddexp2": (2, -np.inf, None, None, None),
    "negative": (1, None, None, None, None),
}
for _name, (_nin, _identity, _reduce, _accumulate, _at) in _UFUNCS.items():
  _fn = getattr(jnp, _name)
  globals()[_name] = ufunc(_fn, _nin, 1, name=_name, identity=_identity, call=_fn,
                           reduce=_reduce, accumulate=_accumulate,
                           at=None if _at is None else _at_with(_at))
  __all__.append(_name)
