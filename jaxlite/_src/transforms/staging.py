"""Tracing a Python function into a jaxpr (what ``jit`` and ``make_jaxpr`` stage out).

``DynamicJaxprTrace`` records every primitive bound while it is current as an equation;
values from outside (arrays, NumPy constants, tracers of an enclosing trace) become
literals (scalars) or constvars of the jaxpr being built.
"""
from __future__ import annotations

import threading

from jaxlite._src.core import core
from jaxlite._src.core.leak_check import check_no_leaks
from jaxlite._src.base import errors
from jaxlite._src.base import dtypes
from jaxlite._src.core.array import Array, in_device_memory, literal_value, next_birth
from jaxlite._src.core.core import (ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Tracer, Var,
                               abstract_eval, get_aval, set_current_trace)


class JitTracer(Tracer):
  """A value being staged into a jaxpr; it stands for the jaxpr variable ``_var``."""
  __slots__ = ("_var",)  # not `var`: that name is the array method

  def __init__(self, trace, var: Var):
    self._trace = trace
    self._var = var

  @property
  def aval(self):
    return self._var.aval


# primitive -> rule(*operands, **params) -> whether to evaluate it at once, its operands
# being constants (JAX folds dtype conversions of scalar constants, so `x * 2` shows a
# literal `2.0:f32[]`).
const_fold_rules: dict = {}


class _EagerFolding(threading.local):
  """Whether every primitive whose operands are all constants is evaluated at once
  (``ensure_compile_time_eval``, JAX's ``eager_constant_folding``), on this thread."""
  on = False


eager_folding = _EagerFolding()


class ensure_compile_time_eval:
  """``with ensure_compile_time_eval():`` operations on values that are not tracers run
  at once even while a function is being traced (their results are concrete, usable in
  Python control flow); operations on tracers are staged as usual (JAX 0.10's)."""
  __slots__ = ("prev",)

  def __enter__(self):
    self.prev = eager_folding.on
    eager_folding.on = True

  def __exit__(self, *exc):
    eager_folding.on = self.prev


class DynamicJaxprTrace(core.Trace):
  """Records primitives into equations of a jaxpr under construction."""

  def __init__(self, debug_info=None):
    self.debug_info = debug_info
    self.invars: list[Var] = []
    self.eqns: list[JaxprEqn] = []
    self.consts: dict[int, tuple[Var, object]] = {}
    self.born = next_birth()   # Arrays born before the trace are closed over
    self.is_valid = True

  @property
  def description(self):
    info = self.debug_info
    return f"{info.func_src_info} traced for {info.traced_for}" if info else "a jaxpr trace"

  def new_arg(self, aval) -> JitTracer:
    var = Var(aval)
    self.invars.append(var)
    return JitTracer(self, var)

  def to_atom(self, x):
    """The jaxpr atom (Var or Literal) standing for ``x`` inside this trace."""
    if isinstance(x, Tracer):
      if x._trace is self:
        return x._var
      if not x._trace.is_valid:
        raise errors.UnexpectedTracerError(x)
      return self._constvar(x, x.aval)   # closed over from an enclosing trace
    aval = get_aval(x)
    # (a literal's value is read to lower it; a key's is its data, held by a constvar)
    if (not aval.shape and not in_device_memory(x) and not dtypes.is_extended(aval.dtype)
        and not self._closed_over_array(x)):
      return Literal(literal_value(x) if type(x) is Array else x, aval)
    return self._constvar(x, aval)

  def _closed_over_array(self, x) -> bool:
    """Whether ``x`` is an Array made before this trace began: as in JAX, such an array,
    even a scalar, is a constvar, while Python and NumPy scalars and the arrays made while
    tracing are literals (equinox's closure conversion counts the consts)."""
    return isinstance(x, Array) and x._born < self.born

  def _constvar(self, value, aval) -> Var:
    entry = self.consts.get(id(value))
    if entry is None:
      # the weak type stays (as in JAX): a closed-over weak array returned from the
      # function is weak, as it is eagerly
      entry = self.consts[id(value)] = (Var(aval), value)
    return entry[0]

  def process_primitive(self, prim, args, params):
    fold = const_fold_rules.get(prim)
    if ((fold is not None or eager_folding.on)
        and not any(isinstance(x, Tracer) for x in args)):
      # (as JAX, only literals fold: a closed-over Array is converted in the jaxpr)
      folded = (fold is not None and not any(map(self._closed_over_array, args))
                and fold(*args, **params))
      if folded and not any(map(in_device_memory, args)):
        # compile-time work stays on the host
        return core.eval_trace.apply_on_host(prim, args, params)
      if folded or eager_folding.on:
        with set_current_trace(core.eval_trace):
          return prim.bind(*args, **params)
    atoms = [self.to_atom(x) for x in args]
    out_avals = abstract_eval(prim, [a.aval for a in atoms], params)
    outvars = [Var(a) for a in out_avals]
    self.eqns.append(JaxprEqn(atoms, outvars, prim, params))
    tracers = [JitTracer(self, v) for v in outvars]
    return tracers if prim.multiple_results else tracers[0]

  def to_closed_jaxpr(self, outs) -> ClosedJaxpr:
    outvars = [self.to_atom(x) for x in outs]
    constvars, constvals = [], []
    for var, value in self.consts.values():
      constvars.append(var)
      constvals.append(value)
    jaxpr = Jaxpr(constvars, self.invars, outvars, self.eqns, self.debug_info)
    return ClosedJaxpr(jaxpr, constvals)

  def describe_origin(self, tracer) -> str:
    """Which traced function and which of its arguments ``tracer`` depends on."""
    info = self.debug_info
    if info is None:
      return ""
    text = (f"The error occurred while tracing the function {info.func_src_info} for "
            f"{info.traced_for}.")
    names = [info.arg_names[i] for i in self._input_dependencies(tracer)
             if i < len(info.arg_names)]
    if names:
      which = ("the argument " + names[0] if len(names) == 1
               else "the arguments " + ", ".join(names))
      text += (" This concrete value was not available in Python because it depends on "
               f"the value of {which}.")
    return text

  def _input_dependencies(self, tracer):
    if not isinstance(tracer, JitTracer) or tracer._trace is not self:
      return []
    producer = {id(v): e for e in self.eqns for v in e.outvars}
    position = {id(v): i for i, v in enumerate(self.invars)}
    found, stack, seen = set(), [tracer._var], set()
    while stack:
      v = stack.pop()
      if id(v) in seen or type(v) is Literal:
        continue
      seen.add(id(v))
      if id(v) in position:
        found.add(position[id(v)])
      elif id(v) in producer:
        stack.extend(producer[id(v)].invars)
    return sorted(found)


def trace_to_jaxpr(flat_fun, in_avals, debug_info=None) -> ClosedJaxpr:
  """Trace ``flat_fun`` (flat list of arrays in and out) on ``in_avals`` into a jaxpr."""
  trace = DynamicJaxprTrace(debug_info)
  args = [trace.new_arg(aval) for aval in in_avals]
  try:
    with set_current_trace(trace):
      outs = flat_fun(*args)
    closed = trace.to_closed_jaxpr(outs)
  finally:
    trace.invalidate()
  del args, outs   # the tracers this frame holds are not leaks
  check_no_leaks(trace, "The error occurred while tracing " + (
      f"the function {debug_info.func_src_info} for {debug_info.traced_for}." if debug_info
      else "a function."))
  return closed
