"""NumPy indexing on lax primitives: ``x[idx]``, ``x.at[idx]``, ``jnp.take``.

An index is parsed once into entries (int, slice, None, Ellipsis, integer array, boolean
mask), then lowered the way JAX lowers it, so that jaxprs read the same:

- only static ints and slices: ``slice`` (then ``rev`` for negative steps, ``squeeze``
  for ints and ``broadcast_in_dim`` for None);
- scalar integer arrays or tracers among them, or unit-stride ``jax.ds`` slices:
  ``dynamic_slice`` (negative indices are wrapped with ``lt``/``add``/``select_n``);
- anything else (integer arrays, masks, strided slices next to arrays): ``gather``.

Updates (``x.at[idx].set(y)`` and friends) always lower to a scatter; a ``jax.ds`` start
is then not wrapped when negative, as in JAX. Out-of-bounds
indices are clamped when reading and dropped when writing, unless ``mode`` says
otherwise.
"""
from __future__ import annotations

import builtins
import math
import operator
import warnings
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.base import errors
from jaxlite._src.base import tree
from jaxlite._src.core.array import Array
from jaxlite._src.core.core import Tracer
from jaxlite._src.lax.call import staged
from jaxlite._src.lax import elementwise as lax_ew
from jaxlite._src.lax import indexing as lax_ix
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.lax import sharding_constraint
from jaxlite._src.lax.indexing import GatherScatterMode
from jaxlite._src.libraries.numpy import creation, lax_numpy, ufuncs
from jaxlite._src.libraries.numpy.util import (as_operand, canonicalize_axis, check_arraylike,
                                     ensure_arraylike, promote_dtypes)

_NONE, _ELLIPSIS, _SLICE, _INT, _BOOL, _ARRAY = ("none", "ellipsis", "slice", "int", "bool",
                                                 "array")
_DSLICE = "dynamic_slice"   # a jax.ds Slice: its start may be traced
_ONE_AXIS = (_SLICE, _DSLICE, _INT, _ARRAY)   # the kinds that use up one axis of x
_ARRAYS = (Array, Tracer, np.ndarray)


class _Entry(NamedTuple):
  kind: str
  value: Any
  position: int        # where it stood in the user's index tuple


class _Gather(NamedTuple):
  """An index lowered to one gather, plus what happens to its result around it."""
  slice_shape: tuple          # the shape of x[idx] before None axes are added
  gather_slice_shape: tuple
  indices: Any                # the gather's start indices (index vector last)
  dnums: lax_ix.GatherDimensionNumbers
  advanced: bool              # integer arrays present (so indices may repeat)
  reversed_dims: tuple
  newaxis_dims: tuple
  scalar_bool_dims: tuple     # axes inserted into x for scalar boolean indices
  slice_spec: tuple = ()      # x[idx]'s split over Explicit mesh axes, per slice dimension


# ----------------------------------------------------------------------------- parsing

def _ndim(x):
  return x.ndim if hasattr(x, "ndim") else np.ndim(x)


def _is_int(x):
  return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _as_tuple(idx):
  """The index as a tuple; lists at the top level are rejected, as JAX does."""
  if isinstance(idx, tuple):
    return idx
  if isinstance(idx, Sequence) and not isinstance(idx, str):
    nested = any(isinstance(i, _ARRAYS) and _ndim(i) != 0 or isinstance(i, (Sequence, slice))
                 or i is Ellipsis or i is None for i in idx)
    use = "tuple(seq)" if nested else "array(seq)"
    raise TypeError("Using a non-tuple sequence for multidimensional indexing is not "
                    f"allowed; use `arr[{use}]` instead of `arr[seq]`. See "
                    "https://github.com/jax-ml/jax/issues/4564 for more information.")
  return (idx,)


def _classify(i):
  """(kind, value) of one index entry; a clear error for unsupported ones."""
  if i is None:
    return _NONE, i
  if i is Ellipsis:
    return _ELLIPSIS, i
  if isinstance(i, slice):
    return _SLICE, i
  if _is_int(i):
    return _INT, i if isinstance(i, np.unsignedinteger) else int(i)
  if isinstance(i, (bool, np.bool_)):
    return _BOOL, i
  if isinstance(i, str):
    raise TypeError(f"JAX does not support string indexing; got idx={i!r}")
  if isinstance(i, Slice):
    if i.is_dynamic_size:
      raise TypeError(f"the size of a jax.ds slice must be static to index an array, got "
                      f"{i.size!r}")
    return _DSLICE, i
  if isinstance(i, Sequence):
    i = creation.asarray(i) if len(i) else np.zeros((0,), dtypes.default_int_dtype())
  if isinstance(i, _ARRAYS):
    if isinstance(i, np.ndarray):
      i = np.asarray(i, dtypes.canonicalize_dtype(i.dtype))
    if i.dtype == np.bool_:
      return _BOOL, i
    if dtypes.issubdtype(i.dtype, np.integer):
      return _ARRAY, i
    raise TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                    f"{i.dtype}")
  if isinstance(i, (float, complex, np.generic)):
    raise TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                    f"{np.dtype(type(i))}")
  raise IndexError("only integers, slices (`:`), ellipsis (`...`), newaxis (`None`) and "
                   f"integer or boolean arrays are valid indices. Got {i}")


def _consumed(entries):
  """How many axes of the indexed array the entries use up (masks use their rank)."""
  return sum(_ndim(e.value) if e.kind == _BOOL else e.kind in _ONE_AXIS for e in entries)


def _parse(idx, shape):
  """The entries of ``idx`` with Ellipsis still in place; checks the index count."""
  entries = [_Entry(*_classify(i), pos) for pos, i in enumerate(_as_tuple(idx))]
  if sum(e.kind == _ELLIPSIS for e in entries) > 1:
    raise IndexError("an index can only have a single ellipsis ('...')")
  consumed = _consumed(entries)
  if consumed > len(shape):
    raise IndexError(f"Too many indices: array is {len(shape)}-dimensional, but "
                     f"{consumed} were indexed")
  return entries


def _expand_ellipsis(entries, ndim):
  """Ellipsis (and the implicit trailing one) replaced by full slices."""
  fill = [_Entry(_SLICE, slice(None), -1) for _ in range(ndim - _consumed(entries))]
  out = []
  for e in entries:
    out.extend(fill if e.kind == _ELLIPSIS else [e])
  if not any(e.kind == _ELLIPSIS for e in entries):
    out.extend(fill)
  return out


def _expand_bool_masks(entries, shape):
  """Boolean masks (which must be concrete) replaced by the integer arrays of np.nonzero."""
  out, axis = [], 0
  for e in entries:
    if e.kind == _ELLIPSIS:
      axis += len(shape) - _consumed(entries)
    if e.kind != _BOOL:
      out.append(e)
      axis += e.kind in _ONE_AXIS
      continue
    mask = e.value
    if isinstance(mask, Tracer):
      mask = mask.to_concrete_value()
      if mask is None:
        raise errors.NonConcreteBooleanIndexError(e.value)
    mask = np.asarray(mask)
    if mask.ndim == 0:   # a scalar mask adds an axis; _to_gather handles it
      out.append(e._replace(value=bool(mask)))
      continue
    expected = list(shape[axis:axis + mask.ndim])
    if not all(s in (0, t) for s, t in zip(mask.shape, expected)):
      raise IndexError(f"boolean index did not match shape of indexed array in index "
                       f"{e.position}: got {mask.shape}, expected {expected}")
    index_dtype = dtypes.default_int_dtype()
    out.extend(_Entry(_ARRAY, np.asarray(i, index_dtype), e.position)
               for i in np.nonzero(mask))
    axis += mask.ndim
  return out


def _static_slice_bounds(s, position):
  for v in (s.start, s.stop, s.step):
    if isinstance(v, Tracer) and v.to_concrete_value() is None:
      raise IndexError(f"Slice entries must be static integers. Got {s} at position "
                       f"{position}. Use lax.dynamic_slice for a slice at a traced start.")
    if v is not None and not hasattr(v, "__index__"):
      raise TypeError(f"Slice entries must be integers or None, got {s} at position "
                      f"{position}.")


# ----------------------------------------------------------------------------- x[idx]

class _Unsupported(Exception):
  """This lowering does not apply to the index; try the next one."""


def _parse_mode(mode):
  return GatherScatterMode.from_any(GatherScatterMode.PROMISE_IN_BOUNDS if mode is None
                                    else mode)


def _static_slice(arr, entries, mode, normalize):
  """``x[idx]`` for ints and static slices, with slice/rev/squeeze/broadcast_in_dim."""
  mode = _parse_mode(mode)
  if mode not in (GatherScatterMode.PROMISE_IN_BOUNDS, GatherScatterMode.CLIP):
    raise _Unsupported
  if any(e.kind not in (_INT, _SLICE, _NONE, _ELLIPSIS) for e in entries):
    raise _Unsupported
  shape = arr.shape
  starts, limits, strides, rev_axes, squeeze_axes, newaxis_dims = [], [], [], [], [], []
  for e in _expand_ellipsis(entries, arr.ndim):
    if e.kind == _NONE:
      newaxis_dims.append(len(starts) - len(squeeze_axes) + len(newaxis_dims))
      continue
    axis, size = len(starts), shape[len(starts)]
    if e.kind == _INT:
      i = int(e.value)
      i += size if normalize and i < 0 else 0
      if size == 0 or (mode == GatherScatterMode.PROMISE_IN_BOUNDS and not 0 <= i < size):
        raise _Unsupported   # out of bounds: dynamic_slice clamps it, as XLA does
      i = min(max(i, 0), size - 1)
      starts.append(i), limits.append(i + 1), strides.append(1), squeeze_axes.append(axis)
      continue
    _static_slice_bounds(e.value, e.position)
    start, stop, step = e.value.indices(size)
    if step > 0:
      starts.append(start), limits.append(max(start, stop))
    else:   # slice the same elements forwards (from the last one), then reverse them
      low = min(size, stop + 1 + abs(start - stop - 1) % -step)
      starts.append(low), limits.append(max(low, start + 1))
      rev_axes.append(axis)
    strides.append(abs(step))
  out = arr
  if strides != [1] * len(shape) or starts != [0] * len(shape) or limits != list(shape):
    unit = all(st == 1 for st in strides)   # JAX prints strides=None for unit steps
    out = lax_shapes.slice(arr, starts, limits, None if unit else strides)
  if rev_axes:
    out = lax_shapes.rev(out, rev_axes)
  out = lax_shapes.squeeze(out, squeeze_axes)
  return lax_shapes.expand_dims(out, newaxis_dims) if newaxis_dims else out


def _dynamic_slice(arr, entries, mode, normalize):
  """``x[idx]`` with scalar integer arrays (traced or not) and unit-step slices."""
  if mode is not None and _parse_mode(mode) not in (GatherScatterMode.PROMISE_IN_BOUNDS,
                                                    GatherScatterMode.CLIP):
    raise _Unsupported
  for e in entries:
    if (e.kind == _BOOL or e.kind == _ARRAY and _ndim(e.value) != 0
        or e.kind == _SLICE and e.value.step not in (None, 1, -1)
        or e.kind == _DSLICE and e.value.stride != 1):
      raise _Unsupported
  starts, sizes, rev_axes, squeeze_axes, newaxis_dims = [], [], [], [], []
  trivial = True
  for e in _expand_ellipsis(entries, arr.ndim):
    if e.kind == _NONE:
      newaxis_dims.append(len(starts) - len(squeeze_axes) + len(newaxis_dims))
      continue
    axis, size = len(starts), arr.shape[len(starts)]
    if e.kind in (_INT, _ARRAY):
      if size == 0:
        raise IndexError(f"index is out of bounds for axis {axis} with size 0")
      if not normalize and e.kind == _INT and e.value < 0:
        raise _Unsupported   # a negative start that must not wrap: gather clamps it
      trivial = False
      starts.append(e.value if e.kind == _INT else as_operand(e.value))
      sizes.append(1), squeeze_axes.append(axis)
      continue
    if e.kind == _DSLICE:
      trivial = False
      start = e.value.start
      starts.append(start if _is_int(start) else as_operand(start))
      sizes.append(e.value.size)
      continue
    _static_slice_bounds(e.value, e.position)
    trivial &= e.value == slice(None)
    start, stop, step = e.value.indices(size)
    if step < 0:
      start, stop = stop + 1, start + 1
      rev_axes.append(axis)
    starts.append(start), sizes.append(max(0, stop - start))
  out = arr
  if not trivial:
    if len(starts) > 1:   # dynamic_slice wants one dtype for all its start indices
      starts = [lax_ew.convert_element_type(s, np.int32) for s in starts]
    starts = [lax_ix.normalize_start(s, d, normalize) for s, d in zip(starts, arr.shape)]
    out = lax_ix.dynamic_slice(arr, starts, sizes, allow_negative_indices=False)
  if rev_axes:
    out = lax_shapes.rev(out, rev_axes)
  out = lax_shapes.squeeze(out, squeeze_axes)
  return lax_shapes.expand_dims(out, newaxis_dims) if newaxis_dims else out


def _const_like(x, value):
  """``value`` as a scalar of ``x``'s dtype and weak type (NumPy for NumPy ``x``)."""
  if isinstance(x, np.ndarray):
    return np.array(value, x.dtype)[()]
  aval = core.get_aval(x)
  return Array(np.array(value, aval.dtype), aval.weak_type)


def _normalize(index, size):
  """Negative entries of an integer index array wrapped once: ``where(i < 0, i + n, i)``."""
  if dtypes.issubdtype(dtypes.dtype(index), np.unsignedinteger):
    return index
  negative = index < 0 if isinstance(index, np.ndarray) else lax_ew.lt(index,
                                                                      _const_like(index, 0))
  return lax_ew.select(negative, lax_ew.add(index, _const_like(index, size)), index)


def _broadcast_to(x, shape):
  """``x`` broadcast to ``shape`` by adding leading axes and growing size-1 axes."""
  x_shape = core.get_aval(x).shape
  if x_shape == tuple(shape):
    return x
  lead = len(shape) - len(x_shape)
  if lead < 0:
    raise ValueError(f"Cannot broadcast to shape with fewer dimensions: "
                     f"arr_shape={x_shape} shape={tuple(shape)}")
  if any(a not in (1, b) for a, b in zip(x_shape, shape[lead:])):
    aval = core.get_aval(x)
    raise ValueError(f"Incompatible types for broadcasting: input type="
                     f"{aval.str_short()} and requested type="
                     f"{aval.update(shape=shape).str_short()}")
  return lax_shapes.broadcast_in_dim(x, tuple(shape), range(lead, len(shape)))


def _to_gather(shape, entries, normalize=True, spec=None) -> _Gather:
  """Lower an index (masks already expanded) to one gather, as JAX's _index_to_gather.
  ``spec``: x's split over Explicit mesh axes, which the slices keep (``slice_spec``)."""
  spec = spec or (None,) * len(shape)
  for e in entries:
    if e.kind == _SLICE:
      _static_slice_bounds(e.value, e.position)
  advanced_pos = [n for n, e in enumerate(entries) if e.kind in (_ARRAY, _INT)]
  contiguous = all(b - a == 1 for a, b in zip(advanced_pos, advanced_pos[1:]))
  entries = _expand_ellipsis(entries, len(shape))
  # A scalar boolean index adds a size-1 axis to x, then indexes it with arange(0 or 1).
  scalar_bool_dims, expanded, axis = [], [], 0
  for e in entries:
    if e.kind == _BOOL:
      scalar_bool_dims.append(axis)
      e = _Entry(_ARRAY, np.arange(int(e.value), dtype=dtypes.default_int_dtype()),
                 e.position)
    expanded.append(e)
    axis += e.kind != _NONE
  shape, spec = list(shape), list(spec)
  for d in scalar_bool_dims:
    shape.insert(d, 1)
    spec.insert(d, None)
  entries, x_axis = [], 0
  for e in expanded:
    if e.kind == _NONE:
      entries.append(e)
      continue
    size = shape[x_axis]
    x_axis += 1
    if normalize and e.kind == _INT and not isinstance(e.value, np.unsignedinteger):
      e = e._replace(value=int(e.value) + size if e.value < 0 else e.value)
    elif normalize and e.kind == _ARRAY:
      e = e._replace(value=_normalize(e.value, size))
    entries.append(e)

  advanced = [(n, e) for n, e in enumerate(entries) if e.kind in (_ARRAY, _INT)]
  if not any(e.kind == _ARRAY and _ndim(e.value) > 0 for _, e in advanced):
    advanced = []
  advanced_at = {n for n, _ in advanced}
  without_none = [n for n, e in enumerate(entries) if e.kind != _NONE]
  x_advanced_axes = [without_none.index(n) for n, _ in advanced]

  index_dtype = np.dtype(np.int32 if max(shape, default=0) <= np.iinfo(np.int32).max
                         else np.int64)
  x_axis = y_axis = collapsed_y_axis = 0
  offset_dims, collapsed, start_index_map = [], [], []
  gather_indices, gather_indices_shape = [], []
  slice_shape, newaxis_dims, reversed_dims, gather_slice_shape = [], [], [], []
  slice_spec = []
  for n, e in enumerate(entries):
    if advanced and n == (advanced[0][0] if contiguous else 0):
      arrays = [creation.asarray(a.value) for _, a in advanced]
      try:
        common = np.broadcast_shapes(*(a.shape for a in arrays))
      except ValueError:
        raise ValueError("Incompatible shapes for broadcasting: shapes="
                         f"{[a.shape for a in arrays]}") from None
      arrays = [_broadcast_to(a, common) for a in arrays]
      start = len(gather_indices_shape)
      gather_indices += [(lax_ew.convert_element_type(a, index_dtype), start) for a in arrays]
      gather_indices_shape += common
      start_index_map += x_advanced_axes
      collapsed += x_advanced_axes
      slice_shape += common
      slice_spec += core.get_aval(arrays[0]).spec or (None,) * len(common)
      y_axis += len(common)
      collapsed_y_axis += len(common)
    if n in advanced_at:
      x_axis += 1
      gather_slice_shape.append(1)
    elif e.kind in (_INT, _ARRAY):   # a scalar index
      if shape[x_axis] == 0:
        raise IndexError(f"index is out of bounds for axis {x_axis} with size 0")
      gather_indices.append((lax_ew.convert_element_type(e.value, index_dtype),
                             len(gather_indices_shape)))
      collapsed.append(x_axis)
      gather_slice_shape.append(1)
      start_index_map.append(x_axis)
      x_axis += 1
    elif e.kind == _NONE:
      slice_shape.append(1)
      slice_spec.append(None)
      newaxis_dims.append(y_axis)
      y_axis += 1
    else:
      if e.kind == _DSLICE:   # its start is neither wrapped nor checked, as in JAX
        start, step, count = e.value.start, e.value.stride, e.value.size
      else:
        start, stop, step = e.value.indices(shape[x_axis])
        count = len(range(start, stop, step))
      slice_shape.append(count)
      slice_spec.append(spec[x_axis])
      if step == 1:
        if count != shape[x_axis]:
          gather_indices.append((lax_ew.convert_element_type(start, index_dtype),
                                 len(gather_indices_shape)))
          start_index_map.append(x_axis)
        gather_slice_shape.append(count)
        offset_dims.append(collapsed_y_axis)
      else:
        positions = lax_ew.add(
            creation.array(start, dtype=index_dtype),
            lax_ew.mul(Array(np.array(step, index_dtype)),
                       lax_shapes.iota(index_dtype, count)))
        if step < 0:
          reversed_dims.append(collapsed_y_axis)
          positions = lax_shapes.rev(positions, (0,))
        gather_slice_shape.append(1)
        gather_indices.append((positions, len(gather_indices_shape)))
        start_index_map.append(x_axis)
        gather_indices_shape.append(count)
        collapsed.append(x_axis)
      collapsed_y_axis += 1
      y_axis += 1
      x_axis += 1

  if not gather_indices:
    indices = np.zeros((0,), index_dtype)
  elif len(gather_indices) == 1:
    g, _ = gather_indices[0]
    indices = lax_shapes.expand_dims(g, (core.get_aval(g).ndim,))
  else:
    full = tuple(gather_indices_shape) + (1,)
    indices = lax_shapes.concatenate(
        [lax_shapes.broadcast_in_dim(g, full, range(i, i + core.get_aval(g).ndim))
         for g, i in gather_indices], len(gather_indices_shape))
  dnums = lax_ix.GatherDimensionNumbers(tuple(offset_dims), tuple(sorted(collapsed)),
                                        tuple(start_index_map))
  return _Gather(tuple(slice_shape), tuple(gather_slice_shape), indices, dnums,
                 bool(advanced), tuple(reversed_dims), tuple(newaxis_dims),
                 tuple(scalar_bool_dims), tuple(slice_spec))


def _zeros(like, shape):
  aval = core.get_aval(like)
  return lax_shapes.broadcast_in_dim(Array(np.zeros((), aval.dtype), aval.weak_type),
                                     shape, ())


def _gather(arr, entries, indices_are_sorted, unique_indices, mode, fill_value, normalize):
  g = _to_gather(arr.shape, _expand_bool_masks(entries, arr.shape), normalize)
  if fill_value is not None:
    fill_value = core.concrete_or_error(np.asarray, fill_value,
                                        "fill_value argument to indexed get()")
    if fill_value.ndim != 0:
      raise ValueError("fill_value argument to indexed get() must be a scalar")
    fill_value = fill_value.item()
  y = arr
  if g.scalar_bool_dims:
    y = lax_shapes.expand_dims(y, g.scalar_bool_dims)
  if 0 in g.slice_shape:
    return _zeros(y, g.slice_shape)
  if 0 not in core.get_aval(g.indices).shape:
    y = lax_ix.gather(y, g.indices, g.dnums, g.gather_slice_shape,
                      unique_indices=unique_indices or not g.advanced,
                      indices_are_sorted=indices_are_sorted or not g.advanced,
                      mode=mode, fill_value=fill_value)
  if g.reversed_dims:
    y = lax_shapes.rev(y, g.reversed_dims)
  return lax_shapes.expand_dims(y, g.newaxis_dims) if g.newaxis_dims else y


def _part_of_a_spread_array(arr, entries) -> bool:
  """Whether ``entries`` take part of an axis (an int, a shorter or strided slice) of an
  array laid out over several devices: JAX then gathers, whose sharding rule decides the
  result's split (a slice would not carry the layout)."""
  placed = getattr(arr, "_placed", None)
  if placed is None or len(placed.sharding._device_list) == 1:
    return False
  axis = 0
  for e in _expand_ellipsis(entries, arr.ndim):
    if e.kind == _NONE:
      continue
    if e.kind != _SLICE:
      return True
    start, stop, step = e.value.indices(arr.shape[axis])
    if abs(step) != 1 or abs(stop - start) != arr.shape[axis]:
      return True
    axis += 1
  return False


def rewriting_take(arr, idx, *, indices_are_sorted=False, unique_indices=False, mode=None,
                   fill_value=None, normalize_indices=True):
  """``arr[idx]``, lowered to slice, dynamic_slice or gather (the first that applies)."""
  arr = as_operand(arr)
  entries = _parse(idx, arr.shape)
  slices = (lambda: _static_slice(arr, entries, mode, normalize_indices),
            lambda: _dynamic_slice(arr, entries, mode, normalize_indices))
  for lowering in () if _part_of_a_spread_array(arr, entries) else slices:
    try:
      return lowering()
    except (_Unsupported, TypeError, ValueError, IndexError):
      pass   # like JAX: any failure here means "use the general gather"
  return _gather(arr, entries, indices_are_sorted, unique_indices, mode, fill_value,
                 normalize_indices)


def getitem(arr, idx):
  """``arr[idx]`` with NumPy's indexing rules (the ``__getitem__`` of arrays and tracers).

  Differences from NumPy, as in JAX: an out-of-bounds index is clamped instead of raising
  (use ``arr.at[idx].get(mode='fill')`` to get a fill value instead), boolean masks must
  be concrete, and lists must be wrapped in ``jnp.array`` (or a tuple).
  """
  return rewriting_take(arr, idx)


# ----------------------------------------------------------------------------- updates

def _safe_to_cast(y, dtype):
  return dtypes.dtype(y) == dtype or dtypes.result_type(y, dtype) == dtype


def _scatter_update(x, idx, y, scatter_op, indices_are_sorted, unique_indices, mode=None,
                    normalize_indices=True):
  """``x`` with ``x[idx] op= y`` applied functionally, as one scatter."""
  x = creation.asarray(x)
  if (isinstance(y, int) and dtypes.issubdtype(x.dtype, np.integer)
      and dtypes.iinfo(x.dtype).min <= y <= dtypes.iinfo(x.dtype).max):
    y = Array(np.array(y, x.dtype))
  else:
    y = creation.asarray(y)
  entries = _expand_bool_masks(_parse(idx, x.shape), x.shape)
  dtype, weak_type = x.dtype, x.weak_type
  if not _safe_to_cast(y, dtype):
    warnings.warn(f"scatter inputs have incompatible types: cannot safely cast value from "
                  f"dtype={y.dtype} to dtype={dtype} with jax_numpy_dtype_promotion="
                  "standard. In future JAX releases this will result in an error.",
                  FutureWarning, stacklevel=4)
  x_aval = core.get_aval(x)
  g = _to_gather(x.shape, entries, normalize_indices, x_aval.spec)
  if 0 in g.slice_shape:
    return x
  x, y = promote_dtypes(x, y)
  y = _broadcast_to(y, g.slice_shape)
  if x_aval.spec is not None and core.get_aval(y).spec != (  # (as split as x[idx], as JAX)
      g.slice_spec if any(e is not None for e in g.slice_spec) else None):
    y = sharding_constraint.constrain(
        y, core.aval_rules["sharding"](x_aval).update(spec=g.slice_spec))
  y = lax_shapes.squeeze(y, g.newaxis_dims)
  if g.reversed_dims:
    y = lax_shapes.rev(y, g.reversed_dims)
  if g.scalar_bool_dims:
    x = lax_shapes.expand_dims(x, g.scalar_bool_dims)
  dnums = lax_ix.ScatterDimensionNumbers(
      update_window_dims=g.dnums.offset_dims, inserted_window_dims=g.dnums.collapsed_slice_dims,
      scatter_dims_to_operand_dims=g.dnums.start_index_map)
  out = scatter_op(x, g.indices, y, dnums,
                   indices_are_sorted=indices_are_sorted or not g.advanced,
                   unique_indices=unique_indices or not g.advanced, mode=mode)
  out = lax_shapes.squeeze(out, g.scalar_bool_dims)
  return lax_ew._convert_element_type(out, dtype, weak_type)


class _IndexUpdateHelper:
  """The ``at`` property: ``x.at[idx]`` names the elements a functional update changes.

  ==============================  ================================
  Alternate syntax                Equivalent in-place expression
  ==============================  ================================
  ``x = x.at[idx].set(y)``        ``x[idx] = y``
  ``x = x.at[idx].add(y)``        ``x[idx] += y``
  ``x = x.at[idx].subtract(y)``   ``x[idx] -= y``
  ``x = x.at[idx].multiply(y)``   ``x[idx] *= y``
  ``x = x.at[idx].divide(y)``     ``x[idx] /= y``
  ``x = x.at[idx].power(y)``      ``x[idx] **= y``
  ``x = x.at[idx].min(y)``        ``x[idx] = minimum(x[idx], y)``
  ``x = x.at[idx].max(y)``        ``x[idx] = maximum(x[idx], y)``
  ``x = x.at[idx].apply(ufunc)``  ``ufunc.at(x, idx)``
  ``x = x.at[idx].get()``         ``x = x[idx]``
  ==============================  ================================

  None of these modify ``x``; they return a new array. Where indices repeat, ``add``,
  ``multiply``, ``min``, ``max`` and ``apply`` combine every update, and ``set`` keeps one
  of them. Out-of-bounds updates are dropped unless ``mode='clip'``; out-of-bounds reads
  are clamped unless ``mode='fill'``.

  Examples
  --------
  >>> import jaxlite.numpy as jnp
  >>> x = jnp.zeros(4, dtype=int)
  >>> x.at[1].set(5)
  Array([0, 5, 0, 0], dtype=int32)
  >>> x.at[jnp.array([0, 0, 2])].add(1)
  Array([2, 0, 1, 0], dtype=int32)
  """
  __slots__ = ("array",)

  def __init__(self, array):
    self.array = array

  def __getitem__(self, index):
    return _IndexUpdateRef(self.array, index)

  def __repr__(self):
    return f"_IndexUpdateHelper({self.array!r})"


class _IndexUpdateRef:
  """``x.at[idx]``: the methods return ``x`` updated at ``idx`` (see ``_IndexUpdateHelper``).

  Every method but ``apply`` takes ``indices_are_sorted`` and ``unique_indices`` (promises,
  not checked), ``mode`` ('fill'/'drop', 'clip' or 'promise_in_bounds'), ``out_sharding``
  (a NamedSharding, or a PartitionSpec of the mesh in context, that the gather's or
  scatter's result is laid out as) and ``wrap_negative_indices`` (default True: -1 is the
  last element).
  """
  __slots__ = ("array", "index")

  def __init__(self, array, index):
    self.array = array
    self.index = index

  def __repr__(self):
    return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

  def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
          fill_value=None, out_sharding=None, wrap_negative_indices=True):
    """``x[idx]``; with ``mode='fill'``, out-of-bounds reads give ``fill_value``."""
    sharding = sharding_constraint.canonicalize_out_sharding(out_sharding, ".get")
    return sharding_constraint.computed_as(
        sharding, rewriting_take, self.array, self.index,
        indices_are_sorted=indices_are_sorted, unique_indices=unique_indices, mode=mode,
        fill_value=fill_value, normalize_indices=wrap_negative_indices)

  def _update(self, name, values, op, indices_are_sorted, unique_indices, mode,
              out_sharding, wrap_negative_indices, array=None):
    sharding = sharding_constraint.canonicalize_out_sharding(out_sharding, "." + name)
    return sharding_constraint.computed_as(
        sharding, _scatter_update, self.array if array is None else array, self.index,
        values, op, indices_are_sorted, unique_indices, mode, wrap_negative_indices)

  def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
          out_sharding=None, wrap_negative_indices=True):
    """``x[idx] = values``, functionally."""
    return self._update("set", values, lax_ix.scatter, indices_are_sorted, unique_indices,
                        mode, out_sharding, wrap_negative_indices)

  def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
          out_sharding=None, wrap_negative_indices=True):
    """``x[idx] += values``, functionally (repeated indices accumulate)."""
    return self._update("add", values, lax_ix.scatter_add, indices_are_sorted,
                        unique_indices, mode, out_sharding, wrap_negative_indices)

  def subtract(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
               out_sharding=None, wrap_negative_indices=True):
    """``x[idx] -= values``, functionally (repeated indices accumulate)."""
    return self._update("subtract", values, lax_ix.scatter_sub, indices_are_sorted,
                        unique_indices, mode, out_sharding, wrap_negative_indices)

  def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
               out_sharding=None, wrap_negative_indices=True):
    """``x[idx] *= values``, functionally (repeated indices accumulate)."""
    return self._update("multiply", values, lax_ix.scatter_mul, indices_are_sorted,
                        unique_indices, mode, out_sharding, wrap_negative_indices)

  mul = multiply

  def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
             out_sharding=None, wrap_negative_indices=True):
    """``x[idx] /= values``, functionally: ``x`` divided by a scatter-multiplied ones."""
    divisor = self._update("divide", values, lax_ix.scatter_mul, indices_are_sorted,
                           unique_indices, mode, out_sharding, wrap_negative_indices,
                           creation.ones_like(self.array))
    return ufuncs.divide(self.array, divisor)

  def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            out_sharding=None, wrap_negative_indices=True):
    """``x[idx] **= values``, functionally (repeated indices multiply the exponents)."""
    exponent = self._update("power", values, lax_ix.scatter_mul, indices_are_sorted,
                            unique_indices, mode, out_sharding, wrap_negative_indices,
                            creation.ones_like(self.array))
    return ufuncs.power(self.array, exponent)

  def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
          out_sharding=None, wrap_negative_indices=True):
    """``x[idx] = minimum(x[idx], values)``, functionally."""
    return self._update("min", values, lax_ix.scatter_min, indices_are_sorted,
                        unique_indices, mode, out_sharding, wrap_negative_indices)

  def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
          out_sharding=None, wrap_negative_indices=True):
    """``x[idx] = maximum(x[idx], values)``, functionally."""
    return self._update("max", values, lax_ix.scatter_max, indices_are_sorted,
                        unique_indices, mode, out_sharding, wrap_negative_indices)

  def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None,
            wrap_negative_indices=True):
    """``func.at(x, idx)``: the unary ``func`` applied at ``idx``, once per occurrence."""
    def scatter_apply(x, indices, y, dnums, **kwargs):
      return lax_ix.scatter_apply(x, indices, func, dnums,
                                  update_shape=core.get_aval(y).shape, **kwargs)
    zero = Array(np.zeros((), core.get_aval(self.array).dtype))
    return self._update("apply", zero, scatter_apply, indices_are_sorted, unique_indices,
                        mode, None, wrap_negative_indices)


def _laid_out(x, sharding):
  """``x`` laid out as the canonical ``out_sharding`` ``sharding`` says (None: as it is)."""
  return x if sharding is None else sharding_constraint.constrain(x, sharding)


def at(self):
  return _IndexUpdateHelper(self)


at.__doc__ = _IndexUpdateHelper.__doc__


# ----------------------------------------------------------------------------- jnp

@staged(static_argnames=("axis", "out", "mode", "unique_indices", "indices_are_sorted",
                         "fill_value"), name="_take")
def take(a, indices, axis=None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):
  """Take elements of ``a`` at ``indices`` along ``axis`` (``numpy.take``).

  Parameters
  ----------
  a : array_like
  indices : array_like of int
  axis : int, optional
    The axis to take along; None (the default) takes from the flattened array.
  mode : {'fill', 'clip', 'wrap'}, optional
    Unlike NumPy (which raises), the default 'fill' returns ``fill_value`` for
    out-of-bounds indices (NaN for inexact types, the minimum of signed integers, the
    maximum of unsigned ones, True for booleans). Negative indices wrap once.
  fill_value : scalar, optional
  unique_indices, indices_are_sorted : bool
    Promises that may speed up some backends (not checked).

  Returns
  -------
  Array

  Examples
  --------
  >>> import jaxlite.numpy as jnp
  >>> x = jnp.array([[1., 2., 3.], [4., 5., 6.]])
  >>> jnp.take(x, jnp.array([2, 0]), axis=1)
  Array([[3., 1.],
         [6., 4.]], dtype=float32)
  >>> jnp.take(x, jnp.array([7, -1]))
  Array([nan,  6.], dtype=float32)
  """
  if out is not None:
    raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
  check_arraylike("take", a, indices)
  a, indices = as_operand(a), as_operand(indices)
  if axis is None:
    a = lax_shapes.reshape(a, (a.size,))
    axis = 0
  else:
    axis = canonicalize_axis(operator.index(axis), a.ndim)
  if mode is None or mode == "fill":
    gather_mode = GatherScatterMode.FILL_OR_DROP
    indices = lax_ew.select(ufuncs.less(indices, 0), ufuncs.add(indices, a.shape[axis]),
                            indices)
  elif mode == "raise":
    raise NotImplementedError("The 'raise' mode to jnp.take is not supported.")
  elif mode == "wrap":
    indices = ufuncs.remainder(indices, _const_like(indices, a.shape[axis]))
    gather_mode = GatherScatterMode.PROMISE_IN_BOUNDS
  elif mode == "clip":
    gather_mode = GatherScatterMode.CLIP
  else:
    raise ValueError(f"Invalid mode '{mode}' for np.take")
  slice_sizes = list(a.shape)
  if slice_sizes[axis] == 0:
    if indices.size:
      raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
    return a
  out_shape = a.shape[:axis] + indices.shape + a.shape[axis + 1:]
  if indices.size == 0:
    return _zeros(a, out_shape)
  slice_sizes[axis] = 1
  nidx = indices.ndim
  dnums = lax_ix.GatherDimensionNumbers(
      offset_dims=tuple(range(axis)) + tuple(range(axis + nidx, a.ndim + nidx - 1)),
      collapsed_slice_dims=(axis,), start_index_map=(axis,))
  return lax_ix.gather(a, lax_shapes.expand_dims(indices, (nidx,)), dnums, slice_sizes,
                       mode=gather_mode, unique_indices=unique_indices,
                       indices_are_sorted=indices_are_sorted, fill_value=fill_value)


@staged(static_argnames=("axis", "mode", "fill_value", "wrap_negative_indices"))
def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None, *,
                    wrap_negative_indices=None):
  """Take ``arr``'s values at ``indices`` along ``axis`` (``numpy.take_along_axis``).

  ``indices`` has ``arr``'s rank and broadcasts against it along the other axes.
  Out-of-bounds indices give ``fill_value`` by default (``mode='fill'``, see
  :func:`take`); ``mode='clip'`` clamps them. Negative indices wrap once when
  ``wrap_negative_indices`` is True; ``False`` treats them as out of bounds, and ``None``
  (JAX's legacy default) wraps except under ``mode='promise_in_bounds'``.

  Examples
  --------
  >>> import jaxlite.numpy as jnp
  >>> x = jnp.array([[5, 3, 4], [2, 7, 6]])
  >>> jnp.take_along_axis(x, jnp.array([[1], [0]]), axis=1)
  Array([[3],
         [2]], dtype=int32)
  """
  check_arraylike("take_along_axis", arr, indices)
  a, indices = as_operand(arr), as_operand(indices)
  if not dtypes.issubdtype(indices.dtype, np.integer):
    raise TypeError(f"take_along_axis indices must be of integer type, got {indices.dtype}")
  if axis is None:
    if indices.ndim != 1:
      raise ValueError(f"take_along_axis indices must be 1D if axis=None, got shape "
                       f"{indices.shape}")
    a, axis = lax_shapes.reshape(a, (a.size,)), 0
  if a.ndim != indices.ndim:
    raise ValueError(f"indices and arr must have the same number of dimensions; "
                     f"{indices.ndim} vs. {a.ndim}")
  axis = canonicalize_axis(axis, a.ndim)
  arr_shape = tuple(1 if d == axis else s for d, s in enumerate(a.shape))
  out_shape = np.broadcast_shapes(indices.shape, arr_shape)
  if a.shape[axis] == 0:
    return _zeros(Array(np.zeros((), a.dtype)), out_shape)
  if wrap_negative_indices is None:
    wrap_negative_indices = mode != "promise_in_bounds"
  if wrap_negative_indices:
    index_dtype = np.dtype(np.int32 if a.shape[axis] <= np.iinfo(np.int32).max else np.int64)
    indices = _normalize(lax_ew.convert_element_type(indices, index_dtype), a.shape[axis])
  # Axes where the index has size 1 take all of arr (a window axis); axes where arr has
  # size 1 are squeezed away; the rest are gathered in lockstep (batching axes).
  index_dims = [d for d, n in enumerate(indices.shape) if d == axis or n != 1]
  slice_sizes, offset_dims, start_index_map, collapsed = [], [], [], []
  operand_bdims, index_bdims, squeezed = [], [], []
  new_d = j = 0
  for d in range(a.ndim):
    if d == axis:
      slice_sizes.append(1), start_index_map.append(new_d), collapsed.append(new_d)
      new_d, j = new_d + 1, j + 1
    elif indices.shape[d] == 1:
      offset_dims.append(d), slice_sizes.append(arr_shape[d])
      new_d += 1
    elif arr_shape[d] == 1:
      squeezed.append(d)
      j += 1
    else:
      slice_sizes.append(0 if arr_shape[d] == 0 else 1)
      operand_bdims.append(new_d), index_bdims.append(j)
      new_d, j = new_d + 1, j + 1
  gather_indices = lax_shapes.reshape(indices, tuple(out_shape[d] for d in index_dims) + (1,))
  dnums = lax_ix.GatherDimensionNumbers(tuple(offset_dims), tuple(collapsed),
                                        tuple(start_index_map), tuple(operand_bdims),
                                        tuple(index_bdims))
  return lax_ix.gather(lax_shapes.squeeze(a, squeezed), gather_indices, dnums,
                       tuple(slice_sizes), mode="fill" if mode is None else mode,
                       fill_value=fill_value)


def unstack(x, /, *, axis=0):
  """Split ``x`` along ``axis`` into a tuple of arrays with that axis removed."""
  (x,) = ensure_arraylike("unstack", x)
  if x.ndim == 0:
    raise ValueError("Unstack requires arrays with rank > 0, however a scalar array was "
                     "passed.")
  axis = canonicalize_axis(axis, x.ndim)
  return tuple(take(x, i, axis=axis) for i in range(x.shape[axis]))


def ix_(*args):
  """Open meshes from 1-D index arrays: ``a[ix_(rows, cols)]`` selects a cross product."""
  out = []
  for i, a in enumerate(args):
    (a,) = ensure_arraylike("ix_", a)
    if a.ndim != 1:
      raise ValueError(f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape "
                       f"{a.shape}")
    if a.dtype == np.bool_:
      raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
    shape = [1] * len(args)
    shape[i] = a.shape[0]
    out.append(lax_numpy.reshape(a, shape))
  return tuple(out)


def choose(a, choices, out=None, mode="raise"):
  """Pick ``choices[a[i]][i]`` elementwise. ``mode='raise'`` cannot raise on traced
  indices, so (as in JAX) it behaves like ``'clip'`` under ``jit``, ``'wrap'`` and
  ``'clip'`` are as in NumPy."""
  if out is not None:
    raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
  (a,) = ensure_arraylike("choose", a)
  choices = [as_operand(c) for c in choices]
  n = len(choices)
  if mode == "raise":
    if not isinstance(a, Tracer) and (np.any(np.asarray(a) < 0)
                                      or np.any(np.asarray(a) >= n)):
      raise ValueError("invalid entry in choice array")
    a = ufuncs.clip(a, 0, n - 1)
  elif mode == "wrap":
    a = ufuncs.mod(a, n)
  elif mode == "clip":
    a = ufuncs.clip(a, 0, n - 1)
  else:
    raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
  a, *choices = lax_numpy.broadcast_arrays(a, *choices)
  return take_along_axis(lax_numpy.stack(choices, 0), a[None], axis=0)[0]


# -- flat indices and index tuples
def ravel_multi_index(multi_index, dims, mode="raise", order="C", *, dtype=None):
  """Flat indices from a tuple of index arrays (``numpy.ravel_multi_index``), of ``dtype``
  (by default the indices' promoted integer type). ``mode`` is 'raise' (concrete indices
  only), 'wrap', 'clip' or 'ignore'; ``order`` is 'C' or 'F'."""
  if len(multi_index) != len(dims):
    raise ValueError(f"len(multi_index)={len(multi_index)} != len(dims)={len(dims)}")
  dims = tuple(core.concrete_or_error(operator.index, d,
                                      "in `dims` argument of ravel_multi_index().")
               for d in dims)
  indices = ensure_arraylike("ravel_multi_index", *multi_index)
  dtype = (dtypes.result_type(int, *indices) if dtype is None
           else dtypes.canonicalize_dtype(dtype))
  if not dtypes.issubdtype(dtype, np.integer):
    raise ValueError(f"dtype={dtype!r} is not an integer type.")
  if math.prod(dims) - 1 > dtypes.iinfo(dtype).max:
    raise ValueError(f"jnp.ravel_multi_index: dtype={dtype!r} not large enough to hold "
                     f"flattened index for dims={dims}. Use the dtype argument to pass a "
                     "suitable dtype (e.g. dtype=np.min_scalar_type(prod(dims))).")
  for index in indices:
    if mode == "raise":
      core.concrete_or_error(np.asarray, index, "The error occurred because "
                             "ravel_multi_index was jit-compiled with mode='raise'. Use "
                             "mode='wrap' or mode='clip' instead.")
    if not dtypes.issubdtype(index.dtype, np.integer):
      raise TypeError("only int indices permitted")
  if mode == "raise":
    if any(np.any((np.asarray(i) < 0) | (np.asarray(i) >= d)) for i, d in zip(indices, dims)):
      raise ValueError("invalid entry in coordinates array")
  elif mode == "clip":
    indices = [ufuncs.clip(i, 0, d - 1) for i, d in zip(indices, dims)]
  elif mode == "wrap":
    indices = [ufuncs.remainder(i, d) for i, d in zip(indices, dims)]
  elif mode != "ignore":
    raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or 'ignore'.")
  if order == "F":
    strides = np.cumprod((1,) + dims[:-1])
  elif order == "C":
    strides = np.cumprod((1,) + dims[1:][::-1])[::-1]
  else:
    raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
  out = creation.array(0, dtype=dtype)
  for i, stride in zip(indices, strides):
    out = ufuncs.add(out, ufuncs.multiply(lax_numpy.astype(i, dtype), int(stride)))
  return out


def unravel_index(indices, shape):
  """Index arrays from flat indices (``numpy.unravel_index``); out-of-range indices clip."""
  indices = as_operand(indices)
  shape = tuple(int(d) for d in shape)
  total = int(np.prod(shape, dtype=np.int64))
  wrapped = lax_numpy.where(ufuncs.less(indices, 0), ufuncs.add(indices, total), indices)
  indices = ufuncs.clip(wrapped, 0, builtins.max(total - 1, 0))
  out = []
  for d in reversed(shape):
    out.append(ufuncs.remainder(indices, d))
    indices = ufuncs.floor_divide(indices, d)
  return tuple(reversed(out))


class Slice:
  """``size`` elements from ``start``, ``stride`` apart, where ``start`` and ``size`` may
  be traced values (``jax.ds``'s result, as JAX's ``indexing.Slice``)."""
  __slots__ = ("start", "size", "stride")

  def __init__(self, start, size, stride=1):
    if stride < 0:
      raise ValueError("`stride` must be >= 0.")
    self.start, self.size, self.stride = start, size, stride

  def __repr__(self):
    return f"Slice(start={self.start!r}, size={self.size!r}, stride={self.stride!r})"

  def __eq__(self, other):
    return (type(other) is Slice and
            (self.start, self.size, self.stride) == (other.start, other.size, other.stride))

  __hash__ = None

  @property
  def is_dynamic_start(self):
    return not _is_int(self.start)

  @property
  def is_dynamic_size(self):
    return not _is_int(self.size)


def _flatten_slice(s):
  # a static start or size is part of the tree's structure, a traced one a leaf (JAX's)
  return ((s.start if s.is_dynamic_start else None, s.size if s.is_dynamic_size else None),
          (None if s.is_dynamic_start else s.start, None if s.is_dynamic_size else s.size,
           s.stride))


def _unflatten_slice(aux, children):
  start, size = (c if c is not None else a for c, a in zip(children, aux[:2]))
  return Slice(start, size, aux[2])


tree.register_pytree_node(Slice, _flatten_slice, _unflatten_slice)


def dslice(start, size=None, stride=None):
  """A slice whose start (and size) may be traced (``jax.ds``): ``dslice(None)`` is ``:``,
  ``dslice(j)`` is ``:j``, ``dslice(i, j)`` is ``i:i+j`` and ``dslice(i, j, s)`` is
  ``i:i+j:s`` taking ``j`` elements.

  Returns
  -------
  slice or Slice
    ``slice(None)`` for ``dslice(None)``, else a ``Slice``, which ``x[...]`` and
    ``x.at[...]`` take as an index.
  """
  if start is None:
    return slice(None)
  if stride is None:
    stride = 1
  if not isinstance(stride, int):
    raise ValueError("Non-static stride in `dslice`")
  if size is None:
    start, size = 0, start
  return Slice(start, size, stride)
