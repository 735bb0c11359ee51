"""More ``jax.random`` distributions, each a transformation of the samplers in
``random.py`` (uniform, normal, exponential, gamma, bernoulli) written with
``jaxlite.numpy`` with JAX's formulas and key splits, so they agree with JAX's draws to
rounding (``rademacher`` bit for bit)."""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.numpy import namespace as jnp
from jaxlite._src import dtypes
from jaxlite._src import prng
from jaxlite._src import random as R
from jaxlite._src.lax import control_flow
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import prng as lax_prng
from jaxlite._src.lax import sorting
from jaxlite._src.numpy.util import promote_dtypes_inexact

__all__ = ["ball", "binomial", "chisquare", "clone", "double_sided_maxwell", "f",
           "generalized_normal", "geometric", "key_dtype", "lognormal", "maxwell",
           "multinomial", "pareto", "rademacher", "rayleigh", "t", "triangular", "wald",
           "weibull_min"]


def _shape(name, shape, *params):
  """``shape``, or the parameters' broadcast shape when None (checked against them)."""
  if shape is None:
    return tuple(jnp.broadcast_shapes(*[np.shape(p) for p in params]))
  shape = R._canonical_shape(shape)
  R._check_shape(name, shape, *[np.shape(p) for p in params])
  return shape


def _float(name, dtype):
  return R._float_dtype(name, dtype)


def clone(key):
  """A copy of ``key``: ``random_clone`` of a typed key (a raw key, immutable, is itself)."""
  key = R._check_prng_key("clone", key)
  return lax_prng.random_clone(key) if R._is_typed(key) else key


def key_dtype(impl_spec=None):
  """The dtype of the keys ``random.key`` makes: ``key<fry>``."""
  return prng.KeyTy(prng.resolve_impl(impl_spec))


@R.with_out_sharding
def rademacher(key, shape=(), dtype=None):
  """Random signs: -1 or +1 with equal probability."""
  dtype = dtypes.canonicalize_dtype(dtypes.default_int_dtype() if dtype is None else dtype)
  b = R.bernoulli(key, 0.5, R._canonical_shape(shape))
  return (2 * b.astype(dtype) - 1).astype(dtype)


@R.with_out_sharding
def chisquare(key, df, shape=None, dtype=None):
  """Chi-square random values with ``df`` degrees of freedom: ``2 exp(loggamma(df / 2))``."""
  dtype = _float("chisquare", dtype)
  shape = _shape("chisquare", shape, df)
  half_df = jnp.asarray(df, dtype) / 2
  return jnp.exp(R.loggamma(key, half_df, shape, dtype)) * 2


@R.with_out_sharding
def f(key, dfnum, dfden, shape=None, dtype=None):
  """F-distributed random values (a ratio of scaled chi-squares)."""
  dtype = _float("f", dtype)
  shape = _shape("f", shape, dfnum, dfden)
  key_dfden, key_dfnum = R.split(key)
  dfnum, dfden = jnp.asarray(dfnum, dtype), jnp.asarray(dfden, dtype)
  return ((chisquare(key_dfnum, dfnum, shape, dtype) / dfnum)
          / (chisquare(key_dfden, dfden, shape, dtype) / dfden))


@R.with_out_sharding
def t(key, df, shape=None, dtype=None):
  """Student's t random values with ``df`` degrees of freedom."""
  dtype = _float("t", dtype)
  shape = _shape("t", shape, df)
  k1, k2 = R.split(key)
  half = jnp.asarray(df, dtype) / 2.0
  return R.normal(k1, shape, dtype) * jnp.sqrt(half / R.gamma(k2, half, shape, dtype))


@R.with_out_sharding
def generalized_normal(key, p, shape=(), dtype=None):
  """Generalized normal random values, density proportional to ``exp(-|x|**p)``."""
  dtype = _float("generalized_normal", dtype)
  shape = R._canonical_shape(shape)
  k1, k2 = R.split(key)
  p = jnp.asarray(p)   # an operand, as in JAX: 1 / p and ** p are operations
  g = R.gamma(k1, 1 / p, shape, dtype)
  return rademacher(k2, shape, dtype) * g ** (1 / p)


@R.with_out_sharding
def ball(key, d, p=2, shape=(), dtype=None):
  """Points uniform in the unit ``p``-norm ball of dimension ``d`` (shape
  ``(*shape, d)``)."""
  dtype = _float("ball", dtype)
  shape = R._canonical_shape(shape)
  k1, k2 = R.split(key)
  p = jnp.asarray(p)
  g = generalized_normal(k1, p, shape + (int(d),), dtype)
  e = R.exponential(k2, shape, dtype)
  # JAX traces p (its sampler is jitted), so |g| ** p is lax.pow even for an integer p,
  # never the integer_pow that a concrete integer exponent would give
  norm = jnp.sum(jnp.abs(g) ** p.astype(g.dtype), axis=-1)
  return g / ((norm + e) ** (1 / p))[..., None]


@R.with_out_sharding
def geometric(key, p, shape=None, dtype=None):
  """Geometric random integers >= 1: trials until the first success of probability
  ``p``, ``floor(log(u) / log1p(-p)) + 1``."""
  dtype = dtypes.canonicalize_dtype(dtypes.default_int_dtype() if dtype is None else dtype)
  if not dtypes.issubdtype(dtype, np.integer):
    raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
  shape = _shape("geometric", shape, p)
  p, = promote_dtypes_inexact(p)
  u = R.uniform(key, shape, p.dtype)
  u = jnp.where(u == 0, 1, u)   # as JAX: u = 0 would give log(0)
  return (jnp.floor(jnp.log(u) / jnp.broadcast_to(jnp.log1p(-p), shape)) + 1).astype(dtype)


@R.with_out_sharding
def lognormal(key, sigma=np.float32(1), shape=None, dtype=None):
  """Log-normal random values: ``exp(sigma * normal)``."""
  dtype = _float("lognormal", dtype)
  shape = _shape("lognormal", shape, sigma)
  return jnp.exp(R.normal(key, shape, dtype) * jnp.asarray(sigma, dtype))


@R.with_out_sharding
def maxwell(key, shape=(), dtype=None):
  """Maxwell random values: the length of a standard normal 3-vector."""
  dtype = _float("maxwell", dtype)
  shape = R._canonical_shape(shape)
  return jnp.linalg.norm(R.normal(key, shape + (3,), dtype), axis=-1)


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
  """Maxwell values with a random sign, scaled by ``scale`` and shifted by ``loc``."""
  dtype = _float("double_sided_maxwell", dtype)
  shape = tuple(R._canonical_shape(shape)) + tuple(
      jnp.broadcast_shapes(np.shape(loc), np.shape(scale)))
  k1, k2 = R.split(key)
  sign = rademacher(k2, shape, dtype)
  return maxwell(k1, shape, dtype) * sign * jnp.asarray(scale, dtype) + jnp.asarray(
      loc, dtype)


@R.with_out_sharding
def pareto(key, b, shape=None, dtype=None):
  """Pareto random values with shape ``b`` and unit scale: ``exp(exponential / b)``."""
  dtype = _float("pareto", dtype)
  shape = _shape("pareto", shape, b)
  return jnp.exp(R.exponential(key, shape, dtype) / jnp.asarray(b, dtype))


@R.with_out_sharding
def rayleigh(key, scale, shape=None, dtype=None):
  """Rayleigh random values: ``scale * sqrt(-2 log(u))``."""
  dtype = _float("rayleigh", dtype)
  shape = _shape("rayleigh", shape, scale)
  u = R.uniform(key, shape, dtype)
  return jnp.broadcast_to(jnp.asarray(scale, dtype), shape) * jnp.sqrt(jnp.log(u) * -2)


@R.with_out_sharding
def triangular(key, left, mode, right, shape=None, dtype=None):
  """Triangular random values on ``[left, right]`` peaking at ``mode`` (inverse CDF)."""
  dtype = _float("triangular", dtype)
  shape = _shape("triangular", shape, left, mode, right)
  left, mode, right = (jnp.asarray(v, dtype) for v in (left, mode, right))
  fc = (mode - left) / (right - left)
  u = R.uniform(key, shape, dtype)
  lo = left + jnp.sqrt(u * (right - left) * (mode - left))
  hi = right - jnp.sqrt((1 - u) * (right - left) * (right - mode))
  return jnp.where(u < fc, lo, hi)


@R.with_out_sharding
def wald(key, mean, shape=None, dtype=None):
  """Wald (inverse Gaussian, unit shape) random values of the given ``mean``."""
  dtype = _float("wald", dtype)
  shape = _shape("wald", shape, mean)
  k1, k2 = R.split(key)
  mean = jnp.asarray(mean, dtype)
  y = R.normal(k1, shape, dtype) ** 2
  z = R.uniform(k2, shape, dtype)
  x = mean + mean ** 2 * y / 2 - mean / 2 * jnp.sqrt(4 * mean * y + (mean * y) ** 2)
  return jnp.where(z <= mean / (mean + x), x, mean ** 2 / x)


def weibull_min(key, scale, concentration, shape=(), dtype=None):
  """Weibull random values: ``scale * (-log(1 - u)) ** (1 / concentration)``."""
  dtype = _float("weibull_min", dtype)
  shape = R._canonical_shape(shape)
  u = R.uniform(key, shape, dtype)
  return jnp.asarray(scale, dtype) * (-jnp.log1p(-u)) ** (
      1.0 / jnp.asarray(concentration, dtype))


def binomial(key, n, p, shape=None, dtype=None):
  """Binomial random counts (as floats) of ``n`` trials of probability ``p``.

  As JAX (and TensorFlow): with ``q = min(p, 1 - p)``, by inversion (counting geometric
  waiting times) where ``n q <= 10``, else by Hoermann's transformed rejection (BTRS).
  Invalid parameters (``n`` NaN or negative, ``p`` NaN or negative) give NaN, infinite
  ``n`` gives inf.
  """
  key = R._check_prng_key("binomial", key)
  dtype = _float("binomial", dtype)
  shape = _shape("binomial", shape, n, p)
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
  dtype = _float("multinomial", dtype)
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
