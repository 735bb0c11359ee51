"""``jax.random``'s continuous distributions that transform the basic samplers of
``random.py`` (uniform, normal, exponential, gamma): chi-square, F, Student's t, the
generalized normal and the ball, log-normal, Maxwell, Pareto, Rayleigh, triangular, Wald
and Weibull, with JAX's formulas and key splits, so they agree with JAX's draws to
rounding."""
from __future__ import annotations

import numpy as np

from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax.call import staged
from jaxlite._src.libraries import random as R
from jaxlite._src.libraries.numpy import namespace as jnp
from jaxlite._src.libraries.random_discrete import rademacher

__all__ = ["ball", "chisquare", "double_sided_maxwell", "f", "generalized_normal", "lognormal", "maxwell", "pareto", "rayleigh", "t", "triangular", "wald", "weibull_min"]


@R.accepts_out_sharding
def chisquare(key, df, shape=None, dtype=None):
  """Chi-square random values with ``df`` degrees of freedom: ``2 exp(loggamma(df / 2))``."""
  dtype = R._float_dtype("chisquare", dtype)
  shape = R._params_shape("chisquare", shape, df)
  half_df = jnp.asarray(df, dtype) / 2
  return jnp.exp(R.loggamma(key, half_df, shape, dtype)) * 2


@R.accepts_out_sharding
def f(key, dfnum, dfden, shape=None, dtype=None):
  """F-distributed random values (a ratio of scaled chi-squares)."""
  dtype = R._float_dtype("f", dtype)
  shape = R._params_shape("f", shape, dfnum, dfden)
  key_dfden, key_dfnum = R.split(key)
  dfnum, dfden = jnp.asarray(dfnum, dtype), jnp.asarray(dfden, dtype)
  return ((chisquare(key_dfnum, dfnum, shape, dtype) / dfnum)
          / (chisquare(key_dfden, dfden, shape, dtype) / dfden))


@R.accepts_out_sharding
def t(key, df, shape=None, dtype=None):
  """Student's t random values with ``df`` degrees of freedom."""
  dtype = R._float_dtype("t", dtype)
  shape = R._params_shape("t", shape, df)
  k1, k2 = R.split(key)
  half = jnp.asarray(df, dtype) / 2.0
  return R.normal(k1, shape, dtype) * jnp.sqrt(half / R.gamma(k2, half, shape, dtype))


@R.accepts_out_sharding
def generalized_normal(key, p, shape=(), dtype=None):
  """Generalized normal random values, density proportional to ``exp(-|x|**p)``."""
  dtype = R._float_dtype("generalized_normal", dtype)
  shape = R._canonical_shape(shape)
  k1, k2 = R.split(key)
  p = jnp.asarray(p)   # an operand, as in JAX: 1 / p and ** p are operations
  g = R.gamma(k1, 1 / p, shape, dtype)
  return rademacher(k2, shape, dtype) * g ** (1 / p)


@R.accepts_out_sharding
def ball(key, d, p=2, shape=(), dtype=None):
  """Points uniform in the unit ``p``-norm ball of dimension ``d`` (shape
  ``(*shape, d)``)."""
  dtype = R._float_dtype("ball", dtype)
  shape = R._canonical_shape(shape)
  k1, k2 = R.split(key)
  p = jnp.asarray(p)
  g = generalized_normal(k1, p, shape + (int(d),), dtype)
  e = R.exponential(k2, shape, dtype)
  # JAX traces p (its sampler is jitted), so |g| ** p is lax.pow even for an integer p,
  # never the integer_pow that a concrete integer exponent would give
  norm = jnp.sum(jnp.abs(g) ** p.astype(g.dtype), axis=-1)
  return g / ((norm + e) ** (1 / p))[..., None]


@R.accepts_out_sharding
def lognormal(key, sigma=np.float32(1), shape=None, dtype=None):
  """Log-normal random values: ``exp(sigma * normal)``."""
  dtype = R._float_dtype("lognormal", dtype)
  shape = R._params_shape("lognormal", shape, sigma)
  return jnp.exp(R.normal(key, shape, dtype) * jnp.asarray(sigma, dtype))


@R.accepts_out_sharding
def maxwell(key, shape=(), dtype=None):
  """Maxwell random values: the length of a standard normal 3-vector."""
  key = R._check_prng_key("maxwell", key)
  return _maxwell(key, R._canonical_shape(shape), R._float_dtype("maxwell", dtype), None)


@staged(static_argnames=("shape", "dtype", "out_sharding"))
def _maxwell(key, shape, dtype, out_sharding):
  # (out_sharding: JAX's static argument, None here: the caller lays the result out)
  return jnp.linalg.norm(R.normal(key=key, shape=shape + (3,), dtype=dtype), axis=-1)


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
  """Maxwell values with a random sign, scaled by ``scale`` and shifted by ``loc``."""
  dtype = R._float_dtype("double_sided_maxwell", dtype)
  shape = tuple(R._canonical_shape(shape)) + tuple(
      jnp.broadcast_shapes(np.shape(loc), np.shape(scale)))
  k1, k2 = R.split(key)
  sign = rademacher(k2, shape, dtype)
  return maxwell(k1, shape, dtype) * sign * jnp.asarray(scale, dtype) + jnp.asarray(
      loc, dtype)


@R.accepts_out_sharding
def pareto(key, b, shape=None, dtype=None):
  """Pareto random values with shape ``b`` and unit scale: ``exp(exponential / b)``."""
  key = R._check_prng_key("pareto", key)
  dtype = R._float_dtype("pareto", dtype)
  return _pareto(key, b, R._params_shape("pareto", shape, b), dtype)


@staged(static_argnames=("shape", "dtype"))
def _pareto(key, b, shape, dtype):
  b = lax.convert_element_type(b, dtype)
  return lax.exp(R.exponential(key, shape, dtype) / b)


@R.accepts_out_sharding
def rayleigh(key, scale, shape=None, dtype=None):
  """Rayleigh random values: ``scale * sqrt(-2 log(u))``."""
  key = R._check_prng_key("rayleigh", key)
  dtype = R._float_dtype("rayleigh", dtype)
  return _rayleigh(key, scale, R._params_shape("rayleigh", shape, scale), dtype)


@staged(static_argnames=("shape", "dtype"))
def _rayleigh(key, scale, shape, dtype):
  u = R.uniform(key, shape, dtype)
  scale = jnp.broadcast_to(jnp.asarray(scale).astype(dtype), shape)
  return lax.mul(scale, lax.sqrt(lax.mul(lax.log(u), R._const(scale, -2))))


@R.accepts_out_sharding
def triangular(key, left, mode, right, shape=None, dtype=None):
  """Triangular random values on ``[left, right]`` peaking at ``mode`` (inverse CDF)."""
  dtype = R._float_dtype("triangular", dtype)
  shape = R._params_shape("triangular", shape, left, mode, right)
  left, mode, right = (jnp.broadcast_to(jnp.asarray(v, dtype), shape) for v in (left, mode, right))
  fc = (mode - left) / (right - left)
  u = R.uniform(key, shape, dtype)
  lo = left + jnp.sqrt(u * (right - left) * (mode - left))
  hi = right - jnp.sqrt((1 - u) * (right - left) * (right - mode))
  return jnp.where(u < fc, lo, hi)


@R.accepts_out_sharding
def wald(key, mean, shape=None, dtype=None):
  """Wald (inverse Gaussian, unit shape) random values of the given ``mean``."""
  dtype = R._float_dtype("wald", dtype)
  shape = R._params_shape("wald", shape, mean)
  k1, k2 = R.split(key)
  mean = jnp.broadcast_to(jnp.asarray(mean, dtype), shape)
  y = R.normal(k1, shape, dtype) ** 2
  z = R.uniform(k2, shape, dtype)
  x = mean + mean ** 2 * y / 2 - mean / 2 * jnp.sqrt(4 * mean * y + (mean * y) ** 2)
  return jnp.where(z <= mean / (mean + x), x, mean ** 2 / x)


def weibull_min(key, scale, concentration, shape=(), dtype=None):
  """Weibull random values: ``scale * (-log(1 - u)) ** (1 / concentration)``."""
  key = R._check_prng_key("weibull_min", key)
  dtype = R._float_dtype("weibull_min", dtype)
  return _weibull_min(key, scale, concentration, R._canonical_shape(shape), dtype)


@staged(static_argnames=("shape", "dtype"))
def _weibull_min(key, scale, concentration, shape, dtype):
  u = R.uniform(key=key, shape=shape, minval=0, maxval=1, dtype=dtype)
  return jnp.power(-jnp.log1p(-u), 1.0 / concentration) * scale
