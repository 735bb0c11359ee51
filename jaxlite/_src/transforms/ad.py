"""Automatic differentiation: forward mode (JVP), linearize, transposition, VJP.

Forward mode is a trace whose tracers carry a primal and a tangent; each primitive's JVP
rule (in ``jvp_rules``) computes both, with the parent trace current, so transforms nest.

Reverse mode is linearize + transpose. ``linearize`` runs the same JVP trace with its
rules evaluated under a ``PartialEvalTrace``: primal work happens now (in the parent
trace), tangent work is staged into a *linear* jaxpr whose constvars are the residuals. ``backward_pass`` runs that jaxpr backwards with the primitives' transpose
rules (in ``transpose_rules``). One set of JVP rules thus serves jvp, grad, and every
order of both.
"""
from __future__ import annotations

import functools
from typing import Callable

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.core.array import as_operand
from jaxlite._src.core.state import types as ref_state
from jaxlite._src.base import dtypes
from jaxlite._src.base import tree
from jaxlite._src.core.core import Literal, Primitive, ShapedArray, Tracer, set_current_trace
from jaxlite._src.transforms import lax_ops
from jaxlite._src.transforms.partial_eval import PartialEvalTrace
from jaxlite._src.transforms.staging import DynamicJaxprTrace, trace_to_jaxpr

jvp_rules: dict[Primitive, Callable] = {}
transpose_rules: dict[Primitive, Callable] = {}


class CustomVJPException(Exception):
  """A ``custom_vjp`` function staged into a jaxpr is differentiated with respect to a
  value it closes over, which its rules cannot differentiate (JAX's error)."""

  def __init__(self):
    super().__init__(
        "Detected differentiation of a custom_vjp function with respect to a closed-over "
        "value. That isn't supported because the custom VJP rule only specifies how to "
        "differentiate the custom_vjp function with respect to explicit input parameters. "
        "Try passing the closed-over value into the custom_vjp function as an argument, and "
        "adapting the custom_vjp fwd and bwd rules.")


class Zero:
  """A symbolic zero tangent or cotangent: no array is built until one is needed
  (``jax.interpreters.ad.Zero``; rules receive and may return it)."""
  __slots__ = ("aval",)

  def __init__(self, aval):
    self.aval = aval

  def __repr__(self):
    return f"Zero({self.aval.str_short()})"

  @staticmethod
  def from_primal_value(value) -> Zero:
    """The zero tangent of ``value`` (float0 for integers and booleans)."""
    return Zero(tangent_aval(core.get_aval(value)))

  def instantiate(self):
    return zeros_like_aval(self.aval)


class UndefinedPrimal:
  """Stands for a linear input during transposition (its value is never known)."""
  __slots__ = ("aval",)

  def __init__(self, aval):
    self.aval = aval

  def __repr__(self):
    return f"UndefinedPrimal({self.aval})"


# as in JAX: pytree nodes with no leaves, so tree functions pass them through
tree.register_pytree_node(Zero, lambda z: ((), z.aval), lambda aval, _: Zero(aval))
tree.register_pytree_node(UndefinedPrimal, lambda u: ((), u.aval),
                          lambda aval, _: UndefinedPrimal(aval))


class SymbolicZero:
  """A zero tangent or cotangent as a ``custom_jvp``/``custom_vjp`` rule defined with
  ``symbolic_zeros=True`` sees it (``jax.custom_derivatives.SymbolicZero``); it reads as
  its aval (``.shape``, ``.dtype``)."""

  def __init__(self, aval):
    self.aval = aval

  def __repr__(self):
    return "SymbolicZero"

  def __getattr__(self, name):
    if name == "aval":
      raise AttributeError(name)
    return getattr(self.aval, name)

  @staticmethod
  def from_primal_value(value) -> SymbolicZero:
    return SymbolicZero(tangent_aval(core.get_aval(value)))

  def instantiate(self):
    return zeros_like_aval(self.aval)


def tangent_aval(aval: ShapedArray) -> ShapedArray:
  """Tangents of integer and boolean values have dtype float0."""
  return aval.to_tangent_aval()


def zeros_like_aval(aval: ShapedArray):
  """A concrete or staged zero array of ``aval`` in the current trace."""
  if aval.dtype == dtypes.float0:
    return np.zeros(aval.shape, dtypes.float0)
  from jaxlite._src.core.array import Array
  if dtypes.is_extended(aval.dtype):   # its rules' zero (flax's fp8 metadata: -inf)
    return lax_ops.broadcast_in_dim(aval.dtype._rules.zero(aval.dtype), aval.shape, ())
  scalar = Array(np.zeros((), aval.dtype), aval.weak_type)
  return lax_ops.broadcast_in_dim(scalar, aval.shape, ())


def instantiate(t):
  return zeros_like_aval(t.aval) if type(t) is Zero else t


# -- add_any: the sum of two tangents or cotangents, printed as in JAX

add_any_p = Primitive("add_any")
add_any_p.def_abstract_eval(lambda x, y: x)


def add_tangents(x, y):
  if type(x) is Zero:
    return y
  if type(y) is Zero:
    return x
  return add_any_p.bind(x, y)


def _term(fn, t, aval, *args, **params):
  """One operand's JVP term, broadcast to the output (lax broadcasts rank 0 and size 1)."""
  term = fn(t, *args, **params)
  return term if core.get_aval(term).shape == aval.shape else lax_ops.broadcast_to_shape(
      term, aval.shape)


# -- forward mode

class JVPTracer(Tracer):
  __slots__ = ("primal", "tangent")

  def __init__(self, trace, primal, tangent):
    self._trace = trace
    self.primal = primal
    self.tangent = tangent

  @property
  def aval(self):
    return core.get_aval(self.primal)

  def to_concrete_value(self):
    p = self.primal
    if isinstance(p, Tracer):
      return p.to_concrete_value()
    return np.asarray(p)

  def __repr__(self):
    if self._trace.tangent_trace is not None:
      return f"GradTracer(primal={self.primal}, typeof(tangent)={self.aval.str_short(True)})"
    return f"JVPTracer(primal={self.primal}, tangent={self.tangent})"


class JVPTrace(core.Trace):
  """Forward-mode differentiation; with ``tangent_trace`` set, it linearizes."""
  description = "jvp"

  def __init__(self, parent, tangent_trace: DynamicJaxprTrace | None = None):
    self.parent = parent
    self.tangent_trace = tangent_trace
    self.is_valid = True
    # where JVP rules run: the parent, or a router that stages tangent work
    self.rule_trace = parent if tangent_trace is None else PartialEvalTrace(
        parent, tangent_trace)

  def to_primal_tangent(self, x):
    if isinstance(x, JVPTracer) and x._trace is self:
      return x.primal, x.tangent
    if isinstance(x, Tracer) and not x._trace.is_valid:
      from jaxlite._src.base import errors
      raise errors.UnexpectedTracerError(x)
    return x, Zero(tangent_aval(core.get_aval(x)))

  def process_primitive(self, prim, args, params):
    primals, tangents = zip(*map(self.to_primal_tangent, args)) if args else ((), ())
    if all(type(t) is Zero for t in tangents):
      with set_current_trace(self.parent):
        return prim.bind(*primals, **params)
    rule = jvp_rules.get(prim)
    if rule is None:
      _no_derivative(prim)
    with set_current_trace(self.rule_trace):
      primal_out, tangent_out = rule(primals, tangents, **params)
    if prim.multiple_results:
      return [self._wrap(p, t) for p, t in zip(primal_out, tangent_out)]
    return self._wrap(primal_out, tangent_out)

  def _wrap(self, primal, tangent):
    # a float0 tangent (of an integer or boolean, even a staged one) carries nothing: the
    # value is no tracer, so it is unperturbed, as JAX's ``maybe_jvp_tracer``
    if type(tangent) is Zero or getattr(tangent, "dtype", None) == dtypes.float0:
      return primal
    return JVPTracer(self, primal, tangent)


def depends_on(jaxpr, flags):
  """Per output of ``jaxpr``, whether it depends on an input whose flag is True (an
  output that does not has a zero tangent when those inputs are the differentiated
  ones)."""
  dep = {id(v) for v, f in zip(jaxpr.invars, flags) if f}
  for eqn in jaxpr.eqns:
    if any(type(a) is not Literal and id(a) in dep for a in eqn.invars):
      dep.update(id(v) for v in eqn.outvars)
  return [type(v) is not Literal and id(v) in dep for v in jaxpr.outvars]


def _jvp_ref_write(trace, ref, value):
  # a ref made outside the differentiated function has no tangent to hold (JAX's error)
  if isinstance(value, JVPTracer) and value._trace is trace:
    raise Exception(
        "performing a set/swap operation with a differentiated value on a "
        f"non-differentiated array reference of type {ref.aval}. Move the array "
        "reference to be an argument of the differentiated function?")
  return value


ref_state.write_rules[JVPTrace] = _jvp_ref_write


def jvp_flat(flat_fun, primals, tangents, instantiate_zeros=True):
  """Push ``tangents`` forward through ``flat_fun`` (flat lists in and out). With
  ``instantiate_zeros`` False, the tangents may be ``Zero`` and so may the outputs' (a
  call's JVP rule: an output that depends on no tangent stays a plain value, as in JAX).

  The tracers hold the values given (a Python float stays one), so an output that is an
  input, or that a custom_jvp rule computed in Python, comes back as it was, as in JAX;
  primitives receive them as operands."""
  trace = JVPTrace(core.current_trace())
  try:
    # an input with a zero tangent is no tracer at all (as JAX's ``maybe_jvp_tracer``)
    tracers = [trace._wrap(p, _symbolic_if_float0(t, p)) for p, t in zip(primals, tangents)]
    with set_current_trace(trace):
      outs = flat_fun(*tracers)
    pairs = [trace.to_primal_tangent(x) for x in outs]
  finally:
    trace.invalidate()
  with set_current_trace(trace.parent):
    return [p for p, _ in pairs], [instantiate(t) if instantiate_zeros else t
                                   for _, t in pairs]


def jvp_call_flat(flat_fun, primals, tangents):
  """``jvp_flat`` for a call primitive's JVP rule: what enters a call is an array (a
  Python float passed to a jitted function comes out an Array, as JAX's compiled call
  returns), and outputs without a tangent stay ``Zero``."""
  primals = [as_operand(p) for p in primals]
  tangents = [t if type(t) is Zero else as_operand(t) for t in tangents]
  return jvp_flat(flat_fun, primals, tangents, instantiate_zeros=False)


def _symbolic_if_float0(t, primal):
  """The float0 tangent of an integer or boolean primal is a symbolic zero."""
  if is_float0(t):
    return Zero(tangent_aval(core.get_aval(primal)))
  return t


def is_float0(t):
  return isinstance(t, np.ndarray) and t.dtype == dtypes.float0


def linearize_flat(flat_fun, primals, debug_info=None):
  """Evaluate ``flat_fun`` at ``primals`` and stage its linearization.

  Returns ``(primals_out, linear)``: ``linear`` is a ClosedJaxpr mapping input tangents
  to output tangents; its consts are the residuals computed in the parent trace.
  """
  parent = core.current_trace()
  tangent_trace = DynamicJaxprTrace(debug_info)
  trace = JVPTrace(parent, tangent_trace)
  try:
    tangents = [tangent_trace.new_arg(tangent_aval(core.get_aval(p))) for p in primals]
    tracers = [trace._wrap(p, t) for p, t in zip(primals, tangents)]
    with set_current_trace(trace):
      outs = flat_fun(*tracers)
    pairs = [trace.to_primal_tangent(x) for x in outs]
    if any(isinstance(p, Tracer) and p._trace is tangent_trace for p, _ in pairs):
      # a primitive whose JVP computes primal outputs from tangents (as reduce_window
      # with a general computation): reverse mode cannot split it
      raise ValueError("Linearization failed to produce known values for all output "
                       "primals. This is typically caused by attempting to differentiate "
                       "a function uses an operation that does not support reverse-mode "
                       "autodiff.")
    with set_current_trace(tangent_trace):
      tangents_out = [instantiate(t) for _, t in pairs]
    linear = tangent_trace.to_closed_jaxpr(tangents_out)
  finally:
    trace.invalidate()
    tangent_trace.invalidate()
  return [p for p, _ in pairs], linear


# -- transposition

def backward_pass(jaxpr: core.Jaxpr, consts, primals_in, cotangents_out):
  """Cotangents of ``jaxpr``'s linear inputs given its outputs' cotangents.

  ``primals_in`` holds ``UndefinedPrimal`` for each input the jaxpr is linear in and the
  value of every other input (those are evaluated forward, like residuals).
  """
  env = dict(zip(jaxpr.constvars, consts))
  linear = set()
  for v, x in zip(jaxpr.invars, primals_in):
    if type(x) is UndefinedPrimal:
      linear.add(v)
    else:
      env[v] = x
  linear_eqns = []
  for eqn in jaxpr.eqns:  # forward: evaluate the non-linear part, collect the linear one
    if any(type(v) is not Literal and v in linear for v in eqn.invars):
      linear.update(eqn.outvars)
      linear_eqns.append(eqn)
    else:
      outs = eqn.primitive.bind(*[_read(env, v) for v in eqn.invars], **eqn.params)
      env.update(zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]))

  cts = {}

  def write(v, ct):
    if type(v) is Literal or v not in linear or type(ct) is Zero or ct is None:
      return
    cts[v] = add_tangents(cts[v], ct) if v in cts else ct

  for v, ct in zip(jaxpr.outvars, cotangents_out):
    write(v, ct)
  for eqn in reversed(linear_eqns):
    cts_out = [cts.pop(v) if v in cts else Zero(v.aval) for v in eqn.outvars]
    if all(type(c) is Zero for c in cts_out):
      continue
    invals = [UndefinedPrimal(v.aval) if type(v) is not Literal and v in linear
              else _read(env, v) for v in eqn.invars]
    rule = transpose_rules.get(eqn.primitive)
    if rule is None:
      raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) for "
                                f"'{eqn.primitive.name}' not implemented.")
    cts_in = rule(cts_out if eqn.primitive.multiple_results else cts_out[0], *invals,
                  **eqn.params)
    for v, ct in zip(eqn.invars, cts_in):
      write(v, ct)
  return [cts.get(v, Zero(v.aval)) if v in linear else None for v in jaxpr.invars]


def transpose_jaxpr(closed: core.ClosedJaxpr, linear):
  """The transpose of ``closed`` w.r.t. the inputs flagged in ``linear``, as a jaxpr.

  It takes the non-linear inputs followed by the output cotangents and returns the
  cotangents of the linear inputs (zeros instantiated).
  """
  avals = closed.in_avals
  nonlinear = [a for a, lin in zip(avals, linear) if not lin]

  def fun(*args):
    it = iter(args[:len(nonlinear)])
    primals = [UndefinedPrimal(a) if lin else next(it) for a, lin in zip(avals, linear)]
    cts = backward_pass(closed.jaxpr, closed.consts, primals, args[len(nonlinear):])
    return [instantiate(ct) for ct, lin in zip(cts, linear) if lin]
  return trace_to_jaxpr(fun, nonlinear + list(closed.out_avals))


def jvp_jaxpr(closed, diff_mask):
  """The JVP of ``closed`` as a jaxpr: (primals..., tangents of diff inputs...) ->
  (outputs..., tangents of differentiated outputs...)."""
  return jvp_jaxpr_nonzeros(closed, diff_mask,
                            [dtypes.has_tangent(a.dtype) for a in closed.out_avals])[0]


def jvp_jaxpr_nonzeros(closed, diff_mask, want):
  """The JVP of ``closed`` as a jaxpr: (primals..., tangents of diff inputs...) ->
  (outputs..., tangents of the outputs flagged in ``want``...), and per output
  whether its tangent is nonzero. The other inputs' tangents are symbolic zeros, so
  nothing that depends on them alone is differentiated (as JAX's ``jvp_jaxpr``: a loop's
  rule finds its nonzero carries with it)."""
  avals = closed.in_avals
  n = len(avals)
  found = []

  def fun(*args):
    primals = list(args[:n])
    it = iter(args[n:])
    tangents = [next(it) if d else Zero(tangent_aval(a))
                for a, d in zip(avals, diff_mask)]
    fn = functools.partial(core.eval_jaxpr, closed.jaxpr, closed.consts)
    outs, out_tangents = jvp_flat(fn, primals, tangents, instantiate_zeros=False)
    found.append([type(t) is not Zero for t in out_tangents])
    return outs + [instantiate(t) for t, w in zip(out_tangents, want) if w]
  jaxpr = trace_to_jaxpr(fun, list(avals) + [tangent_aval(a) for a, d in
                                             zip(avals, diff_mask) if d])
  return jaxpr, found[0]


def _read(env, v):
  return v.val if type(v) is Literal else env[v]


def is_undefined(x) -> bool:
  return type(x) is UndefinedPrimal


# -- rule helpers: the tables are filled beside each primitive in lax/

def defjvp(prim, *jvp_fns, pass_ans=False):
  """Per-operand JVP rules: ``jvp_fns[i](g, *primals, **params)`` is operand i's term
  (``fn(g, ans, *primals)`` with ``pass_ans``, where ``ans`` is the primal output)."""
  def rule(primals, tangents, **params):
    primal_out = prim.bind(*primals, **params)
    aval = tangent_aval(core.get_aval(primal_out))
    leading = (primal_out,) + tuple(primals) if pass_ans else tuple(primals)
    tangent_out = Zero(aval)
    for fn, t in zip(jvp_fns, tangents):
      if fn is not None and type(t) is not Zero:
        tangent_out = add_tangents(tangent_out, _term(fn, t, aval, *leading, **params))
    return primal_out, tangent_out
  jvp_rules[prim] = rule


def defjvp2(prim, *jvp_fns):
  """As ``defjvp``, but each term also receives the primal output: ``fn(g, ans, *primals)``."""
  defjvp(prim, *jvp_fns, pass_ans=True)


def defzero(prim):
  """The output does not depend differentiably on the inputs (comparisons, floor...)."""
  def rule(primals, tangents, **params):
    out = prim.bind(*primals, **params)
    outs = out if prim.multiple_results else [out]
    zeros = [Zero(tangent_aval(core.get_aval(o))) for o in outs]
    return out, zeros if prim.multiple_results else zeros[0]
  jvp_rules[prim] = rule


def _no_derivative(prim, reason=""):
  raise NotImplementedError(
      f"Differentiation rule for '{prim.name}' not implemented.{reason} Wrap the "
      "computation in jax.lax.stop_gradient if its derivative is not needed, or define it "
      "with jax.custom_jvp.")


def defunsupported(prim, reason):
  """``prim`` has no derivative (as in JAX): differentiating it raises
  NotImplementedError, saying ``reason``."""
  def rule(primals, tangents, **params):
    _no_derivative(prim, f" {reason}")
  jvp_rules[prim] = rule


def deflinear2(prim, transpose_rule):
  """A primitive linear in all its operands: its JVP applies it to the tangents, and
  ``transpose_rule(ct, *operands, **params)`` (``UndefinedPrimal`` for the linear
  operands) gives the operands' cotangents (JAX's ``deflinear2``)."""
  def rule(primals, tangents, **params):
    primal_out = prim.bind(*primals, **params)
    tangent_out = prim.bind(*[instantiate(t) for t in tangents], **params)
    return primal_out, tangent_out
  jvp_rules[prim] = rule
  transpose_rules[prim] = transpose_rule


def deflinear(prim, transpose_rule):
  """As ``deflinear2``, with ``transpose_rule(ct, **params)`` not given the operands
  (JAX's ``deflinear``)."""
  deflinear2(prim, lambda ct, *args, **params: transpose_rule(ct, **params))


def defjvp_zero(prim):
  """JAX's name for ``defzero``: the output's tangent is zero."""
  defzero(prim)


def defbilinear(prim, lhs_rule=None, rhs_rule=None):
  """A primitive linear in each of its two operands separately (dot_general, convolution):
  the tangent is ``prim(tx, y) + prim(x, ty)``, a term for each nonzero tangent. With
  ``lhs_rule(ct, x, y, **params)`` and ``rhs_rule`` (JAX's ``defbilinear``), the transpose
  is the one for the undefined operand; without them, the caller registers its own."""
  def rule(primals, tangents, **params):
    (x, y), (tx, ty) = primals, tangents
    out = prim.bind(x, y, **params)
    t = Zero(tangent_aval(core.get_aval(out)))
    if type(tx) is not Zero:
      t = add_tangents(t, prim.bind(tx, y, **params))
    if type(ty) is not Zero:
      t = add_tangents(t, prim.bind(x, ty, **params))
    return out, t
  jvp_rules[prim] = rule
  if lhs_rule is None and rhs_rule is None:
    return

  def transpose(ct, x, y, **params):
    if is_undefined(x):
      return [lhs_rule(ct, x, y, **params), None]
    return [None, rhs_rule(ct, x, y, **params)]
  transpose_rules[prim] = transpose


jvp_rules[add_any_p] = lambda primals, tangents: (
    add_any_p.bind(*primals),
    add_any_p.bind(*[instantiate(t) for t in tangents]))
transpose_rules[add_any_p] = lambda ct, x, y: [ct, ct]


# -- JAX's names (jax.interpreters.ad) for the same tables and helpers

primitive_jvps = jvp_rules
primitive_transposes = transpose_rules
instantiate_zeros = instantiate
is_undefined_primal = is_undefined
add_jaxvals_p = add_any_p


def add_jaxvals(x, y):
  return add_any_p.bind(x, y)


def get_primitive_transpose(prim):
  try:
    return transpose_rules[prim]
  except KeyError:
    raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) for "
                              f"'{prim.name}' not implemented") from None
