"""Dead-code elimination: drop equations whose outputs nothing reads."""
from jaxlite._src import core

# primitives with side effects (callbacks, printing) are never dropped
effectful_primitives: set = set()


def has_effect(eqn) -> bool:
  """Whether ``eqn`` has a side effect: its primitive has one, or an equation of a jaxpr
  it runs (a loop or branch that prints) has one, as JAX's effects propagate."""
  if eqn.primitive in effectful_primitives:
    return True
  return any(_jaxpr_has_effect(p) for p in eqn.params.values())


def _jaxpr_has_effect(param) -> bool:
  if isinstance(param, (tuple, list)):   # cond's branches
    return any(_jaxpr_has_effect(p) for p in param)
  if isinstance(param, core.ClosedJaxpr):
    param = param.jaxpr
  return isinstance(param, core.Jaxpr) and any(has_effect(e) for e in param.eqns)


def run(closed: core.ClosedJaxpr) -> core.ClosedJaxpr:
  jaxpr = closed.jaxpr
  live = {v for v in jaxpr.outvars if type(v) is core.Var}
  kept = []
  for eqn in reversed(jaxpr.eqns):
    if any(v in live for v in eqn.outvars) or has_effect(eqn):
      kept.append(eqn)
      live.update(v for v in eqn.invars if type(v) is core.Var)
  if len(kept) == len(jaxpr.eqns) and all(v in live for v in jaxpr.constvars):
    return closed
  const_pairs = [(v, c) for v, c in zip(jaxpr.constvars, closed.consts) if v in live]
  new = core.Jaxpr([v for v, _ in const_pairs], jaxpr.invars, jaxpr.outvars, kept[::-1],
                   jaxpr.debug_info)
  return core.ClosedJaxpr(new, [c for _, c in const_pairs])
