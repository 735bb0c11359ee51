"""More ``jax.random`` distributions, each a transformation of the samplers in
``random.py`` (uniform, normal, exponential, gamma, bernoulli) written with
``jaxlite.numpy``; they follow JAX's formulas but are not bit-identical to JAX's draws."""
from __future__ import annotations

import numpy as np

import jaxlite.numpy as jnp
from jaxlite._src import dtypes
from jaxlite._src import random as R
from jaxlite._src.lax import control_flow

__all__ = ["ball", "binomial", "chisquare", "clone", "double_sided_maxwell", "f",
           "generalized_normal", "geometric", "key_dtype", "lognormal", "maxwell",
           "multinomial", "pareto", "rademacher", "rayleigh", "t", "triangular", "wald",
           "weibull_min"]


def _shape(shape, *params):
  if shape is None:
    return tuple(jnp.broadcast_shapes(*[np.shape(p) for p in params]))
  return R._canonical_shape(shape)


def _float(name, dtype):
  return R._float_dtype(name, dtype)


def clone(key):
  """A copy of ``key`` (keys here are plain immutable arrays, so this is the key)."""
  return R._check_prng_key("clone", key)


def key_dtype(impl_spec=None):
  """The dtype of the keys ``random.key`` makes: ``uint32`` words (typed key arrays are
  not modelled in jaxlite)."""
  if impl_spec not in (None, "threefry2x32"):
    raise ValueError(f"unrecognized PRNG implementation {impl_spec!r}")
  return np.dtype(np.uint32)


def rademacher(key, shape=(), dtype=None):
  """Random signs: -1 or +1 with equal probability."""
  dtype = dtypes.canonicalize_dtype(dtypes.default_int_dtype() if dtype is None else dtype)
  b = R.bernoulli(key, 0.5, R._canonical_shape(shape))
  return (2 * b.astype(dtype) - 1).astype(dtype)


def chisquare(key, df, shape=None, dtype=None):
  """Chi-square random values with ``df`` degrees of freedom (``2 * gamma(df / 2)``)."""
  dtype = _float("chisquare", dtype)
  shape = _shape(shape, df)
  df = jnp.asarray(df, dtype)
  return 2.0 * R.gamma(key, df / 2.0, shape, dtype)


def f(key, dfnum, dfden, shape=None, dtype=None):
  """F-distributed random values (a ratio of scaled chi-squares)."""
  dtype = _float("f", dtype)
  shape = _shape(shape, dfnum, dfden)
  k1, k2 = R.split(key)
  dfnum, dfden = jnp.asarray(dfnum, dtype), jnp.asarray(dfden, dtype)
  return (chisquare(k1, dfnum, shape, dtype) / dfnum) / (chisquare(k2, dfden, shape,
                                                                   dtype) / dfden)


def t(key, df, shape=None, dtype=None):
  """Student's t random values with ``df`` degrees of freedom."""
  dtype = _float("t", dtype)
  shape = _shape(shape, df)
  k1, k2 = R.split(key)
  half = jnp.asarray(df, dtype) / 2.0
  return R.normal(k1, shape, dtype) * jnp.sqrt(half / R.gamma(k2, half, shape, dtype))


def generalized_normal(key, p, shape=(), dtype=None):
  """Generalized normal random values, density proportional to ``exp(-|x|**p)``."""
  dtype = _float("generalized_normal", dtype)
  shape = R._canonical_shape(shape)
  k1, k2 = R.split(key)
  g = R.gamma(k1, 1.0 / p, shape, dtype)
  return rademacher(k2, shape, dtype) * g ** (1.0 / p)


def ball(key, d, p=2, shape=(), dtype=None):
  """Points uniform in the unit ``p``-norm ball of dimension ``d`` (shape
  ``(*shape, d)``)."""
  dtype = _float("ball", dtype)
  shape = R._canonical_shape(shape)
  k1, k2 = R.split(key)
  g = generalized_normal(k1, p, shape + (int(d),), dtype)
  e = R.exponential(k2, shape, dtype)
  return g / (jnp.sum(jnp.abs(g) ** p, axis=-1) + e)[..., None] ** (1.0 / p)


def geometric(key, p, shape=None, dtype=None):
  """Geometric random integers >= 1: trials until the first success of probability
  ``p``."""
  dtype = dtypes.canonicalize_dtype(dtypes.default_int_dtype() if dtype is None else dtype)
  shape = _shape(shape, p)
  fdt = dtypes.canonicalize_dtype(dtypes.default_float_dtype())
  u = R.uniform(key, shape, fdt)
  p = jnp.asarray(p, fdt)
  return (jnp.floor(jnp.log1p(-u) / jnp.log1p(-p)) + 1).astype(dtype)


def lognormal(key, sigma=np.float32(1), shape=None, dtype=None):
  """Log-normal random values: ``exp(sigma * normal)``."""
  dtype = _float("lognormal", dtype)
  shape = _shape(shape, sigma)
  return jnp.exp(R.normal(key, shape, dtype) * jnp.asarray(sigma, dtype))


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


def pareto(key, b, shape=None, dtype=None):
  """Pareto random values with shape ``b`` and unit scale: ``exp(exponential / b)``."""
  dtype = _float("pareto", dtype)
  shape = _shape(shape, b)
  return jnp.exp(R.exponential(key, shape, dtype) / jnp.asarray(b, dtype))


def rayleigh(key, scale, shape=None, dtype=None):
  """Rayleigh random values: ``scale * sqrt(2 * exponential)``."""
  dtype = _float("rayleigh", dtype)
  shape = _shape(shape, scale)
  return jnp.sqrt(2.0 * R.exponential(key, shape, dtype)) * jnp.asarray(scale, dtype)


def triangular(key, left, mode, right, shape=None, dtype=None):
  """Triangular random values on ``[left, right]`` peaking at ``mode`` (inverse CDF)."""
  dtype = _float("triangular", dtype)
  shape = _shape(shape, left, mode, right)
  left, mode, right = (jnp.asarray(v, dtype) for v in (left, mode, right))
  fc = (mode - left) / (right - left)
  u = R.uniform(key, shape, dtype)
  lo = left + jnp.sqrt(u * (right - left) * (mode - left))
  hi = right - jnp.sqrt((1 - u) * (right - left) * (right - mode))
  return jnp.where(u < fc, lo, hi)


def wald(key, mean, shape=None, dtype=None):
  """Wald (inverse Gaussian, unit shape) random values of the given ``mean``."""
  dtype = _float("wald", dtype)
  shape = _shape(shape, mean)
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
  """Binomial random counts of ``n`` trials of probability ``p`` (as floats), by
  inverting the CDF term by term (a loop of at most ``max(n)`` steps, all elements at
  once)."""
  dtype = _float("binomial", dtype)
  shape = _shape(shape, n, p)
  n = jnp.broadcast_to(jnp.asarray(n, dtype), shape)
  p = jnp.broadcast_to(jnp.asarray(p, dtype), shape)
  # draw with min(p, 1 - p) for speed and symmetry, flip back at the end
  flip = p > 0.5
  q = jnp.where(flip, 1 - p, p)
  u = R.uniform(key, shape, dtype)
  ratio = q / (1 - q)
  pmf0 = jnp.exp(n * jnp.log1p(-q))

  def cond(state):
    k, pmf, cdf = state
    return jnp.any((u > cdf) & (k < n))

  def body(state):
    k, pmf, cdf = state
    active = (u > cdf) & (k < n)
    pmf_next = pmf * (n - k) / (k + 1) * ratio
    return (jnp.where(active, k + 1, k), jnp.where(active, pmf_next, pmf),
            jnp.where(active, cdf + pmf_next, cdf))

  k, _, _ = control_flow.while_loop(cond, body, (jnp.zeros(shape, dtype), pmf0, pmf0))
  k = jnp.where(q == 0, 0.0, k)
  out = jnp.where(flip, n - k, k)
  bad = (n < 0) | (p < 0) | (p > 1) | jnp.isnan(n) | jnp.isnan(p)
  return jnp.where(bad, jnp.nan, out)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
  """Multinomial counts of ``n`` trials over the categories of ``p`` (last axis), as a
  chain of conditional binomials."""
  dtype = _float("multinomial", dtype)
  p = jnp.asarray(p, dtype)
  n = jnp.asarray(n, dtype)
  if shape is None:
    shape = tuple(jnp.broadcast_shapes(p.shape[:-1], n.shape))
  shape = R._canonical_shape(shape)
  k = p.shape[-1]
  keys = R.split(key, k)
  remaining = jnp.broadcast_to(n, shape)
  rest = jnp.ones(shape, dtype)
  counts = []
  for i in range(k - 1):
    pi = jnp.broadcast_to(p[..., i], shape)
    prob = jnp.clip(jnp.where(rest > 0, pi / jnp.where(rest > 0, rest, 1), 0), 0, 1)
    c = binomial(keys[i], remaining, prob, shape, dtype)
    counts.append(c)
    remaining = remaining - c
    rest = rest - pi
  counts.append(remaining)
  return jnp.stack(counts, axis=-1)
