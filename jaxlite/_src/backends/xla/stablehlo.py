"""Lowering a jaxpr to StableHLO text (MLIR's generic op syntax), one rule per primitive.

The output is a module with ``func.func public @main``, written in the generic form
(``%3 = "stablehlo.add"(%1, %2) : (...) -> ...``) because it is uniform and every MLIR
version parses it. Rules live in ``lowering_rules`` keyed by primitive; each takes the
builder, the equation and its lowered operands and returns the lowered results.
Elementwise operands may broadcast (size-1 axes, rank 0), so rules broadcast them first.
Control flow follows JAX: ``cond`` -> ``stablehlo.case``, ``while`` -> ``stablehlo.while``
with its consts in the carry, ``scan`` -> a while loop over an index counter.
"""
from __future__ import annotations

import itertools
from typing import Callable, NamedTuple

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import config as config_lib
from jaxlite._src.base import dtypes
from jaxlite._src.base import layout as layout_mod
from jaxlite._src.backends import lowering
from jaxlite._src.backends.background import yield_to_callers
from jaxlite._src.lax import ad_checkpoint
from jaxlite._src.lax import bits as lax_bits
from jaxlite._src.lax import call
from jaxlite._src.lax import control_flow as cf
from jaxlite._src.lax import convolution
from jaxlite._src.lax import custom_derivatives as cd
from jaxlite._src.lax import custom_batching
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.lax import fft
from jaxlite._src.lax import indexing as ix
from jaxlite._src.lax import linalg
from jaxlite._src.lax import precision as precision_lib
from jaxlite._src.lax import reductions as red
from jaxlite._src.lax import rng
from jaxlite._src.lax import shapes as sh
from jaxlite._src.lax import sorting
from jaxlite._src.lax import special as lax_special
from jaxlite._src.lax import windowed
from jaxlite._src.lax.indexing import GatherScatterMode
from jaxlite._src.transforms import ad

_ELEMENT_TYPES = {   # by dtype name: bfloat16 without importing ml_dtypes (see pjrt.py)
    "bool": "i1", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "ui8", "uint16": "ui16", "uint32": "ui32", "uint64": "ui64", "float16": "f16",
    "bfloat16": "bf16", "float32": "f32", "float64": "f64", "complex64": "complex<f32>",
    "complex128": "complex<f64>",
    # ml_dtypes' 8-bit floats that the PJRT C API can hold (pjrt.py); the sub-byte
    # integers (int4...) need packing on the way to PJRT, not done: tier 0 runs them
    "float8_e5m2": "f8E5M2",
    "float8_e4m3fn": "f8E4M3FN", "float8_e4m3b11fnuz": "f8E4M3B11FNUZ",
    "float8_e5m2fnuz": "f8E5M2FNUZ", "float8_e4m3fnuz": "f8E4M3FNUZ",
    "float8_e4m3": "f8E4M3", "float8_e3m4": "f8E3M4"}


def tensor_type(shape, dtype) -> str:
  # float0 (a tangent of integers) holds no data; XLA carries it as i1, as JAX lowers it
  elt = "i1" if dtype == dtypes.float0 else _ELEMENT_TYPES.get(np.dtype(dtype).name)
  if elt is None:
    raise NotImplementedError(f"The XLA backend does not support dtype {np.dtype(dtype)}.")
  return f"tensor<{''.join(f'{d}x' for d in shape)}{elt}>"


class V(NamedTuple):
  """A lowered value: its SSA name, shape and dtype."""
  name: str
  shape: tuple
  dtype: np.dtype

  @property
  def type(self) -> str:
    return tensor_type(self.shape, self.dtype)


def _i64s(values) -> str:
  return f"array<i64{': ' if len(values) else ''}{', '.join(str(int(v)) for v in values)}>"


def _list(values) -> str:
  return "[" + ", ".join(str(int(v)) for v in values) + "]"


class Builder:
  """Emits the ops of one module; SSA names are unique across it."""

  # (name, size) of each mesh axis, in mesh order, when the module runs one replica per
  # mesh device (pmap, shard_map): collectives over those names become XLA collectives
  mesh_axes: tuple = ()
  # whether the module is compiled for XLA's SPMD partitioner (sharded jit): sharding
  # constraints are annotations there and the identity elsewhere
  spmd: bool = False

  def __init__(self):
    self.lines: list[str] = []
    self.indent = "    "
    self.counter = itertools.count()
    # The value that orders the next ordered host callback of the current block (each
    # returns the next one: see callbacks.py); a region starts its own chain.
    self.effect_order = None
    # Shardy's meshes the module's shardings name: their axes' text -> symbol
    self.sdy_meshes: dict[str, str] = {}

  def sdy_sharding(self, sharding, ndim: int) -> str:
    """Shardy's attribute laying a value of rank ``ndim`` out as ``sharding`` says (a
    NamedSharding's split dimensions; anything else is replicated), naming its mesh."""
    mesh = getattr(sharding, "mesh", None)
    dims = sharding._dim_axes(ndim) if mesh is not None else [()] * ndim
    axes = "" if mesh is None else ", ".join(
        f'"{a}"={n}' for a, n in zip(mesh.axis_names, mesh.axis_sizes))
    symbol = self.sdy_meshes.setdefault(
        axes, "mesh" if not self.sdy_meshes else f"mesh_{len(self.sdy_meshes)}")
    split = ", ".join("{" + ", ".join(f'"{a}"' for a in d) + "}" for d in dims)
    return f"#sdy.sharding<@{symbol}, [{split}]>"

  def op(self, name, args, outs, attrs=None, regions=(), discardable=None) -> list[V]:
    """Emit ``name``; ``outs`` are (shape, dtype) pairs; regions are emitted by callables;
    ``discardable`` attributes (e.g. ``mhlo.sharding``) follow the properties."""
    result = f"%{next(self.counter)}"
    lhs = "" if not outs else (f"{result} = " if len(outs) == 1 else
                                f"{result}:{len(outs)} = ")
    vals = ([V(result, tuple(s), np.dtype(d)) for s, d in outs] if len(outs) == 1 else
            [V(f"{result}#{i}", tuple(s), np.dtype(d)) for i, (s, d) in enumerate(outs)])
    props = f" <{{{attrs}}}>" if attrs else ""
    if discardable:
      props += f" {{{discardable}}}"
    operands = ", ".join(a.name for a in args)
    sig = (f"({', '.join(a.type for a in args)}) -> "
           f"({', '.join(tensor_type(s, d) for s, d in outs)})")
    if not regions:
      self.lines.append(f'{self.indent}{lhs}"{name}"({operands}){props} : {sig}')
      return vals
    self.lines.append(f'{self.indent}{lhs}"{name}"({operands}){props} ({{')
    for i, emit in enumerate(regions):
      if i:
        self.lines.append(f"{self.indent}}}, {{")
      emit()
    self.lines.append(f"{self.indent}}}) : {sig}")
    return vals

  def region(self, arg_specs, body: Callable) -> Callable:
    """A region whose block takes ``arg_specs`` and returns ``body(builder, args)``."""
    def emit():
      outer = self.indent
      args = [V(f"%{next(self.counter)}", tuple(s), np.dtype(d)) for s, d in arg_specs]
      if args:
        self.lines.append(f"{outer}^bb0({', '.join(f'{a.name}: {a.type}' for a in args)}):")
      self.indent = outer + "  "
      order, self.effect_order = self.effect_order, None
      results = body(self, args)
      self.op("stablehlo.return", results, [])
      self.indent, self.effect_order = outer, order
    return emit

  def op1(self, name, args, shape, dtype, attrs=None) -> V:
    return self.op(name, args, [(shape, dtype)], attrs)[0]

  def inline(self, closed, args) -> list[V]:
    """Emit ``closed`` (a Jaxpr or ClosedJaxpr) here on the lowered ``args``: how a rule
    written as a function of other primitives (``lower_fun``) lowers."""
    return lower_closed(self, closed, list(args))


# ----------------------------------------------------------------------------- helpers

def _dense(value: np.ndarray) -> str:
  if value.dtype == np.bool_:
    if value.size and (value == value.flat[0]).all():
      return "true" if value.flat[0] else "false"
    def nested(a):
      return ("true" if a else "false") if a.ndim == 0 else "[" + ", ".join(map(nested, a)) + "]"
    return nested(value)
  raw = np.ascontiguousarray(value).view(np.uint8).reshape(value.size, -1)
  if (raw == raw[0]).all():
    raw = raw[:1]   # one element of hex data is a splat
  return f'"0x{raw.tobytes().hex().upper()}"'


def constant(b: Builder, value, dtype=None) -> V:
  value = np.asarray(value, dtype)
  if value.dtype == dtypes.float0:   # (every float0 value is zeros: i1 false)
    value = np.zeros(value.shape, np.bool_)
  if value.size == 0:
    scalar = constant(b, np.zeros((), value.dtype))
    return broadcast(b, scalar, value.shape)
  t = tensor_type(value.shape, value.dtype)
  return b.op1("stablehlo.constant", [], value.shape, value.dtype,
               f"value = dense<{_dense(value)}> : {t}")


def broadcast(b: Builder, x: V, shape, dims=None) -> V:
  """``x`` broadcast to ``shape``: rank 0, or equal rank with size-1 axes, unless ``dims``."""
  shape = tuple(shape)
  if x.shape == shape and dims is None:
    return x
  if dims is None:
    dims = () if not x.shape else tuple(range(len(shape)))
  return b.op1("stablehlo.broadcast_in_dim", [x], shape, x.dtype,
               f"broadcast_dimensions = {_i64s(dims)}")


def full(b: Builder, value, shape, dtype) -> V:
  return broadcast(b, constant(b, value, dtype), shape)


def convert(b: Builder, x: V, dtype) -> V:
  dtype = np.dtype(dtype)
  return x if x.dtype == dtype else b.op1("stablehlo.convert", [x], x.shape, dtype)


def reshape(b: Builder, x: V, shape) -> V:
  shape = tuple(shape)
  return x if x.shape == shape else b.op1("stablehlo.reshape", [x], shape, x.dtype)


def _compare_type(dtype) -> str:
  if dtype == np.bool_ or dtype.kind == "u":
    return "UNSIGNED"
  return "SIGNED" if dtype.kind == "i" else "FLOAT"


def compare(b: Builder, x: V, y: V, direction: str) -> V:
  return b.op1("stablehlo.compare", [x, y], x.shape, np.bool_,
               f"compare_type = #stablehlo<comparison_type {_compare_type(x.dtype)}>, "
               f"comparison_direction = #stablehlo<comparison_direction {direction}>")


def select(b: Builder, pred: V, on_true: V, on_false: V) -> V:
  pred = broadcast(b, pred, on_true.shape)
  return b.op1("stablehlo.select", [pred, on_true, on_false], on_true.shape, on_true.dtype)


def binary(b: Builder, name: str, x: V, y: V) -> V:
  return b.op1(f"stablehlo.{name}", [x, y], x.shape, x.dtype)


def unary(b: Builder, name: str, x: V, dtype=None) -> V:
  return b.op1(name if "." in name else f"stablehlo.{name}", [x], x.shape,
               x.dtype if dtype is None else dtype)


# ----------------------------------------------------------------------------- the table

# primitive -> rule(builder, eqn, *lowered operands, **params) -> list[V] | V: the table
# lives in backends/lowering.py, where JAX's register_lowering writes too
lowering_rules = lowering.lowering_rules
# primitive -> why the XLA backend does not lower it (shown to the user)
unsupported: dict = {}


def _out(eqn, i=0):
  a = eqn.outvars[i].aval
  return a.shape, a.dtype


def _elementwise(fn):
  """A rule whose operands are first broadcast to the output shape."""
  def rule(b, eqn, *args, **params):
    shape = eqn.outvars[0].aval.shape
    return fn(b, eqn, *[broadcast(b, a, shape) for a in args])
  return rule


def _simple(name):
  return _elementwise(lambda b, eqn, *args: b.op1(name, args, *_out(eqn)))


lowering_rules[ad.add_any_p] = _simple("stablehlo.add")


def _apfloat_digits(value: float, precision: int):
  """The decimal digits and exponent (``value == int(digits) * 10**exp``) that LLVM's
  ``APFloat::toString`` prints for a positive double: it first drops the digits beyond
  ``precision`` that the significand's bit count allows by truncation, then rounds the
  rest half up on the next digit alone. (Rounding correctly would differ: 1e-6 would
  print in the short form, which MLIR does not use for it.)"""
  bits = np.float64(value).view(np.uint64).item()
  biased, sig = bits >> 52, bits & ((1 << 52) - 1)
  exp = max(biased, 1) - 1075
  sig |= (1 << 52) if biased else 0
  zeros = (sig & -sig).bit_length() - 1
  sig, exp = sig >> zeros, exp + zeros
  sig, exp = (sig << exp, 0) if exp > 0 else (sig * 5 ** -exp, exp)
  removable = (sig.bit_length() - (precision * 196 + 58) // 59) * 59 // 196
  if removable > 0:
    sig, exp = sig // 10 ** removable, exp + removable
  digits = str(sig)
  if len(digits) > precision:
    exp += len(digits) - precision
    digits = str(int(digits[:precision]) + (digits[precision] >= "5"))
    if len(digits) > precision:   # carried into a new digit: 99.9 -> 100
      digits, exp = "1", exp + precision
  stripped = digits.rstrip("0")
  return stripped, exp + len(digits) - len(stripped)


def _mlir_float(value: float) -> str:
  """Nonzero ``value`` as MLIR prints an f64 attribute: in APFloat's short form (six
  significant digits, ``1.000000e-05``) if that reads back exactly, else in its full form
  (17 digits: ``9.9999999999999995E-7``, ``0.33333333333333331``) if that has a point,
  else as its bits."""
  value = float(value)
  if np.isfinite(value):
    sign = "-" if value < 0 else ""
    digits, exp = _apfloat_digits(abs(value), 6)
    mantissa = f"{digits[0]}.{digits[1:]:0<6}"
    short = f"{sign}{mantissa}e{exp + len(digits) - 1:+03d}"
    if float(short) == value:
      return short
    digits, exp = _apfloat_digits(abs(value), 17)
    point = exp + len(digits)   # where the point goes: digits before it
    if exp < 0 and point - 1 >= -3:
      whole = digits[:point] if point > 0 else "0"
      return f"{sign}{whole}.{'0' * max(-point, 0)}{digits[max(point, 0):]}"
    if exp < 0 or exp > 3 or point > 17:
      e = point - 1
      return f"{sign}{digits[0]}.{digits[1:] or '0'}E{'+' if e >= 0 else '-'}{abs(e)}"
  return "0x" + np.float64(value).view(np.uint64).item().to_bytes(8, "big").hex().upper()


def _result_accuracy(accuracy):
  """The ``result_accuracy`` attribute of a transcendental op for JAX's ``accuracy``
  param (a ``Tolerance`` or an ``AccuracyMode``), or None; the zero tolerances are left
  out, as MLIR prints them."""
  if accuracy is None:
    return None
  if isinstance(accuracy, precision_lib.AccuracyMode):
    fields, mode = [], accuracy.name
  elif isinstance(accuracy, precision_lib.Tolerance):
    fields = [f"{k} = {_mlir_float(v)}" for k, v in (("atol", accuracy.atol),
                                                      ("rtol", accuracy.rtol)) if v]
    fields += [f"ulps = {int(accuracy.ulps)}"] if accuracy.ulps else []
    mode = "TOLERANCE"
  else:
    raise NotImplementedError(f"Accuracy {accuracy} not supported")
  fields.append(f"mode = #stablehlo.result_accuracy_mode<{mode}>")
  return f"result_accuracy = #stablehlo.result_accuracy<{', '.join(fields)}>"


def _transcendental(name):
  """The rule of a primitive with JAX's ``accuracy`` param: one op, with the param as its
  ``result_accuracy`` (XLA picks an implementation that meets it)."""
  def rule(b, eqn, x, accuracy=None):
    return b.op1(name, [x], *_out(eqn), _result_accuracy(accuracy))
  return rule


def _spec_rule(spec):
  """The rule of an elementwise primitive whose spec names its op: a comparison (named
  after its direction), an op taking ``result_accuracy``, or one op on its operands."""
  if spec.lowering == "stablehlo.compare":
    return _elementwise(lambda b, eqn, x, y, d=spec.name.upper(): compare(b, x, y, d))
  return (_transcendental if spec.accuracy else _simple)(spec.lowering)


for _prim, _spec in ew.specs.items():
  if _spec.lowering is not None:
    lowering_rules[_prim] = _spec_rule(_spec)


@_elementwise
def _pow_rule(b, eqn, x, y):
  # an integer exponent is converted to the base's dtype first, as JAX lowers it
  return b.op1("stablehlo.power", [x, convert(b, y, x.dtype)], *_out(eqn))


lowering_rules[ew.pow_p] = _pow_rule


@_elementwise
def _minmax_rule(b, eqn, x, y):
  return _combine(b, "maximum" if eqn.primitive is ew.max_p else "minimum", x, y)


def _complex_minmax(b, name, x, y):
  """``x`` if it is the larger (``maximum``) or smaller (``minimum``) complex number,
  ordered lexicographically on (real, imag) as JAX orders them, else ``y``: a NaN on
  either side fails the comparison, so ``y`` wins."""
  part = lambda v, p: b.op1(f"stablehlo.{p}", [v], v.shape, np.finfo(v.dtype).dtype)
  d = "GT" if name == "maximum" else "LT"
  rx, ry, ix_, iy = part(x, "real"), part(y, "real"), part(x, "imag"), part(y, "imag")
  pick_x = binary(b, "or", compare(b, rx, ry, d),
                  binary(b, "and", compare(b, rx, ry, "EQ"), compare(b, ix_, iy, d)))
  return select(b, pick_x, x, y)


lowering_rules[ew.max_p] = lowering_rules[ew.min_p] = _minmax_rule


@_elementwise
def _sign_rule(b, eqn, x):
  if x.dtype.kind == "u":  # stablehlo.sign takes signed types only
    return convert(b, compare(b, x, full(b, 0, x.shape, x.dtype), "NE"), x.dtype)
  return unary(b, "sign", x)


def _parts(b, z):
  part_dtype = np.finfo(z.dtype).dtype
  return (b.op1("stablehlo.real", [z], z.shape, part_dtype),
          b.op1("stablehlo.imag", [z], z.shape, part_dtype))


def _complex(b, re, im, dtype):
  return b.op1("stablehlo.complex", [re, im], re.shape, dtype)


def _is_nan(b, x):
  return compare(b, x, x, "NE")


@_elementwise
def _abs_rule(b, eqn, x):
  if x.dtype.kind == "u":
    return x
  out = b.op1("stablehlo.abs", [x], *_out(eqn))
  if x.dtype.kind != "c":
    return out
  # NaN if either part is NaN, even beside an infinity, as JAX's XLA computes it (the CPU
  # plugin's hypot ignores NaNs: |1 + nan j| would be sqrt(2))
  re, im = _parts(b, x)
  return select(b, binary(b, "or", _is_nan(b, re), _is_nan(b, im)),
                full(b, np.nan, out.shape, out.dtype), out)


def _sinh_cosh_parts(b, y):
  # sinh(y) and cosh(y) from expm1, exact for small y (JAX's lowering of complex sin/cos)
  two = full(b, 2, y.shape, y.dtype)
  e1m = unary(b, "exponential_minus_one", y)
  e2m = unary(b, "exponential_minus_one", unary(b, "negate", y))
  return (binary(b, "divide", binary(b, "subtract", e1m, e2m), two),
          binary(b, "divide", binary(b, "add", binary(b, "add", e1m, e2m), two), two))


def _sine_rule(b, eqn, x, accuracy=None):
  if x.dtype.kind != "c":
    return b.op1("stablehlo.sine", [x], x.shape, x.dtype, _result_accuracy(accuracy))
  # sin(a + bj) = sin(a) cosh(b) + j cos(a) sinh(b), with a zero real part where a is
  # (no NaN from 0 * inf), as JAX lowers it
  a, y = _parts(b, x)
  sinh, cosh = _sinh_cosh_parts(b, y)
  re = binary(b, "multiply", unary(b, "sine", a), cosh)
  im = binary(b, "multiply", unary(b, "cosine", a), sinh)
  a_is_zero = compare(b, a, full(b, 0, a.shape, a.dtype), "EQ")
  return _complex(b, select(b, a_is_zero, full(b, 0, a.shape, a.dtype), re), im, x.dtype)


def _cosine_rule(b, eqn, x, accuracy=None):
  if x.dtype.kind != "c":
    return b.op1("stablehlo.cosine", [x], x.shape, x.dtype, _result_accuracy(accuracy))
  # cos(a + bj) = cos(a) cosh(b) - j sin(a) sinh(b), with a zero imaginary part where a
  # is zero, as JAX lowers it
  a, y = _parts(b, x)
  sinh, cosh = _sinh_cosh_parts(b, y)
  re = binary(b, "multiply", unary(b, "cosine", a), cosh)
  im = binary(b, "multiply", unary(b, "negate", unary(b, "sine", a)), sinh)
  a_is_zero = compare(b, a, full(b, 0, a.shape, a.dtype), "EQ")
  return _complex(b, re, select(b, a_is_zero, full(b, 0, a.shape, a.dtype), im), x.dtype)


@_elementwise
def _square_rule(b, eqn, x):
  return binary(b, "multiply", x, x)


def _logistic_rule(b, eqn, x, accuracy=None):
  # 1 / (1 + exp(-x)), whose exp JAX lowers without the accuracy
  one = full(b, 1, x.shape, x.dtype)
  return binary(b, "divide", one, binary(b, "add", one, unary(b, "exponential",
                                                               unary(b, "negate", x))))


def _exp2_rule(b, eqn, x, accuracy=None):
  scaled = binary(b, "multiply", x, full(b, np.log(2), x.shape, x.dtype))
  return b.op1("stablehlo.exponential", [scaled], x.shape, x.dtype,
               _result_accuracy(accuracy))


def _integer_pow_rule(b, eqn, x, *, y):
  if y == 0:
    return full(b, 1, x.shape, x.dtype)
  acc, base, n = None, x, abs(y)
  while n:  # square-and-multiply, as XLA would unroll it
    if n & 1:
      acc = base if acc is None else binary(b, "multiply", acc, base)
    n >>= 1
    if n:
      base = binary(b, "multiply", base, base)
  return acc if y > 0 else binary(b, "divide", full(b, 1, x.shape, x.dtype), acc)


lowering_rules.update({
    ew.sign_p: _sign_rule, ew.abs_p: _abs_rule, ew.square_p: _square_rule,
    ew.sin_p: _sine_rule, ew.cos_p: _cosine_rule,
    ew.logistic_p: _logistic_rule, ew.exp2_p: _exp2_rule,
    ew.integer_pow_p: _integer_pow_rule})


def _select_n_rule(b, eqn, which, *cases):
  shape = eqn.outvars[0].aval.shape
  if len(cases) == 1:
    return cases[0]
  which = broadcast(b, which, shape)
  if which.dtype == np.bool_:
    return select(b, which, cases[1], cases[0])
  # out-of-range `which` picks the nearest case, as the NumPy tier's np.choose(clip)
  out = cases[0]
  for k in range(1, len(cases)):
    out = select(b, compare(b, which, full(b, k, shape, which.dtype), "GE"), cases[k], out)
  return out


def _clamp_rule(b, eqn, lo, x, hi):
  return b.op1("stablehlo.clamp", [lo, x, hi], x.shape, x.dtype)


def _convert_rule(b, eqn, x, *, new_dtype, weak_type, sharding):
  new_dtype = np.dtype(new_dtype)
  if x.dtype.kind == "c" and new_dtype.kind != "c":
    x = b.op1("stablehlo.real", [x], x.shape, np.finfo(x.dtype).dtype)
  if new_dtype == np.bool_ and x.dtype != np.bool_:
    return compare(b, x, full(b, 0, x.shape, x.dtype), "NE")
  if x.dtype.kind == "f" and new_dtype.kind in "iu":
    # Saturate out-of-range values and send NaN to 0, as the NumPy tier (and XLA's CPU
    # and GPU backends) do; spelled out because StableHLO leaves it undefined.
    info = np.iinfo(new_dtype)
    lo, hi = np.asarray(info.min, x.dtype), np.asarray(info.max, x.dtype)
    big = compare(b, x, full(b, hi, x.shape, x.dtype), "GE")
    small = compare(b, x, full(b, lo, x.shape, x.dtype), "LE")
    nan = compare(b, x, x, "NE")
    out = convert(b, select(b, nan, full(b, 0, x.shape, x.dtype), x), new_dtype)
    out = select(b, big, full(b, info.max, x.shape, new_dtype), out)
    return select(b, small, full(b, info.min, x.shape, new_dtype), out)
  return convert(b, x, new_dtype)


lowering_rules.update({
    ew.select_n_p: _select_n_rule, ew.clamp_p: _clamp_rule,
    ew.convert_element_type_p: _convert_rule})


# -- reductions



def reduce(b: Builder, operands, inits, axes, body) -> list[V]:
  """``stablehlo.reduce`` over ``axes``; ``body(b, accs, xs)`` combines scalars."""
  shape = tuple(s for i, s in enumerate(operands[0].shape) if i not in axes)
  scalars = [((), x.dtype) for x in operands]
  n = len(operands)
  region = b.region(scalars + scalars, lambda b, args: body(b, args[:n], args[n:]))
  return b.op("stablehlo.reduce", list(operands) + list(inits),
              [(shape, x.dtype) for x in operands], f"dimensions = {_i64s(axes)}", [region])


def _combine(b, op, x, y):
  """XLA's binary ``op`` of ``x`` and ``y``, except that complex ``maximum``/``minimum``
  compare as JAX compares them (``_complex_minmax``). Real ``maximum``/``minimum`` are
  XLA's own, which propagate NaNs as JAX's do: the CPU plugin compiles with
  ``xla_cpu_enable_fast_min_max`` off (``plugins.flag_defaults``), as JAX does."""
  if op in ("maximum", "minimum") and x.dtype.kind == "c":
    return _complex_minmax(b, op, x, y)
  return binary(b, op, x, y)


def _monoid_rule(op, init_fn):
  def rule(b, eqn, x, *, axes, **_):
    init = constant(b, init_fn(x.dtype), x.dtype)
    return reduce(b, [x], [init], axes, lambda b, a, c: [_combine(b, op, a[0], c[0])])
  return rule


lowering_rules.update({
    red.reduce_sum_p: _monoid_rule("add", lambda d: 0),
    red.reduce_prod_p: _monoid_rule("multiply", lambda d: 1),
    red.reduce_max_p: _monoid_rule("maximum", dtypes.lowest),
    red.reduce_min_p: _monoid_rule("minimum", dtypes.highest),
    red.reduce_and_p: _monoid_rule("and", lambda d: (  # all bits set
        True if d == np.bool_ else -1 if d.kind == "i" else np.iinfo(d).max)),
    red.reduce_or_p: _monoid_rule("or", lambda d: 0),
    red.reduce_xor_p: _monoid_rule("xor", lambda d: 0),
})


def _reduce_computation_rule(b, eqn, *args, computation, jaxpr, dimensions):
  # the computation traced on scalars is the region of one stablehlo.reduce
  n = len(args) // 2
  return reduce(b, list(args[:n]), list(args[n:]), dimensions,
                lambda b, accs, xs: lower_closed(b, jaxpr, list(accs) + list(xs)))


lowering_rules[red.reduce_p] = _reduce_computation_rule


def _arg_reduce_rule(direction):
  def rule(b, eqn, x, *, axes, index_dtype):
    (axis,) = axes
    index = b.op1("stablehlo.iota", [], x.shape, index_dtype, f"iota_dimension = {axis} : i64")
    init = dtypes.lowest(x.dtype) if direction == "GT" else dtypes.highest(x.dtype)

    def body(b, acc, new):
      (a, ia), (c, ic) = acc, new
      better = compare(b, a, c, direction)
      same = compare(b, a, c, "EQ")
      if dtypes.is_floating(x.dtype):  # NaN wins, the first NaN among NaNs (as NumPy)
        a_nan, c_nan = compare(b, a, a, "NE"), compare(b, c, c, "NE")
        better = binary(b, "or", better, binary(b, "and", a_nan, unary(b, "not", c_nan)))
        same = binary(b, "or", same, binary(b, "and", a_nan, c_nan))
      pick = binary(b, "or", better, binary(b, "and", same, compare(b, ia, ic, "LT")))
      return [select(b, pick, a, c), select(b, pick, ia, ic)]
    return reduce(b, [x, index], [constant(b, init, x.dtype), constant(b, 0, index_dtype)],
                  axes, body)[1]
  return rule


lowering_rules[red.argmax_p] = _arg_reduce_rule("GT")
lowering_rules[red.argmin_p] = _arg_reduce_rule("LT")


def _precision_config(precision) -> str:
  """The ``precision_config`` of a dot or convolution, which JAX always writes (DEFAULT
  for None): on a TPU it decides between bfloat16 passes and full float32."""
  pair = precision_lib.precision_pair(precision)
  return f"precision_config = [{', '.join(f'#stablehlo<precision {p.name}>' for p in pair)}]"


def _dot_general_rule(b, eqn, lhs, rhs, *, dimension_numbers, precision,
                      preferred_element_type, out_sharding):
  (lc, rc), (lb, rb) = dimension_numbers
  shape, dtype = _out(eqn)
  # XLA multiplies and sums in the wider of the operand and result types and converts the
  # sum (a float dot with an int32 result truncates the sum, not the operands); booleans
  # are counted as int32, and a real result of complex operands is the real part
  # (operands of two dtypes: both converted to the type tier 0 sums them in)
  if lhs.dtype != rhs.dtype:
    compute = red.dot_accumulation_dtype(red.dot_operand_dtype(lhs.dtype, rhs.dtype), dtype)
  else:
    compute = dtype if lhs.dtype == dtype else np.promote_types(lhs.dtype, dtype)
  compute = np.dtype(np.int32) if compute == np.bool_ else compute
  lhs, rhs = convert(b, lhs, compute), convert(b, rhs, compute)
  dn = (f"#stablehlo.dot<lhs_batching_dimensions = {_list(lb)}, "
        f"rhs_batching_dimensions = {_list(rb)}, lhs_contracting_dimensions = {_list(lc)}, "
        f"rhs_contracting_dimensions = {_list(rc)}>")
  out = b.op1("stablehlo.dot_general", [lhs, rhs], shape, compute,
              f"dot_dimension_numbers = {dn}, {_precision_config(precision)}")
  if dtype == np.bool_:
    return compare(b, out, full(b, 0, shape, compute), "NE")
  if compute.kind == "c" and dtype.kind != "c":
    out = b.op1("stablehlo.real", [out], shape, np.finfo(compute).dtype)
  return convert(b, out, dtype)


lowering_rules[red.dot_general_p] = _dot_general_rule


# -- shapes

def _slice(b, x, starts, limits, strides):
  shape = tuple(max(0, -(-(hi - lo) // st)) for lo, hi, st in zip(starts, limits, strides))
  return b.op1("stablehlo.slice", [x], shape, x.dtype,
               f"limit_indices = {_i64s(limits)}, start_indices = {_i64s(starts)}, "
               f"strides = {_i64s(strides)}")


def _index_scalars(b, starts):
  """Dynamic start indices as scalars of one integer type (StableHLO requires it)."""
  dtypes = {s.dtype for s in starts}
  dtype = dtypes.pop() if len(dtypes) == 1 else np.dtype(np.int64)
  return [convert(b, s, dtype) for s in starts]


def _dynamic_slice_rule(b, eqn, x, *starts, slice_sizes):
  return b.op1("stablehlo.dynamic_slice", [x] + _index_scalars(b, starts), *_out(eqn),
               f"slice_sizes = {_i64s(slice_sizes)}")


def _dynamic_update_slice_rule(b, eqn, x, update, *starts):
  return b.op1("stablehlo.dynamic_update_slice", [x, update] + _index_scalars(b, starts),
               *_out(eqn))


def _pad_rule(b, eqn, x, value, *, padding_config):
  lo, hi, interior = zip(*padding_config) if padding_config else ((), (), ())
  return b.op1("stablehlo.pad", [x, value], *_out(eqn),
               f"edge_padding_high = {_i64s(hi)}, edge_padding_low = {_i64s(lo)}, "
               f"interior_padding = {_i64s(interior)}")


lowering_rules.update({
    sh.broadcast_in_dim_p: lambda b, eqn, x, *, shape, broadcast_dimensions, sharding:
        broadcast(b, x, shape, broadcast_dimensions),
    sh.reshape_p: lambda b, eqn, x, **_: b.op1("stablehlo.reshape", [x], *_out(eqn)),
    sh.squeeze_p: lambda b, eqn, x, **_: b.op1("stablehlo.reshape", [x], *_out(eqn)),
    sh.transpose_p: lambda b, eqn, x, *, permutation: b.op1(
        "stablehlo.transpose", [x], *_out(eqn), f"permutation = {_i64s(permutation)}"),
    sh.concatenate_p: lambda b, eqn, *xs, dimension: b.op1(
        "stablehlo.concatenate", list(xs), *_out(eqn), f"dimension = {dimension} : i64"),
    sh.slice_p: lambda b, eqn, x, *, start_indices, limit_indices, strides: _slice(
        b, x, start_indices, limit_indices, strides or (1,) * len(x.shape)),
    sh.rev_p: lambda b, eqn, x, *, dimensions: b.op1(
        "stablehlo.reverse", [x], *_out(eqn), f"dimensions = {_i64s(dimensions)}"),
    sh.iota_p: lambda b, eqn, *, dtype, shape, dimension, sharding: b.op1(
        "stablehlo.iota", [], shape, dtype, f"iota_dimension = {dimension} : i64"),
    sh.pad_p: _pad_rule,
    ix.dynamic_slice_p: _dynamic_slice_rule,
    ix.dynamic_update_slice_p: _dynamic_update_slice_rule,
})


# -- gather and scatter

def _gather_rule(b, eqn, x, idx, *, dimension_numbers, slice_sizes, indices_are_sorted,
                 unique_indices, mode, fill_value):
  dn = dimension_numbers
  shape, dtype = _out(eqn)
  batching = (f", operand_batching_dims = {_list(dn.operand_batching_dims)}, "
              f"start_indices_batching_dims = {_list(dn.start_indices_batching_dims)}"
              if dn.operand_batching_dims else "")
  attr = (f"dimension_numbers = #stablehlo.gather<offset_dims = {_list(dn.offset_dims)}, "
          f"collapsed_slice_dims = {_list(dn.collapsed_slice_dims)}{batching}, "
          f"start_index_map = {_list(dn.start_index_map)}, "
          f"index_vector_dim = {len(idx.shape) - 1}>, "
          f"indices_are_sorted = {str(bool(indices_are_sorted)).lower()}, "
          f"slice_sizes = {_i64s(slice_sizes)}")
  # XLA's gather clamps start indices into bounds, which is CLIP and PROMISE_IN_BOUNDS
  out = b.op1("stablehlo.gather", [x, idx], shape, dtype, attr)
  if mode != GatherScatterMode.FILL_OR_DROP:
    return out
  # FILL_OR_DROP: a window not wholly in bounds reads fill_value instead
  upper = np.array([x.shape[d] - slice_sizes[d] for d in dn.start_index_map])
  ok = binary(b, "and", compare(b, idx, full(b, 0, idx.shape, idx.dtype), "GE"),
              compare(b, idx, broadcast(b, constant(b, upper, idx.dtype), idx.shape,
                                        (len(idx.shape) - 1,)), "LE"))
  ok = reduce(b, [ok], [constant(b, True)], (len(idx.shape) - 1,),
              lambda b, a, c: [binary(b, "and", a[0], c[0])])[0]
  batch_dims = [d for d in range(len(shape)) if d not in dn.offset_dims]
  ok = broadcast(b, ok, shape, batch_dims)
  with np.errstate(invalid="ignore"):
    fill = np.array(fill_value).astype(dtype)
  return select(b, ok, out, full(b, fill, shape, dtype))


def _updates_whole_array(x, idx, updates, dn, update_jaxpr, update_consts) -> bool:
  """Whether a scatter writes one window covering all of ``x`` (``x.at[0:].set(y)``) with
  an elementwise combiner. XLA rewrites such a scatter into a ``map``, which its algebraic
  simplifier then mishandles: a ``reverse`` of it fails a CHECK and aborts the process
  (JAX 0.10.2 aborts the same way). These are lowered as elementwise ops instead."""
  return (idx.shape == (0,) and updates.shape == x.shape and not dn.inserted_window_dims
          and not dn.operand_batching_dims and not update_consts
          and tuple(dn.update_window_dims) == tuple(range(len(x.shape)))
          and (update_jaxpr is None or all(e.primitive in _ELEMENTWISE
                                           for e in update_jaxpr.eqns)))


_ELEMENTWISE = frozenset(ew.elementwise_primitives.values())


def _on_arrays(scalar_jaxpr: core.Jaxpr, shape) -> core.Jaxpr:
  """An elementwise jaxpr of scalars, applied to arrays of ``shape``."""
  lifted = {}

  def var(v):
    if type(v) is core.Literal:
      return v
    if v not in lifted:
      lifted[v] = core.Var(v.aval.update(shape=shape))
    return lifted[v]
  eqns = [e._replace(invars=list(map(var, e.invars)), outvars=list(map(var, e.outvars)))
          for e in scalar_jaxpr.eqns]
  return core.Jaxpr([], list(map(var, scalar_jaxpr.invars)),
                    list(map(var, scalar_jaxpr.outvars)), eqns)


def _scatter_rule(b, eqn, x, idx, updates, *, dimension_numbers, indices_are_sorted,
                  unique_indices, mode, update_jaxpr, update_consts):
  dn = dimension_numbers
  if _updates_whole_array(x, idx, updates, dn, update_jaxpr, update_consts):
    if update_jaxpr is None:
      return updates
    return lower_jaxpr(b, _on_arrays(update_jaxpr, x.shape), [], [x, updates])[0]
  if mode == GatherScatterMode.CLIP:
    # clamp each window into bounds; XLA itself skips out-of-bounds windows (the drop
    # semantics of FILL_OR_DROP and PROMISE_IN_BOUNDS)
    dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    window = [1] * len(x.shape)
    for d, u in zip([d for d in range(len(x.shape)) if d not in dropped],
                    dn.update_window_dims):
      window[d] = updates.shape[u]
    upper = np.array([x.shape[d] - window[d] for d in dn.scatter_dims_to_operand_dims])
    hi = broadcast(b, constant(b, upper, idx.dtype), idx.shape, (len(idx.shape) - 1,))
    idx = b.op1("stablehlo.clamp", [full(b, 0, idx.shape, idx.dtype), idx, hi], idx.shape,
                idx.dtype)
  batching = (f", input_batching_dims = {_list(dn.operand_batching_dims)}, "
              f"scatter_indices_batching_dims = {_list(dn.scatter_indices_batching_dims)}"
              if dn.operand_batching_dims else "")
  attr = (f"indices_are_sorted = {str(bool(indices_are_sorted)).lower()}, "
          f"scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = "
          f"{_list(dn.update_window_dims)}, inserted_window_dims = "
          f"{_list(dn.inserted_window_dims)}{batching}, scatter_dims_to_operand_dims = "
          f"{_list(dn.scatter_dims_to_operand_dims)}, index_vector_dim = "
          f"{len(idx.shape) - 1}>, unique_indices = {str(bool(unique_indices)).lower()}")

  def body(b, args):
    if update_jaxpr is None:
      return [args[1]]
    consts = [constant(b, np.asarray(c)) for c in update_consts]
    return lower_jaxpr(b, update_jaxpr, consts, args)
  region = b.region([((), x.dtype), ((), x.dtype)], body)
  return b.op("stablehlo.scatter", [x, idx, updates], [(x.shape, x.dtype)], attr, [region])


lowering_rules[ix.gather_p] = _gather_rule
for _prim in (ix.scatter_p, ix.scatter_add_p, ix.scatter_sub_p, ix.scatter_mul_p,
              ix.scatter_min_p, ix.scatter_max_p):
  lowering_rules[_prim] = _scatter_rule


# -- control flow and calls

def lower_closed(b: Builder, closed, args) -> list[V]:
  """Emit ``closed`` inline on lowered ``args`` (its consts become constants)."""
  if isinstance(closed, core.Jaxpr):
    return lower_jaxpr(b, closed, [], args)
  consts = [constant(b, np.asarray(c)) for c in closed.consts]
  return lower_jaxpr(b, closed.jaxpr, consts, args)


def _cond_rule(b, eqn, index, *ops, branches):
  outs = [(v.aval.shape, v.aval.dtype) for v in eqn.outvars]
  # case regions may use values from above, so branches read the operands directly
  regions = [b.region([], lambda b, _, br=br: lower_closed(b, br, list(ops)))
             for br in branches]
  return b.op("stablehlo.case", [index], outs, None, regions)


def _while_rule(b, eqn, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
  # the consts ride along in the carry (as JAX does) so the regions are self-contained
  specs = [(a.shape, a.dtype) for a in args]
  nc = cond_nconsts + body_nconsts

  def cond(b, vals):
    return lower_closed(b, cond_jaxpr, vals[:cond_nconsts] + vals[nc:])

  def body(b, vals):
    new = lower_closed(b, body_jaxpr, vals[cond_nconsts:nc] + vals[nc:])
    return vals[:nc] + new
  outs = b.op("stablehlo.while", list(args), specs, None,
              [b.region(specs, cond), b.region(specs, body)])
  return outs[nc:]


def _scan_rule(b, eqn, *args, jaxpr, length, reverse, num_consts, num_carry, unroll,
               linear):
  consts, carry, xs = (list(args[:num_consts]), list(args[num_consts:num_consts + num_carry]),
                       list(args[num_consts + num_carry:]))
  ys_avals = [v.aval for v in eqn.outvars[num_carry:]]
  i32 = np.dtype(np.int32)
  ys = [full(b, 0, a.shape, a.dtype) for a in ys_avals]
  state = [constant(b, 0, i32)] + consts + carry + xs + ys
  specs = [(a.shape, a.dtype) for a in state]
  nc, nk, nx = len(consts), len(carry), len(xs)

  def cond(b, vals):
    return [compare(b, vals[0], constant(b, length, i32), "LT")]

  def body(b, vals):
    i, c, k, x, y = (vals[0], vals[1:1 + nc], vals[1 + nc:1 + nc + nk],
                     vals[1 + nc + nk:1 + nc + nk + nx], vals[1 + nc + nk + nx:])
    t = binary(b, "subtract", constant(b, length - 1, i32), i) if reverse else i
    zero = constant(b, 0, i32)
    x_t = [reshape(b, b.op1("stablehlo.dynamic_slice", [xv, t] + [zero] * (len(xv.shape) - 1),
                            (1,) + xv.shape[1:], xv.dtype,
                            f"slice_sizes = {_i64s((1,) + xv.shape[1:])}"), xv.shape[1:])
           for xv in x]
    outs = lower_closed(b, jaxpr, c + k + x_t)
    new_y = [b.op1("stablehlo.dynamic_update_slice",
                   [yv, reshape(b, o, (1,) + o.shape), t] + [zero] * len(o.shape),
                   yv.shape, yv.dtype) for yv, o in zip(y, outs[nk:])]
    return [binary(b, "add", i, constant(b, 1, i32))] + c + outs[:nk] + x + new_y
  outs = b.op("stablehlo.while", state, specs, None,
              [b.region(specs, cond), b.region(specs, body)])
  return outs[1 + nc:1 + nc + nk] + outs[1 + nc + nk + nx:]


def _jit_rule(b, eqn, *args, jaxpr, name):
  return lower_closed(b, jaxpr, list(args))


lowering_rules.update({call.jit_p: _jit_rule, cf.cond_p: _cond_rule,
                       cf.while_p: _while_rule, cf.scan_p: _scan_rule})


def _call_rule(param):
  return lambda b, eqn, *args, **params: lower_closed(b, params[param], list(args))


def _linear_call_rule(b, eqn, *args, callee, num_callee_consts, num_transpose_consts, **_):
  """``linear_call``: the callee inline, on its own consts and the operands."""
  operands = list(args[:num_callee_consts]) + list(
      args[num_callee_consts + num_transpose_consts:])
  return lower_closed(b, callee, operands)


def _round_rule(b, eqn, x, *, rounding_method):
  name = "round_nearest_even" if int(rounding_method) == 1 else "round_nearest_afz"
  return unary(b, name, x)


def _conj_rule(b, eqn, x, **_):
  shape, dtype = _out(eqn)
  if x.dtype.kind != "c":
    return convert(b, x, dtype)
  part = np.finfo(x.dtype).dtype
  re = b.op1("stablehlo.real", [x], x.shape, part)
  im = unary(b, "negate", b.op1("stablehlo.imag", [x], x.shape, part))
  return b.op1("stablehlo.complex", [re, im], shape, dtype)


def _compare_as(b: Builder, x: V, y: V, direction: str, kind: str) -> V:
  return b.op1("stablehlo.compare", [x, y], x.shape, np.bool_,
               f"compare_type = #stablehlo<comparison_type {kind}>, "
               f"comparison_direction = #stablehlo<comparison_direction {direction}>")


def _pads_attr(pads) -> str:
  body = ", ".join(f"[{int(lo)}, {int(hi)}]" for lo, hi in pads)
  return f"dense<[{body}]> : tensor<{len(pads)}x2xi64>" if pads else "dense<> : tensor<0x2xi64>"


def reduce_window(b: Builder, x: V, init: V, body, window, strides=None, padding=None,
                  base_dilation=None, window_dilation=None) -> V:
  """``stablehlo.reduce_window`` of one operand; ``body(b, acc, x)`` combines scalars."""
  return reduce_windows(b, [x], [init], lambda b, a, c: [body(b, a[0], c[0])], window,
                        strides, padding, base_dilation, window_dilation)[0]


def reduce_windows(b: Builder, xs, inits, body, window, strides=None, padding=None,
                   base_dilation=None, window_dilation=None) -> list[V]:
  """``stablehlo.reduce_window`` of operands ``xs`` of one shape; ``body(b, accs, xs)``
  combines lists of scalars.

  Negative padding (a crop) is applied by a ``stablehlo.pad`` first, together with the
  base dilation, since reduce_window itself takes only non-negative padding.
  """
  n = len(xs[0].shape)
  strides = tuple(strides or (1,) * n)
  padding = tuple(tuple(p) for p in (padding or ((0, 0),) * n))
  base_dilation = tuple(base_dilation or (1,) * n)
  window_dilation = tuple(window_dilation or (1,) * n)
  if any(lo < 0 or hi < 0 for lo, hi in padding):
    shape = tuple(max(0, (d - 1) * r + 1 if d else 0) + lo + hi
                  for d, r, (lo, hi) in zip(xs[0].shape, base_dilation, padding))
    attr = (f"edge_padding_high = {_i64s([hi for _, hi in padding])}, "
            f"edge_padding_low = {_i64s([lo for lo, _ in padding])}, "
            f"interior_padding = {_i64s([r - 1 for r in base_dilation])}")
    xs = [b.op1("stablehlo.pad", [x, i], shape, x.dtype, attr) for x, i in zip(xs, inits)]
    padding, base_dilation = ((0, 0),) * n, (1,) * n
  out_shape = []
  for d, w, s, (lo, hi), bd, wd in zip(xs[0].shape, window, strides, padding, base_dilation,
                                       window_dilation):
    size = (0 if d == 0 else (d - 1) * bd + 1) + lo + hi
    span = (w - 1) * wd + 1
    out_shape.append(0 if size < span else (size - span) // s + 1)
  out_shape = tuple(out_shape)
  if 0 in out_shape or 0 in xs[0].shape:
    return [broadcast(b, i, out_shape) for i in inits]
  k = len(xs)
  region = b.region([((), x.dtype) for x in xs] * 2, lambda b, a: body(b, a[:k], a[k:]))
  attr = (f"base_dilations = {_i64s(base_dilation)}, padding = {_pads_attr(padding)}, "
          f"window_dilations = {_i64s(window_dilation)}, "
          f"window_dimensions = {_i64s(window)}, window_strides = {_i64s(strides)}")
  return b.op("stablehlo.reduce_window", list(xs) + list(inits),
              [(out_shape, x.dtype) for x in xs], attr, [region])


def _logaddexp(b, x, y):
  # as JAX: max + log1p(exp(-|x - y|)), and x + y where x - y is NaN (equal infinities)
  if x.dtype.kind == "c":
    return _complex_logaddexp(b, x, y)
  d = binary(b, "subtract", x, y)
  r = binary(b, "add", binary(b, "maximum", x, y),
             unary(b, "log_plus_one", unary(b, "exponential", unary(b, "negate",
                                                                    unary(b, "abs", d)))))
  return select(b, compare(b, d, d, "NE"), binary(b, "add", x, y), r)


def _complex_logaddexp(b, x, y):
  """JAX's complex logaddexp: ``m + log1p(exp(x + y - 2 m))`` around the larger ``m``
  (lexicographically), the imaginary part wrapped into [-pi, pi)."""
  big = _complex_minmax(b, "maximum", x, y)
  delta = binary(b, "subtract", binary(b, "add", x, y),
                 binary(b, "multiply", big, constant(b, 2, x.dtype)))
  out = binary(b, "add", big, unary(b, "log_plus_one", unary(b, "exponential", delta)))
  part = np.finfo(x.dtype).dtype
  re, im = unary(b, "real", out, part), unary(b, "imag", out, part)
  pi, two_pi, zero = (constant(b, v, part) for v in (np.pi, 2 * np.pi, 0))
  rem = binary(b, "remainder", binary(b, "add", im, pi), two_pi)
  rem = select(b, compare(b, rem, zero, "LT"), binary(b, "add", rem, two_pi), rem)
  return b.op1("stablehlo.complex", [re, binary(b, "subtract", rem, pi)], x.shape, x.dtype)


def _cumulative_rule(op, wide=False):
  def rule(b, eqn, x, *, axis, reverse):
    if x.shape[axis] == 0:
      return x
    dtype = x.dtype
    init = sorting.scan_identity(eqn.primitive, dtype)
    if wide and dtype.itemsize < 4:   # narrow floats accumulate in float32, as tier 0
      x = convert(b, x, np.float32)
    # a window of the whole axis, padded on one side: XLA's own lowering on CPU
    n = x.shape[axis]
    window = [1] * len(x.shape)
    window[axis] = n
    pad = [[0, 0] for _ in x.shape]
    pad[axis][1 if reverse else 0] = n - 1
    body = op if callable(op) else (lambda b, a, c: _combine(b, op, a, c))
    out = reduce_window(b, x, constant(b, init, x.dtype), body, window,
                        padding=pad)
    return convert(b, out, dtype)
  return rule


def _reduce_window_rule(op, init_fn):
  def rule(b, eqn, x, *, window_dimensions, window_strides, padding, base_dilation,
           window_dilation):
    init = constant(b, init_fn(x.dtype), x.dtype)
    return reduce_window(b, x, init, lambda b, a, c: _combine(b, op, a, c),
                         window_dimensions, window_strides, padding, base_dilation,
                         window_dilation)
  return rule


def _reduce_window_computation_rule(b, eqn, *args, jaxpr, consts, window_dimensions,
                                    window_strides, padding, base_dilation, window_dilation):
  n = len(args) // 2
  closed = core.ClosedJaxpr(jaxpr, consts)
  return reduce_windows(b, list(args[:n]), list(args[n:]),
                        lambda b, accs, xs: lower_closed(b, closed, list(accs) + list(xs)),
                        window_dimensions, window_strides, padding, base_dilation,
                        window_dilation)


# -- sorting

def _sort_keys(b, x: V) -> list[V]:
  """``x`` as keys for a total-order comparison: -0.0 as 0.0 and every NaN as one positive
  NaN (so NaNs sort last), complex numbers as (real, imag)."""
  if x.dtype.kind == "c":
    part = np.finfo(x.dtype).dtype
    return (_sort_keys(b, b.op1("stablehlo.real", [x], x.shape, part))
            + _sort_keys(b, b.op1("stablehlo.imag", [x], x.shape, part)))
  if dtypes.is_floating(x.dtype):   # bfloat16 too, whose NumPy kind is "V"
    zero = constant(b, 0, x.dtype)
    x = select(b, compare(b, x, zero, "EQ"), zero, x)
    x = select(b, compare(b, x, x, "NE"), constant(b, np.nan, x.dtype), x)
  return [x]


def _lexicographic(b, lhs: list[V], rhs: list[V], direction: str) -> V:
  """``lhs`` before ``rhs``: keys compared in order, each in ``direction`` (LT or GT)."""
  kind = lambda v: "TOTALORDER" if dtypes.is_floating(v.dtype) else _compare_type(v.dtype)
  out = None
  for x, y in reversed(list(zip(lhs, rhs))):
    first = _compare_as(b, x, y, direction, kind(x))
    out = first if out is None else binary(
        b, "or", first, binary(b, "and", _compare_as(b, x, y, "EQ", kind(x)), out))
  return out


def sort(b: Builder, operands, dimension, num_keys, direction="LT",
         keys=_sort_keys) -> list[V]:
  """A stable ``stablehlo.sort`` of ``operands`` by their first ``num_keys``, each compared
  as the values ``keys`` makes of it."""
  scalars = [((), x.dtype) for x in operands for _ in range(2)]

  def comparator(b, args):
    lhs = [k for i in range(num_keys) for k in keys(b, args[2 * i])]
    rhs = [k for i in range(num_keys) for k in keys(b, args[2 * i + 1])]
    return [_lexicographic(b, lhs, rhs, direction)]
  # always stable: tier 0 is, and equal keys must come out in one order on both tiers
  return b.op("stablehlo.sort", list(operands), [(x.shape, x.dtype) for x in operands],
              f"dimension = {dimension} : i64, is_stable = true",
              [b.region(scalars, comparator)])


def _sort_rule(b, eqn, *operands, dimension, is_stable, num_keys):
  if 0 in operands[0].shape:
    return list(operands)
  return sort(b, operands, dimension, num_keys)


def _top_k_rule(b, eqn, x, *, k, axis):
  shape = list(x.shape)
  index = b.op1("stablehlo.iota", [], x.shape, np.int32, f"iota_dimension = {axis} : i64")
  if 0 in x.shape:
    values, indices = x, index
  else:
    # descending and stable: ties keep the lower index first; floats in XLA's total order
    # (-NaN < -inf < -0.0 < 0.0 < inf < NaN), as its TopK compares them
    values, indices = sort(b, [x, index], axis, 1, "GT", keys=lambda b, v: [v])
  limits = shape[:axis] + [k] + shape[axis + 1:]
  zeros, ones = [0] * len(shape), [1] * len(shape)
  return [_slice(b, values, zeros, limits, ones), _slice(b, indices, zeros, limits, ones)]


# -- convolution and FFT

def _conv_rule(b, eqn, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count, precision,
               preferred_element_type, out_sharding):
  shape, dtype = _out(eqn)
  lhs_spec, rhs_spec, out_spec = dimension_numbers

  def layout(spec, names):
    letters = [""] * len(spec)
    for i, axis in enumerate(spec):
      letters[axis] = names[i] if i < 2 else str(i - 2)
    return "[" + ", ".join(letters) + "]"
  compute = np.dtype(np.int32) if dtype == np.bool_ else dtype
  lhs, rhs = convert(b, lhs, compute), convert(b, rhs, compute)
  n = len(lhs.shape) - 2
  if any(lo < 0 or hi < 0 for lo, hi in padding):
    # XLA's CPU convolution reads out of bounds with negative padding: crop (and dilate)
    # the input with stablehlo.pad first
    lo, hi, interior = [0] * len(lhs.shape), [0] * len(lhs.shape), [0] * len(lhs.shape)
    for i, axis in enumerate(lhs_spec[2:]):
      lo[axis], hi[axis] = padding[i]
      interior[axis] = lhs_dilation[i] - 1
    new_shape = tuple((0 if d == 0 else (d - 1) * (r + 1) + 1) + l + h
                      for d, l, h, r in zip(lhs.shape, lo, hi, interior))
    lhs = b.op1("stablehlo.pad", [lhs, constant(b, 0, compute)], new_shape, compute,
                f"edge_padding_high = {_i64s(hi)}, edge_padding_low = {_i64s(lo)}, "
                f"interior_padding = {_i64s(interior)}")
    padding, lhs_dilation = ((0, 0),) * n, (1,) * n
  attr = (f"batch_group_count = {int(batch_group_count)} : i64, "
          f"dimension_numbers = #stablehlo.conv<{layout(lhs_spec, 'bf')}x"
          f"{layout(rhs_spec, 'oi')}->{layout(out_spec, 'bf')}>, "
          f"feature_group_count = {int(feature_group_count)} : i64, "
          f"lhs_dilation = {_i64s(lhs_dilation)}, padding = {_pads_attr(padding)}, "
          f"{_precision_config(precision)}, rhs_dilation = {_i64s(rhs_dilation)}, "
          f"window_reversal = array<i1{': ' if n else ''}"
          f"{', '.join(['false'] * n)}>, window_strides = {_i64s(window_strides)}")
  if 0 in shape:
    return full(b, 0, shape, dtype)
  out = b.op1("stablehlo.convolution", [lhs, rhs], shape, compute, attr)
  if dtype == np.bool_:
    return compare(b, out, full(b, 0, shape, compute), "NE")
  return out


def _fft_rule(b, eqn, x, *, fft_type, fft_lengths):
  shape, dtype = _out(eqn)
  kind = ("FFT", "IFFT", "RFFT", "IRFFT")[int(fft_type)]
  if kind == "RFFT":
    x = convert(b, x, np.float64 if dtype == np.complex128 else np.float32)
  if 0 in x.shape or 0 in shape:
    return full(b, 0, shape, dtype)
  return b.op1("stablehlo.fft", [x], shape, dtype,
               f"fft_length = {_i64s(fft_lengths)}, "
               f"fft_type = #stablehlo<fft_type {kind}>")


# -- the threefry2x32 hash, in uint32 arithmetic that wraps as the cipher requires

_THREEFRY_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


@_elementwise
def _threefry2x32_rule(b, eqn, k1, k2, x1, x2):
  shape, u32 = k1.shape, np.dtype(np.uint32)
  consts = {}

  def c(v):
    if v not in consts:
      consts[v] = full(b, v, shape, u32)
    return consts[v]

  add = lambda p, q: binary(b, "add", p, q)
  ks = (k1, k2, binary(b, "xor", binary(b, "xor", k1, k2), c(0x1BD11BDA)))
  x0, x1 = add(x1, ks[0]), add(x2, ks[1])
  for i in range(5):
    for r in _THREEFRY_ROTATIONS[i % 2]:
      x0 = add(x0, x1)
      rotated = binary(b, "or", binary(b, "shift_left", x1, c(r)),
                       binary(b, "shift_right_logical", x1, c(32 - r)))
      x1 = binary(b, "xor", rotated, x0)
    x0 = add(x0, ks[(i + 1) % 3])
    x1 = add(add(x1, ks[(i + 2) % 3]), c(i + 1))
  return [x0, x1]


# -- linear algebra as explicit loops (the other decompositions are in linalg.py)

def _batched(b, x: V):
  """``x`` (..., r, c) as (B, r, c), and how to restore the batch shape."""
  batch = x.shape[:-2]
  flat = reshape(b, x, (int(np.prod(batch, dtype=np.int64)),) + x.shape[-2:])
  return flat, lambda y: reshape(b, y, batch + y.shape[1:])


def _dslice(b, x: V, starts, sizes) -> V:
  return b.op1("stablehlo.dynamic_slice", [x] + list(starts), tuple(sizes), x.dtype,
               f"slice_sizes = {_i64s(sizes)}")


def _bdot(b, x: V, y: V, x_contract: int, y_contract: int) -> V:
  """A product batched over axis 0 of both operands, in full precision on every device
  (a decomposition's products, which JAX's own computes at HIGHEST)."""
  shape = ((x.shape[0],) + tuple(d for i, d in enumerate(x.shape) if i not in (0, x_contract))
           + tuple(d for i, d in enumerate(y.shape) if i not in (0, y_contract)))
  return b.op1("stablehlo.dot_general", [x, y], shape, x.dtype,
               "dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], "
               f"rhs_batching_dimensions = [0], lhs_contracting_dimensions = [{x_contract}], "
               f"rhs_contracting_dimensions = [{y_contract}]>, "
               + _precision_config((precision_lib.Precision.HIGHEST,) * 2))


def _conj(b, x: V) -> V:
  if x.dtype.kind != "c":
    return x
  part = np.finfo(x.dtype).dtype
  re = b.op1("stablehlo.real", [x], x.shape, part)
  im = unary(b, "negate", b.op1("stablehlo.imag", [x], x.shape, part))
  return b.op1("stablehlo.complex", [re, im], x.shape, x.dtype)


def _loop(b, n: int, state: list, body) -> list:
  """``for j in range(n): state = body(b, j, state)`` as a stablehlo.while."""
  i32 = np.dtype(np.int32)
  init = [constant(b, 0, i32)] + list(state)
  specs = [(v.shape, v.dtype) for v in init]

  def cond(b, vals):
    return [compare(b, vals[0], constant(b, n, i32), "LT")]

  def step(b, vals):
    return [binary(b, "add", vals[0], constant(b, 1, i32))] + list(body(b, vals[0], vals[1:]))
  return b.op("stablehlo.while", init, specs, None,
              [b.region(specs, cond), b.region(specs, step)])[1:]


def _cholesky_rule(b, eqn, x):
  """Column by column (Cholesky-Crout), reading the lower triangle; a matrix that is not
  positive definite gives NaNs everywhere, as tier 0 and XLA do."""
  n = x.shape[-1]
  if n == 0 or 0 in x.shape:
    return x
  a, restore = _batched(b, x)
  nb, dtype = a.shape[0], x.dtype
  real = np.finfo(dtype).dtype if dtype.kind == "c" else dtype
  zero_i = constant(b, 0, np.int32)

  def body(b, j, state):
    a, L, ok = state
    row = reshape(b, _dslice(b, L, [zero_i, j, zero_i], (nb, 1, n)), (nb, n))
    col = reshape(b, _dslice(b, a, [zero_i, zero_i, j], (nb, n, 1)), (nb, n))
    ajj = reshape(b, _dslice(b, a, [zero_i, j, j], (nb, 1, 1)), (nb,))
    sq = binary(b, "multiply", row, _conj(b, row))
    d = binary(b, "subtract", ajj, reduce(b, [sq], [constant(b, 0, dtype)], (1,),
                                          lambda b, p, q: [binary(b, "add", p[0], q[0])])[0])
    d_real = b.op1("stablehlo.real", [d], d.shape, real) if dtype.kind == "c" else d
    ok = binary(b, "and", ok, compare(b, d_real, full(b, 0, (nb,), real), "GT"))
    ljj = convert(b, unary(b, "sqrt", d_real), dtype)
    new = binary(b, "divide", binary(b, "subtract", col, _bdot(b, L, _conj(b, row), 2, 1)),
                 broadcast(b, ljj, (nb, n), (0,)))
    rows = b.op1("stablehlo.iota", [], (nb, n), np.int32, "iota_dimension = 1 : i64")
    jj = broadcast(b, j, (nb, n))
    new = select(b, compare(b, rows, jj, "GT"), new,
                 select(b, compare(b, rows, jj, "EQ"), broadcast(b, ljj, (nb, n), (0,)),
                        full(b, 0, (nb, n), dtype)))
    L = b.op1("stablehlo.dynamic_update_slice",
              [L, reshape(b, new, (nb, n, 1)), zero_i, zero_i, j], L.shape, dtype)
    return [a, L, ok]
  _, L, ok = _loop(b, n, [a, full(b, 0, a.shape, dtype), full(b, True, (nb,), np.bool_)],
                   body)
  out = select(b, broadcast(b, ok, a.shape, (0,)), L, full(b, np.nan, a.shape, dtype))
  return restore(out)


def _triangular_solve_rule(b, eqn, a, rhs, *, left_side, lower, transpose_a, conjugate_a,
                           unit_diagonal):
  """Substitution row by row, after rewriting every case as ``L x = b``, L lower."""
  n = a.shape[-1]
  if 0 in rhs.shape:
    return rhs
  a, _ = _batched(b, a)
  rhs, restore = _batched(b, rhs)
  nb, dtype = a.shape[0], a.dtype
  rows = b.op1("stablehlo.iota", [], a.shape, np.int32, "iota_dimension = 1 : i64")
  cols = b.op1("stablehlo.iota", [], a.shape, np.int32, "iota_dimension = 2 : i64")
  a = select(b, compare(b, rows, cols, "GE" if lower else "LE"), a, full(b, 0, a.shape, dtype))
  if unit_diagonal:
    a = select(b, compare(b, rows, cols, "EQ"), full(b, 1, a.shape, dtype), a)
  if conjugate_a:
    a = _conj(b, a)
  T = lambda v: b.op1("stablehlo.transpose", [v], (v.shape[0], v.shape[2], v.shape[1]),
                      v.dtype, "permutation = array<i64: 0, 2, 1>")
  if transpose_a:
    a, lower = T(a), not lower
  if not left_side:   # x A = b  <=>  A^T x^T = b^T
    a, lower, rhs = T(a), not lower, T(rhs)
  if not lower:       # reverse rows and columns: an upper triangle becomes a lower one
    a = b.op1("stablehlo.reverse", [a], a.shape, dtype, "dimensions = array<i64: 1, 2>")
    rhs = b.op1("stablehlo.reverse", [rhs], rhs.shape, dtype, "dimensions = array<i64: 1>")
  m = rhs.shape[2]
  zero_i = constant(b, 0, np.int32)

  def body(b, i, state):
    a, rhs, x = state
    row = reshape(b, _dslice(b, a, [zero_i, i, zero_i], (nb, 1, n)), (nb, n))
    aii = reshape(b, _dslice(b, a, [zero_i, i, i], (nb, 1, 1)), (nb,))
    bi = reshape(b, _dslice(b, rhs, [zero_i, i, zero_i], (nb, 1, m)), (nb, m))
    xi = binary(b, "divide", binary(b, "subtract", bi, _bdot(b, row, x, 1, 1)),
                broadcast(b, aii, (nb, m), (0,)))
    x = b.op1("stablehlo.dynamic_update_slice", [x, reshape(b, xi, (nb, 1, m)), zero_i, i,
                                                 zero_i], x.shape, dtype)
    return [a, rhs, x]
  x = _loop(b, n, [a, rhs, full(b, 0, rhs.shape, dtype)], body)[2]
  if not lower:
    x = b.op1("stablehlo.reverse", [x], x.shape, dtype, "dimensions = array<i64: 1>")
  if not left_side:
    x = T(x)
  return restore(x)


# -- special functions written out

# Cephes' Chebyshev coefficients for exp(-|x|) I0(x) on [0, 8] and on (8, inf)
_I0E_A = (
    -4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
    1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
    -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
    9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
    -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
    1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
    -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
    1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
    -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
    1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1)
_I0E_B = (
    -7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
    3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
    1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
    -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
    7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
    -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
    3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
    2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
    8.04490411014108831608E-1)


def _chebyshev(b, x: V, coeffs) -> V:
  """Clenshaw's recurrence for sum c_i T_i(x / 2), as Cephes' chbevl."""
  b0 = b1 = b2 = full(b, 0, x.shape, x.dtype)
  for coef in coeffs:
    b2, b1 = b1, b0
    b0 = binary(b, "add", binary(b, "subtract", binary(b, "multiply", x, b1), b2),
                full(b, coef, x.shape, x.dtype))
  return binary(b, "multiply", full(b, 0.5, x.shape, x.dtype), binary(b, "subtract", b0, b2))


@_elementwise
def _bessel_i0e_rule(b, eqn, x):
  dtype = x.dtype
  x = unary(b, "abs", convert(b, x, np.float64 if dtype == np.float64 else np.float32))
  c = lambda v: full(b, v, x.shape, x.dtype)
  small = _chebyshev(b, binary(b, "subtract", binary(b, "multiply", c(0.5), x), c(2.0)),
                     _I0E_A)
  big = binary(b, "divide", _chebyshev(b, binary(b, "subtract", binary(b, "divide", c(32.0), x),
                                                 c(2.0)), _I0E_B), unary(b, "sqrt", x))
  return convert(b, select(b, compare(b, x, c(8.0), "LE"), small, big), dtype)


def _masked_while(b, state: list, done: V, maxiter: int, step) -> list:
  """Iterate ``state, converged = step(b, state)`` elementwise until every element is
  done (or ``maxiter``); elements already done keep their values."""
  i32 = np.dtype(np.int32)
  init = [constant(b, 0, i32), done] + list(state)
  specs = [(v.shape, v.dtype) for v in init]
  axes = tuple(range(len(done.shape)))

  def cond(b, vals):
    pending = unary(b, "not", vals[1])
    anyp = reduce(b, [pending], [constant(b, False)], axes,
                  lambda b, p, q: [binary(b, "or", p[0], q[0])])[0] if axes else pending
    return [binary(b, "and", anyp, compare(b, vals[0], constant(b, maxiter, i32), "LT"))]

  def body(b, vals):
    done, old = vals[1], vals[2:]
    new, converged = step(b, old)
    kept = [select(b, done, o, n) for o, n in zip(old, new)]
    return [binary(b, "add", vals[0], constant(b, 1, i32)), binary(b, "or", done, converged)
            ] + kept
  return b.op("stablehlo.while", init, specs, None,
              [b.region(specs, cond), b.region(specs, body)])[2:]


def lowered_function(fn):
  """A lowering rule that traces ``fn(*operands, **params)`` (a list of outputs, written
  with other primitives) on the equation's input types and emits its jaxpr inline (JAX's
  ``mlir.lower_fun``, through which it goes). ``fn`` is jaxlite's own code, standing for
  LAPACK or XLA: it is traced under the default numpy promotion options
  (``config.own_code``), whatever the user set."""
  def own(*args, **params):
    with config_lib.own_code():
      return fn(*args, **params)
  own.__name__ = getattr(fn, "__name__", "lowered")
  return lowering.as_rule(lowering.lower_fun(own, multiple_results=True))


@_elementwise
def _igamma_grad_a_rule(b, eqn, a, x):
  """d/da P(a, x) as tier 0 computes it: a fourth-order central difference of P in double
  precision, the step scaled with ``a`` so that relative accuracy holds across magnitudes."""
  f64 = np.dtype(np.float64)
  a64, x64 = convert(b, a, f64), convert(b, x, f64)
  h = binary(b, "multiply", full(b, 1e-4, a.shape, f64),
             binary(b, "maximum", full(b, 1, a.shape, f64), unary(b, "abs", a64)))
  p = lambda k: _igamma(b, binary(b, "add", a64, binary(b, "multiply", full(b, k, a.shape, f64),
                                                       h)), x64, False)
  sub = lambda u, v: binary(b, "subtract", u, v)
  num = sub(binary(b, "multiply", full(b, 8, a.shape, f64), sub(p(1), p(-1))), sub(p(2), p(-2)))
  out = binary(b, "divide", num, binary(b, "multiply", full(b, 12, a.shape, f64), h))
  return convert(b, out, a.dtype)


def _igamma(b, a: V, x: V, complement: bool) -> V:
  """Cephes' igam / igamc: a power series where x <= max(1, a), else a continued fraction
  for the complement; both as elementwise loops run until every element converges."""
  dt = a.dtype
  c = lambda v: full(b, v, a.shape, dt)
  mul = lambda p, q: binary(b, "multiply", p, q)
  div = lambda p, q: binary(b, "divide", p, q)
  add = lambda p, q: binary(b, "add", p, q)
  sub = lambda p, q: binary(b, "subtract", p, q)
  eps = np.finfo(dt).eps / 2
  lg = b.op1("chlo.lgamma", [a], a.shape, dt)
  ax = sub(sub(mul(a, unary(b, "log", x)), x), lg)
  underflow = compare(b, ax, c(-np.log(np.finfo(dt).max)), "LT")
  axe = select(b, underflow, c(0), unary(b, "exponential", ax))
  use_cf = binary(b, "and", compare(b, x, c(1), "GT"), compare(b, x, a, "GT"))
  finite = binary(b, "and", compare(b, a, c(0), "GT"), compare(b, x, c(0), "GT"))
  finite = binary(b, "and", finite, unary(b, "is_finite", x, np.bool_))

  def series_step(b, st):
    r, cc, ans = st
    r = add(r, c(1))
    cc = mul(cc, div(x, r))
    ans = add(ans, cc)
    return [r, cc, ans], compare(b, div(cc, ans), c(eps), "LE")
  skip = binary(b, "or", use_cf, unary(b, "not", finite))
  _, _, ans = _masked_while(b, [a, c(1), c(1)], skip, 2000, series_step)
  series = div(mul(ans, axe), a)

  big, biginv = 4503599627370496.0, 2.22044604925031308085e-16

  def cf_step(b, st):
    y, z, cc, pkm2, qkm2, pkm1, qkm1, ans = st
    cc, y, z = add(cc, c(1)), add(y, c(1)), add(z, c(2))
    yc = mul(y, cc)
    pk = sub(mul(pkm1, z), mul(pkm2, yc))
    qk = sub(mul(qkm1, z), mul(qkm2, yc))
    nz = compare(b, qk, c(0), "NE")
    r = div(pk, select(b, nz, qk, c(1)))
    t = select(b, nz, unary(b, "abs", div(sub(ans, r), r)), c(1))
    ans = select(b, nz, r, ans)
    scale = compare(b, unary(b, "abs", pk), c(big), "GT")
    sc = lambda v: select(b, scale, mul(v, c(biginv)), v)
    pkm2, pkm1, qkm2, qkm1 = sc(pkm1), sc(pk), sc(qkm1), sc(qk)
    return [y, z, cc, pkm2, qkm2, pkm1, qkm1, ans], compare(b, t, c(eps), "LE")
  y = sub(c(1), a)
  z = add(add(x, y), c(1))
  pkm1, qkm1 = add(x, c(1)), mul(z, x)
  skip = binary(b, "or", unary(b, "not", use_cf), unary(b, "not", finite))
  st = _masked_while(b, [y, z, c(0), c(1), x, pkm1, qkm1, div(pkm1, qkm1)], skip, 2000,
                     cf_step)
  cf = mul(st[7], axe)
  if complement:
    out = select(b, use_cf, cf, sub(c(1), series))
  else:
    out = select(b, use_cf, sub(c(1), cf), series)
  # edges, as scipy's gammainc / gammaincc
  x0 = compare(b, x, c(0), "EQ")
  xinf = compare(b, x, c(np.inf), "EQ")
  out = select(b, x0, c(1.0 if complement else 0.0), out)
  out = select(b, xinf, c(0.0 if complement else 1.0), out)
  a0 = compare(b, a, c(0), "EQ")
  out = select(b, a0, c(0.0 if complement else 1.0), out)
  bad = binary(b, "or", compare(b, a, c(0), "LT"), compare(b, x, c(0), "LT"))
  bad = binary(b, "or", bad, binary(b, "and", a0, x0))
  bad = binary(b, "or", bad, binary(b, "or", compare(b, a, a, "NE"), compare(b, x, x, "NE")))
  out = select(b, bad, c(np.nan), out)
  return out


def _rng_bit_generator_rule(b, eqn, key, *, shape, dtype, algorithm, out_sharding):
  # as JAX: a uint32[4] key travels as XLA's uint64[2] state
  u32, u64 = np.dtype(np.uint32), np.dtype(np.uint64)
  state = key
  if key.dtype == u32:
    state = b.op1("stablehlo.bitcast_convert", [reshape(b, key, (2, 2))], (2,), u64)
  name = {0: "DEFAULT", 1: "THREE_FRY", 2: "PHILOX"}[int(algorithm)]
  new, bits = b.op("stablehlo.rng_bit_generator", [state], [((2,), u64), (shape, dtype)],
                   f"rng_algorithm = #stablehlo<rng_algorithm {name}>")
  if key.dtype == u32:
    new = reshape(b, b.op1("stablehlo.bitcast_convert", [new], (2, 2), u32), (4,))
  return [new, bits]


# The rules of the families whose lowerings are written above; linalg.py (XLA's expanders,
# the linear algebra and gamma samplers as lowered functions) and callbacks.py (host
# callbacks: custom calls to an FFI handler) add theirs when the package loads them.
lowering_rules.update({
    cd.custom_jvp_call_p: _call_rule("call_jaxpr"),
    cd.custom_vjp_call_p: _call_rule("call_jaxpr"),
    custom_batching.custom_vmap_call_p: _call_rule("call"),
    cd.remat_p: _call_rule("jaxpr"), cd.stop_gradient_p: lambda b, eqn, x: x,
    ad_checkpoint.name_p: lambda b, eqn, x, *, name: x,
    cd.linear_call_p: _linear_call_rule,
    call.closed_call_p: _call_rule("call_jaxpr"),
    call.call_p: lambda b, eqn, *args, call_jaxpr: lower_closed(
        b, call.closed_of_call(call_jaxpr), list(args)),
    lax_special.erf_p: _simple("chlo.erf"), lax_special.erfc_p: _simple("chlo.erfc"),
    lax_special.erf_inv_p: _simple("chlo.erf_inv"),
    lax_special.lgamma_p: _simple("chlo.lgamma"),
    lax_special.digamma_p: _simple("chlo.digamma"),
    lax_special.polygamma_p: _simple("chlo.polygamma"),
    lax_special.zeta_p: _simple("chlo.zeta"),
    lax_special.bessel_i1e_p: _simple("chlo.bessel_i1e"),
    lax_bits.shift_left_p: _simple("stablehlo.shift_left"),
    lax_bits.shift_right_logical_p: _simple("stablehlo.shift_right_logical"),
    lax_bits.shift_right_arithmetic_p: _simple("stablehlo.shift_right_arithmetic"),
    lax_bits.population_count_p: _simple("stablehlo.popcnt"),
    lax_bits.clz_p: _simple("stablehlo.count_leading_zeros"), lax_bits.round_p: _round_rule,
    ew.real_p: _simple("stablehlo.real"), ew.imag_p: _simple("stablehlo.imag"),
    ew.complex_p: _simple("stablehlo.complex"), ew.conj_p: _conj_rule,
    call.optimization_barrier_p: lambda b, eqn, *xs: b.op(
        "stablehlo.optimization_barrier", list(xs), [(x.shape, x.dtype) for x in xs]),
    lax_bits.reduce_precision_p: lambda b, eqn, x, *, exponent_bits, mantissa_bits: b.op1(
        "stablehlo.reduce_precision", [x], x.shape, x.dtype,
        f"exponent_bits = {exponent_bits} : i32, mantissa_bits = {mantissa_bits} : i32"),
    lax_bits.bitcast_convert_type_p: lambda b, eqn, x, *, new_dtype: b.op1(
        "stablehlo.bitcast_convert", [x], *_out(eqn)),
    sorting.cumsum_p: _cumulative_rule("add"),
    sorting.cumprod_p: _cumulative_rule("multiply"),
    sorting.cummax_p: _cumulative_rule("maximum"),
    sorting.cummin_p: _cumulative_rule("minimum"),
    sorting.cumlogsumexp_p: _cumulative_rule(_logaddexp, wide=True),
    windowed.reduce_window_sum_p: _reduce_window_rule("add", lambda d: 0),
    windowed.reduce_window_max_p: _reduce_window_rule("maximum", dtypes.lowest),
    windowed.reduce_window_min_p: _reduce_window_rule("minimum", dtypes.highest),
    windowed.reduce_window_p: _reduce_window_computation_rule,
    sorting.sort_p: _sort_rule, sorting.top_k_p: _top_k_rule,
    convolution.conv_general_dilated_p: _conv_rule, fft.fft_p: _fft_rule,
    rng.threefry2x32_p: _threefry2x32_rule, rng.rng_bit_generator_p: _rng_bit_generator_rule,
    lax_special.bessel_i0e_p: _bessel_i0e_rule,
    linalg.cholesky_p: _cholesky_rule, linalg.triangular_solve_p: _triangular_solve_rule,
    lax_special.igamma_p: lowered_function(lambda a, x: [lax_special.igamma_value(a, x)]),
    lax_special.igammac_p: lowered_function(lambda a, x: [lax_special.igammac_value(a, x)]),
    lax_special.igamma_grad_a_p: _igamma_grad_a_rule,
})
unsupported[cd.custom_lin_p] = "it exists only inside linearize, before a jaxpr is compiled"


def _late_rule(prim):
  """The rule for ``prim``, which has none in the table: a library's primitive with an
  ``impl`` is lowered by tracing it (JAX would want a rule); anything else is an error."""
  rule = lowering.impl_lowering(prim)
  if rule is None:
    _missing(prim)
  return rule


# ----------------------------------------------------------------------------- collectives
# A pmap or shard_map program runs as one replica per mesh device, devices numbered in
# the mesh's row-major order. A collective over some mesh axes works within each group
# of replicas that differ only along those axes.

def _mesh_axes(b: Builder, names, prim_name):
  bound = dict(b.mesh_axes)
  for name in names:
    if name not in bound:
      raise NameError(f"unbound axis name: {name}. {prim_name} must run inside the pmap or "
                      "shard_map that binds the name.")
  return [n for n, _ in b.mesh_axes]


def replica_groups(mesh_axes, names) -> np.ndarray:
  """[groups, members] replica ids: members differ only along the mesh axes ``names``
  (in the order given: the first name is the major one)."""
  axis_names = [n for n, _ in mesh_axes]
  sizes = [s for _, s in mesh_axes]
  ids = np.arange(int(np.prod(sizes))).reshape(sizes)
  inside = [axis_names.index(n) for n in names]
  outside = [i for i in range(len(sizes)) if i not in inside]
  group = int(np.prod([sizes[i] for i in inside]))
  return ids.transpose(outside + inside).reshape(-1, group)


def index_groups(mesh_axes, names, axis_index_groups) -> list:
  """The replica groups of a collective over ``names`` within ``axis_index_groups``: as
  in JAX, each group of indices picks, in its order, the replicas at those positions of
  every group of ``replica_groups`` (all of them if no index groups)."""
  groups = replica_groups(mesh_axes, names)
  if axis_index_groups is None:
    return [list(g) for g in groups]
  return [[int(g[i]) for i in index_group] for g in groups
          for index_group in axis_index_groups]


def _groups_attr(groups) -> str:
  # groups of unequal size are padded with -1, as JAX does
  width = max(len(g) for g in groups)
  rows = ", ".join("[" + ", ".join(map(str, list(g) + [-1] * (width - len(g)))) + "]"
                   for g in groups)
  return f"replica_groups = dense<[{rows}]> : tensor<{len(groups)}x{width}xi64>"


def _all_reduce_rule(op):
  def rule(b, eqn, *xs, axes, axis_index_groups):
    _mesh_axes(b, axes, eqn.primitive.name)
    groups = _groups_attr(index_groups(b.mesh_axes, axes, axis_index_groups))
    outs = []
    for x in xs:
      # XLA's CPU all-reduce accepts only a plain binary op as its computation
      region = b.region([((), x.dtype)] * 2, lambda b, a: [binary(b, op, a[0], a[1])])
      outs.append(b.op("stablehlo.all_reduce", [x], [(x.shape, x.dtype)], groups,
                       [region])[0])
    return outs
  return rule


def _all_gather_rule(b, eqn, x, *, all_gather_dimension, axis_name, axis_index_groups,
                     axis_size, tiled):
  _mesh_axes(b, axis_name, "all_gather")
  g = all_gather_dimension
  if not tiled:
    x = reshape(b, x, x.shape[:g] + (1,) + x.shape[g:])
  shape = list(x.shape)
  shape[g] *= axis_size
  groups = _groups_attr(index_groups(b.mesh_axes, axis_name, axis_index_groups))
  return b.op1("stablehlo.all_gather", [x], shape, x.dtype,
               f"all_gather_dim = {g} : i64, {groups}")


def _axis_index_rule(b, eqn, *, axis_name):
  _mesh_axes(b, (axis_name,), "axis_index")
  names = [n for n, _ in b.mesh_axes]
  sizes = [s for _, s in b.mesh_axes]
  i = names.index(axis_name)
  stride = int(np.prod(sizes[i + 1:]))
  rid = convert(b, b.op1("stablehlo.replica_id", [], (), np.uint32), np.int32)
  rid = binary(b, "divide", rid, constant(b, stride, np.int32))
  return binary(b, "remainder", rid, constant(b, sizes[i], np.int32))


def _ppermute_rule(b, eqn, x, *, axis_name, perm):
  _mesh_axes(b, axis_name, "ppermute")
  pairs = [(int(g[s]), int(g[d])) for g in replica_groups(b.mesh_axes, axis_name)
           for s, d in perm]
  text = ", ".join(f"[{s}, {d}]" for s, d in pairs)
  return b.op1("stablehlo.collective_permute", [x], x.shape, x.dtype,
               f"source_target_pairs = dense<[{text}]> : tensor<{len(pairs)}x2xi64>")


def _all_to_all_rule(b, eqn, x, *, axis_name, split_axis, concat_axis, axis_index_groups,
                     axis_size, tiled):
  _mesh_axes(b, axis_name, "all_to_all")
  groups = _groups_attr(index_groups(b.mesh_axes, axis_name, axis_index_groups))
  return b.op1("stablehlo.all_to_all", [x], *_out(eqn),
               f"split_dimension = {split_axis} : i64, concat_dimension = {concat_axis} : "
               f"i64, split_count = {axis_size} : i64, {groups}")


def _sharding_constraint_rule(b, eqn, x, *, sharding):
  if not b.spmd or not hasattr(sharding, "hlo_sharding"):
    return x
  return b.op("sdy.sharding_constraint", [x], [(x.shape, x.dtype)],
              f"sharding = {b.sdy_sharding(sharding, len(x.shape))}")[0]


def _layout_constraint_rule(b, eqn, x, *, layout):
  # XLA's layout assignment keeps the result in this order (JAX's custom call; the
  # operand's layout is ignored)
  ndim = len(x.shape)
  dims = lambda order: f"dense<[{', '.join(map(str, order))}]> : tensor<{ndim}xindex>"
  return b.op1("stablehlo.custom_call", [x], x.shape, x.dtype,
               f'call_target_name = "LayoutConstraint", api_version = 1 : i32, '
               f'backend_config = "", operand_layouts = [{dims(range(ndim))}], '
               f'result_layouts = [{dims(reversed(layout.major_to_minor))}]')


def _register_collectives():
  from jaxlite._src.lax import parallel as par
  from jaxlite._src.lax.sharding_constraint import layout_constraint_p, sharding_constraint_p
  lowering_rules.update({
      layout_constraint_p: _layout_constraint_rule,
      par.psum_p: _all_reduce_rule("add"), par.pmax_p: _all_reduce_rule("maximum"),
      par.pmin_p: _all_reduce_rule("minimum"), par.all_gather_p: _all_gather_rule,
      par.axis_index_p: _axis_index_rule, par.ppermute_p: _ppermute_rule,
      par.all_to_all_p: _all_to_all_rule,
      sharding_constraint_p: _sharding_constraint_rule})


_register_collectives()


# ----------------------------------------------------------------------------- driver

def lower_jaxpr(b: Builder, jaxpr: core.Jaxpr, consts, args) -> list[V]:
  """Emit the equations of ``jaxpr`` given lowered constvars and invars."""
  env = dict(zip(jaxpr.constvars, consts))
  env.update(zip(jaxpr.invars, args))

  def read(v):
    if type(v) is core.Literal:
      return constant(b, np.asarray(v.val, v.aval.dtype))
    return env[v]

  for eqn in jaxpr.eqns:
    yield_to_callers()
    rule = lowering_rules.get(eqn.primitive)
    if rule is None:
      rule = _late_rule(eqn.primitive)
    outs = rule(b, eqn, *map(read, eqn.invars), **eqn.params)
    if isinstance(outs, V):
      outs = [outs]
    for v, o in zip(eqn.outvars, outs):
      if type(v) is not core.DropVar:
        env[v] = o
  return [read(v) for v in jaxpr.outvars]


def _missing(prim):
  reason = unsupported.get(prim)
  if reason is not None:
    raise NotImplementedError(f"The XLA backend cannot lower '{prim.name}': {reason}.")
  raise NotImplementedError(f"The XLA backend has no lowering rule for primitive "
                            f"'{prim.name}'. Use the NumPy backend for this function.")


def lower(closed: core.ClosedJaxpr, name: str = "main", *, num_replicas: int = 1,
          num_partitions: int = 1, mesh_axes=(), arg_shardings=None,
          out_shardings=None, donation=None, arg_layouts=None, out_layouts=None) -> str:
  """The StableHLO module (text) computing ``closed``; its entry is ``@main``.

  Parameters
  ----------
  closed : ClosedJaxpr
    The program; its consts are embedded as constants.
  name : str
    The module's name (sanitized into an MLIR symbol).
  num_replicas, num_partitions : int
    The module's ``mhlo.num_replicas`` / ``mhlo.num_partitions``.
  mesh_axes : tuple of (name, size)
    For a program run as one replica per mesh device: the axes collectives name.
  arg_shardings, out_shardings : list of (Sharding or None), optional
    The layouts of the parameters and results, written as Shardy's (``sdy``) attributes
    for XLA's SPMD partitioner, as JAX writes them.
  donation : sequence of (int or True or None), optional
    Per parameter: the result XLA writes into its buffer (``tf.aliasing_output``), True
    to let XLA reuse its buffer for any result (``jax.buffer_donor``), or None.
  arg_layouts, out_layouts : list of (Layout or Layout.AUTO or None), optional
    The device memory layouts of the parameters and results (``mhlo.layout_mode``, as
    JAX writes it); None (and the lists' default): the row-major default.

  Returns
  -------
  str
    MLIR text in generic op syntax, accepted by PJRT's ``"mlir"`` program format.
  """
  b = Builder()
  b.mesh_axes = tuple(mesh_axes)
  b.spmd = num_partitions > 1
  jaxpr = closed.jaxpr
  args = [V(f"%arg{i}", v.aval.shape, v.aval.dtype) for i, v in enumerate(jaxpr.invars)]
  outs = lower_closed(b, closed, args)
  # an output may be an input or a scalar constant of a different shape: never; types match
  out_types = ", ".join(o.type + _result_attrs(b, out_shardings, out_layouts, i, o)
                        for i, o in enumerate(outs))
  in_sig = ", ".join(
      f"{a.name}: {a.type}{_arg_attrs(b, arg_shardings, donation, arg_layouts, i, a)}"
      for i, a in enumerate(args))
  body = "\n".join(b.lines)
  ret = (f'    "func.return"({", ".join(o.name for o in outs)}) : '
         f'({", ".join(o.type for o in outs)}) -> ()')
  symbol = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name) or "main"
  meshes = "".join(f'  "sdy.mesh"() <{{mesh = #sdy.mesh<[{axes}]>, sym_name = "{mesh}"}}> : '
                   "() -> ()\n" for axes, mesh in b.sdy_meshes.items())
  return (f"module @{symbol} attributes {{mhlo.num_partitions = {num_partitions} : i32, "
          f"mhlo.num_replicas = {num_replicas} : i32}} {{\n{meshes}"
          f"  func.func public @main({in_sig}) -> ({out_types}) {{\n"
          f"{body}\n{ret}\n  }}\n}}\n")


def _arg_attrs(b, shardings, donation, layouts, i, arg) -> str:
  """A parameter's attributes: its layout, sharding and donation, as JAX's lowering
  writes them."""
  attrs = _placement_attrs(b, shardings, layouts, i, arg)
  alias = None if donation is None else donation[i]
  if alias is True:
    attrs.append("jax.buffer_donor = true")
  elif alias is not None:
    attrs.append(f"tf.aliasing_output = {alias} : i32")
  return f" {{{', '.join(attrs)}}}" if attrs else ""


def _result_attrs(b, shardings, layouts, i, out) -> str:
  attrs = _placement_attrs(b, shardings, layouts, i, out)
  return f" {{{', '.join(attrs)}}}" if attrs else ""


def _placement_attrs(b, shardings, layouts, i, value) -> list:
  attrs = []
  mode = None if layouts is None else layout_mod.layout_mode(layouts[i])
  if mode is not None:
    attrs.append(f'mhlo.layout_mode = "{mode}"')
  if shardings is not None and shardings[i] is not None:
    attrs.append(f"sdy.sharding = {b.sdy_sharding(shardings[i], len(value.shape))}")
  return attrs


def check_rules() -> dict:
  """Every primitive with a shape rule but no lowering -> why (or 'no lowering rule')."""
  missing = {}
  for prim in core.abstract_eval_rules:
    if prim in lowering_rules or lowering.impl_lowering(prim) is not None:
      continue
    missing[prim.name] = unsupported.get(prim, "no lowering rule")
  return missing
