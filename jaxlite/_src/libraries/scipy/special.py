"""``jaxlite.scipy.special``: special functions from lax primitives (``jax.scipy.special``):
the error, gamma and beta families, convenience functions (``logit``, ``xlogy``,
``softmax``, ``boxcox``, ...), the normal distribution and Bessel functions. The
hypergeometric functions, the oscillatory integrals and the other integrals have
modules of their own (``special_hyper``, ``special_oscillatory``, ``special_integrals``).

Each function follows JAX's algorithm, so its edge values (poles, infinities, NaN) and
its accuracy are JAX's, and its input rules too: most promote integers and booleans to
the default float type, while ``ndtr``, ``ndtri`` and ``log_ndtr`` accept only float32
and float64 and raise a TypeError for anything else.
"""
from __future__ import annotations

import operator

import numpy as np

from jaxlite._src.libraries.numpy import namespace as jnp
from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.base import tree
from jaxlite._src.lax.custom_derivatives import custom_jvp
from jaxlite._src.lax import control_flow as cf
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.lax import special as lax_special
from jaxlite._src.libraries.nn import functions as nn_fn
from jaxlite._src.libraries.nn.functions import logsumexp
from jaxlite._src.libraries.numpy.util import as_operand, promote_args_inexact, promote_dtypes_inexact

__all__ = [
    "erf", "erfc", "erfinv", "gammaln", "gammasgn", "gamma", "loggamma", "digamma",
    "polygamma", "betaln", "beta", "betainc", "comb", "factorial", "multigammaln", "poch",
    "zeta", "bernoulli", "logsumexp", "softmax", "log_softmax", "expit", "logit", "xlogy",
    "xlog1py", "entr", "rel_entr", "kl_div", "boxcox", "boxcox1p", "i0", "i0e", "i1", "i1e",
    "bessel_jn", "ndtr", "ndtri", "log_ndtr", "gammainc", "gammaincc",
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


# Loops that run for each element until it has converged, as a vmapped while_loop does
# (the series and continued fractions of expn, hyp1f1 and hyp2f1); _MAX_STEPS only
# guarantees that they stop (converging elements need a few dozen steps).
_MAX_STEPS = 2000


def _while_each(cond, body, state):
  """Apply ``body`` to each element of the ``state`` dict while its own ``cond`` holds."""
  def active(s):
    return cond(s) & (s["step"] < _MAX_STEPS)

  def step(s):
    keep = active(s)
    new = body(dict(s))
    new["step"] = s["step"] + 1
    return tree.tree_map(lambda n, o: jnp.where(keep, n, o), new, s)

  state = dict(state, step=jnp.zeros(jnp.shape(state["x"]), np.int32))
  return cf.while_loop(lambda s: jnp.any(active(s)), step, state)


def _real_only(name, x):
  if dtypes.is_complex(x.dtype):
    raise ValueError(f"{name} does not support complex-valued inputs.")


erf = _unary("erf", lax_special.erf, "The error function")
erfc = _unary("erfc", lax_special.erfc, "The complementary error function ``1 - erf``")
erfinv = _unary("erfinv", lax_special.erf_inv, "The inverse error function")
gammaln = _unary("gammaln", lax_special.lgamma, "``log(abs(gamma(x)))``")
digamma = _unary("digamma", lax_special.digamma, "The digamma function")
i0e = _unary("i0e", lax_special.bessel_i0e, "The scaled Bessel function ``exp(-|x|) I0(x)``")
i1e = _unary("i1e", lax_special.bessel_i1e, "The scaled Bessel function ``exp(-|x|) I1(x)``")
expit = _unary("expit", lax.logistic, "The logistic sigmoid ``1 / (1 + exp(-x))``")
i0 = _unary("i0", lambda x: lax.mul(lax.exp(lax.abs(x)), lax_special.bessel_i0e(x)),
            "The modified Bessel function of order 0")
i1 = _unary("i1", lambda x: lax.mul(lax.exp(lax.abs(x)), lax_special.bessel_i1e(x)),
            "The modified Bessel function of order 1")


# -- the gamma family ------------------------------------------------------------------
def gammasgn(x):
  """The sign of the gamma function: -1 on ``(-2k-1, -2k)`` and at ``-0.0``, NaN at the
  poles (the non-positive integers, ``-inf``) and at NaN, else 1."""
  x, = promote_args_inexact("gammasgn", x)
  _real_only("gammasgn", x)
  typ = x.dtype.type
  floor_x = lax.floor(x)
  negative = x < 0
  pole = (negative & (x == floor_x)) | jnp.isnan(x)
  minus = (negative & (floor_x % 2 != 0)) | ((x == 0) & jnp.signbit(x))
  return jnp.select([pole, minus], [typ(np.nan), typ(-1.0)], typ(1.0))


def gamma(x):
  """The gamma function, ``gammasgn(x) * exp(gammaln(x))`` (``scipy.special.gamma``)."""
  x, = promote_args_inexact("gamma", x)
  _real_only("gamma", x)
  return gammasgn(x) * lax.exp(lax_special.lgamma(x))


def loggamma(x):
  """The principal branch of ``log(gamma(x))``: for real ``x`` that is ``gammaln`` where
  ``x > 0`` and NaN elsewhere."""
  x, = promote_args_inexact("loggamma", x)
  _real_only("loggamma", x)
  return jnp.where(x > 0, lax_special.lgamma(x), np.nan)


# coefficients of the series of del(b) - del(a + b), where
# lgamma(x) = (x - 1/2) log(x) - x + log(2 pi)/2 + del(x) (algdiv of scipy's cdflib)
_ALGDIV_C = (0.833333333333333e-01, -0.277777777760991e-02, 0.793650666825390e-03,
             -0.595202931351870e-03, 0.837308034031215e-03, -0.165322962780713e-02)


def _algdiv(a, b):
  """``lgamma(b) - lgamma(a + b)`` for ``a <= b`` and ``b >= 8``, without cancellation."""
  h = a / b
  x = h / (1 + h)
  x2 = x * x
  s = [1.0 + (x + x2)]  # s[k] = (1 - x**(2k+3)) / (1 - x)
  for _ in range(4):
    s.append(1.0 + (x + x2 * s[-1]))
  t = (1.0 / b) ** 2
  w = _ALGDIV_C[5] * s[4]
  for c, s_k in zip(_ALGDIV_C[4:0:-1], s[3::-1]):
    w = w * t + c * s_k
  w = (w * t + _ALGDIV_C[0]) * (x / b)
  u = (b + (a - 0.5)) * lax.log1p(a / b)
  v = a * (lax.log(b) - 1.0)
  return jnp.where(u <= v, (w - v) - u, (w - u) - v)


def betaln(a, b):
  """``log(abs(beta(a, b)))``; for ``max(a, b) >= 8`` through cdflib's ``algdiv``, which
  keeps its accuracy when the arguments are large."""
  a, b = promote_args_inexact("betaln", a, b)
  a, b = jnp.minimum(a, b), jnp.maximum(a, b)
  small_b = lax_special.lgamma(a) + (lax_special.lgamma(b) - lax_special.lgamma(a + b))
  large_b = lax_special.lgamma(a) + _algdiv(a, b)
  return jnp.where(b < 8, small_b, large_b)


def beta(a, b):
  """The beta function ``gamma(a) gamma(b) / gamma(a + b)``, with its sign."""
  a, b = promote_args_inexact("beta", a, b)
  _real_only("beta", a)
  sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
  return sign * lax.exp(betaln(a, b))


def polygamma(n, x):
  """The ``n``-th derivative of digamma; ``n`` must have an integer dtype."""
  n_dtype = dtypes.dtype(n, canonicalize=True)
  if not dtypes.is_integer(n_dtype):
    raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype "
                     f"{n_dtype}.")
  n, x = promote_args_inexact("polygamma", n, x)
  _real_only("polygamma", x)
  return lax_special.polygamma(n, x)


def gammainc(a, x):
  """The regularized lower incomplete gamma function ``P(a, x)``."""
  a, x = promote_args_inexact("gammainc", a, x)
  return lax_special.igamma(a, x)


def gammaincc(a, x):
  """The regularized upper incomplete gamma function ``Q(a, x)``."""
  a, x = promote_args_inexact("gammaincc", a, x)
  return lax_special.igammac(a, x)


def betainc(a, b, x):
  """The regularized incomplete beta function ``I_x(a, b)``."""
  a, b, x = promote_args_inexact("betainc", a, b, x)
  _real_only("betainc", x)
  return lax_special.betainc(a, b, x)


def comb(N, k, *, repetition=False):
  """The number of combinations of ``N`` things taken ``k`` at a time (0 outside
  ``0 <= k <= N``), from log-gamma, so real-valued."""
  N, k = promote_args_inexact("comb", N, k)
  if repetition:
    return jnp.where((k == 0) & (N >= 0), 1.0, comb(N + k - 1, k))
  ok = (k <= N) & (N >= 0) & (k >= 0)
  safe_n = jnp.where(ok, N, 0.0)
  safe_k = jnp.where(ok, k, 0.0)
  out = lax.exp(gammaln(safe_n + 1) - gammaln(safe_k + 1) - gammaln(safe_n + 1 - safe_k))
  return jnp.where(ok, out, 0.0)


def factorial(n, exact=False):
  """``n!`` as ``gamma(n + 1)`` (0 for negative ``n``); ``exact=True`` is not
  supported, as in JAX."""
  if exact:
    raise NotImplementedError("factorial with exact=True")
  n, = promote_args_inexact("factorial", n)
  return jnp.where(n < 0, 0, lax.exp(lax_special.lgamma(n + 1)))


def multigammaln(a, d):
  """The log of the multivariate gamma function of dimension ``d`` (a Python int)."""
  d = core.concrete_or_error(int, d, "d argument of multigammaln")
  a, d_arr = promote_args_inexact("multigammaln", a, d)
  constant = lax.mul(lax.mul(lax.mul(lax._const(a, 0.25), d_arr),
                             lax.sub(d_arr, lax._const(a, 1))), lax.log(lax._const(a, np.pi)))
  b = lax.div(jnp.arange(d, dtype=d_arr.dtype), lax._const(a, 2))
  terms = gammaln(jnp.expand_dims(a, -1) - jnp.expand_dims(b, tuple(range(a.ndim))))
  return jnp.sum(terms, axis=-1) + constant


@custom_jvp
def poch(z, m):
  """The Pochhammer symbol (rising factorial) ``gamma(z + m) / gamma(z)``; 1 at
  ``m == 0``."""
  z, m = promote_args_inexact("poch", z, m)
  _real_only("jnp.poch", z)
  return jnp.where(m == 0.0, jnp.array(1, dtype=z.dtype), gamma(z + m) / gamma(z))


poch.defjvps(
    lambda dz, out, z, m: (lax_special.digamma(z + m) - lax_special.digamma(z)) *
    poch(z, m) * dz,
    lambda dm, out, z, m: lax_special.digamma(z + m) * poch(z, m) * dm)


def zeta(x, q=None):
  """The Hurwitz zeta function ``sum((q + k) ** -x for k >= 0)``; as in JAX, ``q`` is
  required (the Riemann zeta function is not implemented)."""
  if q is None:
    raise NotImplementedError("Riemann zeta function not implemented; pass q != None to "
                              "compute the Hurwitz Zeta function.")
  x, q = promote_args_inexact("zeta", x, q)
  return lax_special.zeta(x, q)


def bernoulli(n):
  """The Bernoulli numbers ``B_0 .. B_n`` (``B_1 = -1/2``), ``n`` a concrete int.

  As JAX: exact up to ``B_2``, then ``B_m = (-1)^(m/2+1) 2 m! zeta(m) / (2 pi)^m`` with
  ``zeta(m)`` summed over its first 49 terms (relative error about ``50**-m``).
  """
  n = core.concrete_or_error(operator.index, n, "Argument n of bernoulli")
  if n < 0:
    raise ValueError("n must be a non-negative integer.")
  first = jnp.array([1, -1 / 2, 1 / 6])
  if n < 3:
    return first[:n + 1]
  out = jnp.zeros(n + 1).at[:3].set(first)
  m = jnp.arange(4, n + 1, 2, dtype=out.dtype)
  scale = 1.0 / np.pi ** 2 * jnp.cumprod(-(m - 1) * m / 4 / np.pi ** 2)
  k = jnp.arange(2, 50, dtype=out.dtype)
  zeta_minus_one = jnp.sum(k[:, None] ** (-m[None, :]), axis=0)
  return out.at[4::2].set(scale * (1 + zeta_minus_one))


# -- logit, x log y, entropies ------------------------------------------------------------
@custom_jvp
def logit(x):
  """``log(x / (1 - x))``, elementwise (``scipy.special.logit``)."""
  x, = promote_args_inexact("logit", x)
  return lax.log(lax.div(x, lax.sub(_c(x, 1), x)))


logit.defjvps(lambda g, ans, x: lax.div(g, lax.mul(x, lax.sub(_c(x, 1), x))))


def _xlog_jvp(fun, log_fn, log_arg):
  # JAX's order, dy * x / log_arg(y): the primals may be Python numbers, and 1 / 0.0 in
  # Python raises where the array division gives inf; the primal goes through `fun`, which
  # promotes and broadcasts the operands' ranks as the primal call did
  def jvp(primals, tangents):
    (x, y), (dx, dy) = primals, tangents
    out = fun(x, y)
    return out, (dx * log_fn(y) + dy * x / log_arg(y)).astype(out.dtype)
  return jvp


def _xlog(log_fn, x, y):
  # x * log_fn(y), 0 where x == 0 unless y is NaN
  return jnp.where((x != 0.0) | jnp.isnan(y), lax.mul(x, log_fn(y)), jnp.zeros_like(x))


@custom_jvp
def xlogy(x, y):
  """``x * log(y)``, 0 where ``x == 0`` (unless ``y`` is NaN)."""
  x, y = promote_args_inexact("xlogy", x, y)
  return _xlog(lax.log, x, y)


@custom_jvp
def xlog1py(x, y):
  """``x * log1p(y)``, 0 where ``x == 0`` (unless ``y`` is NaN)."""
  x, y = promote_args_inexact("xlog1py", x, y)
  return _xlog(lax.log1p, x, y)


xlogy.defjvp(_xlog_jvp(xlogy, lax.log, lambda y: y))
xlog1py.defjvp(_xlog_jvp(xlog1py, lax.log1p, lambda y: 1 + y))


@custom_jvp
def _xlogx(x):
  return xlogy(x, x)


_xlogx.defjvp(lambda primals, tangents: (_xlogx(primals[0]),
                                         tangents[0] * (lax.log(primals[0]) + 1)))


def entr(x):
  """``-x log(x)`` for ``x >= 0`` (0 at 0) and ``-inf`` below (``scipy.special.entr``)."""
  x, = promote_args_inexact("entr", x)
  _real_only("entr", x)
  return lax.select(lax.lt(x, _c(x, 0)), jnp.full_like(x, -np.inf), lax.neg(_xlogx(x)))


def rel_entr(p, q):
  """Elementwise relative entropy ``p log(p / q)`` (0 at ``p == 0 <= q``, ``inf`` where
  ``p < 0`` or ``q <= 0 < p``)."""
  p, q = promote_args_inexact("rel_entr", p, q)
  _real_only("rel_entr", p)
  zero = _c(p, 0.0)
  both_positive = lax.bitwise_and(lax.gt(p, zero), lax.gt(q, zero))
  p_zero = lax.bitwise_and(lax.eq(p, zero), lax.ge(q, zero))
  safe_p = jnp.where(both_positive, p, 1)
  safe_q = jnp.where(both_positive, q, 1)
  log_val = lax.sub(_xlogx(safe_p), xlogy(safe_p, safe_q))
  return jnp.where(both_positive, log_val, jnp.where(p_zero, zero, np.inf))


def kl_div(p, q):
  """Elementwise Kullback-Leibler term ``rel_entr(p, q) - p + q``."""
  p, q = promote_args_inexact("kl_div", p, q)
  _real_only("kl_div", p)
  return rel_entr(p, q) - p + q


def _boxcox_of_log(log_x, lmbda):
  is_zero = lmbda == 0
  safe = jnp.where(is_zero, jnp.ones_like(lmbda), lmbda)
  return jnp.where(is_zero, log_x, jnp.expm1(safe * log_x) / safe)


def boxcox(x, lmbda):
  """The Box-Cox transform ``(x**lmbda - 1) / lmbda`` (``log(x)`` at ``lmbda == 0``)."""
  x, lmbda = promote_args_inexact("boxcox", x, lmbda)
  return _boxcox_of_log(jnp.log(x), lmbda)


def boxcox1p(x, lmbda):
  """The Box-Cox transform of ``1 + x``, accurate for small ``x`` and ``lmbda``."""
  x, lmbda = promote_args_inexact("boxcox1p", x, lmbda)
  return _boxcox_of_log(jnp.log1p(x), lmbda)


def softmax(x, /, *, axis=None):
  """``exp(x) / sum(exp(x))`` over ``axis`` (all axes by default)."""
  return nn_fn.softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
  """``x - logsumexp(x)`` over ``axis`` (all axes by default)."""
  return nn_fn.log_softmax(x, axis=axis)


# -- the normal distribution ----------------------------------------------------------------
def _float32_or_64(x):
  dtype = dtypes.dtype(x, canonicalize=True)
  if dtype not in (np.float32, np.float64):
    raise TypeError(f"x.dtype={dtype} is not supported, see docstring for supported "
                    "types.")
  return dtype.type


def ndtr(x):
  """The standard normal CDF (float32 and float64 input only, as in JAX)."""
  x = jnp.asarray(x)
  _float32_or_64(x)
  return _ndtr(x)


def _ndtr(x):
  typ = x.dtype.type
  half_sqrt_2 = typ(0.5) * np.sqrt(2.0, dtype=typ)
  w = x * half_sqrt_2
  z = lax.abs(w)
  # erf near 0, erfc (without cancellation) in the tails
  y = lax.select(lax.lt(z, half_sqrt_2), typ(1.0) + lax_special.erf(w),
                 lax.select(lax.gt(w, typ(0.0)), typ(2.0) - lax_special.erfc(z),
                            lax_special.erfc(z)))
  return typ(0.5) * y


# Cephes' ndtri: rational approximations in w = p - 1/2 for p in (exp(-2), 1 - exp(-2)),
# and in 1/z, z = sqrt(-2 log p), for the tails (z < 8 and z >= 8)
_NDTRI_P0 = (-59.96335010141079, 98.00107541859997, -56.67628574690703, 13.931260938727968,
             -1.2391658386738125)
_NDTRI_Q0 = (1.0, 1.9544885833814176, 4.676279128988815, 86.36024213908905,
             -225.46268785411937, 200.26021238006066, -82.03722561683334, 15.90562251262117,
             -1.1833162112133)
_NDTRI_P1 = (4.0554489230596245, 31.525109459989388, 57.16281922464213, 44.08050738932008,
             14.684956192885803, 2.1866330685079025, -0.1402560791713545,
             -0.03504246268278482, -0.0008574567851546854)
_NDTRI_Q1 = (1.0, 15.779988325646675, 45.39076351288792, 41.3172038254672,
             15.04253856929075, 2.504649462083094, -0.14218292285478779,
             -0.03808064076915783, -0.0009332594808954574)
_NDTRI_P2 = (3.2377489177694603, 6.915228890689842, 3.9388102529247444, 1.3330346081580755,
             0.20148538954917908, 0.012371663481782003, 0.00030158155350823543,
             2.6580697468673755e-06, 6.239745391849833e-09)
_NDTRI_Q2 = (1.0, 6.02427039364742, 3.6798356385616087, 1.3770209948908132,
             0.21623699359449663, 0.013420400608854318, 0.00032801446468212774,
             2.8924786474538068e-06, 6.790194080099813e-09)


def ndtri(p):
  """The inverse of ``ndtr``, the standard normal quantile function (float32 and float64
  input only, as in JAX); ``-inf`` at 0, ``inf`` at 1, NaN outside ``[0, 1]``."""
  typ = _float32_or_64(p)
  p = as_operand(p)
  coeffs = [np.array(c, typ) for c in (_NDTRI_P0, _NDTRI_Q0, _NDTRI_P1, _NDTRI_Q1,
                                       _NDTRI_P2, _NDTRI_Q2)]
  p0, q0, p1, q1, p2, q2 = coeffs
  maybe_complement = jnp.where(p > typ(-np.expm1(-2.0)), typ(1.0) - p, p)
  mcp = jnp.where(maybe_complement == typ(0.0), typ(0.5), maybe_complement)
  w = mcp - typ(0.5)
  ww = lax.square(w)
  x_big_p = w + w * ww * (jnp.polyval(p0, ww) / jnp.polyval(q0, ww))
  x_big_p = x_big_p * -typ(np.sqrt(2.0 * np.pi))
  z = lax.sqrt(typ(-2.0) * lax.log(mcp))
  first = z - lax.log(z) / z
  x_small_p = first - jnp.polyval(p2, 1 / z) / jnp.polyval(q2, 1 / z) / z
  x_other = first - jnp.polyval(p1, 1 / z) / jnp.polyval(q1, 1 / z) / z
  x = jnp.where(mcp > typ(np.exp(-2.0)), x_big_p, jnp.where(z >= typ(8.0), x_small_p, x_other))
  x = jnp.where(p > typ(1.0 - np.exp(-2.0)), x, -x)
  return jnp.where(p == typ(0.0), typ(-np.inf), jnp.where(p == typ(1.0), typ(np.inf), x))


# where log_ndtr switches from log(ndtr) to the asymptotic series (below) and to
# -ndtr(-x) (above), per dtype
_LOG_NDTR_SEGMENTS = {np.dtype(np.float32): (np.float32(-10), np.float32(5)),
                      np.dtype(np.float64): (np.float64(-20), np.float64(8))}


def log_ndtr(x, series_order=3):
  """The log of the standard normal CDF, accurate far into both tails (float32 and
  float64 input only, as in JAX); ``series_order`` terms of the asymptotic series serve
  below -10 (float32) or -20 (float64)."""
  if not isinstance(series_order, int):
    raise TypeError("series_order must be a Python integer.")
  if series_order < 0:
    raise ValueError("series_order must be non-negative.")
  if series_order > 30:
    raise ValueError("series_order must be <= 30.")
  return _log_ndtr(x, series_order)


def _log_ndtr_impl(x, series_order):
  x = jnp.asarray(x)
  if x.dtype not in _LOG_NDTR_SEGMENTS:
    raise TypeError(f"x.dtype={x.dtype} is not supported.")
  lower, upper = _LOG_NDTR_SEGMENTS[x.dtype]
  above = lax.gt(x, upper)
  ndtr_res = _ndtr(jnp.where(above, -x, lax.max(x, lower)))
  return jnp.where(above, -ndtr_res,
                jnp.where(lax.gt(x, lower), lax.log(ndtr_res),
                       _log_ndtr_lower(lax.min(x, lower), series_order)))


_log_ndtr = custom_jvp(_log_ndtr_impl, nondiff_argnums=(1,))


def _log_ndtr_jvp(series_order, primals, tangents):
  (x,), (t,) = primals, tangents
  ans = _log_ndtr(x, series_order)
  return ans, lax.mul(t, lax.exp(lax.sub(_norm_logpdf(x), ans)))


_log_ndtr.defjvp(_log_ndtr_jvp)


def _norm_logpdf(x):
  return lax.sub(lax.mul(_c(x, -0.5), lax.square(x)), _c(x, np.log(np.sqrt(2 * np.pi))))


def _log_ndtr_lower(x, series_order):
  typ = x.dtype.type
  log_scale = -typ(0.5) * lax.square(x) - lax.log(-x) - typ(0.5 * np.log(2.0 * np.pi))
  return log_scale + lax.log(_log_ndtr_asymptotic_series(x, series_order))


def _log_ndtr_asymptotic_series(x, series_order):
  # 1 + sum_n (-1)^n (2n-1)!! / x^(2n)
  typ = x.dtype.type
  if series_order <= 0:
    return np.array(1, typ)
  x_2 = lax.square(x)
  even_sum = jnp.zeros_like(x)
  odd_sum = jnp.zeros_like(x)
  x_2n = x_2
  for n in range(1, series_order + 1):
    y = np.array(np.prod(np.arange(2 * n - 1, 1, -2)), typ) / x_2n
    if n % 2:
      odd_sum = odd_sum + y
    else:
      even_sum = even_sum + y
    x_2n = x_2n * x_2
  return typ(1.0) + even_sum - odd_sum


# -- Bessel functions of the first kind --------------------------------------------------
def bessel_jn(z, *, v, n_iter=50):
  """Bessel functions of the first kind ``J_0 .. J_v`` at ``z`` (stacked on a new
  leading axis), by Miller's backward recurrence from order ``n_iter`` started at
  ``1e-16``, normalized with ``J_0 + 2 (J_2 + J_4 + ...) = 1`` (JAX's algorithm: in
  float32 the recurrence overflows, to NaN, once ``n_iter`` is large against ``z``)."""
  z, = promote_dtypes_inexact(jnp.asarray(z))
  if dtypes.is_complex(z.dtype):
    raise ValueError("complex input not supported.")
  v = core.concrete_or_error(operator.index, v, "Argument v of bessel_jn.")
  n_iter = core.concrete_or_error(int, n_iter, "Argument n_iter of bessel_jn.")

  def step(carry, k):
    f0, f1, even_sum = carry
    f = 2.0 * (k + 1.0) * f1 / z - f0
    even_sum = jnp.where(jnp.mod(k, 2) == 0, even_sum + 2.0 * f, even_sum)
    return (f1, f, even_sum), f

  init = (jnp.zeros_like(z), jnp.full_like(z, 1e-16), jnp.zeros_like(z))
  (_, _, even_sum), j_vals = cf.scan(step, init, lax_shapes.iota(z.dtype, n_iter + 1),
                                     reverse=True)
  return j_vals[:v + 1] / (even_sum - j_vals[0])
