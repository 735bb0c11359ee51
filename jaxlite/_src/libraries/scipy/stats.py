"""``jaxlite.scipy.stats``: densities and distribution functions (``jax.scipy.stats``).

Each distribution is a namespace of functions with SciPy's signatures (``loc`` and
``scale`` last); ``jaxlite.scipy.stats.norm`` and the others re-export them.
"""
from __future__ import annotations

import types

import numpy as np

from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import special as lax_special
from jaxlite._src.libraries.numpy.lax_numpy import where
from jaxlite._src.libraries.numpy.util import promote_args_inexact
from jaxlite._src.libraries.scipy import special
from jaxlite._src.libraries.scipy.stats_common import distribution, exp_of, log_of


def _c(x, value):
  return lax._const(x, value)


def _standardize(name, x, loc, scale, *shape_params):
  x, loc, scale, *params = promote_args_inexact(name, x, loc, scale, *shape_params)
  return (lax.div(lax.sub(x, loc), scale), scale, *params)


# -- norm
def _norm_logpdf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("norm.logpdf", x, loc, scale)
  # JAX's formula works with scale**2, so a negative scale gives the density of |scale|
  scale_sqrd = lax.square(scale)
  log_normalizer = lax.log(lax.mul(_c(x, 2 * np.pi), scale_sqrd))
  quadratic = lax.div(lax.square(lax.sub(x, loc)), scale_sqrd)
  return lax.div(lax.add(log_normalizer, quadratic), _c(x, -2))


def _norm_pdf(x, loc=0, scale=1):
  return lax.exp(_norm_logpdf(x, loc, scale))


def _norm_cdf(x, loc=0, scale=1):
  return special.ndtr(_standardize("norm.cdf", x, loc, scale)[0])


def _norm_logcdf(x, loc=0, scale=1):
  return special.log_ndtr(_standardize("norm.logcdf", x, loc, scale)[0])


def _norm_sf(x, loc=0, scale=1):
  return special.ndtr(lax.neg(_standardize("norm.sf", x, loc, scale)[0]))


def _norm_logsf(x, loc=0, scale=1):
  return special.log_ndtr(lax.neg(_standardize("norm.logsf", x, loc, scale)[0]))


def _norm_ppf(q, loc=0, scale=1):
  q, loc, scale = promote_args_inexact("norm.ppf", q, loc, scale)
  return lax.add(loc, lax.mul(scale, special.ndtri(q)))


def _norm_isf(q, loc=0, scale=1):
  """Inverse survival function of the normal distribution: ``loc - scale * ndtri(q)``
  (``scipy.stats.norm.isf``)."""
  q, loc, scale = promote_args_inexact("norm.isf", q, loc, scale)
  # ndtri(q) = sqrt(2) * erfinv(2q - 1); the symmetry keeps precision for small q
  return loc - scale * (2 ** 0.5) * lax_special.erf_inv(2 * q - 1)


norm = types.SimpleNamespace(logpdf=_norm_logpdf, pdf=_norm_pdf, cdf=_norm_cdf,
                             logcdf=_norm_logcdf, sf=_norm_sf, logsf=_norm_logsf,
                             ppf=_norm_ppf, isf=_norm_isf)


# -- Student's t
def _t_logpdf(x, df, loc=0, scale=1):
  z, scale, df = _standardize("t.logpdf", x, loc, scale, df)
  half = _c(df, 0.5)
  half_df_plus = lax.mul(half, lax.add(df, _c(df, 1)))
  norm_const = lax.sub(lax.sub(lax_special.lgamma(half_df_plus),
                               lax_special.lgamma(lax.mul(half, df))),
                       lax.mul(half, lax.log(lax.mul(df, _c(df, np.pi)))))
  kernel = lax.mul(half_df_plus, lax.log1p(lax.div(lax.mul(z, z), df)))
  return lax.sub(lax.sub(norm_const, kernel), lax.log(scale))


t = types.SimpleNamespace(
    logpdf=_t_logpdf, pdf=lambda x, df, loc=0, scale=1: lax.exp(_t_logpdf(x, df, loc, scale)))


# -- gamma
def _gamma_logpdf(x, a, loc=0, scale=1):
  x, a, loc, scale = promote_args_inexact("gamma.logpdf", x, a, loc, scale)
  ok = lax.ge(x, loc)
  # below the support z is replaced by 1, so xlogy's gradient there stays finite
  z = where(ok, lax.div(lax.sub(x, loc), scale), _c(x, 1))
  log_density = lax.sub(lax.sub(special.xlogy(lax.sub(a, _c(a, 1)), z), z),
                        lax.add(lax_special.lgamma(a), lax.log(scale)))
  return where(ok, log_density, _c(x, -np.inf))


def _gamma_cdf(x, a, loc=0, scale=1):
  z, _, a = _standardize("gamma.cdf", x, loc, scale, a)
  return lax_special.igamma(a, lax.clamp(_c(z, 0), z, _c(z, np.inf)))


def _gamma_sf(x, a, loc=0, scale=1):
  z, _, a = _standardize("gamma.sf", x, loc, scale, a)
  return where(lax.lt(z, _c(z, 0)), 1, lax_special.igammac(a, z))


gamma = distribution(
    "gamma", logpdf=_gamma_logpdf, pdf=exp_of(_gamma_logpdf), cdf=_gamma_cdf,
    logcdf=log_of(_gamma_cdf), sf=_gamma_sf, logsf=log_of(_gamma_sf))


# -- beta
def _beta_logpdf(x, a, b, loc=0, scale=1):
  x, a, b, loc, scale = promote_args_inexact("beta.logpdf", x, a, b, loc, scale)
  one = _c(x, 1)
  z = lax.div(lax.sub(x, loc), scale)
  log_density = lax.sub(lax.add(special.xlogy(lax.sub(a, one), z),
                                special.xlog1py(lax.sub(b, one), lax.neg(z))),
                        lax.add(special.betaln(a, b), lax.log(scale)))
  outside = lax.bitwise_or(lax.gt(x, lax.add(loc, scale)), lax.lt(x, loc))
  result = where(outside, _c(x, -np.inf), log_density)
  zero = _c(a, 0)
  invalid = lax.bitwise_or(lax.bitwise_or(lax.le(a, zero), lax.le(b, zero)),
                           lax.le(scale, zero))
  return where(invalid, _c(x, np.nan), result)


def _beta_tail(name, flip):
  """beta's cdf, or with ``flip`` its sf as ``I_{1-z}(b, a)``, of z clamped to [0, 1]."""
  def tail(x, a, b, loc=0, scale=1):
    z, _, a, b = _standardize(name, x, loc, scale, a, b)
    z = lax.clamp(_c(z, 0), z, _c(z, 1))
    return special.betainc(b, a, 1 - z) if flip else special.betainc(a, b, z)
  return tail


_beta_cdf = _beta_tail("beta.cdf", False)
_beta_sf = _beta_tail("beta.sf", True)

beta = distribution(
    "beta", logpdf=_beta_logpdf, pdf=exp_of(_beta_logpdf), cdf=_beta_cdf,
    logcdf=log_of(_beta_cdf), sf=_beta_sf, logsf=log_of(_beta_sf))


# -- bernoulli
def _bernoulli_logpmf(k, p, loc=0):
  """Bernoulli log probability mass function (``scipy.stats.bernoulli.logpmf``).

  Parameters
  ----------
  k : array_like
    Where to evaluate; ``-inf`` outside ``0 <= k - loc <= 1``.
  p : array_like
    Success probability.
  loc : array_like, optional
    Offset of the support.

  Returns
  -------
  Array
    ``x log(p) + (1 - x) log1p(-p)`` with ``x = k - loc``, as JAX writes it (so non-integer
    ``x`` in ``[0, 1]`` interpolate).
  """
  k, p, loc = promote_args_inexact("bernoulli.logpmf", k, p, loc)
  x = lax.sub(k, loc)
  log_probs = lax.add(special.xlogy(x, p),
                      special.xlog1py(lax.sub(_c(x, 1), x), lax.neg(p)))
  outside = lax.bitwise_or(lax.lt(x, _c(x, 0)), lax.gt(x, _c(x, 1)))
  return where(outside, _c(x, -np.inf), log_probs)


def _bernoulli_pmf(k, p, loc=0):
  """Bernoulli probability mass function (``scipy.stats.bernoulli.pmf``): ``exp(logpmf)``."""
  return lax.exp(_bernoulli_logpmf(k, p, loc))


def _nan_or_invalid_p(x, p):
  """Where ``x`` or ``p`` is nan or ``p`` lies outside ``[0, 1]``: there JAX gives nan."""
  return lax.bitwise_or(lax.bitwise_or(lax.ne(x, x), lax.ne(p, p)),
                        lax.bitwise_or(lax.lt(p, _c(p, 0)), lax.gt(p, _c(p, 1))))


def _bernoulli_cdf(k, p):
  """Bernoulli cumulative distribution function (``scipy.stats.bernoulli.cdf``).

  Parameters
  ----------
  k : array_like
    Where to evaluate.
  p : array_like
    Success probability; ``nan`` outside ``[0, 1]``.

  Returns
  -------
  Array
    ``0`` below 0, ``1 - p`` on ``[0, 1)``, ``1`` from 1 on.
  """
  k, p = promote_args_inexact("bernoulli.cdf", k, p)
  value = where(lax.lt(k, _c(k, 0)), _c(k, 0),
                where(lax.ge(k, _c(k, 1)), _c(k, 1), lax.sub(_c(p, 1), p)))
  return where(_nan_or_invalid_p(k, p), _c(k, np.nan), value)


def _bernoulli_ppf(q, p):
  """Bernoulli percent point function (``scipy.stats.bernoulli.ppf``), the inverse of
  ``cdf``.

  Parameters
  ----------
  q : array_like
    Probabilities; ``nan`` outside ``[0, 1]``.
  p : array_like
    Success probability; ``nan`` outside ``[0, 1]``.

  Returns
  -------
  Array
    ``0`` where ``q <= 1 - p``, else ``1``.
  """
  q, p = promote_args_inexact("bernoulli.ppf", q, p)
  invalid = lax.bitwise_or(_nan_or_invalid_p(q, p),
                           lax.bitwise_or(lax.lt(q, _c(q, 0)), lax.gt(q, _c(q, 1))))
  return where(invalid, _c(q, np.nan),
               where(lax.le(q, lax.sub(_c(p, 1), p)), _c(q, 0), _c(q, 1)))


bernoulli = types.SimpleNamespace(
    logpmf=_bernoulli_logpmf, pmf=_bernoulli_pmf, cdf=_bernoulli_cdf, ppf=_bernoulli_ppf)
