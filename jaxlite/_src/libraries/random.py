"""Pseudo-random numbers: JAX's counter-based threefry2x32 PRNG and its samplers.

A key is a typed key array (``key(seed)``: shape ``()``, dtype ``key<fry>``; see
lax/prng.py) or a raw ``uint32[2]`` array (``PRNGKey(seed)``), which holds
the same data; every function here takes either, and a typed and a raw key with the
same data draw the same numbers. A function of a key and a counter (the Threefry-2x32
block cipher) gives every random bit, so the same key draws the same numbers here as in
JAX 0.10 (with ``jax_threefry_partitionable``, JAX's default). The samplers turn bits
into numbers with JAX's formulas, in lax operations, so they trace under ``jit``,
``vmap`` and ``grad`` like any other code, and every tier runs the same operations.
Results that follow from the bits by exactly specified operations (keys, bits, integers,
``uniform`` on [0, 1), permutations) are JAX's bits on any machine; the rest go through
transcendental functions, fused multiply-adds or LAPACK, whose last bits depend on the
machine in JAX too, and agree with JAX to rounding (docs/sharp_bits.md).

As in JAX, ``split`` and ``fold_in`` of a typed key give typed keys, and of a raw key
raw ones. Typed keys go through the key primitives (``random_split``, ``random_bits``,
...), which jaxprs show; raw keys through the Threefry operations themselves.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.base.config import config
from jaxlite._src.lax import control_flow as lcf
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import prng as lax_prng
from jaxlite._src.lax import shapes as lsh
from jaxlite._src.lax import special
from jaxlite._src.lax.bits import (bitcast_convert_type, clz, shift_left,
                                   shift_right_logical)
from jaxlite._src.lax.call import staged
from jaxlite._src.lax.sharding_constraint import accepts_out_sharding
from jaxlite._src.lax.special import random_gamma_p
from jaxlite._src.lax.sorting import sort_key_val, top_k
from jaxlite._src.libraries.numpy import namespace as jnp_namespace

# ----------------------------------------------------------------------------- helpers

_UINT = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
         64: np.dtype(np.uint64)}


def _jnp():
  return jnp_namespace


def _const(x, value):
  return lax._const(x, value)


def _is_typed(key) -> bool:
  """Whether ``key`` is a typed key array (a tracer of one included)."""
  return type(getattr(key, "dtype", None)) is lax_prng.KeyTy


def _check_prng_key(name, key, allow_batched=False):
  """Validate a typed key, or a raw key (array of trailing shape (2,), dtype uint32), as
  JAX does."""
  if _is_typed(key):
    if not allow_batched and key.ndim:
      raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                       f"{tuple(key.shape)} != (). Use jax.vmap for batching.")
    return key
  if isinstance(key, (bool, int, float, complex)) or not hasattr(key, "shape"):
    if isinstance(key, (list, tuple)) or np.isscalar(key):
      key = _jnp().asarray(key)
    else:
      raise TypeError(f"unexpected PRNG key type {type(key)}")
  if key.ndim < 1:
    raise TypeError("JAX encountered invalid PRNG key data: expected key_data.ndim >= 1; "
                    f"got ndim={key.ndim}")
  if tuple(key.shape[-1:]) != (2,):
    raise TypeError("JAX encountered invalid PRNG key data: expected key_data.shape to "
                    f"end with (2,); got shape={tuple(key.shape)} for "
                    "impl=PRNGImpl(threefry2x32)")
  if key.dtype != np.uint32:
    raise TypeError("JAX encountered invalid PRNG key data: expected key_data.dtype = "
                    f"uint32; got dtype={key.dtype}")
  if not allow_batched and key.ndim > 1:
    raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                     f"{tuple(key.shape)[:-1]} != (). Use jax.vmap for batching.")
  if config.jax_legacy_prng_key == "warn":   # (once per trace under jit, as in JAX)
    warnings.warn(_LEGACY_KEY, UserWarning, stacklevel=3)
  elif config.jax_legacy_prng_key == "error":   # (a traced key too, as in JAX)
    raise ValueError(_LEGACY_KEY)
  return key


_LEGACY_KEY = ("Legacy uint32 key array passed as key to jax.random function. Please create "
               "keys using jax.random.key(). If use of a raw key array was intended, set "
               'jax_legacy_prng_key="allow".')


def _canonical_shape(shape):
  if isinstance(shape, (int, np.integer)):
    return (int(shape),)
  try:
    return tuple(int(d) for d in shape)
  except TypeError:
    raise TypeError("Shapes must be 1D sequences of concrete values of integer type, "
                    f"got {shape}.") from None


def _check_shape(name, shape, *param_shapes):
  if param_shapes:
    result = np.broadcast_shapes(shape, *param_shapes)
    if result != tuple(shape):
      raise ValueError(f"{name} parameter shapes must be broadcast-compatible with shape "
                       "argument, and the result of broadcasting the shapes must equal the "
                       f"shape argument, but got result {result} for shape argument {shape}.")


def _float_dtype(name, dtype):
  dtype = dtypes.canonicalize_dtype(dtypes.default_float_dtype() if dtype is None else dtype)
  if not dtypes.issubdtype(dtype, np.floating):
    raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {dtype}")
  return dtype


def _convert(x, dtype):
  if isinstance(x, np.generic) and np.ndim(x) == 0:
    # np.float64 passes isinstance(x, float) and jnp.asarray rejects NumPy bfloat16:
    # a Python scalar holds any such scalar exactly
    x = x.item() if x.dtype.kind in "biuc" else float(x)
  return lax.convert_element_type(_jnp().asarray(x), dtype)


# ----------------------------------------------------------------------------- keys

def PRNGKey(seed, *, impl=None):
  """Create a pseudo-random number generator key from an integer seed.

  Parameters
  ----------
  seed : int or integer scalar array
    A 64- or 32-bit integer. With ``jax_enable_x64`` off it is first cast to int32,
    as in JAX, so seeds that differ only above bit 31 give the same key.
  impl : None or "threefry2x32"
    Only threefry2x32 is implemented.

  Returns
  -------
  Array
    The raw key, a ``uint32[2]`` array: the seed's high and low 32-bit words (the data
    of the typed key ``key(seed)``).

  Examples
  --------
  >>> import jaxlite as jax
  >>> jax.random.PRNGKey(42)
  Array([ 0, 42], dtype=uint32)
  """
  if config.jax_enable_custom_prng:   # (typed keys, as jax.random.key makes)
    return lax_prng.random_seed(_seed_array("PRNGKey", seed), lax_prng.resolve_impl(impl))
  lax_prng.resolve_impl(impl)
  return lax_prng.threefry_seed(_seed_array("PRNGKey", seed))


def key(seed, *, impl=None, dtype=None):
  """Create a typed PRNG key from an integer seed (``jax.random.key``).

  Parameters
  ----------
  seed : int or integer scalar array
    As for :func:`PRNGKey`.
  impl : None or "threefry2x32"
    Only threefry2x32 is implemented.
  dtype : None, a key dtype (``key_dtype()``) or an implementation's name
    The implementation, said another way (JAX's newer spelling of ``impl``).

  Returns
  -------
  Array
    A key array of shape ``()`` and dtype ``key<fry>``, whose data (``key_data``) is
    ``PRNGKey(seed)``.

  Examples
  --------
  >>> import jaxlite as jax
  >>> jax.random.key(7)
  Array((), dtype=key<fry>) overlaying:
  [0 7]
  >>> jax.random.key_data(jax.random.key(7))
  Array([0, 7], dtype=uint32)
  """
  impl = lax_prng.resolve_impl(_impl_or_dtype("jax.random.key", impl, dtype))
  return lax_prng.random_seed(_seed_array("key", seed), impl)


def _seed_array(name, seed):
  """``seed`` checked and made an integer array, as JAX's ``random.key`` makes it."""
  if _is_typed(seed):
    raise TypeError(f"{name} accepts a scalar seed, but was given a PRNG key.")
  jnp = _jnp()
  if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
    # As JAX: through int64 first, so that large Python hashes do not overflow in x32
    seed = np.int64(seed) if -2**63 <= seed < 2**63 else np.uint64(seed)
    seed = seed.astype(dtypes.canonicalize_dtype(seed.dtype))  # wraps, as JAX's cast
  if np.ndim(seed):
    raise TypeError(f"{name} accepts a scalar seed, but was given an array of shape "
                    f"{np.shape(seed)} != (). Use jax.vmap for batching")
  if hasattr(seed, "shape") and hasattr(seed, "dtype") and seed.dtype == np.uint32 \
      and seed.shape[-1:] == (2,):
    raise TypeError(f"{name} accepts a scalar seed, but was given a PRNG key.")
  seed = jnp.asarray(seed)
  if not dtypes.issubdtype(seed.dtype, np.integer):
    raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
  return seed


def key_data(keys):
  """The ``uint32`` data of a key array: of shape ``keys.shape + (2,)`` for typed keys,
  the (checked) array itself for raw ones.

  Examples
  --------
  >>> import jaxlite as jax
  >>> jax.random.key_data(jax.random.split(jax.random.key(0)))
  Array([[1797259609, 2579123966],
         [ 928981903, 3453687069]], dtype=uint32)
  """
  keys = _check_prng_key("key_data", keys, allow_batched=True)
  return lax_prng.random_unwrap(keys) if _is_typed(keys) else keys


def _impl_or_dtype(api_name, impl, dtype):
  """The PRNG implementation given as ``impl`` or (JAX's newer spelling) ``dtype``."""
  if dtype is None:
    return impl
  if impl is not None:
    raise ValueError(f"Cannot specify both `impl` and `dtype` arguments to {api_name}")
  return dtype


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
  """Typed keys from their ``uint32`` data, of trailing shape ``(2,)`` (checked); ``impl``
  or ``dtype`` names their implementation, as in ``key``.

  Examples
  --------
  >>> import jaxlite as jax, numpy as np
  >>> jax.random.wrap_key_data(np.array([0, 3], np.uint32))
  Array((), dtype=key<fry>) overlaying:
  [0 3]
  """
  impl = lax_prng.resolve_impl(_impl_or_dtype("jax.random.wrap_key_data", impl, dtype))
  return lax_prng.random_wrap(_jnp().asarray(key_bits_array), impl)


def key_impl(keys):
  """The name of the PRNG implementation of typed or raw keys: ``'threefry2x32'``."""
  keys = _check_prng_key("key_impl", keys, allow_batched=True)
  return keys.dtype._impl.name if _is_typed(keys) else lax_prng.threefry_prng_impl.name


def _split(key, shape):
  if _is_typed(key):
    return lax_prng.random_split(key, shape)
  return lax_prng.threefry_split(key, shape)


def split(key, num=2):
  """Split a key into ``num`` new keys, stacked along a new leading axis.

  Parameters
  ----------
  key : Array
    A typed key, or a raw ``uint32[2]`` one.
  num : int or tuple of ints
    The number (or shape) of keys to make.

  Returns
  -------
  Array
    Typed keys of shape ``num`` for a typed key, else raw keys (``num + (2,)``).

  Examples
  --------
  >>> import jaxlite as jax
  >>> jax.random.split(jax.random.PRNGKey(0)).shape
  (2, 2)
  """
  key = _check_prng_key("split", key)
  shape = tuple(num) if isinstance(num, Sequence) else (int(num),)
  return _split(key, shape)


def fold_in(key, data):
  """A new key, a deterministic function of ``key`` and the 32-bit integer ``data``.

  Examples
  --------
  >>> import jaxlite as jax
  >>> jax.random.fold_in(jax.random.PRNGKey(0), 1).shape
  (2,)
  """
  key = _check_prng_key("fold_in", key)
  if np.ndim(data):
    raise TypeError("fold_in accepts a scalar, but was given an array of"
                    f"shape {np.shape(data)} != (). Use jax.vmap for batching.")
  jnp = _jnp()
  if isinstance(data, (int, np.integer)):
    data = np.asarray(data).astype(np.uint32)  # as jnp.asarray(data, dtype="uint32")
  data = lax.convert_element_type(jnp.asarray(data), np.uint32)
  if _is_typed(key):
    return lax_prng.random_fold_in(key, data)
  return lax_prng.threefry_fold_in(key, data)


def _random_bits(key, bit_width, shape):
  if _is_typed(key):
    return lax_prng.random_bits(key, bit_width, shape)
  return lax_prng.threefry_random_bits(key, bit_width, shape)


@accepts_out_sharding
def bits(key, shape=(), dtype=None):
  """Uniform random bits as unsigned integers (``uint32``, or ``uint64`` with x64).

  Examples
  --------
  >>> import jaxlite as jax
  >>> jax.random.bits(jax.random.PRNGKey(0), (3,)).dtype
  dtype('uint32')
  """
  key = _check_prng_key("bits", key)
  dtype = dtypes.canonicalize_dtype(dtypes.default_uint_dtype() if dtype is None else dtype)
  if not dtypes.issubdtype(dtype, np.unsignedinteger):
    raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
  return _random_bits(key, dtype.itemsize * 8, _canonical_shape(shape))


# ----------------------------------------------------------------------------- samplers

@accepts_out_sharding
def uniform(key, shape=(), dtype=None, minval=0., maxval=1.):
  """Uniform random values in ``[minval, maxval)``.

  Parameters
  ----------
  key : Array
    A PRNG key.
  shape : tuple of ints
    The result's shape.
  dtype : float dtype, optional
    Default float32 (float64 with ``jax_enable_x64``).
  minval, maxval : array_like
    Bounds, broadcast-compatible with ``shape``.

  Examples
  --------
  >>> import jaxlite as jax
  >>> x = jax.random.uniform(jax.random.PRNGKey(0), (1000,))
  >>> bool((x >= 0).all() and (x < 1).all())
  True
  """
  key = _check_prng_key("uniform", key)
  return _uniform(key, _canonical_shape(shape), _float_dtype("uniform", dtype), minval, maxval)


@staged(static_argnames=("shape", "dtype"))
def _uniform(key, shape, dtype, minval, maxval):
  _check_shape("uniform", shape, np.shape(minval), np.shape(maxval))
  jnp = _jnp()
  # bounds of lower rank broadcast explicitly, as in JAX, so rank_promotion='raise' passes
  minval, maxval = _convert(minval, dtype), _convert(maxval, dtype)
  minval, maxval = (lsh.broadcast_to_rank(v, len(shape)) for v in (minval, maxval))
  finfo = dtypes.finfo(dtype)
  nbits, nmant = finfo.bits, finfo.nmant
  rng_bits = 8 if nmant < 8 else nbits
  b = _random_bits(key, rng_bits, shape)
  if rng_bits != nbits:
    b = lax.convert_element_type(b, _UINT[nbits])
  # the top mantissa bits under the exponent of 1.0 give a float in [1, 2); less 1, exact
  one = np.array(1.0, dtype)
  float_bits = lax.bitwise_or(shift_right_logical(b, _const(b, rng_bits - nmant)),
                              _const(b, one.view(_UINT[nbits])))
  floats = lax.sub(bitcast_convert_type(float_bits, dtype), _const(one, 1))
  # exact for [0, 1); for other bounds XLA may fuse the multiply and add into one FMA,
  # depending on the machine, so such draws agree with JAX's to rounding
  return jnp.maximum(minval, floats * (maxval - minval) + minval)


@accepts_out_sharding
def randint(key, shape, minval, maxval, dtype=None):
  """Uniform random integers in ``[minval, maxval)`` (JAX's slightly biased modulus).

  Examples
  --------
  >>> import jaxlite as jax
  >>> x = jax.random.randint(jax.random.PRNGKey(0), (100,), 0, 10)
  >>> int(x.min()) >= 0 and int(x.max()) < 10
  True
  """
  key = _check_prng_key("randint", key)
  jnp = _jnp()
  dtype = dtypes.canonicalize_dtype(dtypes.default_int_dtype() if dtype is None else dtype)
  if not dtypes.issubdtype(dtype, np.integer):
    raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
  shape = _canonical_shape(shape)
  info = dtypes.iinfo(dtype)
  sample_dtype = dtype
  if info.bits < 32:  # sample in 32 bits, to keep the modulus bias small
    sample_dtype = np.dtype(np.int32)
    minval = jnp.clip(jnp.asarray(minval).astype(np.int32), int(info.min), int(info.max))
    maxval = jnp.clip(jnp.asarray(maxval).astype(np.int32), int(info.min), int(info.max) + 1)
  return _randint(key, shape, minval, maxval, sample_dtype).astype(dtype)


def _convert_and_clip_integer(val, dtype):
  jnp = _jnp()
  lo = max(int(dtypes.iinfo(dtype).min), int(dtypes.iinfo(val.dtype).min))
  hi = min(int(dtypes.iinfo(dtype).max), int(dtypes.iinfo(val.dtype).max))
  return jnp.clip(val, _const(val, lo), _const(val, hi)).astype(dtype)


@staged(static_argnames=("shape", "dtype"))
def _randint(key, shape, minval, maxval, dtype):
  _check_shape("randint", shape, np.shape(minval), np.shape(maxval))
  jnp = _jnp()
  minval, maxval = (lsh.broadcast_to_rank(jnp.asarray(v), len(shape)) for v in (minval, maxval))
  if not dtypes.issubdtype(minval.dtype, np.integer):
    minval = minval.astype(int)
  if not dtypes.issubdtype(maxval.dtype, np.integer):
    maxval = maxval.astype(int)
  top = _convert_and_clip_integer(jnp.array(dtypes.iinfo(dtype).max, dtype), maxval.dtype)
  maxval_out_of_range = maxval > top
  minval = _convert_and_clip_integer(minval, dtype)
  maxval = _convert_and_clip_integer(maxval, dtype)
  nbits = dtypes.iinfo(dtype).bits
  k1, k2 = _split(key, (2,))
  higher, lower = _random_bits(k1, nbits, shape), _random_bits(k2, nbits, shape)
  udtype = _UINT[nbits]
  span = jnp.broadcast_to(lax.convert_element_type(maxval - minval, udtype), shape)
  one = _const(span, 1)
  span = jnp.where(jnp.broadcast_to(maxval <= minval, shape), one, span)
  span = jnp.where(jnp.broadcast_to(maxval_out_of_range & (maxval > minval), shape),
                   span + one, span)
  # (hi * 2**nbits + lo) % span without overflow, via (a * b) % n == (a%n * b%n) % n
  multiplier = lax.rem(jnp.broadcast_to(_const(span, 2 ** (nbits // 2)), shape), span)
  multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
  offset = lax.add(lax.mul(lax.rem(higher, span), multiplier), lax.rem(lower, span))
  offset = lax.rem(offset, span)
  return minval + lax.convert_element_type(offset, dtype)


@accepts_out_sharding
def normal(key, shape=(), dtype=None):
  """Standard normal random values (the inverse error function of a uniform draw).

  Examples
  --------
  >>> import jaxlite as jax
  >>> jax.random.normal(jax.random.PRNGKey(0), (2, 3)).shape
  (2, 3)
  """
  key = _check_prng_key("normal", key)
  dtype = dtypes.canonicalize_dtype(dtypes.default_float_dtype() if dtype is None else dtype)
  if not dtypes.issubdtype(dtype, np.inexact):
    raise ValueError(f"dtype argument to `normal` must be a float or complex dtype, got {dtype}")
  return _normal(key, _canonical_shape(shape), dtype)


@staged(static_argnames=("shape", "dtype"))
def _normal(key, shape, dtype):
  if dtypes.issubdtype(dtype, np.complexfloating):
    real = np.zeros((), dtype).real.dtype
    k_re, k_im = _split(key, (2,))
    re = _normal_real(k_re, shape, real).astype(dtype)
    im = _normal_real(k_im, shape, real).astype(dtype)
    return (re + 1j * im) / np.array(np.sqrt(2), dtype)
  return _normal_real(key, shape, dtype)


@staged(static_argnames=("shape", "dtype"))
def _normal_real(key, shape, dtype):
  return lax.mul(_convert(np.sqrt(2), dtype), _erf_inv_of_uniform(key, shape, dtype))


def _erf_inv_of_uniform(key, shape, dtype):
  """``erf_inv(u)`` for u uniform on (-1, 1): a standard normal draw over sqrt(2)."""
  lo = np.nextafter(np.array(-1., dtype), np.array(0., dtype), dtype=dtype)
  u = _uniform(key, shape, dtype, lo, np.array(1., dtype))   # (bounds of the draw's dtype)
  return special.erf_inv(u)


@accepts_out_sharding
def truncated_normal(key, lower, upper, shape=None, dtype=None):
  """Standard normal values truncated to ``(lower, upper)``.

  Examples
  --------
  >>> import jaxlite as jax
  >>> x = jax.random.truncated_normal(jax.random.PRNGKey(0), -1., 1., (100,))
  >>> bool((abs(x) < 1).all())
  True
  """
  key = _check_prng_key("truncated_normal", key)
  dtype = _float_dtype("truncated_normal", dtype)
  if shape is None:
    shape = np.broadcast_shapes(np.shape(lower), np.shape(upper))
  else:
    shape = _canonical_shape(shape)
    _check_shape("truncated_normal", shape, np.shape(lower), np.shape(upper))
  return _truncated_normal(key, lower, upper, shape, dtype)


@staged(static_argnames=("shape", "dtype"))
def _truncated_normal(key, lower, upper, shape, dtype):
  jnp = _jnp()
  sqrt2 = _convert(np.sqrt(2), dtype)
  lower, upper = _convert(lower, dtype), _convert(upper, dtype)
  a, b = special.erf(lower / sqrt2), special.erf(upper / sqrt2)
  u = _uniform(key, shape, dtype, a, b)
  out = sqrt2 * special.erf_inv(u)
  from jaxlite._src.lax.custom_derivatives import stop_gradient
  lo = lax.nextafter(stop_gradient(lower), jnp.full(lower.shape, np.inf, dtype))
  hi = lax.nextafter(stop_gradient(upper), jnp.full(upper.shape, -np.inf, dtype))
  return jnp.clip(out, lo, hi)


@accepts_out_sharding
def bernoulli(key, p=0.5, shape=None, mode="low"):
  """Random booleans, True with probability ``p``.

  Examples
  --------
  >>> import jaxlite as jax
  >>> jax.random.bernoulli(jax.random.PRNGKey(0), 0.5, (4,)).dtype
  dtype('bool')
  """
  if mode not in ("high", "low"):
    raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
  key = _check_prng_key("bernoulli", key)
  jnp = _jnp()
  p = jnp.asarray(p)
  if not dtypes.issubdtype(p.dtype, np.floating):
    raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {p.dtype}.")
  p = lax.convert_element_type(p, p.dtype)   # (a Python float: strongly typed, as in JAX)
  shape = p.shape if shape is None else _canonical_shape(shape)
  _check_shape("bernoulli", shape, p.shape)
  return _bernoulli(key, p, shape, mode)


@staged(static_argnames=("shape", "mode"))
def _bernoulli(key, p, shape, mode):
  if mode == "high":
    u1, u2 = _uniform(key, (2, *shape), p.dtype, 0., 1.)
    u2 = u2 * _convert(2.0 ** -dtypes.finfo(p.dtype).nmant, p.dtype)
    return u2 < p - u1
  return _uniform(key, shape, p.dtype, 0., 1.) < p


@accepts_out_sharding
def exponential(key, shape=(), dtype=None):
  """Standard exponential random values, ``-log1p(-u)``."""
  key = _check_prng_key("exponential", key)
  dtype = _float_dtype("exponential", dtype)
  return _exponential(key, _canonical_shape(shape), dtype)


@staged(static_argnames=("shape", "dtype"))
def _exponential(key, shape, dtype):
  u = _uniform(key, shape, dtype, 0., 1.)
  return lax.neg(lax.log1p(lax.neg(u)))


@accepts_out_sharding
def laplace(key, shape=(), dtype=None):
  """Standard Laplace random values."""
  key = _check_prng_key("laplace", key)
  return _laplace(key, _canonical_shape(shape), _float_dtype("laplace", dtype))


@staged(static_argnames=("shape", "dtype"))
def _laplace(key, shape, dtype):
  u = _uniform(key, shape, dtype, -1. + dtypes.finfo(dtype).epsneg, 1.)
  return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


@accepts_out_sharding
def logistic(key, shape=(), dtype=None):
  """Standard logistic random values, ``log(u) - log1p(-u)``."""
  key = _check_prng_key("logistic", key)
  return _logistic(key, _canonical_shape(shape), _float_dtype("logistic", dtype))


@staged(static_argnames=("shape", "dtype"))
def _logistic(key, shape, dtype):
  x = _uniform(key, shape, dtype, dtypes.finfo(dtype).tiny, 1.)
  return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


@accepts_out_sharding
def cauchy(key, shape=(), dtype=None):
  """Standard Cauchy random values, ``tan(pi (u - 1/2))``."""
  key = _check_prng_key("cauchy", key)
  return _cauchy(key, _canonical_shape(shape), _float_dtype("cauchy", dtype))


@staged(static_argnames=("shape", "dtype"))
def _cauchy(key, shape, dtype):
  u = _uniform(key, shape, dtype, dtypes.finfo(dtype).eps, 1.)
  return lax.tan(lax.mul(_const(u, np.pi), lax.sub(u, _const(u, 0.5))))


@accepts_out_sharding
def gumbel(key, shape=(), dtype=None, mode=None):
  """Standard Gumbel random values.

  ``mode``: ``'low'`` draws one uniform per sample; ``'high'`` two, resolving events of
  low probability better; ``'highest'`` (float32) makes one 64-bit fixed-point uniform
  of two 32-bit draws. None: ``'high'`` under ``jax_high_dynamic_range_gumbel``, else
  ``'low'``, as in JAX.
  """
  key = _check_prng_key("gumbel", key)
  dtype = _float_dtype("gumbel", dtype)
  if mode is None:
    mode = "high" if config.jax_high_dynamic_range_gumbel else "low"
  if mode not in ("highest", "high", "low"):
    raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
  return _gumbel(key, _canonical_shape(shape), dtype, mode)


def _uniform_64_bit_fixed_point(bits):
  """A float32 in (0, 1) from ``bits`` (uint32[2, ...]: a 64-bit fixed-point fraction,
  high word first), rounded down to 24 significant bits wherever they start: the
  leading zeros of the pair set the exponent."""
  jnp = _jnp()
  info = dtypes.finfo(np.float32)
  lead_hi, lead_lo = clz(bits)
  hi, lo = bits
  u32 = lambda v: np.array(v, np.uint32)
  mantissa = lax.bitwise_or(
      shift_left(hi, lead_hi),
      jnp.where(lead_hi == 32, shift_left(lo, lead_lo),
                shift_right_logical(lo, u32(info.bits) - lead_hi)))
  mantissa = shift_right_logical(mantissa, u32(info.bits - info.nmant - 1))
  mantissa = lax.bitwise_and(mantissa, u32((1 << info.nmant) - 1))
  exponent = shift_left(u32(-info.minexp) - jnp.where(lead_hi == 32, 32 + lead_lo, lead_hi),
                        u32(info.nmant))
  exponent = lax.bitwise_and(exponent, u32((1 << (info.bits - 2)) - (1 << (info.nmant - 1))))
  return bitcast_convert_type(lax.bitwise_or(exponent, mantissa), np.float32)


@staged(static_argnames=("shape", "dtype", "mode"))
def _gumbel(key, shape, dtype, mode):
  jnp = _jnp()
  info = dtypes.finfo(dtype)
  if mode == "highest" and dtype == np.float32:
    # u near 0 and 1 - u near 0 both keep full precision: a 64-bit u, flipped to 1 - u
    # (two's complement of the pair) in the upper half, where log1p takes over
    bits = _random_bits(key, info.bits, (2,) + shape)
    flipped = lax.bitwise_not(bits)
    low = flipped[1]
    carry = low == np.array(np.iinfo(np.uint32).max, np.uint32)
    flipped = flipped + jnp.array([carry, jnp.ones_like(low)], dtype=np.uint32)
    lower_half = bits[0] < np.array(1 << (info.bits - 1), np.uint32)
    x = _uniform_64_bit_fixed_point(jnp.where(lower_half, bits, flipped))
    return jnp.where(lower_half, -jnp.log(-jnp.log1p(-x)), -jnp.log(-jnp.log(x)))
  if mode in ("high", "highest"):
    high, low = _uniform(key, (2,) + shape, dtype, 0., 1.)
    x = jnp.where(high >= 0.5, high, high + _convert(2.0 ** -info.nmant, dtype) * low
                  + _convert(info.tiny, dtype))
    return lax.neg(lax.log(lax.neg(lax.log1p(lax.neg(x)))))
  # (by keyword, as JAX calls it: the jit's operands come sorted by name)
  u = _uniform(key, minval=info.tiny, maxval=1., shape=shape, dtype=dtype)
  return lax.neg(lax.log(lax.neg(lax.log(u))))


@accepts_out_sharding
def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
  """Samples from a categorical distribution given unnormalised log-probabilities.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> jax.random.categorical(jax.random.PRNGKey(0), jnp.log(jnp.array([.2, .8])),
  ...                        shape=(5,)).shape
  (5,)
  """
  key = _check_prng_key("categorical", key)
  jnp = _jnp()
  logits = jnp.asarray(logits)
  batch_shape = tuple(np.delete(logits.shape, axis))
  shape = batch_shape if shape is None else _canonical_shape(shape)
  _check_shape("categorical", shape, batch_shape)
  prefix = shape[:len(shape) - len(batch_shape)]
  if replace:
    if axis >= 0:
      axis -= logits.ndim
    logits_shape = list(shape[len(shape) - len(batch_shape):])
    logits_shape.insert(axis % logits.ndim, logits.shape[axis])
    g = gumbel(key, (*prefix, *logits_shape), logits.dtype, mode)
    return jnp.argmax(g + jnp.expand_dims(logits, tuple(range(len(prefix)))), axis=axis)
  logits = logits + gumbel(key, logits.shape, logits.dtype, mode)
  k = math.prod(prefix)
  if k > logits.shape[axis]:
    raise ValueError(f"Number of samples without replacement ({k}) cannot exceed number "
                     f"of categories ({logits.shape[axis]}).")
  idx = top_k(jnp.moveaxis(logits, axis, -1), k)[1]
  return lsh.reshape(idx, shape, (idx.ndim - 1, *range(idx.ndim - 1))) \
      if idx.ndim > 1 else lsh.reshape(idx, shape)


@accepts_out_sharding
def permutation(key, x, axis=0, independent=False):
  """A random permutation of ``arange(x)`` or of ``x`` along ``axis``.

  Examples
  --------
  >>> import jaxlite as jax
  >>> sorted(jax.random.permutation(jax.random.PRNGKey(0), 5).tolist())
  [0, 1, 2, 3, 4]
  """
  key = _check_prng_key("permutation", key)
  jnp = _jnp()
  if not np.ndim(x):
    if not dtypes.issubdtype(dtypes.dtype(x), np.integer):
      raise TypeError("x must be an integer or at least 1-dimensional")
    return _shuffle(key, jnp.arange(int(x)), 0)
  x = jnp.asarray(x)
  axis = axis % x.ndim
  if independent or x.ndim == 1:
    return _shuffle(key, x, axis)
  ind = _shuffle(key, jnp.arange(x.shape[axis]), 0)
  return jnp.take(x, ind, axis)


@staged(static_argnames=("axis",))
def _shuffle(key, x, axis):
  # As JAX: sort by fresh random 32-bit keys, enough rounds that collisions are unlikely.
  rounds = int(np.ceil(3 * np.log(max(1, x.size)) / np.log(np.iinfo(np.uint32).max)))
  for _ in range(rounds):
    key, subkey = _split(key, (2,))
    x = sort_key_val(_random_bits(subkey, 32, x.shape), x, dimension=axis)[1]
  return x


def shuffle(key, x, axis=0):
  """Shuffle ``x`` along ``axis`` (deprecated in JAX in favour of ``permutation``)."""
  key = _check_prng_key("shuffle", key)
  x = _jnp().asarray(x)
  return _shuffle(key, x, axis % max(x.ndim, 1))


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
  """Random samples from ``a`` (or ``arange(a)``), with or without replacement.

  Examples
  --------
  >>> import jaxlite as jax
  >>> jax.random.choice(jax.random.PRNGKey(0), 10, (3,), replace=False).shape
  (3,)
  """
  key = _check_prng_key("choice", key)
  if not isinstance(shape, Sequence):
    raise TypeError("shape argument of jax.random.choice must be a sequence, "
                    f"got {shape}")
  jnp = _jnp()
  arr = jnp.asarray(a)
  if arr.ndim == 0:
    n_inputs = int(a)
  else:
    axis = axis % arr.ndim
    n_inputs = arr.shape[axis]
  shape = tuple(shape)
  n_draws = math.prod(shape)
  if n_draws == 0:
    return jnp.zeros(shape, dtype=arr.dtype)
  if n_inputs <= 0:
    raise ValueError("a must be greater than 0 unless no samples are taken")
  if not replace and n_draws > n_inputs:
    raise ValueError(f"Cannot take a larger sample (size {n_draws}) than population "
                     f"(size {n_inputs}) when 'replace=False'")
  if p is None:
    if replace:
      ind = randint(key, shape, 0, n_inputs)
      result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
    else:
      result = permutation(key, n_inputs if arr.ndim == 0 else arr, axis)
      result = lsh.slice_in_dim(result, 0, n_draws, axis=axis)
  else:
    p_arr = jnp.asarray(p)
    if not dtypes.issubdtype(p_arr.dtype, np.inexact):
      p_arr = p_arr.astype(dtypes.default_float_dtype())
    if p_arr.shape != (n_inputs,):
      raise ValueError("p must be None or a 1D vector with the same size as a.shape[axis]. "
                       f"p has shape {p_arr.shape} and a.shape[axis] is {n_inputs}.")
    if replace:
      p_cuml = jnp.cumsum(p_arr)
      r = p_cuml[-1] * (1 - _uniform(key, shape, p_cuml.dtype, 0., 1.))
      ind = jnp.searchsorted(p_cuml, r).astype(dtypes.default_int_dtype())
    else:
      g = gumbel(key, (n_inputs,), p_arr.dtype, mode) + jnp.log(p_arr)
      ind = top_k(g, n_draws)[1].astype(dtypes.default_int_dtype())
    result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
  return result.reshape(shape if arr.ndim == 0 else
                        arr.shape[0:axis] + shape + arr.shape[axis + 1:])


# -- gamma and friends: Marsaglia and Tsang's rejection sampler, one element at a time

def _gamma_one(key, alpha, log_space):
  zero, one = _const(alpha, 0), _const(alpha, 1)
  minus_one, one_third = _const(alpha, -1), _const(alpha, 1 / 3)
  squeeze = _const(alpha, 0.0331)
  dtype = alpha.dtype
  boost_mask = lax.ge(alpha, one)
  alpha_orig = alpha
  alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))  # boost alpha < 1 at the end
  d = lax.sub(alpha, one_third)
  c = lax.div(one_third, lax.sqrt(d))

  def cond_fn(kxvu):
    _, x, v, u = kxvu
    return lax.bitwise_and(
        lax.ge(u, lax.sub(one, lax.mul(squeeze, lax.mul(x, x)))),
        lax.ge(lax.log(u), lax.add(lax.mul(x, _const(alpha, 0.5)),
                                   lax.mul(d, lax.add(lax.sub(one, v), lax.log(v))))))

  def body_fn(kxvu):
    def next_kxv(kxv):
      k, subkey = _split(kxv[0], (2,))
      x = _normal_real(subkey, (), dtype)
      return k, x, lax.add(one, lax.mul(x, c))

    k, x_key, u_key = _split(kxvu[0], (3,))
    _, x, v = lcf.while_loop(lambda kxv: lax.le(kxv[2], zero), next_kxv,
                             (x_key, zero, minus_one))
    return k, lax.mul(x, x), lax.mul(lax.mul(v, v), v), _uniform(u_key, (), dtype, 0., 1.)

  key, subkey = _split(key, (2,))
  _, _, v, _ = lcf.while_loop(cond_fn, body_fn, (key, zero, one, _const(alpha, 2)))
  if log_space:
    log_samples = lax.neg(_exponential(subkey, (), dtype))
    log_boost = lax.select(lax.bitwise_or(boost_mask, lax.eq(log_samples, zero)), zero,
                           lax.mul(log_samples, lax.div(one, alpha_orig)))
    return lax.add(lax.add(lax.log(d), lax.log(v)), log_boost)
  samples = lax.sub(one, _uniform(subkey, (), dtype, 0., 1.))
  boost = lax.select(boost_mask, one, lax.pow(samples, lax.div(one, alpha_orig)))
  return lax.mul(lax.mul(d, v), boost)


def _gamma(key, a, shape, dtype, log_space=False):
  jnp = _jnp()
  if shape is None:
    shape = np.shape(a)
  else:
    _check_shape("gamma", shape, np.shape(a))
  a = jnp.broadcast_to(_convert(a, dtype), shape)
  # random_gamma takes raw keys (its sampler splits and loops on the data)
  return random_gamma_p.bind(key_data(key), a, log_space=bool(log_space))


def _gamma_impl(key, a, *, log_space):
  """Gamma samples for the keys ``key`` (*batch, 2), each split into one key per element
  of the matching slice of ``a``."""
  jnp = _jnp()
  if a.size == 0:
    return jnp.zeros(a.shape, a.dtype)
  count = math.prod(a.shape[key.ndim - 1:])
  key = jnp.reshape(key, (-1, 2))
  keys = lcf.vmap_axis(lambda k: _split(k, (count,)), key, key.shape[0])
  keys = jnp.reshape(keys, (-1, 2))
  samples = lcf.vmap_axis(lambda k_a: _gamma_one(*k_a, log_space), (keys, jnp.ravel(a)),
                          keys.shape[0])
  return jnp.reshape(samples, a.shape)


@accepts_out_sharding
def gamma(key, a, shape=None, dtype=None):
  """Gamma random values of shape parameter ``a`` (unit scale); differentiable in ``a``
  (implicit reparameterization, as JAX).

  Examples
  --------
  >>> import jaxlite as jax
  >>> jax.random.gamma(jax.random.PRNGKey(0), 2., (3,)).shape
  (3,)
  """
  key = _check_prng_key("gamma", key)
  dtype = _float_dtype("gamma", dtype)
  return _gamma(key, a, None if shape is None else _canonical_shape(shape), dtype)


@accepts_out_sharding
def loggamma(key, a, shape=None, dtype=None):
  """The logarithm of gamma random values, accurate for small ``a``."""
  key = _check_prng_key("loggamma", key)
  dtype = _float_dtype("loggamma", dtype)
  return _gamma(key, a, None if shape is None else _canonical_shape(shape), dtype, True)


@accepts_out_sharding
def beta(key, a, b, shape=None, dtype=None):
  """Beta random values, from the ratio of two gamma draws (in log space)."""
  key = _check_prng_key("beta", key)
  dtype = _float_dtype("beta", dtype)
  jnp = _jnp()
  shape = np.broadcast_shapes(np.shape(a), np.shape(b)) if shape is None \
      else _canonical_shape(shape)
  _check_shape("beta", shape, np.shape(a), np.shape(b))
  key_a, key_b = _split(key, (2,))
  a = jnp.broadcast_to(_convert(a, dtype), shape)
  b = jnp.broadcast_to(_convert(b, dtype), shape)
  log_ga = _gamma(key_a, a, shape, dtype, True)
  log_gb = _gamma(key_b, b, shape, dtype, True)
  log_max = jnp.maximum(log_ga, log_gb)
  ga, gb = lax.exp(log_ga - log_max), lax.exp(log_gb - log_max)
  return ga / (ga + gb)


@accepts_out_sharding
def dirichlet(key, alpha, shape=None, dtype=None):
  """Dirichlet random vectors (along the last axis of ``alpha``)."""
  key = _check_prng_key("dirichlet", key)
  dtype = _float_dtype("dirichlet", dtype)
  if np.ndim(alpha) < 1:
    raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {np.ndim(alpha)}")
  shape = np.shape(alpha)[:-1] if shape is None else _canonical_shape(shape)
  _check_shape("dirichlet", shape, np.shape(alpha)[:-1])
  log_g = _gamma(key, _convert(alpha, dtype), shape + np.shape(alpha)[-1:], dtype, True)
  # JAX's own softmax here (not jax.nn.softmax)
  from jaxlite._src.lax.custom_derivatives import stop_gradient
  jnp = _jnp()
  unnormalized = lax.exp(log_g - stop_gradient(jnp.max(log_g, -1, keepdims=True)))
  return unnormalized / unnormalized.sum(-1, keepdims=True)


@accepts_out_sharding
def poisson(key, lam, shape=None, dtype=None):
  """Poisson random integers of rate ``lam`` (Knuth below 10, rejection above, as JAX)."""
  key = _check_prng_key("poisson", key)
  jnp = _jnp()
  dtype = dtypes.canonicalize_dtype(dtypes.default_int_dtype() if dtype is None else dtype)
  shape = np.shape(lam) if shape is None else _canonical_shape(shape)
  lam = lax.convert_element_type(jnp.broadcast_to(jnp.asarray(lam), shape), np.float32)
  use_knuth = (lam != lam) | (lam < 10)
  lam_knuth = jnp.where(use_knuth, lam, 0.)
  lam_rej = jnp.where(use_knuth, 1e5, lam)
  max_iters = int(dtypes.iinfo(dtype).max)
  result = jnp.where(use_knuth, _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
                     _poisson_rejection(key, lam_rej, shape, dtype, max_iters))
  return jnp.where(lam == 0, jnp.zeros_like(result), result)


def _poisson_knuth(key, lam, shape, dtype, max_iters):
  jnp = _jnp()

  def body(carry):
    i, k, rng, log_prod = carry
    rng, subkey = _split(rng, (2,))
    k = jnp.where(log_prod > -lam, k + 1, k)
    u = _uniform(subkey, shape, np.float32, 0., 1.)
    return i + 1, k, rng, log_prod + jnp.log(u)

  def cond(carry):
    i, log_prod = carry[0], carry[3]
    return jnp.any(log_prod > -lam) & (i < max_iters)

  init = (jnp.asarray(0, dtype), jnp.zeros(shape, dtype), key, jnp.zeros(shape, np.float32))
  k = lcf.while_loop(cond, body, init)[1]
  return (k - 1).astype(dtype)


def _poisson_rejection(key, lam, shape, dtype, max_iters):
  jnp = _jnp()
  log_lam = jnp.log(lam)
  b = 0.931 + 2.53 * jnp.sqrt(lam)
  a = -0.059 + 0.02483 * b
  inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
  v_r = 0.9277 - 3.6224 / (b - 2)

  def body(carry):
    i, k_out, accepted, key = carry
    key, sk0, sk1 = _split(key, (3,))
    u = _uniform(sk0, shape, lam.dtype, 0., 1.) - 0.5
    v = _uniform(sk1, shape, lam.dtype, 0., 1.)
    u_shifted = 0.5 - abs(u)
    k = jnp.floor((2 * a / u_shifted + b) * u + lam + 0.43)
    s = jnp.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
    t = -lam + k * log_lam - special.lgamma(k + 1)
    accept1 = (u_shifted >= 0.07) & (v <= v_r)
    reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
    accept = accept1 | (~reject & (s <= t))
    return i + 1, jnp.where(accept, k, k_out), accepted | accept, key

  def cond(carry):
    i, _, accepted, _ = carry
    return jnp.any(~accepted) & (i < max_iters)

  init = (jnp.asarray(0, dtype), jnp.full(shape, -1., lam.dtype),
          jnp.zeros(shape, bool), key)
  return lcf.while_loop(cond, body, init)[1].astype(dtype)


@accepts_out_sharding
def multivariate_normal(key, mean, cov, shape=None, dtype=None, method="cholesky"):
  """Multivariate normal random vectors ``mean + L z`` with ``L L^T = cov``.

  The factor comes from ``lax.linalg`` (``cholesky``, ``eigh`` or ``svd`` by ``method``).
  """
  key = _check_prng_key("multivariate_normal", key)
  if method not in {"svd", "eigh", "cholesky"}:
    raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
  jnp = _jnp()
  from jaxlite._src.libraries.numpy.util import promote_dtypes_inexact
  mean, cov = promote_dtypes_inexact(mean, cov)
  dtype = mean.dtype if dtype is None else _float_dtype("multivariate_normal", dtype)
  if mean.ndim < 1:
    raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == {mean.ndim}")
  if cov.ndim < 2:
    raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {cov.ndim}")
  n = mean.shape[-1]
  if cov.shape[-2:] != (n, n):
    raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, but "
                     f"got cov.shape == {cov.shape}.")
  if shape is None:
    shape = np.broadcast_shapes(mean.shape[:-1], cov.shape[:-2])
  else:
    shape = _canonical_shape(shape)
    _check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
  from jaxlite._src.lax import linalg
  if method == "svd":
    u, s, _ = linalg.svd(cov)
    factor = u * jnp.sqrt(s[..., None, :])
  elif method == "eigh":
    v, w = linalg.eigh(cov)
    factor = v * jnp.sqrt(w[..., None, :])
  else:
    factor = linalg.cholesky(cov)
  z = _normal(key, shape + mean.shape[-1:], dtype)
  out = jnp.einsum("...ij,...j->...i", factor, z)
  # the mean broadcasts against the samples whatever jax_numpy_rank_promotion says (JAX
  # adds them under numpy_rank_promotion('allow'))
  out_shape = np.broadcast_shapes(mean.shape, out.shape)
  return jnp.broadcast_to(mean, out_shape) + jnp.broadcast_to(out, out_shape)


@accepts_out_sharding
def orthogonal(key, n, shape=(), dtype=None, m=None):
  """Random ``n x m`` matrices (default square) with orthonormal rows or columns,
  uniformly distributed (Haar), from the QR decomposition of a normal draw."""
  key = _check_prng_key("orthogonal", key)
  dtype = _float_dtype("orthogonal", dtype)
  m = n if m is None else int(m)
  n, shape = int(n), _canonical_shape(shape)
  from jaxlite._src.lax import linalg
  jnp = _jnp()
  z = _normal(key, (*shape, max(n, m), min(n, m)), dtype)
  q, r = linalg.qr(z, full_matrices=False)
  d = jnp.diagonal(r, axis1=-2, axis2=-1) if hasattr(jnp, "diagonal") else \
      jnp.sum(r * jnp.eye(r.shape[-1], dtype=r.dtype), axis=-1)
  x = q * jnp.expand_dims(jnp.sign(d), -2)
  return jnp.swapaxes(x, -1, -2) if n < m else x


def _params_shape(name, shape, *params):
  """``shape``, or the parameters' broadcast shape when None (checked against them)."""
  if shape is None:
    return tuple(jnp_namespace.broadcast_shapes(*[np.shape(p) for p in params]))
  shape = _canonical_shape(shape)
  _check_shape(name, shape, *[np.shape(p) for p in params])
  return shape


def clone(key):
  """A copy of ``key``: ``random_clone`` of a typed key array of any shape, as JAX takes
  any (a raw key, immutable, is itself as an array)."""
  return lax_prng.random_clone(key) if _is_typed(key) else jnp_namespace.asarray(key)


def key_dtype(impl_spec=None):
  """The dtype of the keys ``random.key`` makes: ``key<fry>``."""
  return lax_prng.KeyTy(lax_prng.resolve_impl(impl_spec))
