"""NumPy implementations of gather and the scatters, vectorised with index arrays.

Both build, for every operand axis, an integer array of the positions each window
element touches (start index broadcast against ``arange(window size)``), and let one
NumPy advanced-indexing operation do the work. Out-of-bounds windows follow XLA: a
gather clamps its start indices (CLIP and PROMISE_IN_BOUNDS) or fills the whole window
(FILL_OR_DROP); a scatter clamps (CLIP) or drops the whole window (otherwise).
"""
import numpy as np

from jaxlite._src.core import core
from jaxlite._src.backends.numpy.impls import impl_rules, inplace_rules, writable
from jaxlite._src.lax import indexing as lax_ix
from jaxlite._src.lax.indexing import GatherScatterMode


def _window_starts(shape, indices, index_map, operand_bdims, index_bdims, window, mode):
  """Per operand axis, the start of each window (broadcastable to the batch shape).

  Returns the starts, clamped so each window fits, and a boolean array (batch shape)
  saying which windows were in bounds before clamping.
  """
  batch_shape = indices.shape[:-1]
  in_bounds = np.ones(batch_shape, bool)
  starts = []
  for d, size in enumerate(shape):
    if d in index_map:
      start = indices[..., index_map.index(d)].astype(np.int64)
      hi = size - window[d]
      if mode != GatherScatterMode.CLIP:
        in_bounds &= (start >= 0) & (start <= hi)
      start = np.clip(start, 0, max(hi, 0))
    elif d in operand_bdims:
      j = index_bdims[operand_bdims.index(d)]
      start = np.arange(batch_shape[j]).reshape(
          [n if i == j else 1 for i, n in enumerate(batch_shape)])
    else:
      start = np.zeros((1,) * len(batch_shape), np.int64)
    starts.append(start)
  return starts, in_bounds


def _positions(starts, window, nbatch):
  """Index arrays (one per operand axis) of shape batch + window, by broadcasting."""
  ndim = len(window)
  out = []
  for d, start in enumerate(starts):
    offsets = np.arange(window[d]).reshape([window[d] if e == d else 1 for e in range(ndim)])
    out.append(start.reshape(start.shape + (1,) * ndim) + offsets.reshape((1,) * nbatch
                                                                           + offsets.shape))
  return out


def _gather(operand, indices, *, dimension_numbers, slice_sizes, indices_are_sorted,
            unique_indices, mode, fill_value):
  dn = dimension_numbers
  batch_shape = indices.shape[:-1]
  nbatch = len(batch_shape)
  starts, in_bounds = _window_starts(operand.shape, indices, dn.start_index_map,
                                     dn.operand_batching_dims,
                                     dn.start_indices_batching_dims, slice_sizes, mode)
  windows = operand[tuple(_positions(starts, slice_sizes, nbatch))]
  windows = np.broadcast_to(windows, batch_shape + tuple(slice_sizes))
  if mode == GatherScatterMode.FILL_OR_DROP:
    with np.errstate(invalid="ignore"):
      fill = np.array(fill_value).astype(operand.dtype)
    mask = in_bounds.reshape(batch_shape + (1,) * operand.ndim)
    windows = np.where(mask, windows, fill)
  dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
  kept = [s for d, s in enumerate(slice_sizes) if d not in dropped]
  windows = windows.reshape(batch_shape + tuple(kept))
  # Batch axes fill the output axes that are not offset_dims, in order.
  rest = iter(range(nbatch))
  offset = iter(range(nbatch, nbatch + len(kept)))
  perm = [next(offset) if i in dn.offset_dims else next(rest)
          for i in range(nbatch + len(kept))]
  return np.asarray(np.transpose(windows, perm), order="C")


def _scatter_targets(operand, indices, updates, dn, mode):
  """Flat operand positions and the update values that land there (dropped ones removed)."""
  batch_shape = indices.shape[:-1]
  scatter_dims = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
  dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
  window = [1] * operand.ndim
  for d, u in zip([d for d in range(operand.ndim) if d not in dropped],
                  dn.update_window_dims):
    window[d] = updates.shape[u]
  values = np.transpose(updates, scatter_dims + list(dn.update_window_dims))
  values = values.reshape(batch_shape + tuple(window))
  starts, in_bounds = _window_starts(operand.shape, indices, dn.scatter_dims_to_operand_dims,
                                     dn.operand_batching_dims,
                                     dn.scatter_indices_batching_dims, window, mode)
  flat = np.zeros(values.shape, np.int64)
  for size, pos in zip(operand.shape, _positions(starts, window, len(batch_shape))):
    flat = flat * size + pos
  keep = np.broadcast_to(in_bounds.reshape(batch_shape + (1,) * operand.ndim), values.shape)
  return flat[keep], values[keep]


def _scatter_impl(ufunc, in_place=False):
  def impl(operand, indices, updates, *, dimension_numbers, indices_are_sorted,
           unique_indices, mode, update_jaxpr, update_consts):
    positions, values = _scatter_targets(operand, indices, updates, dimension_numbers, mode)
    # C order: reshape(-1) must be a view
    out = writable(operand) if in_place else np.array(operand, order="C", copy=True)
    flat = out.reshape(-1)
    if ufunc is None:
      flat[positions] = values   # where positions repeat, NumPy keeps the last value
    else:
      ufunc.at(flat, positions, values)
    return out
  return impl


def _scatter_rule(in_place):
  set_ = _scatter_impl(None, in_place)

  def scatter(operand, indices, updates, *, update_jaxpr, update_consts, **params):
    if update_jaxpr is None:
      return set_(operand, indices, updates, update_jaxpr=None,
                  update_consts=update_consts, **params)
    return _scatter_apply(operand, indices, updates, update_jaxpr, update_consts,
                          in_place=in_place, **params)
  return scatter


def _scatter_apply(operand, indices, updates, jaxpr, consts, *, dimension_numbers, mode,
                   in_place=False, **_):
  """``x.at[idx].apply(f)``: f is applied once per occurrence of each position."""
  positions, _ = _scatter_targets(operand, indices, updates, dimension_numbers, mode)
  out = writable(operand) if in_place else np.array(operand, order="C", copy=True)
  flat = out.reshape(-1)
  counts = np.bincount(positions, minlength=flat.size)
  for k in range(1, int(counts.max(initial=0)) + 1):
    targets = np.nonzero(counts >= k)[0]
    flat[targets] = _run_scalar_jaxpr(jaxpr, consts, flat[targets])
  return out


def _run_scalar_jaxpr(jaxpr, consts, values):
  """Evaluate a jaxpr traced on scalars over a vector of values.

  Elementwise bodies take the whole vector at once; a body with shape-specific
  primitives is run value by value.
  """
  with core.set_current_trace(core.eval_trace):
    try:
      out = np.asarray(core.eval_jaxpr(jaxpr, consts, values, values)[0])
      if out.shape == values.shape:
        return out
    except (TypeError, ValueError):
      pass
    return np.array([np.asarray(core.eval_jaxpr(jaxpr, consts, v, v)[0]) for v in values],
                    dtype=values.dtype).reshape(values.shape)


_SCATTERS = {lax_ix.scatter_add_p: np.add, lax_ix.scatter_sub_p: np.subtract,
             lax_ix.scatter_mul_p: np.multiply, lax_ix.scatter_min_p: np.minimum,
             lax_ix.scatter_max_p: np.maximum}
impl_rules.update({lax_ix.gather_p: _gather, lax_ix.scatter_p: _scatter_rule(False),
                   **{p: _scatter_impl(u) for p, u in _SCATTERS.items()}})
inplace_rules.update({lax_ix.scatter_p: _scatter_rule(True),
                      **{p: _scatter_impl(u, True) for p, u in _SCATTERS.items()}})
