"""Special-function primitives: error functions, log-gamma, digamma, incomplete gamma,
scaled Bessel functions. All take and return one floating dtype, elementwise.

Derivatives are written in terms of these primitives and the elementwise ones, so they
trace and nest like any other rule.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src import core
from jaxlite._src import dtypes
from jaxlite._src.core import Primitive
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.lax.elementwise import _const, _float, naryop_abstract_eval
from jaxlite._src.transforms import ad


def naryop(name, accepted, result_dtype=None) -> Primitive:
  # Not entered in elementwise.elementwise_primitives: that table is the fixed set of
  # elementwise.py's own primitives, which other modules enumerate by arity.
  prim = Primitive(name)
  prim.def_abstract_eval(naryop_abstract_eval(name, accepted, result_dtype))
  return prim


erf_p = naryop("erf", _float)
erfc_p = naryop("erfc", _float)
erf_inv_p = naryop("erf_inv", _float)
lgamma_p = naryop("lgamma", _float)
digamma_p = naryop("digamma", _float)
polygamma_p = naryop("polygamma", _float)
igamma_p = naryop("igamma", _float)
igammac_p = naryop("igammac", _float)
igamma_grad_a_p = naryop("igamma_grad_a", _float)
bessel_i0e_p = naryop("bessel_i0e", _float)
bessel_i1e_p = naryop("bessel_i1e", _float)


def erf(x):
  """The error function ``2/sqrt(pi) * integral(exp(-t**2), 0, x)``, elementwise."""
  return erf_p.bind(x)


def erfc(x):
  """The complementary error function ``1 - erf(x)``, accurate for large ``x``."""
  return erfc_p.bind(x)


def erf_inv(x):
  """The inverse of ``erf`` on ``(-1, 1)``; ``+-inf`` at ``+-1``, NaN outside."""
  return erf_inv_p.bind(x)


def lgamma(x):
  """``log(abs(gamma(x)))``, elementwise."""
  return lgamma_p.bind(x)


def digamma(x):
  """The digamma function ``d/dx lgamma(x)``; NaN at the non-positive integers."""
  return digamma_p.bind(x)


def polygamma(m, x):
  """The ``m``-th derivative of ``digamma`` (``m`` a non-negative integer-valued float)."""
  return polygamma_p.bind(m, x)


def igamma(a, x):
  """The regularized lower incomplete gamma function ``P(a, x)``."""
  return igamma_p.bind(a, x)


def igammac(a, x):
  """The regularized upper incomplete gamma function ``Q(a, x) = 1 - P(a, x)``."""
  return igammac_p.bind(a, x)


def igamma_grad_a(a, x):
  """``d/da igamma(a, x)``."""
  return igamma_grad_a_p.bind(a, x)


def bessel_i0e(x):
  """The exponentially scaled modified Bessel function of order 0, ``exp(-|x|) I0(x)``."""
  return bessel_i0e_p.bind(x)


def bessel_i1e(x):
  """The exponentially scaled modified Bessel function of order 1, ``exp(-|x|) I1(x)``."""
  return bessel_i1e_p.bind(x)


# -- derivatives
_two_over_sqrt_pi = 2 / np.sqrt(np.pi)


def _erf_slope(x):
  return mul_c(ew.exp(ew.neg(ew.square(x))), x, _two_over_sqrt_pi)


def mul_c(y, x, c):
  return ew.mul(y, _const(x, c))


def _igamma_dx(a, x):
  # x**(a-1) exp(-x) / gamma(a), in logs so that it neither overflows nor underflows
  log_density = ew.sub(ew.sub(ew.mul(ew.sub(a, _const(a, 1)), ew.log(x)), x), lgamma(a))
  return ew.exp(log_density)


def _i1e_slope(g, ans, x):
  # i1e'(x) = i0e(x) - i1e(x) (sign(x) + 1/x), taken as its limit 1/2 where |x| is not
  # above eps (NaN included), as JAX does
  eps = float(dtypes.finfo(core.get_aval(x).dtype).eps)
  not_tiny = ew.gt(ew.abs(x), _const(x, eps))
  safe_x = ew.select(not_tiny, x, ew.broadcast_like(_const(x, eps), x))
  slope = ew.sub(bessel_i0e(safe_x), ew.mul(ans, ew.add(ew.sign(safe_x),
                                                         ew.integer_pow(safe_x, -1))))
  return ew.mul(g, ew.select(not_tiny, slope, ew.broadcast_like(_const(x, 0.5), x)))


def _polygamma_dm(g, m, x):
  raise ValueError("polygamma is not differentiable with respect to its order `m`.")


ad.defjvp(erf_p, lambda g, x: ew.mul(g, _erf_slope(x)))
ad.defjvp(erfc_p, lambda g, x: ew.neg(ew.mul(g, _erf_slope(x))))
ad.defjvp2(erf_inv_p, lambda g, ans, x: ew.mul(g, mul_c(ew.exp(ew.square(ans)), x,
                                                        np.sqrt(np.pi) / 2)))
ad.defjvp(lgamma_p, lambda g, x: ew.mul(g, digamma(x)))
ad.defjvp(digamma_p, lambda g, x: ew.mul(g, polygamma(ew.broadcast_like(_const(x, 1), x),
                                                      x)))
ad.defjvp(polygamma_p, _polygamma_dm,
          lambda g, m, x: ew.mul(g, polygamma(ew.add(m, _const(m, 1)), x)))
ad.defjvp(igamma_p, lambda g, a, x: ew.mul(g, igamma_grad_a(a, x)),
          lambda g, a, x: ew.mul(g, _igamma_dx(a, x)))
ad.defjvp(igammac_p, lambda g, a, x: ew.neg(ew.mul(g, igamma_grad_a(a, x))),
          lambda g, a, x: ew.neg(ew.mul(g, _igamma_dx(a, x))))
ad.defjvp2(bessel_i0e_p, lambda g, ans, x: ew.mul(
    g, ew.sub(bessel_i1e(x), ew.mul(ew.sign(x), ans))))
ad.defjvp2(bessel_i1e_p, _i1e_slope)
# igamma_grad_a is evaluated numerically by the backends; JAX gives it no derivative, so
# second derivatives of igamma in `a` raise, as there
ad.defunsupported(igamma_grad_a_p, "(the derivative of igamma in `a` is not itself "
                                   "differentiable)")

# Batching: naryop registered nothing for primitives created after elementwise.py ran.
from jaxlite._src.transforms import batching  # noqa: E402

for _p in (erf_p, erfc_p, erf_inv_p, lgamma_p, digamma_p, bessel_i0e_p, bessel_i1e_p):
  batching.defvectorized(_p)
for _p in (polygamma_p, igamma_p, igammac_p, igamma_grad_a_p):
  batching.defbroadcasting(_p)
