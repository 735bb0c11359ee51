"""Oscillatory integrals of ``jax.scipy.special``: the sine/cosine integrals ``sici``,
the Fresnel integrals ``fresnel`` and the Faddeeva function ``wofz``.

All three follow JAX's algorithms: Cephes' rational approximations for ``sici`` and
``fresnel`` (float32 inputs get ``fresnlf``'s single-precision polynomials, and beyond
36974 the limit 1/2, as in JAX), Weideman's rational approximation with 32 terms for
``wofz``. Everything is built from ``jaxlite.numpy`` ops, so the functions trace, jit,
vmap and differentiate like any other, with JAX's custom derivatives.
"""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.libraries.numpy import namespace as jnp
from jaxlite._src.base import dtypes
from jaxlite._src.lax.custom_derivatives import custom_jvp
from jaxlite._src.lax import bits as lax_bits
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.libraries.numpy.util import promote_args_inexact

__all__ = ["sici", "fresnel", "wofz"]


def _poly(coeffs, x):
  return jnp.polyval(np.array(coeffs, dtype=x.dtype), x)


# ---------------------------------------------------------------------------- sici
# Cephes' sici: rational functions of x^2 up to 4, auxiliary functions f and g of 1/x^2
# (two fits, split at 8) up to 1e9, and the first terms of their expansions beyond
_SICI_SN = (-8.391678279103039e-11, 4.625917144270128e-08, -9.757593038436328e-06,
            0.0009769454381704354, -0.04134703162294066, 1.0)
_SICI_SD = (2.0326926619595193e-12, 1.279978911799433e-09, 4.418278428012189e-07,
            9.964121220438756e-05, 0.01420852393261499, 1.0)
_SICI_CN = (2.0252400238910228e-11, -1.3524950491579076e-08, 3.593250514199931e-06,
            -0.0004740072068734079, 0.028915965260755523, -1.0)
_SICI_CD = (4.077460400618806e-12, 3.067809975818878e-09, 1.2321035568588342e-06,
            0.00031744202477503275, 0.051002805623644606, 4.0)
_SICI_F4 = ((4.236128628922166, 5.4593771716181285, 1.6208328770153833, 0.16700661183132304,
             0.006810201324725182, 0.00010893658065032867, 5.489002234213736e-07),
            (1.0, 8.16496634205391, 7.308288225055645, 1.867922579501842,
             0.1787920529631499, 0.007017106683227897, 0.00011003435715391573,
             5.489002527562557e-07))
_SICI_G4 = ((0.08710016989731142, 0.6113791099522193, 0.3971802963923375,
             0.07485277376284691, 0.005388686814621773, 0.00016199979459893403,
             1.9796387414096365e-06, 7.825790407440903e-09),
            (1.0, 1.6440220241335535, 0.666296701268988, 0.09887717612776888,
             0.006223963454417684, 0.0001732210814741771, 2.0265918208634397e-06,
             7.825792189335346e-09))
_SICI_F8 = ((0.4558808734704653, 0.7137152741001467, 0.16030015822231947,
             0.01160642294081244, 0.00034955644244785906, 4.8621543082645475e-06,
             3.200927900910049e-08, 9.41779576128513e-11, 9.70507110881952e-14),
            (1.0, 0.9174636118736841, 0.17868554533207454, 0.012225359477197129,
             0.00035869648188185157, 4.924350643178815e-06, 3.21956939101046e-08,
             9.437205903502767e-11, 9.70507110881952e-14))
_SICI_G8 = ((0.6973599534432762, 0.33041097930563207, 0.03848787676499743,
             0.001717182390523479, 3.4894116550227946e-05, 3.471311670841167e-07,
             1.7040445278204452e-09, 3.859459254302766e-12, 3.1404009894636335e-15),
            (1.0, 1.6854889881101165, 0.48785225869530496, 0.04679131942596258,
             0.0019028442667439953, 3.684755044425611e-05, 3.5704322344374083e-07,
             1.7269374896631615e-09, 3.878301660239547e-12, 3.1404009894636335e-15))


def _sici_series(x):
  t = x * x
  si = x * _poly(_SICI_SN, t) / _poly(_SICI_SD, t)
  ci = np.euler_gamma + jnp.log(x) + t * _poly(_SICI_CN, t) / _poly(_SICI_CD, t)
  return jnp.where(x == 0, 0.0, si), jnp.where(x == 0, -np.inf, ci)


def _sici_asymptotic(x):
  z = 1.0 / (x * x)

  def f(num_den):
    return _poly(num_den[0], z) / (x * _poly(num_den[1], z))

  def g(num_den):
    return z * _poly(num_den[0], z) / _poly(num_den[1], z)

  below_8 = x < 8.0
  fx = jnp.where(below_8, f(_SICI_F4), f(_SICI_F8))
  gx = jnp.where(below_8, g(_SICI_G4), g(_SICI_G8))
  s, c = jnp.sin(x), jnp.cos(x)
  return np.pi / 2 - fx * c - gx * s, fx * s - gx * c


def _sici_far(x):
  si = jnp.where(jnp.isposinf(x), np.pi / 2, np.pi / 2 - jnp.cos(x) / x)
  ci = jnp.where(jnp.isposinf(x), 0.0, jnp.sin(x) / x)
  return si, ci


@custom_jvp
def sici(x):
  """Sine and cosine integrals ``(Si(x), Ci(x))`` of real ``x``: ``Si`` is odd and, for
  negative ``x``, ``Ci`` is ``Ci(|x|)`` (NaN at ``-inf``), as ``scipy.special.sici``."""
  x, = promote_args_inexact("sici", x)
  if dtypes.is_complex(x.dtype):
    raise ValueError(f"Argument `x` to sici must be real-valued. Got dtype {x.dtype}.")
  ax = jnp.abs(x)
  near = ax <= 4
  middle = (ax > 4) & (ax <= 1e9)
  parts = [_sici_series(ax), _sici_asymptotic(ax)]
  far = _sici_far(ax)
  si = jnp.select([near, middle], [p[0] for p in parts], far[0])
  ci = jnp.select([near, middle], [p[1] for p in parts], far[1])
  return jnp.sign(x) * si, jnp.where(jnp.isneginf(x), np.nan, ci)


sici.defjvps(lambda g, ans, x: (jnp.sinc(x / np.pi) * g, jnp.cos(x) / x * g))


# ------------------------------------------------------------------------- fresnel
# Cephes' fresnl (float64) and fresnlf (float32): series in x^4 below |x| = 1.6, the
# auxiliary functions f and g in 1/(pi x^2)^2 above
_FRESNEL32 = dict(
    sn=(1.6476294637887e-09, -1.522754752581096e-07, 8.4247488085024e-06,
        -0.0003120693124703272, 0.007244727626597022, -0.09228055941124598,
        0.5235987735681432),
    cn=(1.416802502367354e-08, -1.157231412229871e-06, 5.387223446683264e-05,
        -0.001604381798862293, 0.02818489036795073, -0.2467398198317899,
        0.9999999760004487),
    fn=(-1903009855649.792, 135594238805.0252, -4158143148.511033, 73438484.63587323,
        -873235.6681548485, 8560.51546627547, -103.2877601091159, 2.999401847870011),
    gn=(-186084399762.465, 12783506733.93208, -377938771.3202229, 6492611.570598858,
        -77877.89623358162, 860.2931494734327, -14.93439396592284, 0.9999841934744914))
_FRESNEL64 = dict(
    sn=(-2991.8191940101983, 708840.0452577386, -62974148.62058625, 2548908805.7337637,
        -44297951805.96978, 318016297876.5678),
    sd=(1.0, 281.3762688899943, 45584.78108065326, 5173438.887700964, 419320245.8981112,
        22441179564.534092, 607366389490.0846),
    cn=(-4.9884311457357354e-08, 9.504280628298596e-06, -0.0006451914356839651,
        0.018884331939670384, -0.20552590095501388, 1.0),
    cd=(3.99982968972496e-12, 9.154392157746574e-10, 1.2500186247959882e-07,
        1.2226278902417902e-05, 0.0008680295429417843, 0.04121420907221998, 1.0),
    fn=(0.4215435550436775, 0.1434079197807589, 0.011522095507358577, 0.000345017939782574,
        4.6361374928786735e-06, 3.055689837902576e-08, 1.0230451416490724e-10,
        1.7201074326816183e-13, 1.3428327623306275e-16, 3.763297112699879e-20),
    fd=(1.0, 0.7515863983533789, 0.11688892585919138, 0.0064405152650885865,
        0.00015593440916415301, 1.8462756734893055e-06, 1.1269922476399903e-08,
        3.6014002958937136e-11, 5.887545336215784e-14, 4.5200143407412973e-17,
        1.2544323709001127e-20),
    gn=(0.5044420736433832, 0.1971028335255234, 0.018764858409257526,
        0.0006840793809153931, 1.1513882611188428e-05, 9.828524436884223e-08,
        4.4534441586175015e-10, 1.0826804113902088e-12, 1.375554606332618e-15,
        8.363544356306774e-19, 1.8695871016278324e-22),
    gd=(1.0, 1.4749575992512833, 0.33774898912002, 0.02536037414203388,
        0.0008146791071843061, 1.2754507566772912e-05, 1.0431458965757199e-07,
        4.6068072814652043e-10, 1.1027321506624028e-12, 1.3879653125957886e-15,
        8.391588162831187e-19, 1.8695871016278324e-22))


def _sin_cos_half_pi_square(x):
  """``sin(pi x^2 / 2)`` and ``cos(pi x^2 / 2)`` with ``x^2 / 2`` reduced modulo 2 first
  (by ``fmod``, in two steps), so large ``x`` keep their phase."""
  x = jnp.abs(x)
  s = jnp.fmod(x, 2.0)
  r = jnp.fmod(s * (x - s / 2), 2.0)
  sin = jnp.where(r < 0.5, jnp.sin(np.pi * r),
                  jnp.where(r > 1.5, jnp.sin(np.pi * (r - 2.0)), -jnp.sin(np.pi * (r - 1.0))))
  cos = jnp.where(r == 0.5, 0.0, jnp.where(r < 1.0, -jnp.sin(np.pi * (r - 0.5)),
                                            jnp.sin(np.pi * (r - 1.5))))
  return sin, cos


def _ratio(c, num, den, t):
  return _poly(c[num], t) / _poly(c[den], t) if den in c else _poly(c[num], t)


@custom_jvp
def fresnel(x):
  """Fresnel integrals ``(S(x), C(x))`` with the ``pi t^2 / 2`` convention (scipy's
  order, ``S`` first); both odd. float16 and bfloat16 are computed in float32."""
  xx, = promote_args_inexact("fresnel", x)
  out_dtype = xx.dtype
  if dtypes.is_complex(out_dtype):
    raise NotImplementedError("Support for complex-valued inputs is not implemented yet.")
  if dtypes.is_half_float(out_dtype):
    xx = xx.astype(np.float32)
  c = _FRESNEL32 if xx.dtype == np.float32 else _FRESNEL64
  x = jnp.abs(xx)
  x2 = x * x
  t = x2 * x2
  s_small = x * x2 * _ratio(c, "sn", "sd", t)
  c_small = x * _ratio(c, "cn", "cd", t)
  sinpi, cospi = _sin_cos_half_pi_square(x)
  if c is _FRESNEL32:
    s_large = c_large = 0.5
  else:
    c_large = 0.5 + 1 / (np.pi * x) * sinpi
    s_large = 0.5 - 1 / (np.pi * x) * cospi
  t = np.pi * x2
  u = 1.0 / (t * t)
  t = 1.0 / t
  f = 1.0 - u * _ratio(c, "fn", "fd", u)
  g = t * _ratio(c, "gn", "gd", u)
  t = np.pi * x
  c_other = 0.5 + (f * sinpi - g * cospi) / t
  s_other = 0.5 - (f * cospi + g * sinpi) / t
  infinite, small, large = jnp.isinf(xx), x2 < 2.5625, x > 36974.0
  s = jnp.where(infinite, 0.5, jnp.where(small, s_small, jnp.where(large, s_large, s_other)))
  c = jnp.where(infinite, 0.5, jnp.where(small, c_small, jnp.where(large, c_large, c_other)))
  negative = xx < 0.0
  s, c = jnp.where(negative, -s, s), jnp.where(negative, -c, c)
  return s.astype(out_dtype), c.astype(out_dtype)


def _fresnel_jvp(primals, tangents):
  x, = primals
  dx, = tangents
  sinpi, cospi = _sin_cos_half_pi_square(x)
  return fresnel(x), (sinpi * dx, cospi * dx)


fresnel.defjvp(_fresnel_jvp)


# ---------------------------------------------------------------------------- wofz

def _weideman_coefficients(n):
  """``L`` and the coefficients (highest power first) of Weideman's (1994) rational
  approximation of ``w(z)`` with ``n`` terms, from the FFT of ``exp(-t^2) (L^2 + t^2)``."""
  m = 2 * n
  big_l = math.sqrt(n / math.sqrt(2))
  k = np.arange(-m + 1, m)
  t = big_l * np.tan(k * math.pi / m / 2)
  f = np.concatenate([[0.0], np.exp(-t * t) * (big_l * big_l + t * t)])
  a = np.real(np.fft.fft(np.fft.fftshift(f))) / (2 * m)
  return big_l, a[1:n + 1][::-1]


# JAX's wofz uses Weideman's approximation with 32 terms over the whole upper half-plane
_WOFZ_L, _WOFZ_C = _weideman_coefficients(32)


def _wofz_upper(z):
  # w = 2 p(Z) / (L - iz)^2 + 1 / (sqrt(pi) (L - iz)), Z = (L + iz) / (L - iz)
  re = jnp.real(z)
  big_l = lax_bits.complex(lax._const(re, _WOFZ_L), lax._const(re, 0.0))
  iz = lax_bits.complex(lax.neg(jnp.imag(z)), re)
  den = big_l - iz
  p = jnp.polyval(jnp.asarray(_WOFZ_C, dtype=z.dtype), (big_l + iz) / den)
  inv_sqrt_pi = lax_bits.complex(lax._const(re, 1.0 / np.sqrt(np.pi)), lax._const(re, 0.0))
  return 2 * p / (den * den) + inv_sqrt_pi / den


@custom_jvp
def _wofz(z):
  # the lower half-plane from w(z) = 2 exp(-z^2) - w(-z)
  upper = lax.ge(jnp.imag(z), lax._const(jnp.real(z), 0.0))
  w_upper = _wofz_upper(lax.select(upper, z, lax.neg(z)))
  return lax.select(upper, w_upper, 2 * lax.exp(lax.neg(z * z)) - w_upper)


_wofz.defjvps(lambda g, ans, z: g * (lax.neg(2 * z * ans) + lax_bits.complex(
    lax._const(jnp.real(z), 0.0), lax._const(jnp.real(z), 2.0 / np.sqrt(np.pi)))))


def wofz(z):
  """The Faddeeva function ``w(z) = exp(-z^2) erfc(-i z)``; real input is promoted to
  complex."""
  z, = promote_args_inexact("wofz", z)
  if not dtypes.is_complex(z.dtype):
    z = z.astype(np.complex128 if z.dtype == np.float64 else np.complex64)
  return _wofz(z)
