"""The remaining elementwise ``jaxlite.numpy`` functions: float decomposition, complex
parts, shifts, NaN handling, and math built from several primitives."""
from __future__ import annotations

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.lax.custom_derivatives import custom_jvp
from jaxlite._src.lax import bits as lax_bits
from jaxlite._src.lax import control_flow as lax_cf
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import special as lax_special
from jaxlite._src.lax import reductions as lax_red
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.libraries.numpy import creation
from jaxlite._src.libraries.numpy import lax_numpy
from jaxlite._src.libraries.numpy import reductions
from jaxlite._src.libraries.numpy import ufuncs
from jaxlite._src.libraries.numpy import util
from jaxlite._src.libraries.numpy.lax_numpy import broadcast_arrays, where
from jaxlite._src.libraries.numpy.reductions import any as _any
from jaxlite._src.libraries.numpy.util import (as_operand, check_arraylike, constant_like, ensure_arraylike,
                                     lax_const, promote_args, promote_args_inexact,
                                     promote_args_numeric, promote_dtypes, promote_dtypes_inexact)

__all__ = [
    "hypot", "copysign", "logaddexp", "logaddexp2", "deg2rad", "rad2deg", "degrees",
    "radians", "sinc", "trunc", "rint", "signbit", "ldexp", "frexp", "modf", "gcd", "lcm",
    "heaviside", "conj", "conjugate", "real", "imag", "angle", "iscomplex", "isreal",
    "isrealobj", "left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift",
    "bitwise_count", "nan_to_num", "i0", "isneginf", "isposinf", "spacing", "fmax", "fmin",
    "fabs", "vdot", "inner", "outer", "matvec", "vecmat", "vecdot", "array_equal",
    "array_equiv", "allclose", "isclose",
]


def hypot(x1, x2, /):
  """``sqrt(x1**2 + x2**2)`` without overflow or underflow, elementwise."""
  x1, x2 = promote_args_inexact("hypot", x1, x2)
  if dtypes.is_complex(x1.dtype):
    raise ValueError("jnp.hypot is not well defined for complex-valued inputs. Please "
                     "convert to real values first, such as by using abs(x)")
  x1, x2 = lax.abs(x1), lax.abs(x2)
  either_inf = lax.bitwise_or(isposinf(x1), isposinf(x2))
  big, small = ufuncs.maximum(x1, x2), ufuncs.minimum(x1, x2)
  big_is_zero = ufuncs.equal(big, 0)
  safe_big = where(big_is_zero, lax_shapes.full_like(big, 1), big)
  ratio = lax.div(small, safe_big)
  out = where(big_is_zero, big, ufuncs.multiply(
      big, lax.sqrt(ufuncs.add(1, lax.square(ratio)))))
  return where(either_inf, lax_const(out, np.inf), out)


def signbit(x, /):
  """Whether the sign bit is set (true for ``-0.0`` and negative NaNs), elementwise."""
  x, = promote_args("signbit", x)
  if dtypes.is_integer(x.dtype):
    return lax.lt(x, constant_like(x, 0))
  if x.dtype == np.bool_:
    return lax_shapes.full_like(x, False, dtype=np.bool_)
  if not dtypes.is_floating(x.dtype):
    raise ValueError(f"jax.numpy.signbit is not well defined for {x.dtype}")
  bits = lax_bits.bitcast_convert_type(x, np.dtype(f"int{8 * x.dtype.itemsize}"))
  return lax.lt(bits, constant_like(bits, 0))


def copysign(x1, x2, /):
  """``x1`` with the sign of ``x2`` (including the sign of ``-0.0``), elementwise."""
  x1, x2 = promote_args_inexact("copysign", x1, x2)
  if dtypes.is_complex(x1.dtype):
    raise TypeError("copysign does not support complex-valued inputs")
  return where(signbit(x2), ufuncs.negative(lax.abs(x1)), lax.abs(x1))


def logaddexp(x1, x2, /):
  """``log(exp(x1) + exp(x2))`` without overflow, elementwise.

  For complex inputs the imaginary part of the result is wrapped into ``[-pi, pi]``.
  """
  x1, x2 = promote_args_inexact("logaddexp", x1, x2)
  return _logaddexp_e(*_broadcast(x1, x2))


def logaddexp2(x1, x2, /):
  """``log2(2**x1 + 2**x2)`` without overflow, elementwise.

  For complex inputs the imaginary part of the result is wrapped into
  ``[-pi / log(2), pi / log(2)]``.
  """
  x1, x2 = promote_args_inexact("logaddexp2", x1, x2)
  return _logaddexp_2(*_broadcast(x1, x2))


def _logaddexp(x1, x2, exp, scale, period):
  """``log(exp(x1) + exp(x2)) * scale`` for ``exp`` of base ``e ** (1 / scale)``."""
  x1, x2 = _broadcast(x1, x2)
  big = lax.max(x1, x2)
  factor = lambda v: v if scale == 1.0 else lax.mul(lax_const(big, scale), v)
  if dtypes.is_floating(x1.dtype):
    delta = lax.sub(x1, x2)
    # equal infinities make delta NaN: then x1 + x2 is the answer (inf, or NaN)
    return lax.select(lax.ne(delta, delta), lax.add(x1, x2), lax.add(
        big, factor(lax.log1p(exp(lax.neg(lax.abs(delta)))))))
  delta = lax.sub(lax.add(x1, x2), lax.mul(big, lax_const(big, 2)))
  out = lax.add(big, factor(lax.log1p(exp(delta))))
  return lax_bits.complex(lax_bits.real(out), _wrap(lax_bits.imag(out), period))


def _log_add(exp, scale, period, name):
  """``_logaddexp`` in one base, with JAX's custom derivative: ``exp(x - out)`` for each
  operand, +inf taken as 0 so that an infinite operand does not make the slope NaN."""
  def log_add(x1, x2):
    return _logaddexp(x1, x2, exp, scale, period)
  log_add.__name__ = log_add.__qualname__ = name
  log_add = custom_jvp(log_add)

  def log_add_jvp(primals, tangents):
    (x1, x2), (t1, t2) = primals, tangents
    out = log_add(x1, x2)
    slope = lambda x: exp(lax.sub(_replace_inf(x), _replace_inf(out)))
    return out, lax.add(lax.mul(t1, slope(x1)), lax.mul(t2, slope(x2)))
  log_add.defjvp(log_add_jvp)
  return log_add


def _replace_inf(x):
  real = lax_bits.real(x) if dtypes.is_complex(x.dtype) else x
  return where(lax.eq(real, lax_const(real, np.inf)), lax_shapes.full_like(x, 0), x)


_logaddexp_e = _log_add(lax.exp, 1.0, np.pi, "logaddexp")
_logaddexp_2 = _log_add(lax.exp2, 1 / np.log(2), np.pi / np.log(2), "logaddexp2")


def _wrap(x, half_period):
  """``x`` wrapped into ``[-half_period, half_period]``."""
  a, two_a, zero = (lax_const(x, v) for v in (half_period, 2 * half_period, 0))
  rem = lax.rem(lax.add(x, a), two_a)
  return lax.sub(lax.select(lax.lt(rem, zero), lax.add(rem, two_a), rem), a)


def _broadcast(*args):
  return broadcast_arrays(*args)


def deg2rad(x, /):
  """Degrees to radians, elementwise."""
  x, = promote_args_inexact("deg2rad", x)
  return lax.mul(x, lax_const(x, np.pi / 180))


def rad2deg(x, /):
  """Radians to degrees, elementwise."""
  x, = promote_args_inexact("rad2deg", x)
  return lax.mul(x, lax_const(x, 180 / np.pi))


radians, degrees = deg2rad, rad2deg


def sinc(x, /):
  """The normalized sinc ``sin(pi x) / (pi x)``, with ``sinc(0) = 1``, elementwise.

  The zero is guarded on both sides of the division, so gradients at 0 are finite.
  """
  x, = promote_args_inexact("sinc", x)
  is_zero = lax.eq(x, lax_const(x, 0))
  one = lax_shapes.full_like(x, 1)
  safe = lax.select(is_zero, one, lax.mul(x, lax_const(x, np.pi)))
  return lax.select(is_zero, one, lax.div(lax.sin(safe), safe))


def trunc(x):
  """Round toward zero, elementwise; integers and booleans pass through."""
  check_arraylike("trunc", x)
  x = as_operand(x)
  if not dtypes.is_inexact(x.dtype):
    return x
  return where(lax.lt(x, lax_const(x, 0)), ufuncs.ceil(x), ufuncs.floor(x))


def rint(x, /):
  """Round to the nearest integer, ties to even, elementwise; integers become floats."""
  check_arraylike("rint", x)
  x = as_operand(x)
  if not dtypes.is_inexact(x.dtype):
    return lax.convert_element_type(x, dtypes.default_float_dtype())
  if dtypes.is_complex(x.dtype):
    return lax_bits.complex(rint(lax_bits.real(x)), rint(lax_bits.imag(x)))
  return lax_bits.round(x, lax_bits.RoundingMethod.TO_NEAREST_EVEN)


def ldexp(x1, x2, /):
  """``x1 * 2**x2`` for an integer ``x2``, elementwise.

  As in JAX, ``x1`` is split by ``frexp`` first, so that ``2**x2`` never overflows where
  the result would not; zeros and infinities of ``x1`` are returned unchanged.
  """
  check_arraylike("ldexp", x1, x2)
  x1, x2 = as_operand(x1), as_operand(x2)
  if dtypes.is_complex(x1.dtype) or dtypes.is_inexact(x2.dtype):
    raise ValueError(f"ldexp not supported for input types {(x1.dtype, x2.dtype)}: it "
                     "takes a real x1 and an integer x2.")
  x1, = promote_args_inexact("ldexp", x1)
  x2 = lax.convert_element_type(x2, x1.dtype)
  mantissa, exponent = frexp(x1)
  exponent = ufuncs.add(lax.convert_element_type(exponent, x2.dtype), x2)
  # the exponent may overflow by one with a finite result
  positive = ufuncs.greater(exponent, 0)
  mantissa = where(positive, ufuncs.multiply(mantissa, 2), mantissa)
  exponent = where(positive, ufuncs.subtract(exponent, 1), exponent)
  out = ufuncs.multiply(mantissa, ufuncs.power(2, exponent))
  return where(ufuncs.logical_or(ufuncs.isinf(x1), ufuncs.equal(x1, 0)), x1, out)


def frexp(x, /):
  """Split ``x`` into a mantissa in ``[0.5, 1)`` and an int32 exponent, elementwise.

  ``x == mantissa * 2**exponent``; zeros, infinities and NaNs give ``(x, 0)``. As in JAX
  on the CPU, where XLA flushes subnormals: a float32 or float64 subnormal gives
  ``(+-0.5, minexp - nmant)`` (-149 and -1074), a bfloat16 one ``(x, 0)``.
  """
  x, = promote_args_inexact("frexp", x)
  if dtypes.is_complex(x.dtype):
    raise TypeError("frexp does not support complex-valued inputs")
  info = dtypes.finfo(x.dtype)
  nmant, nexp = int(info.nmant), int(info.nexp)
  int_type = np.dtype(f"int{8 * x.dtype.itemsize}")
  ic = lambda v: as_operand(np.array(v, int_type))
  bias = (1 << (nexp - 1)) - 1
  # JAX scales a value below the smallest normal by 2**nmant first, a product whose
  # subnormal factor XLA flushes except in float16 (computed in float32): then every
  # subnormal has the exponent field of a zero
  small = lax.lt(lax.abs(x), lax_const(x, float(info.tiny)))
  scale = float(2.0 ** nmant) if x.dtype == np.float16 else 0.0
  scaled = lax.select(small, lax.mul(x, lax_const(x, scale)), x)
  xi = lax_bits.bitcast_convert_type(scaled, int_type)
  exp_field = lax.bitwise_and(lax_bits.shift_right_logical(xi, ic(nmant)),
                              ic((1 << nexp) - 1))
  exponent = lax.sub(exp_field, ic(bias - 1))
  exponent = lax.select(small, lax.sub(exponent, ic(nmant)), exponent)
  exp_mask = ((1 << nexp) - 1) << nmant
  mant_bits = lax.bitwise_or(lax.bitwise_and(xi, ic(~exp_mask)), ic((bias - 1) << nmant))
  mantissa = lax_bits.bitcast_convert_type(mant_bits, x.dtype)
  if x.dtype.itemsize >= 4:
    # JAX tests x == 0 beside isinf and isnan, which XLA's CPU code folds into one test
    # of the bits: a float32 or float64 subnormal is not a zero there
    magnitude = lax.bitwise_and(lax_bits.bitcast_convert_type(x, int_type),
                                ic((1 << (8 * x.dtype.itemsize - 1)) - 1))
    zero = lax.eq(magnitude, ic(0))
  else:   # a comparison after flushing: bfloat16 subnormals are zeros
    zero = lax.eq(x, lax_const(x, 0))
  # JAX's test, op for op (how XLA's CPU code folds it decides bfloat16's answer)
  special = lax.bitwise_or(lax.bitwise_or(lax.eq(lax.abs(x), lax_const(x, np.inf)),
                                          lax.ne(x, x)), zero)
  mantissa = lax.select(special, x, mantissa)
  exponent = lax.select(special, lax_shapes.full_like(exponent, 0), exponent)
  return mantissa, lax.convert_element_type(exponent, np.int32)


def modf(x, /, out=None):
  """The fractional and integral parts of ``x`` (both with ``x``'s sign), elementwise."""
  check_arraylike("modf", x)
  x, = promote_dtypes_inexact(as_operand(x))
  if out is not None:
    raise NotImplementedError("The 'out' argument to jnp.modf is not supported.")
  whole = where(ufuncs.greater_equal(x, 0), ufuncs.floor(x), ufuncs.ceil(x))
  return ufuncs.subtract(x, whole), whole


def _integer_args(name, x1, x2):
  check_arraylike(name, x1, x2)
  x1, x2 = promote_dtypes(x1, x2)
  if not dtypes.is_integer(x1.dtype):
    raise ValueError(f"Arguments to jax.numpy.{name} must be integers, got {x1.dtype}; "
                     "convert them with .astype(int) first.")
  return x1, x2


def gcd(x1, x2):
  """The greatest common divisor of integers, elementwise (``gcd(0, 0) = 0``)."""
  x1, x2 = _broadcast(*_integer_args("gcd", x1, x2))
  return lax_cf.while_loop(_gcd_cond, _gcd_body, (ufuncs.abs(x1), ufuncs.abs(x2)))[0]


def _gcd_cond(carry):
  return _any(ufuncs.not_equal(carry[1], 0))


def _gcd_body(carry):
  # Euclid's step, keeping the larger value first
  x1, x2 = carry
  nonzero = ufuncs.not_equal(x2, 0)
  x1, x2 = where(nonzero, x2, x1), where(nonzero, lax.rem(x1, x2), lax_const(x2, 0))
  swap = ufuncs.less(x1, x2)
  return where(swap, x2, x1), where(swap, x1, x2)


def lcm(x1, x2):
  """The least common multiple of integers, elementwise (0 if either is 0)."""
  x1, x2 = _integer_args("lcm", x1, x2)
  x1, x2 = ufuncs.abs(x1), ufuncs.abs(x2)
  d = gcd(x1, x2)
  return where(ufuncs.equal(d, 0), lax_const(d, 0),
               ufuncs.multiply(x1, ufuncs.floor_divide(x2, d)))


def heaviside(x1, x2, /):
  """The step function: 0 where ``x1 < 0``, ``x2`` where ``x1 == 0``, 1 where ``x1 > 0``;
  NaN where ``x1`` is NaN."""
  check_arraylike("heaviside", x1, x2)
  x1, x2 = promote_dtypes_inexact(x1, x2)
  zero = lax_const(x1, 0)
  return where(lax.lt(x1, zero), zero, where(lax.gt(x1, zero), lax_const(x1, 1),
                                             where(lax.ne(x1, x1), x1, x2)))


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
  """The imaginary part, elementwise; zeros (weak when ``val`` is) for real inputs."""
  check_arraylike("imag", val)
  val = as_operand(val)
  return lax_bits.imag(val) if dtypes.is_complex(val.dtype) else lax_shapes.full_like(val, 0)


def angle(z, deg=False):
  """The counterclockwise angle of each complex number from the positive real axis.

  Integers and Python floats give default-dtype floats, as in JAX.
  """
  check_arraylike("angle", z)
  z = as_operand(z)
  re, im = real(z), imag(z)
  if not dtypes.is_inexact(re.dtype) or (dtypes.is_floating(z.dtype) and z.ndim == 0):
    re, im = (lax.convert_element_type(v, dtypes.default_float_dtype()) for v in (re, im))
  out = lax.atan2(im, re)
  return rad2deg(out) if deg else out


def iscomplex(x):
  """Whether each element has a nonzero imaginary part."""
  im = imag(x)
  return lax.ne(im, lax_const(im, 0))


def isreal(x):
  """Whether each element has a zero imaginary part."""
  im = imag(x)
  return lax.eq(im, lax_const(im, 0))


def isrealobj(x):
  """Whether ``x`` has a non-complex dtype (a Python bool)."""
  return not dtypes.is_complex(dtypes.dtype(x))


def left_shift(x, y, /):
  """``x << y`` elementwise (booleans promote to int); shifts past the bit width give 0."""
  return lax_bits.shift_left(*promote_args_numeric("left_shift", x, y))


def right_shift(x1, x2, /):
  """``x1 >> x2`` elementwise: arithmetic for signed types, logical for unsigned."""
  x1, x2 = promote_args_numeric("right_shift", x1, x2)
  if dtypes.issubdtype(x1.dtype, np.unsignedinteger):
    return lax_bits.shift_right_logical(x1, x2)
  return lax_bits.shift_right_arithmetic(x1, x2)


def bitwise_left_shift(x, y, /):
  """The Array API name of :func:`left_shift` (JAX names its operands ``x`` and ``y``)."""
  return left_shift(x, y)


bitwise_right_shift = right_shift


def bitwise_count(x, /):
  """The number of set bits in ``abs(x)``, as uint8, elementwise."""
  x, = promote_args_numeric("bitwise_count", x)
  if not dtypes.is_integer(x.dtype):
    raise TypeError(f"bitwise_count requires an integer input, got {x.dtype}.")
  return lax.convert_element_type(lax_bits.population_count(ufuncs.abs(x)), np.uint8)


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
  cast = lambda v: lax.convert_element_type(as_operand(v), dtype)
  out = where(ufuncs.isnan(x), cast(nan), x)
  out = where(isposinf(out), cast(posinf), out)
  return where(isneginf(out), cast(neginf), out)


def i0(x):
  """The modified Bessel function of the first kind of order zero, elementwise."""
  x, = promote_args_inexact("i0", x)
  if not dtypes.is_floating(x.dtype):
    raise ValueError(f"Unsupported input type to jax.numpy.i0: {x.dtype}")
  ax = lax.abs(x)
  return lax.mul(lax.exp(ax), lax_special.bessel_i0e(ax))


def _isposneginf(name, infinity, x, out):
  check_arraylike(name, x)
  if out is not None:
    raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported: JAX "
                              "arrays are immutable; use the returned array.")
  x = as_operand(x)
  if dtypes.is_floating(x.dtype):
    return lax.eq(x, constant_like(x, infinity))
  if dtypes.is_complex(x.dtype):
    raise ValueError("isposinf/isneginf are not well defined for complex types; use "
                     "isinf on the real or imaginary part.")
  return lax_shapes.full_like(x, False, dtype=np.bool_)


def isposinf(x, /, out=None):
  """Whether each element is positive infinity."""
  return _isposneginf("isposinf", np.inf, x, out)


def isneginf(x, /, out=None):
  """Whether each element is negative infinity."""
  return _isposneginf("isneginf", -np.inf, x, out)


def spacing(x, /):
  """The distance from ``x`` to the next float away from zero (negative for ``x < 0``).

  As in JAX (and NumPy): float16 always steps toward +inf, and where the step underflows
  other dtypes give the smallest subnormal with ``x``'s sign.
  """
  x, = promote_args_inexact("spacing", x)
  if dtypes.is_complex(x.dtype):
    raise ValueError("jnp.spacing is not defined for complex inputs.")
  inf = lax_const(x, np.inf)
  if x.dtype == np.float16:
    return ufuncs.subtract(lax.nextafter(x, inf), x)
  out = ufuncs.subtract(lax.nextafter(x, copysign(inf, x)), x)
  tiniest = dtypes.finfo(x.dtype).smallest_subnormal
  return where(ufuncs.equal(out, 0), copysign(tiniest, x), out)


def fmax(x1, x2):
  """The elementwise maximum, ignoring NaNs (NaN only where both are NaN)."""
  return where(ufuncs.logical_or(ufuncs.greater(x1, x2), ufuncs.isnan(x2)), x1, x2)


def fmin(x1, x2):
  """The elementwise minimum, ignoring NaNs (NaN only where both are NaN)."""
  return where(ufuncs.logical_or(ufuncs.less(x1, x2), ufuncs.isnan(x2)), x1, x2)


def fabs(x, /):
  """The absolute value of real numbers, as floats, elementwise."""
  x, = promote_args_inexact("fabs", x)
  if dtypes.is_complex(x.dtype):
    raise TypeError("ufunc 'fabs' does not support complex dtypes")
  return lax.abs(x)


# -- methods of Array and Tracer that belong to this module
from jaxlite._src.core.array import Array  # noqa: E402
from jaxlite._src.core.core import Tracer  # noqa: E402

for _cls in (Array, Tracer):
  _cls.conj = _cls.conjugate = conjugate
  _cls.real = property(real)
  _cls.imag = property(imag)


# -- products and comparisons of whole arrays, built on the ufuncs and reductions
def vdot(a, b, *, precision=None, preferred_element_type=None):
  """Dot product of the flattened inputs (conjugating ``a``)."""
  check_arraylike("vdot", a, b)
  if lax_numpy.iscomplexobj(a):
    a = conjugate(a)
  return lax_numpy.dot(lax_numpy.ravel(a), lax_numpy.ravel(b), precision=precision,
                       preferred_element_type=preferred_element_type)


def inner(a, b, *, precision=None, preferred_element_type=None):
  """Contract the last axes of ``a`` and ``b``."""
  a, b, out_dtype, weak = lax_numpy._dot_operands("inner", a, b, preferred_element_type)
  if a.ndim == 0 or b.ndim == 0:
    return ufuncs.multiply(a, b) if preferred_element_type is None else ufuncs.multiply(
        lax_numpy.astype(a, out_dtype), lax_numpy.astype(b, out_dtype))
  return lax_numpy._dot_result(lax_red.dot_general(
      a, b, (((a.ndim - 1,), (b.ndim - 1,)), ((), ())), precision, out_dtype), weak)


def outer(a, b, out=None):
  """Outer product of the flattened inputs (``out`` is not supported, as in JAX)."""
  if out is not None:
    raise NotImplementedError("The 'out' argument to jnp.outer is not supported.")
  # both of rank 2, so jax_numpy_rank_promotion='raise' has nothing to refuse
  return ufuncs.multiply(lax_numpy.reshape(a, (-1, 1)), lax_numpy.reshape(b, (1, -1)))


def matvec(x1, x2, /):
  """Batched matrix-vector product: ``x1[..., i, j] * x2[..., j]`` summed over ``j``."""
  x1, x2 = ensure_arraylike("matvec", x1, x2)
  return lax_numpy.matmul(x1, x2[..., None])[..., 0]


def vecmat(x1, x2, /):
  """Batched vector-matrix product: ``conj(x1[..., i]) * x2[..., i, j]`` summed over ``i``."""
  x1, x2 = ensure_arraylike("vecmat", x1, x2)
  return lax_numpy.matmul(conj(x1)[..., None, :], x2)[..., 0, :]


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
  """Batched vector dot product over ``axis``, conjugating ``x1`` (array-API ``vecdot``)."""
  x1, x2 = ensure_arraylike("vecdot", x1, x2)
  if x1.shape[axis] != x2.shape[axis]:
    raise ValueError("axes must match; got shapes "
                     f"{x1.shape} and {x2.shape} with axis={axis}")
  x1, x2 = broadcast_arrays(x1, x2)
  x1, x2 = lax_numpy.moveaxis(x1, axis, -1), lax_numpy.moveaxis(x2, axis, -1)
  out = lax_numpy.matmul(conj(x1)[..., None, :], x2[..., :, None], precision=precision,
                         preferred_element_type=preferred_element_type)
  return out[..., 0, 0]


def array_equal(a1, a2, equal_nan=False):
  """Whether two arrays have the same shape and elements."""
  if lax_numpy.shape(a1) != lax_numpy.shape(a2):
    return as_operand(False)
  eq = ufuncs.equal(a1, a2)
  if equal_nan:
    eq = ufuncs.logical_or(eq, ufuncs.logical_and(ufuncs.isnan(a1), ufuncs.isnan(a2)))
  return reductions.all(eq)


def array_equiv(a1, a2):
  """True when ``a1`` and ``a2`` broadcast to one shape and are equal everywhere."""
  a1, a2 = ensure_arraylike("array_equiv", a1, a2)
  try:
    lax_numpy.broadcast_shapes(a1.shape, a2.shape)
  except ValueError:
    return creation.array(False)
  return reductions.all(ufuncs.equal(a1, a2))


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
  """Whether all elements are equal within tolerance."""
  return reductions.all(isclose(a, b, rtol, atol, equal_nan))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
  """Elementwise ``|a - b| <= atol + rtol * |b|``, or ``a == b`` (so equal infinities are
  close); where ``b`` is not finite only ``a == b`` counts, as in JAX."""
  a, b = util.promote_args("isclose", a, b)
  if dtypes.issubdtype(a.dtype, dtypes.extended):   # keys have no distance: equal or not
    return lax.eq(a, b)
  a, b = util.promote_args_inexact("isclose", a, b)
  tol_dtype = np.finfo(a.dtype).dtype if dtypes.is_complex(a.dtype) else a.dtype
  rtol, atol = (lax.convert_element_type(as_operand(t), tol_dtype) for t in (rtol, atol))
  in_range = lax.le(lax.abs(lax.sub(a, b)),
                       lax.add(atol, lax.mul(rtol, lax.abs(b))))
  out = ufuncs.logical_or(lax.eq(a, b), ufuncs.logical_and(ufuncs.isfinite(b), in_range))
  if equal_nan:
    out = ufuncs.logical_or(out, ufuncs.logical_and(ufuncs.isnan(a), ufuncs.isnan(b)))
  return out
