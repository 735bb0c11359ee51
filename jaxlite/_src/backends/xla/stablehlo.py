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

import ml_dtypes
import numpy as np

from jaxlite._src import core
from jaxlite._src.lax import control_flow as cf
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.lax import indexing as ix
from jaxlite._src.lax import reductions as red
from jaxlite._src.lax import shapes as sh
from jaxlite._src.lax.indexing import GatherScatterMode
from jaxlite._src.transforms import ad

_ELEMENT_TYPES = {
    np.dtype(np.bool_): "i1", np.dtype(np.int8): "i8", np.dtype(np.int16): "i16",
    np.dtype(np.int32): "i32", np.dtype(np.int64): "i64", np.dtype(np.uint8): "ui8",
    np.dtype(np.uint16): "ui16", np.dtype(np.uint32): "ui32", np.dtype(np.uint64): "ui64",
    np.dtype(np.float16): "f16", np.dtype(ml_dtypes.bfloat16): "bf16",
    np.dtype(np.float32): "f32", np.dtype(np.float64): "f64",
    np.dtype(np.complex64): "complex<f32>", np.dtype(np.complex128): "complex<f64>"}


def tensor_type(shape, dtype) -> str:
  elt = _ELEMENT_TYPES.get(np.dtype(dtype))
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

  def __init__(self):
    self.lines: list[str] = []
    self.indent = "    "
    self.counter = itertools.count()

  def op(self, name, args, outs, attrs=None, regions=()) -> list[V]:
    """Emit ``name``; ``outs`` are (shape, dtype) pairs; regions are emitted by callables."""
    result = f"%{next(self.counter)}"
    lhs = "" if not outs else (f"{result} = " if len(outs) == 1 else
                                f"{result}:{len(outs)} = ")
    vals = ([V(result, tuple(s), np.dtype(d)) for s, d in outs] if len(outs) == 1 else
            [V(f"{result}#{i}", tuple(s), np.dtype(d)) for i, (s, d) in enumerate(outs)])
    props = f" <{{{attrs}}}>" if attrs else ""
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
      results = body(self, args)
      self.op("stablehlo.return", results, [])
      self.indent = outer
    return emit

  def op1(self, name, args, shape, dtype, attrs=None) -> V:
    return self.op(name, args, [(shape, dtype)], attrs)[0]


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

# primitive -> rule(builder, eqn, *lowered operands, **params) -> list[V] | V
lowering_rules: dict = {}
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


for _prim, _name in {
    ew.neg_p: "stablehlo.negate", ew.floor_p: "stablehlo.floor", ew.ceil_p: "stablehlo.ceil",
    ew.is_finite_p: "stablehlo.is_finite", ew.exp_p: "stablehlo.exponential",
    ew.log_p: "stablehlo.log", ew.log1p_p: "stablehlo.log_plus_one",
    ew.expm1_p: "stablehlo.exponential_minus_one", ew.tanh_p: "stablehlo.tanh",
    ew.sin_p: "stablehlo.sine", ew.cos_p: "stablehlo.cosine", ew.tan_p: "stablehlo.tan",
    ew.asin_p: "chlo.asin", ew.acos_p: "chlo.acos", ew.atan_p: "chlo.atan",
    ew.sinh_p: "chlo.sinh", ew.cosh_p: "chlo.cosh", ew.asinh_p: "chlo.asinh",
    ew.acosh_p: "chlo.acosh", ew.atanh_p: "chlo.atanh", ew.sqrt_p: "stablehlo.sqrt",
    ew.rsqrt_p: "stablehlo.rsqrt", ew.cbrt_p: "stablehlo.cbrt", ew.not_p: "stablehlo.not",
    ew.add_p: "stablehlo.add", ew.sub_p: "stablehlo.subtract",
    ew.mul_p: "stablehlo.multiply", ew.div_p: "stablehlo.divide",
    ew.rem_p: "stablehlo.remainder", ew.pow_p: "stablehlo.power",
    ew.atan2_p: "stablehlo.atan2", ew.nextafter_p: "chlo.next_after",
    ew.and_p: "stablehlo.and", ew.or_p: "stablehlo.or", ew.xor_p: "stablehlo.xor",
    ad.add_any_p: "stablehlo.add"}.items():
  lowering_rules[_prim] = _simple(_name)

for _prim, _dir in {ew.eq_p: "EQ", ew.ne_p: "NE", ew.lt_p: "LT", ew.le_p: "LE",
                    ew.gt_p: "GT", ew.ge_p: "GE"}.items():
  lowering_rules[_prim] = _elementwise(
      lambda b, eqn, x, y, d=_dir: compare(b, x, y, d))


@_elementwise
def _minmax_rule(b, eqn, x, y):
  name = "maximum" if eqn.primitive is ew.max_p else "minimum"
  if x.dtype.kind != "c":
    return binary(b, name, x, y)
  # complex: lexicographic on (real, imag), as NumPy and JAX order complex numbers
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


@_elementwise
def _abs_rule(b, eqn, x):
  if x.dtype.kind == "u":
    return x
  return b.op1("stablehlo.abs", [x], *_out(eqn))


@_elementwise
def _square_rule(b, eqn, x):
  return binary(b, "multiply", x, x)


@_elementwise
def _logistic_rule(b, eqn, x):
  one = full(b, 1, x.shape, x.dtype)
  return binary(b, "divide", one, binary(b, "add", one, unary(b, "exponential",
                                                               unary(b, "negate", x))))


@_elementwise
def _exp2_rule(b, eqn, x):
  return unary(b, "exponential", binary(b, "multiply", x, full(b, np.log(2), x.shape,
                                                                x.dtype)))


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

def _lowest(dtype):
  if dtype == np.bool_:
    return False
  return -np.inf if dtype.kind in "fc" else np.iinfo(dtype).min


def _highest(dtype):
  if dtype == np.bool_:
    return True
  return np.inf if dtype.kind in "fc" else np.iinfo(dtype).max


def reduce(b: Builder, operands, inits, axes, body) -> list[V]:
  """``stablehlo.reduce`` over ``axes``; ``body(b, accs, xs)`` combines scalars."""
  shape = tuple(s for i, s in enumerate(operands[0].shape) if i not in axes)
  scalars = [((), x.dtype) for x in operands]
  n = len(operands)
  region = b.region(scalars + scalars, lambda b, args: body(b, args[:n], args[n:]))
  return b.op("stablehlo.reduce", list(operands) + list(inits),
              [(shape, x.dtype) for x in operands], f"dimensions = {_i64s(axes)}", [region])


def _monoid_rule(op, init_fn):
  def rule(b, eqn, x, *, axes, **_):
    init = constant(b, init_fn(x.dtype), x.dtype)
    return reduce(b, [x], [init], axes, lambda b, a, c: [binary(b, op, a[0], c[0])])
  return rule


lowering_rules.update({
    red.reduce_sum_p: _monoid_rule("add", lambda d: 0),
    red.reduce_prod_p: _monoid_rule("multiply", lambda d: 1),
    red.reduce_max_p: _monoid_rule("maximum", _lowest),
    red.reduce_min_p: _monoid_rule("minimum", _highest),
    red.reduce_and_p: _monoid_rule("and", lambda d: (  # all bits set
        True if d == np.bool_ else -1 if d.kind == "i" else np.iinfo(d).max)),
    red.reduce_or_p: _monoid_rule("or", lambda d: 0),
    red.reduce_xor_p: _monoid_rule("xor", lambda d: 0),
})


def _arg_reduce_rule(direction):
  def rule(b, eqn, x, *, axes, index_dtype):
    (axis,) = axes
    index = b.op1("stablehlo.iota", [], x.shape, index_dtype, f"iota_dimension = {axis} : i64")
    init = _lowest(x.dtype) if direction == "GT" else _highest(x.dtype)

    def body(b, acc, new):
      (a, ia), (c, ic) = acc, new
      better = compare(b, a, c, direction)
      same = compare(b, a, c, "EQ")
      if x.dtype.kind in "fc":  # NaN wins, and the first NaN wins among NaNs (as NumPy)
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


def _dot_general_rule(b, eqn, lhs, rhs, *, dimension_numbers, precision,
                      preferred_element_type, out_sharding):
  (lc, rc), (lb, rb) = dimension_numbers
  shape, dtype = _out(eqn)
  compute = np.dtype(np.int32) if dtype == np.bool_ else dtype
  lhs, rhs = convert(b, lhs, compute), convert(b, rhs, compute)
  dn = (f"#stablehlo.dot<lhs_batching_dimensions = {_list(lb)}, "
        f"rhs_batching_dimensions = {_list(rb)}, lhs_contracting_dimensions = {_list(lc)}, "
        f"rhs_contracting_dimensions = {_list(rc)}>")
  out = b.op1("stablehlo.dot_general", [lhs, rhs], shape, compute,
              f"dot_dimension_numbers = {dn}")
  if dtype == np.bool_:
    return compare(b, out, full(b, 0, shape, compute), "NE")
  return out


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
    sh.dynamic_slice_p: _dynamic_slice_rule,
    sh.dynamic_update_slice_p: _dynamic_update_slice_rule,
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


def _scatter_rule(b, eqn, x, idx, updates, *, dimension_numbers, indices_are_sorted,
                  unique_indices, mode, update_jaxpr, update_consts):
  dn = dimension_numbers
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


lowering_rules.update({cf.cond_p: _cond_rule, cf.while_p: _while_rule,
                       cf.scan_p: _scan_rule})


# Primitives defined in layers above lax (or in modules still changing) are matched by
# name when the first module is lowered, so this file need not import them.
def _call_rule(param):
  return lambda b, eqn, *args, **params: lower_closed(b, params[param], list(args))


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


def _cumulative_rule(op, init_fn):
  def rule(b, eqn, x, *, axis, reverse):
    # a window of the whole axis, padded on one side: XLA's own lowering on CPU
    n = x.shape[axis]
    window = [1] * len(x.shape)
    window[axis] = n
    pad = [[0, 0] for _ in x.shape]
    pad[axis][1 if reverse else 0] = max(n - 1, 0)
    scalar = [((), x.dtype)] * 2
    region = b.region(scalar, lambda b, a: [binary(b, op, a[0], a[1])])
    pads = ", ".join(f"[{lo}, {hi}]" for lo, hi in pad)
    attr = (f"padding = dense<[{pads}]> : tensor<{len(x.shape)}x2xi64>, "
            f"window_dimensions = {_i64s(window)}")
    return b.op("stablehlo.reduce_window", [x, constant(b, init_fn(x.dtype), x.dtype)],
                [(x.shape, x.dtype)], attr, [region])
  return rule


_BY_NAME = {
    "custom_jvp_call": _call_rule("call_jaxpr"), "custom_vjp_call": _call_rule("call_jaxpr"),
    "remat2": _call_rule("jaxpr"), "stop_gradient": lambda b, eqn, x: x,
    "erf": _simple("chlo.erf"), "erfc": _simple("chlo.erfc"),
    "erf_inv": _simple("chlo.erf_inv"), "lgamma": _simple("chlo.lgamma"),
    "digamma": _simple("chlo.digamma"), "polygamma": _simple("chlo.polygamma"),
    "bessel_i1e": _simple("chlo.bessel_i1e"),
    "shift_left": _simple("stablehlo.shift_left"),
    "shift_right_logical": _simple("stablehlo.shift_right_logical"),
    "shift_right_arithmetic": _simple("stablehlo.shift_right_arithmetic"),
    "population_count": _simple("stablehlo.popcnt"),
    "clz": _simple("stablehlo.count_leading_zeros"), "round": _round_rule,
    "real": _simple("stablehlo.real"), "imag": _simple("stablehlo.imag"),
    "complex": _simple("stablehlo.complex"), "conj": _conj_rule,
    "reduce_precision": lambda b, eqn, x, *, exponent_bits, mantissa_bits: b.op1(
        "stablehlo.reduce_precision", [x], x.shape, x.dtype,
        f"exponent_bits = {exponent_bits} : i32, mantissa_bits = {mantissa_bits} : i32"),
    "bitcast_convert_type": lambda b, eqn, x, *, new_dtype: b.op1(
        "stablehlo.bitcast_convert", [x], *_out(eqn)),
    "cumsum": _cumulative_rule("add", lambda d: 0),
    "cumprod": _cumulative_rule("multiply", lambda d: 1),
    "cummax": _cumulative_rule("maximum", _lowest),
    "cummin": _cumulative_rule("minimum", _highest),
}
_LATER = "not lowered to StableHLO yet; jit runs it on the NumPy tier"
_UNSUPPORTED_BY_NAME = {
    "psum": "collectives over named axes are resolved by vmap; a jaxpr that still holds "
            "one has an unbound axis name",
    "debug_print": "host callbacks need PJRT's FFI, which this binding does not drive",
    "debug_callback": "host callbacks need PJRT's FFI, which this binding does not drive",
    "pure_callback": "host callbacks need PJRT's FFI, which this binding does not drive",
    "custom_lin": "it exists only inside linearize, before a jaxpr is compiled",
    "cholesky": "XLA's CPU linear algebra is reached through LAPACK custom calls, which "
                "this plugin-only backend does not provide",
}
for _name in ("pmax", "pmin", "all_gather", "axis_index"):
  _UNSUPPORTED_BY_NAME[_name] = _UNSUPPORTED_BY_NAME["psum"]
for _name in ("triangular_solve", "lu", "qr", "svd", "eigh", "eig"):
  _UNSUPPORTED_BY_NAME[_name] = _UNSUPPORTED_BY_NAME["cholesky"]
for _name in ("igamma", "igammac", "igamma_grad_a", "bessel_i0e", "sort", "top_k",
              "cumlogsumexp", "conv_general_dilated", "fft", "reduce_window_sum",
              "reduce_window_max", "reduce_window_min", "threefry2x32"):
  _UNSUPPORTED_BY_NAME[_name] = _LATER


def _register_late():
  from jaxlite._src import jit as jit_mod
  lowering_rules[jit_mod.jit_p] = _jit_rule
  for prim in list(core.abstract_eval_rules):
    if prim in lowering_rules:
      continue
    rule = _BY_NAME.get(prim.name)
    if rule is not None:
      lowering_rules[prim] = rule
    elif prim.name in _UNSUPPORTED_BY_NAME:
      unsupported[prim] = _UNSUPPORTED_BY_NAME[prim.name]


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
    rule = lowering_rules.get(eqn.primitive)
    if rule is None:
      _register_late()
      rule = lowering_rules.get(eqn.primitive)
      if rule is None:
        _missing(eqn.primitive)
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


_registered = False


def _init():
  global _registered
  if not _registered:
    _register_late()
    _registered = True


def lower(closed: core.ClosedJaxpr, name: str = "main") -> str:
  """The StableHLO module (text) computing ``closed``; its entry is ``@main``.

  Parameters
  ----------
  closed : ClosedJaxpr
    The program; its consts are embedded as constants.
  name : str
    The module's name (sanitized into an MLIR symbol).

  Returns
  -------
  str
    MLIR text in generic op syntax, accepted by PJRT's ``"mlir"`` program format.
  """
  _init()
  b = Builder()
  jaxpr = closed.jaxpr
  args = [V(f"%arg{i}", v.aval.shape, v.aval.dtype) for i, v in enumerate(jaxpr.invars)]
  outs = lower_closed(b, closed, args)
  # an output may be an input or a scalar constant of a different shape: never; types match
  out_types = ", ".join(o.type for o in outs)
  in_sig = ", ".join(f"{a.name}: {a.type}" for a in args)
  body = "\n".join(b.lines)
  ret = (f'    "func.return"({", ".join(o.name for o in outs)}) : '
         f'({out_types}) -> ()')
  symbol = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in name) or "main"
  return (f"module @{symbol} attributes {{mhlo.num_partitions = 1 : i32, "
          f"mhlo.num_replicas = 1 : i32}} {{\n"
          f"  func.func public @main({in_sig}) -> ({out_types}) {{\n"
          f"{body}\n{ret}\n  }}\n}}\n")


def check_rules() -> dict:
  """Every primitive with a shape rule but no lowering -> why (or 'no lowering rule')."""
  _register_late()
  missing = {}
  for prim in core.abstract_eval_rules:
    if prim in lowering_rules:
      continue
    missing[prim.name] = unsupported.get(prim, "no lowering rule")
  return missing
