"""Constant folding: evaluate, once at compile time, equations whose operands are all
constants; small results become literals, others new constvars."""

from jaxlite._src.core import core
from jaxlite._src.core.literals import literal_value
from jaxlite._src.core.array import in_device_memory
from jaxlite._src.passes import dce

# Folding these would copy their (large) result into the executable: skip them.
_SIZE_LIMIT = 1 << 16


def _has_kernel(prim) -> bool:
  """Whether ``prim`` has a NumPy kernel of jaxlite's: a library's primitive (its ``impl``,
  any Python) is left for the compiled program to run, as JAX leaves it to XLA."""
  return prim in core.EvalTrace.impls and not core.has_user_impl(prim)


def run(closed: core.ClosedJaxpr) -> core.ClosedJaxpr:
  jaxpr = closed.jaxpr
  known = dict(zip(jaxpr.constvars, closed.consts))
  eqns, changed = [], False
  rename = {}
  read = lambda v: v if type(v) is core.Literal else rename.get(v, v)

  def value(v):
    return v.val if type(v) is core.Literal else known[v]

  for eqn in jaxpr.eqns:
    invars = [read(v) for v in eqn.invars]
    foldable = (invars and not dce.has_effects(eqn) and _has_kernel(eqn.primitive)
                and not any(type(v) is core.Var and v not in known for v in invars)
                and not any(in_device_memory(value(v)) for v in invars)
                and all(o.aval.size <= _SIZE_LIMIT for o in eqn.outvars)
                and not any(isinstance(p, (core.Jaxpr, core.ClosedJaxpr))
                            for p in eqn.params.values()))
    if not foldable:
      eqns.append(eqn._replace(invars=invars))
      continue
    # on the host, as XLA folds constants (values on a device are left to XLA)
    outs = core.eval_trace.apply_on_host(eqn.primitive, [value(v) for v in invars],
                                         eqn.params)
    outs = outs if eqn.primitive.multiple_results else [outs]
    for v, out in zip(eqn.outvars, outs):
      if not v.aval.shape:
        rename[v] = core.Literal(literal_value(out, v.aval), v.aval)
      else:
        known[v] = out
    changed = True
  if not changed:
    return closed
  outvars = [read(v) for v in jaxpr.outvars]
  constvars = [v for v in known]
  new = core.Jaxpr(constvars, jaxpr.invars, outvars, eqns, jaxpr.debug_info)
  return dce.run(core.ClosedJaxpr(new, [known[v] for v in constvars]))
