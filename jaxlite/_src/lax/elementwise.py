"""Elementwise primitives: arithmetic, math functions, comparisons, selection, casts.

Operands of an elementwise primitive share one dtype and have equal shapes, except that
a dimension of size 1 or a rank-0 operand broadcasts (as JAX's lax allows).
"""
from __future__ import annotations

import types

import numpy as np

from jaxlite._src import core
from jaxlite._src import dtypes
from jaxlite._src.array import Array
from jaxlite._src.core import Primitive, ShapedArray
from jaxlite._src.lax.precision import AccuracyMode, check_accuracy
from jaxlite._src.passes import algebraic
from jaxlite._src.transforms import staging

_bool = (np.bool_,)
_int = (np.integer,)
_float = (np.floating,)
_complex = (np.complexfloating,)
_num = _int + _float + _complex
_inexact = _float + _complex
_any = _bool + _num
_bool_or_int = _bool + _int
_ordered = _bool + _int + _float
_signed = (np.signedinteger,)

_CLASS_NAMES = {np.bool_: "bool", np.integer: "integer", np.signedinteger: "signedinteger",
                np.floating: "floating", np.complexfloating: "complexfloating",
                dtypes.prng_key: "prng_key"}


def broadcast_shapes(name, shapes):
  """The common shape of elementwise operands (equal ranks; 1 and rank 0 broadcast)."""
  nonscalar = [s for s in shapes if s]
  if not nonscalar:
    return ()
  ranks = {len(s) for s in nonscalar}
  if len(ranks) > 1:
    raise TypeError(f"{name}: arrays must have the same number of dimensions, got {ranks}")
  result = []
  for sizes in zip(*nonscalar):
    big = {d for d in sizes if d != 1}
    if len(big) > 1:
      raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                      f"{', '.join(map(str, shapes))}.")
    result.append(big.pop() if big else 1)
  return tuple(result)


def _check_dtype(name, dtype, accepted):
  if not any(dtypes.issubdtype(dtype, c) for c in accepted):
    names = ", ".join(_CLASS_NAMES.get(c) or np.dtype(c).name for c in accepted)
    raise TypeError(f"{name} does not accept dtype {dtype.name}. "
                    f"Accepted dtypes are subtypes of {names}.")


def naryop_abstract_eval(name, accepted, result_dtype=None):
  """The shape/dtype rule shared by every elementwise primitive."""
  def rule(*avals, **params):
    for a in avals:
      _check_dtype(name, a.dtype, accepted)
    first = avals[0].dtype
    if any(a.dtype != first for a in avals[1:]):
      got = ", ".join(a.dtype.name for a in avals)
      raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got {got}. "
                      f"(Tip: jnp.{name} is a similar function that does automatic type "
                      "promotion on inputs).")
    shape = avals[0].shape if len(avals) == 1 else broadcast_shapes(
        name, [a.shape for a in avals])
    # as JAX: weak when every operand is, whatever the result dtype (x < 1 of a weak x
    # is a weak bool)
    out = first if result_dtype is None else result_dtype(first)
    return ShapedArray(shape, out, all(a.weak_type for a in avals))
  return rule


# name -> the primitive; elementwise primitives are looked up by the other layers here
elementwise_primitives: dict[str, Primitive] = {}


def naryop(name, accepted, result_dtype=None) -> Primitive:
  prim = Primitive(name)
  prim.def_abstract_eval(naryop_abstract_eval(name, accepted, result_dtype))
  prim.elementwise_dtypes = dtypes.numeric_dtypes_where(
      lambda d: any(dtypes.issubdtype(d, c) for c in accepted))
  elementwise_primitives[name] = prim
  return prim


def family_naryop(name, accepted, result_dtype=None) -> Primitive:
  """An elementwise primitive with ``naryop``'s shape/dtype rule, of another family (the
  complex parts below, bits, special functions). Not entered in
  ``elementwise_primitives``: that table is the fixed set of this module's arithmetic
  primitives, which other modules enumerate by arity; each family registers its own
  batching and lowering."""
  prim = Primitive(name)
  prim.def_abstract_eval(naryop_abstract_eval(name, accepted, result_dtype))
  return prim


def _integer_pow_abstract_eval(x, *, y):
  out = naryop_abstract_eval("integer_pow", _num)(x)
  if y < 0 and dtypes.issubdtype(x.dtype, np.integer):
    raise TypeError(f"Integers cannot be raised to negative powers, got "
                    f"integer_pow({x.str_short()}, {y})")
  return out


_to_bool = lambda dtype: np.dtype(np.bool_)
_real_part = lambda dtype: np.finfo(dtype).dtype if dtypes.is_complex(dtype) else dtype

# -- unary
neg_p = naryop("neg", _num)
sign_p = naryop("sign", _num)
floor_p = naryop("floor", _float)
ceil_p = naryop("ceil", _float)
is_finite_p = naryop("is_finite", _float, _to_bool)
exp_p = naryop("exp", _inexact)
exp2_p = naryop("exp2", _inexact)
log_p = naryop("log", _inexact)
log1p_p = naryop("log1p", _inexact)
expm1_p = naryop("expm1", _inexact)
tanh_p = naryop("tanh", _inexact)
logistic_p = naryop("logistic", _inexact)
sin_p = naryop("sin", _inexact)
cos_p = naryop("cos", _inexact)
tan_p = naryop("tan", _inexact)
asin_p = naryop("asin", _inexact)
acos_p = naryop("acos", _inexact)
atan_p = naryop("atan", _inexact)
sinh_p = naryop("sinh", _inexact)
cosh_p = naryop("cosh", _inexact)
asinh_p = naryop("asinh", _inexact)
acosh_p = naryop("acosh", _inexact)
atanh_p = naryop("atanh", _inexact)
sqrt_p = naryop("sqrt", _inexact)
rsqrt_p = naryop("rsqrt", _inexact)
cbrt_p = naryop("cbrt", _float)
abs_p = naryop("abs", _signed + _inexact, _real_part)
not_p = naryop("not", _bool_or_int)
square_p = naryop("square", _num)
integer_pow_p = naryop("integer_pow", _num)
integer_pow_p.def_abstract_eval(_integer_pow_abstract_eval)
# eager's fast path skips the check of y, which only integers need
integer_pow_p.elementwise_dtypes = dtypes.numeric_dtypes_where(dtypes.is_inexact)
# -- binary
add_p = naryop("add", _num)
sub_p = naryop("sub", _num)
mul_p = naryop("mul", _num)
div_p = naryop("div", _num)
rem_p = naryop("rem", _int + _float)
pow_p = naryop("pow", _inexact)
max_p = naryop("max", _any)
min_p = naryop("min", _any)
atan2_p = naryop("atan2", _inexact)
nextafter_p = naryop("nextafter", _float)
and_p = naryop("and", _bool_or_int)
or_p = naryop("or", _bool_or_int)
xor_p = naryop("xor", _bool_or_int)
# (typed PRNG keys compare too: lax/prng.py's physical rule compares their data)
eq_p = naryop("eq", _any + (dtypes.prng_key,), _to_bool)
ne_p = naryop("ne", _any + (dtypes.prng_key,), _to_bool)
lt_p = naryop("lt", _ordered, _to_bool)
le_p = naryop("le", _ordered, _to_bool)
gt_p = naryop("gt", _ordered, _to_bool)
ge_p = naryop("ge", _ordered, _to_bool)


def _times_one(eqn, invars, producer, uses):
  # x * 1 is x, bit for bit, for every real dtype (NaNs and signed zeros included). Not for
  # complex: XLA's product of inf + 0j and 1 + 0j has a NaN imaginary part.
  out = eqn.outvars[0].aval
  if out.dtype.kind != "c":
    for one, x in (invars, invars[::-1]):
      if algebraic.is_one(one) and algebraic.same_type(x.aval, out):
        return x
  return None


algebraic.register(mul_p, _times_one)


# -- select_n: which (bool or int32) picks among cases
select_n_p = Primitive("select_n")


@select_n_p.def_abstract_eval
def _select_n_abstract_eval(which, *cases):
  if not cases:
    raise TypeError("select_n() must have at least one case")
  if any(c.shape != cases[0].shape or c.dtype != cases[0].dtype for c in cases):
    raise TypeError("select_n requires all cases to have the same dtype and shape, got "
                    + ", ".join(c.str_short() for c in cases))
  if which.dtype != np.bool_ and not dtypes.issubdtype(which.dtype, np.integer):
    raise TypeError(f"select_n `which` must be boolean or integer type, got {which.dtype}")
  if which.dtype == np.bool_ and len(cases) > 2:
    raise TypeError("select_n with a boolean `which` cannot have more than 2 cases")
  if which.shape and which.shape != cases[0].shape:
    raise TypeError("select_n `which` must be scalar or have the same shape as cases, got "
                    f"which shape {which.shape} but case shape {cases[0].shape}.")
  return ShapedArray(cases[0].shape, cases[0].dtype, all(c.weak_type for c in cases))


# -- clamp(min, x, max)
clamp_p = Primitive("clamp")


@clamp_p.def_abstract_eval
def _clamp_abstract_eval(lo, x, hi):
  _check_dtype("clamp", x.dtype, _any)
  for bound, name in ((lo, "min"), (hi, "max")):
    if bound.dtype != x.dtype:
      raise TypeError(f"clamp requires {name}.dtype == operand.dtype, got {bound.dtype.name} "
                      f"and {x.dtype.name}.")
    if bound.shape and bound.shape != x.shape:
      raise TypeError(f"clamp requires {name} to be a scalar or have the operand's shape "
                      f"{x.shape}, got {bound.shape}.")
  return x


def clamp(min, x, max):
  """``x`` limited to ``[min, max]`` elementwise (bounds scalar or of x's shape)."""
  return clamp_p.bind(min, x, max)


# -- convert_element_type
convert_element_type_p = Primitive("convert_element_type")


@convert_element_type_p.def_abstract_eval
def _convert_element_type_abstract_eval(operand, *, new_dtype, weak_type, sharding):
  return ShapedArray(operand.shape, new_dtype, weak_type)


staging.const_fold_rules[convert_element_type_p] = True
core.hidden_params[convert_element_type_p] = lambda k, v, p: k == "sharding" and v is None


# -- the user-facing lax functions
# Eagerly, on Arrays of a dtype the primitive accepts, they run its NumPy kernel at once:
# what bind reaches through EvalTrace._elementwise, without the three calls in between
# (W1 in benchmarks/README.md). Any trace, Tracer, other type, mixed dtypes or shapes, or
# a checking trace (core.direct_eval_trace is None under jax_debug_nans) goes to bind
# (core.direct_everywhere: see core.eager_everywhere).
_kernels = core.EvalTrace.impls
direct_functions: dict[Primitive, object] = {}   # primitive -> its lax function


def direct_unary(prim, fallback, positional_only=False):
  """A function of one operand that runs ``prim``'s kernel at once on an Array of a dtype
  ``prim`` accepts, eagerly; anything else goes to ``fallback`` (``prim.bind``, or jnp's
  promotion then bind). ``positional_only``: ``fun(x, /)``, as NumPy's ufuncs are."""
  def fun(x):
    if type(x) is Array and (core.direct_everywhere
                             or core._context.trace is core.direct_eval_trace):
      value = x._host
      if value is not None and value.dtype in prim.elementwise_dtypes:
        return Array(_kernels[prim](value), x.weak_type)
    return fallback(x)
  if positional_only:   # a new function of the same code with x positional-only
    fun = types.FunctionType(fun.__code__.replace(co_posonlyargcount=1), fun.__globals__,
                             fun.__name__, fun.__defaults__, fun.__closure__)
  return fun


# The transcendental functions that take JAX's ``accuracy``: a param of the primitive that
# the XLA lowering passes on as the op's ``result_accuracy``.
accuracy_primitives = (exp_p, exp2_p, log_p, log1p_p, expm1_p, tanh_p, logistic_p, sin_p,
                       cos_p, tan_p, sqrt_p, rsqrt_p, cbrt_p)
_ACCURACY_DOC = """

Parameters
----------
x : array of a floating or complex type
accuracy : lax.Tolerance or lax.AccuracyMode, optional
  The accuracy XLA's implementation must reach (``result_accuracy`` in the StableHLO).
  Where XLA has one implementation, as on the CPU, and in tier 0, it changes nothing.
"""


for _p in accuracy_primitives:
  core.hidden_params[_p] = lambda k, v, params: v is None   # as JAX prints them


def _accepting_accuracy(prim):
  """The lax function of a primitive with an ``accuracy`` param: without one, the direct
  kernel call; with one, a bind that carries it."""
  direct = direct_unary(prim, lambda x: prim.bind(x, accuracy=None))

  def fun(x, *, accuracy=None):
    if accuracy is None:
      return direct(x)
    return prim.bind(x, accuracy=check_accuracy(accuracy))
  return fun


def _unary(prim):
  accurate = prim in accuracy_primitives
  fun = _accepting_accuracy(prim) if accurate else direct_unary(prim, prim.bind)
  fun.__name__ = fun.__qualname__ = prim.name   # printed in jaxprs as JAX's are
  fun.__doc__ = (f"Elementwise ``{prim.name}`` (the ``{prim.name}`` primitive)."
                 + (_ACCURACY_DOC if accurate else ""))
  direct_functions[prim] = fun
  return fun


def _binary(prim):
  def fun(x, y):
    if (type(x) is Array and type(y) is Array
        and (core.direct_everywhere or core._context.trace is core.direct_eval_trace)):
      a, b = x._host, y._host   # None: the value is on a device
      if (a is not None and b is not None and a.dtype in prim.elementwise_dtypes
          and b.dtype == a.dtype and (a.shape == b.shape or not a.ndim or not b.ndim)):
        return Array(_kernels[prim](a, b), x.weak_type and y.weak_type)
    return prim.bind(x, y)
  fun.__name__ = fun.__qualname__ = prim.name   # printed in jaxprs as JAX's are
  fun.__doc__ = f"Elementwise ``{prim.name}`` of two arrays of one dtype."
  direct_functions[prim] = fun
  return fun


(neg, sign, floor, ceil, is_finite, exp, exp2, log, log1p, expm1, tanh, logistic, sin, cos,
 tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh, sqrt, rsqrt, cbrt, abs, bitwise_not,
 square) = map(_unary, [
     neg_p, sign_p, floor_p, ceil_p, is_finite_p, exp_p, exp2_p, log_p, log1p_p, expm1_p,
     tanh_p, logistic_p, sin_p, cos_p, tan_p, asin_p, acos_p, atan_p, sinh_p, cosh_p,
     asinh_p, acosh_p, atanh_p, sqrt_p, rsqrt_p, cbrt_p, abs_p, not_p, square_p])
(add, sub, mul, div, rem, pow, max, min, atan2, nextafter, bitwise_and, bitwise_or,
 bitwise_xor, eq, ne, lt, le, gt, ge) = map(_binary, [
     add_p, sub_p, mul_p, div_p, rem_p, pow_p, max_p, min_p, atan2_p, nextafter_p, and_p,
     or_p, xor_p, eq_p, ne_p, lt_p, le_p, gt_p, ge_p])

for _fun, _name in ((bitwise_not, "bitwise_not"), (bitwise_and, "bitwise_and"),
                    (bitwise_or, "bitwise_or"), (bitwise_xor, "bitwise_xor")):
  _fun.__name__ = _fun.__qualname__ = _name   # the primitives are not, and, or, xor


def integer_pow(x, y: int):
  """``x ** y`` for a static Python integer ``y``."""
  return integer_pow_p.bind(x, y=int(y))


def select_n(which, *cases):
  """Pick, elementwise, ``cases[which]`` (``which`` boolean or integer)."""
  return select_n_p.bind(which, *cases)


def select(pred, on_true, on_false):
  """``on_true`` where ``pred`` else ``on_false`` (``select_n(pred, on_false, on_true)``)."""
  return select_n_p.bind(pred, on_false, on_true)


def convert_element_type(operand, new_dtype):
  """Cast ``operand`` to ``new_dtype`` (canonicalised; the result is not weakly typed)."""
  return _convert_element_type(operand, new_dtype, weak_type=False)


def _convert_element_type(operand, new_dtype, weak_type=False):
  new_dtype = dtypes.canonicalize_dtype(new_dtype, True)   # (a key<fry> too: keys to keys)
  aval = core.get_aval(operand)
  # as JAX: only an Array (or tracer) comes back as it is; a NumPy array or a Python
  # scalar becomes an Array of its own
  if (aval.dtype == new_dtype and aval.weak_type == weak_type
      and isinstance(operand, (Array, core.Tracer))):
    return operand
  return convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=weak_type,
                                     sharding=None)


# -- differentiation: one line per primitive, in lax ops so that rules trace and nest
from jaxlite._src.transforms import ad  # noqa: E402
from jaxlite._src.transforms import lax_ops  # noqa: E402
from jaxlite._src.transforms.lax_ops import unbroadcast  # noqa: E402


def _const(x, value):
  """A scalar of ``x``'s dtype (weak, so it never widens ``x``)."""
  return Array(np.array(value, core.get_aval(x).dtype), True)


for _p in (sign_p, floor_p, ceil_p, is_finite_p, not_p, and_p, or_p, xor_p, eq_p, ne_p,
           lt_p, le_p, gt_p, ge_p):
  ad.defzero(_p)
ad.defunsupported(nextafter_p, "(JAX gives nextafter no derivative)")

# The rules of the primitives with an ``accuracy`` param keep it where JAX's grad does: in
# cos's derivative and in the HIGHEST forms of expm1, tanh and logistic, which avoid the
# cancellation of ans + 1 and 1 - ans. (sin's drops it, as JAX's linearization of sin
# does; JAX's jvp of sin alone keeps it.)
ad.defjvp2(exp_p, lambda g, ans, x, **_: mul(g, ans))
ad.defjvp2(exp2_p, lambda g, ans, x, **_: mul(log(_const(x, 2)), mul(g, ans)))
ad.defjvp(log_p, lambda g, x, **_: div(g, x))
ad.defjvp(log1p_p, lambda g, x, **_: div(g, add(x, _const(x, 1))))


def _expm1_jvp(g, ans, x, accuracy=None):
  if accuracy is AccuracyMode.HIGHEST:
    return mul(g, exp(x, accuracy=accuracy))
  return mul(g, add(ans, _const(ans, 1)))


def _tanh_jvp(g, ans, x, accuracy=None):
  if accuracy is AccuracyMode.HIGHEST:   # 4 logistic(2x) logistic(-2x)
    return mul(g, mul(_const(x, 4), mul(logistic(mul(_const(x, 2), x), accuracy=accuracy),
                                        logistic(mul(_const(x, -2), x), accuracy=accuracy))))
  # (g + g ans) (1 - ans), in JAX's order so that grad jaxprs print alike
  return mul(ad.add_tangents(g, mul(g, ans)), sub(_const(x, 1), ans))


def _logistic_jvp(g, ans, x, accuracy=None):
  if accuracy is AccuracyMode.HIGHEST:   # 1 - logistic(x) is logistic(-x)
    return mul(g, mul(ans, logistic(neg(x))))
  return mul(g, mul(ans, sub(_const(ans, 1), ans)))


ad.defjvp2(expm1_p, _expm1_jvp)
ad.defjvp2(tanh_p, _tanh_jvp)
ad.defjvp2(logistic_p, _logistic_jvp)
ad.defjvp(sin_p, lambda g, x, **_: mul(g, cos(x)))
ad.defjvp(cos_p, lambda g, x, accuracy=None: neg(mul(g, sin(x, accuracy=accuracy))))
ad.defjvp2(tan_p, lambda g, ans, x, **_: mul(g, add(_const(x, 1), square(ans))))
ad.defjvp(asin_p, lambda g, x: mul(g, rsqrt(sub(_const(x, 1), square(x)))))
ad.defjvp(acos_p, lambda g, x: mul(g, neg(rsqrt(sub(_const(x, 1), square(x))))))
ad.defjvp(atan_p, lambda g, x: div(g, add(_const(x, 1), square(x))))
ad.defjvp(sinh_p, lambda g, x: mul(g, cosh(x)))
ad.defjvp(cosh_p, lambda g, x: mul(g, sinh(x)))
ad.defjvp(asinh_p, lambda g, x: mul(g, rsqrt(add(square(x), _const(x, 1)))))
ad.defjvp(acosh_p, lambda g, x: mul(g, rsqrt(sub(square(x), _const(x, 1)))))
ad.defjvp(atanh_p, lambda g, x: mul(integer_pow(add(_const(x, 1), x), -1),
                                    div(g, sub(_const(x, 1), x))))
ad.defjvp2(sqrt_p, lambda g, ans, x, **_: mul(g, div(_const(x, 0.5), ans)))
ad.defjvp2(rsqrt_p, lambda g, ans, x, **_: mul(g, mul(_const(x, -0.5), div(ans, x))))
ad.defjvp2(cbrt_p, lambda g, ans, x, **_: mul(g, mul(_const(x, 1 / 3),
                                                     integer_pow(ans, -2))))


def _abs_jvp(g, ans, x):
  if not dtypes.is_complex(core.get_aval(x).dtype):
    # +g at 0 (not 0 as sign would give), as JAX's select(x >= 0, g, -g)
    return select(ge(x, _const(x, 0)), g, neg(g))
  # d|z| = Re(g conj(z) / |z|), with |z| = 0 replaced by 1
  ans = convert_element_type(ans, core.get_aval(x).dtype)
  return real(mul(g, div(conj(x), _replace_zero(ans))))


ad.defjvp2(abs_p, _abs_jvp)
ad.defjvp(square_p, lambda g, x: mul(g, mul(_const(x, 2), x)))


def _integer_pow_jvp(g, x, *, y):
  if y == 0:
    return _full_like(g, 0)
  if y == 1:
    return g
  return mul(g, mul(_const(x, y), x if y == 2 else integer_pow(x, y - 1)))


ad.defjvp(integer_pow_p, _integer_pow_jvp)


def _pow_jvp_base(g, ans, x, y):
  # as JAX: both operands in the result dtype (strongly typed), and for an integer
  # exponent the slope y x**(y-1) is 0 where y == 0 (even at x == 0)
  dtype = core.get_aval(ans).dtype
  y_is_int = dtypes.is_integer(core.get_aval(y).dtype)
  x, y = convert_element_type(x, dtype), convert_element_type(y, dtype)
  if y_is_int:
    x, y = broadcast_to_common_shape(x, y)
    slope = select(eq(y, _const(y, 0)), _full_like(y, 0),
                   mul(_replace_zero(y), pow(x, sub(y, _full_like(y, 1)))))
  else:
    slope = mul(y, pow(x, sub(y, _full_like(y, 1))))
  return mul(g, slope)


def _pow_jvp_exponent(g, ans, x, y):
  # d/dy x**y = log(x) x**y, taken as 0 at x == 0 (not nan)
  return convert_element_type(mul(g, mul(log(_replace_zero(x)), ans)),
                              core.get_aval(y).dtype)


ad.defjvp2(pow_p, _pow_jvp_base, _pow_jvp_exponent)
ad.defjvp(add_p, lambda g, x, y: g, lambda g, x, y: g)
ad.defjvp(sub_p, lambda g, x, y: g, lambda g, x, y: neg(g))
ad.defjvp(mul_p, lambda g, x, y: mul(g, y), lambda g, x, y: mul(x, g))
ad.defjvp(div_p, lambda g, x, y: div(g, y),
          lambda g, x, y: mul(mul(neg(g), x), integer_pow(y, -2)))
ad.defjvp(rem_p, lambda g, x, y: g,
          lambda g, x, y: mul(neg(g), mul(sign(div(x, y)), floor(abs(div(x, y))))))
ad.defjvp(atan2_p,
          lambda g, x, y: mul(g, div(y, add(square(x), square(y)))),
          lambda g, x, y: mul(g, div(neg(x), add(square(x), square(y)))))
# max/min: the gradient goes to the winner, split evenly on ties (as JAX does)
ad.defjvp2(max_p, lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
           lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)))
ad.defjvp2(min_p, lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
           lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)))


def _full_like(x, value):
  """``value`` in ``x``'s shape and dtype, weakly typed if ``x`` is (JAX's full_like)."""
  aval = core.get_aval(x)
  return broadcast_like(Array(np.array(value, aval.dtype), aval.weak_type), x)


def _replace_zero(x):
  return select(eq(x, _const(x, 0)), _full_like(x, 1), x)


def broadcast_like(scalar, x):
  return lax_ops.broadcast_to_shape(scalar, core.get_aval(x).shape)


def broadcast_to_common_shape(x, y):
  shape = np.broadcast_shapes(core.get_aval(x).shape, core.get_aval(y).shape)
  return lax_ops.broadcast_to_shape(x, shape), lax_ops.broadcast_to_shape(y, shape)


def _balanced_eq(x, z, y):
  """1 where ``x`` alone attains ``z``, 1/2 where ``x`` and ``y`` tie, else 0."""
  return div(select(eq(x, z), _full_like(z, 1), _full_like(z, 0)),
             select(eq(y, z), _full_like(z, 2), _full_like(z, 1)))


# -- linear primitives and their transposes
ad.deflinear2(neg_p, lambda ct, x: [neg(ct)])


def _add_transpose(ct, x, y):
  return [unbroadcast(x.aval, ct) if ad.is_undefined(x) else None,
          unbroadcast(y.aval, ct) if ad.is_undefined(y) else None]


def _sub_transpose(ct, x, y):
  return [unbroadcast(x.aval, ct) if ad.is_undefined(x) else None,
          unbroadcast(y.aval, neg(ct)) if ad.is_undefined(y) else None]


def _mul_transpose(ct, x, y):
  if ad.is_undefined(x):
    return [unbroadcast(x.aval, mul(ct, y)), None]
  return [None, unbroadcast(y.aval, mul(x, ct))]


def _div_transpose(ct, x, y):
  return [unbroadcast(x.aval, div(ct, y)), None]


ad.transpose_rules[add_p] = _add_transpose
ad.transpose_rules[sub_p] = _sub_transpose
ad.transpose_rules[mul_p] = _mul_transpose
ad.transpose_rules[div_p] = _div_transpose


def _select_n_jvp(primals, tangents):
  which, *cases = primals
  out = select_n(which, *cases)
  case_tangents = tangents[1:]
  if all(type(t) is ad.Zero for t in case_tangents):
    return out, ad.Zero(ad.tangent_aval(core.get_aval(out)))
  return out, select_n(which, *[ad.instantiate(t) for t in case_tangents])


def _select_n_transpose(ct, which, *cases):
  zeros = ad.zeros_like_aval(core.get_aval(ct))
  return [None] + [select_n(which, *[ct if j == i else zeros for j in range(len(cases))])
                   if ad.is_undefined(c) else None for i, c in enumerate(cases)]


ad.jvp_rules[select_n_p] = _select_n_jvp
ad.transpose_rules[select_n_p] = _select_n_transpose


def _convert_element_type_jvp(primals, tangents, *, new_dtype, weak_type, sharding):
  (x,), (t,) = primals, tangents
  out = convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type,
                                    sharding=sharding)
  out_aval = ad.tangent_aval(core.get_aval(out))
  if type(t) is ad.Zero or not dtypes.is_inexact(new_dtype) or \
      not dtypes.is_inexact(core.get_aval(x).dtype):
    return out, ad.Zero(out_aval)
  return out, convert_element_type_p.bind(t, new_dtype=new_dtype, weak_type=weak_type,
                                          sharding=sharding)


def _convert_element_type_transpose(ct, operand, *, new_dtype, weak_type, sharding):
  aval = operand.aval
  return [convert_element_type_p.bind(ct, new_dtype=aval.dtype, weak_type=aval.weak_type,
                                      sharding=None)]


ad.jvp_rules[convert_element_type_p] = _convert_element_type_jvp
ad.transpose_rules[convert_element_type_p] = _convert_element_type_transpose


def _zeros_where(pred, g):
  return select(pred, g, _full_like(g, 0))


# as JAX: strict comparisons, so at a bound that ``x`` reaches no operand gets the gradient
ad.defjvp(clamp_p,
          lambda g, lo, x, hi: _zeros_where(bitwise_and(gt(lo, x), lt(lo, hi)),
                                            broadcast_like(g, x)),
          lambda g, lo, x, hi: _zeros_where(bitwise_and(gt(x, lo), lt(x, hi)), g),
          lambda g, lo, x, hi: _zeros_where(lt(hi, x), broadcast_like(g, x)))


# -- batching (vmap): elementwise primitives map over the batch axis as over any other
from jaxlite._src.transforms import batching  # noqa: E402

for _p in elementwise_primitives.values():
  batching.defbroadcasting(_p)
algebraic.scalar_operands.update(elementwise_primitives.values())
batching.defvectorized(convert_element_type_p)


def _select_n_batcher(vals, dims):
  # `which` may be a scalar per example but the cases may not broadcast: every case is
  # given the batch axis (a broadcast if unbatched), and a batched scalar `which` too.
  which, *cases = vals
  wd, *cds = dims
  w_ndim, c_ndim = core.get_aval(which).ndim, core.get_aval(cases[0]).ndim
  if cds[0] is not None and all(d == cds[0] for d in cds) and (
      wd is None and not w_ndim or wd == cds[0] and w_ndim == c_ndim):
    return select_n(which, *cases), cds[0]
  size = batching.batch_size(vals, dims)
  cases = [batching.bdim_at_front(c, d, size) for c, d in zip(cases, cds)]
  shape = core.get_aval(cases[0]).shape
  if wd is None:
    if w_ndim:
      which = batching.broadcast(which, size, 0)
  else:
    which = batching.moveaxis(which, wd, 0)
    if w_ndim == 1 and len(shape) > 1:  # a scalar per example
      which = lax_ops.broadcast_in_dim(which, shape, (0,))
  return select_n(which, *cases), 0


batching.batching_rules[select_n_p] = _select_n_batcher


def _clamp_batcher(vals, dims):
  # Bounds are scalars or of the operand's shape (no size-1 broadcasting), so a bound
  # that is a scalar per example is broadcast to the operand's shape.
  (lo, x, hi), (ld, xd, hd) = vals, dims
  if ld is None and hd is None and not core.get_aval(lo).ndim and not core.get_aval(hi).ndim:
    return clamp(lo, x, hi), xd
  size = batching.batch_size(vals, dims)
  x = batching.bdim_at_front(x, xd, size)
  shape = core.get_aval(x).shape

  def bound(b, d):
    if d is None:
      return batching.broadcast(b, size, 0) if core.get_aval(b).ndim else b
    b = batching.moveaxis(b, d, 0)
    if core.get_aval(b).ndim == len(shape):
      return b
    return lax_ops.broadcast_in_dim(b, shape, (0,))
  return clamp(bound(lo, ld), x, bound(hi, hd)), 0


batching.batching_rules[clamp_p] = _clamp_batcher


# -- the parts of complex numbers (abs's complex JVP above uses real and conj)
_complex_of = {np.dtype(np.float32): np.dtype(np.complex64),
               np.dtype(np.float64): np.dtype(np.complex128)}
real_p = family_naryop("real", _complex, _real_part)
imag_p = family_naryop("imag", _complex, _real_part)
# as JAX: only the float types that are parts of a complex type (not float16/bfloat16)
_complex_parts = (np.float32, np.float64)
complex_p = family_naryop("complex", _complex_parts, _complex_of.__getitem__)
conj_p = Primitive("conj")


@conj_p.def_abstract_eval
def _conj_abstract_eval(x, *, input_dtype):
  _check_dtype("conj", x.dtype, _complex_parts + _complex)
  dtype = x.dtype if dtypes.is_complex(x.dtype) else _complex_of[x.dtype]
  return ShapedArray(x.shape, dtype, x.weak_type)


def real(x):
  """The real part of a complex array."""
  return real_p.bind(x)


def imag(x):
  """The imaginary part of a complex array."""
  return imag_p.bind(x)


def complex(x, y):  # noqa: A001 (lax's name)
  """``x + 1j * y`` from two float arrays of one dtype."""
  return complex_p.bind(x, y)


def conj(x):
  """The complex conjugate; a float array becomes complex."""
  return conj_p.bind(x, input_dtype=core.get_aval(x).dtype)


def _zeros_like(x):
  return broadcast_like(_const(x, 0), x)


ad.deflinear2(real_p, lambda ct, x: [complex(ct, _zeros_like(ct))])
ad.deflinear2(imag_p, lambda ct, x: [complex(_zeros_like(ct), neg(ct))])
ad.deflinear2(complex_p, lambda ct, x, y: [real(ct) if ad.is_undefined(x) else None,
                                          neg(imag(ct)) if ad.is_undefined(y) else None])
ad.deflinear2(conj_p, lambda ct, x, *, input_dtype: [
    conj(ct) if dtypes.is_complex(input_dtype) else real(ct)])
batching.defbroadcasting(complex_p)
for _p in (real_p, imag_p, conj_p):
  batching.defvectorized(_p)
