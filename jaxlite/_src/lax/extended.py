"""How every primitive that accepts arrays of extended dtypes (typed PRNG keys, flax's fp8
metadata, ...) runs on their physical data: ``extended.physical_rules`` for the shape
primitives, the comparisons, autodiff's ``add_any`` (the dtype's own ``add``) and the
primitives with jaxprs in their params.

An extended operand arrives as its data, whose trailing axes are one element's
(``extended.element_shape``): the rules keep them whole, and ``ctx.avals_in`` says which
operands are extended.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.core import extended
from jaxlite._src.lax import ad_checkpoint
from jaxlite._src.lax import call
from jaxlite._src.lax import control_flow as lcf
from jaxlite._src.lax import custom_derivatives as cd
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.lax import indexing
from jaxlite._src.lax import reductions
from jaxlite._src.lax import shapes as lsh
from jaxlite._src.lax import sharding_constraint as sc
from jaxlite._src.passes import physicalize
from jaxlite._src.transforms import ad


def _key_ndim(aval):
  return len(extended.element_shape(aval))


_key_shape = extended.element_shape


def _same_params(prim):
  """A primitive whose params do not mention the trailing axes (squeeze, concatenate,
  rev, ...): the same params on the data."""
  return lambda ctx, *args, **params: prim.bind(*args, **params)


def _broadcast_in_dim(ctx, x, *, shape, broadcast_dimensions, sharding):
  n = len(shape)
  extra = _key_shape(ctx.avals_out[0])
  return lsh.broadcast_in_dim_p.bind(
      x, shape=tuple(shape) + extra, sharding=sharding,
      broadcast_dimensions=tuple(broadcast_dimensions) + tuple(range(n, n + len(extra))))


def _reshape(ctx, x, *, new_sizes, dimensions, sharding):
  return lsh.reshape_p.bind(x, new_sizes=tuple(new_sizes) + _key_shape(ctx.avals_out[0]),
                            dimensions=dimensions, sharding=sharding)


def _transpose(ctx, x, *, permutation):
  n = len(permutation)
  extra = tuple(range(n, n + _key_ndim(ctx.avals_in[0])))
  return lsh.transpose_p.bind(x, permutation=tuple(permutation) + extra)


def _slice(ctx, x, *, start_indices, limit_indices, strides):
  extra = _key_shape(ctx.avals_in[0])
  return lsh.slice_p.bind(
      x, start_indices=tuple(start_indices) + (0,) * len(extra),
      limit_indices=tuple(limit_indices) + extra,
      strides=None if strides is None else tuple(strides) + (1,) * len(extra))


def _to_data_shape(x, aval, out_aval):
  """A non-key operand ``x`` (of ``aval``; scalar or of the keys' shape) broadcast to the
  data shape of the keys ``out_aval``."""
  if not aval.shape:
    return x
  return lsh.broadcast_in_dim(x, extended.physical_aval(out_aval).shape, range(aval.ndim))


def _select_n(ctx, which, *cases):
  return ew.select_n_p.bind(_to_data_shape(which, ctx.avals_in[0], ctx.avals_in[1]),
                            *cases)


def _compare(prim, reduce):
  """``eq`` / ``ne`` of keys: of every word (a scalar key broadcast to the other's
  shape), then all / any of the words."""
  def rule(ctx, x, y):
    out = ctx.avals_out[0]
    data_shape = extended.physical_aval(out.update(dtype=ctx.avals_in[0].dtype)).shape
    key_axes = tuple(range(out.ndim, len(data_shape)))
    x, y = (lsh.broadcast_in_dim(v, data_shape, key_axes if not a.shape
                                 else range(len(data_shape)))
            for v, a in zip((x, y), ctx.avals_in))
    return reduce(prim.bind(x, y), key_axes)
  return rule


def _convert_element_type(ctx, x, *, new_dtype, weak_type, sharding):
  # (lax.convert_element_type binds to_edtype / from_edtype between dtypes; a direct bind
  # between two of them is refused)
  old = ctx.avals_in[0].dtype
  if new_dtype != old:
    raise ValueError(f"Cannot convert_element_type from {old} to {new_dtype}")
  return x


def _add_any(ctx, x, y):
  """Autodiff's sum of two extended values: their rules' ``add`` (flax's fp8 metadata
  accumulates by max), run on the data."""
  dtype = ctx.avals_in[0].dtype
  return physicalize.lower_fun(lambda a, b: dtype._rules.add(dtype, a, b),
                               ctx.avals_in)(x, y)


def _zero_index(starts):
  return np.zeros((), core.get_aval(starts[0]).dtype)[()] if starts else np.int32(0)


def _dynamic_slice(ctx, x, *starts, slice_sizes):
  extra = _key_shape(ctx.avals_in[0])
  zeros = [_zero_index(starts)] * len(extra)
  return indexing.dynamic_slice_p.bind(x, *starts, *zeros,
                                       slice_sizes=tuple(slice_sizes) + extra)


def _dynamic_update_slice(ctx, x, update, *starts):
  zeros = [_zero_index(starts)] * _key_ndim(ctx.avals_in[0])
  return indexing.dynamic_update_slice_p.bind(x, update, *starts, *zeros)


def _gather(ctx, x, indices, *, dimension_numbers, slice_sizes, **params):
  dn = dimension_numbers
  extra = _key_shape(ctx.avals_in[0])
  out_ndim = ctx.avals_out[0].ndim
  dn = dn._replace(offset_dims=tuple(dn.offset_dims)
                   + tuple(range(out_ndim, out_ndim + len(extra))))
  return indexing.gather_p.bind(x, indices, dimension_numbers=dn,
                                slice_sizes=tuple(slice_sizes) + extra, **params)


def _scatter(ctx, x, indices, updates, *, dimension_numbers, **params):
  dn = dimension_numbers
  n = ctx.avals_in[2].ndim
  extra = range(n, n + _key_ndim(ctx.avals_in[0]))
  dn = dn._replace(update_window_dims=tuple(dn.update_window_dims) + tuple(extra))
  return indexing.scatter_p.bind(x, indices, updates, dimension_numbers=dn, **params)


extended.physical_rules.update({
    lsh.broadcast_in_dim_p: _broadcast_in_dim,
    lsh.reshape_p: _reshape,
    lsh.transpose_p: _transpose,
    lsh.slice_p: _slice,
    lsh.squeeze_p: _same_params(lsh.squeeze_p),
    lsh.concatenate_p: _same_params(lsh.concatenate_p),
    lsh.rev_p: _same_params(lsh.rev_p),
    ew.select_n_p: _select_n,
    ew.eq_p: _compare(ew.eq_p, reductions.reduce_and),
    ew.ne_p: _compare(ew.ne_p, reductions.reduce_or),
    ew.convert_element_type_p: _convert_element_type,
    ad.add_any_p: _add_any,
    indexing.dynamic_slice_p: _dynamic_slice,
    indexing.dynamic_update_slice_p: _dynamic_update_slice,
    indexing.gather_p: _gather,
    indexing.scatter_p: _scatter,
    cd.stop_gradient_p: _same_params(cd.stop_gradient_p),
    ad_checkpoint.name_p: _same_params(ad_checkpoint.name_p),
    call.optimization_barrier_p: _same_params(call.optimization_barrier_p),
    # the spec names the keys' dimensions: the data's key dimension is not split
    sc.sharding_constraint_p: _same_params(sc.sharding_constraint_p),
})
# calls, loops and custom derivatives: their jaxprs physicalized
for _p in (call.jit_p, call.closed_call_p, call.call_p, lcf.cond_p, lcf.while_p, lcf.scan_p,
           cd.custom_jvp_call_p, cd.custom_vjp_call_p, cd.remat_p):
  extended.physical_rules[_p] = physicalize.rebind_physical(_p)
