"""Inlining: replace each nested ``jit`` equation by the equations of its jaxpr."""
from jaxlite._src.core import core

# primitives whose params["jaxpr"] is simply called on the equation's operands
call_primitives: set = set()


def run(closed: core.ClosedJaxpr) -> core.ClosedJaxpr:
  jaxpr = closed.jaxpr
  if not any(e.primitive in call_primitives for e in jaxpr.eqns):
    return closed
  consts = dict(zip(jaxpr.constvars, closed.consts))
  eqns = []
  rename = {}
  read = lambda v: v if type(v) is core.Literal else rename.get(v, v)
  for eqn in jaxpr.eqns:
    if eqn.primitive not in call_primitives:
      eqns.append(eqn._replace(invars=[read(v) for v in eqn.invars]))
      continue
    inner = run(eqn.params["jaxpr"])
    # fresh constvars for the inner consts, inner invars bound to this eqn's operands
    inner_env = {}
    for v, c in zip(inner.jaxpr.constvars, inner.consts):
      fresh = core.Var(v.aval)
      consts[fresh] = c
      inner_env[v] = fresh
    for v, outer in zip(inner.jaxpr.invars, eqn.invars):
      inner_env[v] = read(outer)
    inner_read = lambda v: v if type(v) is core.Literal else inner_env[v]
    for e in inner.jaxpr.eqns:
      outvars = [core.Var(v.aval) for v in e.outvars]
      inner_env.update(zip(e.outvars, outvars))
      eqns.append(e._replace(invars=[inner_read(v) for v in e.invars], outvars=outvars))
    for v, out in zip(eqn.outvars, inner.jaxpr.outvars):
      rename[v] = inner_read(out)
  outvars = [read(v) for v in jaxpr.outvars]
  new = core.Jaxpr(list(consts), jaxpr.invars, outvars, eqns, jaxpr.debug_info)
  return core.ClosedJaxpr(new, list(consts.values()))
