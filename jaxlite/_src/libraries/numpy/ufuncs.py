"""Elementwise ``jaxlite.numpy`` functions, each a promotion step and one lax call."""
from __future__ import annotations

import inspect
import operator

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.core.array import Array
from jaxlite._src.base.config import config
from jaxlite._src.lax import bits as lax_bits
from jaxlite._src.lax.call import staged
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.libraries.numpy.lax_numpy import _where, where
from jaxlite._src.libraries.numpy.util import (as_operand, check_arraylike, constant_like, lax_const,
                                     promote_args, promote_args_inexact, promote_args_numeric,
                                     promote_dtypes_inexact, promote_dtypes_numeric,
                                     promote_shapes)


_INEXACT_DTYPES = dtypes.numeric_dtypes_where(dtypes.is_inexact)
# which operand dtypes each promotion function leaves as they are
_UNCHANGED_BY = {
    promote_args: lambda d: True,
    promote_args_inexact: dtypes.is_inexact,
    promote_args_numeric: lambda d: d != np.bool_,
}


# A Python scalar of this type joins an array of these dtype kinds without changing its
# dtype (weak typing), so the array's dtype is the result's. That holds for a weakly typed
# array only if its dtype is a default one: a weak int8 plus 3 is a weak int32 in JAX.
_SCALAR_KINDS = {int: "iufc", float: "fc", complex: "c"}
_WEAK_DEFAULTS = {x64: frozenset(map(np.dtype, names)) for x64, names in [
    (False, ["int32", "float32", "complex64"]), (True, ["int64", "float64", "complex128"])]}


_PRIMITIVE_OF = {fun: prim for prim, fun in lax.direct_functions.items()}


def _inexact_unary(name, lax_fn, doc):
  def promoting(x):
    x, = promote_args_inexact(name, x)
    return lax_fn(x)
  prim = _PRIMITIVE_OF.get(lax_fn)
  if prim is not None and all(map(dtypes.is_inexact, prim.elementwise_dtypes)):
    # one primitive taking inexact dtypes only: an inexact Array needs no promotion, so
    # the hot path is lax's own direct kernel call, with the promotion as its fallback
    fun = lax.direct_unary(prim, promoting, positional_only=True)
  else:
    def fun(x, /):
      if type(x) is not Array or x._host is None or x._host.dtype not in _INEXACT_DTYPES:
        x, = promote_args_inexact(name, x)
      return lax_fn(x)
  fun.__name__ = fun.__qualname__ = name
  fun.__doc__ = f"{doc}, elementwise (``numpy.{name}``); integers are promoted to float."
  return fun


def _unary(name, lax_fn, doc, promote=promote_args):
  def fun(x, /):
    x, = promote(name, x)
    return lax_fn(x)
  fun.__name__ = fun.__qualname__ = name
  fun.__doc__ = f"{doc}, elementwise (``numpy.{name}``)."
  return fun


def _binary(name, lax_fn, doc, promote=promote_args, promoting=None, params=("x", "y")):
  # The hot path skips the promotion function only where it would change nothing: two
  # Arrays of one dtype, weak type and shape, or an Array and a Python scalar of a kind the
  # array's dtype absorbs. A promotion that changes dtypes (to inexact for true_divide and
  # arctan2, to numeric for booleans) always runs, and so does one that makes a weak bool
  # (a comparison of weak values) strong: bool has no weak form in JAX's lattice.
  unchanged = _UNCHANGED_BY[promote]
  accepted = dtypes.numeric_dtypes_where(unchanged)
  accepted_weak = dtypes.numeric_dtypes_where(lambda d: unchanged(d) and d != np.bool_)
  promoting = promoting or (lambda x, y: lax_fn(*promote(name, x, y)))

  def fun(x, y, /):
    if (type(x) is Array and (a := x._host) is not None
        and a.dtype in (accepted_weak if x.weak_type else accepted)):
      if type(y) is Array:
        if ((b := y._host) is not None and a.dtype == b.dtype and x.weak_type == y.weak_type
            and a.shape == b.shape):
          return lax_fn(x, y)
      elif not x.weak_type or a.dtype in _WEAK_DEFAULTS[config.jax_enable_x64]:
        y_kind = _SCALAR_KINDS.get(type(y))
        if y_kind is not None and a.dtype.kind in y_kind and _converts_directly(y, a.dtype):
          return lax_fn(x, Array(np.asarray(y, a.dtype), True))
    return promoting(x, y)
  fun.__name__ = fun.__qualname__ = name
  fun.__doc__ = f"{doc}, elementwise with broadcasting (``numpy.{name}``)."
  # (JAX names the two of a few functions x1 and x2)
  fun.__signature__ = inspect.Signature(
      [inspect.Parameter(p, inspect.Parameter.POSITIONAL_ONLY) for p in params])
  return fun


_INT_RANGES = {d: (int(np.iinfo(d).min), int(np.iinfo(d).max))
               for d in dtypes._NUMERIC if d.kind in "iu"}
_EXACT_IN_DOUBLE = 1 << 53
_SINGLE_PRECISION = frozenset(map(np.dtype, ["float32", "complex64"]))


def _converts_directly(y, dtype) -> bool:
  """Whether ``np.asarray(y, dtype)`` gives what JAX's two-step conversion of the Python
  scalar ``y`` gives: first to its weak default dtype (an int out of that range raises
  OverflowError), then to ``dtype`` (an int out of its range wraps; a float converted to
  float16 or bfloat16 rounds twice without x64). Elsewhere the slow path converts."""
  x64 = config.jax_enable_x64
  if type(y) is int:
    lo, hi = _INT_RANGES[np.dtype(np.int64 if x64 else np.int32)]
    if not lo <= y <= hi:
      return False
    bounds = _INT_RANGES.get(dtype)
    if bounds is None:   # inexact: Python converts through a double, exact up to 2**53
      return -_EXACT_IN_DOUBLE <= y <= _EXACT_IN_DOUBLE
    return bounds[0] <= y <= bounds[1]
  return x64 or dtype in _SINGLE_PRECISION


sin = _inexact_unary("sin", lax.sin, "Sine")
cos = _inexact_unary("cos", lax.cos, "Cosine")
tan = _inexact_unary("tan", lax.tan, "Tangent")
arcsin = _inexact_unary("arcsin", lax.asin, "Inverse sine")
arccos = _inexact_unary("arccos", lax.acos, "Inverse cosine")
arctan = _inexact_unary("arctan", lax.atan, "Inverse tangent")
sinh = _inexact_unary("sinh", lax.sinh, "Hyperbolic sine")
cosh = _inexact_unary("cosh", lax.cosh, "Hyperbolic cosine")
tanh = _inexact_unary("tanh", lax.tanh, "Hyperbolic tangent")
arcsinh = _inexact_unary("arcsinh", lax.asinh, "Inverse hyperbolic sine")
arccosh = _inexact_unary("arccosh", lax.acosh, "Inverse hyperbolic cosine")
arctanh = _inexact_unary("arctanh", lax.atanh, "Inverse hyperbolic tangent")
exp = _inexact_unary("exp", lax.exp, "Exponential")
exp2 = _inexact_unary("exp2", lax.exp2, "Base-2 exponential")
expm1 = _inexact_unary("expm1", lax.expm1, "``exp(x) - 1``")
log = _inexact_unary("log", lax.log, "Natural logarithm")
log1p = _inexact_unary("log1p", lax.log1p, "``log(1 + x)``")
sqrt = _inexact_unary("sqrt", lax.sqrt, "Square root")
cbrt = _inexact_unary("cbrt", lax.cbrt, "Cube root")
asin, acos, atan, asinh, acosh, atanh = arcsin, arccos, arctan, arcsinh, arccosh, arctanh

# As in JAX, negative and sign reject booleans (lax.neg and lax.sign do) and positive
# returns them unchanged.
negative = _unary("negative", lax.neg, "Numerical negative")
positive = _unary("positive", lambda x: x, "Numerical positive")
sign = _unary("sign", lax.sign, "Sign (-1, 0 or 1; ``x / abs(x)`` for complex x)")
floor = _unary("floor", lambda x: x if not dtypes.is_inexact(x.dtype) else lax.floor(x),
               "Floor")
ceil = _unary("ceil", lambda x: x if not dtypes.is_inexact(x.dtype) else lax.ceil(x),
              "Ceiling")
square = _unary("square", lax.square, "Square", promote_args_numeric)
logical_not = _unary("logical_not", lambda x: lax.bitwise_not(_to_bool(x)), "Logical NOT")
invert = bitwise_not = _unary("invert", lax.bitwise_not, "Bitwise NOT")


def bitwise_invert(x, /):
  """Bitwise NOT, elementwise (the array-API name of ``jnp.invert``)."""
  return invert(x)


def absolute(x, /):
  """Absolute value, elementwise (``numpy.absolute``); unsigned and bool pass through."""
  x, = promote_args("absolute", x)
  if x.dtype == np.bool_ or dtypes.issubdtype(x.dtype, np.unsignedinteger):
    return x
  return lax.abs(x)


abs = absolute


def _to_bool(x):
  return x if x.dtype == np.bool_ else lax.ne(x, lax_const(x, 0))


def _full_like_bool(x, value):
  return lax_shapes.full_like(x, value, dtype=np.bool_)


def _ordered(lax_cmp):
  """``lax_cmp`` extended to complex numbers, which JAX orders lexicographically: by real
  part, then by imaginary part."""
  def compare(x, y):
    if not dtypes.is_complex(x.dtype):
      return lax_cmp(x, y)
    re_x, re_y = lax_bits.real(x), lax_bits.real(y)
    return lax.select(lax.eq(re_x, re_y), lax_cmp(lax_bits.imag(x), lax_bits.imag(y)),
                      lax_cmp(re_x, re_y))
  compare.__name__ = lax_cmp.__name__
  return compare


add = _binary("add", lambda x, y: lax.bitwise_or(x, y) if x.dtype == np.bool_
              else lax.add(x, y), "Addition")
subtract = _binary("subtract", lax.sub, "Subtraction")
def _multiply(x, y):
  return lax.bitwise_and(x, y) if x.dtype == np.bool_ else lax.mul(x, y)


def _multiply_promoting(x, y):
  # JAX's jnp.multiply is jitted, and XLA's simplifier turns the product of a value and a
  # converted bool of the output's shape into a select, so eagerly too inf * False is 0
  # (jitted programs get the rule from passes/algebraic.py; numpyro relies on it).
  px, py = promote_args("multiply", x, y)
  if px.dtype == np.bool_ or isinstance(px, core.Tracer) or isinstance(py, core.Tracer):
    return _multiply(px, py)
  for pred, value in ((x, py), (y, px)):
    if dtypes.dtype(pred) == np.bool_:
      try:
        shape = np.broadcast_shapes(px.shape, py.shape)
      except ValueError:   # lax.mul raises JAX's error for the shapes
        break
      if np.shape(pred) == shape:
        return lax.select(pred, lax_shapes.broadcast_to_shape(value, shape),
                          lax_shapes.full_like(value, 0, shape=shape))
  return _multiply(px, py)


multiply = _binary("multiply", _multiply, "Multiplication", promoting=_multiply_promoting)
true_divide = _binary("true_divide", lax.div, "True division", promote_args_inexact,
                      params=("x1", "x2"))


def divide(x1, x2, /):
  """True division, elementwise with broadcasting (``numpy.divide``, the Array API's
  ``divide``: JAX names its operands ``x1`` and ``x2``)."""
  return true_divide(x1, x2)


maximum = _binary("maximum", lax.max, "Maximum (NaN-propagating)")
minimum = _binary("minimum", lax.min, "Minimum (NaN-propagating)")
arctan2 = _binary("arctan2", lax.atan2, "Four-quadrant inverse tangent", promote_args_inexact,
                  params=("x1", "x2"))
nextafter = _binary("nextafter", lax.nextafter, "Next float after x toward y",
                    promote_args_inexact)
bitwise_and = _binary("bitwise_and", lax.bitwise_and, "Bitwise AND")
bitwise_or = _binary("bitwise_or", lax.bitwise_or, "Bitwise OR")
bitwise_xor = _binary("bitwise_xor", lax.bitwise_xor, "Bitwise XOR")
logical_and = _binary("logical_and", lambda x, y: lax.bitwise_and(_to_bool(x), _to_bool(y)),
                      "Logical AND")
logical_or = _binary("logical_or", lambda x, y: lax.bitwise_or(_to_bool(x), _to_bool(y)),
                     "Logical OR")
logical_xor = _binary("logical_xor", lambda x, y: lax.bitwise_xor(_to_bool(x), _to_bool(y)),
                      "Logical XOR")
equal = _binary("equal", lax.eq, "Equality test")
not_equal = _binary("not_equal", lax.ne, "Inequality test")
less = _binary("less", _ordered(lax.lt), "``x < y``")
less_equal = _binary("less_equal", _ordered(lax.le), "``x <= y``")
greater = _binary("greater", _ordered(lax.gt), "``x > y``")
greater_equal = _binary("greater_equal", _ordered(lax.ge), "``x >= y``")


def atan2(x1, x2, /):
  """``arctan2`` after NumPy promotion (``numpy.atan2``): a Python scalar takes the
  other operand's dtype first, so ``atan2(uint8_array, -3)`` divides by ``uint8(-3)``."""
  return arctan2(*promote_args("atan2", x1, x2))


def isfinite(x, /):
  """Whether each element is finite (both parts, for complex numbers)."""
  check_arraylike("isfinite", x)
  x = as_operand(x)
  if dtypes.is_floating(x.dtype):
    return lax.is_finite(x)
  if dtypes.is_complex(x.dtype):
    return lax.bitwise_and(lax.is_finite(lax_bits.real(x)), lax.is_finite(lax_bits.imag(x)))
  return _full_like_bool(x, True)


def isinf(x, /):
  """Whether each element is positive or negative infinity (either part, for complex)."""
  check_arraylike("isinf", x)
  x = as_operand(x)
  if dtypes.is_floating(x.dtype):
    return lax.eq(lax.abs(x), constant_like(x, np.inf))
  if dtypes.is_complex(x.dtype):
    re, im = lax_bits.real(x), lax_bits.imag(x)
    return lax.bitwise_or(lax.eq(lax.abs(re), constant_like(re, np.inf)),
                          lax.eq(lax.abs(im), constant_like(im, np.inf)))
  return _full_like_bool(x, False)


def isnan(x, /):
  """Whether each element is NaN."""
  check_arraylike("isnan", x)
  x = as_operand(x)
  return lax.ne(x, x)


# -- division and remainders: integer division by zero does not trap (XLA's x // 0 is -1
# for signed and all ones for unsigned types, x % 0 is x); these follow JAX's formulas.

@staged
def remainder(x1, x2, /):
  """Remainder with the sign of the divisor, elementwise (``numpy.remainder``).

  An integer remainder by zero is 0, as in JAX.
  """
  x1, x2 = promote_args_numeric("remainder", x1, x2)
  zero = constant_like(x1, 0)
  if dtypes.is_integer(x2.dtype):
    x2 = where(lax.eq(x2, constant_like(x2, 0)), lax_shapes.full_like(x2, 1), x2)
  trunc_mod = lax.rem(x1, x2)
  nonzero = lax.ne(trunc_mod, zero)
  do_plus = lax.bitwise_and(lax.ne(lax.lt(trunc_mod, zero), lax.lt(x2, zero)), nonzero)
  return lax.select(do_plus, lax.add(trunc_mod, x2), trunc_mod)


def mod(x1, x2, /):
  """Remainder with the sign of the divisor (``numpy.mod``, an alias of ``remainder``)."""
  return remainder(x1, x2)


def fmod(x1, x2, /):
  """C-style remainder (sign of the dividend), elementwise (``numpy.fmod``).

  An integer remainder by zero is 0, as in JAX.
  """
  check_arraylike("fmod", x1, x2)
  x1, x2 = as_operand(x1), as_operand(x2)
  if dtypes.is_integer(dtypes.result_type(x1, x2)):
    x2 = where(equal(x2, 0), lax_shapes.full_like(x2, 1), x2)
  return lax.rem(*promote_args_numeric("fmod", x1, x2))


@staged
def floor_divide(x1, x2, /):
  """Division rounded toward negative infinity, elementwise (``numpy.floor_divide``)."""
  x1, x2 = promote_args_numeric("floor_divide", x1, x2)
  if dtypes.issubdtype(x1.dtype, np.unsignedinteger):
    return lax.div(x1, x2)
  if dtypes.is_integer(x1.dtype):
    quotient = lax.div(x1, x2)
    fix = logical_and(not_equal(lax.sign(x1), lax.sign(x2)),
                      not_equal(lax.rem(x1, x2), 0))
    return _where(fix, subtract(quotient, 1), quotient)
  if dtypes.is_complex(x1.dtype):
    raise TypeError("floor_divide does not support complex-valued inputs")
  return _float_divmod(x1, x2)[0]


def divmod(x1, x2, /):
  """``(floor_divide(x1, x2), remainder(x1, x2))``, elementwise (``numpy.divmod``)."""
  x1, x2 = promote_args_numeric("divmod", x1, x2)
  if dtypes.is_integer(x1.dtype):
    return floor_divide(x1, x2), remainder(x1, x2)
  return _float_divmod(x1, x2)


def _float_divmod(x1, x2):
  # CPython's float_divmod: the remainder takes the divisor's sign, the quotient is exact
  mod = lax.rem(x1, x2)
  div = lax.div(where(equal(x2, 0), x1, lax.sub(x1, mod)), x2)
  fix = lax.bitwise_and(not_equal(mod, 0), not_equal(lax.sign(x2), lax.sign(mod)))
  mod = lax.select(fix, add(mod, x2), mod)
  div = lax.select(fix, subtract(div, 1.0), div)
  return lax_bits.round(div), mod


# -- powers

def power(x1, x2, /):
  """``x1 ** x2`` elementwise (``numpy.power``).

  As in JAX: a concrete integer exponent (a Python int, or a concrete integer scalar)
  uses ``lax.integer_pow``; integer bases and exponents multiply by squaring over the
  exponent's low 6 bits (larger powers overflow anyway); a float base with an integer
  exponent array keeps the base's dtype.
  """
  check_arraylike("power", x1, x2)
  if not isinstance(x2, core.Tracer):
    try:
      exponent = operator.index(x2)
    except TypeError:
      pass
    else:
      x1, = promote_dtypes_numeric(x1)
      return lax.integer_pow(x1, exponent)
  x1, x2 = (as_operand(x) for x in promote_shapes("power", x1, x2))
  x1_, x2_ = promote_args_numeric("power", x1, x2)
  if not dtypes.is_inexact(x1_.dtype):
    return _pow_int_int(x1_, x2_)
  if dtypes.is_inexact(x1.dtype) and dtypes.is_integer(x2.dtype):
    # lax.pow of a float base and an integer exponent: the exponent converts to the
    # base's dtype and the result is weak only if both operands are
    return lax.pow(x1, lax._convert_element_type(x2, x1.dtype, x2.weak_type))
  return lax.pow(x1_, x2_)


def pow(x1, x2, /):  # noqa: A001 (the array-API name shadows the builtin, as in JAX)
  """``x1 ** x2`` elementwise (the array-API name of ``jnp.power``)."""
  return power(x1, x2)


def _pow_int_int(x1, x2):
  one = constant_like(x2, 1)
  # acc starts at 0 for 0 ** y with y != 0
  zero = constant_like(x2, 0)
  acc = where(lax.bitwise_and(lax.eq(x1, zero), lax.ne(x2, zero)), zero, one)
  for _ in range(6):   # any base above 1 overflows before the 64th power
    acc = where(lax.bitwise_and(x2, one), lax.mul(acc, x1), acc)
    x1 = lax.mul(x1, x1)
    x2 = lax_bits.shift_right_logical(x2, one)
  return acc


def float_power(x, y, /):
  """``x ** y`` computed in floating point."""
  x, y = promote_args_inexact("float_power", x, y)
  return lax.pow(x, y)


def reciprocal(x, /):
  """``1 / x`` elementwise, in floating point."""
  check_arraylike("reciprocal", x)
  x, = promote_dtypes_inexact(as_operand(x))
  return lax.integer_pow(x, -1)


# -- logarithms to other bases: a complex logarithm is scaled part by part, so that
# infinities and the imaginary part's zeros survive

def log2(x, /):
  """Base-2 logarithm, elementwise."""
  x, = promote_args_inexact("log2", x)
  if dtypes.is_complex(x.dtype):
    r = lax.log(x)
    re, im = lax_bits.real(r), lax_bits.imag(r)
    ln2 = lax.log(constant_like(re, 2))
    return lax_bits.complex(lax.div(re, ln2), lax.div(im, ln2))
  return lax.div(lax.log(x), lax.log(constant_like(x, 2)))


def log10(x, /):
  """Base-10 logarithm, elementwise."""
  x, = promote_args_inexact("log10", x)
  one_over_log10 = Array(np.array(0.4342944819032518, dtypes.finfo(x.dtype).dtype))
  if dtypes.is_complex(x.dtype):
    r = lax.log(x)
    return lax_bits.complex(lax.mul(lax_bits.real(r), one_over_log10),
                            lax.mul(lax_bits.imag(r), one_over_log10))
  return lax.mul(lax.log(x), one_over_log10)


# -- rounding

@staged(static_argnames=("decimals", "out"))
def round(a, decimals=0, out=None):
  """Round half to even, to ``decimals`` places (``numpy.round``).

  Integers are returned unchanged (negative ``decimals`` are not supported for them);
  booleans are rejected with a ValueError, as in JAX; complex numbers are rounded part by
  part. float16 is scaled in float32.
  """
  check_arraylike("round", a)
  a = as_operand(a)
  decimals = operator.index(decimals)
  if out is not None:
    raise NotImplementedError("The 'out' argument to jnp.round is not supported: JAX "
                              "arrays are immutable; use the returned array.")
  dtype = a.dtype
  if dtypes.is_integer(dtype):
    if decimals < 0:
      raise NotImplementedError("integer np.round not implemented for decimals < 0")
    return a
  if dtype == np.bool_:   # JAX's finfo(bool) fails the same way
    raise ValueError("jnp.round does not accept booleans (bool is not inexact); convert "
                     "with .astype(int) or .astype(float) first.")
  if decimals > np.log10(float(dtypes.finfo(dtype).max)):
    return a   # rounding beyond the precision changes nothing
  if dtypes.is_complex(dtype):
    return lax_bits.complex(_round_float(lax_bits.real(a), decimals),
                            _round_float(lax_bits.imag(a), decimals))
  return _round_float(a, decimals)


around = round


def _round_float(x, decimals):
  even = lax_bits.RoundingMethod.TO_NEAREST_EVEN
  if decimals == 0:
    return lax_bits.round(x, even)
  # scaling float16 loses digits: it is scaled in float32, as JAX does
  dtype = x.dtype
  if dtype == np.float16:
    x = lax.convert_element_type(x, np.float32)
  factor = lax_const(x, 10 ** decimals)
  out = lax.div(lax_bits.round(lax.mul(x, factor), even), factor)
  return lax.convert_element_type(out, dtype) if dtype == np.float16 else out


@staged
def clip(arr=None, /, min=None, max=None):
  """Limit values to ``[min, max]`` (``numpy.clip``)."""
  if arr is None:
    raise ValueError("No input was provided to the clip function.")
  check_arraylike("clip", arr)
  if any(t is not None and dtypes.is_complex(dtypes.dtype(t)) for t in (arr, min, max)):
    raise ValueError("Clip received a complex value either through the input or the min/max "
                     "keywords. Complex values have no ordering and cannot be clipped. Take "
                     "the real or imaginary part first (jnp.real / jnp.imag).")
  if min is not None:
    arr = maximum(min, arr)
  if max is not None:
    arr = minimum(max, arr)
  return as_operand(arr)
