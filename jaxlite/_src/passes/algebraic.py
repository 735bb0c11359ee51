"""Algebraic simplification: rewrite an equation into a cheaper one that computes the same
bits. XLA's simplifier does the same after lowering; doing it on the jaxpr lets tier 0
gain too. Autodiff leaves such patterns behind: ``mul 1.0 x`` from the cotangent seed,
reshape chains from unbatching, a transpose after each ``dot_general`` of a vjp.

The rules live beside their primitives (``lax/``), registered in ``simplify_rules``:
primitive -> list of ``rule(eqn, invars, producer, uses)``, given the operands after
earlier rewrites, the equation defining each variable and how many times each is read.
A rule returns an atom to forward in place of the equation's output, a replacement
equation, a list of equations whose last one defines the output, or None.

Constants whose elements are all the same (the ones of a cotangent seed after constant
folding, say) are read as scalar literals by the primitives in ``scalar_operands``, where
another operand has the output's shape: the rules above then see ``mul 1.0 x``, and tier 0
calls a ufunc with a scalar instead of broadcasting a row over every row of ``x``.
"""
import numpy as np

from jaxlite._src.core import core
from jaxlite._src.core.literals import literal_value
from jaxlite._src.core.array import in_device_memory

simplify_rules: dict = {}
# primitives whose operands may be rank-0 literals, broadcast to the output's shape
scalar_operands: set = set()
# a constant larger than this is not examined for being uniform
SPLAT_LIMIT = 1 << 16


def register(primitive, rule):
  simplify_rules.setdefault(primitive, []).append(rule)


def same_type(a, b) -> bool:
  """Whether avals ``a`` and ``b`` are interchangeable: shape, dtype and weak type."""
  return a.shape == b.shape and a.dtype == b.dtype and a.weak_type == b.weak_type


def is_one(v) -> bool:
  """Whether atom ``v`` is the scalar literal 1."""
  return type(v) is core.Literal and np.ndim(v.val) == 0 and np.asarray(v.val) == 1


def splat_literal(value):
  """``value`` as a scalar Literal if every element of it has the same bits (a NaN
  excepted), else None."""
  value = np.asarray(value)
  if not 0 < value.size <= SPLAT_LIMIT or value.dtype.kind not in "biufc":
    return None
  flat = np.ascontiguousarray(value).reshape(-1)
  first = flat[0]
  if value.dtype.kind in "fc" and np.isnan(first):
    return None   # NumPy's loops may pick either NaN operand: keep the array's own loop
  rows = flat.view(np.uint8).reshape(flat.size, flat.itemsize)
  if not (rows == rows[0]).all():
    return None
  aval = core.ShapedArray((), value.dtype)
  return core.Literal(literal_value(first, aval), aval)


def _read_splats(invars, splats, shape):
  """``invars`` with each splat constant as its scalar literal, when an operand that is
  not one has the output's ``shape`` (so the output keeps it)."""
  if not any(type(v) is core.Var and v not in splats and v.aval.shape == shape
             for v in invars):
    return invars
  return [splats.get(v, v) if type(v) is core.Var else v for v in invars]


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
  splats = {v: lit for v, c in zip(jaxpr.constvars, closed.consts)
            if not in_device_memory(c) and (lit := splat_literal(c)) is not None}
  for eqn in jaxpr.eqns:
    invars = [read(v) for v in eqn.invars]
    if splats and eqn.primitive in scalar_operands:
      scalars = _read_splats(invars, splats, eqn.outvars[0].aval.shape)
      changed |= scalars is not invars
      invars = scalars
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
      *before, eqn = result if type(result) is list else [result]
      for new_eqn in before:   # the equations the last one reads (a rule's broadcasts)
        count(new_eqn.invars, 1)
        producer.update(dict.fromkeys(new_eqn.outvars, new_eqn))
        eqns.append(new_eqn)
      count(eqn.invars, 1)
    for v in eqn.outvars:
      producer[v] = eqn
    eqns.append(eqn)
  if not changed:
    return closed
  new = core.Jaxpr(jaxpr.constvars, jaxpr.invars, [read(v) for v in jaxpr.outvars], eqns,
                   jaxpr.debug_info)
  return core.ClosedJaxpr(new, closed.consts)
