"""Tier 0's counter-based random bit generators: the Threefry-2x32 cipher (``threefry2x32``
and ``rng_bit_generator``'s Threefry algorithm) and Philox-4x32-10, with XLA's way of
turning a ``rng_bit_generator`` key into counters and counters into bits (its
``prng.cc`` and ``RngBitGeneratorExpander``), so that the bits are XLA's.
"""
import math

import numpy as np

from jaxlite._src.libraries import random
from jaxlite._src.core.array import Array
from jaxlite._src.backends.numpy.impls import impl_rules
from jaxlite._src.lax import rng
from jaxlite._src.lax import special

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_U32, _U64 = np.uint32, np.uint64


def threefry2x32(k1, k2, x1, x2):
  """Threefry-2x32 (20 rounds) on NumPy ``uint32`` arrays, vectorised over elements."""
  k1, k2, x1, x2 = (np.asarray(a, _U32) for a in (k1, k2, x1, x2))
  shape = np.broadcast_shapes(k1.shape, k2.shape, x1.shape, x2.shape)
  ks = (k1, k2, k1 ^ k2 ^ _U32(0x1BD11BDA))   # (the keys broadcast where they are used)
  # in place on the two words and one scratch array: the 20 rounds' temporaries were
  # most of the time of a large draw (a gamma sampler's loop draws many)
  with np.errstate(over="ignore"):  # uint32 arithmetic wraps, as the cipher requires
    x0 = np.add(x1, ks[0], out=np.empty(shape, _U32))
    x1 = np.add(x2, ks[1], out=np.empty(shape, _U32))
    scratch = np.empty(shape, _U32)
    for i in range(5):
      for r in _ROTATIONS[i % 2]:
        np.add(x0, x1, out=x0)
        np.left_shift(x1, _U32(r), out=scratch)
        np.right_shift(x1, _U32(32 - r), out=x1)
        np.bitwise_or(x1, scratch, out=x1)
        np.bitwise_xor(x1, x0, out=x1)
      np.add(x0, ks[(i + 1) % 3], out=x0)
      np.add(x1, ks[(i + 2) % 3], out=x1)
      np.add(x1, _U32(i + 1), out=x1)
  return [x0, x1]


def _philox4x32(words, key):
  """Philox-4x32 with 10 rounds on four ``uint32`` arrays and a two-word key."""
  k0, k1 = key
  with np.errstate(over="ignore"):
    for _ in range(10):
      p0 = words[0].astype(_U64) * _U64(0xD2511F53)
      p1 = words[2].astype(_U64) * _U64(0xCD9E8D57)
      hi = lambda p: (p >> _U64(32)).astype(_U32)
      words = [hi(p1) ^ words[1] ^ k0, p1.astype(_U32), hi(p0) ^ words[3] ^ k1,
               p0.astype(_U32)]
      k0, k1 = k0 + _U32(0x9E3779B9), k1 + _U32(0xBB67AE85)
  return words


def _split(u64):
  return [np.asarray(u64 & _U64(0xFFFFFFFF)).astype(_U32), np.asarray(u64 >> _U64(32)).astype(_U32)]


def _philox_bits(key, counter, n):
  """``n`` uint32 words: the 128-bit counters ``(counter, key) + i`` enciphered under
  ``key``, their four words interleaved; and the counter advanced past them."""
  blocks = -(-n // 4)
  with np.errstate(over="ignore"):
    low = counter + np.arange(blocks, dtype=_U64)
  high = np.where(low < counter, key + _U64(1), key)   # the 128-bit carry
  words = _philox4x32(_split(low) + _split(high), _split(key))
  return np.stack(words, axis=1).reshape(-1)[:n], counter + _U64(blocks)


def _split_shape(shape):
  """XLA's halving of a shape for Threefry: the first even axis (else the largest) is
  halved (rounded up), with a new axis of 2 after it."""
  if not shape:
    return (1,), 0
  axis = next((i for i, d in enumerate(shape) if d % 2 == 0), None)
  if axis is None:
    axis = max(range(len(shape)), key=lambda i: (shape[i], -i))
  return shape[:axis] + (-(-shape[axis] // 2), 1) + shape[axis + 1:], axis


def _threefry_counters(counter, shape):
  # each element's counter: the initial one plus its row-major index over axes longer
  # than 1 (XLA adds one iota per such axis)
  index = np.zeros(shape, _U64)
  stride = 1
  for axis in reversed(range(len(shape))):
    if shape[axis] < 2:
      continue
    index = index + np.arange(shape[axis], dtype=_U64).reshape(
        (-1,) + (1,) * (len(shape) - axis - 1)) * _U64(stride)
    stride *= shape[axis]
  with np.errstate(over="ignore"):
    return counter + index


def _threefry_bits(key, counter, shape, wide):
  """Threefry bits of ``shape``: 32-bit ones from a halved shape whose two output words
  are joined along a new axis, 64-bit ones as the two words of each element."""
  k = _split(key)
  if wide:
    x = threefry2x32(*k, *_split(_threefry_counters(counter, shape)))
    return x[0].astype(_U64) | (x[1].astype(_U64) << _U64(32)), counter + _U64(math.prod(shape))
  half, axis = _split_shape(shape)
  x = threefry2x32(*k, *_split(_threefry_counters(counter, half)))
  if not shape:
    return x[0].reshape(()), counter + _U64(1)
  joined = np.concatenate(x, axis=axis + 1).reshape(
      shape[:axis] + (2 * half[axis],) + shape[axis + 1:])
  return joined[tuple(slice(0, d) for d in shape)], counter + _U64(math.prod(half))


def _rng_bit_generator(key, *, shape, dtype, algorithm, out_sharding):
  words = key
  if key.dtype == np.uint32:   # two uint64 words, low halves first
    words = key[0::2].astype(_U64) | (key[1::2].astype(_U64) << _U64(32))
  k, counter = words[0], words[1]
  wide = dtype.itemsize == 8
  if algorithm == rng.RandomAlgorithm.RNG_THREE_FRY:
    bits, counter = _threefry_bits(k, counter, shape, wide)
  else:   # Philox, XLA's default on CPU and GPU
    n = math.prod(shape)
    flat, counter = _philox_bits(k, counter, 2 * n if wide else n)
    if wide:
      flat = flat[0::2].astype(_U64) | (flat[1::2].astype(_U64) << _U64(32))
    bits = flat.reshape(shape)
  with np.errstate(over="ignore"):
    new = np.array([k, counter], _U64)
  if key.dtype == np.uint32:
    new = np.stack(_split(new), axis=1).reshape(4)
  return [new, bits.astype(dtype)]   # narrow types keep the low bits


impl_rules[rng.rng_bit_generator_p] = _rng_bit_generator
impl_rules[rng.threefry2x32_p] = threefry2x32


def _gamma_numpy(key, a, *, log_space):
  """Tier 0's ``random_gamma``: jax.random's sampler, run on NumPy arrays (the XLA tier
  lowers the same code)."""
  return np.asarray(random._gamma_impl(Array(key), Array(a), log_space=log_space))


impl_rules[special.random_gamma_p] = _gamma_numpy
