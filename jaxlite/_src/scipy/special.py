"""``jaxlite.scipy.special``: special functions from lax primitives (``jax.scipy.special``)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.custom_derivatives import custom_jvp
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import special as lax_special
from jaxlite._src.numpy import reductions
from jaxlite._src.numpy.lax_numpy import where as _where
from jaxlite._src.numpy.util import (as_operand, canonicalize_axes, check_arraylike,
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


@custom_jvp
def logit(x):
  """``log(x / (1 - x))``, elementwise (``scipy.special.logit``); its derivative is
  ``1 / (x (1 - x))``, as in JAX."""
  x, = promote_args_inexact("logit", x)
  return lax.log(lax.div(x, lax.sub(_c(x, 1), x)))


logit.defjvps(lambda g, ans, x: lax.div(g, lax.mul(x, lax.sub(_c(x, 1), x))))


def betaln(a, b):
  """``log(abs(beta(a, b)))``, elementwise (``scipy.special.betaln``).

  As JAX (after scipy's cdflib): with ``a <= b``, ``lgamma(a) + lgamma(b) - lgamma(a + b)``
  for ``b < 8`` and ``lgamma(a) + algdiv(a, b)`` beyond, which keeps its digits for large
  arguments.
  """
  a, b = promote_args_inexact("betaln", a, b)
  a, b = _minimum(a, b), _maximum(a, b)
  small_b = lax.add(lax_special.lgamma(a), lax.sub(lax_special.lgamma(b),
                                                   lax_special.lgamma(lax.add(a, b))))
  large_b = lax.add(lax_special.lgamma(a), _algdiv(a, b))
  return _where(lax.lt(b, _c(b, 8)), small_b, large_b)


def _minimum(x, y):
  from jaxlite._src.numpy.ufuncs import minimum
  return minimum(x, y)


def _maximum(x, y):
  from jaxlite._src.numpy.ufuncs import maximum
  return maximum(x, y)


_ALGDIV_C = (0.833333333333333e-01, -0.277777777760991e-02, 0.793650666825390e-03,
             -0.595202931351870e-03, 0.837308034031215e-03, -0.165322962780713e-02)


def _algdiv(a, b):
  """``lgamma(b) - lgamma(a + b)`` for ``a <= b``, ``b >= 8`` (cdflib's algdiv)."""
  c0, c1, c2, c3, c4, c5 = (_c(a, c) for c in _ALGDIV_C)
  one = _c(a, 1.0)
  h = lax.div(a, b)
  c = x = lax.div(h, lax.add(one, h))
  d = lax.add(b, lax.sub(a, _c(a, 0.5)))
  x2 = lax.mul(x, x)
  s3 = lax.add(one, lax.add(x, x2))
  s5 = lax.add(one, lax.add(x, lax.mul(x2, s3)))
  s7 = lax.add(one, lax.add(x, lax.mul(x2, s5)))
  s9 = lax.add(one, lax.add(x, lax.mul(x2, s7)))
  s11 = lax.add(one, lax.add(x, lax.mul(x2, s9)))
  t = lax.integer_pow(lax.div(one, b), 2)
  w = lax.add(lax.mul(lax.mul(c5, s11), t), lax.mul(c4, s9))
  for coef, s_n in ((c3, s7), (c2, s5), (c1, s3)):
    w = lax.add(lax.mul(w, t), lax.mul(coef, s_n))
  w = lax.add(lax.mul(w, t), c0)
  w = lax.mul(w, lax.div(c, b))
  u = lax.mul(d, lax.log1p(lax.div(a, b)))
  v = lax.mul(a, lax.sub(lax.log(b), one))
  return _where(lax.le(u, v), lax.sub(lax.sub(w, v), u), lax.sub(lax.sub(w, u), v))


def _x_log(name, log, shift):
  """``x * log(shift + y)`` (``log`` is log or log1p), 0 where ``x == 0`` unless ``y`` is
  NaN; with JAX's derivative ``(dx log(shift + y) + dy x / (shift + y))``."""
  def x_log(x, y):
    x, y = promote_args_inexact(name, x, y)
    keep = lax.bitwise_or(lax.ne(x, _c(x, 0)), lax.ne(y, y))
    return _where(keep, lax.mul(x, log(y)), lax.broadcast_like(_c(x, 0), x))
  x_log.__name__ = x_log.__qualname__ = name
  x_log.__doc__ = (f"``x * {log.__name__}(y)``, 0 where ``x == 0`` (and ``y`` is not NaN), "
                   f"elementwise (``scipy.special.{name}``).")
  x_log = custom_jvp(x_log)

  def x_log_jvp(primals, tangents):
    (x, y), (x_dot, y_dot) = primals, tangents
    out = x_log(x, y)
    x, y = as_operand(x), as_operand(y)
    tangent = x_dot * log(y) + y_dot * x / (y if shift == 0 else shift + y)
    return out, tangent.astype(out.dtype)
  x_log.defjvp(x_log_jvp)
  return x_log


xlogy = _x_log("xlogy", lax.log, 0)
xlog1py = _x_log("xlog1py", lax.log1p, 1)


def entr(x):
  """``-x log(x)`` for ``x > 0``, 0 at 0 and ``-inf`` below (``scipy.special.entr``);
  its derivative is ``-(log(x) + 1)``, as in JAX."""
  x, = promote_args_inexact("entr", x)
  if np.issubdtype(x.dtype, np.complexfloating):
    raise ValueError("entr does not support complex-valued inputs.")
  return _where(lax.lt(x, _c(x, 0)), lax.broadcast_like(_c(x, -np.inf), x),
                lax.neg(_xlogx(x)))


@custom_jvp
def _xlogx(x):
  """``x log(x)``, 0 at 0, with the derivative ``log(x) + 1`` (JAX's ``_xlogx``)."""
  return xlogy(x, x)


@_xlogx.defjvp
def _xlogx_jvp(primals, tangents):
  (x,), (x_dot,) = primals, tangents
  return _xlogx(x), lax.mul(x_dot, lax.add(lax.log(x), _c(x, 1)))


def ndtr(x):
  """The standard normal CDF, elementwise (``scipy.special.ndtr``); float32 and float64
  only, as in JAX."""
  return _ndtr(_float32_or_64("ndtr", x, "x.dtype={} is not supported, see docstring for "
                                         "supported types."))


def _float32_or_64(name, x, message):
  check_arraylike(name, x)
  x = as_operand(x)
  if x.dtype not in (np.float32, np.float64):
    raise TypeError(message.format(x.dtype))
  return x


def _ndtr(x):
  # 1 + erf(w) near the middle, erfc(|w|) (or 2 minus it) in the tails, as JAX
  half_sqrt_2 = _c(x, 0.5 * np.sqrt(2.))
  w = lax.mul(x, half_sqrt_2)
  z = lax.abs(w)
  tails = _where(lax.gt(w, _c(w, 0.)), lax.sub(_c(z, 2.), lax_special.erfc(z)),
                 lax_special.erfc(z))
  return lax.mul(_c(x, 0.5), _where(lax.lt(z, half_sqrt_2),
                                    lax.add(_c(w, 1.), lax_special.erf(w)), tails))


# log_ndtr switches to the asymptotic series below, and to -ndtr(-x) above, these
_LOG_NDTR_SEGMENTS = {np.dtype(np.float32): (-10., 5.), np.dtype(np.float64): (-20., 8.)}


def log_ndtr(x, series_order=3):
  """The log of the standard normal CDF, accurate in both tails (JAX's algorithm and
  custom derivative ``exp(log_pdf(x) - log_ndtr(x))``); float32 and float64 only.

  Parameters
  ----------
  x : array_like
  series_order : int
    Terms of the asymptotic series used for ``x`` below -10 (float32) or -20 (float64);
    from 0 to 30.
  """
  if not isinstance(series_order, int):
    raise TypeError("series_order must be a Python integer.")
  if series_order < 0:
    raise ValueError("series_order must be non-negative.")
  if series_order > 30:
    raise ValueError("series_order must be <= 30.")
  x = _float32_or_64("log_ndtr", x, "x.dtype={} is not supported.")
  return _log_ndtr(x, series_order)


def _log_ndtr_value(x, series_order):
  # the segments are strongly typed, as JAX's NumPy constants (a weak x gives a strong
  # result)
  lower, upper = (as_operand(np.array(v, x.dtype)) for v in _LOG_NDTR_SEGMENTS[x.dtype])
  above = lax.gt(x, upper)
  res = _ndtr(_where(above, lax.neg(x), lax.max(x, lower)))
  # the min keeps the unchosen series finite (a NaN there would leak into gradients)
  return _where(above, lax.neg(res),
                _where(lax.gt(x, lower), lax.log(res),
                       _log_ndtr_lower(lax.min(x, lower), series_order)))


def _log_ndtr_lower(x, series_order):
  """``log(ndtr(x))`` for ``x << -1``: ``log(pdf(x) / -x)`` plus the log of the
  asymptotic series ``1 - 1/x^2 + 3/x^4 - ...``."""
  x_2 = lax.square(x)
  log_scale = lax.sub(lax.sub(lax.mul(_c(x, -0.5), x_2), lax.log(lax.neg(x))),
                      _c(x, 0.5 * np.log(2. * np.pi)))
  return lax.add(log_scale, lax.log(_log_ndtr_series(x, series_order)))


def _log_ndtr_series(x, series_order):
  if series_order <= 0:
    return _c(x, 1.)
  x_2 = lax.square(x)
  even = odd = lax.broadcast_like(_c(x, 0.), x)
  x_2n = x_2
  for n in range(1, series_order + 1):
    term = lax.div(_c(x, float(np.prod(np.arange(2 * n - 1, 1, -2)))), x_2n)
    if n % 2:
      odd = lax.add(odd, term)
    else:
      even = lax.add(even, term)
    x_2n = lax.mul(x_2n, x_2)
  return lax.sub(lax.add(_c(x, 1.), even), odd)


def _log_ndtr_jvp(series_order, primals, tangents):
  (x,), (t,) = primals, tangents
  ans = _log_ndtr(x, series_order)
  log_pdf = lax.sub(lax.mul(_c(x, -0.5), lax.square(x)), _c(x, np.log(np.sqrt(2 * np.pi))))
  return ans, lax.mul(t, lax.exp(lax.sub(log_pdf, ans)))


_log_ndtr = custom_jvp(_log_ndtr_value, nondiff_argnums=(1,))
_log_ndtr.defjvp(_log_ndtr_jvp)


def ndtri(p):
  """The inverse of ``ndtr``: the standard normal quantile function, elementwise.

  Cephes' piecewise rational approximations, as in JAX (so values and gradients agree
  with it, including at ``p = 0`` and ``p = 1``); float32 and float64 only.
  """
  return _ndtri(_float32_or_64("ndtri", p, "x.dtype={} is not supported, see docstring "
                                          "for supported types."))


# Cephes' coefficients: x / sqrt(2 pi) = w + w**3 P0(w**2) / Q0(w**2) for p > exp(-2);
# below, x = z - log(z) / z - P(1/z) / Q(1/z) / z with z = sqrt(-2 log p), (P1, Q1) down to
# p = exp(-32) and (P2, Q2) beyond
_NDTRI_P0 = (-5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
             1.39312609387279679503E1, -1.23916583867381258016E0)
_NDTRI_Q0 = (1.0, 1.95448858338141759834E0, 4.67627912898881538453E0,
             8.63602421390890590575E1, -2.25462687854119370527E2, 2.00260212380060660359E2,
             -8.20372256168333339912E1, 1.59056225126211695515E1, -1.18331621121330003142E0)
_NDTRI_P1 = (4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
             4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
             -1.40256079171354495875E-1, -3.50424626827848203418E-2,
             -8.57456785154685413611E-4)
_NDTRI_Q1 = (1.0, 1.57799883256466749731E1, 4.53907635128879210584E1,
             4.13172038254672030440E1, 1.50425385692907503408E1, 2.50464946208309415979E0,
             -1.42182922854787788574E-1, -3.80806407691578277194E-2,
             -9.33259480895457427372E-4)
_NDTRI_P2 = (3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
             1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
             3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9)
_NDTRI_Q2 = (1.0, 6.02427039364742014255E0, 3.67983563856160859403E0,
             1.37702099489081330271E0, 2.16236993594496635890E-1, 1.34204006088543189037E-2,
             3.28014464682127739104E-4, 2.89247864745380683936E-6, 6.79019408009981274425E-9)


def _polyval(coeffs, x):
  from jaxlite._src.numpy.polynomial import polyval
  return polyval(np.array(coeffs, x.dtype), x)


def _ndtri(p):
  dtype = p.dtype.type
  full = lambda v: lax.broadcast_like(_c(p, v), p)
  # the tail formula is evaluated on the smaller of p and 1 - p
  mcp = _where(lax.gt(p, _c(p, dtype(-np.expm1(-2.)))), lax.sub(_c(p, 1), p), p)
  mcp = _where(lax.eq(mcp, _c(p, 0)), full(0.5), mcp)   # any value that keeps logs finite
  w = lax.sub(mcp, _c(p, 0.5))
  ww = lax.square(w)
  x_big = lax.add(w, lax.mul(lax.mul(w, ww), lax.div(_polyval(_NDTRI_P0, ww),
                                                     _polyval(_NDTRI_Q0, ww))))
  x_big = lax.mul(x_big, _c(p, -np.sqrt(2. * np.pi)))
  z = lax.sqrt(lax.mul(_c(p, -2.), lax.log(mcp)))
  first = lax.sub(z, lax.div(lax.log(z), z))
  inv_z = lax.div(_c(z, 1), z)
  tail = lambda num, den: lax.div(lax.div(_polyval(num, inv_z), _polyval(den, inv_z)), z)
  x_small = lax.sub(first, tail(_NDTRI_P2, _NDTRI_Q2))
  x_other = lax.sub(first, tail(_NDTRI_P1, _NDTRI_Q1))
  x = _where(lax.gt(mcp, _c(p, dtype(np.exp(-2.)))), x_big,
             _where(lax.ge(z, _c(z, 8.0)), x_small, x_other))
  x = _where(lax.gt(p, _c(p, dtype(1. - np.exp(-2.)))), x, lax.neg(x))
  return _where(lax.eq(p, _c(p, 0.)), full(-np.inf),
                _where(lax.eq(p, _c(p, 1.)), full(np.inf), x))


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
