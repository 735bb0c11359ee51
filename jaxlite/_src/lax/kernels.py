"""XLA's elementwise arithmetic in NumPy, where a NumPy ufunc alone computes otherwise.

The elementwise specs (``elementwise.py``) name these as their NumPy kernels, beside the
plain ufuncs; the NumPy backend derives its implementation table and tier-0 templates
from the specs. Only NumPy is imported here: any layer may call a kernel.
"""
import numpy as np

from jaxlite._src.lax import complex_math as cmath


def logistic(x):
  return 1 / (1 + np.exp(-x))


def rounded_once(ufunc):
  """``ufunc`` with float32 operands computed in float64 and rounded once, so the result
  is the nearest float32 to the exact value (other dtypes go to ``ufunc`` as they are).

  NumPy's float32 loops of the transcendental functions are up to 2-3 ulp off; XLA's CPU
  kernels for these are at most 1 ulp off and mostly correctly rounded, so the rounded
  float64 value agrees with JAX 0.10.2 far more often (exp 61% -> 91% of inputs, log
  96% -> 99%, tan 75% -> 96%, pow 79% -> 99.9%), at about 1 ms more per million elements.
  """
  def kernel(*args, out=None):
    if args[0].dtype != np.float32:
      return ufunc(*args, out=out)
    wide = ufunc(*args, dtype=np.float64)
    if out is None:
      return wide.astype(np.float32)
    np.copyto(out, wide, casting="same_kind")
    return out
  kernel.__name__ = kernel.__qualname__ = ufunc.__name__
  return kernel


# Not sin and cos: NumPy's float32 loops are within 1 ulp and its float64 ones are not
# vectorised (10x the time); nor tanh, sinh, cosh and the inverse hyperbolics, whose XLA
# expansions are further from the exact value than NumPy's loops.
exp, log, log1p, expm1, cbrt = map(rounded_once,
                                   (np.exp, np.log, np.log1p, np.expm1, np.cbrt))
tan, arcsin, arccos, arctan, arctan2 = map(rounded_once, (np.tan, np.arcsin, np.arccos,
                                                          np.arctan, np.arctan2))


def exp2(x):
  # exp(x * ln(2)), the product rounded to x's type, as JAX lowers it (in bfloat16 that
  # rounding is visible: exp2(10) is 1000)
  ln2 = np.asarray(np.log(2), x.dtype)
  wide = np.float32 if x.dtype.itemsize < 4 else x.dtype
  return np.exp((x * ln2).astype(wide)).astype(x.dtype)


def rsqrt(x):
  # float32 through float64, rounded once (see rounded_once): XLA's is the nearest float32
  # on 86% of inputs, 1 / sqrt(x) in float32 (two roundings) on 66%
  if x.dtype == np.float32:
    return (1 / np.sqrt(x, dtype=np.float64)).astype(np.float32)
  return 1 / np.sqrt(x)


def div(x, y):
  if x.dtype.kind == "c":
    return cmath.div(x, y)
  if x.dtype.kind in "iu":  # C-style integer division truncates toward zero, as XLA
    safe = np.where(y == 0, 1, y).astype(x.dtype)
    q = np.floor_divide(x, safe)
    if x.dtype.kind == "i":   # floor -> toward zero where the signs differ and it is inexact
      q = q + ((np.remainder(x, safe) != 0) & ((x < 0) != (safe < 0)))
    return np.where(y == 0, -1 if x.dtype.kind == "i" else np.iinfo(x.dtype).max,
                    q).astype(x.dtype)
  return np.true_divide(x, y)


def rem(x, y):
  if x.dtype.kind in "iu":
    return np.where(y == 0, x, np.fmod(x, np.where(y == 0, 1, y))).astype(x.dtype)
  return np.fmod(x, y)


def pow(x, y):  # noqa: A001 (lax's name)
  if x.dtype.kind == "c":
    return cmath.pow(x, y)
  # half floats through float32 (as XLA), float32 through float64 (see rounded_once)
  wide = x.astype(np.float32) if x.itemsize < 4 else x
  wide = x.astype(np.float64) if x.dtype == np.float32 else wide
  out = np.power(wide, y.astype(wide.dtype))
  # NumPy's vectorised power is not C's at every special value; XLA's is: x**0 and 1**y
  # are 1, (-inf)**y is +-inf or +-0
  neg_inf = np.isneginf(x) & (y == y) & (y != 0)
  if neg_inf.any():
    odd = np.mod(y, 2) == 1
    out = np.where(neg_inf, np.where(y > 0, np.where(odd, -np.inf, np.inf),
                                     np.where(odd, -0.0, 0.0)), out)
  out = np.where((y == 0) | (x == 1), 1, out)
  return out.astype(x.dtype)


def integer_pow(x, *, y):
  # square-and-multiply, then 1 / x**-y for negative powers, as JAX lowers it
  if y == 0:
    return np.ones_like(x)
  acc, base, n = None, x, abs(y)
  while n:
    if n & 1:
      acc = base if acc is None else np.multiply(acc, base)
    n >>= 1
    if n:
      base = np.multiply(base, base)
  return acc if y > 0 else div(np.ones((), x.dtype), acc)


def sign(x):
  # XLA's sign of a zero is that zero (NumPy's sign(-0.0) is +0.0)
  out = np.sign(x)
  return out if x.dtype.kind in "iu" else np.copysign(out, x)


def bitwise_not(x):
  return np.logical_not(x) if x.dtype == np.bool_ else np.invert(x)


def bitwise(logical, bitwise_):
  """``logical`` on booleans, ``bitwise_`` on integers."""
  return lambda x, y: logical(x, y) if x.dtype == np.bool_ else bitwise_(x, y)


def _minmax(np_fn, compare, is_max):
  """XLA's max/min: NaN-propagating for floats, with IEEE 754's order of zeros (-0 < +0,
  on either side), and for complex numbers the operand that wins a lexicographic
  comparison (real parts, then imaginary parts; ``y`` if unordered), as JAX lowers it.
  For real operands it writes into ``out`` if given, as a ufunc does (tier 0's generated
  code calls it so)."""
  def impl(x, y, out=None):
    if x.dtype.kind == "c":
      wins = np.where(x.real == y.real, compare(x.imag, y.imag), compare(x.real, y.real))
      return np.where(wins, x, y)
    if x.dtype.kind in "biu":
      return np_fn(x, y, out=out)
    if zero_scalar_of_sign(y, not is_max) or zero_scalar_of_sign(x, not is_max):
      return (max_with_plus_zero if is_max else min_with_minus_zero)(x, y, out)
    if out is not None and (np.may_share_memory(out, x) or np.may_share_memory(out, y)):
      np.copyto(out, impl(x, y))   # (the zeros' signs are read from x and y)
      return out
    result = np_fn(x, y, out=out)
    fixed = signed_zeros(result, x, y, is_max)
    if fixed is result or out is None:
      return fixed
    np.copyto(out, fixed)
    return out
  return impl


def zero_scalar_of_sign(v, negative):
  """Whether ``v`` is a 0-d zero with that sign."""
  return not np.ndim(v) and v == 0 and bool(np.signbit(v)) == negative


def _with_signed_zero(np_fn, is_max):
  """A max of floats one of which is a +0 scalar (relu's ``max(x, 0)``), or a min with
  a -0: every zero of the result is +0 (-0), whichever operand NumPy's loop returns on a
  tie, and adding +0 turns a -0 into +0 and changes nothing else. Writes into ``out`` if
  given, as a ufunc does."""
  def impl(x, y, out=None):
    result = np_fn(x, y, out=out)
    if is_max:
      return np.add(result, 0, out=out)
    result = np.negative(result, out=out)   # min: -(-result + 0)
    return np.negative(np.add(result, 0, out=out), out=out)
  return impl


max_with_plus_zero = _with_signed_zero(np.maximum, True)
min_with_minus_zero = _with_signed_zero(np.minimum, False)


def signed_zeros(out, x, y, is_max):
  """``out``, a max (``is_max``) or min of floats ``x`` and ``y`` from NumPy, with its
  zeros signed as XLA signs them: NumPy returns either operand of a tie of -0 and +0 (which
  one depends on its loop); XLA's max is +0 unless both zeros are -0, its min -0 unless
  both are +0."""
  zero = np.equal(out, 0)
  if not zero.any():
    return out
  x_neg, y_neg = np.signbit(x), np.signbit(y)
  x_zero, y_zero = np.equal(x, 0), np.equal(y, 0)
  if is_max:   # -0 unless an operand is +0
    neg = ~((x_zero & ~x_neg) | (y_zero & ~y_neg))
  else:        # -0 if an operand is -0
    neg = (x_zero & x_neg) | (y_zero & y_neg)
  fixed = np.where(zero, np.where(neg, -0.0, 0.0), out).astype(out.dtype, copy=False)
  return fixed if isinstance(out, np.ndarray) else fixed[()]


max_into = _minmax(np.maximum, np.greater, True)
min_into = _minmax(np.minimum, np.less, False)
