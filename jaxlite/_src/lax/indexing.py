"""Gather and scatter: XLA's general indexing primitives, and the ``*_in_dim`` helpers.

``gather`` reads one window of ``slice_sizes`` per row of start indices; the scatters
write (or combine) one window of ``updates`` per row. Their params are those of JAX
(``GatherDimensionNumbers``, ``ScatterDimensionNumbers``, ``GatherScatterMode``), so
jaxprs print as JAX prints them. The index vector is always the last axis of the
indices, as in JAX.
"""
from __future__ import annotations

import enum
import functools
import operator
from typing import NamedTuple

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.core import extended
from jaxlite._src.core.array import Array
from jaxlite._src.core.core import Jaxpr, JaxprEqn, Primitive, ShapedArray, Var
from jaxlite._src.lax import elementwise as lax_ew
from jaxlite._src.lax.base import operand as _operand
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.transforms import ad
from jaxlite._src.transforms import staging


class GatherScatterMode(enum.Enum):
  """How gather and scatter treat out-of-bounds indices.

  CLIP: indices are clamped so that the whole window is in bounds.
  FILL_OR_DROP: a gathered window that is partly out of bounds is filled with
    ``fill_value``; a scattered window that is partly out of bounds is dropped.
  PROMISE_IN_BOUNDS: the caller promises indices are in bounds; in practice gathers
    clamp and scatters drop, as XLA does.
  """
  CLIP = enum.auto()
  FILL_OR_DROP = enum.auto()
  PROMISE_IN_BOUNDS = enum.auto()

  @staticmethod
  def from_any(s) -> GatherScatterMode:
    """The mode named by ``s``: a mode, 'clip', 'fill', 'drop', 'promise_in_bounds' or None."""
    if isinstance(s, GatherScatterMode):
      return s
    if s == "clip":
      return GatherScatterMode.CLIP
    if s is None or s == "fill" or s == "drop":
      return GatherScatterMode.FILL_OR_DROP
    if s == "promise_in_bounds":
      return GatherScatterMode.PROMISE_IN_BOUNDS
    raise ValueError(f'Unknown gather mode "{s}"')


class GatherDimensionNumbers(NamedTuple):
  """How the axes of a gather's operand, indices and output correspond.

  offset_dims: output axes that hold the (uncollapsed) window axes, in order.
  collapsed_slice_dims: operand axes whose window has size 1 and is dropped.
  start_index_map: the operand axis that each entry of an index vector starts.
  operand_batching_dims / start_indices_batching_dims: operand axes that are indexed
    in lockstep with the matching axes of the indices (no index vector entry).
  """
  offset_dims: tuple
  collapsed_slice_dims: tuple
  start_index_map: tuple
  operand_batching_dims: tuple = ()
  start_indices_batching_dims: tuple = ()


class ScatterDimensionNumbers(NamedTuple):
  """How the axes of a scatter's operand, indices and updates correspond.

  update_window_dims: axes of ``updates`` that are window axes.
  inserted_window_dims: operand axes whose window has size 1 and is absent in updates.
  scatter_dims_to_operand_dims: the operand axis each entry of an index vector starts.
  operand_batching_dims / scatter_indices_batching_dims: as for gather.
  """
  update_window_dims: tuple
  inserted_window_dims: tuple
  scatter_dims_to_operand_dims: tuple
  operand_batching_dims: tuple = ()
  scatter_indices_batching_dims: tuple = ()


def _static_dnums(cls, dnums):
  # Params go into cache keys and jaxpr text, so every field is a tuple of ints.
  try:
    return cls(*(tuple(operator.index(d) for d in field) for field in dnums))
  except TypeError:
    raise TypeError(f"{cls.__name__} fields must be tuples of static ints, got "
                    f"{dnums!r}.") from None


# ----------------------------------------------------------------------------- checks

def _sorted(dims, op, name):
  if list(dims) != sorted(dims):
    raise TypeError(f"{name} in {op} op must be sorted; got {dims}")


def _unique(dims, op, name):
  if len(set(dims)) != len(dims):
    raise TypeError(f"{name} in {op} op must not repeat; got: {dims}.")


def _in_range(dims, rank, op, name):
  for d in dims:
    if not 0 <= d < rank:
      raise TypeError(f"Invalid {name} set in {op} op; valid range is [0, {rank}); "
                      f"got: {d}.")


def _disjoint(a, b, op, name_a, name_b):
  if set(a) & set(b):
    raise TypeError(f"{name_a} and {name_b} in {op} op must be disjoint; got: {a} and {b}.")


def _check_index_dtype(op, indices):
  if not dtypes.issubdtype(indices.dtype, np.integer):
    raise ValueError(f"{op} indices must have an integer type, got {indices.dtype.name}.")
  if not indices.ndim:
    raise TypeError(f"{op} indices must have rank >= 1 (the last axis is the index "
                    "vector), got a scalar.")


def _check_batching(op, operand, indices, operand_bdims, index_bdims, index_name):
  _sorted(operand_bdims, op, "operand_batching_dims")
  _unique(operand_bdims, op, "operand_batching_dims")
  _in_range(operand_bdims, operand.ndim, op, "operand_batching_dims")
  _unique(index_bdims, op, index_name)
  _in_range(index_bdims, indices.ndim - 1, op, index_name)
  if len(operand_bdims) != len(index_bdims):
    raise TypeError(f"{op.capitalize()} op requires equal numbers of operand_batching_dims "
                    f"and {index_name}, got {operand_bdims} and {index_bdims}.")
  op_shape = tuple(operand.shape[d] for d in operand_bdims)
  idx_shape = tuple(indices.shape[d] for d in index_bdims)
  if op_shape != idx_shape:
    raise TypeError(f"{op.capitalize()} op requires operand batching dimensions and indices "
                    f"batching dimensions to have the same shape, got {op_shape} and "
                    f"{idx_shape}.")


# ----------------------------------------------------------------------------- gather

gather_p = Primitive("gather")


@gather_p.def_abstract_eval
def _gather_rule(operand, indices, *, dimension_numbers, slice_sizes, indices_are_sorted,
                 unique_indices, mode, fill_value):
  _check_index_dtype("gather", indices)
  dn = dimension_numbers
  batch_shape = indices.shape[:-1]
  out_rank = len(dn.offset_dims) + len(batch_shape)
  _sorted(dn.offset_dims, "gather", "offset_dims")
  _unique(dn.offset_dims, "gather", "offset_dims")
  _in_range(dn.offset_dims, out_rank, "gather", "offset_dims")
  if len(dn.start_index_map) != indices.shape[-1]:
    raise TypeError(f"Gather op has {len(dn.start_index_map)} elements in start_index_map "
                    f"and the bound of the index vector dimension of indices is "
                    f"{indices.shape[-1]}. These two numbers must be equal.")
  _in_range(dn.start_index_map, operand.ndim, "gather", "start_index_map")
  _unique(dn.start_index_map, "gather", "start_index_map")
  _sorted(dn.collapsed_slice_dims, "gather", "collapsed_slice_dims")
  _in_range(dn.collapsed_slice_dims, operand.ndim, "gather", "collapsed_slice_dims")
  _unique(dn.collapsed_slice_dims, "gather", "collapsed_slice_dims")
  _check_batching("gather", operand, indices, dn.operand_batching_dims,
                  dn.start_indices_batching_dims, "start_indices_batching_dims")
  _disjoint(dn.collapsed_slice_dims, dn.operand_batching_dims, "gather",
            "collapsed_slice_dims", "operand_batching_dims")
  _disjoint(dn.start_index_map, dn.operand_batching_dims, "gather", "start_index_map",
            "operand_batching_dims")
  if len(slice_sizes) != operand.ndim:
    raise TypeError(f"Gather op must have one slice size for every input dimension; got: "
                    f"len(slice_sizes)={len(slice_sizes)}, input_shape.rank={operand.ndim}")
  if len(slice_sizes) != (len(dn.offset_dims) + len(dn.collapsed_slice_dims)
                          + len(dn.operand_batching_dims)):
    raise TypeError(f"All components of the offset index in a gather op must either be a "
                    f"offset dimension or explicitly collapsed/batching; got "
                    f"len(slice_sizes)={len(slice_sizes)}, output_slice_sizes="
                    f"{dn.offset_dims}, collapsed_slice_dims={dn.collapsed_slice_dims}, "
                    f"operand_batching_dims={dn.operand_batching_dims}.")
  for i, (size, dim) in enumerate(zip(slice_sizes, operand.shape)):
    if not 0 <= size <= dim and 0 not in indices.shape:
      raise TypeError(f"Slice size at index {i} in gather op is out of range, must be "
                      f"within [0, {dim} + 1), got {size}.")
  for i, d in enumerate(dn.collapsed_slice_dims):
    if slice_sizes[d] != 1:
      raise TypeError(f"Gather op can only collapse slice dims with bound 1, but bound is "
                      f"{slice_sizes[d]} for index {d} at position {i}.")
  for i, d in enumerate(dn.operand_batching_dims):
    if slice_sizes[d] > 1:
      raise TypeError(f"Gather op can only have operand batching dims with bound 0/1, but "
                      f"bound is {slice_sizes[d]} for index {d} at position {i}.")
  dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
  window = iter(s for d, s in enumerate(slice_sizes) if d not in dropped)
  batch = iter(batch_shape)
  shape = [next(window) if i in dn.offset_dims else next(batch) for i in range(out_rank)]
  return ShapedArray(shape, operand.dtype, operand.weak_type)


def _default_fill_value(dtype):
  """What an out-of-bounds FILL_OR_DROP gather reads: NaN, or the most extreme int (in
  every word of a PRNG key, as of its uint32 data)."""
  if dtypes.is_extended(dtype):
    dtype = extended.physical_element_aval(dtype).dtype
  if dtypes.is_inexact(dtype):
    return np.nan
  if dtype == np.bool_:
    return True
  info = dtypes.iinfo(dtype)
  return int(info.min) if dtypes.issubdtype(dtype, np.signedinteger) else int(info.max)


def gather(operand, start_indices, dimension_numbers, slice_sizes, *,
           unique_indices=False, indices_are_sorted=False, mode=None, fill_value=None):
  """XLA's gather: one window of ``slice_sizes`` per index vector of ``start_indices``.

  Parameters
  ----------
  operand : array
    The array to read from.
  start_indices : integer array
    Its last axis holds the index vectors; the leading axes are batch axes.
  dimension_numbers : GatherDimensionNumbers
    How the operand, index and output axes correspond.
  slice_sizes : tuple of int
    The window size along each operand axis.
  unique_indices, indices_are_sorted : bool
    Promises that may speed up some backends (not checked).
  mode : str or GatherScatterMode, optional
    Out-of-bounds handling; the default (None) is PROMISE_IN_BOUNDS, which clamps.
  fill_value : scalar, optional
    The value of out-of-bounds windows under FILL_OR_DROP; defaults to NaN for
    inexact types, the minimum for signed integers, the maximum for unsigned ones and
    True for booleans.

  Returns
  -------
  Array

  Examples
  --------
  >>> import jaxlite.numpy as jnp
  >>> from jaxlite import lax
  >>> dn = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,),
  ...                                 start_index_map=(0,))
  >>> lax.gather(jnp.arange(10, 15), jnp.array([[4], [0]]), dn, (1,))
  Array([14, 10], dtype=int32)
  """
  parsed = GatherScatterMode.from_any(
      GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else mode)
  if parsed == GatherScatterMode.FILL_OR_DROP:
    if fill_value is None:
      fill_value = _default_fill_value(core.get_aval(operand).dtype)
  else:
    fill_value = None
  return gather_p.bind(
      operand, start_indices,
      dimension_numbers=_static_dnums(GatherDimensionNumbers, dimension_numbers),
      slice_sizes=lax_shapes._ints("gather", slice_sizes),
      indices_are_sorted=bool(indices_are_sorted), unique_indices=bool(unique_indices),
      mode=parsed, fill_value=fill_value)


# ----------------------------------------------------------------------------- scatter

def _scatter_rule(operand, indices, updates, *, dimension_numbers, indices_are_sorted,
                  unique_indices, mode, update_jaxpr, update_consts):
  _check_index_dtype("scatter", indices)
  if updates.dtype != operand.dtype:
    raise TypeError(f"lax.scatter requires arguments to have the same dtypes, got "
                    f"{operand.dtype.name}, {updates.dtype.name}.")
  dn = dimension_numbers
  scatter_rank = indices.ndim - 1
  if updates.ndim != scatter_rank + len(dn.update_window_dims):
    raise TypeError(f"Updates tensor must be of rank "
                    f"{scatter_rank + len(dn.update_window_dims)}; got {updates.ndim}.")
  _sorted(dn.update_window_dims, "scatter", "update_window_dims")
  _unique(dn.update_window_dims, "scatter", "update_window_dims")
  _in_range(dn.update_window_dims, updates.ndim, "scatter", "update_window_dims")
  _sorted(dn.inserted_window_dims, "scatter", "inserted_window_dims")
  _unique(dn.inserted_window_dims, "scatter", "inserted_window_dims")
  _in_range(dn.inserted_window_dims, operand.ndim, "scatter", "inserted_window_dims")
  _check_batching("scatter", operand, indices, dn.operand_batching_dims,
                  dn.scatter_indices_batching_dims, "scatter_indices_batching_dims")
  _disjoint(dn.inserted_window_dims, dn.operand_batching_dims, "scatter",
            "inserted_window_dims", "operand_batching_dims")
  _disjoint(dn.scatter_dims_to_operand_dims, dn.operand_batching_dims, "scatter",
            "scatter_dims_to_operand_dims", "operand_batching_dims")
  window_size = (len(dn.update_window_dims) + len(dn.inserted_window_dims)
                 + len(dn.operand_batching_dims))
  if window_size != operand.ndim:
    raise TypeError(f"Scatter op has window of size {window_size}; doesn't match operand "
                    f"of rank {operand.ndim}.")
  if len(dn.scatter_dims_to_operand_dims) != indices.shape[-1]:
    raise TypeError(f"Scatter op has {len(dn.scatter_dims_to_operand_dims)} elements in "
                    f"scatter_dims_to_operand_dims and the bound of the index vector "
                    f"dimension of indices is {indices.shape[-1]}. These two numbers must "
                    "be equal")
  _in_range(dn.scatter_dims_to_operand_dims, operand.ndim, "scatter",
            "scatter_dims_to_operand_dims")
  _unique(dn.scatter_dims_to_operand_dims, "scatter", "scatter_dims_to_operand_dims")
  dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
  window_bounds = [s for d, s in enumerate(operand.shape) if d not in dropped]
  for bound, u in zip(window_bounds, dn.update_window_dims):
    if updates.shape[u] > bound:
      raise TypeError(f"Bounds of the window dimensions of updates must not exceed the "
                      f"bounds of the corresponding dimensions of operand. For dimension "
                      f"{u}, updates bound is {updates.shape[u]}, operand bound is {bound}.")
  scatter_dims = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
  for d, bound in zip(scatter_dims, indices.shape[:-1]):
    if updates.shape[d] != bound:
      raise TypeError(f"Bounds of the scatter dimensions of updates must be the same as the "
                      f"bounds of the corresponding dimensions of scatter indices. For "
                      f"scatter dimension {d}, updates bound is {updates.shape[d]}, indices "
                      f"bound is {bound}.")
  return operand.update(weak_type=operand.weak_type and updates.weak_type)


def _scatter_prim(name, arithmetic=None) -> Primitive:
  """A scatter primitive; one that combines with ``arithmetic`` rejects booleans, as
  that lax operation does (JAX's message)."""
  prim = Primitive(name)

  def rule(operand, *args, **params):
    if arithmetic is not None and operand.dtype == np.bool_:
      raise TypeError(f"{arithmetic} does not accept dtype bool at position 0. Accepted "
                      "dtypes at position 0 are subtypes of integer, floating, "
                      "complexfloating.")
    return _scatter_rule(operand, *args, **params)
  prim.def_abstract_eval(rule)
  return prim


scatter_p = _scatter_prim("scatter")
scatter_add_p = _scatter_prim("scatter-add", "add")
scatter_sub_p = _scatter_prim("scatter-sub", "sub")
scatter_mul_p = _scatter_prim("scatter-mul", "mul")
scatter_min_p = _scatter_prim("scatter-min")
scatter_max_p = _scatter_prim("scatter-max")

# The combining function each scatter prints as its ``update_jaxpr``, as JAX does.
_COMBINERS = {scatter_add_p: lax_ew.add_p, scatter_sub_p: lax_ew.sub_p,
              scatter_mul_p: lax_ew.mul_p, scatter_min_p: lax_ew.min_p,
              scatter_max_p: lax_ew.max_p}


@functools.lru_cache(maxsize=None)
def _combiner_jaxpr(prim, dtype) -> Jaxpr:
  # Cached so that equal scatters carry the same (identity-hashed) jaxpr param.
  aval = ShapedArray((), dtype)
  x, y, out = Var(aval), Var(aval), Var(aval)
  return Jaxpr([], [x, y], [out], [JaxprEqn([x, y], [out], _COMBINERS[prim], {})])


def _scatter(prim, operand, scatter_indices, updates, dimension_numbers,
             indices_are_sorted, unique_indices, mode, update_jaxpr=None, update_consts=()):
  if prim in _COMBINERS:
    update_jaxpr = _combiner_jaxpr(prim, np.dtype(core.get_aval(operand).dtype))
  return prim.bind(
      operand, scatter_indices, updates,
      dimension_numbers=_static_dnums(ScatterDimensionNumbers, dimension_numbers),
      indices_are_sorted=bool(indices_are_sorted), unique_indices=bool(unique_indices),
      mode=GatherScatterMode.from_any(mode), update_jaxpr=update_jaxpr,
      update_consts=tuple(update_consts))


def _scatter_api(prim, what):
  def fun(operand, scatter_indices, updates, dimension_numbers, *,
          indices_are_sorted=False, unique_indices=False, mode=None):
    return _scatter(prim, operand, scatter_indices, updates, dimension_numbers,
                    indices_are_sorted, unique_indices, mode)
  fun.__name__ = prim.name.replace("-", "_")
  fun.__doc__ = f"""XLA's scatter: {what}.

  Parameters
  ----------
  operand : array
    The array to update (it is not modified; a new array is returned).
  scatter_indices : integer array
    Its last axis holds the index vectors; the leading axes are scatter axes.
  updates : array
    Scatter axes (matching the leading axes of ``scatter_indices``) and window axes.
  dimension_numbers : ScatterDimensionNumbers
    How the operand, index and update axes correspond.
  indices_are_sorted, unique_indices : bool
    Promises that may speed up some backends (not checked).
  mode : str or GatherScatterMode, optional
    Out-of-bounds handling; the default (None) is FILL_OR_DROP: a window that is partly
    out of bounds is dropped. 'clip' clamps it into bounds.

  Returns
  -------
  Array
    ``operand`` with the updates applied.
  """
  return fun


scatter = _scatter_api(scatter_p, "``operand`` with windows replaced by ``updates`` (where "
                       "indices repeat, one of the updates wins)")
scatter_add = _scatter_api(scatter_add_p, "``operand`` with ``updates`` added at the indices "
                           "(repeated indices accumulate)")
scatter_sub = _scatter_api(scatter_sub_p, "``operand`` with ``updates`` subtracted at the "
                           "indices (repeated indices accumulate)")
scatter_mul = _scatter_api(scatter_mul_p, "``operand`` multiplied by ``updates`` at the "
                           "indices (repeated indices accumulate)")
scatter_min = _scatter_api(scatter_min_p, "the minimum of ``operand`` and ``updates`` at "
                           "the indices")
scatter_max = _scatter_api(scatter_max_p, "the maximum of ``operand`` and ``updates`` at "
                           "the indices")


def scatter_apply(operand, scatter_indices, func, dimension_numbers, *, update_shape=(),
                  indices_are_sorted=False, unique_indices=False, mode=None):
  """``operand`` with the unary ``func`` applied at the indices, once per occurrence.

  ``func`` is traced on a scalar of ``operand``'s dtype; it is carried as the scatter's
  ``update_jaxpr``, so it must not close over traced values.
  """
  aval = ShapedArray((), core.get_aval(operand).dtype)
  closed = staging.trace_to_jaxpr(lambda x, _: [func(x)], [aval, aval])
  if any(isinstance(c, core.Tracer) for c in closed.consts):
    raise TypeError("scatter_apply: func closes over a traced value; pass it through "
                    "the indexed array instead.")
  unused = lax_shapes.broadcast_in_dim(np.zeros((), aval.dtype), tuple(update_shape), ())
  return _scatter(scatter_p, operand, scatter_indices, unused, dimension_numbers,
                  indices_are_sorted, unique_indices, mode, closed.jaxpr, closed.consts)


# ----------------------------------------------------------------------------- autodiff
# Indices are integers, so only operand and updates carry tangents. Gather and the
# additive scatters are linear; set, mul, min and max are linear in the tangents once the
# winning updates are known, and the rules below express them that way.

def _gather_jvp(primals, tangents, **params):
  operand, indices = primals
  out = gather_p.bind(operand, indices, **params)
  if type(tangents[0]) is ad.Zero:
    return out, ad.Zero(ad.tangent_aval(core.get_aval(out)))
  fill = 0 if params["mode"] == GatherScatterMode.FILL_OR_DROP else None
  return out, gather_p.bind(tangents[0], indices, **{**params, "fill_value": fill})


def _gather_transpose(ct, operand, indices, *, dimension_numbers, slice_sizes,
                      indices_are_sorted, unique_indices, mode, fill_value):
  dn = dimension_numbers
  sdn = ScatterDimensionNumbers(dn.offset_dims, dn.collapsed_slice_dims, dn.start_index_map,
                                dn.operand_batching_dims, dn.start_indices_batching_dims)
  ct = ad.instantiate(ct)
  out = _scatter(scatter_add_p, ad.zeros_like_aval(operand.aval), indices, ct, sdn,
                 indices_are_sorted, unique_indices, mode)
  return [out, None]


ad.jvp_rules[gather_p] = _gather_jvp
ad.transpose_rules[gather_p] = _gather_transpose


def _gather_back(x, indices, updates_shape, dn, mode):
  """Each update's window of ``x``: the gather that reads what a scatter writes."""
  gdn = GatherDimensionNumbers(dn.update_window_dims, dn.inserted_window_dims,
                               dn.scatter_dims_to_operand_dims, dn.operand_batching_dims,
                               dn.scatter_indices_batching_dims)
  dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
  window = iter(updates_shape[d] for d in dn.update_window_dims)
  sizes = [1 if d in dropped else next(window) for d in range(core.get_aval(x).ndim)]
  mode = GatherScatterMode.CLIP if mode == GatherScatterMode.CLIP else \
      GatherScatterMode.FILL_OR_DROP
  return gather(x, indices, gdn, sizes, mode=mode, fill_value=0)


def _aval_of(x):
  return x.aval if ad.is_undefined(x) else core.get_aval(x)


def _additive_scatter_transpose(negate):
  def rule(ct, operand, indices, updates, *, dimension_numbers, mode, **params):
    ct = ad.instantiate(ct)
    operand_ct = ct if ad.is_undefined(operand) else None
    updates_ct = None
    if ad.is_undefined(updates):
      updates_ct = _gather_back(ct, indices, updates.aval.shape, dimension_numbers, mode)
      updates_ct = lax_ew.neg(updates_ct) if negate else updates_ct
    return [operand_ct, None, updates_ct]
  return rule


def _scatter_jvp(prim, tangent, instantiate=True):
  """The JVP rule every scatter shares: bind ``prim`` on the primals, a symbolic zero when
  neither the operand nor the updates carry a tangent, else
  ``tangent(out, operand, indices, updates, t_operand, t_updates, **params)`` (the two
  tangents instantiated unless ``instantiate`` is False)."""
  def rule(primals, tangents, **params):
    operand, indices, updates = primals
    out = prim.bind(operand, indices, updates, **params)
    t_op, _, t_up = tangents
    if type(t_op) is ad.Zero and type(t_up) is ad.Zero:
      return out, ad.Zero(ad.tangent_aval(core.get_aval(out)))
    if instantiate:
      t_op, t_up = ad.instantiate(t_op), ad.instantiate(t_up)
    return out, tangent(out, operand, indices, updates, t_op, t_up, **params)
  return rule


def _additive_scatter_tangent(prim):
  return lambda out, operand, indices, updates, t_op, t_up, **params: prim.bind(
      t_op, indices, t_up, **params)


for _prim, _negate in [(scatter_add_p, False), (scatter_sub_p, True)]:
  ad.jvp_rules[_prim] = _scatter_jvp(_prim, _additive_scatter_tangent(_prim))
  ad.transpose_rules[_prim] = _additive_scatter_transpose(_negate)


def _scatter_params(params):
  return dict(dimension_numbers=params["dimension_numbers"],
              indices_are_sorted=params["indices_are_sorted"],
              unique_indices=params["unique_indices"], mode=params["mode"])


def _scatter_set_tangent(out, operand, indices, updates, t_op, t_up, **params):
  if params["unique_indices"]:
    return scatter_p.bind(t_op, indices, t_up, **params)
  # Where indices repeat, one update wins: scatter update ids the same way to find it,
  # then the tangent is a scatter-add of the winners onto the untouched operand.
  dn, mode = params["dimension_numbers"], params["mode"]
  up_shape = core.get_aval(updates).shape
  ids_shape = [1 if d in dn.update_window_dims else n for d, n in enumerate(up_shape)]
  ids = lax_ew.add(lax_shapes.reshape(lax_shapes.iota(np.int32, int(np.prod(ids_shape))),
                                      ids_shape), np.int32(1))
  ids = lax_shapes.broadcast_in_dim(ids, up_shape, range(len(up_shape)))
  zeros = lax_shapes.broadcast_in_dim(np.int32(0), core.get_aval(operand).shape, ())
  scattered = _scatter(scatter_p, zeros, indices, ids, dn, params["indices_are_sorted"],
                       False, mode)
  won = lax_ew.eq(ids, _gather_back(scattered, indices, up_shape, dn, mode))
  untouched = lax_ew.eq(scattered, np.int32(0))
  t_kept = lax_ew.select(untouched, t_op, ad.zeros_like_aval(core.get_aval(t_op)))
  t_won = lax_ew.select(won, t_up, ad.zeros_like_aval(core.get_aval(t_up)))
  return _scatter(scatter_add_p, t_kept, indices, t_won, dn, params["indices_are_sorted"],
                  False, mode)


def _scatter_set_jvp(primals, tangents, **params):
  if params["update_jaxpr"] is not None:
    raise NotImplementedError("Differentiation of x.at[idx].apply (scatter with an "
                              "update_jaxpr) is not implemented.")
  return _scatter_set_rule(primals, tangents, **params)


_scatter_set_rule = _scatter_jvp(scatter_p, _scatter_set_tangent)


def _scatter_set_transpose(ct, operand, indices, updates, *, dimension_numbers, mode,
                           unique_indices, **params):
  if not unique_indices:
    raise NotImplementedError("scatter transpose is only implemented where "
                              "unique_indices=True")
  ct = ad.instantiate(ct)
  up_aval = _aval_of(updates)
  operand_ct = updates_ct = None
  if ad.is_undefined(operand):
    operand_ct = _scatter(scatter_p, ct, indices, ad.zeros_like_aval(up_aval),
                          dimension_numbers, params["indices_are_sorted"], True, mode)
  if ad.is_undefined(updates):
    updates_ct = _gather_back(ct, indices, up_aval.shape, dimension_numbers, mode)
  return [operand_ct, None, updates_ct]


ad.jvp_rules[scatter_p] = _scatter_set_jvp
ad.transpose_rules[scatter_p] = _scatter_set_transpose


def _scatter_mul_tangent(out, operand, indices, updates, t_op, t_up, **params):
  tangent = ad.Zero(ad.tangent_aval(core.get_aval(out)))
  if type(t_op) is not ad.Zero:
    tangent = scatter_mul_p.bind(t_op, indices, updates, **params)
  if type(t_up) is not ad.Zero:
    if not params["unique_indices"]:
      raise NotImplementedError("scatter_mul gradients are only implemented if "
                                "`unique_indices=True`")
    spread = _scatter(scatter_add_p, ad.zeros_like_aval(core.get_aval(operand)), indices,
                      t_up, **_scatter_params(params))
    tangent = ad.add_tangents(tangent, lax_ew.mul(operand, spread))
  return tangent


def _scatter_mul_transpose(ct, operand, indices, updates, **params):
  if ad.is_undefined(updates):
    raise NotImplementedError("scatter_mul gradients with respect to updates are only "
                              "implemented through its JVP with `unique_indices=True`.")
  return [scatter_mul_p.bind(ad.instantiate(ct), indices, updates, **params), None, None]


ad.jvp_rules[scatter_mul_p] = _scatter_jvp(scatter_mul_p, _scatter_mul_tangent,
                                          instantiate=False)
ad.transpose_rules[scatter_mul_p] = _scatter_mul_transpose


def _scatter_extremal_tangent(out, operand, indices, updates, t_op, t_up, **params):
  """min/max: the tangent of each position averages those of every value that attains
  it."""
  dn, mode = params["dimension_numbers"], params["mode"]
  dtype = core.get_aval(out).dtype
  up_shape = core.get_aval(updates).shape
  won = lax_ew.convert_element_type(
      lax_ew.eq(updates, _gather_back(out, indices, up_shape, dn, mode)), dtype)
  kept = lax_ew.convert_element_type(lax_ew.eq(operand, out), dtype)
  count = _scatter(scatter_add_p, kept, indices, won, **_scatter_params(params))
  share = lax_ew.div(np.ones((), dtype), lax_ew.max(count, np.ones((), dtype)))
  t_kept = lax_ew.mul(t_op, lax_ew.mul(kept, share))
  t_won = lax_ew.mul(t_up, won)
  spread = _scatter(scatter_add_p, ad.zeros_like_aval(core.get_aval(operand)), indices,
                    t_won, **_scatter_params(params))
  return lax_ew.add(t_kept, lax_ew.mul(spread, share))


ad.jvp_rules[scatter_min_p] = _scatter_jvp(scatter_min_p, _scatter_extremal_tangent)
ad.jvp_rules[scatter_max_p] = _scatter_jvp(scatter_max_p, _scatter_extremal_tangent)


# ----------------------------------------------------------------------------- *_in_dim

def _axis(axis, ndim):
  return lax_shapes._canonical_axis(axis, ndim)


def _rows(tracer):
  """Iterating over a traced array: its rows, each a unit-stride slice and a squeeze, as
  JAX takes them."""
  return (index_in_dim(tracer, i, keepdims=False) for i in range(tracer.shape[0]))


core.aval_rules["iter"] = _rows


def index_in_dim(operand, index, axis=0, keepdims=True):
  """``operand[..., index, ...]`` along ``axis`` for a static ``index`` (negative wraps)."""
  shape = core.get_aval(operand).shape
  axis = _axis(axis, len(shape))
  index = operator.index(core.concrete_or_error(int, index, "index_in_dim index"))
  if not -shape[axis] <= index < shape[axis]:
    raise IndexError(f"index {index} is out of bounds for axis {axis} with size "
                     f"{shape[axis]}")
  index += shape[axis] if index < 0 else 0
  starts = tuple(index if d == axis else 0 for d in range(len(shape)))
  limits = tuple(index + 1 if d == axis else s for d, s in enumerate(shape))
  # JAX's slice_in_dim passes explicit unit strides, and its jaxprs print them.
  out = lax_shapes.slice_p.bind(operand, start_indices=starts, limit_indices=limits,
                                strides=(1,) * len(shape))
  return out if keepdims else lax_shapes.squeeze(out, (axis,))


def _zero_starts(index, ndim):
  dtype = dtypes.dtype(index, canonicalize=True)
  return [np.zeros((), dtype)[()] for _ in range(ndim)]


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *,
                         allow_negative_indices=True):
  """The ``slice_size`` elements from traced ``start_index`` along ``axis`` (clamped); a
  negative start counts from the end unless ``allow_negative_indices`` is False."""
  shape = core.get_aval(operand).shape
  axis = _axis(axis, len(shape))
  starts = _zero_starts(start_index, len(shape))
  starts[axis] = start_index
  sizes = list(shape)
  sizes[axis] = operator.index(slice_size)
  starts = [normalize_start(s, d, allow_negative_indices) for s, d in zip(starts, shape)]
  return dynamic_slice(operand, starts, sizes, allow_negative_indices=False)


def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *,
                         allow_negative_indices=True):
  """``operand[..., index, ...]`` along ``axis`` for a traced ``index`` (clamped). A
  Python int ``index`` is taken as a traced one too (JAX jits this function): a negative
  one that may not wrap is clamped, not refused."""
  out = dynamic_slice_in_dim(operand, _operand(index), 1, axis,
                             allow_negative_indices=allow_negative_indices)
  return out if keepdims else lax_shapes.squeeze(out, (axis,))


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *,
                                allow_negative_indices=True):
  """``operand`` with ``update`` written from traced ``start_index`` along ``axis``; a
  negative start counts from the end unless ``allow_negative_indices`` is False."""
  shape = core.get_aval(operand).shape
  axis = _axis(axis, len(shape))
  starts = _zero_starts(start_index, len(shape))
  starts[axis] = start_index
  starts = [normalize_start(s, d, allow_negative_indices) for s, d in zip(starts, shape)]
  return dynamic_update_slice(operand, update, starts,
                                        allow_negative_indices=False)


def dynamic_update_index_in_dim(operand, update, index, axis, *,
                                allow_negative_indices=True):
  """``operand`` with ``update`` written at traced ``index`` along ``axis``."""
  ndim = core.get_aval(operand).ndim
  axis = _axis(axis, ndim)
  if core.get_aval(update).ndim == ndim - 1:
    update = lax_shapes.expand_dims(update, (axis,))
  return dynamic_update_slice_in_dim(operand, update, index, axis,
                                     allow_negative_indices=allow_negative_indices)


def unstack(x, axis=0):
  """``x`` split along ``axis`` into a tuple of arrays with that axis removed."""
  x = _operand(x)
  ndim = core.get_aval(x).ndim
  axis = lax_shapes._canonical_axis(axis, ndim)
  return tuple(index_in_dim(x, i, axis, keepdims=False)
               for i in range(core.get_aval(x).shape[axis]))


def index_take(src, idxs, axes):
  """``src[idxs[0], idxs[1], ...]`` along ``axes``: ``idxs`` holds one 1-D index array per
  axis (indices wrap around, as Python's); the other axes are kept whole."""
  src = _operand(src)
  axes = tuple(int(a) for a in axes)
  shape = core.get_aval(src).shape
  indices = lax_shapes.concatenate(
      [lax_shapes.expand_dims(_operand(i), (1,)) for i in idxs], 1)
  size = lax_shapes.broadcast_in_dim(
      Array(np.array([shape[a] for a in axes], core.get_aval(indices).dtype)),
      core.get_aval(indices).shape, (1,))
  wrapped = lax_ew.rem(indices, size)
  wrapped = lax_ew.select(lax_ew.lt(wrapped, lax_ew._const(wrapped, 0)),
                          lax_ew.add(wrapped, size), wrapped)
  dnums = GatherDimensionNumbers(
      offset_dims=tuple(range(1, len(shape) - len(axes) + 1)), collapsed_slice_dims=axes,
      start_index_map=axes)
  sizes = tuple(1 if i in axes else d for i, d in enumerate(shape))
  return gather(src, wrapped, dnums, sizes, mode="fill")


# ----------------------------------------------------------------------------- batching
from jaxlite._src.transforms import batching  # noqa: E402


def _shift1(dims):
  return tuple(d + 1 for d in dims)


def _gather_batcher(vals, dims, *, dimension_numbers, slice_sizes, **params):
  # The batch axis is moved to the front of each batched operand. A batched operand
  # alone adds a full-size window axis; batched indices alone add a batch axis of the
  # indices; both batched are indexed in lockstep through the batching dims.
  (operand, indices), (od, idx_d) = vals, dims
  dn = dimension_numbers
  if idx_d is None:
    operand = batching.moveaxis(operand, od, 0)
    size = core.get_aval(operand).shape[0]
    dn = GatherDimensionNumbers(
        offset_dims=(0,) + _shift1(dn.offset_dims),
        collapsed_slice_dims=_shift1(dn.collapsed_slice_dims),
        start_index_map=_shift1(dn.start_index_map),
        operand_batching_dims=_shift1(dn.operand_batching_dims),
        start_indices_batching_dims=dn.start_indices_batching_dims)
    slice_sizes = (size,) + slice_sizes
  elif od is None:
    indices = batching.moveaxis(indices, idx_d, 0)
    dn = dn._replace(offset_dims=_shift1(dn.offset_dims),
                     start_indices_batching_dims=_shift1(dn.start_indices_batching_dims))
  else:
    operand = batching.moveaxis(operand, od, 0)
    indices = batching.moveaxis(indices, idx_d, 0)
    dn = GatherDimensionNumbers(
        offset_dims=_shift1(dn.offset_dims),
        collapsed_slice_dims=_shift1(dn.collapsed_slice_dims),
        start_index_map=_shift1(dn.start_index_map),
        operand_batching_dims=(0,) + _shift1(dn.operand_batching_dims),
        start_indices_batching_dims=(0,) + _shift1(dn.start_indices_batching_dims))
    slice_sizes = (1,) + slice_sizes
  out = gather_p.bind(operand, indices, dimension_numbers=dn, slice_sizes=slice_sizes,
                      **params)
  return out, 0


def _scatter_batcher(prim):
  # Every example scatters into its own copy of the operand (broadcast if unbatched),
  # held along axis 0; batched indices address it through the batching dims.
  def rule(vals, dims, *, dimension_numbers, **params):
    (operand, indices, updates), (od, idx_d, ud) = vals, dims
    size = batching.batch_size(vals, dims)
    operand = batching.bdim_at_front(operand, od, size)
    updates = batching.bdim_at_front(updates, ud, size)
    dn = dimension_numbers
    if idx_d is None:
      dn = ScatterDimensionNumbers(
          update_window_dims=(0,) + _shift1(dn.update_window_dims),
          inserted_window_dims=_shift1(dn.inserted_window_dims),
          scatter_dims_to_operand_dims=_shift1(dn.scatter_dims_to_operand_dims),
          operand_batching_dims=_shift1(dn.operand_batching_dims),
          scatter_indices_batching_dims=dn.scatter_indices_batching_dims)
    else:
      indices = batching.moveaxis(indices, idx_d, 0)
      dn = ScatterDimensionNumbers(
          update_window_dims=_shift1(dn.update_window_dims),
          inserted_window_dims=_shift1(dn.inserted_window_dims),
          scatter_dims_to_operand_dims=_shift1(dn.scatter_dims_to_operand_dims),
          operand_batching_dims=(0,) + _shift1(dn.operand_batching_dims),
          scatter_indices_batching_dims=(0,) + _shift1(dn.scatter_indices_batching_dims))
    return prim.bind(operand, indices, updates, dimension_numbers=dn, **params), 0
  batching.batching_rules[prim] = rule


batching.batching_rules[gather_p] = _gather_batcher
for _p in (scatter_p, scatter_add_p, scatter_sub_p, scatter_mul_p, scatter_min_p,
           scatter_max_p):
  _scatter_batcher(_p)

# -- dynamic_slice / dynamic_update_slice: start indices are traced scalars, clamped
dynamic_slice_p = Primitive("dynamic_slice")


@dynamic_slice_p.def_abstract_eval
def _dynamic_slice_rule(operand, *starts, slice_sizes):
  _check_starts("dynamic_slice", operand, starts)
  if len(slice_sizes) != operand.ndim or any(
      not 0 <= s <= d for s, d in zip(slice_sizes, operand.shape)):
    raise TypeError(f"dynamic_slice slice_sizes {slice_sizes} must fit inside operand shape "
                    f"{operand.shape}.")
  return ShapedArray(slice_sizes, operand.dtype, operand.weak_type)


def _check_starts(name, operand, starts):
  if len(starts) != operand.ndim:
    raise TypeError(f"{name} needs one start index per operand dimension: got {len(starts)} "
                    f"for shape {operand.shape}.")
  for s in starts:
    if s.shape or not dtypes.issubdtype(s.dtype, np.integer):
      raise TypeError(f"{name} start indices must be integer scalars, got {s.str_short()}.")


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
  """The slice of ``slice_sizes`` at traced ``start_indices``, clamped to stay in bounds;
  negative starts count from the end unless ``allow_negative_indices`` is False."""
  shape = core.get_aval(operand).shape
  starts = [normalize_start(s, d, allow_negative_indices) for s, d in zip(start_indices, shape)]
  return dynamic_slice_p.bind(operand, *starts,
                              slice_sizes=lax_shapes._ints("dynamic_slice", slice_sizes))


def normalize_start(index, size, wrap=True):
  """A start index with negative values wrapped once (if ``wrap``), as JAX's dynamic_slice.

  The ops are those of JAX's ``select(i < 0, i + size, i)`` in ``jax.numpy`` terms: a
  weakly typed index is made strong before the addition.
  """
  if isinstance(index, (int, np.integer)):
    value = int(index)
    if value < 0 and not wrap and not isinstance(index, np.unsignedinteger):
      raise ValueError(f"Index {value} is out of bounds for dimension {size} if "
                       "allow_negative_indices=False")
    return lax_ew.convert_element_type(value + size if wrap and value < 0 else value,
                                       dtypes.dtype(index, canonicalize=True))
  dtype = core.get_aval(index).dtype
  if not wrap or dtypes.issubdtype(dtype, np.unsignedinteger):
    return index
  negative = lax_ew.lt(index, np.zeros((), dtype)[()])
  wrapped = lax_ew.add(lax_ew.convert_element_type(index, dtype), np.array(size, dtype)[()])
  return lax_ew.select(negative, wrapped, index)



dynamic_update_slice_p = Primitive("dynamic_update_slice")


@dynamic_update_slice_p.def_abstract_eval
def _dynamic_update_slice_rule(operand, update, *starts):
  _check_starts("dynamic_update_slice", operand, starts)
  if update.dtype != operand.dtype or update.ndim != operand.ndim or any(
      u > o for u, o in zip(update.shape, operand.shape)):
    raise TypeError(f"dynamic_update_slice update {update.str_short()} must have the "
                    f"operand's dtype and fit inside it, operand {operand.str_short()}.")
  return operand.update(weak_type=operand.weak_type and update.weak_type)


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
  """``operand`` with ``update`` written at traced ``start_indices`` (clamped); negative
  starts count from the end unless ``allow_negative_indices`` is False."""
  shape = core.get_aval(operand).shape
  starts = [normalize_start(s, d, allow_negative_indices) for s, d in zip(start_indices, shape)]
  return dynamic_update_slice_p.bind(operand, update, *starts)


def _dynamic_slice_transpose(ct, x, *starts, slice_sizes):
  zeros = ad.zeros_like_aval(x.aval)
  return [dynamic_update_slice(zeros, ct, starts, allow_negative_indices=False)] + [
      None] * len(starts)


lax_shapes._linear(dynamic_slice_p, _dynamic_slice_transpose)


def _dynamic_update_slice_jvp(primals, tangents):
  operand, update, *starts = primals
  out = dynamic_update_slice_p.bind(*primals)
  t_op, t_up = tangents[0], tangents[1]
  if type(t_op) is ad.Zero and type(t_up) is ad.Zero:
    return out, ad.Zero(ad.tangent_aval(core.get_aval(out)))
  return out, dynamic_update_slice_p.bind(ad.instantiate(t_op), ad.instantiate(t_up),
                                          *starts)


def _dynamic_update_slice_transpose(ct, operand, update, *starts):
  up_aval = update.aval if ad.is_undefined(update) else core.get_aval(update)
  op_ct = dynamic_update_slice(ct, ad.zeros_like_aval(up_aval), starts,
                               allow_negative_indices=False)
  up_ct = dynamic_slice(ct, starts, up_aval.shape, allow_negative_indices=False)
  return ([op_ct if ad.is_undefined(operand) else None,
           up_ct if ad.is_undefined(update) else None] + [None] * len(starts))


ad.jvp_rules[dynamic_update_slice_p] = _dynamic_update_slice_jvp
ad.transpose_rules[dynamic_update_slice_p] = _dynamic_update_slice_transpose


def _index_vectors(starts, dims, size):
  """Scalar start indices (some batched) as one (size, n) array of index vectors."""
  dtype = dtypes.canonicalize_dtype(np.result_type(*[core.get_aval(s).dtype for s in starts]))
  columns = []
  for s, d in zip(starts, dims):
    s = lax_ew.convert_element_type(s, dtype)
    s = lax_shapes.broadcast_in_dim(s, (size, 1), () if d is None else (0,))
    columns.append(s)
  return lax_shapes.concatenate(columns, 1)


def _zero_index(starts):
  dtype = core.get_aval(starts[0]).dtype if starts else np.dtype(np.int32)
  return Array(np.zeros((), dtype))


def _dynamic_slice_batcher(vals, dims, *, slice_sizes):
  x, *starts = vals
  xd, *sds = dims
  size = batching.batch_size(vals, dims)
  if all(d is None for d in sds):
    starts.insert(xd, _zero_index(starts))
    sizes = slice_sizes[:xd] + (size,) + slice_sizes[xd:]
    return dynamic_slice_p.bind(x, *starts, slice_sizes=sizes), xd
  # Starts that differ per example: one gather window per example (clamped like
  # dynamic_slice), with the operand's batch axis indexed in lockstep if it has one.
  n = len(starts)
  index = _index_vectors(starts, sds, size)
  window = tuple(range(1, n + 1))
  if xd is None:
    dn = GatherDimensionNumbers(offset_dims=window, collapsed_slice_dims=(),
                                         start_index_map=tuple(range(n)))
    return gather(x, index, dn, slice_sizes, mode="clip"), 0
  dn = GatherDimensionNumbers(
      offset_dims=window, collapsed_slice_dims=(), start_index_map=window,
      operand_batching_dims=(0,), start_indices_batching_dims=(0,))
  out = gather(batching.moveaxis(x, xd, 0), index, dn, (1,) + slice_sizes,
                        indices_are_sorted=True, unique_indices=True, mode="clip")
  return out, 0


def _dynamic_update_slice_batcher(vals, dims):
  x, update, *starts = vals
  xd, ud, *sds = dims
  size = batching.batch_size(vals, dims)
  x = batching.bdim_at_front(x, xd, size)
  update = batching.bdim_at_front(update, ud, size)
  if all(d is None for d in sds):
    return dynamic_update_slice_p.bind(x, update, _zero_index(starts), *starts), 0
  # Starts that differ per example: a scatter of one window into each example.
  n = len(starts)
  window = tuple(range(1, n + 1))
  dn = ScatterDimensionNumbers(
      update_window_dims=window, inserted_window_dims=(), scatter_dims_to_operand_dims=window,
      operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
  out = scatter(x, _index_vectors(starts, sds, size), update, dn,
                         indices_are_sorted=True, unique_indices=True, mode="clip")
  return out, 0


batching.batching_rules.update({
    dynamic_slice_p: _dynamic_slice_batcher,
    dynamic_update_slice_p: _dynamic_update_slice_batcher,
})
