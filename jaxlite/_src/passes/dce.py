"""Dead-code elimination: drop equations whose outputs nothing reads."""
from jaxlite._src.core import core

# primitives with side effects (callbacks, printing, a library's primitive whose shape
# rule reports effects) are never dropped: core's table
effectful_primitives = core.effectful_primitives


def has_effects(eqn) -> bool:
  """Whether running ``eqn`` has side effects: its primitive has, or a jaxpr among its
  params (a cond branch, a loop body, a custom rule's function) holds such an equation.
  Passes never drop, merge or evaluate early such an equation."""
  return uses(eqn, effectful_primitives)


def uses(eqn, prims) -> bool:
  """Whether ``eqn``'s primitive, or one in a jaxpr among its params, is in ``prims``."""
  return eqn.primitive in prims or any(
      uses(e, prims) for jaxpr in core.subjaxprs(eqn) for e in jaxpr.eqns)


def run(closed: core.ClosedJaxpr) -> core.ClosedJaxpr:
  jaxpr = closed.jaxpr
  live = {v for v in jaxpr.outvars if type(v) is core.Var}
  kept = []
  for eqn in reversed(jaxpr.eqns):
    if any(v in live for v in eqn.outvars) or has_effects(eqn):
      kept.append(eqn)
      live.update(v for v in eqn.invars if type(v) is core.Var)
  if len(kept) == len(jaxpr.eqns) and all(v in live for v in jaxpr.constvars):
    return closed
  const_pairs = [(v, c) for v, c in zip(jaxpr.constvars, closed.consts) if v in live]
  new = core.Jaxpr([v for v, _ in const_pairs], jaxpr.invars, jaxpr.outvars, kept[::-1],
                   jaxpr.debug_info)
  return core.ClosedJaxpr(new, [c for _, c in const_pairs])


def used_inputs(closed: core.ClosedJaxpr) -> list:
  """Per input of ``closed``, whether running it reads that input: its live equations
  (those ``run`` keeps) or its outputs do."""
  jaxpr = run(closed).jaxpr
  read = {v for v in jaxpr.outvars if type(v) is core.Var}
  for eqn in jaxpr.eqns:
    read.update(v for v in eqn.invars if type(v) is core.Var)
  return [v in read for v in jaxpr.invars]
