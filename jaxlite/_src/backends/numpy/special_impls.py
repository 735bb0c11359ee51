"""NumPy implementations of the special-function primitives (erf, lgamma, digamma,
polygamma, zeta, the incomplete gammas, Bessel functions).

They come from ``scipy.special`` (a dependency of this backend): NumPy has no erf, lgamma
or incomplete gamma. Half-precision inputs are computed in float32 and rounded back, as
XLA does.
"""
import functools

import numpy as np

from jaxlite._src.backends.numpy import codegen
from jaxlite._src.backends.numpy.impls import impl_rules
from jaxlite._src.core import core
from jaxlite._src.lax import special
from jaxlite._src.transforms import staging


def _scipy_special(name):
  """``scipy.special.<name>``, imported on the first call: SciPy would otherwise be a
  third of ``import jaxlite``, for primitives most programs never run."""
  def call(*args):
    import scipy.special
    return getattr(scipy.special, name)(*args)
  call.__name__ = name
  return call


_sp_digamma, _sp_gammaln, _sp_gammainc = map(_scipy_special, ("digamma", "gammaln", "gammainc"))

def _in_float32(f):
  """Run ``f`` at float32 or wider and return the input's dtype."""
  def impl(*args):
    dtype = args[0].dtype
    wide = [np.asarray(a, np.float32) if a.dtype.itemsize < 4 else a for a in args]
    with np.errstate(all="ignore"):
      return np.asarray(f(*wide)).astype(dtype, copy=False)
  return impl


def _composed(fn):
  """The implementation of a primitive that ``fn`` composes of other primitives (the
  algorithm XLA runs too): ``fn`` traced once per operand types, run by tier 0."""
  @functools.lru_cache(maxsize=64)
  def compiled(types):
    avals = [core.ShapedArray(shape, dtype) for shape, dtype in types]
    return codegen.compiled(staging.trace_to_jaxpr(lambda *xs: [fn(*xs)], avals))

  def impl(*args):
    return compiled(tuple((np.shape(a), np.asarray(a).dtype) for a in args))(*args)[0]
  return impl


def _digamma(x):
  # XLA gives NaN at the poles (0, -1, ...); scipy gives -inf at 0
  return np.where((x <= 0) & (x == np.floor(x)), np.nan, _sp_digamma(x))


# B_{2j} / (2j)! reciprocals for the Euler-Maclaurin tail of the Hurwitz zeta function
_ZETA_COEFFS = [-7.1661652561756670113e18, 1.8152105401943546773e17,
                -4.5979787224074726105e15, 1.1646782814350067249e14,
                -2.950130727918164224e12, 7.47242496e10, -1.8924375803183791606e9,
                47900160.0, -1209600.0, 30240.0, -720.0, 12.0]


def _zeta(x, q):
  """XLA's Hurwitz zeta (CHLO's): ten terms of the series, then a 12-term Euler-Maclaurin
  tail by Horner's rule; then its rules at the edges, in this order: NaN for ``x < 1``,
  NaN for ``q <= 0`` with ``x`` not an integer, at the poles ``q = 0, -1, ...`` ``inf`` for
  even integer ``x`` and NaN otherwise, and ``inf`` at ``x == 1``."""
  c = lambda v: np.asarray(v, x.dtype)
  a, total = q, np.power(q, -x)
  for _ in range(9):
    a = a + c(1)
    total = total + np.power(a, -x)
  a = a + c(1)
  term = np.power(a, -x)
  s = total + term * a / (x - c(1))
  inv_a2 = c(1) / (a * a)
  horner = c(0)
  for i in range(11):
    factor = (x + c(22 - 2 * i)) * (x + c(21 - 2 * i))
    horner = factor * (inv_a2 * (horner + c(1 / _ZETA_COEFFS[i])))
  # (CHLO would keep the bare series where the tail is below |series| times the lowest
  # float, which never happens: the tail is always added, NaNs of 0 * inf included)
  out = s + term * (c(0.5) + x / a * (c(1 / _ZETA_COEFFS[11]) + horner))
  x_int = x == np.floor(x)
  q_nonpositive = q <= 0
  out = np.where(x < 1, np.nan, out)
  out = np.where(q_nonpositive & ~x_int, np.nan, out)
  pole = q_nonpositive & (q == np.floor(q))
  out = np.where(pole, np.where(x_int & (np.fmod(x, c(2)) == 0), np.inf, np.nan), out)
  return np.where(x == 1, np.inf, out)


def _polygamma(m, x):
  """XLA's polygamma (CHLO's): ``(-1)**(m+1) m! zeta(m + 1, x)``, digamma for ``m = 0``,
  NaN unless ``m`` is a natural number."""
  c = lambda v: np.asarray(v, x.dtype)
  sign = c(2) * np.fmod(m, c(2)) - c(1)
  out = sign * np.exp(_sp_gammaln(m + c(1))).astype(x.dtype) * _zeta(m + c(1), x)
  out = np.where(m == 0, _digamma(x), out)
  return np.where((m != np.floor(m)) | (m < 0), np.nan, out)


def _lgamma(x):
  # as XLA: lgamma(-inf) is inf (SciPy gives -inf)
  return np.where(np.isneginf(x), np.inf, _sp_gammaln(x))


def _igamma_grad_a(a, x):
  # d/da P(a, x) by a fourth-order central difference in float64; the step scales
  # with a so that relative accuracy holds across magnitudes.
  a64, x64 = a.astype(np.float64), x.astype(np.float64)
  h = 1e-4 * np.maximum(1.0, np.abs(a64))
  f = lambda d: _sp_gammainc(a64 + d, x64)
  return (8 * (f(h) - f(-h)) - (f(2 * h) - f(-2 * h))) / (12 * h)


impl_rules.update({
    special.erf_p: _in_float32(_scipy_special("erf")),
    special.erfc_p: _in_float32(_scipy_special("erfc")),
    special.erf_inv_p: _in_float32(_scipy_special("erfinv")),
    special.lgamma_p: _in_float32(_lgamma),
    special.digamma_p: _in_float32(_digamma),
    special.polygamma_p: _in_float32(_polygamma),
    special.zeta_p: _in_float32(_zeta),
    special.igamma_p: _composed(special.igamma_value),
    special.igammac_p: _composed(special.igammac_value),
    special.igamma_grad_a_p: _in_float32(_igamma_grad_a),
    special.bessel_i0e_p: _in_float32(_scipy_special("i0e")),
    special.bessel_i1e_p: _in_float32(_scipy_special("i1e")),
})
