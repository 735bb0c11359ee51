"""``jaxlite.scipy.stats``: the discrete distributions (``jax.scipy.stats.binom`` and others).

Each distribution is a namespace of functions with SciPy's signatures (``loc`` last), written
with JAX 0.10.2's formulas so that out-of-support values and invalid parameters give JAX's
``-inf``, ``0`` and ``nan``; ``jaxlite.scipy.stats.binom`` and the others re-export them.
"""
from __future__ import annotations

import types

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax.call import staged
from jaxlite._src.libraries.numpy import namespace as jnp
from jaxlite._src.libraries.numpy.util import (
    ensure_arraylike, promote_args_inexact, promote_args_numeric, promote_dtypes_inexact)
from jaxlite._src.libraries.scipy import special


def _c(x, value):
  return lax._const(x, value)


# -- binom
def _binom_logpmf(k, n, p, loc=0):
  """Binomial log probability mass function (``scipy.stats.binom.logpmf``).

  Parameters
  ----------
  k : array_like
    Where to evaluate; ``-inf`` outside ``loc <= k < loc + n + 1``.
  n, p : array_like
    Number of trials and success probability.
  loc : array_like, optional
    Offset of the support.

  Returns
  -------
  Array
    ``log(comb(n, k - loc) p**(k - loc) (1 - p)**(n - k + loc))``, float (32-bit unless x64).
  """
  k, n, p, loc = promote_args_inexact("binom.logpmf", k, n, p, loc)
  y = lax.sub(k, loc)
  one = _c(y, 1)
  comb_term = lax.sub(special.gammaln(lax.add(n, one)),
                      lax.add(special.gammaln(lax.add(y, one)),
                              special.gammaln(lax.add(lax.sub(n, y), one))))
  log_linear_term = lax.add(special.xlogy(y, p), special.xlog1py(lax.sub(n, y), lax.neg(p)))
  log_probs = lax.add(comb_term, log_linear_term)
  zero = _c(y, 0)
  # the certain outcomes (n = 0, or p at 0 or 1) are exactly 0, not gammaln's rounding
  certain = jnp.logical_or(jnp.logical_and(lax.eq(y, zero), lax.eq(n, zero)),
                           lax.eq(log_linear_term, zero))
  log_probs = jnp.where(certain, 0., log_probs)
  in_support = jnp.logical_and(lax.ge(k, loc), lax.lt(k, lax.add(lax.add(loc, n), one)))
  return jnp.where(in_support, log_probs, -np.inf)


def _binom_pmf(k, n, p, loc=0):
  """Binomial probability mass function (``scipy.stats.binom.pmf``): ``exp(logpmf)``."""
  return lax.exp(_binom_logpmf(k, n, p, loc))


binom = types.SimpleNamespace(logpmf=_binom_logpmf, pmf=_binom_pmf)


# -- betabinom
@staged(name="logpmf")
def _betabinom_logpmf(k, n, a, b, loc=0):
  """Beta-binomial log probability mass function (``scipy.stats.betabinom.logpmf``).

  Parameters
  ----------
  k : array_like
    Where to evaluate (floored); ``-inf`` outside ``0 <= k - loc <= n``.
  n, a, b : array_like
    Number of trials and the beta shape parameters; ``nan`` where ``n < 0``, ``a <= 0``
    or ``b <= 0``.
  loc : array_like, optional
    Offset of the support.

  Returns
  -------
  Array
    ``log(comb(n, y) B(y + a, n - y + b) / B(a, b))`` with ``y = floor(k) - loc``.
  """
  k, n, a, b, loc = promote_args_inexact("betabinom.logpmf", k, n, a, b, loc)
  y = lax.sub(lax.floor(k), loc)
  one, zero = _c(y, 1), _c(y, 0)
  combiln = lax.neg(lax.add(lax.log1p(n), special.betaln(lax.add(lax.sub(n, y), one),
                                                        lax.add(y, one))))
  beta_lns = lax.sub(special.betaln(lax.add(y, a), lax.add(lax.sub(n, y), b)),
                     special.betaln(a, b))
  log_probs = lax.add(combiln, beta_lns)
  log_probs = jnp.where(jnp.logical_and(lax.eq(y, zero), lax.eq(n, zero)), 0., log_probs)
  outside = jnp.logical_or(jnp.logical_or(lax.lt(y, lax.neg(loc)), lax.gt(y, n)),
                           lax.le(lax.add(y, a), zero))
  log_probs = jnp.where(outside, -np.inf, log_probs)
  invalid = jnp.logical_or(jnp.logical_or(lax.lt(n, zero), lax.le(a, zero)), lax.le(b, zero))
  return jnp.where(invalid, np.nan, log_probs)


def _betabinom_pmf(k, n, a, b, loc=0):
  """Beta-binomial probability mass function (``scipy.stats.betabinom.pmf``)."""
  return lax.exp(_betabinom_logpmf(k, n, a, b, loc))


betabinom = types.SimpleNamespace(logpmf=_betabinom_logpmf, pmf=_betabinom_pmf)


# -- geom
def _geom_logpmf(k, p, loc=0):
  """Geometric log probability mass function (``scipy.stats.geom.logpmf``).

  Parameters
  ----------
  k : array_like
    Number of trials up to the first success; ``-inf`` where ``k - loc <= 0``.
  p : array_like
    Success probability.
  loc : array_like, optional
    Offset of the support.

  Returns
  -------
  Array
    ``(k - loc - 1) log1p(-p) + log(p)``.
  """
  k, p, loc = promote_args_inexact("geom.logpmf", k, p, loc)
  x = lax.sub(k, loc)
  log_probs = lax.add(special.xlog1py(lax.sub(x, _c(x, 1)), lax.neg(p)), lax.log(p))
  return jnp.where(lax.le(x, _c(x, 0)), -np.inf, log_probs)


def _geom_pmf(k, p, loc=0):
  """Geometric probability mass function (``scipy.stats.geom.pmf``): ``exp(logpmf)``."""
  return lax.exp(_geom_logpmf(k, p, loc))


geom = types.SimpleNamespace(logpmf=_geom_logpmf, pmf=_geom_pmf)


# -- nbinom
def _nbinom_logpmf(k, n, p, loc=0):
  """Negative-binomial log probability mass function (``scipy.stats.nbinom.logpmf``).

  Parameters
  ----------
  k : array_like
    Number of failures before the ``n``-th success; ``-inf`` where ``k < loc``.
  n, p : array_like
    Number of successes (real) and success probability.
  loc : array_like, optional
    Offset of the support.

  Returns
  -------
  Array
    ``log(Gamma(y + n) / (Gamma(n) y!) p**n (1 - p)**y)`` with ``y = k - loc``.
  """
  k, n, p, loc = promote_args_inexact("nbinom.logpmf", k, n, p, loc)
  one = _c(k, 1)
  y = lax.sub(k, loc)
  comb_term = lax.sub(lax.sub(special.gammaln(lax.add(y, n)), special.gammaln(n)),
                      special.gammaln(lax.add(y, one)))
  log_linear_term = lax.add(special.xlogy(n, p), special.xlogy(y, lax.sub(one, p)))
  return jnp.where(lax.lt(k, loc), -np.inf, lax.add(comb_term, log_linear_term))


def _nbinom_pmf(k, n, p, loc=0):
  """Negative-binomial probability mass function (``scipy.stats.nbinom.pmf``)."""
  return lax.exp(_nbinom_logpmf(k, n, p, loc))


nbinom = types.SimpleNamespace(logpmf=_nbinom_logpmf, pmf=_nbinom_pmf)


# -- poisson
def _poisson_logpmf(k, mu, loc=0):
  """Poisson log probability mass function (``scipy.stats.poisson.logpmf``).

  Parameters
  ----------
  k : array_like
    Where to evaluate; ``-inf`` where ``k - loc < 0`` or ``k`` is not an integer.
  mu : array_like
    The mean.
  loc : array_like, optional
    Offset of the support.

  Returns
  -------
  Array
    ``x log(mu) - log(x!) - mu`` with ``x = k - loc``.
  """
  k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
  x = lax.sub(k, loc)
  log_probs = lax.sub(lax.sub(special.xlogy(x, mu), special.gammaln(lax.add(x, _c(x, 1)))), mu)
  outside = jnp.logical_or(lax.lt(x, _c(x, 0)), lax.ne(jnp.round(k), k))
  return jnp.where(outside, -np.inf, log_probs)


def _poisson_pmf(k, mu, loc=0):
  """Poisson probability mass function (``scipy.stats.poisson.pmf``): ``exp(logpmf)``."""
  return lax.exp(_poisson_logpmf(k, mu, loc))


def _poisson_cdf(k, mu, loc=0):
  """Poisson cumulative distribution function (``scipy.stats.poisson.cdf``).

  Parameters
  ----------
  k : array_like
    Where to evaluate (floored); ``0`` where ``k - loc < 0``.
  mu : array_like
    The mean.
  loc : array_like, optional
    Offset of the support.

  Returns
  -------
  Array
    ``gammaincc(floor(1 + k - loc), mu)``.
  """
  # JAX names this function poisson.logpmf in its argument errors
  k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
  x = lax.sub(k, loc)
  p = special.gammaincc(lax.floor(lax.add(_c(x, 1), x)), mu)
  zero = _c(x, 0)
  return jnp.where(lax.lt(x, zero), zero, p)


# Entropy sums -pmf log pmf over k < bound(mu) (at most max_k terms) where that sum is
# exact enough, and uses the asymptotic series above mu = 100, as JAX does.
_ENTROPY_SUMS = ((10, 35, lambda mu: mu + 20),
                 (100, 250, lambda mu: mu + 10 * jnp.sqrt(mu) + 20))


def _poisson_entropy_sum(mu, max_k, bound):
  k = jnp.arange(max_k, dtype=mu.dtype)[:, None]
  probs = _poisson_pmf(k, mu, 0)
  mask = k < jnp.ceil(bound(mu)).astype(k.dtype)[None, :]
  return jnp.sum(special.entr(jnp.where(mask, probs, 0.0)), axis=0)


def _poisson_entropy_large(mu):
  return 0.5 * jnp.log(2 * np.pi * np.e * mu) - 1.0 / (12 * mu)


@staged(name="entropy")
def _poisson_entropy(mu, loc=0):
  """Shannon entropy of the Poisson distribution (``scipy.stats.poisson.entropy``).

  Parameters
  ----------
  mu : array_like
    The mean; ``0`` gives ``0`` and ``mu < 0`` gives ``nan``.
  loc : array_like, optional
    Accepted as SciPy does; the entropy does not depend on it beyond broadcasting.

  Returns
  -------
  Array
    ``-sum_k pmf(k) log pmf(k)``, summed directly below ``mu = 100`` and from
    ``log(2 pi e mu) / 2 - 1 / (12 mu)`` above; shape ``broadcast(mu, loc)``.
  """
  mu, loc = ensure_arraylike("poisson.entropy", mu, loc)
  mu, loc = promote_dtypes_inexact(mu, loc)
  result_shape = jnp.broadcast_shapes(mu.shape, loc.shape)
  flat = jnp.ravel(mu)
  result = _poisson_entropy_large(flat)
  for upper, max_k, bound in reversed(_ENTROPY_SUMS):
    result = jnp.where(flat < upper, _poisson_entropy_sum(flat, max_k, bound), result)
  result = jnp.where(flat == 0, jnp.zeros_like(flat), result)
  return jnp.broadcast_to(jnp.reshape(result, mu.shape), result_shape)


poisson = types.SimpleNamespace(logpmf=_poisson_logpmf, pmf=_poisson_pmf, cdf=_poisson_cdf,
                                entropy=_poisson_entropy)


# -- multinomial
def _multinomial_logpmf(x, n, p):
  """Multinomial log probability mass function (``scipy.stats.multinomial.logpmf``).

  Parameters
  ----------
  x : array_like of integers
    Counts per category along the last axis.
  n : array_like of integers
    Number of trials; ``-inf`` where it differs from the sum of ``x``.
  p : array_like
    Category probabilities along the last axis.

  Returns
  -------
  Array
    ``log(n!) + sum(x log p - log(x!), axis=-1)``.
  """
  p, = promote_args_inexact("multinomial.logpmf", p)
  x, n = promote_args_numeric("multinomial.logpmf", x, n)
  if not dtypes.issubdtype(x.dtype, np.integer):
    raise ValueError(f"x and n must be of integer type; got x.dtype={x.dtype}, "
                     f"n.dtype={n.dtype}. Pass integer counts, e.g. x.astype(jnp.int32).")
  x = x.astype(p.dtype)
  n = n.astype(p.dtype)
  logprobs = special.gammaln(n + 1) + jnp.sum(special.xlogy(x, p) - special.gammaln(x + 1),
                                              axis=-1)
  # JAX compares n with the total of all of x, not of each row
  return jnp.where(jnp.equal(jnp.sum(x), n), logprobs, -np.inf)


def _multinomial_pmf(x, n, p):
  """Multinomial probability mass function (``scipy.stats.multinomial.pmf``)."""
  return lax.exp(_multinomial_logpmf(x, n, p))


multinomial = types.SimpleNamespace(logpmf=_multinomial_logpmf, pmf=_multinomial_pmf)
