"""Elementwise ``jaxlite.numpy`` functions, each a promotion step and one lax call."""
from __future__ import annotations

import numpy as np

from jaxlite._src import dtypes
from jaxlite._src.array import Array
from jaxlite._src.config import config
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.numpy.util import (check_arraylike, promote_args, promote_args_inexact,
                                     promote_args_numeric, as_operand)


_INEXACT_DTYPES = frozenset(d for d in dtypes._NUMERIC if dtypes.is_inexact(d))
_ACCEPTED_WITHOUT_PROMOTION = {
    promote_args: frozenset(dtypes._NUMERIC),
    promote_args_inexact: _INEXACT_DTYPES,
    promote_args_numeric: frozenset(d for d in dtypes._NUMERIC if d != np.bool_),
}


# A Python scalar of this type joins an array of these dtype kinds without changing its
# dtype (weak typing), so the array's dtype is the result's. That holds for a weakly typed
# array only if its dtype is a default one: a weak int8 plus 3 is a weak int32 in JAX.
_SCALAR_KINDS = {int: "iufc", float: "fc", complex: "c"}
_WEAK_DEFAULTS = {x64: frozenset(map(np.dtype, names)) for x64, names in [
    (False, ["int32", "float32", "complex64"]), (True, ["int64", "float64", "complex128"])]}


def _inexact_unary(name, lax_fn, doc):
  def fun(x, /):
    if type(x) is not Array or x._value.dtype not in _INEXACT_DTYPES:  # else: hot path
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


def _binary(name, lax_fn, doc, promote=promote_args):
  # The hot path skips the promotion function only where it would change nothing: two
  # Arrays of one dtype, weak type and shape, or an Array and a Python scalar of a kind the
  # array's dtype absorbs. A promotion that changes dtypes (to inexact for true_divide and
  # arctan2, to numeric for booleans) always runs, and so does one that makes a weak bool
  # (a comparison of weak values) strong: bool has no weak form in JAX's lattice.
  accepted = _ACCEPTED_WITHOUT_PROMOTION[promote]
  accepted_weak = accepted - {np.dtype(np.bool_)}

  def fun(x, y, /):
    if type(x) is Array and x._value.dtype in (accepted_weak if x.weak_type else accepted):
      if type(y) is Array:
        if (x._value.dtype == y._value.dtype and x.weak_type == y.weak_type
            and x._value.shape == y._value.shape):
          return lax_fn(x, y)
      elif not x.weak_type or x._value.dtype in _WEAK_DEFAULTS[config.jax_enable_x64]:
        y_kind = _SCALAR_KINDS.get(type(y))
        if y_kind is not None and x._value.dtype.kind in y_kind and _converts_directly(
            y, x._value.dtype):
          return lax_fn(x, Array(np.asarray(y, x._value.dtype), True))
    x, y = promote(name, x, y)
    return lax_fn(x, y)
  fun.__name__ = fun.__qualname__ = name
  fun.__doc__ = f"{doc}, elementwise with broadcasting (``numpy.{name}``)."
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

negative = _unary("negative", lax.neg, "Numerical negative", promote_args)
positive = _unary("positive", lambda x: x, "Numerical positive", promote_args_numeric)
sign = _unary("sign", lax.sign, "Sign (-1, 0 or 1)", promote_args_numeric)
floor = _unary("floor", lambda x: x if not dtypes.is_inexact(x.dtype) else lax.floor(x),
               "Floor")
ceil = _unary("ceil", lambda x: x if not dtypes.is_inexact(x.dtype) else lax.ceil(x),
              "Ceiling")
square = _unary("square", lambda x: lax.integer_pow(x, 2), "Square", promote_args_numeric)
isfinite = _unary("isfinite", lambda x: lax.is_finite(x) if dtypes.is_floating(x.dtype)
                  else _full_like_bool(x, True), "Whether finite")
logical_not = _unary("logical_not", lambda x: lax.bitwise_not(_to_bool(x)), "Logical NOT")
invert = bitwise_not = _unary("invert", lax.bitwise_not, "Bitwise NOT")


def absolute(x, /):
  """Absolute value, elementwise (``numpy.absolute``); unsigned and bool pass through."""
  x, = promote_args("absolute", x)
  if x.dtype == np.bool_ or dtypes.issubdtype(x.dtype, np.unsignedinteger):
    return x
  return lax.abs(x)


abs = absolute


def _to_bool(x):
  return x if x.dtype == np.bool_ else lax.ne(x, _zero(x))


def _zero(x):
  return as_operand(np.zeros((), x.dtype))


def _full_like_bool(x, value):
  from jaxlite._src.numpy import creation
  return creation.full(x.shape, value, dtype=bool)


add = _binary("add", lambda x, y: lax.bitwise_or(x, y) if x.dtype == np.bool_
              else lax.add(x, y), "Addition")
subtract = _binary("subtract", lax.sub, "Subtraction")
multiply = _binary("multiply", lambda x, y: lax.bitwise_and(x, y) if x.dtype == np.bool_
                   else lax.mul(x, y), "Multiplication")
true_divide = divide = _binary("true_divide", lax.div, "True division",
                               promote_args_inexact)
maximum = _binary("maximum", lax.max, "Maximum (NaN-propagating)")
minimum = _binary("minimum", lax.min, "Minimum (NaN-propagating)")
arctan2 = _binary("arctan2", lax.atan2, "Four-quadrant inverse tangent", promote_args_inexact)
atan2 = arctan2
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
less = _binary("less", lax.lt, "``x < y``")
less_equal = _binary("less_equal", lax.le, "``x <= y``")
greater = _binary("greater", lax.gt, "``x > y``")
greater_equal = _binary("greater_equal", lax.ge, "``x >= y``")


def _float_rem(x, y):
  # Python's modulo: the result takes the sign of the divisor.
  r = lax.rem(x, y)
  fix = lax.bitwise_and(lax.ne(r, _zero(r)), lax.ne(lax.lt(r, _zero(r)),
                                                    lax.lt(y, _zero(y))))
  return lax.select(fix, lax.add(r, y), r)


def remainder(x, y, /):
  """Remainder with the sign of the divisor, elementwise (``numpy.remainder``)."""
  x, y = promote_args_numeric("remainder", x, y)
  return _float_rem(x, y)


mod = remainder


def fmod(x, y, /):
  """C-style remainder (sign of the dividend), elementwise (``numpy.fmod``)."""
  x, y = promote_args_numeric("fmod", x, y)
  return lax.rem(x, y)


def floor_divide(x, y, /):
  """Division rounded toward negative infinity, elementwise (``numpy.floor_divide``)."""
  x, y = promote_args_numeric("floor_divide", x, y)
  if dtypes.is_integer(x.dtype):
    quotient = lax.div(x, y)
    adjust = lax.bitwise_and(lax.ne(lax.rem(x, y), _zero(x)),
                             lax.ne(lax.lt(x, _zero(x)), lax.lt(y, _zero(y))))
    return lax.select(adjust, lax.sub(quotient, as_operand(np.ones((), x.dtype))), quotient)
  from jaxlite._src.numpy.lax_numpy import where
  quotient = lax.floor(lax.div(lax.sub(x, _float_rem(x, y)), y))
  return where(lax.eq(y, _zero(y)), lax.div(x, y), quotient)  # x // 0 is +-inf, as in JAX


def divmod(x, y, /):
  """``(floor_divide(x, y), remainder(x, y))``."""
  return floor_divide(x, y), remainder(x, y)


def power(x, y, /):
  """``x ** y`` elementwise (``numpy.power``); a static integer exponent uses integer_pow."""
  check_arraylike("power", x, y)
  if isinstance(y, int) and not isinstance(y, bool):
    x, = promote_args_numeric("power", x)
    if y < 0 and dtypes.is_integer(x.dtype):
      raise ValueError("Integers to negative integer powers are not allowed.")
    return lax.integer_pow(x, y)
  x, y = promote_args_numeric("power", x, y)
  if dtypes.is_integer(x.dtype):
    return _integer_power(x, y)
  return lax.pow(x, y)


def _integer_power(x, y):
  """Exponentiation by squaring over the low 6 bits of ``y`` (more would overflow any
  base above 1), as JAX: a negative exponent's bits are read as unsigned, and
  ``0 ** y`` is 0 for ``y != 0``."""
  from jaxlite._src.lax import bits as lax_bits
  from jaxlite._src.numpy.lax_numpy import broadcast_arrays
  x, y = broadcast_arrays(x, y)
  one = _one_like(y)
  acc = lax.select(lax.bitwise_and(lax.eq(x, _zero(x)), lax.ne(y, _zero(y))),
                   lax.broadcast_like(_zero(x), x), lax.broadcast_like(_one_like(x), x))
  for _ in range(6):
    acc = lax.select(lax.ne(lax.bitwise_and(y, one), _zero(y)), lax.mul(acc, x), acc)
    x = lax.mul(x, x)
    y = lax_bits.shift_right_logical(y, one)
  return acc


def _one_like(x):
  return as_operand(np.ones((), x.dtype))


def float_power(x, y, /):
  """``x ** y`` computed in floating point."""
  x, y = promote_args_inexact("float_power", x, y)
  return lax.pow(x, y)


def reciprocal(x, /):
  """``1 / x`` elementwise."""
  x, = promote_args_inexact("reciprocal", x)
  return lax.integer_pow(x, -1)


def log2(x, /):
  """Base-2 logarithm, elementwise."""
  x, = promote_args_inexact("log2", x)
  return lax.div(lax.log(x), lax.log(as_operand(np.full((), 2, x.dtype))))


def log10(x, /):
  """Base-10 logarithm, elementwise."""
  x, = promote_args_inexact("log10", x)
  return lax.div(lax.log(x), lax.log(as_operand(np.full((), 10, x.dtype))))


def isnan(x, /):
  """Whether each element is NaN."""
  x, = promote_args("isnan", x)
  return lax.ne(x, x)


def isinf(x, /):
  """Whether each element is positive or negative infinity."""
  x, = promote_args("isinf", x)
  if not dtypes.is_floating(x.dtype):
    return _full_like_bool(x, False)
  return lax.eq(lax.abs(x), as_operand(np.full((), np.inf, x.dtype)))


def round(a, decimals=0, out=None):
  """Round half to even, to ``decimals`` places (``numpy.round``)."""
  if out is not None:
    raise NotImplementedError("The 'out' argument to jnp.round is not supported: JAX "
                              "arrays are immutable; use the returned array.")
  a, = promote_args("round", a)
  if not dtypes.is_inexact(a.dtype):
    return a
  factor = as_operand(np.full((), 10.0 ** decimals, a.dtype))
  scaled = lax.mul(a, factor) if decimals else a
  # round half to even: floor(x + 0.5), corrected down where x + 0.5 is an odd integer
  half = as_operand(np.full((), 0.5, a.dtype))
  floored = lax.floor(lax.add(scaled, half))
  two = as_operand(np.full((), 2, a.dtype))
  is_tie = lax.eq(lax.sub(floored, scaled), half)
  is_odd = lax.ne(lax.rem(floored, two), _zero(a))
  rounded = lax.select(lax.bitwise_and(is_tie, is_odd),
                       lax.sub(floored, as_operand(np.ones((), a.dtype))), floored)
  return lax.div(rounded, factor) if decimals else rounded


around = round


def clip(arr, min=None, max=None):
  """Limit values to ``[min, max]`` (``numpy.clip``)."""
  check_arraylike("clip", arr)
  if min is not None:
    arr = maximum(min, arr)
  if max is not None:
    arr = minimum(max, arr)
  return as_operand(arr)
