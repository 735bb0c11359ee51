"""``jaxlite.scipy.stats``'s further continuous distributions: cauchy, chi2, expon, gennorm,
gumbel_l, gumbel_r, laplace, logistic, pareto, truncnorm, uniform, vonmises, wrapcauchy.

Each function follows JAX 0.10.2's formula, so its values outside the support, at its
edges and for invalid parameters (``-inf``, 0 or NaN) are JAX's, and so are its tails:
the truncated normal works from ``log_ndtr`` so masses far out (``[-16, -15]``) keep
their precision.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import special as lax_special
from jaxlite._src.libraries.nn.functions import log1mexp, logsumexp
from jaxlite._src.libraries.numpy import namespace as jnp
from jaxlite._src.libraries.numpy.util import promote_args_inexact
from jaxlite._src.libraries.scipy import special
from jaxlite._src.libraries.scipy.stats import norm
from jaxlite._src.libraries.scipy.stats_common import distribution, exp_of, log_of


def _c(x, value):
  return lax._const(x, value)


def _scaled(x, loc, scale):
  return lax.div(lax.sub(x, loc), scale)


def _nan_unless(ok, value):
  return jnp.where(ok, value, np.nan)


def _outside_q(q):
  # ppf's domain: NaN for NaN and for q outside [0, 1]
  return jnp.isnan(q) | (q < 0) | (q > 1)


# -- cauchy
def _cauchy_logpdf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("cauchy.logpdf", x, loc, scale)
  z = _scaled(x, loc, scale)
  return lax.neg(lax.add(lax.log(lax.mul(_c(x, np.pi), scale)), lax.log1p(lax.mul(z, z))))


def _cauchy_cdf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("cauchy.cdf", x, loc, scale)
  z = _scaled(x, loc, scale)
  return lax.add(_c(x, 0.5), lax.mul(_c(x, 1 / np.pi), jnp.arctan(z)))


def _cauchy_sf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("cauchy.sf", x, loc, scale)
  return _cauchy_cdf(lax.neg(x), lax.neg(loc), scale)


def _cauchy_logsf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("cauchy.logsf", x, loc, scale)
  return lax.log(_cauchy_cdf(lax.neg(x), lax.neg(loc), scale))


def _cauchy_quantile(name, sign):
  def quantile(q, loc=0, scale=1):
    q, loc, scale = promote_args_inexact(name, q, loc, scale)
    angle = lax.mul(_c(q, sign), lax.sub(lax.mul(_c(q, np.pi), q), _c(q, np.pi / 2)))
    return lax.add(lax.mul(lax.tan(angle), scale), loc)
  return quantile


cauchy = distribution(
    "cauchy", logpdf=_cauchy_logpdf, pdf=exp_of(_cauchy_logpdf), cdf=_cauchy_cdf,
    logcdf=log_of(_cauchy_cdf), sf=_cauchy_sf, logsf=_cauchy_logsf,
    ppf=_cauchy_quantile("cauchy.ppf", 1), isf=_cauchy_quantile("cauchy.isf", -1))


# -- chi2
def _chi2_logpdf(x, df, loc=0, scale=1):
  x, df, loc, scale = promote_args_inexact("chi2.logpdf", x, df, loc, scale)
  one, two = _c(x, 1), _c(x, 2)
  y = _scaled(x, loc, scale)
  half_df = lax.div(df, two)
  kernel = lax.sub(lax.mul(lax.sub(half_df, one), lax.log(y)), lax.div(y, two))
  normalizer = lax.neg(lax.add(lax_special.lgamma(half_df),
                               lax.div(lax.mul(lax.log(two), df), two)))
  log_probs = lax.add(lax.sub(normalizer, lax.log(scale)), kernel)
  return jnp.where(lax.lt(x, loc), -np.inf, log_probs)


def _chi2_tail(name, incomplete_gamma):
  def tail(x, df, loc=0, scale=1):
    x, df, loc, scale = promote_args_inexact(name, x, df, loc, scale)
    two = _c(scale, 2)
    y = lax.clamp(_c(x, 0), lax.div(lax.sub(x, loc), lax.mul(scale, two)), _c(x, np.inf))
    return incomplete_gamma(lax.div(df, two), y)
  return tail


_chi2_cdf = _chi2_tail("chi2.cdf", special.gammainc)
_chi2_sf = _chi2_tail("chi2.sf", special.gammaincc)

chi2 = distribution(
    "chi2", logpdf=_chi2_logpdf, pdf=exp_of(_chi2_logpdf), cdf=_chi2_cdf,
    logcdf=log_of(_chi2_cdf), sf=_chi2_sf, logsf=log_of(_chi2_sf))


# -- expon
def _expon_logpdf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("expon.logpdf", x, loc, scale)
  log_probs = lax.neg(lax.add(_scaled(x, loc, scale), lax.log(scale)))
  return jnp.where(lax.lt(x, loc), -np.inf, log_probs)


def _expon_cdf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("expon.cdf", x, loc, scale)
  neg_z = lax.div(lax.sub(loc, x), scale)
  return jnp.where(lax.lt(x, loc), jnp.zeros_like(neg_z), lax.neg(lax.expm1(neg_z)))


def _expon_logsf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("expon.logsf", x, loc, scale)
  neg_z = lax.div(lax.sub(loc, x), scale)
  return jnp.where(lax.lt(x, loc), jnp.zeros_like(neg_z), neg_z)


def _expon_logcdf(x, loc=0, scale=1):
  return lax.log1p(lax.neg(lax.exp(_expon_logsf(x, loc, scale))))


def _expon_ppf(q, loc=0, scale=1):
  q, loc, scale = promote_args_inexact("expon.ppf", q, loc, scale)
  return jnp.where(_outside_q(q), np.nan, lax.sub(loc, lax.mul(scale, lax.log1p(lax.neg(q)))))


expon = distribution(
    "expon", logpdf=_expon_logpdf, pdf=exp_of(_expon_logpdf), cdf=_expon_cdf,
    logcdf=_expon_logcdf, sf=exp_of(_expon_logsf), logsf=_expon_logsf, ppf=_expon_ppf)


# -- gennorm
def _gennorm_logpdf(x, beta):
  x, beta = promote_args_inexact("gennorm.logpdf", x, beta)
  return lax.sub(lax.sub(lax.log(lax.mul(_c(beta, 0.5), beta)),
                         lax_special.lgamma(lax.div(_c(beta, 1), beta))),
                 lax.pow(lax.abs(x), beta))


def _gennorm_cdf(x, beta):
  x, beta = promote_args_inexact("gennorm.cdf", x, beta)
  mass = lax_special.igamma(lax.div(_c(beta, 1), beta), lax.pow(lax.abs(x), beta))
  return lax.mul(_c(x, 0.5), lax.add(_c(x, 1), lax.mul(lax.sign(x), mass)))


gennorm = distribution("gennorm", logpdf=_gennorm_logpdf, pdf=exp_of(_gennorm_logpdf),
                       cdf=_gennorm_cdf)


# -- gumbel_l and gumbel_r: NaN wherever scale <= 0
def _gumbel(name, log_fn):
  """A Gumbel function of the standardized ``z``, NaN unless ``scale > 0``."""
  def fn(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact(name, x, loc, scale)
    value = log_fn(_scaled(x, loc, scale), scale)
    return _nan_unless(lax.gt(scale, _c(scale, 0)), value)
  return fn


def _gumbel_ppf(name, sign, log_term):
  def ppf(p, loc=0, scale=1):
    p, loc, scale = promote_args_inexact(name, p, loc, scale)
    ok = lax.bitwise_and(lax.gt(p, _c(p, 0)), lax.lt(p, _c(p, 1)))
    shift = lax.mul(scale, lax.log(log_term(p)))
    return _nan_unless(ok, lax.add(loc, lax.mul(_c(shift, sign), shift)))
  return ppf


_gumbel_l_logpdf = _gumbel("gumbel_l.logpdf",
                           lambda z, s: lax.add(special.xlogy(-1, s), lax.sub(z, lax.exp(z))))
_gumbel_l_logcdf = _gumbel("gumbel_l.logcdf",
                           lambda z, s: lax.log(lax.neg(lax.expm1(lax.neg(lax.exp(z))))))
_gumbel_l_logsf = _gumbel("gumbel_l.logsf", lambda z, s: lax.neg(lax.exp(z)))

gumbel_l = distribution(
    "gumbel_l", logpdf=_gumbel_l_logpdf, pdf=exp_of(_gumbel_l_logpdf),
    logcdf=_gumbel_l_logcdf, cdf=exp_of(_gumbel_l_logcdf), logsf=_gumbel_l_logsf,
    sf=exp_of(_gumbel_l_logsf),
    ppf=_gumbel_ppf("gumbel_l.ppf", 1, lambda p: special.xlog1py(-1, lax.neg(p))))

_gumbel_r_logpdf = _gumbel(
    "gumbel_r.logpdf",
    lambda z, s: lax.add(special.xlogy(-1, s), lax.neg(lax.add(z, lax.exp(lax.neg(z))))))
_gumbel_r_logcdf = _gumbel("gumbel_r.logcdf", lambda z, s: lax.neg(lax.exp(lax.neg(z))))
_gumbel_r_sf = _gumbel("gumbel_r.sf",
                       lambda z, s: lax.sub(_c(z, 1), lax.exp(lax.neg(lax.exp(lax.neg(z))))))
_gumbel_r_logsf = _gumbel("gumbel_r.logsf", lambda z, s: log1mexp(lax.exp(lax.neg(z))))

gumbel_r = distribution(
    "gumbel_r", logpdf=_gumbel_r_logpdf, pdf=exp_of(_gumbel_r_logpdf),
    logcdf=_gumbel_r_logcdf, cdf=exp_of(_gumbel_r_logcdf), logsf=_gumbel_r_logsf,
    sf=_gumbel_r_sf, ppf=_gumbel_ppf("gumbel_r.ppf", -1, lambda p: special.xlogy(-1, p)))


# -- laplace
def _laplace_logpdf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("laplace.logpdf", x, loc, scale)
  linear = lax.div(lax.abs(lax.sub(x, loc)), scale)
  return lax.neg(lax.add(linear, lax.log(lax.mul(_c(x, 2), scale))))


def _laplace_cdf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("laplace.cdf", x, loc, scale)
  z, half = _scaled(x, loc, scale), _c(x, 0.5)
  return lax.select(lax.le(z, _c(z, 0)), lax.mul(half, lax.exp(z)),
                    lax.sub(_c(x, 1), lax.mul(half, lax.exp(lax.neg(z)))))


laplace = distribution("laplace", logpdf=_laplace_logpdf, pdf=exp_of(_laplace_logpdf),
                       cdf=_laplace_cdf)


# -- logistic
def _logistic_logpdf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("logistic.logpdf", x, loc, scale)
  half_z = lax.div(_scaled(x, loc, scale), _c(x, 2))
  return lax.sub(lax.mul(_c(x, -2), jnp.logaddexp(half_z, lax.neg(half_z))), lax.log(scale))


def _logistic_cdf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("logistic.cdf", x, loc, scale)
  return special.expit(_scaled(x, loc, scale))


def _logistic_sf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("logistic.sf", x, loc, scale)
  return special.expit(lax.neg(_scaled(x, loc, scale)))


def _logistic_quantile(name, sign):
  # JAX names the probability argument of logistic.ppf and logistic.isf ``x``
  def quantile(x, loc=0, scale=1):
    x, loc, scale = promote_args_inexact(name, x, loc, scale)
    return lax.add(lax.mul(lax.mul(_c(x, sign), special.logit(x)), scale), loc)
  return quantile


logistic = distribution(
    "logistic", logpdf=_logistic_logpdf, pdf=exp_of(_logistic_logpdf), cdf=_logistic_cdf,
    sf=_logistic_sf, ppf=_logistic_quantile("logistic.ppf", 1),
    isf=_logistic_quantile("logistic.isf", -1))


# -- pareto: support x >= loc + scale
def _pareto(name, value_fn, below):
  """A Pareto function of ``z = (x - loc) / scale`` and ``b``; ``below`` under the support."""
  def fn(x, b, loc=0, scale=1):
    x, b, loc, scale = promote_args_inexact(name, x, b, loc, scale)
    value = value_fn(_scaled(x, loc, scale), b, scale)
    return jnp.where(lax.lt(x, lax.add(loc, scale)), below(x), value)
  return fn


_pareto_logpdf = _pareto(
    "pareto.logpdf",
    lambda z, b, s: lax.neg(lax.add(lax.log(lax.div(s, b)),
                                    lax.mul(lax.add(b, _c(b, 1)), lax.log(z)))),
    lambda x: -np.inf)
_pareto_cdf = _pareto("pareto.cdf",
                      lambda z, b, s: lax.sub(_c(z, 1), lax.pow(z, lax.neg(b))),
                      lambda x: _c(x, 0))
_pareto_logcdf = _pareto("pareto.logcdf",
                         lambda z, b, s: lax.log1p(lax.neg(lax.pow(z, lax.neg(b)))),
                         lambda x: -np.inf)
_pareto_logsf = _pareto("pareto.logsf", lambda z, b, s: lax.neg(lax.mul(b, lax.log(z))),
                        lambda x: _c(x, 0))


def _pareto_ppf(q, b, loc=0, scale=1):
  q, b, loc, scale = promote_args_inexact("pareto.ppf", q, b, loc, scale)
  one = _c(q, 1)
  value = lax.add(loc, lax.mul(scale, lax.pow(lax.sub(one, q), lax.neg(lax.div(one, b)))))
  return jnp.where(_outside_q(q), np.nan, value)


pareto = distribution(
    "pareto", logpdf=_pareto_logpdf, pdf=exp_of(_pareto_logpdf), cdf=_pareto_cdf,
    logcdf=_pareto_logcdf, logsf=_pareto_logsf, sf=exp_of(_pareto_logsf), ppf=_pareto_ppf)


# -- truncnorm: the normal restricted to [a, b] (standardized bounds)
def _log_diff(x, y):
  """``log(exp(x) - exp(y))`` without leaving log space."""
  return logsumexp(jnp.array([x, y]), b=jnp.array([jnp.ones_like(x), -jnp.ones_like(y)]),
                   axis=0)


def _log_gauss_mass(a, b):
  """``log(ndtr(b) - ndtr(a))``: a tail interval is mirrored into the left tail, where
  ``log_ndtr`` is accurate, and one around 0 subtracts both tails from 1."""
  a, b = jnp.broadcast_arrays(jnp.array(a), jnp.array(b))
  left, right = b <= 0, a > 0
  central = ~(left | right)
  a_tail = jnp.where(right, -b, a)
  b_tail = jnp.where(right, -a, b)
  mass_tail = _log_diff(special.log_ndtr(b_tail), special.log_ndtr(a_tail))
  mass_central = jnp.log1p(-special.ndtr(a) - special.ndtr(-b))
  return jnp.where(central, mass_central, mass_tail)


def _truncnorm_logpdf(x, a, b, loc=0, scale=1):
  x, a, b, loc, scale = promote_args_inexact("truncnorm.logpdf", x, a, b, loc, scale)
  value = lax.sub(norm.logpdf(x, loc, scale), _log_gauss_mass(a, b))
  z = _scaled(x, loc, scale)
  value = jnp.where((z < a) | (z > b), -np.inf, value)
  return jnp.where(a >= b, np.nan, value)


def _truncnorm_logcdf(x, a, b, loc=0, scale=1):
  x, a, b, loc, scale = promote_args_inexact("truncnorm.logcdf", x, a, b, loc, scale)
  x, a, b = jnp.broadcast_arrays(x, a, b)
  z = _scaled(x, loc, scale)
  mass = _log_gauss_mass(a, b)
  logcdf = _log_gauss_mass(a, z) - mass
  logsf = _log_gauss_mass(z, b) - mass
  # near 1 the cdf is more precise as 1 - sf
  logcdf = jnp.select([z >= b, z <= a, logcdf > -0.1, z > a],
                      [0, -np.inf, jnp.log1p(-jnp.exp(logsf)), logcdf])
  return jnp.where(a >= b, np.nan, logcdf)


def _truncnorm_logsf(x, a, b, loc=0, scale=1):
  x, a, b, loc, scale = promote_args_inexact("truncnorm.logsf", x, a, b, loc, scale)
  return _truncnorm_logcdf(-x, -b, -a, -loc, scale)


truncnorm = distribution(
    "truncnorm", logpdf=_truncnorm_logpdf, pdf=exp_of(_truncnorm_logpdf),
    logcdf=_truncnorm_logcdf, cdf=exp_of(_truncnorm_logcdf), logsf=_truncnorm_logsf,
    sf=exp_of(_truncnorm_logsf))


# -- uniform on [loc, loc + scale]
def _uniform_logpdf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("uniform.logpdf", x, loc, scale)
  outside = jnp.logical_or(lax.gt(x, lax.add(loc, scale)), lax.lt(x, loc))
  return jnp.where(outside, -np.inf, lax.neg(lax.log(scale)))


def _uniform_cdf(x, loc=0, scale=1):
  x, loc, scale = promote_args_inexact("uniform.cdf", x, loc, scale)
  zero, one = jnp.array(0, x.dtype), jnp.array(1, x.dtype)
  hi = lax.add(loc, scale)
  conds = [lax.lt(x, loc), lax.gt(x, hi), lax.ge(x, loc) & lax.le(x, hi)]
  return jnp.select(conds, [zero, one, _scaled(x, loc, scale)])


def _uniform_ppf(q, loc=0, scale=1):
  q, loc, scale = promote_args_inexact("uniform.ppf", q, loc, scale)
  return jnp.where(_outside_q(q), np.nan, lax.add(loc, lax.mul(scale, q)))


uniform = distribution("uniform", logpdf=_uniform_logpdf, pdf=exp_of(_uniform_logpdf),
                       cdf=_uniform_cdf, ppf=_uniform_ppf)


# -- vonmises and wrapcauchy: circular distributions
def _vonmises_logpdf(x, kappa):
  x, kappa = promote_args_inexact("vonmises.logpdf", x, kappa)
  # i0e(kappa) = exp(-kappa) i0(kappa) keeps the normalizer finite for large kappa
  value = kappa * (jnp.cos(x) - 1) - jnp.log(2 * np.pi * lax_special.bessel_i0e(kappa))
  return _nan_unless(lax.gt(kappa, _c(kappa, 0)), value)


def _wrapcauchy_logpdf(x, c):
  x, c = promote_args_inexact("wrapcauchy.logpdf", x, c)
  value = (jnp.log(1 - c * c) - jnp.log(2 * np.pi)
           - jnp.log(1 + c * c - 2 * c * jnp.cos(x)))
  inside = lax.ge(x, _c(x, 0)) & lax.le(x, _c(x, 2 * np.pi))
  valid_c = lax.gt(c, _c(c, 0)) & lax.lt(c, _c(c, 1))
  return _nan_unless(valid_c, jnp.where(inside, value, -np.inf))


vonmises = distribution("vonmises", logpdf=_vonmises_logpdf, pdf=exp_of(_vonmises_logpdf))
wrapcauchy = distribution("wrapcauchy", logpdf=_wrapcauchy_logpdf,
                          pdf=exp_of(_wrapcauchy_logpdf))
