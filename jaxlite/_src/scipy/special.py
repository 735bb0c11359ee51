"""``jaxlite.scipy.special``: special functions from lax primitives (``jax.scipy.special``)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import special as lax_special
from jaxlite._src.numpy import reductions
from jaxlite._src.numpy.lax_numpy import where as _where
from jaxlite._src.numpy.util import (canonicalize_axes, check_arraylike,
                                     promote_args_inexact)

__all__ = [
    "erf", "erfc", "erfinv", "gammaln", "digamma", "polygamma", "betaln", "logsumexp",
    "expit", "logit", "xlogy", "xlog1py", "entr", "i0", "i0e", "i1e", "ndtr", "ndtri",
    "log_ndtr", "gammainc", "gammaincc", "gamma",
]


def _c(x, value):
  return lax._const(x, value)


def _unary(name, fn, doc):
  def fun(x):
    x, = promote_args_inexact(name, x)
    return fn(x)
  fun.__name__ = fun.__qualname__ = name
  fun.__doc__ = f"{doc}, elementwise (``scipy.special.{name}``)."
  return fun


erf = _unary("erf", lax_special.erf, "The error function")
erfc = _unary("erfc", lax_special.erfc, "The complementary error function ``1 - erf``")
erfinv = _unary("erfinv", lax_special.erf_inv, "The inverse error function")
gammaln = _unary("gammaln", lax_special.lgamma, "``log(abs(gamma(x)))``")
digamma = _unary("digamma", lax_special.digamma, "The digamma function")
i0e = _unary("i0e", lax_special.bessel_i0e, "The scaled Bessel function ``exp(-|x|) I0(x)``")
i1e = _unary("i1e", lax_special.bessel_i1e, "The scaled Bessel function ``exp(-|x|) I1(x)``")
expit = _unary("expit", lax.logistic, "The logistic sigmoid ``1 / (1 + exp(-x))``")
i0 = _unary("i0", lambda x: lax.mul(lax_special.bessel_i0e(x), lax.exp(lax.abs(x))),
            "The modified Bessel function of order 0")


def gamma(x):
  """The gamma function, elementwise (``scipy.special.gamma``)."""
  x, = promote_args_inexact("gamma", x)
  # gamma is negative between -2k-1 and -2k; lgamma only gives the magnitude
  sign = _where(lax.bitwise_and(lax.lt(x, _c(x, 0)),
                               lax.ne(lax.rem(lax.floor(x), _c(x, 2)), _c(x, 0))),
               _c(x, -1), _c(x, 1))
  return lax.mul(sign, lax.exp(lax_special.lgamma(x)))


def polygamma(n, x):
  """The ``n``-th derivative of digamma (``scipy.special.polygamma``)."""
  n, x = promote_args_inexact("polygamma", n, x)
  return lax_special.polygamma(n, x)


def logit(x):
  """``log(x / (1 - x))``, elementwise (``scipy.special.logit``)."""
  x, = promote_args_inexact("logit", x)
  return lax.log(lax.div(x, lax.sub(_c(x, 1), x)))


def betaln(a, b):
  """``log(abs(beta(a, b)))``, elementwise (``scipy.special.betaln``)."""
  a, b = promote_args_inexact("betaln", a, b)
  return lax.sub(lax.add(lax_special.lgamma(a), lax_special.lgamma(b)),
                 lax_special.lgamma(lax.add(a, b)))


def xlogy(x, y):
  """``x * log(y)``, with 0 where ``x == 0`` (gradients there are finite too)."""
  x, y = promote_args_inexact("xlogy", x, y)
  zero = lax.eq(x, _c(x, 0))
  safe_y = _where(zero, _c(y, 1), y)
  return _where(zero, _c(x, 0), lax.mul(x, lax.log(safe_y)))


def xlog1py(x, y):
  """``x * log1p(y)``, with 0 where ``x == 0``."""
  x, y = promote_args_inexact("xlog1py", x, y)
  zero = lax.eq(x, _c(x, 0))
  safe_y = _where(zero, _c(y, 0), y)
  return _where(zero, _c(x, 0), lax.mul(x, lax.log1p(safe_y)))


def entr(x):
  """``-x log(x)`` for ``x > 0``, 0 at 0 and ``-inf`` below (``scipy.special.entr``)."""
  x, = promote_args_inexact("entr", x)
  positive = lax.gt(x, _c(x, 0))
  safe = _where(positive, x, _c(x, 1))
  return _where(positive, lax.neg(lax.mul(safe, lax.log(safe))),
               _where(lax.eq(x, _c(x, 0)), _c(x, 0), _c(x, -np.inf)))


def ndtr(x):
  """The standard normal CDF, elementwise (``scipy.special.ndtr``)."""
  x, = promote_args_inexact("ndtr", x)
  return lax.mul(_c(x, 0.5), lax_special.erfc(lax.mul(x, _c(x, -np.sqrt(0.5)))))


def log_ndtr(x):
  """The log of the standard normal CDF, accurate far into the lower tail."""
  x, = promote_args_inexact("log_ndtr", x)
  # for x < -5 use the asymptotic series log(phi(x) / -x * (1 - 1/x^2 + 3/x^4))
  lower = lax.lt(x, _c(x, -5))
  safe = _where(lower, x, _c(x, -5))
  inv2 = lax.div(_c(x, 1), lax.mul(safe, safe))
  series = lax.add(lax.sub(_c(x, 1), inv2), lax.mul(_c(x, 3), lax.mul(inv2, inv2)))
  tail = lax.sub(lax.sub(lax.mul(_c(x, -0.5), lax.mul(safe, safe)),
                         lax.log(lax.neg(safe))),
                 _c(x, 0.5 * np.log(2 * np.pi)))
  tail = lax.add(tail, lax.log(series))
  mid = lax.log(ndtr(_where(lower, _c(x, 0), x)))
  upper = lax.log1p(lax.neg(ndtr(lax.neg(lax.abs(x)))))  # log(1 - tiny) keeps its digits
  return _where(lower, tail, _where(lax.gt(x, _c(x, 0)), upper, mid))


def ndtri(p):
  """The inverse of ``ndtr``: the standard normal quantile function, elementwise."""
  p, = promote_args_inexact("ndtri", p)
  return lax.mul(_c(p, np.sqrt(2)), lax_special.erf_inv(lax.sub(lax.mul(_c(p, 2), p),
                                                                _c(p, 1))))


def gammainc(a, x):
  """The regularized lower incomplete gamma function ``P(a, x)``."""
  a, x = promote_args_inexact("gammainc", a, x)
  return lax_special.igamma(a, x)


def gammaincc(a, x):
  """The regularized upper incomplete gamma function ``Q(a, x)``."""
  a, x = promote_args_inexact("gammaincc", a, x)
  return lax_special.igammac(a, x)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
  """``log(sum(b * exp(a)))`` over ``axis``, computed without overflow.

  Parameters
  ----------
  a : array_like
  axis : int or tuple of ints, optional
  b : array_like, optional
    Weights of the terms (may be negative).
  keepdims : bool
  return_sign : bool
    If True, return ``(log(abs(s)), sign(s))``; otherwise a negative sum gives NaN.
  """
  from jaxlite._src.custom_derivatives import stop_gradient
  from jaxlite._src.numpy.lax_numpy import broadcast_arrays
  if where is not None:
    raise NotImplementedError("logsumexp(where=...) is not supported by jaxlite.")
  if b is not None:
    check_arraylike("logsumexp", a, b)
    a, b = promote_args_inexact("logsumexp", a, b)
    a, b = broadcast_arrays(a, b)
    a = _where(lax.eq(b, _c(b, 0)), _c(a, -np.inf), a)
  else:
    a, = promote_args_inexact("logsumexp", a)
  axes = canonicalize_axes(axis, a.ndim)
  amax = reductions.max(a, axes, keepdims=True)
  amax = stop_gradient(_where(lax.is_finite(amax), amax, _c(amax, 0)))
  terms = lax.exp(lax.sub(a, amax))
  if b is not None:
    terms = lax.mul(terms, b)
  total = reductions.sum(terms, axes, keepdims=keepdims)
  sign = lax.sign(total)
  if not keepdims:
    amax = amax.reshape(total.shape)
  out = lax.add(lax.log(lax.abs(total)), amax)
  if return_sign:
    return out, sign
  if b is not None:
    out = _where(lax.lt(sign, _c(sign, 0)), _c(out, np.nan), out)
  return out
