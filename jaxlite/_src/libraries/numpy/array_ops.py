"""Array construction and rearrangement helpers of ``jaxlite.numpy`` (tile, pad, split...),
and NumPy's in-place writes as functions returning the updated copy (``put``, ``place``).

Everything is composed from lax primitives through the other ``jaxlite.numpy`` modules,
so it traces, differentiates and batches. Sizes must be static, as in JAX: counts,
shifts used as shapes, split points and pad widths are Python values.
"""
from __future__ import annotations

import builtins
import operator

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.core.array import Array
from jaxlite._src.core.core import Tracer
from jaxlite._src.lax import elementwise as lax_ew
from jaxlite._src.lax.control_flow import vmap_axis
from jaxlite._src.lax import reductions as lax_red
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.lax.sharding_constraint import accepts_out_sharding
from jaxlite._src.libraries.numpy import creation
from jaxlite._src.libraries.numpy import lax_numpy as lnp
from jaxlite._src.libraries.numpy import reductions as red
from jaxlite._src.libraries.numpy import sorting
from jaxlite._src.libraries.numpy import ufuncs
from jaxlite._src.libraries.numpy.util import (as_operand, canonicalize_axis, canonicalize_axes,
                                     check_arraylike, ensure_arraylike, promote_dtypes)

__all__ = [
    "tile", "repeat", "roll", "flip", "fliplr", "flipud", "rot90", "tril", "triu", "tri",
    "diag", "diagonal", "diagflat", "trace", "kron", "meshgrid", "indices", "split",
    "array_split", "hsplit", "vsplit", "dsplit", "column_stack", "dstack", "block", "append",
    "insert", "delete", "resize", "pad", "cross", "tensordot", "logspace", "geomspace",
    "copy", "atleast_3d", "vander", "apply_along_axis", "apply_over_axes",
    "tril_indices", "triu_indices", "diag_indices", "tril_indices_from", "triu_indices_from",
    "diag_indices_from", "mask_indices", "fill_diagonal", "place", "put", "put_along_axis",
]


def _static_int(x, what):
  def to_int(value):
    try:
      return operator.index(value)
    except TypeError:
      raise TypeError(f"The {what} must be integers, got {value!r} of type "
                      f"{type(value).__name__}.") from None
  return core.concrete_or_error(to_int, x, f"The {what} must be static.")


def _axes_arg(axis, ndim):
  return canonicalize_axes(axis, ndim) if axis is not None else tuple(range(ndim))


# ----------------------------------------------------------------------------- repetition

def tile(A, reps):
  """Repeat ``A`` ``reps`` times along each axis (``numpy.tile``)."""
  check_arraylike("tile", A)
  A = as_operand(A)
  if not isinstance(reps, (tuple, list)) and np.ndim(reps) == 0:
    reps = (reps,)
  reps = tuple(_static_int(r, "tile reps") for r in reps)
  ndim = builtins.max(len(reps), A.ndim)
  reps = (1,) * (ndim - len(reps)) + reps
  shape = (1,) * (ndim - A.ndim) + A.shape
  A = lax_shapes.reshape(A, shape)
  big = tuple(x for r, s in zip(reps, shape) for x in (r, s))
  out = lax_shapes.broadcast_in_dim(A, big, tuple(range(1, 2 * ndim, 2)))
  return lax_shapes.reshape(out, tuple(r * s for r, s in zip(reps, shape)))


@accepts_out_sharding("repeat")
def repeat(a, repeats, axis=None, *, total_repeat_length=None):
  """Repeat each element of ``a`` along ``axis`` (``numpy.repeat``).

  Parameters
  ----------
  a : array_like
  repeats : int or array_like of int
    How often to repeat each element (broadcast along ``axis``). It must be static unless
    ``total_repeat_length`` is given.
  axis : int, optional
    The axis to repeat along; None (the default) repeats the flattened array.
  total_repeat_length : int, optional
    The static length of the result along ``axis``: a longer result is cut, a shorter one
    is padded as JAX pads it (see the example: the 3 is repeated zero times).

  Examples
  --------
  >>> import jaxlite.numpy as jnp
  >>> jnp.repeat(jnp.array([1, 2, 3]), jnp.array([1, 2, 0]), total_repeat_length=5)
  Array([1, 2, 2, 3, 3], dtype=int32)
  """
  if isinstance(repeats, (int, np.integer)):
    check_arraylike("repeat", a)
  else:
    check_arraylike("repeat", a, repeats)
  a = as_operand(a)
  if axis is None:
    a, axis = lnp.ravel(a), 0
  axis = canonicalize_axis(axis, a.ndim)
  if total_repeat_length is None:
    reps = np.asarray(core.concrete_or_error(
        np.asarray, repeats, "When jit-compiling jnp.repeat, the total number of repeats "
        "must be static: pass static repeats or a static total_repeat_length."))
    if reps.ndim == 0:
      return _repeat_each(a, int(reps), axis)
    idx = np.repeat(np.arange(a.shape[axis]), np.broadcast_to(reps, (a.shape[axis],)))
    return _take_static(a, idx, axis)
  total = _static_int(total_repeat_length, "total_repeat_length")
  if a.shape[axis] == 0:
    return a
  reps = lnp.broadcast_to(lnp.ravel(repeats), (a.shape[axis],))
  return _take_dynamic(a, _repeat_gather_indices(reps, total), axis)


def _repeat_each(a, r, axis):
  """``a`` with each element along ``axis`` repeated ``r`` times (a broadcast, no gather)."""
  shape = a.shape[:axis + 1] + (r,) + a.shape[axis + 1:]
  dims = tuple(i for i in range(a.ndim + 1) if i != axis + 1)
  out = lax_shapes.broadcast_in_dim(a, shape, dims)
  return lax_shapes.reshape(out, a.shape[:axis] + (a.shape[axis] * r,) + a.shape[axis + 1:])


def _repeat_gather_indices(reps, total):
  """The source index of each of ``total`` outputs when element i repeats ``reps[i]`` times.

  JAX's rule (also for traced ``reps``): mark the start of each element's block and number
  the positions by a cumulative sum of the marks. Blocks starting at or past ``total`` are
  dropped; a position past ``sum(reps)`` shows the last element whose block starts at or
  before it (so trailing elements repeated zero times appear there).
  """
  from jaxlite._src.libraries.numpy.statistics import cumsum
  starts = cumsum(lnp.concatenate([creation.zeros(1, reps.dtype), reps[:-1]]))
  marks = creation.zeros(total, np.int32).at[starts].add(1, mode="drop")
  return ufuncs.subtract(cumsum(marks), 1)


def _take_dynamic(a, idx, axis):
  from jaxlite._src.libraries.numpy.indexing import take
  return take(a, idx, axis=axis, mode="clip")


def _take_static(a, idx, axis):
  """``a`` indexed along ``axis`` by static integer indices (slices where possible)."""
  idx = np.asarray(idx, np.int64)
  if idx.size and np.all(np.diff(idx) == 1):
    return lax_shapes.slice_in_dim(a, int(idx[0]), int(idx[-1]) + 1, axis=axis)
  from jaxlite._src.libraries.numpy.indexing import take
  return take(a, Array(idx.astype(np.int32)), axis=axis, mode="clip")


def roll(a, shift, axis=None):
  """Roll elements along ``axis`` (``numpy.roll``); ``shift`` may be traced."""
  check_arraylike("roll", a)
  a = as_operand(a)
  if axis is None:
    return lnp.reshape(roll(lnp.ravel(a), shift, 0), a.shape)
  axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
  shifts = shift if isinstance(shift, (tuple, list)) else (shift,) * len(axes)
  if len(shifts) != len(axes):
    shifts, axes = np.broadcast_arrays(np.asarray(shifts), np.asarray(axes))
  for s, ax in zip(shifts, axes):
    ax = canonicalize_axis(ax, a.ndim)
    n = a.shape[ax]
    if n == 0:
      continue
    if isinstance(s, Tracer):
      # traced shift: a dynamic window of the array written twice
      from jaxlite._src.lax.indexing import dynamic_slice_in_dim
      s = as_operand(s)
      start = ufuncs.remainder(ufuncs.subtract(n, ufuncs.remainder(s, n)), n)
      a = dynamic_slice_in_dim(lnp.concatenate([a, a], ax), start, n, ax)
    else:
      k = int(s) % n
      if k:
        a = lax_shapes.concatenate([lax_shapes.slice_in_dim(a, n - k, n, axis=ax),
                                    lax_shapes.slice_in_dim(a, 0, n - k, axis=ax)], ax)
  return a


def flip(m, axis=None):
  """Reverse the order of elements along ``axis`` (all axes if None)."""
  check_arraylike("flip", m)
  m = as_operand(m)
  return lax_shapes.rev(m, _axes_arg(axis, m.ndim))


def fliplr(m):
  """Reverse along axis 1."""
  m = as_operand(m)
  if m.ndim < 2:
    raise ValueError("Input must be >= 2-d.")
  return flip(m, 1)


def flipud(m):
  """Reverse along axis 0."""
  m = as_operand(m)
  if m.ndim < 1:
    raise ValueError("Input must be >= 1-d.")
  return flip(m, 0)


def rot90(m, k=1, axes=(0, 1)):
  """Rotate by 90 degrees ``k`` times in the plane of ``axes``."""
  check_arraylike("rot90", m)
  m = as_operand(m)
  ax1, ax2 = (canonicalize_axis(a, m.ndim) for a in axes)
  if ax1 == ax2:
    raise ValueError("Axes must be different")
  k = _static_int(k, "rot90 k") % 4
  if k == 0:
    return m
  if k == 2:
    return flip(flip(m, ax1), ax2)
  perm = list(range(m.ndim))
  perm[ax1], perm[ax2] = perm[ax2], perm[ax1]
  if k == 1:
    return lax_shapes.transpose(flip(m, ax2), perm)
  return flip(lax_shapes.transpose(m, perm), ax2)


# ----------------------------------------------------------------------------- triangles, diagonals

def tri(N, M=None, k=0, dtype=None):
  """Ones at and below diagonal ``k`` of an N x M array."""
  M = N if M is None else M
  # float32 by default, also with x64 on (JAX's default here)
  want = dtypes.canonicalize_dtype(dtype) if dtype is not None else np.dtype(np.float32)
  return lax_ew._convert_element_type(_tri_mask(N, M, k), want)


def _tri_mask(N, M, k):
  rows = lax_shapes.broadcasted_iota(np.int32, (N, M), 0)
  cols = lax_shapes.broadcasted_iota(np.int32, (N, M), 1)
  return lax_ew.ge(lax_ew.add(rows, Array(np.int32(k))), cols)


def _masked(m, keep):
  m = as_operand(m)
  if m.ndim < 2:
    raise ValueError("tril/triu require an array of at least 2 dimensions")
  mask = lax_shapes.broadcast_in_dim(keep, m.shape, (m.ndim - 2, m.ndim - 1))
  zero = lax_shapes.broadcast_in_dim(Array(np.zeros((), m.dtype), m.weak_type), m.shape, ())
  return lax_ew.select_n(mask, zero, m)


def tril(m, k=0):
  """The lower triangle of the trailing two axes (zeros above diagonal ``k``)."""
  check_arraylike("tril", m)
  m = as_operand(m)
  if m.ndim < 2:
    raise ValueError("tril requires an array of at least 2 dimensions")
  return _masked(m, _tri_mask(*m.shape[-2:], k))


def triu(m, k=0):
  """The upper triangle of the trailing two axes (zeros below diagonal ``k``)."""
  check_arraylike("triu", m)
  m = as_operand(m)
  if m.ndim < 2:
    raise ValueError("triu requires an array of at least 2 dimensions")
  return _masked(m, lax_ew.not_p.bind(_tri_mask(*m.shape[-2:], k - 1)))


def diagonal(a, offset=0, axis1=0, axis2=1):
  """The diagonal ``offset`` of the plane of ``axis1`` and ``axis2``, as the last axis."""
  check_arraylike("diagonal", a)
  a = as_operand(a)
  ax1, ax2 = canonicalize_axis(axis1, a.ndim), canonicalize_axis(axis2, a.ndim)
  if ax1 == ax2:
    raise ValueError("axis1 and axis2 must not be equal")
  a = lnp.moveaxis(a, (ax1, ax2), (-2, -1))
  offset = _static_int(offset, "diagonal offset")
  n, m = a.shape[-2:]
  if offset >= 0:
    a = lax_shapes.slice_in_dim(a, builtins.min(offset, m), m, axis=a.ndim - 1)
  else:
    a = lax_shapes.slice_in_dim(a, builtins.min(-offset, n), n, axis=a.ndim - 2)
  L = builtins.min(a.shape[-2:])
  batch = a.shape[:-2]
  if L == 0:
    return creation.zeros(batch + (0,), a.dtype)
  a = lax_shapes.slice(a, (0,) * a.ndim, batch + (L, L))
  # the diagonal of an L x L block is every (L + 1)-th element of its flattening
  flat = lax_shapes.reshape(a, batch + (L * L,))
  return lax_shapes.slice_in_dim(flat, 0, L * L, L + 1, axis=len(batch))


def diag(v, k=0):
  """The ``k``-th diagonal of a 2-d ``v``, or a 2-d array with 1-d ``v`` on it."""
  check_arraylike("diag", v)
  v = as_operand(v)
  k = _static_int(k, "diag k")
  if v.ndim == 2:
    return diagonal(v, k)
  if v.ndim != 1:
    raise ValueError("diag input must be 1d or 2d")
  n = v.shape[0] + builtins.abs(k)
  padded = lax_shapes.pad(v, Array(np.zeros((), v.dtype)), [(0, builtins.abs(k), 0)])
  along = (0,) if k >= 0 else (1,)
  full = lax_shapes.broadcast_in_dim(padded, (n, n), along)
  rows = lax_shapes.broadcasted_iota(np.int32, (n, n), 0)
  cols = lax_shapes.broadcasted_iota(np.int32, (n, n), 1)
  on = lax_ew.eq(lax_ew.add(rows, Array(np.int32(k))), cols)
  zero = lax_shapes.broadcast_in_dim(Array(np.zeros((), v.dtype), v.weak_type), (n, n), ())
  return lax_ew.select_n(on, zero, full)


def diagflat(v, k=0):
  """A 2-d array with the flattened ``v`` on diagonal ``k``."""
  return diag(lnp.ravel(v), k)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
  """Sum along a diagonal (``numpy.trace``)."""
  if out is not None:
    raise NotImplementedError("The 'out' argument to jnp.trace is not supported.")
  return red.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def tril_indices(n, k=0, m=None):
  """Row and column indices of the lower triangle (static)."""
  r, c = np.tril_indices(n, k, m)
  return _index_arrays(r, c)


def triu_indices(n, k=0, m=None):
  """Row and column indices of the upper triangle (static)."""
  r, c = np.triu_indices(n, k, m)
  return _index_arrays(r, c)


def diag_indices(n, ndim=2):
  """Indices of the main diagonal of an ``ndim``-d array of side ``n``."""
  return _index_arrays(*[np.arange(n)] * ndim)


def diag_indices_from(arr):
  """Indices of the main diagonal of a square n-dimensional array."""
  (arr,) = ensure_arraylike("diag_indices_from", arr)
  if arr.ndim < 2 or len(set(arr.shape)) != 1:
    raise ValueError("Input must be at least 2-d and all dimensions must be of equal "
                     f"length, got shape {arr.shape}")
  return diag_indices(arr.shape[0], arr.ndim)


def _shape2d(name, arr):
  shape = arr.shape if hasattr(arr, "shape") else np.shape(arr)
  if len(shape) != 2:
    raise ValueError(f"jnp.{name}: input array must be 2-D, got shape {tuple(shape)}")
  return shape


def tril_indices_from(arr, k=0):
  """Indices of the lower triangle of a 2-D array (``numpy.tril_indices_from``)."""
  n, m = _shape2d("tril_indices_from", arr)
  return tril_indices(n, k=k, m=m)


def triu_indices_from(arr, k=0):
  """Indices of the upper triangle of a 2-D array (``numpy.triu_indices_from``)."""
  n, m = _shape2d("triu_indices_from", arr)
  return triu_indices(n, k=k, m=m)


def mask_indices(n, mask_func, k=0, *, size=None):
  """Indices where ``mask_func(ones((n, n)), k)`` is nonzero (e.g. ``jnp.triu``)."""
  return sorting.nonzero(mask_func(creation.ones((n, n)), k), size=size)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
  """``a`` with its main diagonal set to ``val`` (repeated cyclically). Pass
  ``inplace=False``: JAX arrays are immutable."""
  if inplace:
    raise ValueError("JAX arrays are immutable, must use inplace=False")
  a, val = ensure_arraylike("fill_diagonal", a, val)
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
  vals = lnp.ravel(val)
  vals = resize(vals, (count,)) if vals.size else vals
  return a.at[idx].set(vals.astype(a.dtype))


def _index_arrays(*indices):
  """Static index arrays in the default integer type (int64 with x64 on), as JAX."""
  return tuple(Array(i.astype(dtypes.default_int_dtype())) for i in indices)


# ----------------------------------------------------------------------------- products

def kron(a, b):
  """Kronecker product."""
  check_arraylike("kron", a, b)
  a, b = promote_dtypes(a, b)
  nd = builtins.max(a.ndim, b.ndim)
  a = lax_shapes.reshape(a, (1,) * (nd - a.ndim) + a.shape)
  b = lax_shapes.reshape(b, (1,) * (nd - b.ndim) + b.shape)
  shape = tuple(x for p in zip(a.shape, b.shape) for x in p)
  a2 = lax_shapes.broadcast_in_dim(a, shape, tuple(range(0, 2 * nd, 2)))
  b2 = lax_shapes.broadcast_in_dim(b, shape, tuple(range(1, 2 * nd, 2)))
  out = lax_ew.mul(a2, b2)   # lax's product, as JAX: booleans are refused
  return lax_shapes.reshape(out, tuple(x * y for x, y in zip(a.shape, b.shape)))


@accepts_out_sharding("dot_general")   # (JAX's name in its errors)
def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
  """Contract ``axes`` of ``a`` with those of ``b`` (``numpy.tensordot``)."""
  a, b, out_dtype, weak = lnp._dot_operands("tensordot", a, b, preferred_element_type)
  if isinstance(axes, (int, np.integer)):
    n = int(axes)
    if n > builtins.min(a.ndim, b.ndim) or n < 0:
      raise TypeError(f"Number of tensordot axes (axes {n}) exceeds input ranks ({a.shape} "
                      f"and {b.shape})")
    ca, cb = tuple(range(a.ndim - n, a.ndim)), tuple(range(n))
  else:
    if len(axes) != 2:
      raise TypeError("tensordot axes argument must be an int, a pair of ints, or a pair of "
                      f"lists/tuples of ints, got {axes}.")
    ax_a, ax_b = axes
    ax_a = (ax_a,) if isinstance(ax_a, (int, np.integer)) else tuple(ax_a)
    ax_b = (ax_b,) if isinstance(ax_b, (int, np.integer)) else tuple(ax_b)
    if len(ax_a) != len(ax_b):
      raise TypeError("tensordot requires axes lists to have equal length, got "
                      f"{ax_a} and {ax_b}.")
    ca = tuple(canonicalize_axis(i, a.ndim) for i in ax_a)
    cb = tuple(canonicalize_axis(i, b.ndim) for i in ax_b)
  return lnp._dot_result(lax_red.dot_general(a, b, ((ca, cb), ((), ())), precision, out_dtype),
                         weak)


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
  """Cross product of 2- or 3-vectors along the given axes (``numpy.cross``)."""
  check_arraylike("cross", a, b)
  a, b = promote_dtypes(a, b)
  if axis is not None:
    axisa = axisb = axisc = axis
  a = lnp.moveaxis(a, axisa, -1)
  b = lnp.moveaxis(b, axisb, -1)
  if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
    raise ValueError("Dimension must be either 2 or 3 for cross product")
  comp = lambda x, i: lax_shapes.squeeze(lax_shapes.slice_in_dim(x, i, i + 1, axis=x.ndim - 1),
                                         (x.ndim - 1,))
  a0, a1 = comp(a, 0), comp(a, 1)
  b0, b1 = comp(b, 0), comp(b, 1)
  a2 = comp(a, 2) if a.shape[-1] == 3 else None
  b2 = comp(b, 2) if b.shape[-1] == 3 else None
  mul, sub = ufuncs.multiply, ufuncs.subtract
  if a2 is None and b2 is None:
    return sub(mul(a0, b1), mul(a1, b0))
  zero = lambda like: ufuncs.multiply(like, 0)
  a2 = zero(a0) if a2 is None else a2
  b2 = zero(b0) if b2 is None else b2
  c = lnp.stack([sub(mul(a1, b2), mul(a2, b1)), sub(mul(a2, b0), mul(a0, b2)),
                 sub(mul(a0, b1), mul(a1, b0))], -1)
  return lnp.moveaxis(c, -1, axisc)


def vander(x, N=None, increasing=False):
  """Vandermonde matrix: columns are powers of ``x``."""
  check_arraylike("vander", x)
  x = as_operand(x)
  if x.ndim != 1:
    raise ValueError("x must be a one-dimensional array")
  N = x.shape[0] if N is None else _static_int(N, "vander N")
  if N < 0:
    raise ValueError("N must be nonnegative")
  powers = lax_shapes.iota(x.dtype, N)   # in x's dtype, as JAX: int8 stays int8, bool fails
  if not increasing:
    powers = flip(powers)
  return ufuncs.power(lnp.expand_dims(x, 1), lnp.expand_dims(powers, 0))   # ranks equal


# ----------------------------------------------------------------------------- grids

def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
  """Coordinate matrices from coordinate vectors (``numpy.meshgrid``)."""
  check_arraylike("meshgrid", *xi)
  if indexing not in ("xy", "ij"):
    raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
  args = [as_operand(x) for x in xi]
  for x in args:
    if x.ndim != 1:
      raise ValueError(f"Arguments to jax.numpy.meshgrid must be 1D, got shape {x.shape}")
  shape = tuple(x.shape[0] for x in args)
  out = []
  for i, x in enumerate(args):
    if sparse:
      s = [1] * len(args)
      s[i] = x.shape[0]
      out.append(lax_shapes.reshape(x, s))
    else:
      out.append(lax_shapes.broadcast_in_dim(x, shape, (i,)))
  if indexing == "xy" and len(args) >= 2:
    # Cartesian indexing is matrix indexing with the first two axes swapped
    out = [lnp.swapaxes(o, 0, 1) for o in out]
  return out


def indices(dimensions, dtype=None, sparse=False):
  """An array of index grids (``numpy.indices``)."""
  dtype = dtypes.canonicalize_dtype(dtype or dtypes.default_int_dtype())
  dimensions = tuple(_static_int(d, "indices dimensions") for d in dimensions)
  n = len(dimensions)
  grids = []
  for i, d in enumerate(dimensions):
    if sparse:
      s = [1] * n
      s[i] = d
      grids.append(lax_shapes.broadcasted_iota(dtype, s, i))
    else:
      grids.append(lax_shapes.broadcasted_iota(dtype, dimensions, i))
  if sparse:
    return tuple(grids)
  if not grids:
    return creation.zeros((0,), dtype)
  return lnp.stack(grids, 0)


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
  """Numbers spaced evenly on a log scale: ``base ** linspace(start, stop)``."""
  want = dtypes.canonicalize_dtype(dtype) if dtype is not None else None
  lin = creation.linspace(start, stop, num, endpoint=endpoint, axis=axis)
  out = ufuncs.power(base, lin)
  return out if want is None else lax_ew._convert_element_type(out, want)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
  """Numbers spaced evenly on a log scale between ``start`` and ``stop``."""
  start, stop = as_operand(start), as_operand(stop)
  sign = ufuncs.sign(start)
  lo = ufuncs.log10(ufuncs.abs(start))
  hi = ufuncs.log10(ufuncs.abs(stop))
  out = ufuncs.multiply(sign, logspace(lo, hi, num, endpoint=endpoint, axis=axis))
  # the ends are exact, as NumPy makes them
  if num > 0:
    ax = canonicalize_axis(axis, out.ndim)
    pieces = [lnp.expand_dims(lnp.broadcast_to(start, out.shape[:ax] + out.shape[ax + 1:]), ax)]
    middle = lax_shapes.slice_in_dim(out, 1, num - 1 if endpoint else num, axis=ax)
    pieces.append(middle)
    if endpoint and num > 1:
      pieces.append(lnp.expand_dims(lnp.broadcast_to(stop, out.shape[:ax] + out.shape[ax + 1:]),
                                    ax))
    out = lnp.concatenate(pieces, ax)
  want = dtypes.canonicalize_dtype(dtype) if dtype is not None else None
  return out if want is None else lax_ew._convert_element_type(out, want)


# ----------------------------------------------------------------------------- splitting, joining

def _split(name, ary, indices_or_sections, axis, strict):
  check_arraylike(name, ary)
  ary = as_operand(ary)
  axis = canonicalize_axis(axis, ary.ndim)
  n = ary.shape[axis]
  if isinstance(indices_or_sections, (int, np.integer)) or (
      isinstance(indices_or_sections, (np.ndarray, Array)) and np.ndim(indices_or_sections) == 0):
    k = int(indices_or_sections)
    if k <= 0:
      raise ValueError("number sections must be larger than 0.")
    if strict and n % k:
      raise ValueError(f"array split does not result in an equal division: {n} % {k} != 0")
    q, r = divmod(n, k)
    sizes = [q + 1] * r + [q] * (k - r)
    points = np.cumsum([0] + sizes)
  else:
    idx = [int(i) if i >= 0 else int(i) + n for i in np.asarray(indices_or_sections).tolist()]
    points = [0] + [builtins.min(builtins.max(i, 0), n) for i in idx] + [n]
  return [lax_shapes.slice_in_dim(ary, int(lo), int(builtins.max(lo, hi)), axis=axis)
          for lo, hi in zip(points[:-1], points[1:])]


def split(ary, indices_or_sections, axis=0):
  """Split into equal sections or at the given indices (``numpy.split``)."""
  return _split("split", ary, indices_or_sections, axis, strict=True)


def array_split(ary, indices_or_sections, axis=0):
  """As ``split``, allowing unequal sections."""
  return _split("array_split", ary, indices_or_sections, axis, strict=False)


def hsplit(ary, indices_or_sections):
  """Split along axis 1 (axis 0 for 1-d arrays)."""
  ary = as_operand(ary)
  return split(ary, indices_or_sections, 1 if ary.ndim > 1 else 0)


def vsplit(ary, indices_or_sections):
  """Split along axis 0."""
  ary = as_operand(ary)
  if ary.ndim < 2:
    raise ValueError("vsplit only works on arrays of 2 or more dimensions")
  return split(ary, indices_or_sections, 0)


def dsplit(ary, indices_or_sections):
  """Split along axis 2."""
  ary = as_operand(ary)
  if ary.ndim < 3:
    raise ValueError("dsplit only works on arrays of 3 or more dimensions")
  return split(ary, indices_or_sections, 2)


def atleast_3d(*arys):
  """Views with at least three dimensions (``numpy.atleast_3d``)."""
  out = []
  for a in arys:
    a = as_operand(a)
    if a.ndim == 0:
      a = lax_shapes.reshape(a, (1, 1, 1))
    elif a.ndim == 1:
      a = lax_shapes.reshape(a, (1, a.shape[0], 1))
    elif a.ndim == 2:
      a = lax_shapes.reshape(a, a.shape + (1,))
    out.append(a)
  return out[0] if len(out) == 1 else out


def column_stack(tup):
  """Stack 1-d arrays as columns (2-d arrays as they are)."""
  arrs = [as_operand(a) for a in tup]
  arrs = [lax_shapes.reshape(a, (a.size, 1)) if a.ndim < 2 else a for a in arrs]
  return lnp.concatenate(arrs, 1)


def dstack(tup, dtype=None):
  """Stack along the third axis."""
  arrs = atleast_3d(*tup) if len(tup) > 1 else [atleast_3d(tup[0])]
  return lnp.concatenate(arrs, 2, dtype)


def block(arrays):
  """Assemble an array from nested lists of blocks (``numpy.block``)."""
  def depth(x):
    return 1 + depth(x[0]) if isinstance(x, list) and x else (1 if isinstance(x, list) else 0)
  list_depth = depth(arrays)

  def max_ndim(x):
    return builtins.max(max_ndim(y) for y in x) if isinstance(x, list) else np.ndim(
        x) if not isinstance(x, (Array, Tracer)) else x.ndim
  nd = builtins.max(list_depth, max_ndim(arrays))

  def rec(x, level):
    if isinstance(x, list):
      if not x:
        raise ValueError("Lists cannot be empty")
      parts = [rec(y, level + 1) for y in x]
      return lnp.concatenate(parts, axis=-(list_depth - level))
    if isinstance(x, tuple):
      raise TypeError("jnp.block does not accept tuples; use lists.")
    x = as_operand(x)
    return lax_shapes.reshape(x, (1,) * (nd - x.ndim) + x.shape)
  return rec(arrays, 0)


def append(arr, values, axis=None):
  """``arr`` with ``values`` appended along ``axis`` (flattened if None)."""
  if axis is None:
    return lnp.concatenate([lnp.ravel(arr), lnp.ravel(values)], 0)
  return lnp.concatenate([arr, values], axis)


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
  """``arr`` without the entries ``obj`` along ``axis`` (``numpy.delete``).

  Parameters
  ----------
  arr : array_like
  obj : int, slice or array_like of int or bool
    What to delete. An integer or a slice must be static; an integer array may be traced
    only with ``assume_unique_indices=True`` (the result size then is known).
  axis : int, optional
    None (the default) deletes from the flattened array.
  assume_unique_indices : bool
    Promise that the integer indices in ``obj`` are distinct, allowing traced ones.
  """
  check_arraylike("delete", arr)
  a = as_operand(arr)
  if axis is None:
    a, axis = lnp.ravel(a), 0
  axis = canonicalize_axis(axis, a.ndim)
  n = a.shape[axis]
  try:
    index = canonicalize_axis(operator.index(obj), n)
  except TypeError:
    pass
  else:
    return lnp.concatenate([lax_shapes.slice_in_dim(a, 0, index, axis=axis),
                            lax_shapes.slice_in_dim(a, index + 1, n, axis=axis)], axis)
  if isinstance(obj, slice):
    obj, assume_unique_indices = np.arange(n)[obj], True
  else:
    check_arraylike("delete", a, obj)
  if dtypes.is_integer(dtypes.dtype(obj)) and assume_unique_indices:
    return _take_dynamic(a, _kept_indices(as_operand(obj), n), axis)
  drop = np.asarray(core.concrete_or_error(np.asarray, obj,
                                           "'obj' array argument of jnp.delete()"))
  if dtypes.is_integer(drop.dtype):
    keep = np.ones(n, bool)
    keep[drop] = False
  elif drop.dtype == np.bool_:
    if drop.shape != (n,):
      raise ValueError("np.delete(arr, obj): for boolean indices, obj must be one-dimensional "
                       "with length matching specified axis.")
    keep = ~drop
  else:
    raise ValueError(f"np.delete(arr, obj): got obj.dtype={drop.dtype}; must be integer or "
                     "bool.")
  return _take_static(a, np.flatnonzero(keep), axis)


def _kept_indices(drop, n):
  """The indices of ``range(n)`` not in the distinct (possibly traced) indices ``drop``:
  the k-th kept index is k plus the number of sorted, shifted drops at or below it."""
  from jaxlite._src.libraries.numpy.sorting import sort
  drop = lnp.ravel(drop)
  drop = ufuncs.clip(lnp.where(ufuncs.less(drop, 0), ufuncs.add(drop, n), drop), 0, n)
  drop = ufuncs.subtract(sort(drop), lax_shapes.iota(drop.dtype, drop.shape[0]))
  i = lax_shapes.iota(drop.dtype, n - drop.shape[0])
  passed = ufuncs.greater_equal(lnp.expand_dims(i, 0), lnp.expand_dims(drop, 1))
  return ufuncs.add(i, red.sum(passed, axis=0, dtype=i.dtype))


def insert(arr, obj, values, axis=None):
  """``arr`` with ``values`` inserted before the indices ``obj`` along ``axis``
  (``numpy.insert``); ``obj`` (an int, a slice or a 1-d integer array) may be traced.

  Examples
  --------
  >>> import jaxlite.numpy as jnp
  >>> jnp.insert(jnp.array([1, 2, 3]), jnp.array([0, 2]), jnp.array([7, 8]))
  Array([7, 1, 2, 8, 3], dtype=int32)
  """
  check_arraylike("insert", arr, 0 if isinstance(obj, slice) else obj, values)
  a = as_operand(arr)
  if axis is None:
    a, axis = lnp.ravel(a), 0
  axis = canonicalize_axis(axis, a.ndim)
  n = a.shape[axis]
  indices = (creation.arange(*obj.indices(n)) if isinstance(obj, slice)
             else creation.asarray(obj))
  if indices.ndim > 1:
    raise ValueError("jnp.insert(): obj must be a slice, a one-dimensional array, or a "
                     f"scalar; got {obj}")
  if not dtypes.is_integer(indices.dtype):
    if indices.size or isinstance(obj, (Array, Tracer)):
      raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
    indices = lnp.astype(indices, dtypes.default_int_dtype())
  values = creation.array(values, dtype=a.dtype, ndmin=a.ndim)
  if indices.size == 1:
    if indices.ndim == 0:
      values = lnp.moveaxis(values, 0, axis)
    indices = creation.full(values.shape[axis], lnp.ravel(indices)[0])
  n_insert = lnp.broadcast_shapes(indices.shape, (values.shape[axis],))[0]
  out_shape = list(a.shape)
  out_shape[axis] += n_insert
  indices = ufuncs.clip(lnp.where(ufuncs.less(indices, 0), ufuncs.add(indices, n), indices),
                        0, n)
  # each inserted value lands at its index plus the number of values inserted before it
  from jaxlite._src.libraries.numpy.sorting import argsort, nonzero
  values_at = indices.at[argsort(indices)].add(creation.arange(n_insert, dtype=indices.dtype))
  arr_at = nonzero(creation.ones(n + n_insert, bool).at[values_at].set(False), size=n)[0]
  lead = (slice(None),) * axis
  out = creation.zeros(tuple(out_shape), a.dtype)
  out = out.at[lead + (values_at,)].set(values)
  return out.at[lead + (arr_at,)].set(a)


def resize(a, new_shape):
  """``a`` repeated or cut to ``new_shape`` (``numpy.resize``)."""
  a = lnp.ravel(a)
  new_shape = (new_shape,) if isinstance(new_shape, (int, np.integer)) else tuple(new_shape)
  total = int(np.prod(new_shape, dtype=np.int64))
  reps = -(-total // a.size) if a.size else 0
  flat = tile(a, reps) if reps else creation.zeros((total,), a.dtype)
  return lax_shapes.reshape(lax_shapes.slice_in_dim(flat, 0, total), new_shape)


def copy(a, order=None):
  """A copy of ``a`` (arrays are immutable, so the value itself)."""
  check_arraylike("copy", a)
  return creation.array(a, copy=True)


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
  """Apply ``func1d`` to 1-d slices along ``axis`` (via ``vmap`` over the other axes)."""
  arr = as_operand(arr)
  axis = canonicalize_axis(axis, arr.ndim)
  fun = lambda x: func1d(x, *args, **kwargs)
  for i in range(1, arr.ndim - axis):
    fun = _vmapped(fun, i, -1)
  for _ in range(axis):
    fun = _vmapped(fun, 0, 0)
  return fun(arr)


def _vmapped(fun, in_axis, out_axis):
  """``vmap(fun, in_axes=in_axis, out_axes=out_axis)`` of a function of one array."""
  return lambda x: vmap_axis(fun, x, x.shape[in_axis], in_axis, out_axis)


def apply_over_axes(func, a, axes):
  """Apply ``func(a, axis)`` over each axis in turn, keeping each result's rank."""
  (a,) = ensure_arraylike("apply_over_axes", a)
  for axis in axes:
    b = func(a, axis)
    if b.ndim == a.ndim - 1:
      b = lnp.expand_dims(b, axis)
    elif b.ndim != a.ndim:
      raise ValueError("function is not returning an array of the correct shape")
    a = b
  return a


# ----------------------------------------------------------------------------- writes
# NumPy's in-place writes, as functions returning the updated copy (inplace=False)

def place(arr, mask, vals, *, inplace=True):
  """``arr`` with the positions where ``mask`` is true set to ``vals`` in order (repeated
  as needed); traceable. Pass ``inplace=False``: JAX arrays are immutable."""
  arr, mask, vals = ensure_arraylike("place", arr, mask, vals)
  vals = lnp.ravel(vals)
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
  where = sorting.nonzero(lnp.ravel(mask), size=mask.size, fill_value=mask.size)[0]
  vals = resize(vals, where.shape)
  return lnp.reshape(lnp.ravel(arr).at[where].set(vals, mode="drop"), arr.shape)


def put(a, ind, v, mode=None, *, inplace=True):
  """``a`` with its flattened positions ``ind`` set to ``v`` (repeated as needed). Pass
  ``inplace=False``: JAX arrays are immutable."""
  if inplace:
    raise ValueError("jax.numpy.put cannot modify arrays in-place, because JAX arrays are "
                     "immutable. Pass inplace=False to instead return an updated array.")
  a, ind, v = ensure_arraylike("put", a, ind, v)
  ind, v = lnp.ravel(ind), lnp.ravel(v)
  if not ind.size or not v.size:
    return a
  v = resize(v, ind.shape)
  if mode == "wrap":
    ind = ufuncs.mod(ind, a.size)
  elif mode == "clip":
    ind = ufuncs.clip(ind, 0, a.size - 1)
  elif mode not in (None, "fill", "raise"):
    raise ValueError(f"mode should be one of 'wrap' or 'clip'; got {mode=}")
  scatter_mode = "drop" if mode in (None, "fill") else None
  flat = lnp.ravel(a).at[ind].set(v.astype(a.dtype), mode=scatter_mode)
  return lnp.reshape(flat, a.shape)


_index_grid = indices   # put_along_axis's argument named indices hides the function


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
  """``arr`` with ``values`` written at ``indices`` along ``axis`` (the inverse of
  ``take_along_axis``). Pass ``inplace=False``: JAX arrays are immutable."""
  if inplace:
    raise ValueError("jax.numpy.put_along_axis cannot modify arrays in-place, because JAX "
                     "arrays are immutable. Pass inplace=False to instead return an "
                     "updated array.")
  arr, indices, values = ensure_arraylike("put_along_axis", arr, indices, values)
  if axis is None:
    return lnp.reshape(put(lnp.ravel(arr), indices, values, inplace=False), arr.shape)
  axis = canonicalize_axis(axis, arr.ndim)
  if indices.ndim != arr.ndim:
    raise ValueError("indices and arr must have the same number of dimensions")
  shape = lnp.broadcast_shapes(
      tuple(1 if i == axis else s for i, s in enumerate(arr.shape)),
      tuple(1 if i == axis else s for i, s in enumerate(indices.shape)))
  idx_shape = tuple(indices.shape[i] if i == axis else shape[i] for i in range(arr.ndim))
  indices = lnp.broadcast_to(indices, idx_shape)
  indices = sorting.where(indices < 0, indices + arr.shape[axis], indices)
  grid = list(_index_grid(idx_shape, sparse=True))
  grid[axis] = indices
  return arr.at[tuple(grid)].set(lnp.broadcast_to(values, idx_shape).astype(arr.dtype),
                                 mode=mode)


# ----------------------------------------------------------------------------- pad

def _pad_widths(pad_width, ndim):
  pw = np.asarray(core.concrete_or_error(np.asarray, pad_width,
                                         "jnp.pad requires static pad_width."))
  if pw.dtype.kind not in "iu":
    raise TypeError(f"`pad_width` must be of integral type, got {pad_width!r}.")
  pw = np.broadcast_to(pw, (ndim, 2)) if pw.size else np.zeros((ndim, 2), int)
  if np.any(pw < 0):
    raise ValueError("index can't contain negative values")
  return [(int(lo), int(hi)) for lo, hi in pw]


def _per_axis(values, ndim, name):
  if values is None:
    return [(None, None)] * ndim
  v = np.asarray(core.concrete_or_error(np.asarray, values, f"jnp.pad {name} must be static."))
  v = np.broadcast_to(v, (ndim, 2))
  return [(v[i, 0], v[i, 1]) for i in range(ndim)]


def _slice_axis(x, lo, hi, axis, step=1):
  return lax_shapes.slice_in_dim(x, lo, hi, step, axis=axis)


def pad(array, pad_width, mode="constant", **kwargs):
  """Pad an array (``numpy.pad``).

  Parameters
  ----------
  array : array_like
  pad_width : int or sequence of (before, after)
    Static widths per axis.
  mode : str
    'constant' (``constant_values``), 'edge', 'reflect' and 'symmetric' (``reflect_type``),
    'wrap', 'linear_ramp' (``end_values``), 'maximum', 'minimum', 'mean', 'median'
    (``stat_length``) or 'empty'. Callable modes are not supported.
  """
  check_arraylike("pad", array)
  array = as_operand(array)
  widths = _pad_widths(pad_width, array.ndim)
  if callable(mode):
    raise NotImplementedError("jnp.pad with a callable mode is not supported by jaxlite.")
  allowed = {"constant": {"constant_values"}, "edge": set(), "reflect": {"reflect_type"},
             "symmetric": {"reflect_type"}, "wrap": set(), "linear_ramp": {"end_values"},
             "maximum": {"stat_length"}, "minimum": {"stat_length"}, "mean": {"stat_length"},
             "median": {"stat_length"}, "empty": set()}
  if mode not in allowed:
    raise ValueError(f"Unimplemented padding mode '{mode}' for np.pad.")
  extra = set(kwargs) - allowed[mode]
  if extra:
    raise ValueError(f"unsupported keyword arguments for mode '{mode}': {extra}")
  if mode in ("constant", "empty"):
    return _pad_constant(array, widths, kwargs.get("constant_values", 0))
  out = array
  for axis, (lo, hi) in enumerate(widths):
    if lo == 0 and hi == 0:
      continue
    n = out.shape[axis]
    if n == 0:
      raise ValueError(f"can't extend empty axis {axis} using modes other than 'constant' "
                       "or 'empty'")
    if mode == "edge":
      before = _repeat_edge(out, 0, lo, axis)
      after = _repeat_edge(out, n - 1, hi, axis)
    elif mode in ("reflect", "symmetric", "wrap"):
      before, after = _reflect_like(out, lo, hi, axis, mode, kwargs.get("reflect_type", "even"))
    elif mode == "linear_ramp":
      ends = _per_axis(kwargs.get("end_values", 0), array.ndim, "end_values")[axis]
      before = _ramp(out, 0, lo, ends[0], axis, reverse=False)
      after = _ramp(out, n - 1, hi, ends[1], axis, reverse=True)
    else:
      stat = _per_axis(kwargs.get("stat_length"), array.ndim, "stat_length")[axis]
      before = _stat(out, mode, 0, stat[0], lo, axis, head=True)
      after = _stat(out, mode, n, stat[1], hi, axis, head=False)
    out = lnp.concatenate([before, out, after], axis)
  return out


def _pad_constant(array, widths, values):
  values = np.asarray(values) if not isinstance(values, (Array, Tracer)) else values
  if isinstance(values, np.ndarray) and values.size == 1:
    value = lnp.astype(as_operand(values.reshape(())), array.dtype)
    return lax_shapes.pad(array, value, [(lo, hi, 0) for lo, hi in widths])
  per = _per_axis(values, array.ndim, "constant_values")
  out = array
  for axis, ((lo, hi), (vlo, vhi)) in enumerate(zip(widths, per)):
    zero = [(0, 0, 0)] * out.ndim
    cfg = list(zero)
    cfg[axis] = (lo, 0, 0)
    out = lax_shapes.pad(out, lnp.astype(as_operand(vlo), array.dtype), cfg)
    cfg[axis] = (0, hi, 0)
    out = lax_shapes.pad(out, lnp.astype(as_operand(vhi), array.dtype), cfg)
  return out


def _repeat_edge(x, i, count, axis):
  edge = _slice_axis(x, i, i + 1, axis)
  shape = list(x.shape)
  shape[axis] = count
  return lnp.broadcast_to(edge, tuple(shape))


def _reflect_like(x, lo, hi, axis, mode, reflect_type):
  """The ``lo`` values before and ``hi`` after ``x`` along ``axis`` in its periodic
  extension: blocks alternate between ``x`` and its mirror image (always ``x`` for wrap)."""
  n = x.shape[axis]
  if mode == "reflect" and n == 1:
    return _repeat_edge(x, 0, lo, axis), _repeat_edge(x, 0, hi, axis)
  if mode == "wrap":
    near_l = near_r = far_l = far_r = x
  elif mode == "symmetric":
    near_l = near_r = flip(x, axis)
    far_l = far_r = x
  else:  # reflect: the edge element is not repeated, so each block has n - 1 values
    near_l = flip(_slice_axis(x, 1, n, axis), axis)
    far_l = _slice_axis(x, 0, n - 1, axis)
    near_r = flip(_slice_axis(x, 0, n - 1, axis), axis)
    far_r = _slice_axis(x, 1, n, axis)
  period = near_l.shape[axis]
  if reflect_type == "odd" and mode != "wrap" and builtins.max(lo, hi) > period:
    raise NotImplementedError("jnp.pad with reflect_type='odd' supports pad widths up to "
                              "one period of the array in jaxlite.")
  blocks = -(-builtins.max(lo, hi) // period)
  left = [near_l if k % 2 == 0 else far_l for k in range(blocks)][::-1]
  right = [near_r if k % 2 == 0 else far_r for k in range(blocks)]
  before = lnp.concatenate(left, axis) if left else _slice_axis(x, 0, 0, axis)
  after = lnp.concatenate(right, axis) if right else _slice_axis(x, 0, 0, axis)
  m = before.shape[axis]
  before = _slice_axis(before, m - lo, m, axis)
  after = _slice_axis(after, 0, hi, axis)
  if reflect_type == "odd" and mode != "wrap":
    # odd reflection mirrors the values through the edge: 2 * edge - even reflection
    first, last = _slice_axis(x, 0, 1, axis), _slice_axis(x, n - 1, n, axis)
    before = ufuncs.subtract(ufuncs.multiply(2, first), before)
    after = ufuncs.subtract(ufuncs.multiply(2, last), after)
  return before, after


def _ramp(x, i, count, end, axis, reverse):
  """JAX's ramp: ``linspace(end, edge, count, endpoint=False, dtype=x.dtype)`` along
  ``axis`` (so an integer ``x`` takes the floor of float32 values), reversed after ``x``."""
  edge = lnp.squeeze(_slice_axis(x, i, i + 1, axis), axis)
  ramp = creation.linspace(end, edge, count, endpoint=False, dtype=x.dtype, axis=axis)
  ramp = lax_ew._convert_element_type(ramp, x.dtype, weak_type=x.weak_type)
  return flip(ramp, axis) if reverse else ramp


def _stat(x, mode, edge, length, count, axis, head):
  n = x.shape[axis]
  length = n if length is None else builtins.max(1, builtins.min(int(length), n))
  part = _slice_axis(x, 0, length, axis) if head else _slice_axis(x, n - length, n, axis)
  if mode == "maximum":
    v = red.max(part, axis=axis, keepdims=True)
  elif mode == "minimum":
    v = red.min(part, axis=axis, keepdims=True)
  elif mode == "mean":
    v = red.mean(part, axis=axis, keepdims=True)
  else:
    from jaxlite._src.libraries.numpy.statistics import median
    v = median(part, axis=axis, keepdims=True)
  if dtypes.issubdtype(x.dtype, np.integer) and mode in ("mean", "median"):
    v = ufuncs.round(v)
  v = lnp.astype(v, x.dtype)
  shape = list(x.shape)
  shape[axis] = count
  return lnp.broadcast_to(v, tuple(shape))
