"""``rng_bit_generator``: XLA's stateless random bit generator, as a primitive.

The key holds two 64-bit words (``uint32[4]``, low word first, or ``uint64[2]``): the
first is the generator's key, the second its counter. The algorithms are XLA's own
(its ``prng.cc``), so both tiers give the bits JAX gives: Philox-4x32-10 (``RNG_PHILOX``,
and ``RNG_DEFAULT`` as XLA's CPU and GPU backends choose it) and Threefry-2x32-20
(``RNG_THREE_FRY``). The returned key has the counter advanced past the bits drawn.
"""
from __future__ import annotations

import enum

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.core.core import Primitive, ShapedArray
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.lax import indexing
from jaxlite._src.transforms import ad
from jaxlite._src.transforms import batching


class RandomAlgorithm(enum.IntEnum):
  """Algorithm of ``rng_bit_generator``: the platform's default (Philox on CPU and GPU),
  Threefry-2x32 or Philox-4x32."""
  RNG_DEFAULT = 0
  RNG_THREE_FRY = 1
  RNG_PHILOX = 2

  def __str__(self):  # jaxprs print the name, as JAX's do
    return self.name


_BIT_DTYPES = tuple(np.dtype(f"uint{n}") for n in (8, 16, 32, 64))

rng_bit_generator_p = Primitive("rng_bit_generator")
rng_bit_generator_p.multiple_results = True


@rng_bit_generator_p.def_abstract_eval
def _rng_bit_generator_abstract_eval(key, *, shape, dtype, algorithm, out_sharding):
  if (key.shape, key.dtype) not in (((4,), np.dtype(np.uint32)), ((2,), np.dtype(np.uint64))):
    raise TypeError(f"rng_bit_generator: the key must be uint32[4] or uint64[2], got "
                    f"{key.str_short()}")
  return [ShapedArray(key.shape, key.dtype, key.weak_type), ShapedArray(shape, dtype)]


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT,
                      *, out_sharding=None):
  """``(new_key, bits)``: random bits of ``shape`` and unsigned ``dtype`` from ``key``
  (``uint32[4]``), drawn by XLA's generator ``algorithm``; the bits are JAX's."""
  dt = dtypes.canonicalize_dtype(dtype)  # uint64 is uint32 unless x64 is enabled
  if dt not in _BIT_DTYPES:
    raise TypeError(f"rng_bit_generator: unsupported dtype {np.dtype(dtype).name}")
  shape = tuple(int(d) for d in shape)
  return tuple(rng_bit_generator_p.bind(key, shape=shape, dtype=dt,
                                        algorithm=RandomAlgorithm(algorithm),
                                        out_sharding=out_sharding))


ad.defzero(rng_bit_generator_p)


def _rng_bit_generator_batcher(vals, dims, *, shape, dtype, algorithm, out_sharding):
  # as JAX: every example draws from the first example's key, one draw for the batch,
  # and only the first key is advanced
  (keys,), (d,) = vals, dims
  if d is None:
    return rng_bit_generator_p.bind(keys, shape=shape, dtype=dtype, algorithm=algorithm,
                                    out_sharding=out_sharding), [None, None]
  keys = batching.moveaxis(keys, d, 0)
  size = core.get_aval(keys).shape[0]
  new_key, bits = rng_bit_generator_p.bind(
      indexing.index_in_dim(keys, 0, 0, keepdims=False), shape=(size,) + shape, dtype=dtype,
      algorithm=algorithm, out_sharding=out_sharding)
  return [indexing.dynamic_update_index_in_dim(keys, new_key, 0, 0), bits], [0, 0]


batching.batching_rules[rng_bit_generator_p] = _rng_bit_generator_batcher


# -- threefry2x32: the hash of jax.random's keys (the cipher itself is in the NumPy
# backend's rng_impls.py, shared with rng_bit_generator's Threefry)

threefry2x32_p = Primitive("threefry2x32")
threefry2x32_p.multiple_results = True


@threefry2x32_p.def_abstract_eval
def _threefry2x32_abstract_eval(k1, k2, x1, x2):
  if any(a.dtype != np.uint32 for a in (k1, k2, x1, x2)):
    raise TypeError("Arguments to threefry2x32 must have uint32 type, got "
                    + ", ".join(a.str_short() for a in (k1, k2, x1, x2)))
  shape = ew.broadcast_shapes("threefry2x32", [a.shape for a in (k1, k2, x1, x2)])
  return [ShapedArray(shape, np.uint32)] * 2


def _threefry2x32_batcher(vals, dims):
  # Elementwise with lax broadcasting: the shared broadcasting rule applies to each output.
  outs, d = batching._broadcasting_rule(threefry2x32_p, vals, dims, {})
  return outs, [d, d]


ad.defzero(threefry2x32_p)
batching.batching_rules[threefry2x32_p] = _threefry2x32_batcher
