"""The core: abstract values, primitives, traces and tracers, and jaxprs.

The design is JAX's "stackless" one (see autodidax2): exactly one trace is current at a
time, held in a per-thread context. ``Primitive.bind`` hands the primitive to that
trace. A transformation's trace evaluates its rules with its *parent* trace current, so
nesting transformations needs no special cases. Each tracer knows the trace it belongs
to; a value that belongs to another trace is lifted to a constant of this one.
"""
from __future__ import annotations

import itertools
import threading
from typing import Any, Callable, NamedTuple

import numpy as np

from jaxlite._src import dtypes
from jaxlite._src import errors


# ----------------------------------------------------------------------------- avals

class ShapedArray:
  """The abstract value of an array: shape, dtype and weak type, but no values."""
  __slots__ = ("shape", "dtype", "weak_type", "_hash")

  def __init__(self, shape, dtype, weak_type: bool = False):
    self.shape = tuple(shape)
    self.dtype = np.dtype(dtype)
    self.weak_type = bool(weak_type)
    self._hash = None

  ndim = property(lambda self: len(self.shape))
  size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

  def update(self, shape=None, dtype=None, weak_type=None) -> ShapedArray:
    return ShapedArray(self.shape if shape is None else shape,
                       self.dtype if dtype is None else dtype,
                       self.weak_type if weak_type is None else weak_type)

  def strip_weak_type(self) -> ShapedArray:
    return self.update(weak_type=False) if self.weak_type else self

  def __eq__(self, other):
    return (type(other) is ShapedArray and self.shape == other.shape
            and self.dtype == other.dtype and self.weak_type == other.weak_type)

  def __hash__(self):
    if self._hash is None:
      self._hash = hash((self.shape, self.dtype, self.weak_type))
    return self._hash

  def str_short(self, short_dtypes: bool = False) -> str:
    name = dtypes.short_name(self.dtype) if short_dtypes else self.dtype.name
    return f"{name}[{','.join(map(str, self.shape))}]"

  def __str__(self):
    return ("~" if self.weak_type else "") + self.str_short()

  def __repr__(self):
    weak = ", weak_type=True" if self.weak_type else ""
    return f"ShapedArray({self.str_short()}{weak})"

  def __len__(self):
    if not self.shape:
      raise TypeError("len() of unsized object")
    return self.shape[0]


def get_aval(x) -> ShapedArray:
  """The abstract value of an array, tracer, NumPy value or Python scalar."""
  aval = getattr(x, "aval", None)
  if aval is not None:
    return aval
  if isinstance(x, (np.ndarray, np.generic)):  # before the scalars: np.float64 is a float
    return ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype))
  if isinstance(x, (bool, int, float, complex)):
    return ShapedArray((), dtypes.python_scalar_dtype(x), weak_type=type(x) is not bool)
  raise TypeError(f"Value {x!r} of type {type(x).__name__} is not a valid JAX type. "
                  "Pass arrays, NumPy arrays or Python scalars.")


class ShapeDtypeStruct:
  """A shape, dtype and weak type standing in for an array (``jax.ShapeDtypeStruct``)."""
  __slots__ = ("shape", "dtype", "weak_type")

  def __init__(self, shape, dtype, weak_type: bool = False, sharding=None):
    self.shape = tuple(int(d) for d in shape)
    self.dtype = np.dtype(dtype)
    self.weak_type = weak_type

  ndim = property(lambda self: len(self.shape))
  size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

  @property
  def aval(self):
    return ShapedArray(self.shape, dtypes.canonicalize_dtype(self.dtype), self.weak_type)

  def __repr__(self):
    weak = ", weak_type=True" if self.weak_type else ""
    return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"

  def __eq__(self, other):
    return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
            and self.dtype == other.dtype and self.weak_type == other.weak_type)

  def __hash__(self):
    return hash((self.shape, self.dtype, self.weak_type))


# ----------------------------------------------------------------------------- primitives

class Primitive:
  """A named operation. Its rules live in tables keyed by the primitive object."""
  multiple_results = False
  is_call = False  # params["jaxpr"] is called on the operands (jit): printed with aliasing
  # Elementwise primitives: the operand dtypes they accept. Eager evaluation uses it to
  # skip the shape rule when the operands plainly agree.
  elementwise_dtypes: frozenset | None = None

  def __init__(self, name: str):
    self.name = name

  def bind(self, *args, **params):
    return _context.trace.process_primitive(self, args, params)

  def def_abstract_eval(self, rule):
    abstract_eval_rules[self] = rule
    return rule

  def __repr__(self):
    return self.name


# primitive -> rule(*avals, **params) -> aval (or list of avals if multiple_results)
abstract_eval_rules: dict[Primitive, Callable] = {}
# (primitive, param name) -> callable(param_value) -> str, for params JAX prints specially
param_printers: dict[tuple, Callable] = {}
# primitive -> predicate(name, value, params): params hidden when printing (JAX's
# per-primitive pp rules)
hidden_params: dict[Primitive, Callable] = {}
# primitive -> param names in the order JAX prints them (default: sorted)
param_order: dict[Primitive, tuple] = {}


def abstract_eval(prim: Primitive, avals, params):
  rule = abstract_eval_rules.get(prim)
  if rule is None:
    raise NotImplementedError(f"Primitive '{prim.name}' has no shape rule.")
  out = rule(*avals, **params)
  return out if prim.multiple_results else [out]


# ----------------------------------------------------------------------------- traces

class Trace:
  """Interprets primitives. Subclasses override ``process_primitive``."""
  description = "a transformation"

  def process_primitive(self, prim, args, params):
    raise NotImplementedError

  def invalidate(self):
    self.is_valid = False

  is_valid = True


class _Context(threading.local):
  """The current trace of this thread; every bind goes to it."""

  def __init__(self):
    self.trace = eval_trace


class set_current_trace:
  """``with set_current_trace(t):`` makes ``t`` current for the block."""
  __slots__ = ("trace", "prev")

  def __init__(self, trace):
    self.trace = trace

  def __enter__(self):
    self.prev = _context.trace
    _context.trace = self.trace

  def __exit__(self, *exc):
    _context.trace = self.prev


def current_trace() -> Trace:
  return _context.trace


class EvalTrace(Trace):
  """The bottom trace: runs primitives at once on concrete arrays.

  The backend's table of implementations and the array type are installed by the
  layers above (``backends`` and ``array``) when the package is imported.
  """
  description = "eager evaluation"
  impls: dict = {}
  to_value: Callable = None  # Array | NumPy | scalar -> NumPy value
  wrap: Callable = None      # (NumPy value, weak_type) -> Array
  array_type: type = None    # Array

  def process_primitive(self, prim, args, params):
    accepted = prim.elementwise_dtypes
    if accepted is not None:
      out = self._elementwise(prim, accepted, args, params)
      if out is not None:
        return out
    for x in args:
      if isinstance(x, Tracer):
        raise errors.UnexpectedTracerError(x)
    impl = self.impls.get(prim)
    if impl is None:
      raise TypeError(f"Primitive '{prim.name}' cannot run eagerly: the backend has no "
                      "implementation for it. Wrap the computation in jax.jit.")
    out_avals = abstract_eval(prim, [get_aval(x) for x in args], params)
    outs = impl(*[self.to_value(x) for x in args], **params)
    wrap = self.wrap
    if prim.multiple_results:
      return [wrap(v, a) for v, a in zip(outs, out_avals)]
    return wrap(outs, out_avals[0])


  def _elementwise(self, prim, accepted, args, params):
    """The hot path of eager elementwise ops: Arrays of one dtype and compatible shapes
    need no shape rule. Anything unusual returns None and takes the general path."""
    array = self.array_type
    x = args[0]
    if type(x) is not array:
      return None
    value = x._value
    dtype = value.dtype
    if dtype not in accepted:
      return None
    weak = x.weak_type
    values = [value]
    for y in args[1:]:
      if type(y) is not array:
        return None
      other = y._value
      if other.dtype != dtype or (other.shape != value.shape and other.ndim and value.ndim):
        return None
      values.append(other)
      weak = weak and y.weak_type
    # the implementation returns the dtype the shape rule gives (a test checks every row)
    return array(self.impls[prim](*values, **params), weak)


eval_trace = EvalTrace()
_context = _Context()


class Tracer:
  """A value inside a transformation: it has an abstract value and belongs to a trace.

  Arithmetic operators and array methods are installed by ``jaxlite.numpy`` (they are
  the same functions users call), so this class holds only what tracing itself needs.
  """
  __slots__ = ("_trace",)
  __array_priority__ = 1000

  @property
  def aval(self) -> ShapedArray:
    raise NotImplementedError

  def to_concrete_value(self):
    """The NumPy value if this tracer's trace knows it, else None."""
    return None

  shape = property(lambda self: self.aval.shape)
  dtype = property(lambda self: self.aval.dtype)
  ndim = property(lambda self: self.aval.ndim)
  size = property(lambda self: self.aval.size)
  weak_type = property(lambda self: self.aval.weak_type)

  def __len__(self):
    return len(self.aval)

  def __bool__(self):
    value = self.to_concrete_value()
    if value is None:
      raise errors.TracerBoolConversionError(self)
    return bool(value)

  def _concrete_scalar(self, convert, name):
    value = self.to_concrete_value()
    if value is None:
      if name in ("int", "float", "complex", "bool"):
        advice = (f"The problem arose with the `{name}` function. If trying to convert the "
                  f"data type of a value, try using `x.astype({name})` or "
                  f"`jnp.array(x, {name})` instead.\n")
      else:
        advice = (f"The problem arose with the `{name}` method, which needs the value. "
                  f"Return the array from the traced function and call `.{name}()` "
                  "outside of it.\n")
      raise errors.ConcretizationTypeError(self, advice)
    return convert(value)

  def __int__(self):
    return self._concrete_scalar(int, "int")

  def __float__(self):
    return self._concrete_scalar(float, "float")

  def __complex__(self):
    return self._concrete_scalar(complex, "complex")

  def __index__(self):
    value = self.to_concrete_value()
    if value is None:
      raise errors.TracerIntegerConversionError(self)
    return int(value)

  def __array__(self, dtype=None, copy=None):
    value = self.to_concrete_value()
    if value is None:
      raise errors.TracerArrayConversionError(self)
    return np.asarray(value, dtype)

  def __hash__(self):
    raise TypeError(f"unhashable type: {type(self).__name__}. Traced arrays cannot be "
                    "dictionary keys or set members; use a static Python value instead.")

  def __setitem__(self, index, value):
    raise TypeError(_IMMUTABLE_MESSAGE)

  def __iter__(self):
    if not self.shape:
      raise TypeError("iteration over a 0-d array")
    return (self[i] for i in range(self.shape[0]))

  def item(self):
    return self._concrete_scalar(lambda v: np.asarray(v).item(), "item")

  def tolist(self):
    return self._concrete_scalar(lambda v: np.asarray(v).tolist(), "tolist")

  def __repr__(self):
    return f"{type(self).__name__}({self.aval})"


_IMMUTABLE_MESSAGE = (
    "JAX arrays are immutable and do not support in-place item assignment. "
    "Instead of x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
    "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")


def concrete_or_error(convert, x, context: str = ""):
  """``convert`` applied to the concrete value of ``x``; a clear error if it is abstract."""
  if isinstance(x, Tracer):
    value = x.to_concrete_value()
    if value is None:
      raise errors.ConcretizationTypeError(x, context + "\n" if context else "")
    return convert(value)
  return convert(x)


# ----------------------------------------------------------------------------- jaxprs

class Var:
  """A variable of a jaxpr. Its printed name is chosen when the jaxpr is printed."""
  __slots__ = ("aval",)

  def __init__(self, aval: ShapedArray):
    self.aval = aval

  def __repr__(self):
    return f"Var(id={id(self)}):{self.aval.str_short()}"


class DropVar(Var):
  """An output nobody reads; printed as ``_``."""
  __slots__ = ()


class Literal:
  """A scalar constant written inline in a jaxpr, e.g. ``2.0:f32[]``."""
  __slots__ = ("val", "aval")

  def __init__(self, val, aval: ShapedArray):
    self.val = val
    self.aval = aval

  def __repr__(self):
    return f"Literal({_format_scalar(self.val)})"


class JaxprEqn(NamedTuple):
  invars: list
  outvars: list
  primitive: Primitive
  params: dict
  source_info: Any = None

  def __str__(self):
    return pp_eqn(self, _Namer(), 0)


class Jaxpr:
  """A typed, first-order program: constvars, invars, equations, outvars."""
  __slots__ = ("constvars", "invars", "outvars", "eqns", "debug_info")

  def __init__(self, constvars, invars, outvars, eqns, debug_info=None):
    self.constvars = list(constvars)
    self.invars = list(invars)
    self.outvars = list(outvars)
    self.eqns = list(eqns)
    self.debug_info = debug_info

  in_avals = property(lambda self: [v.aval for v in self.invars])
  out_avals = property(lambda self: [v.aval for v in self.outvars])

  def __str__(self):
    return pp_jaxpr(self)

  __repr__ = __str__

  def pretty_print(self, **kwargs) -> str:
    return pp_jaxpr(self)


class ClosedJaxpr:
  """A jaxpr together with the values of its constvars."""
  __slots__ = ("jaxpr", "consts", "__weakref__")

  def __init__(self, jaxpr: Jaxpr, consts):
    self.jaxpr = jaxpr
    self.consts = list(consts)

  in_avals = property(lambda self: self.jaxpr.in_avals)
  out_avals = property(lambda self: self.jaxpr.out_avals)
  eqns = property(lambda self: self.jaxpr.eqns)

  def __call__(self, *args):
    return eval_jaxpr(self.jaxpr, self.consts, *args)

  def __str__(self):
    return pp_jaxpr(self.jaxpr)

  __repr__ = __str__

  def pretty_print(self, **kwargs) -> str:
    return pp_jaxpr(self.jaxpr)


def eval_jaxpr(jaxpr: Jaxpr, consts, *args):
  """Run ``jaxpr`` by binding each equation's primitive in the current trace."""
  if len(args) != len(jaxpr.invars):
    raise TypeError(f"eval_jaxpr: the jaxpr takes {len(jaxpr.invars)} arguments, "
                    f"got {len(args)}.")
  env = {}
  for v, x in zip(jaxpr.constvars, consts):
    env[v] = x
  for v, x in zip(jaxpr.invars, args):
    env[v] = x
  read = lambda a: a.val if type(a) is Literal else env[a]
  for eqn in jaxpr.eqns:
    outs = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
    if not eqn.primitive.multiple_results:
      outs = (outs,)
    for v, x in zip(eqn.outvars, outs):
      env[v] = x
  return [read(v) for v in jaxpr.outvars]


def jaxpr_as_fun(closed: ClosedJaxpr):
  return lambda *args: eval_jaxpr(closed.jaxpr, closed.consts, *args)


# ----------------------------------------------------------------------------- printing

class _Namer:
  """Names variables a, b, ..., z, ba, bb, ... in order of first appearance."""

  def __init__(self):
    self.names = {}
    self.counter = itertools.count()
    self.hoisted = {}  # id(jaxpr) -> the name it is printed under in a `let` prefix

  def __call__(self, v) -> str:
    if type(v) is Literal:
      return f"{_format_scalar(v.val)}:{v.aval.str_short(short_dtypes=True)}"
    if type(v) is DropVar:
      return "_"
    name = self.names.get(v)
    if name is None:
      name = self.names[v] = _encode_name(next(self.counter))
    return name

  def binder(self, v, used=None) -> str:
    name = "_" if used is not None and v not in used else self(v)
    return f"{name}:{v.aval.str_short(short_dtypes=True)}"


def _encode_name(n: int) -> str:
  letters = ""
  while True:
    n, r = divmod(n, 26)
    letters = chr(ord("a") + r) + letters
    if n == 0:
      return letters


def _format_scalar(val) -> str:
  value = np.asarray(val)
  if value.dtype == np.bool_:
    return str(bool(value))
  if np.issubdtype(value.dtype, np.integer):
    return str(int(value))
  if np.issubdtype(value.dtype, np.complexfloating):
    return repr(complex(value))
  return repr(float(value))


_LINE_WIDTH = 80


def _format_param(prim, name, value, namer, indent) -> str:
  printer = param_printers.get((prim, name))
  if printer is not None:
    return printer(value)
  if isinstance(value, (Jaxpr, ClosedJaxpr)):
    jaxpr = value.jaxpr if isinstance(value, ClosedJaxpr) else value
    hoisted = namer.hoisted.get(id(jaxpr))
    return hoisted if hoisted is not None else pp_jaxpr(jaxpr, namer, indent + 2)
  if isinstance(value, tuple) and value and all(
      isinstance(v, (Jaxpr, ClosedJaxpr)) for v in value):
    pad = " " * (indent + 2)
    items = "".join(f"\n{pad}  {_format_param(prim, name, v, namer, indent + 2)}"
                    for v in value)
    return f"({items}\n{pad})"
  if isinstance(value, np.dtype):
    return value.name
  if isinstance(value, type) and issubclass(value, np.generic):
    return np.dtype(value).name
  return str(value)


def pp_eqn(eqn: JaxprEqn, namer: _Namer, indent: int, used=None) -> str:
  pad = " " * indent
  lhs = " ".join(namer.binder(v, used) for v in eqn.outvars)
  args = " ".join(namer(v) for v in eqn.invars)
  _alias_call_jaxpr(eqn, namer)
  hide = hidden_params.get(eqn.primitive)
  order = param_order.get(eqn.primitive)
  ordered = ([(k, eqn.params[k]) for k in order] if order is not None
             else sorted(eqn.params.items()))
  items = [(k, v) for k, v in ordered if hide is None or not hide(k, v, eqn.params)]
  params = [f"{k}={_format_param(eqn.primitive, k, v, namer, indent)}" for k, v in items]
  name = eqn.primitive.name
  # JAX writes the space before the arguments even when there are none (iota).
  lhs = f"{lhs} = " if lhs else ""   # effects with no outputs print no binder
  one_line = f"{pad}{lhs}{name}{'[' + ' '.join(params) + ']' if params else ''} {args}"
  if "\n" not in one_line and len(one_line) - indent <= _LINE_WIDTH:
    return one_line
  inner = "".join(f"\n{pad}  {p}" for p in params)
  return f"{pad}{lhs}{name}[{inner}\n{pad}] {args}"


def _alias_call_jaxpr(eqn, namer):
  """A call's inner jaxpr reuses the names of the values passed in and out (as JAX)."""
  if not eqn.primitive.is_call:
    return
  inner = eqn.params.get("jaxpr")
  inner = inner.jaxpr if isinstance(inner, ClosedJaxpr) else inner
  if not isinstance(inner, Jaxpr) or id(inner) in namer.hoisted or len(
      inner.invars) != len(eqn.invars):
    return
  for v, outer in zip(inner.invars, eqn.invars):
    if type(outer) is Var and v not in namer.names:
      namer.names[v] = namer(outer)
  for v, outer in zip(inner.outvars, eqn.outvars):
    if type(v) is Var and type(outer) is Var and v not in namer.names:
      namer.names[v] = namer(outer)


def _count_subjaxprs(jaxpr, counts, names):
  for eqn in jaxpr.eqns:
    for value in eqn.params.values():
      if isinstance(value, (Jaxpr, ClosedJaxpr)):
        inner = value.jaxpr if isinstance(value, ClosedJaxpr) else value
        counts[id(inner)] = counts.get(id(inner), 0) + 1
        names[id(inner)] = (eqn.params.get("name", "jaxpr"), inner)
        if counts[id(inner)] == 1:
          _count_subjaxprs(inner, counts, names)


def pp_jaxpr(jaxpr: Jaxpr, namer: _Namer | None = None, indent: int = 0) -> str:
  """Print ``jaxpr`` in JAX's text format; jaxprs used twice are hoisted into a ``let``."""
  if namer is None:
    namer = _Namer()
    counts, found = {}, {}
    _count_subjaxprs(jaxpr, counts, found)
    prefix = ""
    for key, n in counts.items():
      if n > 1:
        name, inner = found[key]
        prefix += f"let {name} = {pp_jaxpr(inner, namer)} in\n"
        namer.hoisted[key] = name
    return prefix + _pp_jaxpr_body(jaxpr, namer, indent)
  return _pp_jaxpr_body(jaxpr, namer, indent)


def _pp_jaxpr_body(jaxpr: Jaxpr, namer: _Namer, indent: int) -> str:
  consts = " ".join(namer.binder(v) for v in jaxpr.constvars)
  ins = " ".join(namer.binder(v) for v in jaxpr.invars)
  head = f"{{ lambda {consts}; {ins}. let"
  # outputs nobody reads print as `_`, as JAX's printer does
  used = {v for e in jaxpr.eqns for v in e.invars if type(v) is Var}
  used.update(v for v in jaxpr.outvars if type(v) is Var)
  eqns = [pp_eqn(e, namer, indent + 4, used) for e in jaxpr.eqns]
  outs = ", ".join(namer(v) for v in jaxpr.outvars)
  tail = f"in ({outs}{',' if len(jaxpr.outvars) == 1 else ''}) }}"
  if len(eqns) == 1 and "\n" not in eqns[0]:
    flat = f"{head} {eqns[0].strip()} {tail}"
    if len(flat) + indent <= _LINE_WIDTH:
      return flat
  if not eqns:
    return f"{head}  {tail}"
  pad = " " * (indent + 2)
  return f"{head}\n" + "\n".join(eqns) + f"\n{pad}{tail}"
