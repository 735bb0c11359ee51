"""The core: abstract values, primitives, traces and tracers, and jaxprs.

The design is JAX's "stackless" one (see autodidax2): exactly one trace is current at a
time, held in a per-thread context. ``Primitive.bind`` hands the primitive to that
trace. A transformation's trace evaluates its rules with its *parent* trace current, so
nesting transformations needs no special cases. Each tracer knows the trace it belongs
to; a value that belongs to another trace is lifted to a constant of this one.
"""
from __future__ import annotations

import collections
import functools
import itertools
import re
import sys
import threading
import warnings
from typing import Any, Callable, NamedTuple

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.base import effects as effects_lib
from jaxlite._src.base import errors
from jaxlite._src.base import layout as layout_mod
from jaxlite._src.base import pretty_printer as pp


# ----------------------------------------------------------------------------- avals

# ``jax.typeof(x).sharding``: sharding.py, a layer above core, fills "sharding" with a
# function of the aval; lax fills "iter" (a tracer -> its rows, as JAX's
# ``index_in_dim`` takes them).
aval_rules: dict = {}


class AbstractValue:
  """The type of abstract values (``jax.core.AbstractValue``): ShapedArray, and the
  high-level types of ``jax.experimental.hijax`` (``is_high``; ``has_qdd`` when mutable)."""
  __slots__ = ()
  is_high = False
  has_qdd = False


class ShapedArray(AbstractValue):
  """The abstract value of an array: shape, dtype, weak type, and how its dimensions are
  split over Explicit mesh axes (``spec``: None where none is, as JAX's types)."""
  __slots__ = ("shape", "dtype", "weak_type", "spec", "mesh", "_hash")

  def __init__(self, shape, dtype, weak_type: bool = False, *, sharding=None, spec=None,
               mesh=None):
    self.shape = tuple(shape)
    self.dtype = dtype if isinstance(dtype, np.dtype) else dtypes.aval_dtype(dtype)
    self.weak_type = bool(weak_type)
    self._hash = None
    if sharding is not None:   # (JAX's argument: only its Explicit axes enter the type)
      spec = aval_rules["explicit_spec"](sharding, len(self.shape))
      mesh = getattr(getattr(sharding, "mesh", None), "abstract_mesh", None)
    # a spec is one entry per dimension, a mesh axis name, a tuple of them, or None; the
    # mesh is the abstract mesh whose axes it names (None: the one in context)
    self.spec = tuple(spec) if spec is not None and any(e is not None for e in spec) else None
    self.mesh = mesh if self.spec is not None else None

  ndim = property(lambda self: len(self.shape))
  size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

  # an array is its own low-level type: what hijax types lower their leaves with
  def lo_ty(self) -> list:
    return [self]

  def lower_val(self, x) -> list:
    return [x]

  def raise_val(self, x):
    return x

  def update(self, shape=None, dtype=None, weak_type=None, sharding=None,
             spec=None) -> ShapedArray:
    mesh = None
    if spec is None and sharding is None and (shape is None or len(shape) == self.ndim):
      spec, mesh = self.spec, self.mesh   # (a new rank drops the split, as JAX's would)
    return ShapedArray(self.shape if shape is None else shape,
                       self.dtype if dtype is None else dtype,
                       self.weak_type if weak_type is None else weak_type,
                       sharding=sharding, spec=spec, mesh=mesh)

  def strip_weak_type(self) -> ShapedArray:
    return self.update(weak_type=False) if self.weak_type else self

  def to_tangent_aval(self) -> ShapedArray:
    """The aval of this value's tangents: float0 for integers and booleans, what its
    rules say for an extended dtype (JAX's)."""
    if dtypes.is_inexact(self.dtype):
      return self
    if dtypes.is_extended(self.dtype):
      return ShapedArray(self.shape, self.dtype._rules.tangent_dtype(self.dtype),
                         spec=self.spec, mesh=self.mesh)
    return ShapedArray(self.shape, dtypes.float0, spec=self.spec, mesh=self.mesh)

  to_ct_aval = to_tangent_aval
  at_least_vspace = to_tangent_aval   # JAX's older name, which distrax's JVP rules call

  @property
  def sharding(self):
    """The sharding in the type (``NamedSharding`` over an abstract mesh), as in JAX."""
    return aval_rules["sharding"](self)

  def __eq__(self, other):
    return (type(other) is ShapedArray and self.shape == other.shape
            and self.dtype == other.dtype and self.weak_type == other.weak_type
            and self.spec == other.spec and self.mesh == other.mesh)

  def __hash__(self):
    if self._hash is None:
      self._hash = hash((self.shape, self.dtype, self.weak_type, self.spec))
    return self._hash

  def __reduce__(self):
    # Without the cached hash: a dtype's hash differs from process to process (the compile
    # server unpickles avals, and the tier races' memory keys on their pickle).
    if self.spec is None:
      return ShapedArray, (self.shape, self.dtype, self.weak_type)
    return _shaped_array, (self.shape, self.dtype, self.weak_type, self.spec, self.mesh)

  def str_short(self, short_dtypes: bool = False) -> str:
    name = dtypes.short_name(self.dtype) if short_dtypes else self.dtype.name
    spec = self.spec
    if spec is None:
      return f"{name}[{','.join(map(str, self.shape))}]"
    return f"{name}[{','.join(map(_dim_str, self.shape, spec))}]"

  def __str__(self):
    return ("~" if self.weak_type else "") + self.str_short()

  def __repr__(self):
    weak = ", weak_type=True" if self.weak_type else ""
    return f"ShapedArray({self.str_short()}{weak})"

  def __len__(self):
    if not self.shape:
      raise TypeError("len() of unsized object")
    return self.shape[0]


def _shaped_array(shape, dtype, weak_type, spec, mesh):
  return ShapedArray(shape, dtype, weak_type, spec=spec, mesh=mesh)


def _dim_str(size, entry) -> str:
  """A dimension as JAX prints it in a type: ``2``, split over X ``2@X``, over X and Y
  ``4@(X,Y)``."""
  if entry is None:
    return str(size)
  if isinstance(entry, tuple):
    return f"{size}@({','.join(entry)})"
  return f"{size}@{entry}"


def typed_sharding(aval):
  """The sharding an abstract result shows (``eval_shape``'s ShapeDtypeStruct): its
  type's, where the type is split over Explicit mesh axes; None otherwise."""
  return aval.sharding if getattr(aval, "spec", None) is not None else None


# type -> the function giving a value's high-level type (``hijax.register_hitype``)
hitype_avals: dict = {}


def get_aval(x) -> ShapedArray:
  """The abstract value of an array, tracer, NumPy value or Python scalar."""
  if hitype_avals:   # a value of a library's high-level type (hijax): its type says
    typeof_hi = hitype_avals.get(type(x))
    if typeof_hi is not None:
      return typeof_hi(x)
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
  """A shape, dtype and weak type standing in for an array (``jax.ShapeDtypeStruct``),
  with the sharding it was given (None by default), kept and shown as JAX keeps it. A
  ``Format`` given as the sharding also gives its device memory layout (``format``)."""
  __slots__ = ("shape", "dtype", "weak_type", "sharding", "_layout")

  def __init__(self, shape, dtype, *, sharding=None, weak_type: bool = False,
               manual_axis_type=None, is_ref: bool = False):
    # (manual_axis_type: JAX's varying-over-manual-axes type, which jaxlite does not track)
    if is_ref:
      raise NotImplementedError("ShapeDtypeStruct(is_ref=True): jaxlite has no abstract "
                                "ref types; trace with an array and make the ref inside.")
    self.shape = tuple(int(d) for d in shape)
    self.dtype = dtypes.aval_dtype(dtype)
    self.weak_type = weak_type
    self._layout = None
    if isinstance(sharding, layout_mod.Format):
      if isinstance(sharding.layout, layout_mod.AutoLayoutSingleton):
        raise TypeError("`Layout.AUTO` cannot be used in place of a device-local layout "
                        f"in a `ShapeDtypeStruct`. Got {sharding}")
      self._layout, sharding = sharding.layout, sharding.sharding
    self.sharding = sharding   # kept as given (libraries copy it from struct to struct)

  ndim = property(lambda self: len(self.shape))
  size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
  format = property(lambda self: layout_mod.Format(self._layout, self.sharding))

  @property
  def aval(self):
    sharding = self.sharding   # (its split over Explicit axes enters the type)
    return ShapedArray(self.shape, dtypes.canonicalize_dtype(self.dtype, True),
                       self.weak_type, sharding=None if sharding is None or not hasattr(
                           sharding, "spec") else sharding)

  def __repr__(self):
    sharding = f", sharding={self.sharding}" if self.sharding is not None else ""
    layout = f", format={self._layout}" if self._layout is not None else ""
    weak = ", weak_type=True" if self.weak_type else ""
    return (f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{sharding}"
            f"{layout}{weak})")

  def __eq__(self, other):
    return (isinstance(other, ShapeDtypeStruct) and self.shape == other.shape
            and self.dtype == other.dtype and self.weak_type == other.weak_type
            and self.sharding == other.sharding and self._layout == other._layout)

  def __hash__(self):
    return hash((self.shape, self.dtype, self.weak_type, self.sharding, self._layout))


# ----------------------------------------------------------------------------- primitives

class Primitive:
  """A named operation. Its rules live in tables keyed by the primitive object.

  This is JAX's ``jax.extend.core.Primitive`` too: a library defines a primitive with
  ``Primitive(name)``, ``def_impl`` (how it runs eagerly), ``def_abstract_eval`` (its
  shape rule, into ``abstract_eval_rules``), and the rules of ``jax.interpreters``'s
  tables (``ad.primitive_jvps`` is ``transforms.ad.jvp_rules``, and so on). jaxlite's
  own primitives are defined the same way, with a NumPy kernel in place of ``def_impl``.
  """
  multiple_results = False
  is_call = False  # params["jaxpr"] is called on the operands (jit): printed with aliasing
  # JAX's flags that libraries read or set; jaxlite does not treat them specially
  call_primitive = False
  map_primitive = False
  ref_primitive = False
  skip_canonicalization = False
  is_effectful = None
  # Elementwise primitives: the operand dtypes they accept. Eager evaluation uses it to
  # skip the shape rule when the operands plainly agree.
  elementwise_dtypes: set | None = None

  def __init__(self, name: str):
    self.name = name
    # the module that made it: jaxlite's own primitives are rebuilt by importing it
    # (backends/compile_server.py); a library's are not
    self._module = sys._getframe(1).f_globals.get("__name__", "")

  def bind(self, *args, **params):
    trace = eval_trace if eager_everywhere else _context.trace
    return trace.process_primitive(self, args, params)

  def bind_with_trace(self, trace, args, *rest):
    """``bind`` on ``trace`` (JAX's ``(trace, args, avals, params)``; the avals may be
    left out)."""
    params = rest[-1] if rest else {}
    return trace.process_primitive(self, tuple(args), params)

  def def_abstract_eval(self, rule):
    """The shape rule: ``rule(*avals, **params)`` returns the output's ShapedArray (a
    list of them for ``multiple_results``)."""
    abstract_eval_rules[self] = rule
    return rule

  def def_effectful_abstract_eval(self, rule):
    """A shape rule returning ``(avals, effects)``, the effects a set of ``Effect``
    instances: the primitive has side effects when ``effects`` is not empty, and then
    passes never drop, merge or fold it, and ``jaxpr.effects`` lists the effects."""
    def shape_rule(*avals, **params):
      out, effects = rule(*avals, **params)
      if effects:
        effectful_primitives.add(self)
        reported_effects[self] = reported_effects.get(self, no_effects) | frozenset(effects)
      return out
    abstract_eval_rules[self] = shape_rule
    effectful_abstract_eval_rules[self] = rule
    return rule

  def def_impl(self, impl):
    """How the primitive runs eagerly: ``impl(*args, **params)`` gets the concrete
    arrays (as in JAX), and may compute with any jax operation.

    Under ``jit`` the primitive is staged like any other; its lowering
    (``mlir.register_lowering``) compiles it, and without one both tiers fall back on
    ``impl``: the NumPy tier calls it when the program runs, the XLA tier traces it.
    """
    self.impl = impl
    # Only primitives with an impl pay for the test in bind: an instance attribute. One
    # that forwards operands keeps that bind, which runs the impl for the other outputs.
    if self not in forwarding_rules:
      self.bind = self._bind_through_impl
    EvalTrace.impls[self] = _kernel_of_impl(self, impl)
    return impl

  def _bind_through_impl(self, *args, **params):
    trace = eval_trace if eager_everywhere else _context.trace
    if trace is eval_trace:
      return self.impl(*args, **params)
    return trace.process_primitive(self, args, params)

  def def_forwarding(self, rule):
    """``rule(**params)`` gives, per output, the index of the operand that output is
    unchanged, or None. Run eagerly, such an output is the operand as given (a Python
    float stays one, a NumPy value takes the canonical dtype), as JAX's impls of
    ``stop_gradient`` and of the call-like primitives, which evaluate their jaxpr,
    return it; staged or transformed, the primitive binds as any other."""
    forwarding_rules[self] = rule
    self.bind = self._bind_forwarding
    return rule

  def _bind_forwarding(self, *args, **params):
    trace = eval_trace if eager_everywhere else _context.trace
    if trace is not eval_trace or any(isinstance(x, Tracer) for x in args):
      return trace.process_primitive(self, args, params)   # (a leaked tracer: its error)
    fwd = forwarding_rules[self](**params)
    args = [canonical_operand(x) for x in args]
    if all(f is not None for f in fwd):   # nothing to compute: only check the operands
      for x in args:
        get_aval(x)
      outs = [args[f] for f in fwd]
    else:
      outs = trace.process_primitive(self, args, params)
      outs = outs if self.multiple_results else [outs]
      outs = [o if f is None else args[f] for o, f in zip(outs, fwd)]
    return outs if self.multiple_results else outs[0]

  def impl(self, *args, **params):
    """Run the primitive eagerly on concrete values (jaxlite's own primitives: with the
    kernel of the device or the host, as ``bind`` outside every transformation)."""
    with set_current_trace(eval_trace):
      return eval_trace.process_primitive(self, args, params)

  def abstract_eval(self, *avals, **params):
    """``(output avals, effects)``, as JAX's ``Primitive.abstract_eval`` returns them."""
    effectful_rule = effectful_abstract_eval_rules.get(self)
    if effectful_rule is not None:
      out, effects = effectful_rule(*avals, **params)
      return out, frozenset(effects)
    rule = abstract_eval_rules.get(self)
    if rule is None:
      raise NotImplementedError(f"Abstract evaluation for '{self.name}' not implemented")
    return rule(*avals, **params), primitive_effects(self)

  def get_bind_params(self, params):
    return params

  def __repr__(self):
    return self.name


# primitive -> rule(**params) -> per output, the operand it returns unchanged or None
# (``Primitive.def_forwarding``)
forwarding_rules: dict = {}


# type -> handler(x): the value ``bind`` hands an impl for a value of that type (JAX's
# canonicalize_value_handlers); literals.py registers Python numbers and NumPy values
canonical_value_handlers: dict = {}


def canonical_operand(x):
  """``x`` as JAX's ``bind`` hands it to an impl (its ``canonicalize_value``): the handler
  registered for its type or the nearest base type's; anything else as it is."""
  handler = canonical_value_handlers.get(type(x))
  if handler is None:
    handler = next((canonical_value_handlers[t] for t in type(x).__mro__
                    if t in canonical_value_handlers), None)
  return x if handler is None else handler(x)


def has_user_impl(prim) -> bool:
  """Whether ``prim`` was given an ``impl`` by ``def_impl`` (a library's primitive): its
  NumPy kernel then calls Python code that may do anything."""
  return "impl" in vars(prim)


def _kernel_of_impl(prim, impl):
  """``impl`` as a row of the NumPy kernel table (``EvalTrace.impls``): NumPy values in
  and out, so that the tables' users (tier 0 above all) run a library's primitive too."""
  def kernel(*values, **params):
    host = eval_trace.host   # (Arrays are a layer above: the host backend makes them)
    with set_current_trace(eval_trace):
      outs = impl(*[host.wrap(np.asarray(v)) for v in values], **params)
    to_value = host.to_value
    if prim.multiple_results:
      return [np.asarray(to_value(o)) for o in outs]
    return np.asarray(to_value(outs))
  kernel.__name__ = f"{prim.name}_impl"
  return kernel


# XLA computes nan and inf without a word; NumPy warns (a RuntimeWarning attributed to the
# module whose code called the ufunc). One filter on the modules that run jaxlite's kernels
# silences them at no cost per call, but only while it comes first: a caller's own filters
# (simplefilter, catch_warnings(record=True), pytest.warns, -W error) go in front of it.
# So every place that runs kernels checks that ``warnings.filters[0] is QUIET_FILTER``
# (an IndexError: no filters at all) and calls keep_kernels_quiet when it is not.
KERNEL_MODULES = (r"jaxlite\._src\.(backends\.numpy\.|core\.(core|array)$|"
                  r"lax\.(elementwise|kernels|complex_math)$)")
QUIET_FILTER = ("ignore", None, RuntimeWarning, re.compile(KERNEL_MODULES), 0)


def keep_kernels_quiet():
  """Put ``QUIET_FILTER``, which silences NumPy's floating-point warnings in jaxlite's
  kernels, first among the warning filters (again): the filter list a ``catch_warnings``
  block made or changed then has it in front, and the block's end restores the caller's."""
  warnings.filterwarnings("ignore", category=RuntimeWarning, module=KERNEL_MODULES)
  warnings.filters[0] = QUIET_FILTER   # (the equal entry made: one object for the `is`)


keep_kernels_quiet()


# primitives whose shape rule reported effects (def_effectful_abstract_eval), and jaxlite's
# callbacks: the passes' table of effectful primitives (passes/dce.py) is this set
effectful_primitives: set = set()
# primitive -> the union of the effects its effectful shape rule has reported, for any
# params (so an equation may list an effect that only other params of its primitive have)
reported_effects: dict = {}
# primitive -> the rule given to def_effectful_abstract_eval, returning (avals, effects)
effectful_abstract_eval_rules: dict = {}


def primitive_effects(prim) -> frozenset:
  """The effects of an equation of ``prim``: those its shape rule reported, or the
  primitive itself for jaxlite's own effectful primitives (the callbacks)."""
  if prim not in effectful_primitives:
    return no_effects
  return reported_effects.get(prim) or frozenset({prim})


# primitive -> rule(*avals, **params) -> aval (or list of avals if multiple_results)
abstract_eval_rules: dict[Primitive, Callable] = {}
# (primitive, param name) -> callable(param_value) -> str, for params JAX prints specially
param_printers: dict[tuple, Callable] = {}
# primitive -> predicate(name, value, params): params hidden when printing (JAX's
# per-primitive pp rules)
hidden_params: dict[Primitive, Callable] = {}
# primitive -> param names in the order JAX prints them (default: sorted)
param_order: dict[Primitive, tuple] = {}
# (primitive, param name) -> the name JAX prints the param under, where its pp rule
# renames it (custom_jvp_call's jvp_jaxpr_fun prints as jvp)
param_labels: dict[tuple, str] = {}


# primitive -> rule(avals_in, avals_out, **params) -> one spec per output: how its outputs
# are split over Explicit mesh axes when an operand's is (lax/sharding_rules.py fills it;
# a primitive without one gives what its shape rule gives, which for calls and loops is
# their jaxprs' types)
sharding_rules: dict[Primitive, Callable] = {}


def abstract_eval(prim: Primitive, avals, params):
  rule = abstract_eval_rules.get(prim)
  if rule is None:
    raise NotImplementedError(f"Primitive '{prim.name}' has no shape rule.")
  out = rule(*avals, **params)
  outs = out if prim.multiple_results else [out]
  for a in avals:
    if getattr(a, "spec", None) is not None:   # sharding in types: only where split
      return _with_specs(prim, avals, outs, params)
  if params.get("sharding") is not None:   # (a result asked to be split: iota, full)
    return _with_specs(prim, avals, outs, params)
  return outs


def _with_specs(prim, avals, outs, params):
  rule = sharding_rules.get(prim)
  if rule is None:
    return _without_rule(prim, outs, params)
  specs = rule(avals, outs, **params)
  given = params.get("sharding") or params.get("out_sharding")   # (a split asked for)
  mesh = (getattr(getattr(given, "mesh", None), "abstract_mesh", None) if given is not None
          else next(a.mesh for a in avals if getattr(a, "spec", None) is not None))
  return [o if not isinstance(o, ShapedArray) or (o.spec == s and o.mesh == mesh)
          else ShapedArray(o.shape, o.dtype, o.weak_type, spec=s, mesh=mesh)
          for o, s in zip(outs, specs)]


def _without_rule(prim, outs, params):
  """The types of a primitive without a sharding rule, given split operands: a call's or
  a loop's come from its jaxprs, a library's from its shape rule (as JAX's do from its
  abstract eval); one of jaxlite's own lax operations raises JAX's error."""
  if not prim._module.startswith("jaxlite.") or any(
      isinstance(v, (Jaxpr, ClosedJaxpr)) or (isinstance(v, (tuple, list)) and v
                                              and isinstance(v[0], (Jaxpr, ClosedJaxpr)))
      for v in params.values()):
    return outs
  raise errors.ShardingTypeError(
      f"sharding rule for {prim.name} is not implemented. Please file an issue at "
      "https://github.com/jax-ml/jax/issues. You can work around this error by dropping "
      "that operation into full auto sharding mode via: "
      "`jax.sharding.auto_axes(fun, out_shardings=...)`")


# ----------------------------------------------------------------------------- traces

class Trace:
  """Interprets primitives. Subclasses override ``process_primitive``."""
  description = "a transformation"
  # whether a hijax primitive bound here runs its lowering (``to_lojax``) on the values
  # themselves (eager evaluation, staging) rather than its rules (``jvp``, ...)
  requires_low = False

  def process_primitive(self, prim, args, params):
    raise NotImplementedError

  def invalidate(self):
    self.is_valid = False

  is_valid = True

  @property
  def main(self):
    """What identifies this trace (JAX's ``Trace.main``, kept for libraries that compare
    a tracer's ``_trace.main`` with the top trace's): the trace itself."""
    return self


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
    if self.trace is not eval_trace:
      _count_open_traces(1)    # before the switch: see eager_everywhere
    _context.trace = self.trace

  def __exit__(self, *exc):
    _context.trace = self.prev
    if self.trace is not eval_trace:
      _count_open_traces(-1)   # after the switch back


class take_current_trace(set_current_trace):
  """``with take_current_trace() as t:`` gives the current trace ``t`` and makes the eager
  one current for the block, as JAX's: a library's trace then binds on ``t`` itself."""
  __slots__ = ()

  def __init__(self):
    super().__init__(eval_trace)

  def __enter__(self):
    super().__enter__()
    return self.prev


class TraceTag:
  """JAX's tag of a transformation's tracers: every tag equals every other (JAX's caches
  key on it, and a tag never changes within the scope that made it)."""

  def __hash__(self):
    return hash(TraceTag)

  def __eq__(self, other):
    return isinstance(other, TraceTag)


# Reading the thread-local context costs about five times a global's read, and the hot
# paths (bind, a jit cache hit, lax's direct kernels) ask it on every call. They read
# these globals first, and the context only when one is False:
# - eager_everywhere: no thread has a trace other than the eager one current (a thread
#   counts itself before it switches, and uncounts after it switches back, so a thread
#   that is tracing always sees False);
# - direct_everywhere: that, and no checking trace installed (``direct_eval_trace``).
eager_everywhere = True
direct_everywhere = True
_open_traces = 0
_open_traces_lock = threading.Lock()


def _count_open_traces(delta):
  global _open_traces
  with _open_traces_lock:
    _open_traces += delta
    _refresh_everywhere()


_direct_blockers: set = set()


def block_direct_kernels(owner: str, blocked: bool):
  """Let lax's direct NumPy kernels run eagerly (``direct_eval_trace`` is ``eval_trace``)
  unless some ``owner`` blocks them: a checking ``process_primitive`` (jax_debug_nans),
  or eager evaluation on a device, where every primitive must reach ``process_primitive``."""
  global direct_eval_trace
  with _open_traces_lock:
    (_direct_blockers.add if blocked else _direct_blockers.discard)(owner)
    direct_eval_trace = None if _direct_blockers else eval_trace
    _refresh_everywhere()


def _refresh_everywhere():
  # (under _open_traces_lock)
  global eager_everywhere, direct_everywhere
  eager_everywhere = _open_traces == 0
  direct_everywhere = eager_everywhere and direct_eval_trace is eval_trace


def current_trace() -> Trace:
  return _context.trace


class EvalTrace(Trace):
  """The bottom trace: runs primitives at once on concrete arrays, through a backend.

  A backend is an object with ``apply_primitive(prim, args, params)``: the host's (NumPy
  kernels, ``array.HostBackend``) or a resident device's (``platforms.Backend``). An
  optional checker wraps it (``jax_debug_nans``). Both are chosen through ``install``,
  by the layers above, so this layer needs neither.
  """
  description = "eager evaluation"
  requires_low = True
  impls: dict = {}           # primitive -> NumPy implementation (the backends fill it)

  def __init__(self):
    self.host = None      # the host backend: NumPy kernels on host values
    self.device = None    # a resident device backend every primitive runs on, or None
    self.checker = None   # backend -> a backend checking its outputs, or None
    self.placer = None   # backend -> one laying its outputs out over a mesh, or None
    self.backend = None   # what process_primitive calls: the above, composed

  def install(self, **parts):
    """Replace ``host``, ``device`` or ``checker`` and recompose the backend."""
    for name, part in parts.items():
      if name not in ("host", "device", "checker", "placer"):
        raise TypeError(f"EvalTrace.install got an unknown part {name!r}")
      setattr(self, name, part)
    backend = self.device or self.host
    if self.placer is not None:
      backend = self.placer(backend)
    self.backend = backend if self.checker is None else self.checker(backend)

  def process_primitive(self, prim, args, params):
    return self.backend.apply_primitive(prim, args, params)

  def apply_on_host(self, prim, args, params):
    """Run ``prim`` with its NumPy kernel on host values, whatever the default device."""
    return self.host.apply_primitive(prim, args, params)


eval_trace = EvalTrace()
_context = _Context()

# How a value is put on a device its maker names (``jnp.zeros(..., device=d)``):
# ``jax.device_put``, which the API layer registers here (devices and shardings live
# above core).
device_placement: list = []
# The trace on which lax's elementwise functions may run a NumPy kernel directly instead
# of binding (see lax.elementwise._unary): the eager trace, or None while a checker or a
# device backend is installed (jax_debug_nans), which every op must then go through.
direct_eval_trace = eval_trace


class ArrayMethods:
  """A base for the classes whose operators and array methods are ``jaxlite.numpy``'s
  functions (Array, Tracer): a layer above supplies them through ``install_methods``, the
  one place they are set, since these classes cannot import it."""
  __slots__ = ()

  @classmethod
  def install_methods(cls, methods: dict):
    for name, value in methods.items():
      setattr(cls, name, value)


class Tracer(ArrayMethods):
  """A value inside a transformation: it has an abstract value and belongs to a trace.

  Arithmetic operators and array methods come from ``jaxlite.numpy`` (they are the same
  functions users call; ``ArrayMethods``), so this class holds only what tracing needs.
  """
  # __weakref__: JAX's tracers take weak references (TFP's bijector cache keys on them).
  __slots__ = ("_trace", "__weakref__")
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

  def delete(self):
    raise errors.ConcretizationTypeError(self, self._method_context("delete"))

  def is_deleted(self):
    raise errors.ConcretizationTypeError(self, self._method_context("is_deleted"))

  def _method_context(self, name):
    return f"The {name}() method was called on traced array with shape {self.aval.str_short()}.\n"

  def __array__(self, dtype=None, copy=None):
    value = self.to_concrete_value()
    if value is None:
      raise errors.TracerArrayConversionError(self)
    return np.asarray(value, dtype)

  __hash__ = None   # unhashable as JAX's tracers: not even collections.abc.Hashable

  def __setitem__(self, index, value):
    raise TypeError(_IMMUTABLE_MESSAGE)

  def __iter__(self):
    if not self.shape:
      raise TypeError("iteration over a 0-d array")
    rows = aval_rules.get("iter")
    if rows is None:
      return (self[i] for i in range(self.shape[0]))
    return rows(self)

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

  # Jaxprs are pickled for the compile server, and a reduce of their own for variables,
  # literals and equations pickles faster than the default one of objects with slots (a
  # state dict each).
  def __reduce__(self):
    return type(self), (self.aval,)


class DropVar(Var):
  """An output nobody reads; printed as ``_``."""
  __slots__ = ()


class Literal:
  """A scalar constant written inline in a jaxpr, e.g. ``2.0:f32[]``."""
  __slots__ = ("val", "aval")

  def __init__(self, val, aval: ShapedArray):
    self.val = val
    self.aval = aval

  @property
  def hash(self):
    """A hash of the value (JAX's): the number's, or of a NumPy value's item and dtype;
    None where neither hashes."""
    try:
      return hash(self.val)
    except TypeError:
      try:
        return hash((self.val.item(), self.val.dtype))
      except (TypeError, AttributeError, ValueError):
        return None

  def __repr__(self):
    return f"Literal({self.val})"

  def __reduce__(self):   # (see Var.__reduce__)
    return Literal, (self.val, self.aval)


# what a jaxpr equation's operand is (``jax.core.Atom``)
Atom = Var | Literal


class JaxprEqn(NamedTuple):
  invars: list
  outvars: list
  primitive: Primitive
  params: dict
  source_info: Any = None

  def __repr__(self):
    return pp.format(_pp_eqn(self, _PrintContext({}, print_shapes=True))).rstrip()

  __str__ = __repr__

  def __reduce__(self):   # (see Var.__reduce__)
    return JaxprEqn, tuple(self)

  @property
  def effects(self) -> frozenset:
    """JAX's effects of the equation: those of its primitive (``primitive_effects``)."""
    return primitive_effects(self.primitive)

  def replace(self, **changes) -> JaxprEqn:
    changes.pop("effects", None)
    changes.pop("ctx", None)
    return self._replace(**changes)


class Jaxpr:
  """A typed, first-order program: constvars, invars, equations, outvars."""
  __slots__ = ("constvars", "invars", "outvars", "eqns", "debug_info", "__weakref__")

  def __init__(self, constvars, invars, outvars, eqns, debug_info=None, *rest,
               effects=None, **unused):
    if isinstance(debug_info, (set, frozenset)):   # JAX's order: effects, debug_info
      debug_info = rest[0] if rest else unused.get("debug_info")
    self.constvars = list(constvars)
    self.invars = list(invars)
    self.outvars = list(outvars)
    self.eqns = list(eqns)
    self.debug_info = debug_info

  in_avals = property(lambda self: [v.aval for v in self.invars])
  out_avals = property(lambda self: [v.aval for v in self.outvars])

  @property
  def effects(self) -> frozenset:
    """The side effects of running the jaxpr (JAX's): its equations' effects."""
    found = set()
    for eqn in self.eqns:
      found |= eqn.effects
      for sub in subjaxprs(eqn):
        found |= sub.effects
    return frozenset(found)

  def replace(self, **changes) -> Jaxpr:
    fields = {k: getattr(self, k) for k in ("constvars", "invars", "outvars", "eqns",
                                              "debug_info")}
    changes.pop("effects", None)
    fields.update(changes)
    return Jaxpr(**fields)

  def __str__(self):
    return pretty_print_jaxpr(self)

  __repr__ = __str__

  def pretty_print(self, *, print_shapes: bool = True, width: int = 80,
                   use_color: bool | None = None) -> str:
    """This jaxpr as JAX prints it, laid out for lines of ``width`` columns.

    Parameters
    ----------
    print_shapes : bool
      Annotate each binder with its type (``a:f32[3]``), as ``str`` does.
    width : int
      The line width. A jaxpr, an equation's parameters or a list of variables that
      fits in it prints on one line; one that does not breaks as JAX breaks it.
    use_color : bool, optional
      Only ``None`` or ``False``: jaxlite prints without ANSI colors.

    Returns
    -------
    str
    """
    return pretty_print_jaxpr(self, print_shapes=print_shapes, width=width,
                              use_color=use_color)


class ClosedJaxpr:
  """A jaxpr together with the values of its constvars."""
  __slots__ = ("jaxpr", "consts", "__weakref__")

  def __init__(self, jaxpr: Jaxpr, consts):
    self.jaxpr = jaxpr
    self.consts = list(consts)

  in_avals = property(lambda self: self.jaxpr.in_avals)
  out_avals = property(lambda self: self.jaxpr.out_avals)
  eqns = property(lambda self: self.jaxpr.eqns)
  effects = property(lambda self: self.jaxpr.effects)
  literals = property(lambda self: self.consts)

  def map_jaxpr(self, f) -> ClosedJaxpr:
    return ClosedJaxpr(f(self.jaxpr), self.consts)

  def replace(self, *, jaxpr=None, consts=None) -> ClosedJaxpr:
    return ClosedJaxpr(self.jaxpr if jaxpr is None else jaxpr,
                       self.consts if consts is None else consts)

  def __call__(self, *args):
    return eval_jaxpr(self.jaxpr, self.consts, *args)

  def __str__(self):
    return pretty_print_jaxpr(self.jaxpr)

  __repr__ = __str__

  def pretty_print(self, *, print_shapes: bool = True, width: int = 80,
                   use_color: bool | None = None) -> str:
    """The jaxpr as JAX prints it; see ``Jaxpr.pretty_print``."""
    return self.jaxpr.pretty_print(print_shapes=print_shapes, width=width,
                                   use_color=use_color)


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


def jaxpr_as_fun(closed: ClosedJaxpr, *args):
  """``closed`` as a function of its inputs (curried, as JAX's: leading ``args`` are
  bound)."""
  return functools.partial(eval_jaxpr, closed.jaxpr, closed.consts, *args)


# ----------------------------------------------------------------------------- JAX's helpers
# The rest of ``jax.extend.core``: what libraries that define primitives or rewrite
# jaxprs call.

no_effects: frozenset = effects_lib.no_effects


def new_jaxpr_eqn(invars, outvars, primitive, params, effects=no_effects, source_info=None,
                  ctx=None) -> JaxprEqn:
  """A jaxpr equation (JAX's signature; the effects are the primitive's own)."""
  return JaxprEqn(list(invars), list(outvars), primitive, dict(params), source_info)


def gensym(suffix: str = "") -> Callable:
  """A maker of fresh variables: ``gensym()(aval)`` is a new Var."""
  return Var


def jaxprs_in_params(params):
  """The jaxprs (opened) among an equation's params, a tuple's included."""
  for value in params.values():
    for v in (value if isinstance(value, (tuple, list)) else (value,)):
      if isinstance(v, ClosedJaxpr):
        yield v.jaxpr
      elif isinstance(v, Jaxpr):
        yield v


def jaxpr_subjaxprs(jaxpr: Jaxpr):
  """The jaxprs in the params of ``jaxpr``'s equations (not recursively): JAX's
  ``subjaxprs`` of a jaxpr."""
  for eqn in jaxpr.eqns:
    yield from jaxprs_in_params(eqn.params)


def mapped_aval(size: int, axis, aval: ShapedArray) -> ShapedArray:
  """``aval`` with its mapped axis ``axis`` (of length ``size``) removed; None: as is."""
  if axis is None:
    return aval
  if aval.shape[axis] != size:
    raise ValueError(f"mapped_aval: axis {axis} of {aval} is not of size {size}")
  return aval.update(shape=aval.shape[:axis] + aval.shape[axis + 1:])


def unmapped_aval(size: int, axis, aval: ShapedArray, explicit_mesh_axis=None) -> ShapedArray:
  """``aval`` with a mapped axis of length ``size`` inserted at ``axis``; None: as is."""
  if axis is None:
    return aval
  return aval.update(shape=aval.shape[:axis] + (size,) + aval.shape[axis:])


def primal_dtype_to_tangent_dtype(dtype):
  return dtype if dtypes.is_inexact(dtype) else dtypes.float0


def valid_jaxtype(x) -> bool:
  try:
    get_aval(x)
  except TypeError:
    return False
  return True


def find_top_trace(_=None) -> Trace:
  """The current trace (JAX's ``find_top_trace`` ignores its argument now too)."""
  return _context.trace


class OpaqueTraceState:
  """Which trace is current, to compare with a later state (``get_opaque_trace_state``)."""
  __slots__ = ("_trace",)

  def __init__(self, trace):
    self._trace = trace

  def __eq__(self, other):
    return isinstance(other, OpaqueTraceState) and self._trace is other._trace

  def __hash__(self):
    return id(self._trace)


def get_opaque_trace_state(convention=None) -> OpaqueTraceState:
  return OpaqueTraceState(_context.trace)


# ----------------------------------------------------------------------------- printing
#
# Jaxprs print as JAX prints them: a document of the pretty printer laid out at a width
# of 80, so a jaxpr that fits prints on one line. The groups are JAX's: a jaxpr is one
# group (its equations break all together), each equation's parameter list is a group,
# each break in a list of variables is a group of its own (so long lists wrap like
# text), and a tuple of jaxprs (cond's branches) is a group.


class _PrintContext:
  """Names of variables and of shared jaxprs while one jaxpr is printed.

  Names are handed out a, b, ..., z, ba, bb, ... as the document is built, skipping the
  names of shared jaxprs (a function named ``f`` hoisted into ``let f = ...``).
  """

  def __init__(self, names: dict, print_shapes: bool):
    self.names = names             # Var -> its printed name
    self.shared = {}               # id(Jaxpr) -> the name it is printed under in a `let`
    self.shared_names = set()
    self.print_shapes = print_shapes
    self._counter = itertools.count()
    self._types = {}               # aval -> its short type, `f32[3]`

  def type_of(self, aval) -> str:
    text = self._types.get(aval)
    if text is None:
      text = self._types[aval] = aval.str_short(short_dtypes=True)
    return text

  def __call__(self, v) -> str:
    if type(v) is Literal:
      return _format_literal(v)
    if type(v) is DropVar:
      return "_"
    name = self.names.get(v)
    if name is None:
      name = self.names[v] = self._fresh()
    return name

  def _fresh(self) -> str:
    while True:
      name = _encode_name(next(self._counter))
      if name not in self.shared_names:
        return name

  def alias(self, inner_vars, outer_atoms):
    """Name a call's inner variables after the outer values bound to them (as JAX does)."""
    if len(inner_vars) != len(outer_atoms):
      return
    taken = set()
    for v, outer in zip(inner_vars, outer_atoms):
      if (isinstance(outer, Var) and outer not in taken and isinstance(v, Var)
          and v not in self.names):
        taken.add(outer)
        self.names[v] = self(outer)


def _encode_name(n: int) -> str:
  letters = ""
  while True:
    n, r = divmod(n, 26)
    letters = chr(ord("a") + r) + letters
    if n == 0:
      return letters


def _literal_value(v: Literal) -> str:
  if np.shape(v.val):
    return "[...]"
  # JAX holds literals in their dtype: 0.1 in a float32 jaxpr prints as 0.10000000149...
  return str(np.asarray(v.val, v.aval.dtype).item())


def _format_literal(v: Literal) -> str:
  return f"{_literal_value(v)}:{v.aval.str_short(short_dtypes=True)}"


def _pp_vars(atoms, ctx: _PrintContext, sep: str = "", shapes: bool = False) -> pp.Doc:
  """Variables separated by ``sep`` and a space that becomes a newline when the line is
  full; with ``shapes``, each is annotated with its type (``a:f32[3]``)."""
  if shapes:
    docs = [pp.text(f"{ctx(v)}:{ctx.type_of(v.aval)}") for v in atoms]
  else:
    docs = [pp.text(ctx(v)) for v in atoms]
  if len(docs) == 1:  # no break to place: the nest and group would change nothing
    return docs[0]
  return pp.nest(2, pp.group(pp.join(_VAR_SEPARATORS[sep], docs)))


# Separators of variable lists; documents are immutable, so one object serves every list.
_VAR_SEPARATORS = {"": pp.group(pp.brk()), ",": pp.text(",") + pp.group(pp.brk())}
_EQUALS, _SPACE = pp.text(" = "), pp.text(" ")


def _bracketed(open_: str, close: str, docs) -> pp.Doc:
  """``[a b c]`` on one line if it fits, else one item a line indented under the opener."""
  return pp.group(pp.nest(2, pp.concat([pp.text(open_), pp.brk(""), pp.join(pp.brk(), docs)]))
                  + pp.brk("") + pp.text(close))


# a function's address changes from run to run; JAX prints it as X's
_ADDRESS = re.compile(r" at 0x([0-9a-fA-F]+)")


def _pp_param(prim, name, value, ctx: _PrintContext) -> pp.Doc:
  printer = param_printers.get((prim, name))
  if printer is not None:
    return pp.text(printer(value))
  if isinstance(value, (Jaxpr, ClosedJaxpr)):
    return _pp_jaxpr(_open(value), ctx)
  if type(value) is tuple and all(isinstance(v, (Jaxpr, ClosedJaxpr)) for v in value):
    return _bracketed("(", ")", [_pp_jaxpr(_open(v), ctx) for v in value])
  if isinstance(value, np.dtype):
    return pp.text(value.name)
  if isinstance(value, type) and issubclass(value, np.generic):
    return pp.text(np.dtype(value).name)
  if isinstance(value, frozenset):
    return pp.text(f"frozenset({{{', '.join(repr(e) for e in sorted(value))}}})")
  return pp.text(_ADDRESS.sub(lambda m: " at 0x" + "X" * len(m.group(1)), str(value)))


def _open(jaxpr) -> Jaxpr:
  return jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr


def _printed_params(eqn: JaxprEqn) -> list:
  """The (name, value) pairs JAX prints for ``eqn``, in its order (default: sorted)."""
  hide = hidden_params.get(eqn.primitive)
  order = param_order.get(eqn.primitive)
  items = ([(k, eqn.params[k]) for k in order] if order is not None
           else sorted(eqn.params.items()))
  return [(k, v) for k, v in items if hide is None or not hide(k, v, eqn.params)]


def _pp_eqn(eqn: JaxprEqn, ctx: _PrintContext) -> pp.Doc:
  if eqn.primitive.is_call:
    inner = _open(eqn.params.get("jaxpr"))
    if isinstance(inner, Jaxpr) and id(inner) not in ctx.shared:
      ctx.alias(inner.invars, eqn.invars)
      ctx.alias(inner.outvars, eqn.outvars)
  # the binders are named before the parameters' jaxprs, and those before the operands
  lhs = _pp_vars(eqn.outvars, ctx, shapes=ctx.print_shapes)
  params = [pp.text(f"{param_labels.get((eqn.primitive, k), k)}=")
            + _pp_param(eqn.primitive, k, v, ctx) for k, v in _printed_params(eqn)]
  # JAX writes the space before the operands even when there are none (iota)
  rhs = [pp.text(eqn.primitive.name), _bracketed("[", "]", params) if params else pp.nil(),
         _SPACE, _pp_vars(eqn.invars, ctx)]
  return pp.concat([lhs, _EQUALS, *rhs] if eqn.outvars else rhs)


def _pp_jaxpr(jaxpr: Jaxpr, ctx: _PrintContext) -> pp.Doc:
  shared = ctx.shared.get(id(jaxpr))
  return pp.text(shared) if shared is not None else _pp_jaxpr_body(jaxpr, ctx)


def _pp_jaxpr_body(jaxpr: Jaxpr, ctx: _PrintContext) -> pp.Doc:
  shapes = ctx.print_shapes
  constvars = _pp_vars(jaxpr.constvars, ctx, shapes=shapes)
  invars = _pp_vars(jaxpr.invars, ctx, shapes=shapes)
  eqns = pp.join(pp.brk("; "), [_pp_eqn(e, ctx) for e in jaxpr.eqns])
  outvars = pp.concat([pp.text("("), _pp_vars(jaxpr.outvars, ctx, sep=","),
                       pp.text(",)" if len(jaxpr.outvars) == 1 else ")")])
  return pp.group(pp.nest(2, pp.concat([
      pp.text("{ lambda "), constvars, pp.text("; "), invars, pp.text(". let"),
      pp.nest(2, pp.brk() + eqns), pp.brk(), pp.text("in "), outvars,
  ])) + pp.text(" }"))


def _dropvar_names(jaxpr: Jaxpr) -> dict:
  """Outputs of the top-level jaxpr that nothing reads print as ``_`` (as in JAX)."""
  names = {}
  used = {v for v in jaxpr.outvars if type(v) is not Literal}
  for eqn in reversed(jaxpr.eqns):
    for v in eqn.outvars:
      if v not in used:
        names[v] = "_"
    used.update(v for v in eqn.invars if type(v) is not Literal)
  return names


def subjaxprs(eqn: JaxprEqn) -> list:
  """The jaxprs in ``eqn``'s parameters (a call's body, cond's branches, a loop's body
  and condition, a custom rule's function), opened, in parameter order."""
  found = []
  if eqn.params:
    _collect_jaxprs(eqn.params.values(), found)
  return found


_PLAIN_PARAMS = frozenset({int, bool, float, str, type(None)})


def _collect_jaxprs(values, found):
  # (a loop, not generators, and plain values passed by type: every pass asks this of
  # every equation, about 1 us each)
  for value in values:
    kind = type(value)
    if kind in _PLAIN_PARAMS:
      continue
    if kind is ClosedJaxpr or kind is Jaxpr or isinstance(value, (Jaxpr, ClosedJaxpr)):
      found.append(_open(value))
    elif isinstance(value, (tuple, list)) and value:
      _collect_jaxprs(value, found)


def _find_shared(top: Jaxpr) -> list:
  """The sub-jaxprs JAX prints once in a ``let`` ahead of the jaxpr, with their names.

  Those are the ones reached more than once (each visit of a jaxpr visits its
  sub-jaxprs again) and the ones with more than 10 equations. A call's sub-jaxpr is
  named after the call (``<lambda>`` as ``lambda``), any other ``jaxpr``; a name that
  repeats gets a number.
  """
  counts, names, found = {}, {}, {}
  queue = collections.deque([top])
  while queue:
    jaxpr = queue.popleft()
    key = id(jaxpr)
    found[key] = jaxpr
    counts[key] = counts.get(key, 0) + (2 if jaxpr is not top and len(jaxpr.eqns) > 10
                                        else 1)
    for eqn in jaxpr.eqns:
      name = eqn.params.get("name") if eqn.primitive.is_call else None
      for sub in subjaxprs(eqn):
        queue.append(sub)
        if name is not None:
          names.setdefault(id(sub), str(name).strip("<>"))
  taken = collections.Counter()
  shared = []
  for key, n in counts.items():
    if n == 1:
      continue
    name = names.get(key, "jaxpr")
    repeats = taken[name]
    taken[name] += 1
    if repeats:
      name += str(repeats)
      taken[name] += 1
    shared.append((name, found[key]))
  return shared


def pp_toplevel_jaxpr(jaxpr: Jaxpr, print_shapes: bool = True) -> pp.Doc:
  """The document of ``jaxpr``, its shared sub-jaxprs first, each in a ``let``."""
  ctx = _PrintContext(_dropvar_names(jaxpr), print_shapes)
  shared = _find_shared(jaxpr)
  for name, sub in shared:
    ctx.shared_names.add(name)
    ctx.shared[id(sub)] = name
  docs = [pp.concat([pp.text(f"let {name} = "), _pp_jaxpr_body(sub, ctx), pp.text(" in"),
                     pp.brk()]) for name, sub in shared]
  return pp.concat(docs + [_pp_jaxpr_body(jaxpr, ctx)])


def pretty_print_jaxpr(jaxpr: Jaxpr, *, print_shapes: bool = True, width: int = 80,
                       use_color: bool | None = None) -> str:
  """``jaxpr`` as JAX prints it, laid out for lines of ``width`` columns."""
  if use_color:
    raise ValueError("jaxlite prints jaxprs without color; pass use_color=False.")
  return pp.format(pp_toplevel_jaxpr(jaxpr, print_shapes), width)
