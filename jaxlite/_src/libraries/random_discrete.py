"""``jax.random``'s discrete distributions built on the basic samplers of ``random.py``
(uniform, bernoulli): random signs, geometric waiting times, and binomial and multinomial
counts, with JAX's formulas and key splits, so they agree with JAX's draws to rounding
(``rademacher`` bit for bit)."""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.lax import control_flow
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import sorting
from jaxlite._src.libraries import random as R
from jaxlite._src.libraries.numpy import namespace as jnp
from jaxlite._src.libraries.numpy.util import promote_dtypes_inexact

__all__ = ["binomial", "geometric", "multinomial", "rademacher"]


@R.accepts_out_sharding
def rademacher(key, shape=(), dtype=None):
  """Random signs: -1 or +1 with equal probability."""
  dtype = dtypes.canonicalize_dtype(dtypes.default_int_dtype() if dtype is None else dtype)
  b = R.bernoulli(key, 0.5, R._canonical_shape(shape))
  return (2 * b.astype(dtype) - 1).astype(dtype)


@R.accepts_out_sharding
def geometric(key, p, shape=None, dtype=None):
  """Geometric random integers >= 1: trials until the first success of probability
  ``p``, ``floor(log(u) / log1p(-p)) + 1``."""
  dtype = dtypes.canonicalize_dtype(dtypes.default_int_dtype() if dtype is None else dtype)
  if not dtypes.issubdtype(dtype, np.integer):
    raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
  shape = R._params_shape("geometric", shape, p)
  p, = promote_dtypes_inexact(p)
  u = R.uniform(key, shape, p.dtype)
  u = jnp.where(u == 0, 1, u)   # as JAX: u = 0 would give log(0)
  return (jnp.floor(jnp.log(u) / jnp.broadcast_to(jnp.log1p(-p), shape)) + 1).astype(dtype)


def binomial(key, n, p, shape=None, dtype=None):
  """Binomial random counts (as floats) of ``n`` trials of probability ``p``.

  As JAX (and TensorFlow): with ``q = min(p, 1 - p)``, by inversion (counting geometric
  waiting times) where ``n q <= 10``, else by Hoermann's transformed rejection (BTRS).
  Invalid parameters (``n`` NaN or negative, ``p`` NaN or negative) give NaN, infinite
  ``n`` gives inf.
  """
  key = R._check_prng_key("binomial", key)
  dtype = R._float_dtype("binomial", dtype)
  shape = R._params_shape("binomial", shape, n, p)
  p, = promote_dtypes_inexact(p)
  count = jnp.broadcast_to(jnp.asarray(n).astype(p.dtype), shape)
  p = jnp.broadcast_to(p, shape)
  p_lt_half = p < 0.5
  q = jnp.where(p_lt_half, p, 1 - p)
  count_invalid = jnp.isnan(count) | (count < 0)
  count_inf = jnp.isinf(count)
  q_invalid = jnp.isnan(q) | (q < 0)
  q = jnp.where(q_invalid, jnp.full_like(q, 0.01), q)
  use_inversion = count_invalid | (count * q <= 10)
  count = jnp.floor(count)   # as NumPy does with a float n
  max_iters = np.array(dtypes.finfo(dtype).max, dtype)
  samples = jnp.where(
      use_inversion,
      _binomial_inversion(key, jnp.where(use_inversion, count, 0), q, shape, dtype,
                          max_iters),
      _btrs(key, jnp.where(use_inversion, 1e4, count), jnp.where(use_inversion, 0.5, q),
            shape, dtype, max_iters))
  invalid = q_invalid | count_invalid
  samples = jnp.where(invalid, jnp.full_like(samples, np.nan), samples)
  samples = jnp.where(count_inf & ~invalid, jnp.full_like(samples, np.inf), samples)
  keep = p_lt_half | count_invalid | jnp.isnan(q) | count_inf
  return jnp.where(keep, samples, count.astype(dtype) - samples)


def _binomial_inversion(key, count, prob, shape, dtype, max_iters):
  """The number of geometric(prob) waiting times that fit in ``count`` trials."""
  log1minusprob = jnp.log1p(-prob)

  def body(carry):
    i, num_geom, geom_sum, key = carry
    subkey, key = R.split(key)
    num_geom = jnp.where(geom_sum <= count, num_geom + 1, num_geom)
    u = R.uniform(subkey, shape, prob.dtype)
    return i + 1, num_geom, geom_sum + jnp.ceil(jnp.log(u) / log1minusprob), key

  def cond(carry):
    i, _, geom_sum, _ = carry
    return jnp.any(geom_sum <= count) & (i < max_iters)

  zeros = jnp.zeros(shape, prob.dtype)
  k = control_flow.while_loop(cond, body, (jnp.asarray(0), zeros, zeros, key))[1]
  return (k - 1).astype(dtype)


def _btrs(key, count, prob, shape, dtype, max_iters):
  """Hoermann's BTRS rejection sampler (1993), for ``count * prob > 10``."""
  stddev = jnp.sqrt(count * prob * (1 - prob))
  b = 1.15 + 2.53 * stddev
  a = -0.0873 + 0.0248 * b + 0.01 * prob
  c = count * prob + 0.5
  v_r = 0.92 - 4.2 / b
  r = prob / (1 - prob)
  alpha = (2.83 + 5.1 / b) * stddev
  m = jnp.floor((count + 1) * prob)

  def body(carry):
    i, k_out, accepted, key = carry
    key, subkey_0, subkey_1 = R.split(key, 3)
    u = R.uniform(subkey_0, shape, prob.dtype) - 0.5
    v = R.uniform(subkey_1, shape, prob.dtype)
    us = 0.5 - jnp.abs(u)
    accept1 = (us >= 0.07) & (v <= v_r)
    k = jnp.floor((2 * a / us + b) * u + c)
    reject = (k < 0) | (k > count)
    v = jnp.log(v * alpha / (a / (us * us) + b))
    bound = ((m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
             + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
             + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
             + _stirling_tail(m) + _stirling_tail(count - m)
             - _stirling_tail(k) - _stirling_tail(count - k))
    accept = accept1 | (~reject & (v <= bound))
    return i + 1, jnp.where(accept, k, k_out), accepted | accept, key

  def cond(carry):
    i, _, accepted, _ = carry
    return jnp.any(~accepted) & (i < max_iters)

  init = (jnp.asarray(0), jnp.full(shape, -1, prob.dtype), jnp.zeros(shape, bool), key)
  return control_flow.while_loop(cond, body, init)[1].astype(dtype)


# log(k!) less Stirling's approximation (k + 1/2) log(k + 1) - (k + 1) + log(2 pi) / 2
_STIRLING_TAIL = [math.lgamma(k + 1) - ((k + 0.5) * math.log(k + 1) - (k + 1)
                                        + 0.5 * math.log(2 * math.pi)) for k in range(10)]


def _stirling_tail(k):
  """The tail above: tabulated for k <= 9, from its asymptotic series beyond."""
  table = jnp.array(_STIRLING_TAIL, dtype=k.dtype)
  small = k <= 9
  k = lax.clamp(lax._const(k, 0), k, lax._const(k, 9))   # as JAX: the series at clipped k
  kp1sq = (k + 1) * (k + 1)
  series = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
  return jnp.where(small, table[jnp.floor(k).astype(np.int32)], series)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
  """Multinomial counts of ``n`` trials over the categories of ``p`` (last axis), as a
  chain of conditional binomials (a ``scan`` over the categories).

  ``shape``, when given, is the result's shape, categories included (as JAX 0.10's code
  reads it).
  """
  key = R._check_prng_key("multinomial", key)
  dtype = R._float_dtype("multinomial", dtype)
  n, p = promote_dtypes_inexact(n, p)
  shape = p.shape if shape is None else R._canonical_shape(shape)
  n = jnp.broadcast_to(n, shape[:-1])
  p = jnp.moveaxis(jnp.broadcast_to(p, shape), -1, 0)
  remaining = sorting.cumsum(p, 0, reverse=True)
  ratios = p / jnp.where(remaining == 0, 1, remaining)

  def step(remainder, ratio_key):
    ratio, k = ratio_key
    count = binomial(k, remainder, jnp.clip(ratio, 0, 1), dtype=remainder.dtype)
    return remainder - count, count

  _, counts = control_flow.scan(step, n, (ratios, R.split(key, ratios.shape[0])),
                                unroll=unroll)
  return jnp.moveaxis(counts, 0, -1).astype(dtype)
