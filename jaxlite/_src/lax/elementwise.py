"""Elementwise primitives: arithmetic, math functions, comparisons, selection, casts.

Operands of an elementwise primitive share one dtype and have equal shapes, except that
a dimension of size 1 or a rank-0 operand broadcasts (as JAX's lax allows).

Each arithmetic primitive is one ``ElementwiseSpec`` row of the table below: its dtypes,
NumPy kernel, tier-0 template, StableHLO op, NaN behaviour and JVP. This module makes the
primitive, its lax function and its autodiff and batching rules from the row; the
backends derive their tables from ``specs``, and checkify its NaN checks.
"""
from __future__ import annotations

import dataclasses
import types
import warnings
from typing import Callable

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.core import extended
from jaxlite._src.base import dtypes
from jaxlite._src.core.array import Array
from jaxlite._src.core.core import QUIET_FILTER, Primitive, ShapedArray
from jaxlite._src.lax import complex_math as cmath
from jaxlite._src.lax import kernels
from jaxlite._src.lax.precision import AccuracyMode, check_accuracy
from jaxlite._src.passes import algebraic
from jaxlite._src.transforms import ad
from jaxlite._src.transforms import batching
from jaxlite._src.transforms import lax_ops
from jaxlite._src.transforms import staging
from jaxlite._src.transforms.lax_ops import unbroadcast

_bool = (np.bool_,)
_int = (np.integer,)
_float = (np.floating,)
_complex = (np.complexfloating,)
# (in the order JAX's dtype errors list them)
_num = _int + _float + _complex
_inexact = _float + _complex
_any = _int + _bool + _float + _complex
_bool_or_int = _int + _bool
_ordered = _int + _float + _bool
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


_FLOAT0_HELP = (
    "float0s do not support any operations by design, because they are not compatible "
    "with non-trivial vector spaces. No implicit dtype conversion is done. You can use "
    "np.zeros_like(arr, dtype=np.float) to cast a float0 array to a regular zeros array. "
    "\nIf you didn't expect to get a float0 you might have accidentally taken a gradient "
    "with respect to an integer argument.")


def _check_dtype(name, dtype, accepted, position=None):
  if dtype == dtypes.float0:   # (JAX's message: a tangent of an integer reached an op)
    where = "a float0 array" if position is None else f"a float0 at position {position}"
    raise TypeError(f"Called {name} with {where}. {_FLOAT0_HELP}")
  if not any(dtypes.issubdtype(dtype, c) for c in accepted):
    names = ", ".join(_CLASS_NAMES.get(c) or np.dtype(c).name for c in accepted)
    if position is None:   # (a unary op; an n-ary one names the position, as JAX's)
      raise TypeError(f"{name} does not accept dtype {dtype.name}. "
                      f"Accepted dtypes are subtypes of {names}.")
    raise TypeError(f"{name} does not accept dtype {dtype.name} at position {position}. "
                    f"Accepted dtypes at position {position} are subtypes of {names}.")


def naryop_abstract_eval(name, accepted, result_dtype=None, narrow_ints=True,
                         operand_dtypes=None):
  """The shape/dtype rule shared by every elementwise primitive (``narrow_ints``: whether
  it takes int2, int4, uint2 and uint4, as JAX's ``supports_narrow_ints``;
  ``operand_dtypes(*dtypes)``: the result dtype of operands that need not share one,
  raising for those refused, in place of ``accepted`` and the same-dtype rule)."""
  def rule(*avals, **params):
    if operand_dtypes is not None:
      shape = broadcast_shapes(name, [a.shape for a in avals])
      return ShapedArray(shape, operand_dtypes(*(a.dtype for a in avals)),
                         all(a.weak_type for a in avals))
    for i, a in enumerate(avals):
      _check_dtype(name, a.dtype, accepted, i if len(avals) > 1 else None)
      if not narrow_ints and dtypes.is_narrow(a.dtype) and dtypes.is_integer(a.dtype):
        raise TypeError(f"{name} does not accept dtype {a.dtype.name}. Support for "
                        "narrow-width integers is platform-dependent and limited to a few "
                        "specific operations, e.g. basic arithmetic and type casting.")
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


def family_naryop(name, accepted, result_dtype=None) -> Primitive:
  """An elementwise primitive with the shape/dtype rule of the table's, of another family
  (the complex parts below, bits, special functions). Not entered in
  ``elementwise_primitives``: that table is the fixed set of this module's arithmetic
  primitives, which other modules enumerate by arity; each family registers its own
  batching and lowering."""
  prim = Primitive(name)
  prim.def_abstract_eval(naryop_abstract_eval(name, accepted, result_dtype))
  family_primitives.append(prim)
  return prim


family_primitives: list = []   # the elementwise primitives of other families (sharding)


_to_bool = lambda dtype: np.dtype(np.bool_)
_real_part = lambda dtype: np.finfo(dtype).dtype if dtypes.is_complex(dtype) else dtype

ZERO = "zero"   # the ``jvp`` of a piecewise constant primitive: its tangent is zero


@dataclasses.dataclass(frozen=True)
class ElementwiseSpec:
  """One elementwise primitive: all that any layer needs to know of it.

  Attributes
  ----------
  name : the primitive's, as JAX's (jaxprs print it)
  arity : the number of operands
  accepted : the dtype classes the operands may have
  kernel : the NumPy kernel, on real operands (on all, without ``complex_kernel``)
  complex_kernel : the kernel on complex operands (XLA's special values), or None
  result_dtype : operand dtype -> result dtype; None: the operand's
  keeps_dtype : the kernel gives the result dtype on every accepted dtype but the narrow
    ones (no cast after; the general path casts those)
  narrow_ints : takes int2, int4, uint2 and uint4 (JAX's ``supports_narrow_ints``)
  operand_dtypes : ``fn(*dtypes) -> result dtype`` where the operands need not share a
    dtype (pow's integer exponent), raising for refused ones; replaces ``accepted``'s
    check and ``result_dtype``
  template : tier 0's direct form, NumPy source over ``{0}, {1}`` in which ``_np`` is
    NumPy and ``_<name>`` the kernel, taking ``out=``; or None
  template_kinds : the operand dtype kinds the template serves (None: all); on the
    others the kernel runs, with XLA's rules (integer division, complex special values)
  lowering : the StableHLO op; None where the XLA backend has a rule of its own
  accuracy : takes JAX's ``accuracy`` param, the op's ``result_accuracy``
  may_nan : may make a NaN of non-NaN operands (checkify checks its outputs)
  jvp : one rule per operand, ``fn(g, *operands, **params)`` (``fn(g, ans, *operands,
    **params)`` with ``jvp_ans``, ``ans`` the primal output); or ``ZERO``; or the reason
    the primitive has no derivative, which grad raises with
  transpose : ``fn(ct, *operands)`` -> the operands' cotangents; with no ``jvp``, the
    primitive is linear
  function : the lax function's name, where it is not ``name``
  """
  name: str
  arity: int
  accepted: tuple
  kernel: Callable
  complex_kernel: Callable | None = None
  result_dtype: Callable | None = None
  keeps_dtype: bool = False
  narrow_ints: bool = True
  operand_dtypes: Callable | None = None
  template: str | None = None
  template_kinds: str | None = None
  lowering: str | None = None
  accuracy: bool = False
  may_nan: bool = False
  jvp: tuple | str | None = None
  jvp_ans: bool = False
  transpose: Callable | None = None
  function: str | None = None


# primitive -> its spec: what the backends and checkify derive their tables from
specs: dict[Primitive, ElementwiseSpec] = {}


def define(spec: ElementwiseSpec) -> Primitive:
  """The primitive of ``spec``, with its shape rule, JVP, transpose and batching rule."""
  prim = Primitive(spec.name)
  rule = naryop_abstract_eval(spec.name, spec.accepted, spec.result_dtype, spec.narrow_ints,
                              spec.operand_dtypes)
  prim.def_abstract_eval(rule)
  # (narrow dtypes take the general path, which casts the kernels' wider results back)
  prim.elementwise_dtypes = dtypes.numeric_dtypes_where(
      lambda d: not dtypes.is_narrow(d) and any(dtypes.issubdtype(d, c)
                                                for c in spec.accepted))
  elementwise_primitives[spec.name] = prim
  specs[prim] = spec
  if spec.accuracy:
    core.hidden_params[prim] = lambda k, v, params: v is None   # as JAX prints them
  if spec.jvp == ZERO:
    ad.defzero(prim)
  elif isinstance(spec.jvp, str):
    ad.defunsupported(prim, spec.jvp)
  elif spec.jvp is not None:
    ad.defjvp(prim, *spec.jvp, pass_ans=spec.jvp_ans)
  if spec.transpose is not None and spec.jvp is None:
    ad.deflinear2(prim, spec.transpose)
  elif spec.transpose is not None:
    ad.transpose_rules[prim] = spec.transpose
  # vmap maps over the batch axis as over any other
  batching.defbroadcasting(prim)
  algebraic.scalar_operands.add(prim)
  return prim


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
        try:   # (NumPy's nan/inf warnings: see core.QUIET_FILTER)
          if warnings.filters[0] is not QUIET_FILTER:
            core.keep_kernels_quiet()
        except IndexError:
          core.keep_kernels_quiet()
        return Array(_kernels[prim](value), x.weak_type)
    return fallback(x)
  if positional_only:   # a new function of the same code with x positional-only
    fun = types.FunctionType(fun.__code__.replace(co_posonlyargcount=1), fun.__globals__,
                             fun.__name__, fun.__defaults__, fun.__closure__)
  return fun


_ACCURACY_DOC = """

Parameters
----------
x : array of a floating or complex type
accuracy : lax.Tolerance or lax.AccuracyMode, optional
  The accuracy XLA's implementation must reach (``result_accuracy`` in the StableHLO).
  Where XLA has one implementation, as on the CPU, and in tier 0, it changes nothing.
"""


def _accepting_accuracy(prim):
  """The lax function of a primitive with an ``accuracy`` param: without one, the direct
  kernel call; with one, a bind that carries it."""
  direct = direct_unary(prim, lambda x: prim.bind(x, accuracy=None))

  def fun(x, *, accuracy=None):
    if accuracy is None:
      return direct(x)
    return prim.bind(x, accuracy=check_accuracy(accuracy))
  return fun


def _unary_function(prim):
  accurate = specs[prim].accuracy
  fun = _accepting_accuracy(prim) if accurate else direct_unary(prim, prim.bind)
  fun.__doc__ = (f"Elementwise ``{prim.name}`` (the ``{prim.name}`` primitive)."
                 + (_ACCURACY_DOC if accurate else ""))
  return fun


def _binary_function(prim):
  def fun(x, y):
    if (type(x) is Array and type(y) is Array
        and (core.direct_everywhere or core._context.trace is core.direct_eval_trace)):
      a, b = x._host, y._host   # None: the value is on a device
      if (a is not None and b is not None and a.dtype in prim.elementwise_dtypes
          and b.dtype == a.dtype and (a.shape == b.shape or not a.ndim or not b.ndim)):
        try:   # (NumPy's nan/inf warnings: see core.QUIET_FILTER)
          if warnings.filters[0] is not QUIET_FILTER:
            core.keep_kernels_quiet()
        except IndexError:
          core.keep_kernels_quiet()
        return Array(_kernels[prim](a, b), x.weak_type and y.weak_type)
    return prim.bind(x, y)
  fun.__doc__ = f"Elementwise ``{prim.name}`` of two arrays of one dtype."
  return fun


def _with_function(spec):
  """The primitive of ``spec`` and its lax function."""
  prim = define(spec)
  fun = (_unary_function if spec.arity == 1 else _binary_function)(prim)
  fun.__name__ = fun.__qualname__ = spec.function or prim.name   # printed in jaxprs
  direct_functions[prim] = fun
  return prim, fun


def unary(name, accepted, kernel, complex_kernel=None, *, jvp=None, **fields):
  """A primitive of one operand and its lax function (``jvp``: one rule, or a marker)."""
  jvp = (jvp,) if callable(jvp) else jvp
  return _with_function(ElementwiseSpec(name, 1, accepted, kernel, complex_kernel,
                                        jvp=jvp, **fields))


def binary(name, accepted, kernel, complex_kernel=None, **fields):
  """A primitive of two operands and its lax function."""
  return _with_function(ElementwiseSpec(name, 2, accepted, kernel, complex_kernel,
                                        **fields))


# -- the derivatives too long for a row of the table, in lax ops so that they trace and
# nest. Those of the primitives with an ``accuracy`` param keep it where JAX's grad does:
# in cos's derivative and in the HIGHEST forms of expm1, tanh and logistic, which avoid
# the cancellation of ans + 1 and 1 - ans. (sin's drops it, as JAX's linearization of sin
# does; JAX's jvp of sin alone keeps it.)
def _const(x, value):
  """A scalar of ``x``'s dtype (weak, so it never widens ``x``)."""
  return Array(np.array(value, core.get_aval(x).dtype), True)


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


def _abs_jvp(g, ans, x):
  if not dtypes.is_complex(core.get_aval(x).dtype):
    # +g at 0 (not 0 as sign would give), as JAX's select(x >= 0, g, -g)
    return select(ge(x, _const(x, 0)), g, neg(g))
  # d|z| = Re(g conj(z) / |z|), with |z| = 0 replaced by 1
  ans = convert_element_type(ans, core.get_aval(x).dtype)
  return real(mul(g, div(conj(x), _replace_zero(ans))))


def _integer_pow_jvp(g, x, *, y):
  if y == 0:
    return _full_like(g, 0)
  if y == 1:
    return g
  return mul(g, mul(_const(x, y), x if y == 2 else integer_pow(x, y - 1)))


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


# max/min: the gradient goes to the winner, split evenly on ties (as JAX does)
_MINMAX_JVP = (lambda g, ans, x, y: mul(g, _balanced_eq(x, ans, y)),
               lambda g, ans, x, y: mul(g, _balanced_eq(y, ans, x)))


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


# -- the table: one row per primitive. Kernels without a complex variant take complex
# operands too where the primitive accepts them; ``keeps_dtype`` is checked for every
# row by tests/test_fast_paths.py, ``template`` by tests/test_codegen_templates.py.
neg_p, neg = unary(
    "neg", _num, np.negative, keeps_dtype=True, template="_np.negative({0})",
    lowering="stablehlo.negate", transpose=lambda ct, x: [neg(ct)])
sign_p, sign = unary("sign", _num, kernels.sign, cmath.sign, jvp=ZERO)
floor_p, floor = unary("floor", _float, np.floor, keeps_dtype=True,
                       lowering="stablehlo.floor", jvp=ZERO)
ceil_p, ceil = unary("ceil", _float, np.ceil, keeps_dtype=True, lowering="stablehlo.ceil",
                     jvp=ZERO)
is_finite_p, is_finite = unary("is_finite", _float, np.isfinite, result_dtype=_to_bool,
                               keeps_dtype=True, lowering="stablehlo.is_finite", jvp=ZERO)
exp_p, exp = unary(
    "exp", _inexact, kernels.exp, cmath.exp, template="_exp({0})", template_kinds="f",
    lowering="stablehlo.exponential", accuracy=True, may_nan=True,
    jvp=lambda g, ans, x, **_: mul(g, ans), jvp_ans=True)
exp2_p, exp2 = unary(
    "exp2", _inexact, kernels.exp2, cmath.exp2, accuracy=True,
    jvp=lambda g, ans, x, **_: mul(log(_const(x, 2)), mul(g, ans)), jvp_ans=True)
log_p, log = unary(
    "log", _inexact, kernels.log, cmath.log, template="_log({0})", template_kinds="f",
    lowering="stablehlo.log", accuracy=True, may_nan=True,
    jvp=lambda g, x, **_: div(g, x))
log1p_p, log1p = unary(
    "log1p", _inexact, kernels.log1p, cmath.log1p, template="_log1p({0})",
    template_kinds="f", lowering="stablehlo.log_plus_one", accuracy=True, may_nan=True,
    jvp=lambda g, x, **_: div(g, add(x, _const(x, 1))))
expm1_p, expm1 = unary(
    "expm1", _inexact, kernels.expm1, cmath.expm1,
    lowering="stablehlo.exponential_minus_one", accuracy=True, may_nan=True,
    jvp=_expm1_jvp, jvp_ans=True)
tanh_p, tanh = unary(
    "tanh", _inexact, np.tanh, keeps_dtype=True, template="_np.tanh({0})",
    lowering="stablehlo.tanh", accuracy=True, may_nan=True, jvp=_tanh_jvp, jvp_ans=True)
logistic_p, logistic = unary(
    "logistic", _inexact, kernels.logistic, cmath.logistic, accuracy=True, may_nan=True,
    jvp=_logistic_jvp, jvp_ans=True)
sin_p, sin = unary(
    "sin", _inexact, np.sin, keeps_dtype=True, template="_np.sin({0})", accuracy=True,
    may_nan=True, jvp=lambda g, x, **_: mul(g, cos(x)))
cos_p, cos = unary(
    "cos", _inexact, np.cos, keeps_dtype=True, template="_np.cos({0})", accuracy=True,
    may_nan=True, jvp=lambda g, x, accuracy=None: neg(mul(g, sin(x, accuracy=accuracy))))
tan_p, tan = unary(
    "tan", _inexact, kernels.tan, keeps_dtype=True, lowering="stablehlo.tan",
    accuracy=True, may_nan=True,
    jvp=lambda g, ans, x, **_: mul(g, add(_const(x, 1), square(ans))), jvp_ans=True)
asin_p, asin = unary(
    "asin", _inexact, kernels.arcsin, cmath.arcsin, lowering="chlo.asin",
    may_nan=True, jvp=lambda g, x: mul(g, rsqrt(sub(_const(x, 1), square(x)))))
acos_p, acos = unary(
    "acos", _inexact, kernels.arccos, cmath.arccos, lowering="chlo.acos",
    may_nan=True, jvp=lambda g, x: mul(g, neg(rsqrt(sub(_const(x, 1), square(x))))))
atan_p, atan = unary(
    "atan", _inexact, kernels.arctan, keeps_dtype=True, lowering="chlo.atan",
    may_nan=True, jvp=lambda g, x: div(g, add(_const(x, 1), square(x))))
sinh_p, sinh = unary("sinh", _inexact, np.sinh, keeps_dtype=True, lowering="chlo.sinh",
                     may_nan=True, jvp=lambda g, x: mul(g, cosh(x)))
cosh_p, cosh = unary("cosh", _inexact, np.cosh, keeps_dtype=True, lowering="chlo.cosh",
                     may_nan=True, jvp=lambda g, x: mul(g, sinh(x)))
asinh_p, asinh = unary(
    "asinh", _inexact, np.arcsinh, cmath.arcsinh, lowering="chlo.asinh", may_nan=True,
    jvp=lambda g, x: mul(g, rsqrt(add(square(x), _const(x, 1)))))
acosh_p, acosh = unary(
    "acosh", _inexact, np.arccosh, cmath.arccosh, lowering="chlo.acosh", may_nan=True,
    jvp=lambda g, x: mul(g, rsqrt(sub(square(x), _const(x, 1)))))
atanh_p, atanh = unary(
    "atanh", _inexact, np.arctanh, keeps_dtype=True, lowering="chlo.atanh", may_nan=True,
    jvp=lambda g, x: mul(integer_pow(add(_const(x, 1), x), -1),
                         div(g, sub(_const(x, 1), x))))
sqrt_p, sqrt = unary(
    "sqrt", _inexact, np.sqrt, cmath.sqrt, template="_np.sqrt({0})", template_kinds="f",
    lowering="stablehlo.sqrt", accuracy=True, may_nan=True,
    jvp=lambda g, ans, x, **_: mul(g, div(_const(x, 0.5), ans)), jvp_ans=True)
rsqrt_p, rsqrt = unary(
    "rsqrt", _inexact, kernels.rsqrt, cmath.rsqrt, lowering="stablehlo.rsqrt",
    accuracy=True, may_nan=True,
    jvp=lambda g, ans, x, **_: mul(g, mul(_const(x, -0.5), div(ans, x))), jvp_ans=True)
cbrt_p, cbrt = unary(
    "cbrt", _float, kernels.cbrt, keeps_dtype=True, lowering="stablehlo.cbrt",
    accuracy=True, may_nan=True, jvp_ans=True,
    jvp=lambda g, ans, x, **_: mul(g, mul(_const(x, 1 / 3), integer_pow(ans, -2))))
abs_p, abs = unary(
    "abs", _signed + _inexact, np.abs, cmath.abs_, result_dtype=_real_part,
    keeps_dtype=True, narrow_ints=False, template="_np.abs({0})", template_kinds="iuf",
    jvp=_abs_jvp, jvp_ans=True)
not_p, bitwise_not = unary("not", _bool_or_int, kernels.bitwise_not,
                           lowering="stablehlo.not", jvp=ZERO, function="bitwise_not")
square_p, square = unary("square", _num, np.square, keeps_dtype=True,
                         template="_np.square({0})",
                         jvp=lambda g, x: mul(g, mul(_const(x, 2), x)))
# (its lax function, with the static power ``y``, is below)
integer_pow_p = define(ElementwiseSpec(
    "integer_pow", 1, _num, kernels.integer_pow, keeps_dtype=True, may_nan=True,
    jvp=(_integer_pow_jvp,)))

add_p, add = binary(
    "add", _num, np.add, keeps_dtype=True, template="_np.add({0}, {1})",
    lowering="stablehlo.add", may_nan=True, jvp=(lambda g, x, y: g, lambda g, x, y: g),
    transpose=_add_transpose)
sub_p, sub = binary(
    "sub", _num, np.subtract, keeps_dtype=True, template="_np.subtract({0}, {1})",
    lowering="stablehlo.subtract", may_nan=True,
    jvp=(lambda g, x, y: g, lambda g, x, y: neg(g)), transpose=_sub_transpose)
mul_p, mul = binary(
    "mul", _num, np.multiply, keeps_dtype=True, template="_np.multiply({0}, {1})",
    lowering="stablehlo.multiply", may_nan=True,
    jvp=(lambda g, x, y: mul(g, y), lambda g, x, y: mul(x, g)), transpose=_mul_transpose)
div_p, div = binary(
    "div", _num, kernels.div, template="_np.true_divide({0}, {1})", template_kinds="f",
    lowering="stablehlo.divide", may_nan=True,
    jvp=(lambda g, x, y: div(g, y),
         lambda g, x, y: mul(mul(neg(g), x), integer_pow(y, -2))),
    transpose=_div_transpose)
rem_p, rem = binary(
    "rem", _int + _float, kernels.rem, lowering="stablehlo.remainder", may_nan=True,
    jvp=(lambda g, x, y: g,
         lambda g, x, y: mul(neg(g), mul(sign(div(x, y)), floor(abs(div(x, y)))))))
def _pow_dtypes(x, y):
  """JAX's: an inexact base, and an exponent of its dtype or an integer one."""
  for position, (dtype, accepted) in enumerate(((x, _inexact), (y, _int + _inexact))):
    if not any(dtypes.issubdtype(dtype, c) for c in accepted):
      names = ", ".join(_CLASS_NAMES[c] for c in accepted)
      raise TypeError(f"pow does not accept dtype {dtype.name} at position {position}. "
                      f"Accepted dtypes at position {position} are subtypes of {names}.")
  if x == y or dtypes.is_integer(y):
    return x
  raise TypeError("the first argument to pow must have an inexact dtype (float or "
                  "complex), and the second argument must have an inexact or integer "
                  "dtype, and two inexact dtypes must match, but got "
                  f"{x.name} and {y.name} respectively.")


pow_p, pow = binary("pow", _inexact, kernels.pow, lowering="stablehlo.power",
                    operand_dtypes=_pow_dtypes, may_nan=True,
                    jvp=(_pow_jvp_base, _pow_jvp_exponent), jvp_ans=True)
max_p, max = binary("max", _any, kernels.max_into, template="_max({0}, {1})",
                    template_kinds="biuf", jvp=_MINMAX_JVP, jvp_ans=True)
min_p, min = binary("min", _any, kernels.min_into, template="_min({0}, {1})",
                    template_kinds="biuf", jvp=_MINMAX_JVP, jvp_ans=True)
atan2_p, atan2 = binary(
    "atan2", _inexact, kernels.arctan2, cmath.atan2, lowering="stablehlo.atan2",
    may_nan=True, jvp=(lambda g, x, y: mul(g, div(y, add(square(x), square(y)))),
         lambda g, x, y: mul(g, div(neg(x), add(square(x), square(y))))))
nextafter_p, nextafter = binary("nextafter", _float, np.nextafter, keeps_dtype=True,
                                lowering="chlo.next_after",
                                jvp="(JAX gives nextafter no derivative)")
and_p, bitwise_and = binary("and", _bool_or_int,
                            kernels.bitwise(np.logical_and, np.bitwise_and),
                            lowering="stablehlo.and", jvp=ZERO, function="bitwise_and")
or_p, bitwise_or = binary("or", _bool_or_int,
                          kernels.bitwise(np.logical_or, np.bitwise_or),
                          lowering="stablehlo.or", jvp=ZERO, function="bitwise_or")
xor_p, bitwise_xor = binary("xor", _bool_or_int,
                            kernels.bitwise(np.logical_xor, np.bitwise_xor),
                            lowering="stablehlo.xor", jvp=ZERO, function="bitwise_xor")
# comparisons: named after their StableHLO comparison direction (EQ, NE, ...); arrays of
# extended dtypes compare too (lax/extended.py's physical rule compares their data)
eq_p, eq = binary("eq", _any + (dtypes.extended,), np.equal, result_dtype=_to_bool, keeps_dtype=True,
                  template="_np.equal({0}, {1})", lowering="stablehlo.compare", jvp=ZERO)
ne_p, ne = binary("ne", _any + (dtypes.extended,), np.not_equal, result_dtype=_to_bool, keeps_dtype=True,
                  template="_np.not_equal({0}, {1})", lowering="stablehlo.compare",
                  jvp=ZERO)
lt_p, lt = binary("lt", _ordered, np.less, result_dtype=_to_bool, keeps_dtype=True,
                  template="_np.less({0}, {1})", lowering="stablehlo.compare", jvp=ZERO)
le_p, le = binary("le", _ordered, np.less_equal, result_dtype=_to_bool, keeps_dtype=True,
                  template="_np.less_equal({0}, {1})", lowering="stablehlo.compare",
                  jvp=ZERO)
gt_p, gt = binary("gt", _ordered, np.greater, result_dtype=_to_bool, keeps_dtype=True,
                  template="_np.greater({0}, {1})", lowering="stablehlo.compare", jvp=ZERO)
ge_p, ge = binary("ge", _ordered, np.greater_equal, result_dtype=_to_bool,
                  keeps_dtype=True, template="_np.greater_equal({0}, {1})",
                  lowering="stablehlo.compare", jvp=ZERO)


def _integer_pow_abstract_eval(x, *, y):
  out = naryop_abstract_eval("integer_pow", _num)(x)
  if y < 0 and dtypes.issubdtype(x.dtype, np.integer):
    raise TypeError(f"Integers cannot be raised to negative powers, got "
                    f"integer_pow({x.str_short()}, {y})")
  return out


integer_pow_p.def_abstract_eval(_integer_pow_abstract_eval)
# eager's fast path skips the check of y, which only integers need
integer_pow_p.elementwise_dtypes = dtypes.numeric_dtypes_where(dtypes.is_inexact)


def integer_pow(x, y: int):
  """``x ** y`` for a static Python integer ``y``."""
  return integer_pow_p.bind(x, y=int(y))


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


def _fold_convert(operand, **params):
  # as JAX's folding rule: a scalar constant's conversion is a literal, a larger constant
  # (a closed-over array) is converted in the jaxpr
  return np.ndim(operand) == 0


staging.const_fold_rules[convert_element_type_p] = _fold_convert
core.hidden_params[convert_element_type_p] = lambda k, v, p: k == "sharding" and v is None


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
  # as JAX: only an Array or an abstract tracer comes back as it is; a NumPy array, a
  # Python scalar or a tracer of one (a JVP's input keeps the value given) becomes an Array
  if (aval.dtype == new_dtype and aval.weak_type == weak_type
      and (isinstance(operand, Array) or isinstance(operand, core.Tracer)
           and operand.to_concrete_value() is None)):
    return operand
  if dtypes.is_extended(new_dtype) or dtypes.is_extended(aval.dtype):
    return _convert_extended(operand, aval.dtype, new_dtype, weak_type)
  return convert_element_type_p.bind(operand, new_dtype=new_dtype, weak_type=weak_type,
                                     sharding=None)


def _convert_extended(operand, old, new, weak_type):
  """A conversion to or from an extended dtype: ``to_edtype`` / ``from_edtype``, which
  its rules allow only from and to its representation dtype (JAX's)."""
  if new == old:
    return operand
  if weak_type:
    raise NotImplementedError(f"convert_element_type from {old} to a weakly typed {new}: "
                              "arrays of extended dtypes are never weakly typed")
  if dtypes.is_extended(new) and dtypes.is_extended(old):
    old_rep = extended.physical_element_aval(old).dtype
    new_rep = extended.physical_element_aval(new).dtype
    raise ValueError(
        f"cannot directly convert between extended dtypes: from {_name(old)} to "
        f"{_name(new)}. Instead, convert to and from their representation dtypes, e.g.:\n"
        f"{_name(old)} -> {_name(old_rep)} -> {_name(new_rep)} -> {_name(new)}")
  if dtypes.is_extended(new):
    return to_edtype_p.bind(operand, edtype=new)
  return from_edtype_p.bind(operand, dtype=new)


def _name(dtype):
  return dtype.name


def _allows_conversion(rules, convert, *args):
  """Whether an extended dtype's rules allow a conversion: their ``convert_to`` /
  ``convert_from`` where they have one, else their ``allow_conversion`` (as JAX asks)."""
  check = getattr(rules, convert, None)
  return check(*args) if check is not None else getattr(rules, "allow_conversion", False)


def _to_edtype_abstract_eval(x, *, edtype):
  if not _allows_conversion(edtype._rules, "convert_to", x.dtype, edtype):
    raise ValueError(f"Cannot convert_element_type from {_name(x.dtype)} to {_name(edtype)}")
  rep = extended.physical_element_aval(edtype)
  if x.dtype != rep.dtype:
    raise ValueError(
        "can only convert to extended dtype from its representation dtype, but tried to "
        f"convert from {_name(x.dtype)} to {_name(edtype)} which doesn't match the "
        f"representation type {_name(rep.dtype)}.")
  if x.ndim < rep.ndim:
    raise ValueError(
        "can only convert to extended dtype from an array of its representation type, "
        f"but the extended dtype {_name(edtype)} has a representation shape {rep.shape} "
        f"(rank {rep.ndim}) while the given representation array has shape {x.shape} "
        f"(rank {x.ndim} < {rep.ndim}).")
  n = x.ndim - rep.ndim
  if x.shape[n:] != rep.shape:
    raise ValueError(
        "can only convert to extended dtype from an array of its representation type, "
        f"but the extended dtype {_name(edtype)} has a representation shape {rep.shape} "
        f"while the given representation array has shape {x.shape}, so the shape suffix "
        f"does not match: given {x.shape[n:]} but required {rep.shape}.")
  return ShapedArray(x.shape[:n], edtype)


def _from_edtype_abstract_eval(x, *, dtype):
  if not _allows_conversion(x.dtype._rules, "convert_from", x.dtype, dtype):
    raise ValueError(f"Cannot convert_element_type from {_name(x.dtype)} to {_name(dtype)}")
  rep = extended.physical_element_aval(x.dtype)
  if rep.dtype != dtype:
    raise ValueError(
        "can only convert from extended dtype to its representation dtype, but tried to "
        f"convert from {_name(x.dtype)} to {_name(dtype)} which doesn't match the "
        f"representation type {_name(rep.dtype)}.")
  return ShapedArray(x.shape + rep.shape, dtype)


# to and from an extended dtype (printed as JAX's): on the physical data, nothing happens
to_edtype_p = Primitive("to_edtype")
to_edtype_p.def_abstract_eval(_to_edtype_abstract_eval)
from_edtype_p = Primitive("from_edtype")
from_edtype_p.def_abstract_eval(_from_edtype_abstract_eval)
for _p in (to_edtype_p, from_edtype_p):
  _p.def_impl(lambda *args, _p=_p, **params: extended.apply_on_physical(_p, args, params))
  extended.physical_rules[_p] = lambda ctx, x, **params: x
  batching.defvectorized(_p)
ad.defjvp(to_edtype_p, lambda t, x, *, edtype: _convert_element_type(
    t, core.get_aval(x).update(dtype=edtype).to_tangent_aval().dtype))
ad.defjvp(from_edtype_p, lambda t, x, *, dtype: _convert_element_type(
    t, ShapedArray((), dtype).to_tangent_aval().dtype))
# (JAX's from_edtype transpose reads the dtype of the undefined operand itself, and fails)
ad.transpose_rules[to_edtype_p] = lambda ct, x, *, edtype: [
    from_edtype_p.bind(ad.instantiate(ct), dtype=x.aval.dtype)]
ad.transpose_rules[from_edtype_p] = lambda ct, x, *, dtype: [
    to_edtype_p.bind(ad.instantiate(ct), edtype=x.aval.dtype)]


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


# -- batching (vmap) of the primitives outside the table
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
