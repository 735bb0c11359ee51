"""Common-subexpression elimination: an equation identical to an earlier one reuses it."""
import numpy as np

from jaxlite._src.core import core
from jaxlite._src.passes import dce


def _atom_key(v):
  if type(v) is core.Literal:
    return ("lit", v.aval, np.asarray(v.val).tobytes())
  return v


def _params_key(params):
  try:
    key = tuple(sorted(params.items()))
    hash(key)
    return key
  except TypeError:
    return None  # unhashable params (e.g. callbacks): never merged


def run(closed: core.ClosedJaxpr) -> core.ClosedJaxpr:
  jaxpr = closed.jaxpr
  seen, rename, eqns = {}, {}, []
  read = lambda v: v if type(v) is core.Literal else rename.get(v, v)
  for eqn in jaxpr.eqns:
    invars = [read(v) for v in eqn.invars]
    params = _params_key(eqn.params)
    key = None
    if params is not None and not dce.has_effects(eqn):
      key = (eqn.primitive, tuple(_atom_key(v) for v in invars), params)
    previous = seen.get(key) if key is not None else None
    if previous is not None:
      rename.update(zip(eqn.outvars, previous.outvars))
      continue
    eqn = eqn._replace(invars=invars)
    if key is not None:
      seen[key] = eqn
    eqns.append(eqn)
  if len(eqns) == len(jaxpr.eqns):
    return closed
  new = core.Jaxpr(jaxpr.constvars, jaxpr.invars, [read(v) for v in jaxpr.outvars], eqns,
                   jaxpr.debug_info)
  return core.ClosedJaxpr(new, closed.consts)
