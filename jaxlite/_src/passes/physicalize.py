"""Physicalization: a jaxpr that computes on typed PRNG keys (``key<fry>`` avals) becomes
one that computes on their uint32 data, which is all the backends ever see.

The jaxpr is traced again, equation by equation: an equation that touches keys is
replaced by its primitive's physical rule (``prng.physical_rules``) applied to the data,
and every other equation is bound as it was. A primitive with jaxprs in its params and
no rule of its own (a call, a loop) is bound again with those jaxprs physicalized.
"""
from __future__ import annotations

from jaxlite._src.core import core
from jaxlite._src.core import prng
from jaxlite._src.transforms import staging


def mentions_keys(jaxpr: core.Jaxpr) -> bool:
  """Whether any variable of ``jaxpr``, or of a jaxpr nested in it, is a key."""
  if _any_key(jaxpr.constvars) or _any_key(jaxpr.invars):
    return True
  for eqn in jaxpr.eqns:
    if _eqn_mentions_keys(eqn):
      return True
  return False


def _eqn_mentions_keys(eqn) -> bool:
  if _any_key(eqn.outvars) or _any_key(eqn.invars):
    return True
  for sub in core.subjaxprs(eqn):
    if mentions_keys(sub):
      return True
  return False


def _any_key(atoms) -> bool:
  # (a loop, not a generator: every jit's first call asks this of every equation)
  for v in atoms:
    if type(v.aval.dtype) is prng.KeyTy:
      return True
  return False


def run(closed: core.ClosedJaxpr) -> core.ClosedJaxpr:
  """``closed`` on key data: keys in its inputs, outputs and constants become their data."""
  jaxpr = closed.jaxpr
  if not mentions_keys(jaxpr):
    return closed
  consts = [c._base_array if type(c) is prng.PRNGKeyArray else c for c in closed.consts]
  in_avals = [prng.physical_aval(v.aval) for v in jaxpr.invars]
  return staging.trace_to_jaxpr(lambda *args: _eval(jaxpr, consts, args), in_avals,
                                jaxpr.debug_info)


def _eval(jaxpr, consts, args):
  env = dict(zip(jaxpr.constvars, consts))
  env.update(zip(jaxpr.invars, args))
  read = lambda a: a.val if type(a) is core.Literal else env[a]
  for eqn in jaxpr.eqns:
    vals = map(read, eqn.invars)
    if _eqn_mentions_keys(eqn):
      ctx = prng.PhysicalContext([v.aval for v in eqn.invars],
                                 [v.aval for v in eqn.outvars])
      rule = prng.physical_rules.get(eqn.primitive)
      if rule is None:
        rule = (rebind_physical(eqn.primitive) if any(core.subjaxprs(eqn))
                else prng.physical_rule(eqn.primitive))   # (raises: keys not accepted)
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


def _physical_param(value):
  if isinstance(value, core.ClosedJaxpr):
    return run(value)
  if isinstance(value, core.Jaxpr):
    closed = run(core.ClosedJaxpr(value, []))
    if closed.consts:
      raise NotImplementedError("a jaxpr param without constants computes on PRNG keys in "
                                "a way that needs some")
    return closed.jaxpr
  if isinstance(value, tuple) and any(isinstance(v, (core.Jaxpr, core.ClosedJaxpr))
                                      for v in value):
    return tuple(map(_physical_param, value))
  return value
