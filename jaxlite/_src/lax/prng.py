"""The primitives of typed PRNG keys, and how every primitive that accepts keys runs on
their uint32 data (``prng.physical_rules``).

Keys are made and used by seven primitives, named and printed as JAX's:
``random_seed`` (integers to keys), ``random_wrap`` / ``random_unwrap`` (uint32 data to
keys and back), ``random_split``, ``random_fold_in``, ``random_bits`` and
``random_clone``. Each works on arrays of keys of any shape (so ``vmap`` batches them
by leaving the batch axis where it is), and its physical rule is the Threefry-2x32
computation on the data, written here once: ``jax.random`` runs the same functions on
raw ``uint32[2]`` keys, so a typed key and a raw key with the same data draw the same
numbers. The shape primitives (slice, reshape, concatenate, select_n, gather, ...)
accept keys by their own shape rules; their physical rules below do the same on the data,
whose trailing key axis they keep whole.
"""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.core import prng
from jaxlite._src.core.array import Array
from jaxlite._src.core.core import Primitive, ShapedArray
from jaxlite._src.lax import call
from jaxlite._src.lax import control_flow as lcf
from jaxlite._src.lax import custom_derivatives as cd
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.lax import indexing
from jaxlite._src.lax import reductions
from jaxlite._src.lax import shapes as lsh
from jaxlite._src.lax import sharding_constraint as sc
from jaxlite._src.lax.bits import shift_right_logical
from jaxlite._src.lax.rng import threefry2x32_p
from jaxlite._src.passes import physicalize
from jaxlite._src.transforms import ad
from jaxlite._src.transforms import batching

_UINT = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
         64: np.dtype(np.uint64)}


# ----------------------------------------------------------------------------- threefry
# Functions of raw key data (uint32, shape batch + (2,)). For a single key (batch ())
# they bind exactly the operations jax.random has always bound for raw keys.

def _u32(value):
  return Array(np.asarray(value, np.uint32), False)


def _shape(x):
  return core.get_aval(x).shape


def _word(keys, i):
  """Word ``i`` of each key (``keys[..., i]``)."""
  shape = _shape(keys)
  starts = (0,) * (len(shape) - 1) + (i,)
  limits = shape[:-1] + (i + 1,)
  return lsh.squeeze(lsh.slice(keys, starts, limits), (len(shape) - 1,))


def _stack_last(xs):
  """``xs`` (of one shape) stacked along a new last axis."""
  n = len(_shape(xs[0]))
  return lsh.concatenate([lsh.expand_dims(x, (n,)) for x in xs], n)


def _hash_counters(keys, shape):
  """The two Threefry-2x32 output words of every key of ``keys`` (batch + (2,)) for the
  counters 0, 1, ... of ``shape``: two arrays of shape batch + shape."""
  size = math.prod(shape)
  if size >= 2 ** 32:
    raise NotImplementedError("random bits arrays of 2**32 or more elements")
  lo = lsh.reshape(lsh.iota(np.uint32, size), tuple(shape))
  hi = _u32(0)  # a scalar: threefry2x32 broadcasts it
  batch = _shape(keys)[:-1]
  k1, k2 = _word(keys, 0), _word(keys, 1)
  if batch:   # keys and counters meet by size-1 broadcasting
    k1, k2 = (lsh.reshape(k, batch + (1,) * len(shape)) for k in (k1, k2))
    lo = lsh.reshape(lo, (1,) * len(batch) + tuple(shape))
  return threefry2x32_p.bind(k1, k2, hi, lo)


def threefry_seed(seeds):
  """The key data of integer ``seeds`` (any shape): the high and low 32-bit words."""
  lo = ew.convert_element_type(seeds, np.uint32)  # wraps: the low 32 bits
  if core.get_aval(seeds).dtype.itemsize == 8:
    wide = ew.convert_element_type(seeds, np.uint64)
    hi = ew.convert_element_type(shift_right_logical(wide, ew._const(wide, 32)), np.uint32)
  else:
    hi = ew.sub(lo, lo)
  return _stack_last([hi, lo])


def threefry_split(keys, shape):
  """The data of ``shape`` new keys from each key of ``keys``: batch + shape + (2,)."""
  return _stack_last(_hash_counters(keys, tuple(shape)))


def threefry_fold_in(keys, msgs):
  """The data of each key of ``keys`` folded with the uint32 ``msgs`` (which broadcast
  against the keys' batch shape, lax-style)."""
  batch, msg_shape = _shape(keys)[:-1], _shape(msgs)
  if not batch and not msg_shape:
    # As JAX: hash the count array seed(msg) == [0, msg] with the unsplit scheme.
    x1, x2 = threefry2x32_p.bind(_word(keys, 0), _word(keys, 1), _u32([0]),
                                 lsh.reshape(msgs, (1,)))
    return lsh.concatenate([x1, x2], 0)
  out = ew.broadcast_shapes("random_fold_in", [batch, msg_shape]) + (1,)
  k1, k2, m = (lsh.broadcast_in_dim(x, out, range(len(_shape(x))) if _shape(x) else ())
               for x in (_word(keys, 0), _word(keys, 1), msgs))
  return lsh.concatenate(list(threefry2x32_p.bind(k1, k2, _u32(0), m)), len(out) - 1)


def threefry_random_bits(keys, bit_width, shape):
  """Random bits of ``shape`` and ``bit_width`` from each key: batch + shape."""
  b1, b2 = _hash_counters(keys, tuple(shape))
  if bit_width == 64:
    hi64 = ew.convert_element_type(b1, np.uint64)
    return ew.bitwise_or(ew.mul(hi64, ew._const(hi64, 2 ** 32)),
                         ew.convert_element_type(b2, np.uint64))
  bits = ew.bitwise_xor(b1, b2)
  return bits if bit_width == 32 else ew.convert_element_type(bits, _UINT[bit_width])


# ----------------------------------------------------------------------------- primitives

def _key_primitive(name, abstract_eval, physical_rule, batching_rule=None):
  """A primitive on keys: eagerly its physical rule on the data (``def_impl``), under
  ``jit`` staged and physicalized; no derivative. Without a ``batching_rule`` it is
  batched as it is: it takes keys of any shape, so the batch axis stays where it is."""
  prim = Primitive(name)
  prim.def_abstract_eval(abstract_eval)
  prim.def_impl(lambda *args, **params: prng.apply_on_key_data(prim, args, params))
  prng.physical_rules[prim] = physical_rule
  ad.defzero(prim)
  if batching_rule is None:
    batching.defvectorized(prim)
  else:
    batching.batching_rules[prim] = batching_rule
  return prim


def _check_keys(name, keys):
  if type(keys.dtype) is not prng.KeyTy:
    raise TypeError(f"{name} accepts arrays of PRNG keys only, got {keys.str_short()}")


def _seed_rule(seeds, *, impl):
  if not dtypes.issubdtype(seeds.dtype, np.integer):
    raise TypeError(f"PRNG key seed must be an integer; got {seeds.str_short()}")
  return ShapedArray(seeds.shape, prng.KeyTy(impl))


def _wrap_rule(data, *, impl):
  n = len(impl.key_shape)
  if data.ndim < n:
    raise TypeError("JAX encountered invalid PRNG key data: expected key_data.ndim >= "
                    f"{n}; got ndim={data.ndim}")
  if data.shape[-n:] != impl.key_shape:
    raise TypeError("JAX encountered invalid PRNG key data: expected key_data.shape to end "
                    f"with {impl.key_shape}; got shape={data.shape} for impl={impl!r}")
  if data.dtype != np.uint32:
    raise TypeError("JAX encountered invalid PRNG key data: expected key_data.dtype = "
                    f"uint32; got dtype={data.dtype}")
  return ShapedArray(data.shape[:-n], prng.KeyTy(impl))


def _wrap_batcher(vals, dims, *, impl):
  # the batch axis must stay among the keys' axes, in front of the data's key axes
  (data,), (d,) = vals, dims
  if d >= core.get_aval(data).ndim - len(impl.key_shape):
    data, d = batching.moveaxis(data, d, 0), 0
  return random_wrap_p.bind(data, impl=impl), d


def _unwrap_rule(keys):
  _check_keys("random_unwrap", keys)
  return prng.physical_aval(keys)


def _split_rule(keys, *, shape):
  _check_keys("random_split", keys)
  return ShapedArray(keys.shape + shape, keys.dtype)


def _fold_in_rule(keys, msgs):
  _check_keys("random_fold_in", keys)
  if msgs.dtype != np.uint32:
    raise TypeError(f"random_fold_in takes uint32 messages, got {msgs.str_short()}")
  shape = ew.broadcast_shapes("random_fold_in", [keys.shape, msgs.shape])
  return ShapedArray(shape, keys.dtype)


def _bits_rule(keys, *, bit_width, shape):
  _check_keys("random_bits", keys)
  if bit_width not in _UINT:
    raise TypeError(f"random_bits: bit_width must be 8, 16, 32 or 64, got {bit_width}")
  return ShapedArray(keys.shape + shape, _UINT[bit_width])


def _clone_rule(keys):
  _check_keys("random_clone", keys)
  return keys


random_seed_p = _key_primitive(
    "random_seed", _seed_rule, lambda ctx, seeds, *, impl: threefry_seed(seeds))
random_wrap_p = _key_primitive(
    "random_wrap", _wrap_rule, lambda ctx, data, *, impl: data, _wrap_batcher)
random_unwrap_p = _key_primitive("random_unwrap", _unwrap_rule, lambda ctx, keys: keys)
random_split_p = _key_primitive(
    "random_split", _split_rule, lambda ctx, keys, *, shape: threefry_split(keys, shape))
random_fold_in_p = _key_primitive(
    "random_fold_in", _fold_in_rule, lambda ctx, keys, msgs: threefry_fold_in(keys, msgs),
    # keys and messages broadcast against each other, as elementwise operands do
    lambda vals, dims: batching._broadcasting_rule(random_fold_in_p, vals, dims, {}))
random_bits_p = _key_primitive(
    "random_bits", _bits_rule,
    lambda ctx, keys, *, bit_width, shape: threefry_random_bits(keys, bit_width, shape))
random_clone_p = _key_primitive("random_clone", _clone_rule, lambda ctx, keys: keys)


def random_seed(seeds, impl):
  return random_seed_p.bind(seeds, impl=impl)


def random_wrap(data, impl):
  return random_wrap_p.bind(data, impl=impl)


def random_unwrap(keys):
  return random_unwrap_p.bind(keys)


def random_split(keys, shape):
  return random_split_p.bind(keys, shape=tuple(shape))


def random_fold_in(keys, msgs):
  return random_fold_in_p.bind(keys, msgs)


def random_bits(keys, bit_width, shape):
  return random_bits_p.bind(keys, bit_width=bit_width, shape=tuple(shape))


def random_clone(keys):
  return random_clone_p.bind(keys)


# ----------------------------------------------------------------------------- key data
# The physical rules of the primitives that accept keys among other arrays. A key
# operand arrives as its data; ctx.avals_in says which operands are keys.

def _key_ndim(aval):
  return len(aval.dtype._impl.key_shape) if type(aval.dtype) is prng.KeyTy else 0


def _key_shape(aval):
  return aval.dtype._impl.key_shape


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
  return lsh.broadcast_in_dim(x, prng.physical_aval(out_aval).shape, range(aval.ndim))


def _select_n(ctx, which, *cases):
  return ew.select_n_p.bind(_to_data_shape(which, ctx.avals_in[0], ctx.avals_in[1]),
                            *cases)


def _compare(prim, reduce):
  """``eq`` / ``ne`` of keys: of every word (a scalar key broadcast to the other's
  shape), then all / any of the words."""
  def rule(ctx, x, y):
    out = ctx.avals_out[0]
    data_shape = prng.physical_aval(out.update(dtype=ctx.avals_in[0].dtype)).shape
    key_axes = tuple(range(out.ndim, len(data_shape)))
    x, y = (lsh.broadcast_in_dim(v, data_shape, key_axes if not a.shape
                                 else range(len(data_shape)))
            for v, a in zip((x, y), ctx.avals_in))
    return reduce(prim.bind(x, y), key_axes)
  return rule


def _convert_element_type(ctx, x, *, new_dtype, weak_type, sharding):
  old = ctx.avals_in[0].dtype
  if new_dtype != old:
    raise ValueError(f"Cannot convert_element_type from {old} to {new_dtype}")
  return x


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


prng.physical_rules.update({
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
    indexing.dynamic_slice_p: _dynamic_slice,
    indexing.dynamic_update_slice_p: _dynamic_update_slice,
    indexing.gather_p: _gather,
    indexing.scatter_p: _scatter,
    cd.stop_gradient_p: _same_params(cd.stop_gradient_p),
    call.optimization_barrier_p: _same_params(call.optimization_barrier_p),
    # the spec names the keys' dimensions: the data's key dimension is not split
    sc.sharding_constraint_p: _same_params(sc.sharding_constraint_p),
})
# calls, loops and custom derivatives: their jaxprs physicalized
for _p in (call.jit_p, call.closed_call_p, call.call_p, lcf.cond_p, lcf.while_p, lcf.scan_p,
           cd.custom_jvp_call_p, cd.custom_vjp_call_p, cd.remat_p):
  prng.physical_rules[_p] = physicalize.rebind_physical(_p)
