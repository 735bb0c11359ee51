"""XLA's complex arithmetic at special values, for tier 0.

NumPy follows C99's Annex G for complex functions; XLA's CPU backend does not everywhere.
Where they part (measured against JAX 0.10.2 on infinities, NaNs and signed zeros), the
functions here compute what XLA computes:

* a NaN in either part makes ``log``, ``log1p``, ``sqrt`` and ``abs`` NaN, where C99
  lets an infinite part win;
* ``sqrt``, ``asin``, ``acos``, ``asinh`` and ``acosh`` ignore the sign of a zero part on
  their branch cuts, taking it as +0;
* ``exp`` and ``expm1`` are ``e**x (cos y + i sin y)`` with an exact zero imaginary part
  for real arguments, so ``exp(-inf + inf j)`` is NaN rather than 0;
* division is Smith's algorithm with C99's recovery of zero and infinite results, in
  arithmetic that flushes subnormal intermediate values to zero;
* ``rsqrt`` is ``|z|**-0.5`` at angle ``-arg(z)/2``, not ``1 / sqrt(z)``;
* ``pow`` is ``|x|**c e**(-d arg x)`` at angle ``c arg x + d log|x|`` with a few exact
  cases, not ``exp(y log x)``;
* ``exp2``, ``logistic`` and ``sign`` are composed of the above as JAX lowers them.
"""
import functools

import numpy as np


def _silent(fn):
  """``fn`` with NumPy's floating-point warnings off: the special-value arithmetic here
  divides by zero parts and multiplies infinities by zero on ordinary operands (z / 2,
  z ** 2), where XLA says nothing, and a warning filter cannot keep that quiet once a
  caller's ``catch_warnings`` (``pytest.warns``) has replaced jaxlite's filters."""
  @functools.wraps(fn)
  def quiet(*args):
    with np.errstate(all="ignore"):
      return fn(*args)
  return quiet


def compose(re, im):
  """The complex array with parts ``re`` and ``im`` (``re + 1j * im`` would turn an
  infinite part into NaNs)."""
  re, im = np.broadcast_arrays(re, im)
  out = np.empty(re.shape, np.result_type(re.dtype, np.complex64))
  out.real, out.imag = re, im
  return out


def _nan_part(z):
  return np.isnan(z.real) | np.isnan(z.imag)


def _nan_where_nan_part(fn):
  def impl(z):
    return np.where(_nan_part(z), compose(np.nan, np.nan).astype(z.dtype), fn(z))
  return impl


def _unsigned_zero(fn, part):
  """``fn`` with a zero ``part`` ('real' or 'imag') of its argument taken as +0."""
  def impl(z):
    re, im = (z.real + 0, z.imag) if part == "real" else (z.real, z.imag + 0)
    return fn(compose(re, im))
  return impl


def flush_subnormal(x):
  """``x`` with subnormal values replaced by zeros of their sign: XLA's CPU code runs with
  denormals flushed, which decides some special values downstream."""
  return np.where(np.abs(x) < np.finfo(x.dtype).tiny, x * 0, x)


@_silent
def div(a, b):
  """Smith's algorithm, then C99's recovery where it gave NaN + NaN j (a zero divisor, an
  infinite numerator over a finite divisor, a finite numerator over an infinite one)."""
  a, b = np.broadcast_arrays(a, b)
  ar, ai, br, bi = a.real, a.imag, b.real, b.imag
  one, inf = np.ones((), ar.dtype), np.array(np.inf, ar.dtype)
  r1, r2 = flush_subnormal(br / bi), flush_subnormal(bi / br)
  by_imag = np.abs(br) < np.abs(bi)
  d1, d2 = bi + br * r1, br + bi * r2
  cr = np.where(by_imag, (r1 * ar + ai) / d1, (r2 * ai + ar) / d2)
  ci = np.where(by_imag, (r1 * ai - ar) / d1, (ai - r2 * ar) / d2)
  unit = lambda v: np.copysign(np.where(np.isinf(v), one, 0 * one), v)
  ur, ui, vr, vi = unit(ar), unit(ai), unit(br), unit(bi)
  a_inf, b_inf = np.isinf(ar) | np.isinf(ai), np.isinf(br) | np.isinf(bi)
  a_fin, b_fin = np.isfinite(ar) & np.isfinite(ai), np.isfinite(br) & np.isfinite(bi)
  zero_den = (br == 0) & (bi == 0) & ~(np.isnan(ar) & np.isnan(ai))
  sinf = np.copysign(inf, br)
  recoveries = [(zero_den, sinf * ar, sinf * ai),
                (a_inf & b_fin, inf * (ur * br + ui * bi), inf * (ui * br - ur * bi)),
                (b_inf & a_fin, 0 * (ar * vr + ai * vi), 0 * (ai * vr - ar * vi))]
  nan = np.isnan(cr) & np.isnan(ci)
  for pick, re, im in reversed(recoveries):
    cr, ci = np.where(nan & pick, re, cr), np.where(nan & pick, im, ci)
  return compose(cr, ci).astype(a.dtype)


def _exp_parts(x, y, scale):
  # e**x times (cos y, sin y); where e**x overflows, e**(x/2) twice keeps a finite factor
  e, half = np.exp(x), np.exp(x * x.dtype.type(0.5))
  big = e == np.inf
  times = lambda t: np.where(big, (half * t) * half, e * t)
  return scale(times(np.cos(y))), np.where(y == 0, y, times(np.sin(y)))


@_silent
def exp(z):
  re, im = _exp_parts(z.real, z.imag, lambda v: v)
  return compose(re, im).astype(z.dtype)


@_silent
def expm1(z):
  x, y = z.real, z.imag
  two, half = x.dtype.type(2), x.dtype.type(0.5)
  re = np.expm1(x) * np.cos(y) - two * np.sin(y * half) ** 2
  return compose(re, np.where(y == 0, y, np.exp(x) * np.sin(y))).astype(z.dtype)


@_silent
def exp2(z):
  # exp(ln(2) * z), the product in complex arithmetic (0 * inf parts are NaN)
  ln2 = z.real.dtype.type(np.log(2))
  x, y = z.real, z.imag
  return exp(compose(ln2 * x - 0 * y, ln2 * y + 0 * x))


@_silent
def abs_(z):
  return np.where(_nan_part(z), np.nan, np.abs(z)).astype(z.real.dtype)


@_silent
def sign(z):
  r = abs_(z)
  safe = np.where(r == 0, 1, r)
  return np.where(r == 0, 0, compose(z.real / safe, z.imag / safe)).astype(z.dtype)


log = _silent(_nan_where_nan_part(np.log))
sqrt = _silent(_nan_where_nan_part(_unsigned_zero(np.sqrt, "imag")))


@_silent
@_nan_where_nan_part
def log1p(z):
  # beyond 1e18, 1 + z is z; NumPy's log1p would overflow in |1 + z|
  big = (np.abs(z.real) > 1e18) | (np.abs(z.imag) > 1e18)
  return np.where(big, np.log(z), np.log1p(z))


@_silent
def rsqrt(z):
  """``|z|**-0.5 (cos(-t/2) + i sin(-t/2))`` with ``t = atan2(im, re)``; an infinite part
  gives a zero (signed by the parts), and 0 gives inf + NaN j."""
  a, b = z.real, z.imag
  r = 1 / np.sqrt(abs_(z))
  angle = np.arctan2(b, a) * a.dtype.type(-0.5)
  zero_zero = (a == 0) & (b == 0)
  infinite = (np.isinf(b) & np.isnan(a)) | np.isinf(a)
  zero = np.zeros_like(a)
  re = np.where(zero_zero, np.inf, np.where(infinite, np.copysign(zero, a), r * np.cos(angle)))
  im = np.where(zero_zero, np.nan, np.where(infinite, -np.copysign(zero, b), r * np.sin(angle)))
  return compose(re, im).astype(z.dtype)


@_silent
def logistic(z):
  return div(np.ones((), z.dtype), 1 + exp(-z))


# these inverse functions' branch cuts lie on an axis whose zero's sign XLA ignores
arcsin = _silent(_unsigned_zero(np.arcsin, "imag"))
arccos = _silent(_unsigned_zero(np.arccos, "imag"))
arccosh = _silent(_unsigned_zero(np.arccosh, "imag"))
arcsinh = _silent(_unsigned_zero(np.arcsinh, "real"))


def _polar_sqrt(z):
  # sqrt|z| * cis(arg(z) / 2), with C99's limits at infinities; unlike csqrt it is not
  # exact on the axes (sqrt(-1 + 0j) has a real part of -4.4e-8 in float32)
  a, b = z.real, z.imag
  r = np.sqrt(abs_(z))
  half_angle = np.arctan2(b, a) * a.dtype.type(0.5)
  cos, sin = np.cos(half_angle), np.sin(half_angle)
  inf_b = np.abs(b) == np.inf
  re = np.where(inf_b | (a == np.inf), np.inf,
                np.where((a == -np.inf) & ~inf_b, 0, r * cos))
  im = np.where(inf_b | (a == -np.inf), np.copysign(np.asarray(np.inf, a.dtype), b),
                np.where(np.isnan(r), np.nan, np.where(sin == 0, sin, r * sin)))
  return np.where(r == 0, 0, compose(re, im)).astype(z.dtype)


@_silent
def atan2(y, x):
  """XLA's complex ``atan2``: ``-i log((x + i y) / sqrt(x**2 + y**2))``, the square root
  and logarithm in polar form (``log|z| + i arg z``) as JAX's lowering computes them."""
  w = div(x + x.dtype.type(1j) * y, _polar_sqrt(x * x + y * y))
  log_w = compose(np.log(abs_(w)), np.arctan2(w.imag, w.real))
  return (x.dtype.type(-1j) * log_w).astype(x.dtype)


@_silent
def pow(x, y):
  """``|x|**c e**(-d t) (cos q + i sin q)`` for ``y = c + d i``, ``t = arg(x)`` and
  ``q = c t + d log|x|``, with XLA's exact cases: ``x**0 = 1**y = 1``, ``0**c`` for real
  ``c >= 0`` and ``inf**c`` for real ``c`` as for real numbers."""
  x, y = np.broadcast_arrays(x, y.astype(x.dtype))
  a, b, c, d = x.real, x.imag, y.real, y.imag
  r = abs_(x)
  t = flush_subnormal(np.arctan2(b, a))
  coeff = np.power(r, c) * np.exp(-d * t)
  q = c * t + d * np.log(r)
  re, im = coeff * np.cos(q), coeff * np.sin(q)
  real_base, real_power = b == 0, d == 0
  exact = [(real_base & real_power & (a == 0) & (c >= 0), np.where(c == 0, 1, 0)),
           (real_base & real_power & (a == np.inf), np.power(a, c)),
           ((x == 1) | (y == 0), 1)]
  for pick, value in exact:
    re, im = np.where(pick, value, re), np.where(pick, 0, im)
  return compose(re, im).astype(x.dtype)
