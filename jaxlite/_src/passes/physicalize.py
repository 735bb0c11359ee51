"""Physicalization: a jaxpr that computes on arrays of extended dtypes (typed PRNG keys'
``key<fry>``, flax's ``fp8_meta32``, ...) becomes one that computes on their physical
data, which is all the backends ever see.

The jaxpr is traced again, equation by equation: an equation that touches an extended
dtype is replaced by its primitive's physical rule (``extended.physical_rules``) applied
to the data, and every other equation is bound as it was. A primitive with jaxprs in its
params and no rule of its own (a call, a loop) is bound again with those jaxprs
physicalized.
"""
from __future__ import annotations

from jaxlite._src.base import dtypes
from jaxlite._src.core import core
from jaxlite._src.core import extended
from jaxlite._src.transforms import staging

_is_extended = dtypes.is_extended


def mentions_extended(jaxpr: core.Jaxpr) -> bool:
  """Whether any variable of ``jaxpr``, or of a jaxpr nested in it, is extended."""
  if _any_extended(jaxpr.constvars) or _any_extended(jaxpr.invars):
    return True
  for eqn in jaxpr.eqns:
    if _eqn_mentions_extended(eqn):
      return True
  return False


def _eqn_mentions_extended(eqn) -> bool:
  if _any_extended(eqn.outvars) or _any_extended(eqn.invars):
    return True
  for sub in core.subjaxprs(eqn):
    if mentions_extended(sub):
      return True
  return False


def _any_extended(atoms) -> bool:
  # (a loop, not a generator: every jit's first call asks this of every equation)
  for v in atoms:
    if _is_extended(v.aval.dtype):
      return True
  return False


def run(closed: core.ClosedJaxpr) -> core.ClosedJaxpr:
  """``closed`` on physical data: extended values in its inputs, outputs and constants
  become their data."""
  jaxpr = closed.jaxpr
  if not mentions_extended(jaxpr):
    return closed
  consts = list(map(extended.physical, closed.consts))
  in_avals = [extended.physical_aval(v.aval) for v in jaxpr.invars]
  return staging.trace_to_jaxpr(lambda *args: _eval(jaxpr, consts, args), in_avals,
                                jaxpr.debug_info)


def _eval(jaxpr, consts, args):
  env = dict(zip(jaxpr.constvars, consts))
  env.update(zip(jaxpr.invars, args))
  read = lambda a: extended.physical(a.val) if type(a) is core.Literal else env[a]
  for eqn in jaxpr.eqns:
    vals = map(read, eqn.invars)
    if _eqn_mentions_extended(eqn):
      avals_in = [v.aval for v in eqn.invars]
      ctx = extended.PhysicalContext(avals_in, [v.aval for v in eqn.outvars])
      rule = extended.physical_rules.get(eqn.primitive)
      if rule is None:
        rule = (rebind_physical(eqn.primitive) if any(core.subjaxprs(eqn))
                else extended.physical_rule(eqn.primitive, avals_in))   # (raises)
      outs = rule(ctx, *vals, **eqn.params)
    else:
      outs = eqn.primitive.bind(*vals, **eqn.params)
    env.update(zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]))
  return [read(v) for v in jaxpr.outvars]


def rebind_physical(prim):
  """The physical rule of a primitive whose params hold jaxprs: bind it again with each
  jaxpr physicalized (the other params count operands, which stay as they are)."""
  def rule(ctx, *args, **params):
    return prim.bind(*args, **{k: _physical_param(v) for k, v in params.items()})
  return rule


def lower_fun(fun, avals_in):
  """A function of physical data that computes what ``fun`` computes on the logical
  values of ``avals_in`` (JAX's ``mlir.lower_fun``): ``fun`` traced on them, the jaxpr
  physicalized and evaluated where the caller is (eagerly, or into its trace)."""
  single = []
  def listed(*args):
    out = fun(*args)
    single.append(not isinstance(out, (list, tuple)))
    return [out] if single[0] else list(out)
  closed = run(staging.trace_to_jaxpr(listed, list(avals_in)))
  def physical_fun(*args):
    outs = core.eval_jaxpr(closed.jaxpr, closed.consts, *args)
    return outs[0] if single[0] else outs
  return physical_fun


def _physical_param(value):
  if isinstance(value, core.ClosedJaxpr):
    return run(value)
  if isinstance(value, core.Jaxpr):
    closed = run(core.ClosedJaxpr(value, []))
    if closed.consts:
      raise NotImplementedError("a jaxpr param without constants computes on extended "
                                "dtypes in a way that needs some")
    return closed.jaxpr
  if isinstance(value, tuple) and any(isinstance(v, (core.Jaxpr, core.ClosedJaxpr))
                                      for v in value):
    return tuple(map(_physical_param, value))
  return value
