"""Sorting and scans: ``sort`` (several operands, lexicographic keys), ``top_k`` (and
``approx_max_k`` / ``approx_min_k``, exact here), and the cumulative reductions
``cumsum``, ``cumprod``, ``cummax``, ``cummin``, ``cumlogsumexp``.

Sorting is not differentiable in its keys, but it permutes its operands, so tangents
follow the same permutation: the JVP sorts an iota alongside to learn the permutation,
then gathers the tangents with it (a linear gather, which transposes to a scatter-add).
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.core.core import Primitive, ShapedArray
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.lax.base import operand as _operand
from jaxlite._src.lax import indexing as lax_ix
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.transforms import ad
from jaxlite._src.transforms import batching


def _axis(axis, ndim, name):
  axis = int(axis)
  if not -ndim <= axis < max(ndim, 1):
    raise ValueError(f"{name}: axis {axis} is out of bounds for array of dimension {ndim}")
  return axis % max(ndim, 1)


# ----------------------------------------------------------------------------- sort
sort_p = Primitive("sort")
sort_p.multiple_results = True


@sort_p.def_abstract_eval
def _sort_abstract_eval(*operands, dimension, is_stable, num_keys):
  if not operands:
    raise TypeError("sort requires at least one operand")
  shape = operands[0].shape
  if any(o.shape != shape for o in operands):
    raise TypeError("sort requires all operands to have the same shape, got "
                    + ", ".join(str(o.shape) for o in operands))
  if not 0 <= dimension < len(shape):
    raise ValueError(f"sort dimension {dimension} is out of bounds for shape {shape}")
  if not 1 <= num_keys <= len(operands):
    raise ValueError(f"num_keys={num_keys} must be between 1 and the number of operands "
                     f"({len(operands)})")
  return list(operands)


core.param_order[sort_p] = ("dimension", "is_stable", "num_keys")


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
  """Sort one array, or several arrays of one shape by the first ``num_keys`` of them.

  Parameters
  ----------
  operand : array or sequence of arrays
    With several operands, all are permuted together; the first ``num_keys`` are the
    keys, compared lexicographically. NaNs sort to the end and ``-0.0`` equals ``0.0``.
  dimension : int
    The axis to sort along (default: the last).
  is_stable : bool
    Whether equal keys keep their order.
  num_keys : int
    How many leading operands are keys.

  Returns
  -------
  The sorted array, or a tuple of them when ``operand`` is a sequence.
  """
  if isinstance(operand, (list, tuple)):
    if not operand:
      raise TypeError("sort requires at least one operand")
    ndim = core.get_aval(operand[0]).ndim
    return tuple(sort_p.bind(*operand, dimension=_axis(dimension, ndim, "sort"),
                             is_stable=bool(is_stable), num_keys=int(num_keys)))
  ndim = core.get_aval(operand).ndim
  if num_keys != 1:
    raise ValueError(f"num_keys={num_keys} must be 1 when sorting a single operand")
  out, = sort_p.bind(operand, dimension=_axis(dimension, ndim, "sort"),
                     is_stable=bool(is_stable), num_keys=1)
  return out


def sort_key_val(keys, values, dimension=-1, is_stable=True):
  """Sort ``keys`` and permute ``values`` alongside; returns both."""
  return sort((keys, values), dimension, is_stable, 1)


def take_along_axis(x, indices, axis: int):
  """``x``'s values at ``indices`` along ``axis``; ``indices`` has ``x``'s shape except
  along ``axis``, and its entries are in bounds (the gather clamps)."""
  shape = core.get_aval(indices).shape
  ndim = len(shape)
  others = tuple(d for d in range(ndim) if d != axis)
  dnums = lax_ix.GatherDimensionNumbers(
      offset_dims=(), collapsed_slice_dims=(axis,), start_index_map=(axis,),
      operand_batching_dims=others, start_indices_batching_dims=others)
  x_shape = core.get_aval(x).shape
  sizes = tuple(0 if x_shape[d] == 0 else 1 for d in range(ndim))
  return lax_ix.gather(x, lax_shapes.reshape(indices, shape + (1,)), dnums, sizes,
                       mode=lax_ix.GatherScatterMode.PROMISE_IN_BOUNDS)


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
  shape = core.get_aval(primals[0]).shape
  index_dtype = np.int32 if shape[dimension] <= np.iinfo(np.int32).max else np.int64
  iota = lax_shapes.broadcasted_iota(index_dtype, shape, dimension)
  *outs, perm = sort_p.bind(*primals, iota, dimension=dimension, is_stable=is_stable,
                            num_keys=num_keys)
  tangents_out = [t if type(t) is ad.Zero else take_along_axis(t, perm, dimension)
                  for t in tangents]
  return outs, tangents_out


def _sort_batcher(vals, dims, *, dimension, is_stable, num_keys):
  size = batching.batch_size(vals, dims)
  vals = [batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)]
  outs = sort_p.bind(*vals, dimension=dimension + 1, is_stable=is_stable, num_keys=num_keys)
  return outs, [0] * len(outs)


ad.jvp_rules[sort_p] = _sort_jvp
batching.batching_rules[sort_p] = _sort_batcher


# ----------------------------------------------------------------------------- top_k
top_k_p = Primitive("top_k")
top_k_p.multiple_results = True


@top_k_p.def_abstract_eval
def _top_k_abstract_eval(operand, *, k, axis):
  if dtypes.issubdtype(operand.dtype, np.complexfloating):
    raise ValueError("top_k is not compatible with complex inputs.")
  if k < 0:
    raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
  if not operand.shape:
    raise TypeError("top_k operand must have >= 1 dimension, got ()")
  if operand.shape[axis] < k:
    raise ValueError(f"k argument to top_k must be no larger than size of the reduced "
                     f"axis, got k={k} for shape {operand.shape}")
  shape = operand.shape[:axis] + (k,) + operand.shape[axis + 1:]
  return [ShapedArray(shape, operand.dtype, operand.weak_type), ShapedArray(shape, np.int32)]


def top_k(operand, k: int, *, axis: int = -1):
  """The ``k`` largest entries along ``axis`` (descending) and their indices.

  Ties keep the lower index first. Floats compare in XLA's total order: -NaN < -inf <
  -0.0 < 0.0 < inf < NaN (so ``top_k(-x)`` finds the smallest entries even with NaNs).
  """
  ndim = core.get_aval(operand).ndim
  if ndim == 0:
    raise TypeError("top_k operand must have >= 1 dimension, got ()")
  return top_k_p.bind(operand, k=int(k), axis=_axis(axis, ndim, "top_k"))  # a list, as JAX


def _top_k_jvp(primals, tangents, *, k, axis):
  (x,), (t,) = primals, tangents
  values, indices = top_k_p.bind(x, k=k, axis=axis)
  index_aval = ad.tangent_aval(core.get_aval(indices))
  if type(t) is ad.Zero:
    return [values, indices], [ad.Zero(core.get_aval(values)), ad.Zero(index_aval)]
  return [values, indices], [take_along_axis(t, indices, axis), ad.Zero(index_aval)]


def _top_k_batcher(vals, dims, *, k, axis):
  (x,), (d,) = vals, dims
  axis = axis + (d <= axis)
  return top_k_p.bind(x, k=k, axis=axis), [d, d]


ad.jvp_rules[top_k_p] = _top_k_jvp
batching.batching_rules[top_k_p] = _top_k_batcher
core.param_order[top_k_p] = ("axis", "k")


def _approx_k(operand, k, reduction_dimension, largest):
  operand = _operand(operand)
  ndim = core.get_aval(operand).ndim
  axis = lax_shapes._canonical_axis(reduction_dimension, ndim)
  x = operand if largest else ew.neg(operand)
  values, idx = top_k(x, k, axis=axis)
  return [values if largest else ew.neg(values), idx]


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
  """The ``k`` largest values along ``reduction_dimension`` and their indices. Exact
  here (``recall_target`` is met with recall 1)."""
  return _approx_k(operand, k, reduction_dimension, True)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
  """The ``k`` smallest values along ``reduction_dimension`` and their indices (exact)."""
  return _approx_k(operand, k, reduction_dimension, False)


# ----------------------------------------------------------------------------- scans
def _cumulative(name, accepted):
  prim = Primitive(name)

  @prim.def_abstract_eval
  def rule(operand, *, axis, reverse):
    if not any(dtypes.issubdtype(operand.dtype, c) for c in accepted):
      raise TypeError(f"{name} does not accept dtype {operand.dtype.name}.")
    if axis < 0:
      raise ValueError("XLA operations do not allow negative axes")
    if axis >= operand.ndim:
      raise ValueError(f"axis {axis} is out of bounds for array of shape {operand.shape}")
    return operand

  core.param_order[prim] = ("axis", "reverse")
  batching.batching_rules[prim] = lambda vals, dims, *, axis, reverse: (
      prim.bind(vals[0], axis=axis + (dims[0] <= axis), reverse=reverse), dims[0])
  return prim


# As in JAX, every scan takes numbers only (not booleans), and cumlogsumexp takes
# integers too: it fails only when run (see ``scan_identity``).
cumsum_p = _cumulative("cumsum", (np.number,))
cumprod_p = _cumulative("cumprod", (np.number,))
cummax_p = _cumulative("cummax", (np.number,))
cummin_p = _cumulative("cummin", (np.number,))
cumlogsumexp_p = _cumulative("cumlogsumexp", (np.number,))

_SCAN_IDENTITY = {cumsum_p: 0, cumprod_p: 1, cummax_p: -np.inf, cummin_p: np.inf,
                  cumlogsumexp_p: -np.inf}


def scan_identity(prim, dtype):
  """The value the scan ``prim`` starts from in ``dtype``: the init value of the
  reduce_window XLA runs it as. The integer extremes stand for -inf and inf in cummax and
  cummin, but logaddexp's -inf has no integer value: cumlogsumexp of a (non-empty)
  integer array raises OverflowError when it runs, as in JAX."""
  identity = _SCAN_IDENTITY[prim]
  if prim is not cumlogsumexp_p and np.isinf(identity) and not dtypes.is_inexact(dtype):
    info = np.iinfo(dtype)
    return np.array(info.min if identity < 0 else info.max, dtype)
  return np.array(identity, dtype)


def _scan_api(prim, what):
  def fun(operand, axis: int = 0, reverse: bool = False):
    # as JAX: the axis is not normalized (a negative one is an error)
    return prim.bind(operand, axis=int(axis), reverse=bool(reverse))
  fun.__name__ = prim.name
  fun.__doc__ = (f"The running {what} along ``axis`` (from the end when ``reverse``); "
                 "the result has the operand's shape and dtype.")
  return fun


cumsum = _scan_api(cumsum_p, "sum")
cumprod = _scan_api(cumprod_p, "product")
cummax = _scan_api(cummax_p, "maximum")
cummin = _scan_api(cummin_p, "minimum")
cumlogsumexp = _scan_api(cumlogsumexp_p, "``log(sum(exp(x)))``")


def _cumsum_transpose(ct, operand, *, axis, reverse):
  return [cumsum_p.bind(ct, axis=axis, reverse=not reverse)]


ad.deflinear2(cumsum_p, _cumsum_transpose)


def _logaddexp(x, y):
  big = ew.max(x, y)
  # exp(x - big) + exp(y - big) is 1 + exp(-|x - y|); guard the -inf - -inf case
  finite = ew.is_finite(big)
  safe = ew.select(finite, big, ew.broadcast_like(ew._const(big, 0), big))
  total = ew.add(ew.exp(ew.sub(x, safe)), ew.exp(ew.sub(y, safe)))
  return ew.select(finite, ew.add(safe, ew.log(total)), big)


_COMBINE = {cumprod_p: (ew.mul, 1), cummax_p: (ew.max, -np.inf),
            cummin_p: (ew.min, np.inf), cumlogsumexp_p: (_logaddexp, -np.inf)}


def associative_scan(combine, identity, x, axis, reverse):
  """Hillis-Steele inclusive scan of ``x`` along ``axis`` in log2(n) lax steps.

  Built from pad, slice and ``combine`` only, so every transformation of it comes from
  existing rules; the cumulative primitives use it for their derivatives.
  """
  if reverse:
    x = lax_shapes.rev(x, (axis,))
  aval = core.get_aval(x)
  n = aval.shape[axis]
  dtype = aval.dtype
  if dtypes.is_integer(dtype) and not np.isfinite(identity):
    info = np.iinfo(dtype)
    identity = info.min if identity < 0 else info.max
  fill = ew._const(x, identity)
  shift = 1
  while shift < n:
    config = [(0, 0, 0)] * aval.ndim
    config[axis] = (shift, -shift, 0)
    x = combine(x, lax_shapes.pad(x, fill, config))
    shift *= 2
  return lax_shapes.rev(x, (axis,)) if reverse else x


def _cumulative_jvp(prim):
  combine, identity = _COMBINE[prim]

  def jvp(primals, tangents, *, axis, reverse):
    (x,), (t,) = primals, tangents
    out = prim.bind(x, axis=axis, reverse=reverse)
    if type(t) is ad.Zero:
      return out, ad.Zero(ad.tangent_aval(core.get_aval(out)))
    scan = lambda v: [associative_scan(combine, identity, v, axis, reverse)]
    _, (t_out,) = ad.jvp_flat(scan, [x], [t])
    return out, t_out
  ad.jvp_rules[prim] = jvp


for _p in _COMBINE:
  _cumulative_jvp(_p)
