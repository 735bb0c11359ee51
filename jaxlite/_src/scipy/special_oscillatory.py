"""Oscillatory integrals of ``jax.scipy.special``: the sine/cosine integrals ``sici``,
the Fresnel integrals ``fresnel`` and the Faddeeva function ``wofz``.

Each is a power series near the origin and a continued fraction (evaluated bottom-up
with a fixed number of terms) away from it, chosen with ``jnp.where``; the argument of
the branch not taken is clamped to a harmless value so that no ``nan`` or ``inf``
reaches values or gradients. Everything is built from ``jaxlite.numpy`` ops, so the
functions trace, jit, vmap and differentiate like any other.
"""
from __future__ import annotations

import math

import jaxlite.numpy as jnp
from jaxlite._src.numpy.util import promote_args_inexact

__all__ = ["sici", "fresnel", "wofz"]

_EULER = 0.5772156649015329
_SQRT_PI = math.sqrt(math.pi)


def _cdiv(ar, ai, br, bi):
  """``(ar + i ai) / (br + i bi)`` on real pairs, scaled against overflow."""
  big = jnp.abs(br) >= jnp.abs(bi)
  safe_br = jnp.where(big, br, 1.0)
  safe_bi = jnp.where(big, 1.0, bi)
  r1 = bi / safe_br
  d1 = br + bi * r1
  r2 = br / safe_bi
  d2 = bi + br * r2
  qr = jnp.where(big, (ar + ai * r1) / d1, (ar * r2 + ai) / d2)
  qi = jnp.where(big, (ai - ar * r1) / d1, (ai * r2 - ar) / d2)
  return qr, qi


# ---------------------------------------------------------------------------- sici

_SICI_SWITCH = 4.0
_SICI_SERIES_TERMS = 24
_SICI_CF_TERMS = 64


def sici(x):
  """Sine and cosine integrals ``(Si(x), Ci(x))``.

  ``Si`` is odd; for negative ``x`` ``Ci`` returns ``Ci(|x|)``, the real part of the
  analytic continuation, as ``scipy.special.sici`` does for real input. Power series
  for ``|x| <= 4``, else the continued fraction of ``E1(i|x|)``.
  """
  (x,) = promote_args_inexact("sici", x)
  ax = jnp.abs(x)
  small = ax <= _SICI_SWITCH
  # Series: Si = sum (-1)^k x^(2k+1)/((2k+1)(2k+1)!),
  #         Ci = gamma + log x + sum_{k>=1} (-1)^k x^(2k)/(2k (2k)!).
  xs = jnp.where(small, x, 1.0)  # signed: the series is odd/even by itself
  x2 = xs * xs
  si_s = jnp.zeros_like(xs)
  ci_s = jnp.zeros_like(xs)
  for k in range(_SICI_SERIES_TERMS, -1, -1):
    si_s = si_s * x2 + (-1) ** k / ((2 * k + 1) * math.factorial(2 * k + 1))
    if k >= 1:
      ci_s = ci_s * x2 + (-1) ** k / (2 * k * math.factorial(2 * k))
  si_s = si_s * xs
  ci_s = ci_s * x2 + _EULER + jnp.log(jnp.abs(xs))
  # Continued fraction: E1(z) = e^{-z} / (z + 1 - 1/(z + 3 - 4/(z + 5 - ...))), z = i x;
  # E1(ix) = -Ci(x) + i (Si(x) - pi/2).
  finite = ax != jnp.inf  # nan propagates through the continued fraction
  xl = jnp.where(small | ~finite, 2 * _SICI_SWITCH, ax)
  hr = jnp.full_like(xl, 2 * _SICI_CF_TERMS + 1.0)
  hi = xl
  for n in range(_SICI_CF_TERMS, 0, -1):
    qr, qi = _cdiv(jnp.full_like(xl, float(n * n)), jnp.zeros_like(xl), hr, hi)
    hr = (2 * n - 1) - qr
    hi = xl - qi
  c, s = jnp.cos(xl), jnp.sin(xl)
  er, ei = _cdiv(c, -s, hr, hi)
  si_l = 0.5 * math.pi + ei
  ci_l = -er
  si_l = jnp.where(finite, si_l, 0.5 * math.pi)
  ci_l = jnp.where(finite, ci_l, 0.0)
  si = jnp.where(small, si_s, jnp.where(x < 0, -si_l, si_l))
  ci = jnp.where(small, ci_s, ci_l)
  ci = jnp.where(ax == 0, -jnp.inf, ci)
  ci = jnp.where(x == -jnp.inf, jnp.nan, ci)
  return si, ci


# ------------------------------------------------------------------------- fresnel

_FRESNEL_SWITCH = 1.5
_FRESNEL_SERIES_TERMS = 20
_FRESNEL_CF_TERMS = 80


def _half_pi_square(x):
  """``pi x^2 / 2`` reduced modulo ``2 pi``: ``x^2`` is split exactly into ``p + e``
  (Veltkamp/Dekker) and ``p`` reduced modulo 4, so large ``x`` keep their phase."""
  split = 134217729.0 if x.dtype == jnp.float64 else 4097.0
  cx = split * x
  hi = cx - (cx - x)
  lo = x - hi
  p = x * x
  e = ((hi * hi - p) + 2 * hi * lo) + lo * lo
  r = p - 4 * jnp.round(p / 4)
  return 0.5 * math.pi * (r + e)


def fresnel(x):
  """Fresnel integrals ``(S(x), C(x))`` with the ``pi t^2 / 2`` convention (scipy's
  order, ``S`` first); both odd.

  Power series for ``|x| <= 1.5``, else the continued fraction of ``erfc`` at
  ``(1 - i) sqrt(pi) x / 2``.
  """
  (x,) = promote_args_inexact("fresnel", x)
  ax = jnp.abs(x)
  small = ax <= _FRESNEL_SWITCH
  xs = jnp.where(small, x, 1.0)  # signed: the series are odd by themselves
  t = 0.5 * math.pi * xs * xs
  t2 = t * t
  s_s = jnp.zeros_like(xs)
  c_s = jnp.zeros_like(xs)
  for k in range(_FRESNEL_SERIES_TERMS, -1, -1):
    s_s = s_s * t2 + (-1) ** k / (math.factorial(2 * k + 1) * (4 * k + 3))
    c_s = c_s * t2 + (-1) ** k / (math.factorial(2 * k) * (4 * k + 1))
  s_s = s_s * t * xs
  c_s = c_s * xs
  # Continued fraction (Numerical Recipes' frenel): h = 1/(b0 + a1/(b1 + a2/(b2 + ...)))
  # with b_k = 1 - i pi x^2 + 4k, a_k = -(2k-1)(2k); then
  # C + iS = (1+i)/2 (1 - e^{i pi x^2/2} (x - i x) h).
  finite = ax != jnp.inf  # nan propagates through the continued fraction
  xl = jnp.where(small | ~finite, 2 * _FRESNEL_SWITCH, ax)
  pix2 = math.pi * xl * xl
  hr = jnp.full_like(xl, 1.0 + 4 * _FRESNEL_CF_TERMS)
  hi = -pix2
  for k in range(_FRESNEL_CF_TERMS, 0, -1):
    a = -float((2 * k - 1) * (2 * k))
    qr, qi = _cdiv(jnp.full_like(xl, a), jnp.zeros_like(xl), hr, hi)
    hr = (1.0 + 4 * (k - 1)) + qr
    hi = -pix2 + qi
  hr, hi = _cdiv(jnp.ones_like(xl), jnp.zeros_like(xl), hr, hi)
  # (x - i x) h
  ur = xl * (hr + hi)
  ui = xl * (hi - hr)
  ang = _half_pi_square(xl)
  er, ei = jnp.cos(ang), jnp.sin(ang)
  vr = 1.0 - (er * ur - ei * ui)
  vi = -(er * ui + ei * ur)
  c_l = 0.5 * (vr - vi)
  s_l = 0.5 * (vr + vi)
  s_l = jnp.where(finite, s_l, 0.5)
  c_l = jnp.where(finite, c_l, 0.5)
  s = jnp.where(small, s_s, jnp.where(x < 0, -s_l, s_l))
  c = jnp.where(small, c_s, jnp.where(x < 0, -c_l, c_l))
  return s, c


# ---------------------------------------------------------------------------- wofz

def _weideman_coefficients(n):
  """Coefficients (highest power first) of Weideman's (1994) rational approximation
  of ``w(z)`` with ``n`` terms, from the FFT of ``exp(-t^2) (L^2 + t^2)``."""
  import numpy as np
  m = 2 * n
  big_l = math.sqrt(n / math.sqrt(2))
  k = np.arange(-m + 1, m)
  theta = k * math.pi / m
  t = big_l * np.tan(theta / 2)
  f = np.exp(-t * t) * (big_l * big_l + t * t)
  f = np.concatenate([[0.0], f])
  a = np.real(np.fft.fft(np.fft.fftshift(f))) / (2 * m)
  return big_l, [float(v) for v in a[1:n + 1][::-1]]


_WEIDEMAN_N = 40
_WEIDEMAN_L, _WEIDEMAN_A = _weideman_coefficients(_WEIDEMAN_N)
_WOFZ_SWITCH = 8.0
_WOFZ_CF_TERMS = 40


def wofz(z):
  """The Faddeeva function ``w(z) = exp(-z^2) erfc(-i z)``; real input is promoted to
  complex.

  In the upper half-plane: Weideman's rational approximation (N = 40) for
  ``|z| < 8`` and Laplace's continued fraction beyond; the lower half-plane follows
  from ``w(z) = 2 exp(-z^2) - w(-z)`` (which overflows far below the real axis, as in
  scipy).
  """
  (z,) = promote_args_inexact("wofz", z)
  if not jnp.iscomplexobj(z):
    z = z.astype(jnp.complex64 if z.dtype == jnp.float32 else jnp.complex128)
  lower = jnp.imag(z) < 0
  u = jnp.where(lower, -z, z)
  near = jnp.abs(u) < _WOFZ_SWITCH
  # Weideman: w = 2 p(Z) / (L - iu)^2 + 1 / (sqrt(pi) (L - iu)), Z = (L + iu)/(L - iu).
  un = jnp.where(near, u, 0.0)
  den = _WEIDEMAN_L - 1j * un
  zz = (_WEIDEMAN_L + 1j * un) / den
  p = jnp.zeros_like(zz)
  for a in _WEIDEMAN_A:
    p = p * zz + a
  w_near = 2 * p / (den * den) + (1 / _SQRT_PI) / den
  # Laplace: w = (i/sqrt(pi)) / (u - (1/2)/(u - 1/(u - (3/2)/(u - ...)))).
  uf = jnp.where(near, 2 * _WOFZ_SWITCH + 0j, u)
  h = uf
  for k in range(_WOFZ_CF_TERMS, 0, -1):
    h = uf - (0.5 * k) / h
  w_far = (1j / _SQRT_PI) / h
  w = jnp.where(near, w_near, w_far)
  zl = jnp.where(lower, z, 0.0)  # keep the unused reflection finite
  return jnp.where(lower, 2 * jnp.exp(-zl * zl) - w, w)
