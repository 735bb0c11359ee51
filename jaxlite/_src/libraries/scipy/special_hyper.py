"""The hypergeometric functions of ``jax.scipy.special``, Kummer's ``hyp1f1`` and Gauss's
``hyp2f1``, and the spherical harmonics ``sph_harm_y``, composed from ``jaxlite.numpy`` ops
so they trace, jit, vmap and differentiate like any other function.

``hyp1f1`` is JAX's algorithm: its power series for ``|x| < 100``, the asymptotic series
beyond, each summed per element until a term falls below ``eps`` of the sum.

``hyp2f1`` follows JAX's algorithm (after Cephes' ``hyp2f1``) for ``x >= -1``:

* closed forms where they exist: 1 at ``x == 0`` or ``a == 0`` or ``b == 0``, ``inf``
  at a non-positive integer ``c`` and for ``x > 1``, ``(1 - x)**-a`` when ``b == c``,
  Gauss's formula at ``x == 1`` (``inf`` there unless ``c - a - b > 0``);
* Euler's transformation ``(1 - x)**(c - a - b) 2F1(c - a, c - b; c; x)`` when
  ``c - a - b <= -1``;
* a terminating sum when ``a`` or ``b`` is a non-positive integer; else the power series
  (at most 250 terms, stopping at the first term below ``eps`` of the sum), except for
  ``x > 0.9`` with ``c - a - b`` an integer, where the ``1 - x`` expansion with digamma
  terms (Abramowitz & Stegun 15.3.10-12) serves.

For ``x < -1``, where JAX's series diverges (it returns ``inf`` or garbage there),
jaxlite applies Pfaff's transformation ``(1 - x)**-a 2F1(a, c - b; c; x / (x - 1))``
first, which maps ``x`` into ``(1/2, 1)``: the values are the analytic continuation,
as ``scipy.special.hyp2f1`` gives. The loops run for each element until it has
converged, as JAX's vmapped ``while_loop`` does (the terminating sums at most 2000
terms). The derivatives are JAX's: series in ``a``, ``b`` and ``c``, and
``a b / c 2F1(a + 1, b + 1; c + 1; x)`` in ``x``.
"""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.libraries.numpy import namespace as jnp
from jaxlite._src.base import dtypes
from jaxlite._src.lax.custom_derivatives import custom_jvp
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import special as lax_special
from jaxlite._src.libraries.numpy.util import promote_args_inexact
from jaxlite._src.libraries.scipy.special import _real_only, _while_each, gamma

__all__ = ["hyp1f1", "hyp2f1", "sph_harm_y"]

_MAX_TERMS = 250


def _eps(x, times=1):
  return dtypes.finfo(x.dtype).eps * times


def _near_integer(v, eps):
  return jnp.abs(v - jnp.round(v)) < eps


def _series(a, b, c, x):
  """The power series of ``2F1(a, b; c; x)``."""
  eps = _eps(x)
  zero, one = jnp.zeros_like(x), jnp.ones_like(x)

  def body(s):
    k = s["k"]
    term = s["term"] * ((a + k - 1) * (b + k - 1) / (c + k - 1) / k * x)
    return dict(s, serie=s["serie"] + s["term"], term=term, k=k + 1)

  return _while_each(
      lambda s: (s["k"] < _MAX_TERMS) & (jnp.abs(s["term"]) > eps * jnp.abs(s["serie"])),
      body, dict(x=x, serie=zero, k=one, term=one))["serie"]


def _terminal(a, b, c, x):
  """The finite sum of ``2F1(a, b; c; x)`` when ``a`` (or ``b``) is a non-positive
  integer."""
  eps = _eps(x, 50)
  # terminate on b instead when it is the smaller non-positive integer (unless c is a
  # non-positive integer above b, whose pole the sum would meet first)
  c_pole_above_b = (c % 1 == 0) & (c <= 0) & (c > b)
  swap = (b < a) & _near_integer(b, eps) & ~c_pole_above_b
  a, b = jnp.abs(jnp.where(swap, b, a)), jnp.where(swap, a, b)
  one = jnp.ones_like(x)

  def body(s):
    i = s["i"]
    term = s["term"] * (-(a - i + 1) / (c + i - 1) * (b + i - 1) / i * x)
    return dict(s, term=term, serie=s["serie"] + term, i=i + 1)

  return _while_each(lambda s: s["i"] < a + 1, body,
                     dict(x=x, serie=one, term=one, i=one))["serie"]


def _digamma_transform(a, b, c, x):
  """``2F1(a, b; c; x)`` for integer ``m = c - a - b``, from the expansion in ``1 - x``
  with digamma terms (A&S 15.3.10-12)."""
  eps = _eps(x)
  digamma = lax_special.digamma
  d = c - a - b
  s = 1 - x
  rd = jnp.round(d)
  e = jnp.where(rd >= 0, d, -d)
  d1 = jnp.where(rd >= 0, d, 0.0)
  d2 = jnp.where(rd >= 0, 0.0, d)
  ard = jnp.where(rd >= 0, rd, -rd)
  log_s = jnp.log(s)
  y = (digamma(jnp.ones_like(x)) + digamma(1.0 + e) - digamma(a + d1) - digamma(b + d1)
       - log_s) / gamma(e + 1.0)
  p = (a + d1) * (b + d1) * s / gamma(e + 2.0)

  def log_body(st):
    t, p = st["t"], st["p"]
    r = (digamma(1.0 + t) + digamma(1.0 + t + e) - digamma(a + t + d1) - digamma(b + t + d1)
         - log_s)
    q = p * r
    p = p * (s * (a + t + d1) / (t + 1.0))
    p = p * ((b + t + d1) / (t + 1.0 + e))
    return dict(st, y=st["y"] + q, q=q, p=p, t=t + 1.0)

  y = _while_each(lambda st: (st["t"] < _MAX_TERMS) & (jnp.abs(st["q"]) >= eps * jnp.abs(st["y"])),
                  log_body, dict(x=x, y=y, q=y, p=p, t=jnp.ones_like(x)))["y"]

  def finite_body(st):
    t = st["t"]
    p = st["p"] * (s * (a + t + d2) * (b + t + d2) / (1.0 - e + t))
    return dict(st, p=p / (t + 1.0), t=t + 1.0, y1=st["y1"] + p / (t + 1.0), i=st["i"] + 1)

  one = jnp.ones_like(x)
  y1 = _while_each(lambda st: st["i"] < ard, finite_body,
                   dict(x=x, y1=one, p=one, t=jnp.zeros_like(x), i=one))["y1"]
  gamma_c = gamma(c)
  y1 = y1 * (gamma(e) * gamma_c / (gamma(a + d1) * gamma(b + d1)))
  y_m = y * (gamma_c / (gamma(a + d2) * gamma(b + d2)))
  y_m = jnp.where(ard % 2 != 0, -y_m, y_m)
  q = s ** rd
  summed = jnp.where(rd > 0, y_m * q + y1, y_m + y1 * q)
  return jnp.where(rd == 0, y * gamma_c / (gamma(a) * gamma(b)), summed)


def _terminal_or_series(a, b, c, x):
  eps = _eps(x, 50)
  d = c - a - b
  terminating = (((a <= 0) & _near_integer(a, eps)) | ((b <= 0) & _near_integer(b, eps)))
  which = jnp.where((x > 0.9) & ~terminating,
                    jnp.where(_near_integer(d, eps), 1, 0),
                    jnp.where(terminating, 2, 0))
  return lax.select_n(which, _series(a, b, c, x), _digamma_transform(a, b, c, x),
                      _terminal(a, b, c, x))


def _hyp2f1_from_minus_one(a, b, c, x):
  """JAX's ``hyp2f1``: valid for ``x >= -1``."""
  eps = _eps(x, 50)
  d = c - a - b
  s = 1 - x
  ca, cb = c - a, c - b
  which = jnp.where(
      (x == 0) | (((a == 0) | (b == 0)) & (c != 0)), 0,
      jnp.where((c == 0) | ((c < 0) & (c % 1 == 0)), 1,
      jnp.where((d <= -1) & ~(~_near_integer(d, eps) & (s < 0)), 2,
      jnp.where((d <= 0) & (x == 1), 1,
      jnp.where((x < 1) & (b == c), 3,
      jnp.where((x < 1) & (a == c), 4,
      jnp.where(x > 1, 1, jnp.where(x == 1, 5, 6))))))))
  return lax.select_n(which, jnp.ones_like(x), jnp.full_like(x, np.inf),
                      s ** d * _terminal_or_series(ca, cb, c, x), s ** (-a), s ** (-b),
                      gamma(c) * gamma(d) / (gamma(ca) * gamma(cb)),
                      _terminal_or_series(a, b, c, x))


def _hyp2f1(a, b, c, x):
  a, b, c, x = promote_args_inexact("hyp2f1", a, b, c, x)
  a, b, c, x = jnp.broadcast_arrays(a, b, c, x)
  far = x < -1
  # Pfaff, with a terminating parameter first so that the result stays terminating
  swap = (b <= 0) & (b == jnp.floor(b)) & ~((a <= 0) & (a == jnp.floor(a)))
  pa, pb = jnp.where(swap, b, a), jnp.where(swap, a, b)
  xf = jnp.where(far, x, -2.0)
  pfaff = (1 - xf) ** (-pa) * _hyp2f1_from_minus_one(pa, c - pb, c, xf / (xf - 1))
  return jnp.where(far, pfaff, _hyp2f1_from_minus_one(a, b, c, jnp.where(far, 0.0, x)))


def _derivative_series(a, b, c, x, weight):
  """``sum_k weight(k) (a)_k (b)_k / ((c)_k k!) x^k``: the derivative of the series in
  one parameter, with ``weight(k)`` its digamma difference."""
  eps = _eps(x)

  def body(s):
    k = s["k"]
    term = s["term"] * ((a + k) * (b + k) / (c + k) / (k + 1) * x)
    return dict(s, serie=s["serie"] + s["term"] * weight(k), term=term, k=k + 1)

  return _while_each(
      lambda s: (s["k"] < _MAX_TERMS) & (jnp.abs(s["term"]) / jnp.abs(s["serie"]) > eps),
      body, dict(x=x, serie=jnp.zeros_like(x), k=jnp.ones_like(x), term=a * b / c * x))["serie"]


hyp2f1 = custom_jvp(_hyp2f1)
hyp2f1.__doc__ = """Gauss's hypergeometric function ``2F1(a, b; c; x)`` for real arguments
(JAX's algorithm for ``x >= -1``, Pfaff's transformation below; see the module)."""


def _hyp2f1_jvp(primals, tangents):
  a, b, c, x = jnp.broadcast_arrays(*promote_args_inexact("hyp2f1", *primals))
  out = hyp2f1(a, b, c, x)
  digamma = lax_special.digamma
  terms = [
      _derivative_series(a, b, c, x, lambda k: digamma(a + k) - digamma(a)),
      _derivative_series(a, b, c, x, lambda k: digamma(b + k) - digamma(b)),
      _derivative_series(a, b, c, x, lambda k: digamma(c) - digamma(c + k)),
      a * b / c * hyp2f1(a + 1, b + 1, c + 1, x)]
  return out, sum(t * jnp.asarray(dt, out.dtype) for t, dt in zip(terms, tangents))


hyp2f1.defjvp(_hyp2f1_jvp)


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
  """Spherical harmonics ``Y_n^m(theta, phi)`` (scipy >= 1.15 convention: ``theta``
  polar angle, ``phi`` azimuth, Condon-Shortley phase), complex-valued.

  ``n_max`` bounds the degree (``n`` is clipped to it); it is required when ``n`` is
  traced.  ``diff_n`` (derivatives) is not supported, as in JAX; ``diff_n=0`` is
  accepted as "no derivative"."""
  if diff_n is not None and diff_n != 0:
    raise NotImplementedError(
        "The 'diff_n' argument to sph_harm_y is not supported.")
  theta, phi = promote_args_inexact("sph_harm_y", theta, phi)
  # JAX returns complex128 whenever x64 is on, whatever the angles' dtype: compute at that
  # precision too, so the extra digits are real ones
  theta, phi = (v.astype(dtypes.default_float_dtype()) for v in (theta, phi))
  if n_max is None:
    try:
      n_max = int(np.max(np.asarray(n)))
    except Exception as e:  # traced n
      raise ValueError("sph_harm_y: pass a static n_max when n is traced") from e
  n_max = int(n_max)
  n = jnp.asarray(n)
  m = jnp.asarray(m)
  n, m, theta, phi = jnp.broadcast_arrays(n, m, theta, phi)
  n = jnp.minimum(n, n_max).astype(theta.dtype)
  m = m.astype(theta.dtype)
  mm = jnp.abs(m)
  ct, st = jnp.cos(theta), jnp.sin(theta)

  # sectoral term: ybar_mm^mm = (-1)^mm sqrt((2mm+1)!! / (4 pi (2mm)!!)) sin^mm
  pmm = jnp.full_like(theta, 1 / math.sqrt(4 * math.pi))
  for j in range(1, n_max + 1):
    fac = -math.sqrt((2 * j + 1) / (2 * j)) * st
    pmm = jnp.where(j <= mm, pmm * fac, pmm)

  out = jnp.where(n == mm, pmm, 0.0)
  p0, p1 = jnp.zeros_like(pmm), pmm
  for big_l in range(1, n_max + 1):
    ell = float(big_l)
    den = jnp.where(ell > mm, ell * ell - mm * mm, 1.0)
    a_l = jnp.sqrt((4 * ell * ell - 1) / den)
    den1 = jnp.where(ell - 1 > mm, (ell - 1) ** 2 - mm * mm, 1.0)
    num1 = jnp.where(ell - 1 > mm, 4 * (ell - 1) ** 2 - 1, 1.0)
    a_l1 = jnp.sqrt(num1 / den1)
    first = jnp.sqrt(2 * mm + 3) * ct * pmm
    new = jnp.where(ell == mm + 1, first, a_l * (ct * p1 - p0 / a_l1))
    upd = ell > mm
    p0, p1 = jnp.where(upd, p1, p0), jnp.where(upd, new, p1)
    out = jnp.where(upd & (n == ell), p1, out)

  out = jnp.where((m < 0) & (jnp.mod(mm, 2) == 1), -out, out)
  cdtype = dtypes.default_complex_dtype()
  return out.astype(cdtype) * jnp.exp(1j * (m * phi).astype(cdtype))


# -- Kummer's confluent hypergeometric function ------------------------------------------
def _hyp1f1_series(a, b, x, weight=None):
  """``sum_k (a)_k / ((b)_k k!) x^k`` (times ``weight(k)`` per term when given: the
  derivative in a parameter), until a term falls below ``eps`` of the sum or 250 terms."""
  eps = dtypes.finfo(x.dtype).eps

  def body(s):
    k = s["k"]
    gained = s["term"] if weight is None else s["term"] * weight(k)
    term = s["term"] * ((a + k) / (b + k) * x / (k + 1))
    return dict(s, serie=s["serie"] + gained, term=term, k=k + 1)

  start = jnp.ones_like(x) if weight is None else jnp.zeros_like(x)
  return _while_each(
      lambda s: (s["k"] < 250) & (jnp.abs(s["term"]) / jnp.abs(s["serie"]) > eps), body,
      dict(x=x, serie=start, k=jnp.ones_like(x), term=a / b * x))["serie"]


def _hyp1f1_asymptotic(a, b, x):
  # for |x| >= 100: gamma(b) / gamma(a) e^x x^(a - b) sum_k (b - a)_k (1 - a)_k / (k! x^k)
  eps = dtypes.finfo(x.dtype).eps

  def body(s):
    k = s["k"]
    term = s["term"] * ((b - a + k) * (1 - a + k) / (k + 1) / x)
    return dict(s, serie=s["serie"] + s["term"], term=term, k=k + 1)

  serie = _while_each(
      lambda s: (s["k"] < 250) & (jnp.abs(s["term"]) / jnp.abs(s["serie"]) > eps), body,
      dict(x=x, serie=jnp.ones_like(x), k=jnp.ones_like(x), term=(b - a) * (1 - a) / x))["serie"]
  return gamma(b) / gamma(a) * jnp.exp(x) * x ** (a - b) * serie


def _hyp1f1(a, b, x):
  a, b, x = jnp.broadcast_arrays(*promote_args_inexact("hyp1f1", a, b, x))
  _real_only("hyp1f1", x)
  near = jnp.abs(x) < 100
  result = jnp.where(near, _hyp1f1_series(a, b, jnp.where(near, x, 0.0)),
                     _hyp1f1_asymptotic(a, b, jnp.where(near, 100.0, x)))
  which = ((a == 0) * 1 + ((a == b) & (a != 0)) * 2 + ((b == 0) & (a != 0)) * 3)
  return lax.select_n(which.astype(np.int32), result, jnp.ones_like(x), jnp.exp(x),
                      jnp.full_like(x, np.inf))


hyp1f1 = custom_jvp(_hyp1f1)
hyp1f1.__doc__ = """Kummer's confluent hypergeometric function ``1F1(a; b; x)`` (JAX's
algorithm): its power series for ``|x| < 100``, the asymptotic series beyond; 1 at
``a == 0``, ``exp(x)`` at ``a == b``, ``inf`` at ``b == 0``."""


def _hyp1f1_jvp(primals, tangents):
  a, b, x = jnp.broadcast_arrays(*promote_args_inexact("hyp1f1", *primals))
  out = hyp1f1(a, b, x)
  digamma = lax_special.digamma
  terms = [_hyp1f1_series(a, b, x, lambda k: digamma(a + k) - digamma(a)),
           _hyp1f1_series(a, b, x, lambda k: digamma(b) - digamma(b + k)),
           a / b * hyp1f1(a + 1, b + 1, x)]
  return out, sum(t * jnp.asarray(dt, out.dtype) for t, dt in zip(terms, tangents))


hyp1f1.defjvp(_hyp1f1_jvp)
