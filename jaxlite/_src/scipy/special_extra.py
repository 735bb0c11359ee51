"""More of ``jax.scipy.special``, composed from lax primitives through ``jaxlite.numpy``:
beta-family functions, combinatorics, exponential integrals, ``erfcx``, Dawson's integral,
Spence's function, Kummer's ``hyp1f1``, Bessel ``J_n`` by Miller's recurrence, Owen's T.

Series and continued fractions run a fixed number of terms (enough for float64 on the
stated ranges), so every function traces, jits and vmaps like any other.
"""
from __future__ import annotations

import fractions
import math

import numpy as np

import jaxlite.numpy as jnp
from jaxlite._src import dtypes
from jaxlite._src.custom_derivatives import custom_jvp
from jaxlite._src.lax import extra as lax_extra
from jaxlite._src.lax import special as lax_special
from jaxlite._src.nn import functions as nn_fn
from jaxlite._src.scipy import special
from jaxlite._src.numpy.util import promote_args_inexact
from jaxlite._src.transforms import ad

__all__ = ["beta", "betainc", "boxcox", "boxcox1p", "comb", "factorial", "gammasgn",
           "i1", "kl_div", "rel_entr", "log_softmax", "softmax", "loggamma",
           "multigammaln", "poch", "zeta", "bernoulli", "exp1", "expi", "expn", "erfcx",
           "dawsn", "spence", "hyp1f1", "bessel_jn", "owens_t"]

_EULER = 0.5772156649015329


def _inexact(name, *xs):
  return promote_args_inexact(name, *xs)


def _gamma_ratio(num, den):
  """``prod(gamma(num)) / prod(gamma(den))`` with its sign, through ``lgamma``."""
  sign, log_value = 1.0, 0.0
  for v in num:
    sign, log_value = sign * gammasgn(v), log_value + lax_special.lgamma(v)
  for v in den:
    sign, log_value = sign * gammasgn(v), log_value - lax_special.lgamma(v)
  return sign * jnp.exp(log_value)


def beta(a, b):
  """The beta function ``gamma(a) gamma(b) / gamma(a + b)``: its sign times
  ``exp(betaln(a, b))``, as JAX computes it."""
  a, b = _inexact("beta", a, b)
  if jnp.iscomplexobj(a):
    raise ValueError("beta does not support complex-valued inputs.")
  sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
  return sign * jnp.exp(special.betaln(a, b))


def betainc(a, b, x):
  """The regularized incomplete beta function ``I_x(a, b)``."""
  a, b, x = _inexact("betainc", a, b, x)
  return lax_extra.betainc(a, b, x)


def boxcox(x, lmbda):
  """The Box-Cox transform ``(x**lmbda - 1) / lmbda`` (``log(x)`` at ``lmbda == 0``)."""
  x, lmbda = _inexact("boxcox", x, lmbda)
  return boxcox1p(x - 1, lmbda)


def boxcox1p(x, lmbda):
  """The Box-Cox transform of ``1 + x``, accurate for small ``x`` and ``lmbda``."""
  x, lmbda = _inexact("boxcox1p", x, lmbda)
  lx = jnp.log1p(x)
  safe = jnp.where(lmbda == 0, 1, lmbda)
  return jnp.where(lmbda == 0, lx, jnp.expm1(safe * lx) / safe)


def comb(N, k, *, repetition=False):
  """The number of combinations of ``N`` things taken ``k`` at a time (0 outside
  ``0 <= k <= N``), from log-gamma, so real-valued."""
  N, k = _inexact("comb", N, k)
  if repetition:
    return comb(N + k - 1, k)
  out = jnp.exp(lax_special.lgamma(N + 1) - lax_special.lgamma(k + 1)
                - lax_special.lgamma(N - k + 1))
  return jnp.where((k >= 0) & (k <= N), out, 0.0)


def factorial(n, exact=False):
  """``n!`` as ``gamma(n + 1)`` (0 for negative ``n``); ``exact=True`` is not
  supported, as in JAX."""
  if exact:
    raise NotImplementedError("factorial with exact=True")
  (n,) = _inexact("factorial", n)
  return jnp.where(n < 0, 0.0, jnp.exp(lax_special.lgamma(n + 1)))


def gammasgn(x):
  """The sign of the gamma function: -1 between ``-2k-1`` and ``-2k``, else 1 (NaN at
  NaN)."""
  (x,) = _inexact("gammasgn", x)
  floor_x = jnp.floor(x)
  neg = (x < 0) & (x != floor_x) & (jnp.mod(floor_x, 2) != 0)
  return jnp.where(jnp.isnan(x), jnp.nan, jnp.where(neg, -1.0, 1.0).astype(x.dtype))


def i1(x):
  """The modified Bessel function of the first kind of order 1."""
  (x,) = _inexact("i1", x)
  return lax_special.bessel_i1e(x) * jnp.exp(jnp.abs(x))


def rel_entr(p, q):
  """Elementwise relative entropy ``p log(p / q)`` (0 at ``p == 0``, ``inf`` where
  ``p < 0`` or ``q <= 0 < p``), as JAX computes it (so its gradients agree)."""
  p, q = _inexact("rel_entr", p, q)
  if jnp.iscomplexobj(p):
    raise ValueError("rel_entr does not support complex-valued inputs.")
  both_positive = (p > 0) & (q > 0)
  safe_p = jnp.where(both_positive, p, 1)
  safe_q = jnp.where(both_positive, q, 1)
  log_val = special._xlogx(safe_p) - special.xlogy(safe_p, safe_q)
  return jnp.where(both_positive, log_val,
                   jnp.where((p == 0) & (q >= 0), jnp.zeros_like(p), np.inf))


def kl_div(p, q):
  """Elementwise Kullback-Leibler term ``p log(p / q) - p + q``."""
  p, q = _inexact("kl_div", p, q)
  if jnp.iscomplexobj(p):
    raise ValueError("kl_div does not support complex-valued inputs.")
  return rel_entr(p, q) - p + q


def softmax(x, /, *, axis=None):
  """``exp(x) / sum(exp(x))`` over ``axis`` (all axes by default)."""
  return nn_fn.softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
  """``x - logsumexp(x)`` over ``axis`` (all axes by default)."""
  return nn_fn.log_softmax(x, axis=axis)


def loggamma(x):
  """The log of the gamma function for real ``x``: ``lgamma`` where gamma is positive,
  NaN elsewhere (as ``scipy.special.loggamma`` on real input)."""
  (x,) = _inexact("loggamma", x)
  return jnp.where(gammasgn(x) > 0, lax_special.lgamma(x), jnp.nan)


def multigammaln(a, d):
  """The log of the multivariate gamma function of dimension ``d`` (a Python int)."""
  (a,) = _inexact("multigammaln", a)
  d = int(d)
  consts = (d * (d - 1) / 4) * math.log(math.pi)
  terms = sum(lax_special.lgamma(a - j / 2) for j in range(d))
  return terms + consts


@custom_jvp
def poch(z, m):
  """The Pochhammer symbol (rising factorial) ``gamma(z + m) / gamma(z)``; its partial
  derivatives are ``(digamma(z + m) - digamma(z)) poch`` and ``digamma(z + m) poch``,
  as in JAX."""
  z, m = _inexact("poch", z, m)
  return jnp.where(m == 0, 1.0, _gamma_ratio([z + m], [z]))


poch.defjvps(
    lambda z_dot, ans, z, m: (lax_special.digamma(z + m) - lax_special.digamma(z))
    * poch(z, m) * z_dot,
    lambda m_dot, ans, z, m: lax_special.digamma(z + m) * poch(z, m) * m_dot)


def _bernoulli_numbers(n):
  b = [fractions.Fraction(0)] * (n + 1)
  for m in range(n + 1):
    b[m] = fractions.Fraction(1, m + 1)
    for j in range(m, 0, -1):
      b[j - 1] = j * (b[j - 1] - b[j])
  return b[0]


def bernoulli(n):
  """The Bernoulli numbers ``B_0 .. B_n`` (with ``B_1 = -1/2``), ``n`` a Python int."""
  n = int(n)
  if n < 0:
    raise ValueError("n must be a non-negative integer.")
  values = [float(_bernoulli_numbers(m)) for m in range(n + 1)]
  if n >= 1:
    values[1] = -0.5
  return jnp.asarray(np.array(values), dtype=jnp.result_type(float))


@custom_jvp
def zeta(x, q=None):
  """The Hurwitz zeta function ``sum((q + k) ** -x for k >= 0)``; as in JAX, ``q`` is
  required (the Riemann zeta function is not implemented). Derivatives are those of
  the series expansion of Johansson (2015), formula (5), as JAX takes them."""
  _check_hurwitz(q)
  x, q = _inexact("zeta", x, q)
  return lax_extra.zeta(x, q)


def _check_hurwitz(q):
  if q is None:
    raise NotImplementedError("Riemann zeta function not implemented; pass q != None to "
                              "compute the Hurwitz Zeta function.")


# (2k)! / B_{2k} for k = 1..16
_ZETA_SERIES_COEFS = [float(math.factorial(2 * k) / fractions.Fraction(
    _bernoulli_numbers(2 * k))) for k in range(1, 17)]


def _zeta_series_expansion(x, q=None):
  """S + I + T of Johansson (2015), formula (5), with N = M = 8 terms (16 in float64)."""
  _check_hurwitz(q)
  s, a = _inexact("zeta", x, q)
  dtype = s.dtype.type
  s_, a_ = jnp.expand_dims(s, -1), jnp.expand_dims(a, -1)
  n = m = dtype(8) if a.dtype == np.float32 else dtype(16)
  k = jnp.expand_dims(np.arange(n, dtype=n.dtype), tuple(range(a.ndim)))
  head = jnp.sum((a_ + k) ** -s_, -1)
  integral = (a + n) ** (dtype(1) - s) / (s - dtype(1))
  t0 = (a + n) ** -s
  j = jnp.expand_dims(np.arange(2 * m, dtype=m.dtype), tuple(range(s.ndim)))
  t1 = jnp.cumprod((s_ + j) / (a_ + n), -1)[..., ::2]
  t1 = jnp.clip(t1, max=dtypes.finfo(dtype).max)
  t1 = t1 / np.expand_dims(np.array(_ZETA_SERIES_COEFS[:t1.shape[-1]], dtype=dtype),
                           tuple(range(a.ndim)))
  return head + integral + t0 * (dtype(0.5) + t1.sum(-1))


@zeta.defjvp
def _zeta_jvp(primals, tangents):
  (out,), (tangent,) = ad.jvp_flat(lambda *p: [_zeta_series_expansion(*p)], list(primals),
                                   list(tangents))
  return out, tangent


# -- exponential integrals ---------------------------------------------------------------
def _expn_series(n, x, terms=60):
  # E_n(x) for x <= 1 (Numerical Recipes' expint): the power series, with the psi term
  # where i == n - 1
  nm1 = n - 1
  ans = jnp.where(nm1 != 0, 1 / jnp.where(nm1 != 0, nm1, 1), -jnp.log(x) - _EULER)
  fact = jnp.ones_like(x)
  psi = lax_special.digamma(jnp.maximum(n, 1.0))
  for i in range(1, terms + 1):
    fact = fact * (-x / i)
    delta = jnp.where(i != nm1, -fact / jnp.where(i != nm1, i - nm1, 1),
                      fact * (-jnp.log(x) + psi))
    ans = ans + delta
  return ans


def _expn_cf(n, x, terms=80):
  # E_n(x) for x > 1: the continued fraction, by modified Lentz
  tiny = np.finfo(x.dtype).tiny * 1e3
  b = x + n
  c = jnp.full_like(x, 1 / tiny)
  d = 1 / b
  h = d
  for i in range(1, terms + 1):
    an = -i * (n - 1 + i)
    b = b + 2
    d = 1 / (an * d + b)
    c = b + an / c
    h = h * (c * d)
  return h * jnp.exp(-x)


def expn(n, x):
  """The generalized exponential integral ``E_n(x) = int_1^inf exp(-x t) / t**n dt`` for
  integer ``n >= 0`` and ``x >= 0``; its derivative in ``x`` is ``-E_{n-1}(x)``, as in
  JAX (``n`` is not differentiable)."""
  return _expn(n, x)


def _expn_value(n, x):
  n, x = _inexact("expn", n, x)
  small = x <= 1
  xs = jnp.where(small & (x > 0), x, 0.5)
  xl = jnp.where(small, 2.0, x)
  out = jnp.where(small, _expn_series(n, xs), _expn_cf(n, xl))
  out = jnp.where(n == 0, jnp.exp(-x) / jnp.where(x == 0, 1, x), out)
  at_zero = jnp.where(n <= 1, jnp.inf, 1 / jnp.where(n > 1, n - 1, 1))
  out = jnp.where(x == 0, at_zero, out)
  bad = (n < 0) | (x < 0) | (n != jnp.floor(n)) | jnp.isnan(x) | jnp.isnan(n)
  return jnp.where(bad, jnp.nan, out)


def _expn_jvp(primals, tangents):
  (n, x), (_, x_dot) = primals, tangents   # n is not differentiated (0 gradient)
  return _expn(n, x), -x_dot * _expn(n - 1, x)


_expn = custom_jvp(_expn_value)
_expn.defjvp(_expn_jvp)


def exp1(x):
  """The exponential integral ``E_1(x)`` for ``x >= 0`` (NaN for ``x < 0``)."""
  (x,) = _inexact("exp1", x)
  return expn(jnp.ones_like(x), x)


@custom_jvp
def expi(x):
  """The exponential integral ``Ei(x)``: ``-E_1(-x)`` for ``x < 0``; the power series up
  to 40 and the asymptotic series beyond for ``x > 0``. Its derivative is
  ``exp(x) / x``, as in JAX."""
  (x,) = _inexact("expi", x)
  xs = jnp.clip(x, 1e-30, 40.0)
  term = jnp.ones_like(xs)
  total = jnp.zeros_like(xs)
  for k in range(1, 121):
    term = term * xs / k
    total = total + term / k
  series = _EULER + jnp.log(xs) + total
  xa = jnp.maximum(x, 40.0)
  term, asym = jnp.ones_like(xa), jnp.ones_like(xa)
  for k in range(1, 30):
    term = term * k / xa
    asym = asym + term
  asym = jnp.exp(xa) / xa * asym
  pos = jnp.where(x > 40.0, asym, series)
  neg = -exp1(jnp.where(x < 0, -x, 1.0))
  return jnp.where(x < 0, neg, jnp.where(x == 0, -jnp.inf, pos))


@expi.defjvp
def _expi_jvp(primals, tangents):
  (x,), (x_dot,) = primals, tangents
  return expi(x), jnp.exp(x) / x * x_dot


def erfcx(x):
  """The scaled complementary error function ``exp(x**2) * erfc(x)``, by its asymptotic
  series for ``x > 5`` where ``exp(x**2)`` would overflow and ``erfc`` underflow."""
  (x,) = _inexact("erfcx", x)
  return _erfcx(x)


def _in_float32(fn, x):
  """``fn(x)``, computed in float32 for float16 and bfloat16 ``x`` (as JAX: the series'
  intermediate values overflow the narrow types)."""
  if x.dtype in (np.float32, np.float64):
    return fn(x)
  return fn(x.astype(np.float32)).astype(x.dtype)


@custom_jvp
def _erfcx(x):
  return _in_float32(_erfcx_value, x)


def _erfcx_value(x):
  direct = jnp.exp(jnp.square(jnp.minimum(x, 5.0))) * lax_special.erfc(jnp.minimum(x, 5.0))
  xa = jnp.maximum(x, 5.0)
  inv2 = 1 / (2 * jnp.square(xa))
  term, total = jnp.ones_like(xa), jnp.ones_like(xa)
  for k in range(1, 20):
    term = -term * (2 * k - 1) * inv2
    total = total + term
  asym = total / (xa * math.sqrt(math.pi))
  return jnp.where(x > 5.0, asym, direct)


# as JAX: erfcx' = 2 x erfcx - 2 / sqrt(pi)
_erfcx.defjvps(lambda g, ans, x: g * (2 * x * ans - np.array(2 / math.sqrt(math.pi),
                                                            x.dtype)))


_DAWSN_H = 0.4
_DAWSN_C = [math.exp(-((2 * i + 1) * _DAWSN_H) ** 2) for i in range(6)]


def dawsn(x):
  """Dawson's integral ``exp(-x**2) int_0^x exp(t**2) dt``: Rybicki's method (relative
  error about 2e-7) for moderate ``x``, the asymptotic series beyond 10."""
  (x,) = _inexact("dawsn", x)
  return _dawsn(x)


@custom_jvp
def _dawsn(x):
  return _in_float32(_dawsn_value, x)


def _dawsn_value(x):
  ax = jnp.abs(x)
  x2 = jnp.square(x)
  small = x * (1 - 2 / 3 * x2 * (1 - 0.4 * x2 * (1 - 2 / 7 * x2)))
  axm = jnp.clip(ax, 0.2, 10.0)
  n0 = 2 * jnp.round(0.5 * axm / _DAWSN_H)
  xp = axm - n0 * _DAWSN_H
  e1 = jnp.exp(2 * xp * _DAWSN_H)
  e2 = jnp.square(e1)
  d1, d2 = n0 + 1, n0 - 1
  total = jnp.zeros_like(axm)
  for c in _DAWSN_C:
    total = total + c * (e1 / d1 + 1 / (d2 * e1))
    d1, d2, e1 = d1 + 2, d2 - 2, e1 * e2
  mid = jnp.sign(x) * (1 / math.sqrt(math.pi)) * jnp.exp(-jnp.square(xp)) * total
  xa = jnp.maximum(ax, 10.0)
  inv2 = 1 / (2 * jnp.square(xa))
  term, asym = jnp.ones_like(xa), jnp.ones_like(xa)
  for k in range(1, 15):
    term = term * (2 * k - 1) * inv2
    asym = asym + term
  big = jnp.sign(x) * asym / (2 * xa)
  return jnp.where(ax < 0.2, small, jnp.where(ax > 10.0, big, mid))


# as JAX: dawsn' = 1 - 2 x dawsn
_dawsn.defjvps(lambda g, ans, x: g * (1. - 2. * x * ans))


# -- Spence's function (dilogarithm) ------------------------------------------------------
# Cephes' rational approximation of Li2(1 - x) = -w A(w) / B(w) for w = x - 1 near 0
_SPENCE_A = (4.65128586073990045278E-5, 7.31589045238094711071E-3, 1.33847639578309018650E-1,
             8.79691311754530315341E-1, 2.71149851196553469920E0, 4.25697156008121755724E0,
             3.29771340985225106936E0, 1.00000000000000000126E0)
_SPENCE_B = (6.90990488912553276999E-4, 2.54043763932544379113E-2, 2.82974860602568089943E-1,
             1.41172597751831069617E0, 3.63800533345137075418E0, 5.03278880143316990390E0,
             3.54771340985225096217E0, 9.99999999999999998740E-1)


def spence(x):
  """Spence's function ``int_1^x log(t) / (1 - t) dt`` for ``x >= 0`` (NaN below).

  Cephes' algorithm, as in JAX (whose values and gradients it reproduces): reflection
  and inversion bring the argument near 1, where a rational approximation holds.
  float32 and float64 only.
  """
  x = jnp.asarray(x)
  if x.dtype not in (np.float32, np.float64):
    raise TypeError(f"x.dtype={x.dtype} is not supported, see docstring for supported "
                    "types.")
  return jnp.piecewise(x, [x < 0.0, x == 1.0, x == 0.0],
                       [np.nan, 0, np.pi ** 2 / 6, _spence_calc])


def _spence_calc(x):
  inverted = x > 2.0
  x = jnp.piecewise(x, [inverted], [lambda x: 1.0 / x, lambda x: x])
  above = x > 1.5
  below = x < 0.5
  inverted = inverted | above
  w = jnp.piecewise(x, [above, below], [lambda x: 1.0 / x - 1.0, lambda x: -x,
                                        lambda x: x - 1.0])
  y = -w * jnp.polyval(jnp.array(_SPENCE_A, w.dtype), w) / jnp.polyval(
      jnp.array(_SPENCE_B, w.dtype), w)
  y = jnp.where(below, np.pi ** 2 / 6.0 - jnp.log(x) * jnp.log(1.0 - x) - y, y)
  return jnp.where(inverted, -0.5 * jnp.log(x) ** 2 - y, y)


# -- hypergeometric and Bessel ------------------------------------------------------------
def hyp1f1(a, b, x):
  """Kummer's confluent hypergeometric function ``1F1(a; b; x)``, by its power series
  (500 terms), applied to ``-x`` through Kummer's transformation when ``x < 0``."""
  a, b, x = _inexact("hyp1f1", a, b, x)
  neg = x < 0
  aa = jnp.where(neg, b - a, a)
  xx = jnp.abs(x)

  def body(k, carry):
    term, total = carry
    k = k.astype(x.dtype)
    term = term * (aa + k) / (b + k) * xx / (k + 1)
    return term, total + term

  _, total = lax_extra.cf.fori_loop(0, 500, body, (jnp.ones_like(xx), jnp.ones_like(xx)))
  return jnp.where(neg, jnp.exp(x) * total, total)


def bessel_jn(z, *, v, n_iter=50):
  """Bessel functions of the first kind ``J_0 .. J_v`` at ``z`` (stacked on a new
  leading axis), by Miller's backward recurrence from order ``n_iter``, normalized with
  ``J_0 + 2 (J_2 + J_4 + ...) = 1``."""
  (z,) = _inexact("bessel_jn", z)
  v = int(v)
  start = max(n_iter, v + 1)
  zs = jnp.where(z == 0, 1.0, z)
  nxt, cur = jnp.zeros_like(zs), jnp.full_like(zs, 1e-30)
  vals = {start: cur}
  norm = jnp.zeros_like(zs)
  for k in range(start, 0, -1):
    prev = 2 * k / zs * cur - nxt
    # rescale to keep the recurrence in range; the ratio is what matters
    scale = jnp.where(jnp.abs(prev) > 1e10, 1e-10, 1.0)
    nxt, cur = cur * scale, prev * scale
    vals = {m: val * scale for m, val in vals.items()}
    norm = norm * scale
    vals[k - 1] = cur
    if (k - 1) % 2 == 0 and k - 1 > 0:
      norm = norm + 2 * cur
  norm = norm + vals[0]
  out = jnp.stack([vals[m] / norm for m in range(v + 1)])
  zero = jnp.stack([jnp.where(z == 0, 1.0 if m == 0 else 0.0, 0.0) for m in range(v + 1)])
  return jnp.where(z == 0, zero, out)


_GL_X, _GL_W = np.polynomial.legendre.leggauss(48)


def owens_t(h, a):
  """Owen's T function ``1/(2 pi) int_0^a exp(-h**2 (1 + x**2) / 2) / (1 + x**2) dx``:
  Gauss-Legendre quadrature for ``|a| <= 1``, and for ``|a| > 1`` the identity
  relating ``T(h, a)`` to ``T(a h, 1 / a)``."""
  h, a = _inexact("owens_t", h, a)

  def quad(h, a):
    x = (jnp.asarray(_GL_X, h.dtype) + 1) / 2 * a[..., None]
    f = jnp.exp(-0.5 * jnp.square(h[..., None]) * (1 + x * x)) / (1 + x * x)
    return jnp.sum(f * jnp.asarray(_GL_W, h.dtype), axis=-1) * a / 2 / (2 * math.pi)

  h, a = jnp.broadcast_arrays(h, a)
  sa = jnp.sign(a)
  aa = jnp.abs(a)
  ah = jnp.abs(h)
  inner = quad(ah, jnp.minimum(aa, 1.0))
  ia = 1 / jnp.maximum(aa, 1.0)
  ndtr = lambda v: 0.5 * lax_special.erfc(-v / math.sqrt(2))
  ph, pah = ndtr(ah), ndtr(aa * ah)
  outer = 0.5 * ph + 0.5 * pah - ph * pah - 0.5 * jnp.where(ah < 0, 1.0, 0.0) - quad(
      aa * ah, ia)
  outer = jnp.where(ah == 0, jnp.arctan(aa) / (2 * math.pi), outer)
  return sa * jnp.where(aa <= 1, inner, outer)
