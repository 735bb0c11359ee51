"""Implicit differentiation of linear solves: ``custom_linear_solve`` (``custom_root``,
its non-linear sibling, is in ``autodiff_api.py``, above ``vmap``).

The solver itself is never differentiated: the tangent of a solution is one more solve,
on the tangent, declared linear with ``linear_call`` so that reverse mode transposes it
into a solve with the transposed ``matvec``.
"""
from __future__ import annotations

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.base import tree
from jaxlite._src.lax import custom_derivatives as cd
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.lax.base import operand as _operand
from jaxlite._src.transforms import ad


def _tree_sub(a, b):
  return tree.tree_map(ew.sub, a, b)


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False,
                        has_aux=False):
  """``x = solve(matvec, b)`` for a linear ``matvec``, differentiated implicitly rather
  than through ``solve`` (``jax.lax.custom_linear_solve``).

  The tangent of ``x`` is ``solve(matvec, db - dmatvec(x))``: one more solve, on the
  tangent (forward mode), declared linear with ``linear_call``, whose transpose (reverse
  mode) is ``transpose_solve`` with the transposed ``matvec`` (``matvec`` itself when
  ``symmetric``). Derivatives flow to ``b`` and to the arrays ``matvec`` closes over; what
  ``solve`` closes over is not differentiated. Reverse mode needs ``transpose_solve``
  (``solve`` by default when ``symmetric``).
  """
  if transpose_solve is None and symmetric:
    transpose_solve = solve
  b_leaves, b_tree = tree.tree_flatten(b)
  b_leaves = [_operand(x) for x in b_leaves]
  b_avals = [core.get_aval(x) for x in b_leaves]
  trees = {}

  def run_solve(fn, mv, rhs_leaves, rhs_tree):
    found = fn(mv, tree.tree_unflatten(rhs_tree, rhs_leaves))
    x, aux = found if has_aux else (found, None)
    x_leaves, trees["x"] = tree.tree_flatten(x)
    aux_leaves, trees["aux"] = tree.tree_flatten(aux)
    return [_operand(v) for v in x_leaves], [_operand(v) for v in aux_leaves]

  # the solution's types (solve may change b's: an integer b, a float matvec)
  x_avals = cd._trace_closed(lambda *r: run_solve(solve, matvec, r, b_tree)[0],
                             b_avals)[0].out_avals
  x_tree = trees["x"]

  # matvec with the arrays it closes over as explicit, differentiable inputs
  def flat_matvec(*v):
    return [_operand(y) for y in tree.tree_leaves(matvec(tree.tree_unflatten(x_tree, v)))]
  mv_jaxpr, mv_consts = cd._trace_closed(flat_matvec, x_avals)
  mv_avals = [core.get_aval(c) for c in mv_consts]
  n_c = len(mv_consts)

  def mv_with(consts):
    return lambda v: tree.tree_unflatten(x_tree, core.eval_jaxpr(
        mv_jaxpr.jaxpr, [], *consts, *tree.tree_leaves(v)))

  def vecmat_with(consts):
    if symmetric:
      return mv_with(consts)

    def vecmat(ct):
      undefined = [ad.UndefinedPrimal(a) for a in x_avals]
      cts = ad.backward_pass(mv_jaxpr.jaxpr, [], list(consts) + undefined,
                             [_operand(c) for c in tree.tree_leaves(ct)])[n_c:]
      return tree.tree_unflatten(x_tree, [ad.instantiate(c) if type(c) is ad.Zero else c
                                          for c in cts])
    return vecmat

  # solve (and transpose_solve) with what they close over as explicit inputs, so that the
  # differentiation rule below works on the values it is given
  def flat_solve(*args):
    x_leaves, aux_leaves = run_solve(solve, mv_with(args[:n_c]), args[n_c:], b_tree)
    return x_leaves + aux_leaves
  solve_jaxpr, solve_consts = cd._trace_closed(flat_solve, mv_avals + b_avals)
  n_x, aux_tree = len(x_avals), trees["aux"]
  if transpose_solve is None:
    tsolve_jaxpr, tsolve_consts = None, []
  else:
    tsolve_jaxpr, tsolve_consts = cd._trace_closed(
        lambda *args: run_solve(transpose_solve, vecmat_with(args[:n_c]), args[n_c:],
                                x_tree)[0], mv_avals + list(x_avals))

  def eval_solve(sc, consts, rhs):
    return core.eval_jaxpr(solve_jaxpr.jaxpr, [], *sc, *consts, *rhs)

  def primal(sc, tc, consts, rhs_leaves):
    return eval_solve(sc, consts, rhs_leaves)

  solve_all = cd.custom_jvp(primal)

  @solve_all.defjvp
  def _solve_jvp(primals, tangents):
    sc, tc, consts, rhs_leaves = primals
    dconsts, drhs = tangents[2], tangents[3]
    outs = eval_solve(sc, consts, rhs_leaves)
    x_leaves = outs[:n_x]
    _, dAx = ad.jvp_flat(lambda *c: tree.tree_leaves(mv_with(c)(
        tree.tree_unflatten(x_tree, x_leaves))), list(consts), list(dconsts))
    rhs = []
    for db, dax, a in zip(drhs, dAx, x_avals):
      if dtypes.is_inexact(core.get_aval(db).dtype):
        rhs.append(ew.sub(ew.convert_element_type(db, a.dtype), dax))
      else:   # an integer b has a float0 (no) tangent
        rhs.append(ew.neg(dax))

    def tangent_solve(res, r):
      return eval_solve(res[0], res[1], r)[:n_x]

    def transposed_solve(res, ct):
      return core.eval_jaxpr(tsolve_jaxpr.jaxpr, [], *res[2], *res[1], *ct)
    dx = cd.linear_call(tangent_solve, None if tsolve_jaxpr is None else transposed_solve,
                        (list(sc), list(consts), list(tc)), rhs)
    aux_tangents = [ad.zeros_like_aval(ad.tangent_aval(core.get_aval(v)))
                    for v in outs[n_x:]]
    return outs, list(dx) + aux_tangents

  outs = solve_all(list(solve_consts), list(tsolve_consts), list(mv_consts), b_leaves)
  x = tree.tree_unflatten(x_tree, outs[:n_x])
  return (x, tree.tree_unflatten(aux_tree, outs[n_x:])) if has_aux else x
