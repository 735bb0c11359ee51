"""Algebraic simplification: rewrite an equation into a cheaper one that computes the same
bits. XLA's simplifier does the same after lowering; doing it on the jaxpr lets tier 0
gain too. Autodiff leaves such patterns behind: ``mul 1.0 x`` from the cotangent seed,
reshape chains from unbatching, a transpose after each ``dot_general`` of a vjp.

The rules live beside their primitives (``lax/``), registered in ``simplify_rules``:
primitive -> list of ``rule(eqn, invars, producer, uses)``, given the operands after
earlier rewrites, the equation defining each variable and how many times each is read.
A rule returns an atom to forward in place of the equation's output, a replacement
equation, or None.
"""
import numpy as np

from jaxlite._src import core

simplify_rules: dict = {}


def register(primitive, rule):
  simplify_rules.setdefault(primitive, []).append(rule)


def same_type(a, b) -> bool:
  """Whether avals ``a`` and ``b`` are interchangeable: shape, dtype and weak type."""
  return a.shape == b.shape and a.dtype == b.dtype and a.weak_type == b.weak_type


def is_one(v) -> bool:
  """Whether atom ``v`` is the scalar literal 1."""
  return type(v) is core.Literal and np.ndim(v.val) == 0 and v.val == 1


def _simplify(eqn, invars, producer, uses):
  for rule in simplify_rules.get(eqn.primitive, ()):
    result = rule(eqn, invars, producer, uses)
    if result is not None:
      return result
  return None


def run(closed: core.ClosedJaxpr) -> core.ClosedJaxpr:
  jaxpr = closed.jaxpr
  uses = {}

  def count(atoms, change):
    for v in atoms:
      if type(v) is core.Var:
        uses[v] = uses.get(v, 0) + change

  for eqn in jaxpr.eqns:
    count(eqn.invars, 1)
  count(jaxpr.outvars, 1)
  rename, producer, eqns, changed = {}, {}, [], False
  read = lambda v: v if type(v) is core.Literal else rename.get(v, v)
  for eqn in jaxpr.eqns:
    invars = [read(v) for v in eqn.invars]
    result = _simplify(eqn, invars, producer, uses) if eqn.primitive in simplify_rules \
        else None
    if result is None:
      eqn = eqn._replace(invars=invars)
    else:
      # keep the use counts true: a forwarded atom takes over its output's readers
      count(invars, -1)
      changed = True
      if isinstance(result, (core.Var, core.Literal)):
        rename[eqn.outvars[0]] = result
        count([result] * uses.get(eqn.outvars[0], 0), 1)
        continue
      eqn = result
      count(eqn.invars, 1)
    for v in eqn.outvars:
      producer[v] = eqn
    eqns.append(eqn)
  if not changed:
    return closed
  new = core.Jaxpr(jaxpr.constvars, jaxpr.invars, [read(v) for v in jaxpr.outvars], eqns,
                   jaxpr.debug_info)
  return core.ClosedJaxpr(new, closed.consts)
