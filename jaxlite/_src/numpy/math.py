"""The remaining elementwise ``jaxlite.numpy`` functions: float decomposition, complex
parts, shifts, NaN handling, and math built from several primitives."""
from __future__ import annotations

import numpy as np

from jaxlite._src import core
from jaxlite._src import dtypes
from jaxlite._src.array import Array
from jaxlite._src.custom_derivatives import custom_jvp
from jaxlite._src.lax import bits as lax_bits
from jaxlite._src.lax import control_flow as lax_cf
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import reductions as lax_red
from jaxlite._src.lax import special as lax_special
from jaxlite._src.numpy import ufuncs
from jaxlite._src.numpy.util import (as_operand, check_arraylike, promote_args,
                                     promote_args_inexact, promote_args_numeric)
from jaxlite._src.transforms import ad

__all__ = [
    "hypot", "copysign", "logaddexp", "logaddexp2", "deg2rad", "rad2deg", "degrees",
    "radians", "sinc", "trunc", "rint", "signbit", "ldexp", "frexp", "modf", "gcd", "lcm",
    "heaviside", "conj", "conjugate", "real", "imag", "angle", "iscomplex", "isreal",
    "isrealobj", "left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift",
    "bitwise_count", "nan_to_num", "i0", "isneginf", "isposinf", "spacing", "fmax", "fmin",
    "fabs",
]


def _c(x, value):
  """A scalar of ``x``'s dtype, weakly typed so that it never widens ``x``."""
  return lax._const(x, value)


def _jax_const(x, value):
  """A constant typed as JAX's ``lax._const`` types it: weak only beside a weak scalar
  (so that, as in JAX, it makes a weakly typed array's result strongly typed)."""
  aval = core.get_aval(x)
  return Array(np.array(value, aval.dtype), aval.weak_type and not aval.shape)


def _full(x, value):
  return lax.broadcast_like(_c(x, value), x)


def _where(pred, a, b):
  return lax.select(pred, a, b)


def hypot(x1, x2, /):
  """``sqrt(x1**2 + x2**2)`` without overflow or underflow, elementwise."""
  x1, x2 = promote_args_inexact("hypot", x1, x2)
  x1, x2 = _broadcast(x1, x2)
  x1, x2 = lax.abs(x1), lax.abs(x2)
  big, small = lax.max(x1, x2), lax.min(x1, x2)
  is_zero = lax.eq(big, _c(big, 0))
  safe_big = _where(is_zero, _full(big, 1), big)
  ratio = lax.div(small, safe_big)
  out = lax.mul(safe_big, lax.sqrt(lax.add(_c(big, 1), lax.mul(ratio, ratio))))
  out = _where(is_zero, big, out)
  either_inf = lax.bitwise_or(lax.eq(x1, _c(x1, np.inf)), lax.eq(x2, _c(x2, np.inf)))
  return _where(either_inf, _full(out, np.inf), out)


def _broadcast(*args):
  from jaxlite._src.numpy.lax_numpy import broadcast_arrays
  return broadcast_arrays(*args)


def signbit(x, /):
  """Whether the sign bit is set (true for ``-0.0`` and negative NaNs), elementwise."""
  x, = promote_args("signbit", x)
  if dtypes.is_integer(x.dtype):
    return lax.lt(x, _c(x, 0))
  if x.dtype == np.bool_:
    return _full_bool(x, False)
  if dtypes.is_complex(x.dtype):
    raise ValueError("jnp.signbit is not well defined for complex values.")
  int_type = np.dtype(f"int{8 * x.dtype.itemsize}")
  return lax.lt(lax_bits.bitcast_convert_type(x, int_type),
                as_operand(np.zeros((), int_type)))


def _full_bool(x, value):
  from jaxlite._src.numpy.creation import full
  return full(x.shape, value, dtype=bool)


def copysign(x1, x2, /):
  """``x1`` with the sign of ``x2`` (including the sign of ``-0.0``), elementwise."""
  x1, x2 = promote_args_inexact("copysign", x1, x2)
  if dtypes.is_complex(x1.dtype):
    raise TypeError("copysign does not support complex-valued inputs")
  x1, x2 = _broadcast(x1, x2)
  return _where(signbit(x2), lax.neg(lax.abs(x1)), lax.abs(x1))


def logaddexp(x1, x2, /):
  """``log(exp(x1) + exp(x2))`` without overflow, elementwise."""
  x1, x2 = promote_args_inexact("logaddexp", x1, x2)
  return _logaddexp(*_broadcast(x1, x2))


def logaddexp2(x1, x2, /):
  """``log2(2**x1 + 2**x2)`` without overflow, elementwise."""
  x1, x2 = promote_args_inexact("logaddexp2", x1, x2)
  return _logaddexp2(*_broadcast(x1, x2))


def _log_add(exp, scale, name):
  """``log(exp(x1) + exp(x2))`` in the base of ``exp`` (``scale`` is 1 / log(base)),
  with JAX's custom derivative: ``exp(x - out)`` for each operand, with +inf taken as 0
  so that an infinite operand does not make it NaN."""
  def log_add(x1, x2):
    big = lax.max(x1, x2)
    if dtypes.is_complex(x1.dtype):
      delta = lax.sub(lax.add(x1, x2), lax.mul(big, _jax_const(big, 2)))
      out = lax.add(big, _scaled(scale, lax.log1p(exp(delta))))
      return lax_bits.complex(lax_bits.real(out),
                              _wrap_between(lax_bits.imag(out), np.pi / scale))
    delta = lax.sub(x1, x2)
    # equal infinities make delta NaN: then x1 + x2 is the answer (inf, or NaN for inf-inf)
    return _where(lax.ne(delta, delta), lax.add(x1, x2),
                  lax.add(big, _scaled(scale, lax.log1p(exp(lax.neg(lax.abs(delta)))))))
  log_add.__name__ = log_add.__qualname__ = name
  log_add = custom_jvp(log_add)

  def log_add_jvp(primals, tangents):
    (x1, x2), (t1, t2) = primals, tangents
    out = log_add(x1, x2)
    slope = lambda x: exp(lax.sub(_replace_inf(x), _replace_inf(out)))
    return out, lax.add(lax.mul(t1, slope(x1)), lax.mul(t2, slope(x2)))
  log_add_jvp.__name__ = f"_{name}_jvp"
  log_add.defjvp(log_add_jvp)
  return log_add


def _scaled(scale, x):
  return x if scale == 1 else lax.mul(_jax_const(x, scale), x)


def _replace_inf(x):
  re_x = lax_bits.real(x) if dtypes.is_complex(x.dtype) else x
  return _where(lax.eq(re_x, _c(re_x, np.inf)), _full(x, 0), x)


def _wrap_between(x, a):
  """``x`` wrapped into ``[-a, a)``."""
  two_a = _c(x, 2 * a)
  rem = lax.rem(lax.add(x, _c(x, a)), two_a)
  rem = _where(lax.lt(rem, _c(x, 0)), lax.add(rem, two_a), rem)
  return lax.sub(rem, _c(x, a))


_logaddexp = _log_add(lax.exp, 1, "logaddexp")
_logaddexp2 = _log_add(lax.exp2, 1 / np.log(2), "logaddexp2")


def deg2rad(x, /):
  """Degrees to radians, elementwise."""
  x, = promote_args_inexact("deg2rad", x)
  return lax.mul(x, _c(x, np.pi / 180))


def rad2deg(x, /):
  """Radians to degrees, elementwise."""
  x, = promote_args_inexact("rad2deg", x)
  return lax.mul(x, _c(x, 180 / np.pi))


radians, degrees = deg2rad, rad2deg


def sinc(x, /):
  """The normalized sinc ``sin(pi x) / (pi x)``, with ``sinc(0) = 1``, elementwise.

  At 0 the value comes from its Maclaurin series with a custom derivative, so that
  every order of derivative there is finite and right (as in JAX).
  """
  x, = promote_args_inexact("sinc", x)
  is_zero = lax.eq(x, _c(x, 0))
  pi_x = lax.mul(_c(x, np.pi), x)
  safe_pi_x = _where(is_zero, _full(x, 1), pi_x)
  return _where(is_zero, _sinc_maclaurin(0, pi_x), lax.div(lax.sin(safe_pi_x), safe_pi_x))


def _sinc_maclaurin(k, x):
  """The k-th derivative of ``sin(x) / x`` at 0, shaped like ``x`` (its own derivative is
  the next term, so derivatives of every order are exact at 0)."""
  zero = lax.mul(x, _c(x, 0))
  return zero if k % 2 else lax.add(zero, _c(x, (-1) ** (k // 2) / (k + 1)))


def _sinc_maclaurin_jvp(k, primals, tangents):
  (x,), (t,) = primals, tangents
  return _sinc_maclaurin(k, x), lax.mul(_sinc_maclaurin(k + 1, x), t)


_sinc_maclaurin = custom_jvp(_sinc_maclaurin, nondiff_argnums=(0,))
_sinc_maclaurin.defjvp(_sinc_maclaurin_jvp)


def trunc(x, /):
  """Round toward zero, elementwise; integers pass through."""
  x, = promote_args_numeric("trunc", x)
  if not dtypes.is_inexact(x.dtype):
    return x
  return _where(lax.lt(x, _c(x, 0)), lax.ceil(x), lax.floor(x))


def rint(x, /):
  """Round to the nearest integer, ties to even, elementwise; integers become floats."""
  x, = promote_args_inexact("rint", x)
  if dtypes.is_complex(x.dtype):
    even = lax_bits.RoundingMethod.TO_NEAREST_EVEN
    return lax_bits.complex(lax_bits.round(lax_bits.real(x), even),
                            lax_bits.round(lax_bits.imag(x), even))
  return lax_bits.round(x, lax_bits.RoundingMethod.TO_NEAREST_EVEN)


def ldexp(x1, x2, /):
  """``x1 * 2**x2`` for an integer ``x2``, elementwise.

  As JAX: ``x1``'s exponent from ``frexp`` is added to ``x2`` first, so that no
  intermediate overflows where the result does not; zeros and infinities pass through.
  """
  check_arraylike("ldexp", x1, x2)
  x1, x2 = as_operand(x1), as_operand(x2)
  if dtypes.is_complex(x1.dtype) or dtypes.is_inexact(x2.dtype):
    raise ValueError(f"ldexp not supported for input types {(x1.dtype, x2.dtype)}")
  x1, = promote_args_inexact("ldexp", x1)
  x1, x2 = _broadcast(x1, lax.convert_element_type(x2, x1.dtype))
  m, e = frexp(x1)
  e = lax.add(lax.convert_element_type(e, x1.dtype), x2)
  # the exponent may overflow by one and still give a finite result
  m = _where(lax.gt(e, _c(e, 0)), lax.mul(m, _c(m, 2)), m)
  e = _where(lax.gt(e, _c(e, 0)), lax.sub(e, _c(e, 1)), e)
  x = lax.mul(m, lax.pow(_full(e, 2), e))
  passes = lax.bitwise_or(lax.eq(lax.abs(x1), _c(x1, np.inf)), lax.eq(x1, _c(x1, 0)))
  return _where(passes, x1, x)


def frexp(x, /):
  """Split ``x`` into a mantissa in ``[0.5, 1)`` and an int32 exponent, elementwise.

  ``x == mantissa * 2**exponent``; zeros, infinities and NaNs give ``(x, 0)``.
  """
  x, = promote_args_inexact("frexp", x)
  if dtypes.is_complex(x.dtype):
    raise TypeError("frexp does not support complex-valued inputs")
  return _frexp(x)


def _frexp_value(x):
  info = dtypes.finfo(x.dtype)
  nmant, nexp = int(info.nmant), int(info.nexp)
  int_type = np.dtype(f"int{8 * x.dtype.itemsize}")
  ic = lambda v: as_operand(np.array(v, int_type))
  bias = (1 << (nexp - 1)) - 1
  subnormal = lax.bitwise_and(lax.lt(lax.abs(x), _c(x, float(info.tiny))),
                              lax.ne(x, _c(x, 0)))
  scaled = _where(subnormal, lax.mul(x, _c(x, float(2.0 ** nmant))), x)
  xi = lax_bits.bitcast_convert_type(scaled, int_type)
  exp_field = lax.bitwise_and(lax_bits.shift_right_logical(xi, ic(nmant)),
                              ic((1 << nexp) - 1))
  exponent = lax.sub(exp_field, ic(bias - 1))
  exponent = _where(subnormal, lax.sub(exponent, ic(nmant)), exponent)
  exp_mask = ((1 << nexp) - 1) << nmant
  keep = np.array(~exp_mask, int_type)
  mant_bits = lax.bitwise_or(lax.bitwise_and(xi, as_operand(keep)), ic((bias - 1) << nmant))
  mantissa = lax_bits.bitcast_convert_type(mant_bits, x.dtype)
  special = lax.bitwise_or(lax.eq(x, _c(x, 0)), lax.bitwise_not(lax.is_finite(x)))
  mantissa = _where(special, x, mantissa)
  exponent = _where(special, _full(exponent, 0), exponent)
  return mantissa, lax.convert_element_type(exponent, np.int32)


def _frexp_jvp(primals, tangents):
  # the mantissa moves as x / 2**exponent; the exponent is piecewise constant (as JAX)
  (x,), (t,) = primals, tangents
  m, e = _frexp(x)
  m_dot = lax.mul(t, lax.exp2(lax.neg(lax.convert_element_type(e, t.dtype))))
  return (m, e), (m_dot, np.zeros(e.shape, dtypes.float0))


_frexp = custom_jvp(_frexp_value)
_frexp.defjvp(_frexp_jvp)


def modf(x, /, out=None):
  """The fractional and integral parts of ``x`` (both with ``x``'s sign), elementwise."""
  if out is not None:
    raise NotImplementedError("The 'out' argument to jnp.modf is not supported.")
  x, = promote_args_inexact("modf", x)
  whole = trunc(x)
  return lax.sub(x, whole), whole


def _safe_rem(a, b):
  is_zero = lax.eq(b, _c(b, 0))
  return _where(is_zero, _full(a, 0), lax.rem(a, _where(is_zero, _full(b, 1), b)))


def gcd(x1, x2, /):
  """The greatest common divisor of integers, elementwise (``gcd(0, 0) = 0``)."""
  x1, x2 = promote_args_numeric("gcd", x1, x2)
  if not dtypes.is_integer(x1.dtype):
    raise ValueError("Arguments to jax.numpy.gcd must be integers.")
  x1, x2 = _broadcast(x1, x2)
  a, b = _abs_int(x1), _abs_int(x2)

  def cond(ab):
    return lax_red.reduce_or(lax.ne(ab[1], _c(ab[1], 0)), tuple(range(ab[1].ndim)))

  def body(ab):
    a, b = ab
    nonzero = lax.ne(b, _c(b, 0))
    return _where(nonzero, b, a), _where(nonzero, _safe_rem(a, b), b)

  return lax_cf.while_loop(cond, body, (a, b))[0]


def _abs_int(x):
  return x if dtypes.issubdtype(x.dtype, np.unsignedinteger) else lax.abs(x)


def lcm(x1, x2, /):
  """The least common multiple of integers, elementwise (0 if either is 0)."""
  x1, x2 = promote_args_numeric("lcm", x1, x2)
  if not dtypes.is_integer(x1.dtype):
    raise ValueError("Arguments to jax.numpy.lcm must be integers.")
  x1, x2 = _broadcast(x1, x2)
  d = gcd(x1, x2)
  is_zero = lax.eq(d, _c(d, 0))
  quotient = lax.div(x2, _where(is_zero, _full(d, 1), d))
  return _where(is_zero, _full(d, 0), _abs_int(lax.mul(x1, quotient)))


def heaviside(x1, x2, /):
  """The step function: 0 where ``x1 < 0``, ``x2`` where ``x1 == 0``, 1 where ``x1 > 0``."""
  x1, x2 = promote_args_inexact("heaviside", x1, x2)
  x1, x2 = _broadcast(x1, x2)
  zero, one = _full(x1, 0), _full(x1, 1)
  out = _where(lax.lt(x1, _c(x1, 0)), zero, _where(lax.gt(x1, _c(x1, 0)), one, x2))
  return _where(lax.ne(x1, x1), x1, out)  # NaN stays NaN, as in NumPy and JAX


def conjugate(x, /):
  """The complex conjugate, elementwise; real inputs are returned unchanged."""
  check_arraylike("conjugate", x)
  x = as_operand(x)
  return lax_bits.conj(x) if dtypes.is_complex(x.dtype) else x


conj = conjugate


def real(val, /):
  """The real part, elementwise; real inputs are returned unchanged."""
  check_arraylike("real", val)
  val = as_operand(val)
  return lax_bits.real(val) if dtypes.is_complex(val.dtype) else val


def imag(val, /):
  """The imaginary part, elementwise; zeros for real inputs."""
  check_arraylike("imag", val)
  val = as_operand(val)
  return lax_bits.imag(val) if dtypes.is_complex(val.dtype) else _full(val, 0)


def angle(z, deg=False):
  """The counterclockwise angle of each complex number from the positive real axis."""
  z, = promote_args_inexact("angle", z)
  re, im = real(z), imag(z)
  out = lax.atan2(im, re)
  return lax.mul(out, _c(out, 180 / np.pi)) if deg else out


def iscomplex(x, /):
  """Whether each element has a nonzero imaginary part."""
  x = as_operand(x)
  im = imag(x)
  return lax.ne(im, _c(im, 0))


def isreal(x, /):
  """Whether each element has a zero imaginary part."""
  x = as_operand(x)
  im = imag(x)
  return lax.eq(im, _c(im, 0))


def isrealobj(x, /):
  """Whether ``x`` has a non-complex dtype (a Python bool)."""
  return not dtypes.is_complex(dtypes.dtype(x))


def _shift_args(name, x1, x2):
  x1, x2 = promote_args(name, x1, x2)
  if not dtypes.is_integer(x1.dtype) and x1.dtype != np.bool_:
    raise TypeError(f"{name} only accepts integer arguments, got {x1.dtype}.")
  if x1.dtype == np.bool_:
    x1, x2 = (lax.convert_element_type(v, np.int8) for v in (x1, x2))
  return _broadcast(x1, x2)


def left_shift(x1, x2, /):
  """``x1 << x2`` elementwise; shifts past the bit width give 0."""
  x1, x2 = _shift_args("left_shift", x1, x2)
  return lax_bits.shift_left(x1, x2)


def right_shift(x1, x2, /):
  """``x1 >> x2`` elementwise: arithmetic for signed types, logical for unsigned."""
  x1, x2 = _shift_args("right_shift", x1, x2)
  if dtypes.issubdtype(x1.dtype, np.unsignedinteger):
    return lax_bits.shift_right_logical(x1, x2)
  return lax_bits.shift_right_arithmetic(x1, x2)


bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


def bitwise_count(x, /):
  """The number of set bits in ``abs(x)``, as uint8, elementwise."""
  x, = promote_args_numeric("bitwise_count", x)
  if not dtypes.is_integer(x.dtype):
    raise TypeError(f"bitwise_count requires an integer input, got {x.dtype}.")
  return lax.convert_element_type(lax_bits.population_count(_abs_int(x)), np.uint8)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
  """Replace NaN with ``nan`` and infinities with ``posinf`` / ``neginf`` (by default the
  largest and smallest finite values of the dtype)."""
  check_arraylike("nan_to_num", x)
  x = as_operand(x)
  dtype = x.dtype
  if not dtypes.is_inexact(dtype):
    return x
  if dtypes.is_complex(dtype):
    return lax_bits.complex(nan_to_num(real(x), nan=nan, posinf=posinf, neginf=neginf),
                            nan_to_num(imag(x), nan=nan, posinf=posinf, neginf=neginf))
  info = dtypes.finfo(dtype)
  posinf = float(info.max) if posinf is None else posinf
  neginf = float(info.min) if neginf is None else neginf
  from jaxlite._src.numpy.lax_numpy import where
  # jnp.where with strongly typed replacements, as JAX (a weak x's result is strong)
  cast = lambda v: lax.convert_element_type(as_operand(v), dtype)
  out = where(lax.ne(x, x), cast(nan), x)
  out = where(lax.eq(out, _c(out, np.inf)), cast(posinf), out)
  return where(lax.eq(out, _c(out, -np.inf)), cast(neginf), out)


def i0(x):
  """The modified Bessel function of the first kind of order zero, elementwise (its
  derivative at 0 is exactly 0, as in JAX)."""
  x, = promote_args_inexact("i0", x)
  if dtypes.is_complex(x.dtype):
    raise ValueError("i0 does not support complex-valued inputs")
  return _i0(x)


def _i0_value(x):
  ax = lax.abs(x)
  return lax.mul(lax.exp(ax), lax_special.bessel_i0e(ax))


def _i0_jvp(primals, tangents):
  x, = primals
  (out,), (tangent,) = ad.jvp_flat(lambda v: [_i0_value(v)], [x], list(tangents))
  return out, _where(lax.eq(x, _c(x, 0)), _full(tangent, 0), tangent)


_i0 = custom_jvp(_i0_value)
_i0.defjvp(_i0_jvp)


def isposinf(x, /):
  """Whether each element is positive infinity."""
  x, = promote_args("isposinf", x)
  if not dtypes.is_floating(x.dtype):
    return _full_bool(x, False)
  return lax.eq(x, _c(x, np.inf))


def isneginf(x, /):
  """Whether each element is negative infinity."""
  x, = promote_args("isneginf", x)
  if not dtypes.is_floating(x.dtype):
    return _full_bool(x, False)
  return lax.eq(x, _c(x, -np.inf))


def spacing(x, /):
  """The distance from ``x`` to the next float away from zero (negative for ``x < 0``)."""
  x, = promote_args_inexact("spacing", x)
  if dtypes.is_complex(x.dtype):
    raise ValueError("spacing is not defined for complex inputs.")
  away = _where(signbit(x), _full(x, -np.inf), _full(x, np.inf))
  return lax.sub(lax.nextafter(x, away), x)


def fmax(x1, x2):
  """The elementwise maximum, ignoring NaNs (NaN only where both are NaN).

  As in JAX, a selection rather than ``max``: on ties ``x2`` is chosen and receives the
  whole gradient.
  """
  return _nan_ignoring_select("fmax", ufuncs.greater, x1, x2)


def fmin(x1, x2):
  """The elementwise minimum, ignoring NaNs (NaN only where both are NaN).

  As in JAX, a selection rather than ``min``: on ties ``x2`` is chosen and receives the
  whole gradient.
  """
  return _nan_ignoring_select("fmin", ufuncs.less, x1, x2)


def _nan_ignoring_select(name, beats, x1, x2):
  """``x1`` where it ``beats`` ``x2`` or ``x2`` is NaN, else ``x2``."""
  x1, x2 = promote_args(name, x1, x2)
  x1, x2 = _broadcast(x1, x2)
  return _where(lax.bitwise_or(beats(x1, x2), ufuncs.isnan(x2)), x1, x2)


def fabs(x, /):
  """The absolute value of real numbers, as floats, elementwise."""
  x, = promote_args_inexact("fabs", x)
  if dtypes.is_complex(x.dtype):
    raise TypeError("ufunc 'fabs' does not support complex dtypes")
  return lax.abs(x)


# -- methods of Array and Tracer that belong to this module
from jaxlite._src.core import Tracer  # noqa: E402

for _cls in (Array, Tracer):
  _cls.conj = _cls.conjugate = conjugate
  _cls.real = property(real)
  _cls.imag = property(imag)
