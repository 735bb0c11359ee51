"""Partial evaluation: do the work whose inputs are known now, stage the rest.

``PartialEvalTrace`` routes each primitive: if no operand is *unknown* (a tracer of the
``unknown`` staging trace) it goes to the ``known`` trace; otherwise it is staged into
``unknown``, which lifts the known operands as constvars: those are the residuals.
Higher-order primitives with mixed operands (cond, scan) split themselves with a rule in
``partial_eval_rules``. ``linearize`` is this with known = the primal computation and
unknown = the tangents; ``partial_eval_jaxpr`` is this with both sides staged.
"""
from __future__ import annotations

import weakref
from typing import Callable

from jaxlite._src.core import core
from jaxlite._src.core.core import ClosedJaxpr, Jaxpr, Primitive, set_current_trace
from jaxlite._src.transforms.staging import DynamicJaxprTrace, JitTracer

# primitive -> rule(trace, args, unknowns, params) -> outputs (known or unknown tracers)
partial_eval_rules: dict[Primitive, Callable] = {}


class PartialEvalTrace(core.Trace):
  """Sends work on known values to ``known`` and on unknown values to ``unknown``."""

  def __init__(self, known, unknown: DynamicJaxprTrace):
    self.known = known
    self.unknown = unknown
    self.is_valid = True

  def is_unknown(self, x) -> bool:
    return type(x) is JitTracer and x._trace is self.unknown

  def process_primitive(self, prim, args, params):
    unknowns = [self.is_unknown(x) for x in args]
    if not any(unknowns):
      known = self.known
      if known is core.eval_trace and core.has_user_impl(prim):
        # eager known work runs a primitive's own impl, as its bind does eagerly (an
        # impl may make arrays the backends' kernels cannot: extended dtypes)
        with set_current_trace(known):
          return prim.impl(*args, **params)
      return known.process_primitive(prim, args, params)
    rule = partial_eval_rules.get(prim)
    if rule is not None and not all(unknowns):
      return rule(self, args, unknowns, params)
    return self.unknown.process_primitive(prim, args, params)

  def bind_known(self, prim, *args, **params):
    with set_current_trace(self.known):
      return prim.bind(*args, **params)

  def bind_unknown(self, prim, *args, **params):
    return self.unknown.process_primitive(prim, args, params)


def partial_eval_jaxpr(closed: ClosedJaxpr, unknowns, instantiate=False):
  """Split ``closed`` by which inputs are unknown.

  Returns ``(known, unknown, out_unknowns, num_res)``: ``known`` takes the known inputs
  and returns the known outputs followed by ``num_res`` residuals; ``unknown`` takes the
  residuals followed by the unknown inputs and returns the unknown outputs.
  ``instantiate`` (a bool or one per output) forces outputs to be unknown.
  """
  known_trace, unknown_trace = DynamicJaxprTrace(), DynamicJaxprTrace()
  router = PartialEvalTrace(known_trace, unknown_trace)
  try:
    args = [(unknown_trace if u else known_trace).new_arg(a)
            for a, u in zip(closed.in_avals, unknowns)]
    with set_current_trace(router):
      outs = core.eval_jaxpr(closed.jaxpr, closed.consts, *args)
    if isinstance(instantiate, bool):
      instantiate = [instantiate] * len(outs)
    out_unknowns = [router.is_unknown(o) or inst for o, inst in zip(outs, instantiate)]
    known_outs = [o for o, u in zip(outs, out_unknowns) if not u]
    unknown_closed = unknown_trace.to_closed_jaxpr(
        [o for o, u in zip(outs, out_unknowns) if u])
    # constvars of the unknown side holding known tracers are the residuals
    jaxpr = unknown_closed.jaxpr
    res_idx = [i for i, c in enumerate(unknown_closed.consts)
               if type(c) is JitTracer and c._trace is known_trace]
    keep_idx = [i for i in range(len(unknown_closed.consts)) if i not in res_idx]
    residuals = [unknown_closed.consts[i] for i in res_idx]
    unknown_jaxpr = ClosedJaxpr(
        Jaxpr([jaxpr.constvars[i] for i in keep_idx],
              [jaxpr.constvars[i] for i in res_idx] + jaxpr.invars, jaxpr.outvars,
              jaxpr.eqns),
        [unknown_closed.consts[i] for i in keep_idx])
    known_jaxpr = known_trace.to_closed_jaxpr(known_outs + residuals)
  finally:
    known_trace.invalidate()
    unknown_trace.invalidate()
  return known_jaxpr, unknown_jaxpr, out_unknowns, len(residuals)


# ----------------------------------------------------------------------------- forwarding
# An output that is one of a jaxpr's inputs, unchanged, need not be computed: cond, scan
# and while_loop return the input itself (as JAX's), and call-like primitives return it
# when they run eagerly.

def jaxpr_forwarding(jaxpr: Jaxpr) -> list:
  """Per output of ``jaxpr``, the index of the input it returns as it is, or None (JAX's
  ``pe._jaxpr_forwarding``)."""
  index = {v: i for i, v in enumerate(jaxpr.invars)}
  return [index.get(v) if type(v) is core.Var else None for v in jaxpr.outvars]


# source ClosedJaxpr -> {key: what was derived from it}: a loop or branch run again gets
# the same derived jaxpr object, so the backends' per-jaxpr compile caches keep hitting
_derived: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def derive(closed: ClosedJaxpr, key, make):
  """``make()``, a jaxpr (or a tuple holding jaxprs) derived from ``closed``, made once
  per ``closed`` and ``key`` and kept while ``closed`` lives."""
  per = _derived.get(closed)
  if per is None:
    per = _derived[closed] = {}
  out = per.get(key)
  if out is None:
    out = per[key] = make()
  return out


def prune_outputs(closed: ClosedJaxpr, keep) -> ClosedJaxpr:
  """``closed`` returning only the outputs flagged in ``keep`` (JAX's
  ``prune_closed_jaxpr_outputs``)."""
  keep = tuple(bool(k) for k in keep)
  if all(keep):
    return closed

  def make():
    j = closed.jaxpr
    outvars = [v for v, k in zip(j.outvars, keep) if k]
    return ClosedJaxpr(Jaxpr(j.constvars, j.invars, outvars, j.eqns, j.debug_info),
                       closed.consts)
  return derive(closed, ("prune", keep), make)


def move_binders_to_front(closed: ClosedJaxpr, to_move) -> ClosedJaxpr:
  """``closed`` taking the inputs flagged in ``to_move`` first, in their order, then the
  others (JAX's ``move_binders_to_front``)."""
  to_move = tuple(bool(m) for m in to_move)
  if not any(to_move):
    return closed

  def make():
    j = closed.jaxpr
    invars = ([v for v, m in zip(j.invars, to_move) if m]
              + [v for v, m in zip(j.invars, to_move) if not m])
    return ClosedJaxpr(Jaxpr(j.constvars, invars, j.outvars, j.eqns, j.debug_info),
                       closed.consts)
  return derive(closed, ("front", to_move), make)


def drop_inputs(closed: ClosedJaxpr, drop) -> ClosedJaxpr:
  """``closed`` without the inputs flagged in ``drop``, which it must not read."""
  drop = tuple(bool(d) for d in drop)
  if not any(drop):
    return closed

  def make():
    j = closed.jaxpr
    invars = [v for v, d in zip(j.invars, drop) if not d]
    return ClosedJaxpr(Jaxpr(j.constvars, invars, j.outvars, j.eqns, j.debug_info),
                       closed.consts)
  return derive(closed, ("drop", drop), make)


def trace_jaxpr(fun, in_avals) -> ClosedJaxpr:
  """Stage ``fun`` (flat lists of values in and out) into a closed jaxpr."""
  from jaxlite._src.transforms.staging import trace_to_jaxpr
  return trace_to_jaxpr(fun, in_avals)


# ----------------------------------------------------------------------------- JAX's API
# (jax.interpreters.partial_eval): flax traces functions this way.

class PartialVal(tuple):
  """An input or output of partial evaluation: ``(aval, None)`` when unknown (only its
  type is known), ``(None, value)`` when known."""

  def __new__(cls, xs):
    pv, const = xs
    return tuple.__new__(cls, (pv, const))

  @classmethod
  def known(cls, const) -> PartialVal:
    return PartialVal((None, const))

  @classmethod
  def unknown(cls, aval) -> PartialVal:
    return PartialVal((aval, None))

  def is_known(self) -> bool:
    return self[0] is None

  def get_known(self):
    return self[1] if self[0] is None else None

  def get_aval(self):
    return core.get_aval(self[1]) if self[0] is None else self[0]


def trace_to_jaxpr_nounits(fun, pvals, instantiate=False):
  """Run ``fun`` (flat lists in and out) on ``pvals``: the work on known inputs now, in
  the current trace, the rest staged. Returns ``(jaxpr, out_pvals, consts)``: ``jaxpr``
  computes the unknown outputs from its constvars (the known values it needs: ``consts``)
  and the unknown inputs; ``out_pvals`` say which outputs are known, and their values.
  ``instantiate`` (a bool or one per output) makes outputs unknown."""
  unknown_trace = DynamicJaxprTrace()
  router = PartialEvalTrace(core.current_trace(), unknown_trace)
  try:
    args = [pv.get_known() if pv.is_known() else unknown_trace.new_arg(pv[0])
            for pv in pvals]
    with set_current_trace(router):
      outs = list(fun(*args))
    if isinstance(instantiate, bool):
      instantiate = [instantiate] * len(outs)
    out_unknown = [router.is_unknown(o) or inst for o, inst in zip(outs, instantiate)]
    closed = unknown_trace.to_closed_jaxpr([o for o, u in zip(outs, out_unknown) if u])
  finally:
    unknown_trace.invalidate()
  out_pvals = [PartialVal.unknown(core.get_aval(o).strip_weak_type()
                                  if not router.is_unknown(o) else o.aval)
               if u else PartialVal.known(o) for o, u in zip(outs, out_unknown)]
  return closed.jaxpr, out_pvals, closed.consts
