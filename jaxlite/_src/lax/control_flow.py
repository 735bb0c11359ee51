"""Structured control flow: cond / switch, while_loop / fori_loop, scan / map.

Bodies are traced once into closed jaxprs held in the primitives' params, so a loop stays
a loop however many times it runs. Values the bodies close over are converted into
explicit operands (``_closure_convert``), so the jaxprs in params have no tracer consts.

Differentiation: each primitive's JVP traces the JVP of its bodies. Under ``linearize``
the mixed primal/tangent call is split by a partial-evaluation rule into a known call
(primal outputs and residuals, computed now) and an unknown, linear call (staged), which
``backward_pass`` transposes: cond into a cond of transposed branches, scan into a
reverse scan. ``while_loop`` has no transpose, as in JAX.
"""
from __future__ import annotations

import functools
import inspect
import operator

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.base import mesh_context
from jaxlite._src.base import traceback_util
from jaxlite._src.base import tree
from jaxlite._src.base.config import config
from jaxlite._src.base.errors import ConcretizationTypeError
from jaxlite._src.base.api_util import fun_source_info
from jaxlite._src.base.partition_spec import PartitionSpec
from jaxlite._src.core.array import Array, as_operand as _as_operand
from jaxlite._src.core.core import ClosedJaxpr, Jaxpr, Primitive, ShapedArray, Tracer
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.core.state import types as ref_state
from jaxlite._src.lax.base import check_not_a_ref as _check_not_a_ref
from jaxlite._src.lax.base import trace_cached as _trace_cached
from jaxlite._src.lax.base import trace_flat as _trace_flat
from jaxlite._src.lax.custom_derivatives import stop_gradient
from jaxlite._src.lax import reductions
from jaxlite._src.lax import shapes
from jaxlite._src.passes import dce
from jaxlite._src.transforms import ad
from jaxlite._src.transforms.ad import jvp_jaxpr_nonzeros as _jvp_nonzeros
from jaxlite._src.transforms import partial_eval as pe
from jaxlite._src.transforms.staging import trace_to_jaxpr


# ----------------------------------------------------------------------------- helpers

# The helpers below that derive a jaxpr from a traced one derive it once per traced jaxpr
# (``pe.derive``): a loop or branch run eagerly again then reuses tier 0's compiled body.

def _closure_convert(closed: ClosedJaxpr):
  """Turn the consts of ``closed`` into leading invars; returns (jaxpr, const values)."""
  jaxpr = closed.jaxpr
  if not jaxpr.constvars:
    return closed, []
  new = pe.derive(closed, ("closure_convert",), lambda: ClosedJaxpr(
      Jaxpr([], list(jaxpr.constvars) + list(jaxpr.invars), jaxpr.outvars, jaxpr.eqns,
            jaxpr.debug_info), []))
  return new, list(closed.consts)


def _avals_of(leaves):
  return [core.get_aval(x) for x in leaves]


def _type_mismatch(a: ShapedArray, b: ShapedArray) -> str:
  if a.shape != b.shape:
    return "the shapes do not match"
  if a.dtype != b.dtype:
    return "the dtypes do not match"
  return "the weak types do not match"


def _fun_desc(f):
  return fun_source_info(f)


def _zeros(aval):
  return ad.zeros_like_aval(aval)


def _inexact(aval):
  return dtypes.has_tangent(aval.dtype)



# ----------------------------------------------------------------------------- cond

cond_p = Primitive("cond")
cond_p.multiple_results = True


@cond_p.def_abstract_eval
def _cond_abstract_eval(index, *ops, branches):
  if index.shape or index.dtype != np.int32:
    raise TypeError(f"cond index must be an int32 scalar, got {index.str_short()}.")
  for b in branches:
    if [a.strip_weak_type() for a in b.in_avals] != [o.strip_weak_type() for o in ops]:
      raise TypeError("cond branches must take the operands' types.")
  # weak types may differ between branches: as in JAX, the outputs take the first branch's
  # (false_fun's, for cond), whichever branch runs
  return list(branches[0].out_avals)


def _check_branch_outputs(funs, out_trees, jaxprs, kind):
  names = ("true_fun", "false_fun") if kind == "cond" else tuple(
      f"branch {i}" for i in range(len(funs)))
  if kind == "cond":
    funs, out_trees, jaxprs = funs[::-1], out_trees[::-1], jaxprs[::-1]
  head = "\n\n" + "\n".join(f"{n} is {_fun_desc(f)}" for n, f in zip(names, funs)) + "\n\n"
  for i in range(1, len(jaxprs)):
    if out_trees[i] != out_trees[0]:
      raise TypeError(f"{kind} branch outputs must have the same pytree structure, but they "
                      f"differ:{head}{names[0]} output is {out_trees[0]} but {names[i]} "
                      f"output is {out_trees[i]}.\n\nRevise {names[0]} and/or {names[i]} "
                      "so that they have the same pytree structure.")
    for a, b in zip(jaxprs[0].out_avals, jaxprs[i].out_avals):
      if a.shape != b.shape or a.dtype != b.dtype:
        raise TypeError(f"{kind} branches must have equal output types but they differ."
                        f"{head}The output of {names[0]} has type {a.str_short()} but the "
                        f"corresponding output of {names[i]} has type {b.str_short()}, so "
                        f"{_type_mismatch(a, b)}.\n\nRevise {names[0]} and/or {names[i]} so "
                        "that all output types match.")


def _bind_cond(index, funs, operands, kind):
  split = ref_state.without_refs(tuple(operands))
  if split is not None:   # ref operands: the branches close over them
    rest, rebuild = split
    return _bind_cond(index, [functools.wraps(f)(lambda *ls, f=f: f(*rebuild(ls)))
                              for f in funs], rest, kind)
  try:
    return _bind_cond_traced(index, [ref_state.probing(f) for f in funs], operands, kind)
  except ref_state.UsesRefs as e:
    refs = e.refs
  # the branches wrote to outside refs: each takes and gives their values too
  carrying = lambda f: lambda ops, vals: ref_state.run_with(refs, vals, f, *ops)
  out, vals = _bind_cond(index, [carrying(f) for f in funs],
                         (operands, ref_state.values_of(refs)), kind)
  ref_state.store_all(refs, vals)
  return out


def _bind_cond_traced(index, funs, operands, kind):
  leaves, in_tree = tree.tree_flatten(operands)
  leaves = [_as_operand(x) for x in leaves]
  avals = _avals_of(leaves)
  traced = [_trace_flat(f, in_tree, avals, f"{kind} branch") for f in funs]
  jaxprs, out_trees = [t[0] for t in traced], [t[1] for t in traced]
  _check_branch_outputs(funs, out_trees, jaxprs, kind)
  branches, consts = _common_consts(jaxprs)
  # an output every branch passes through from the same input is that input, as JAX
  # prunes it from the cond: under vmap a batched predicate then leaves it unbatched
  forwarded = _forwarded_inputs(branches)
  branches = [pe.prune_outputs(b, [f is None for f in forwarded]) for b in branches]
  outs = iter(cond_p.bind(index, *consts, *leaves, branches=tuple(branches)))
  inputs = [*consts, *leaves]
  outs = [next(outs) if f is None else inputs[f] for f in forwarded]
  return tree.tree_unflatten(out_trees[0], outs)


def _forwarded_inputs(branches) -> list:
  """Per output, the input that every branch returns as it is, or None."""
  per_branch = [pe.jaxpr_forwarding(b.jaxpr) for b in branches]
  return [fs[0] if len(set(fs)) == 1 else None for fs in zip(*per_branch)]


def _same_dtypes(leaves, promoted) -> bool:
  """Whether promoting the carries changed only weak types, which the traced body does
  not depend on: JAX traces the user's body once then, and so does jaxlite."""
  return all(core.get_aval(x).dtype == core.get_aval(y).dtype
             for x, y in zip(leaves, promoted))


def _with_in_avals(closed, avals):
  """``closed`` taking ``avals`` (its dtypes, other weak types), staged again from its own
  equations rather than from the user's function."""
  if closed.in_avals == avals:
    return closed
  return pe.derive(closed, ("in_avals", tuple(avals)), lambda: trace_to_jaxpr(
      lambda *args: core.eval_jaxpr(closed.jaxpr, closed.consts, *args), avals))


def _with_out_avals(closed, avals):
  """``closed`` returning its first ``len(avals)`` outputs, converted to ``avals``."""
  if closed.out_avals == avals:
    return closed

  def fun(*args):
    outs = core.eval_jaxpr(closed.jaxpr, closed.consts, *args)
    return [ew._convert_element_type(o, a.dtype, a.weak_type) for o, a in zip(outs, avals)]
  return pe.derive(closed, ("out_avals", tuple(avals)),
                   lambda: trace_to_jaxpr(fun, closed.in_avals))


def _common_consts(jaxprs):
  """Closure-convert every branch; each takes all branches' consts, then the operands."""
  return pe.derive(jaxprs[0], ("common_consts", tuple(jaxprs[1:])),
                   lambda: _make_common_consts(jaxprs))


def _make_common_consts(jaxprs):
  converted = [_closure_convert(j) for j in jaxprs]
  # a value closed over by several branches is passed once, as JAX passes it
  slot, shared, avals = {}, [], []
  for closed, cs in converted:
    for c, v in zip(cs, closed.jaxpr.invars):
      if id(c) not in slot:
        slot[id(c)] = len(shared)
        shared.append(c)
        avals.append(v.aval)
  out = []
  for closed, cs in converted:
    jaxpr, n = closed.jaxpr, len(cs)
    invars = [None] * len(shared)
    for c, v in zip(cs, jaxpr.invars[:n]):   # (a branch closes over a value once)
      invars[slot[id(c)]] = v
    invars = [core.Var(a) if v is None else v for a, v in zip(avals, invars)]
    out.append(ClosedJaxpr(Jaxpr([], invars + jaxpr.invars[n:], jaxpr.outvars, jaxpr.eqns), []))
  return out, shared


def _python_index(index):
  """``index`` (a cond's or switch's) as a Python int where control flow runs as Python,
  under ``jax.disable_jit`` with a known index, as in JAX; else None (the staged form)."""
  return _concrete_int(index) if config.jax_disable_jit else None


_NO_OPERAND = object()   # cond's `operand=` not given (None is a valid operand: a pytree)


@traceback_util.api_boundary
def cond(pred, true_fun, false_fun, *operands, operand=_NO_OPERAND):
  """``true_fun(*operands)`` if ``pred`` else ``false_fun(*operands)``, staged as one
  ``cond`` so only one branch runs (under ``vmap`` a batched ``pred`` becomes a select).

  Also accepts the older form ``cond(pred, true_operand, true_fun, false_operand,
  false_fun)``.
  """
  if not callable(true_fun) and callable(false_fun) and len(operands) == 2 and \
      callable(operands[1]):
    true_op, tf, false_op, ff = true_fun, false_fun, operands[0], operands[1]
    return cond(pred, lambda ops: tf(ops[0]), lambda ops: ff(ops[1]), (true_op, false_op))
  if operand is not _NO_OPERAND:
    if operands:
      raise TypeError("if 'operand' keyword is passed then no positional operands can be "
                      f"passed, got operand={operand} and positional operands {operands}")
    operands = (operand,)
  if not callable(true_fun) or not callable(false_fun):
    raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
  index = _predicate_index(pred)
  if (i := _python_index(index)) is not None:
    return (false_fun, true_fun)[i](*operands)
  return _bind_cond(index, (false_fun, true_fun), operands, "cond")


def _predicate_index(pred):
  if isinstance(pred, (str, bytes)) or not hasattr(pred, "dtype") and not isinstance(
      pred, (bool, int, float, np.generic)):
    raise TypeError(f"Pred must be a scalar, got {pred} of type {type(pred)}")
  pred = _as_operand(pred)
  if pred.shape:
    shown = pred if not isinstance(pred, Tracer) else pred.aval
    raise TypeError(f"Pred must be a scalar, got {shown} of shape {pred.shape}.")
  if not (pred.dtype == np.bool_ or dtypes.is_integer(pred.dtype) or
          dtypes.is_floating(pred.dtype)):
    raise TypeError(f"Pred type must be either boolean or number, got {pred.dtype}.")
  if pred.dtype != np.bool_:
    pred = ew.ne(pred, Array(np.zeros((), pred.dtype)))
  return ew.convert_element_type(pred, np.int32)


@traceback_util.api_boundary
def switch(index, branches, *operands, operand=_NO_OPERAND):
  """``branches[index](*operands)``; ``index`` is clamped into range, as in JAX."""
  branches = list(branches)
  if not branches:
    raise ValueError("Empty branch sequence")
  if operand is not _NO_OPERAND:
    if operands:
      raise TypeError("if 'operand' keyword is passed then no positional operands can be "
                      f"passed, got operand={operand} and positional operands {operands}")
    operands = (operand,)
  index = _as_operand(index)
  if index.shape or not (dtypes.is_integer(index.dtype) or index.dtype == np.bool_):
    raise TypeError(f"switch index must be a scalar integer, got {index.aval.str_short()}.")
  index = ew.convert_element_type(index, np.int32)
  if len(branches) == 1:
    return branches[0](*operands)
  index = ew.clamp(Array(np.int32(0)), index, Array(np.int32(len(branches) - 1)))
  if (i := _python_index(index)) is not None:
    return branches[i](*operands)
  return _bind_cond(index, branches, operands, "switch")



def _cond_jvp(primals, tangents, *, branches):
  index, *ops = primals
  diff = [type(t) is not ad.Zero and _inexact(core.get_aval(p))
          for p, t in zip(ops, tangents[1:])]
  if not any(diff):
    outs = cond_p.bind(*primals, branches=branches)
    return outs, [ad.Zero(ad.tangent_aval(core.get_aval(o))) for o in outs]
  # an output has a tangent if some branch gives it one; the others stay symbolic zeros
  n = len(branches[0].out_avals)
  out_nz = [False] * n
  for b in branches:
    out_nz = [u or z for u, z in zip(out_nz, _jvp_nonzeros(b, diff, [False] * n)[1])]
  jvp_branches = tuple(_jvp_nonzeros(b, diff, out_nz)[0] for b in branches)
  ts = [ad.instantiate(t) for t, d in zip(tangents[1:], diff) if d]
  outs = cond_p.bind(index, *ops, *ts, branches=jvp_branches)
  primal_outs, it = outs[:n], iter(outs[n:])
  out_tangents = [next(it) if nz else ad.Zero(ad.tangent_aval(a))
                  for a, nz in zip(branches[0].out_avals, out_nz)]
  return primal_outs, out_tangents


def _cond_partial_eval(trace, args, unknowns, params):
  branches = params["branches"]
  if unknowns[0]:
    return trace.bind_unknown(cond_p, *args, **params)
  op_unknowns = unknowns[1:]
  out_uk = [False] * len(branches[0].out_avals)
  for b in branches:
    out_uk = [a or b for a, b in zip(out_uk, pe.partial_eval_jaxpr(b, op_unknowns)[2])]
  splits = [pe.partial_eval_jaxpr(b, op_unknowns, instantiate=out_uk) for b in branches]
  res_avals = [list(k.out_avals[len(k.out_avals) - n:]) if n else []
               for k, _, _, n in splits]
  all_res = [a for avals in res_avals for a in avals]
  known_branches, unknown_branches, offset = [], [], 0
  for (known, unknown, _, n), avals in zip(splits, res_avals):
    known_branches.append(_known_branch(known, n, all_res, offset))
    unknown_branches.append(_unknown_branch(unknown, n, all_res, offset))
    offset += n
  index, ops = args[0], args[1:]
  known_ops = [x for x, u in zip(ops, op_unknowns) if not u]
  unknown_ops = [x for x, u in zip(ops, op_unknowns) if u]
  known_outs = trace.bind_known(cond_p, index, *known_ops, branches=tuple(known_branches))
  n_known = len(known_outs) - len(all_res)
  residuals = known_outs[n_known:]
  unknown_outs = trace.bind_unknown(cond_p, index, *residuals, *unknown_ops,
                                    branches=tuple(unknown_branches))
  k_it, u_it = iter(known_outs[:n_known]), iter(unknown_outs)
  return [next(u_it) if u else next(k_it) for u in out_uk]


def _known_branch(known, n_res, all_res, offset):
  """Known branch returning its residuals in its own slots of the shared residual list."""
  def fun(*args):
    outs = core.eval_jaxpr(known.jaxpr, known.consts, *args)
    mine = outs[len(outs) - n_res:] if n_res else []
    res = [_zeros(a) for a in all_res[:offset]] + mine + [
        _zeros(a) for a in all_res[offset + n_res:]]
    return outs[:len(outs) - n_res] + res
  return trace_to_jaxpr(fun, known.in_avals)


def _unknown_branch(unknown, n_res, all_res, offset):
  def fun(*args):
    res, ops = args[:len(all_res)], args[len(all_res):]
    return core.eval_jaxpr(unknown.jaxpr, unknown.consts,
                           *res[offset:offset + n_res], *ops)
  return trace_to_jaxpr(fun, list(all_res) + list(unknown.in_avals[n_res:]))


def _cond_transpose(cts, index, *ops, branches):
  linear = [ad.is_undefined(x) for x in ops]
  cts = [ad.instantiate(c) for c in cts]
  transposed = tuple(ad.transpose_jaxpr(b, linear) for b in branches)
  nonlinear = [x for x in ops if not ad.is_undefined(x)]
  outs = cond_p.bind(index, *nonlinear, *cts, branches=transposed)
  it = iter(outs)
  return [None] + [next(it) if lin else None for lin in linear]


ad.jvp_rules[cond_p] = _cond_jvp
ad.transpose_rules[cond_p] = _cond_transpose
pe.partial_eval_rules[cond_p] = _cond_partial_eval


# ----------------------------------------------------------------------------- while

while_p = Primitive("while")
while_p.multiple_results = True


@while_p.def_abstract_eval
def _while_abstract_eval(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
  return list(body_jaxpr.out_avals)


def _check_carry(what, fun, in_tree, out_tree, in_avals, out_avals, paths):
  """JAX's check that a loop body gives back its carry's types (``paths``: each carry
  leaf's key path in the carry, named after ``fun``'s first parameter as JAX names it)."""
  if in_tree != out_tree:
    raise TypeError(f"{what} function carry input and carry output must have the same "
                    f"pytree structure, but they differ:\n\nthe input carry is {in_tree} "
                    f"but the output carry is {out_tree}.\n\nRevise the function so that "
                    "the carry output has the same structure as the carry input.")
  first = _first_parameter(fun)
  if first:
    component = lambda p: (f"the input carry component {first}{p}" if p
                           else f"the input carry {first}")
  else:
    component = lambda p: f"the input carry at path {p}" if p else "the input carry"
  # (a split over an Explicit mesh axis is part of the type: JAX names no reason then)
  diffs = [f"{component(p)} has type {a.str_short()} but the corresponding output carry "
           f"component has type {b.str_short()}"
           + (f", so {_type_mismatch(a, b)}" if (a.shape, a.dtype) != (b.shape, b.dtype)
              else "")
           for p, a, b in zip(paths, in_avals, out_avals)
           if a.shape != b.shape or a.dtype != b.dtype or a.spec != b.spec]
  if not diffs:
    return
  if len(diffs) == 1:
    differences = f"{diffs[0][0].upper()}{diffs[0][1:]}.\n"
  else:   # (as JAX joins them)
    differences = "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"
  raise TypeError(f"{what} function carry input and carry output must have equal types, "
                  f"but they differ:\n\n{differences}\nRevise the function so that all "
                  "output types match the corresponding input types.")


def _first_parameter(fun):
  try:
    return next(iter(inspect.signature(fun).parameters), None)
  except (TypeError, ValueError):
    return None


def _promote_weak_carry(leaves, out_avals):
  """Weakly typed carries take the type the body gives them; returns the new leaves, or
  None when nothing changed. The caller traces the body again only where a dtype changed
  (JAX's ``typematch`` ignores weak types): see ``_same_dtypes``."""
  new, changed = [], False
  for x, b in zip(leaves, out_avals):
    a = core.get_aval(x)
    # only where promotion would give the body's type (a weak 0 may become float32, a
    # weak 1.0 may not become int32: that is a type error, as in JAX)
    if (a.weak_type and a.shape == b.shape and (a.dtype != b.dtype or not b.weak_type)
        and dtypes.result_type(x, b.dtype) == b.dtype):
      x, changed = ew._convert_element_type(x, b.dtype, b.weak_type), True
    new.append(x)
  return new if changed else None


@traceback_util.api_boundary
def while_loop(cond_fun, body_fun, init_val):
  """``while cond_fun(val): val = body_fun(val)`` as one staged loop.

  Forward-mode differentiable; reverse mode needs ``scan`` (or ``fori_loop`` with static
  bounds), as in JAX. Under ``jax.disable_jit`` it is that Python loop, unless the
  predicate is not known (under ``vmap``, say).
  """
  if config.jax_disable_jit:
    try:
      val = tree.tree_map(_as_operand, init_val)
      while cond_fun(val):
        val = tree.tree_map(_as_operand, body_fun(val))
      return val
    except ConcretizationTypeError:   # (as JAX: the functions ran once more, staged)
      pass
  try:
    return _while_loop(ref_state.probing(cond_fun), ref_state.probing(body_fun), init_val)
  except ref_state.UsesRefs as e:
    refs = e.refs
  # the functions wrote to outside refs: their values join the carry; cond_fun's writes
  # are made again before each body (the loop keeps only its predicate), so they happen
  # once per iteration, not after the last test, as in JAX 0.10.2
  cond_writes = []

  def cond(carry):
    out, vals = ref_state.run_with(refs, carry[1], cond_fun, carry[0])
    cond_writes.append(any(v is not c for v, c in zip(vals, carry[1])))
    return out

  def body(carry):
    vals = carry[1]
    if cond_writes[-1]:
      vals = ref_state.run_with(refs, vals, cond_fun, carry[0])[1]
    return ref_state.run_with(refs, vals, body_fun, carry[0])
  out, vals = while_loop(cond, body, (init_val, ref_state.values_of(refs)))
  ref_state.store_all(refs, vals)
  return out


def _while_loop(cond_fun, body_fun, init_val):
  given, carry_tree = tree.tree_flatten(init_val)
  ref_state.check_no_refs(given, "while_loop's carry")
  in_tree = tree.tree_structure((init_val,))  # the functions take the carry as one argument
  leaves = converted = [_as_operand(x) for x in given]
  avals = _avals_of(leaves)
  cond_jaxpr, _ = _trace_flat(cond_fun, in_tree, avals, "cond_fun")
  out_avals = cond_jaxpr.out_avals
  if len(out_avals) != 1 or out_avals[0].shape or out_avals[0].dtype != np.bool_:
    raise TypeError("cond_fun must return a boolean scalar, but got output type(s) "
                    f"{list(out_avals)}.")
  body_jaxpr, body_tree = _trace_flat(body_fun, in_tree, avals, "body_fun")
  promoted = _promote_weak_carry(leaves, body_jaxpr.out_avals) if carry_tree == body_tree \
      else None
  if promoted is not None and _same_dtypes(leaves, promoted):
    leaves, avals = promoted, _avals_of(promoted)
    cond_jaxpr, body_jaxpr = (_with_in_avals(j, avals) for j in (cond_jaxpr, body_jaxpr))
  elif promoted is not None:
    leaves, avals = promoted, _avals_of(promoted)
    cond_jaxpr, _ = _trace_flat(cond_fun, in_tree, avals, "cond_fun")
    body_jaxpr, body_tree = _trace_flat(body_fun, in_tree, avals, "body_fun")
  paths = [tree.keystr(p) for p, _ in tree.tree_flatten_with_path(init_val)[0]]
  _check_carry("while_loop body", body_fun, carry_tree, body_tree, avals,
               body_jaxpr.out_avals, paths)
  body_jaxpr = _with_out_avals(body_jaxpr, [a.update(weak_type=a.weak_type) for a in avals])
  cond_closed, cond_consts = _closure_convert(cond_jaxpr)
  body_closed, body_consts = _closure_convert(body_jaxpr)
  given = [g if c is a else c for g, a, c in zip(given, converted, leaves)]
  return tree.tree_unflatten(carry_tree, _bind_while(cond_closed, cond_consts, body_closed,
                                                     body_consts, leaves, given))


def _bind_while(cond_closed, cond_consts, body_closed, body_consts, carry, given):
  """``while_p.bind`` with JAX's forwarding: a carry the body passes through unchanged
  and the condition does not read is read-only, so it becomes a body const and the loop
  returns the value passed in (under vmap a batched predicate then leaves it unbatched)."""
  ncc, nbc = len(cond_consts), len(body_consts)
  body_fwd = pe.jaxpr_forwarding(body_closed.jaxpr)
  move = [f == nbc + i and not r for i, (f, r) in
          enumerate(zip(body_fwd, _reads_inputs(cond_closed)[ncc:]))]
  if any(move):
    cond_closed = pe.drop_inputs(_without_dead_code(cond_closed), [False] * ncc + move)
    body_closed = pe.move_binders_to_front(
        pe.prune_outputs(body_closed, [not m for m in move]), [False] * nbc + move)
    body_consts = [c for c, m in zip(carry, move) if m] + list(body_consts)
  kept = [c for c, m in zip(carry, move) if not m]
  outs = iter(while_p.bind(*cond_consts, *body_consts, *kept, cond_jaxpr=cond_closed,
                           body_jaxpr=body_closed, cond_nconsts=ncc,
                           body_nconsts=len(body_consts)))
  return [g if m else next(outs) for g, m in zip(given, move)]


def _without_dead_code(closed):
  return pe.derive(closed, ("dce",), lambda: dce.run(closed))


def _reads_inputs(closed) -> list:
  return pe.derive(closed, ("used_inputs",), lambda: dce.used_inputs(closed))



def _nonzero_carries(body, diff_consts, carry_nz, diff_xs):
  """Fixed point (JAX's): a carry has a nonzero tangent if its initial value does or the
  body gives its update one; the others stay symbolic zeros, undifferentiated. ``body``
  takes (consts, carry, xs). Returns the carries' flags and the body's outputs' then."""
  n_carry, n_out = len(carry_nz), len(body.out_avals)
  while True:
    _, nz = _jvp_nonzeros(body, diff_consts + carry_nz + diff_xs, [False] * n_out)
    new = [c or (z and _inexact(a))
           for c, z, a in zip(carry_nz, nz[:n_carry], body.out_avals)]
    if new == carry_nz:
      return carry_nz, nz
    carry_nz = new


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
  nc = cond_nconsts + body_nconsts
  carry_avals = body_jaxpr.out_avals
  diff_consts = [type(t) is not ad.Zero and _inexact(core.get_aval(p))
                 for p, t in zip(primals[cond_nconsts:nc], tangents[cond_nconsts:nc])]
  diff_carry, _ = _nonzero_carries(
      body_jaxpr, diff_consts, [type(t) is not ad.Zero and _inexact(a)
                                for t, a in zip(tangents[nc:], carry_avals)], [])
  if not any(diff_carry):
    outs = while_p.bind(*primals, cond_jaxpr=cond_jaxpr, body_jaxpr=body_jaxpr,
                        cond_nconsts=cond_nconsts, body_nconsts=body_nconsts)
    return outs, [ad.Zero(ad.tangent_aval(core.get_aval(o))) for o in outs]
  body_jvp, _ = _jvp_nonzeros(body_jaxpr, diff_consts + diff_carry, diff_carry)
  n_bc, n_carry = body_nconsts, len(carry_avals)
  n_tc = sum(diff_consts)

  # the jvp body takes (consts, carry, const tangents, carry tangents); while wants
  # (consts..., carry...) with the const tangents among the consts
  def body(*args):
    consts, tconsts = args[:n_bc], args[n_bc:n_bc + n_tc]
    carry, tcarry = args[n_bc + n_tc:n_bc + n_tc + n_carry], args[n_bc + n_tc + n_carry:]
    return core.eval_jaxpr(body_jvp.jaxpr, body_jvp.consts, *consts, *carry, *tconsts,
                           *tcarry)
  tangent_avals = [ad.tangent_aval(a) for a, d in zip(carry_avals, diff_carry) if d]
  const_t_avals = [ad.tangent_aval(a) for a, d in zip(body_jaxpr.in_avals[:n_bc],
                                                       diff_consts) if d]
  new_body = trace_to_jaxpr(body, list(body_jaxpr.in_avals[:n_bc]) + const_t_avals +
                            list(carry_avals) + tangent_avals)

  def cond(*args):
    consts, carry = args[:cond_nconsts], args[cond_nconsts:cond_nconsts + n_carry]
    return core.eval_jaxpr(cond_jaxpr.jaxpr, cond_jaxpr.consts, *consts, *carry)
  new_cond = trace_to_jaxpr(cond, list(cond_jaxpr.in_avals) + tangent_avals)
  const_tangents = [ad.instantiate(t) for t, d in zip(tangents[cond_nconsts:nc],
                                                      diff_consts) if d]
  carry_tangents = [ad.instantiate(t) if type(t) is not ad.Zero else _zeros(
      ad.tangent_aval(a)) for t, a, d in zip(tangents[nc:], carry_avals, diff_carry) if d]
  outs = while_p.bind(*primals[:cond_nconsts], *primals[cond_nconsts:nc], *const_tangents,
                      *primals[nc:], *carry_tangents, cond_jaxpr=new_cond,
                      body_jaxpr=new_body, cond_nconsts=cond_nconsts,
                      body_nconsts=body_nconsts + n_tc)
  it = iter(outs[n_carry:])
  return outs[:n_carry], [next(it) if d else ad.Zero(ad.tangent_aval(a))
                          for a, d in zip(carry_avals, diff_carry)]


def _while_partial_eval(trace, args, unknowns, params):
  """JAX's rule: with the condition known, the carries whose updates need nothing unknown
  come from a loop over the known part of the body, and the others from the whole loop,
  staged (it recomputes the known part): ``jax.linearize`` works, transposing raises."""
  cond_jaxpr, body_jaxpr = params["cond_jaxpr"], params["body_jaxpr"]
  cn, bn = params["cond_nconsts"], params["body_nconsts"]
  cond_uk, body_uk = list(unknowns[:cn]), list(unknowns[cn:cn + bn])
  carry_uk = list(unknowns[cn + bn:])
  while True:  # a carry becomes unknown if its update depends on anything unknown
    out_uk = pe.partial_eval_jaxpr(body_jaxpr, body_uk + carry_uk, instantiate=carry_uk)[2]
    new_carry_uk = [a or b for a, b in zip(carry_uk, out_uk)]
    if new_carry_uk == carry_uk:
      break
    carry_uk = new_carry_uk
  cond_known, _, pred_uk, _ = pe.partial_eval_jaxpr(cond_jaxpr, cond_uk + carry_uk)
  if pred_uk[0] or all(carry_uk):
    return trace.bind_unknown(while_p, *args, **params)
  body_known = pe.partial_eval_jaxpr(body_jaxpr, body_uk + carry_uk, instantiate=carry_uk)[0]
  known = lambda xs, uk: [x for x, u in zip(xs, uk) if not u]
  known_outs = trace.bind_known(
      while_p, *known(args[:cn], cond_uk), *known(args[cn:cn + bn], body_uk),
      *known(args[cn + bn:], carry_uk),
      cond_jaxpr=_with_out_avals(cond_known, cond_jaxpr.out_avals),
      body_jaxpr=_with_out_avals(body_known, known(body_jaxpr.out_avals, carry_uk)),
      cond_nconsts=cn - sum(cond_uk), body_nconsts=bn - sum(body_uk))
  unknown_outs = trace.bind_unknown(while_p, *args, **params)
  k_it = iter(known_outs)
  return [u_out if u else next(k_it) for u_out, u in zip(unknown_outs, carry_uk)]


def _while_transpose(cts, *args, **params):
  raise ValueError("Reverse-mode differentiation does not work for lax.while_loop or "
                   "lax.fori_loop with dynamic start/stop values. Try using lax.scan, or "
                   "using fori_loop with static start/stop.")


ad.jvp_rules[while_p] = _while_jvp
pe.partial_eval_rules[while_p] = _while_partial_eval
ad.transpose_rules[while_p] = _while_transpose


def _concrete_int(x):
  if isinstance(x, Tracer):
    value = x.to_concrete_value()
    return None if value is None else operator.index(np.asarray(value).item())
  return operator.index(np.asarray(x).item())


@traceback_util.api_boundary
def fori_loop(lower, upper, body_fun, init_val, *, unroll=None):
  """``for i in range(lower, upper): val = body_fun(i, val)``.

  With concrete bounds it is a ``scan`` (so reverse-mode differentiation works), under
  ``jax.disable_jit`` a Python loop whose index is a Python int; with traced bounds a
  ``while_loop``.
  """
  for bound in (lower, upper):
    kind = np.dtype(dtypes.dtype(bound)).kind
    if kind not in "iu":
      raise TypeError(f"lower and upper arguments to fori_loop must have equal types (and "
                      f"be integers), got {dtypes.dtype(lower)} and {dtypes.dtype(upper)}. "
                      "Use Python ints or integer arrays for the loop bounds.")
  lo, hi = _concrete_int(lower), _concrete_int(upper)
  index_dtype = dtypes.canonicalize_dtype(dtypes.result_type(lower, upper))
  if lo is not None and hi is not None and config.jax_disable_jit:
    val = init_val
    for i in range(lo, hi):
      val = body_fun(i, val)
    return val
  if lo is not None and hi is not None:
    # (the carry's name in a type error is JAX's: loop_carry)
    def step(loop_carry, _):
      i, val = loop_carry
      return (ew.add(i, Array(np.ones((), index_dtype), True)), body_fun(i, val)), None
    i0 = Array(np.asarray(lo, index_dtype), dtypes.is_weakly_typed(lower) and
               dtypes.is_weakly_typed(upper))
    (_, out), _ = scan(step, (i0, init_val), None, length=max(hi - lo, 0),
                       unroll=unroll or 1)
    return out

  def cond_fun(carry):
    return ew.lt(carry[0], carry[1])

  def body(loop_carry):
    i, hi_, val = loop_carry
    return (ew.add(i, Array(np.ones((), i.dtype), True)), hi_, body_fun(i, val))
  lower_, upper_ = (_as_operand(x) for x in (lower, upper))
  lower_ = ew._convert_element_type(lower_, index_dtype, lower_.weak_type)
  upper_ = ew._convert_element_type(upper_, index_dtype, upper_.weak_type)
  return while_loop(cond_fun, body, (lower_, upper_, init_val))[2]


# ----------------------------------------------------------------------------- scan

scan_p = Primitive("scan")
scan_p.multiple_results = True


@scan_p.def_abstract_eval
def _scan_abstract_eval(*args, jaxpr, length, reverse, num_consts, num_carry, unroll,
                        linear):
  carry_avals = jaxpr.out_avals[:num_carry]
  ys_avals = [ShapedArray((length,) + a.shape, a.dtype, a.weak_type,
                          spec=a.spec and (None,) + a.spec, mesh=a.mesh)
              for a in jaxpr.out_avals[num_carry:]]
  return list(carry_avals) + ys_avals


core.hidden_params[scan_p] = lambda k, v, params: k == "linear"


def _unroll_count(unroll, length) -> int:
  # JAX: unroll=True unrolls the whole loop, False is no unrolling.
  if isinstance(unroll, bool):
    return max(length, 1) if unroll else 1
  return int(unroll)


@traceback_util.api_boundary
def scan(f, init, xs=None, length=None, reverse=False, unroll=1, _split_transpose=False):
  """Loop ``carry, y = f(carry, x)`` over the leading axis of ``xs``; returns
  ``(final carry, stacked ys)``.

  The body is traced once, so compile time does not grow with the trip count; under
  ``jax.disable_jit`` it runs as a Python loop over the slices of ``xs``, as in JAX.
  """
  if config.jax_disable_jit:
    return _scan_in_python(f, init, xs, length, reverse)
  try:
    return _scan(ref_state.probing(f), init, xs, length, reverse, unroll)
  except ref_state.UsesRefs as e:
    refs = e.refs
  # the body wrote to outside refs: their values join the carry

  def body(carry, x):
    out, vals = ref_state.run_with(refs, carry[1], f, carry[0], x)
    if not (isinstance(out, tuple) and len(out) == 2):
      return out   # (scan's own error)
    return (out[0], vals), out[1]
  (out, vals), ys = scan(body, (init, ref_state.values_of(refs)), xs, length, reverse,
                         unroll)
  ref_state.store_all(refs, vals)
  return out, ys


def _scan_length(x_leaves, length) -> int:
  """The trip count of a scan over ``x_leaves`` (Arrays or tracers) given ``length``."""
  lengths = {x.shape[0] if x.shape else None for x in x_leaves}
  if None in lengths:
    raise ValueError("scan got value with no leading axis to scan over: "
                     + ", ".join(str(core.get_aval(x).str_short()) for x in x_leaves
                                 if not x.shape))
  _checked_xs(_avals_of(x_leaves))
  if length is not None:
    length = operator.index(length)
    if lengths and lengths != {length}:
      raise ValueError(f"scan got `length` argument of {length} which disagrees with "
                       f"leading axis sizes {sorted(lengths)}.")
  elif len(lengths) > 1:
    raise ValueError("scan got values with different leading axis sizes: "
                     + ", ".join(str(s) for s in sorted(lengths)) + ".")
  elif not lengths:
    raise ValueError("scan got no values to scan over and `length` not provided.")
  else:
    length = lengths.pop()
  return length


def _scan_in_python(f, init, xs, length, reverse):
  """``scan`` as a Python loop over the slices of ``xs`` (``jax.disable_jit``): the carry
  is what ``f`` returns, the ys are stacked, as in JAX."""
  x_leaves, x_tree = tree.tree_flatten(xs)
  x_leaves = [_as_operand(x) for x in x_leaves]
  length = _scan_length(x_leaves, length)
  if length == 0:
    raise ValueError("zero-length scan is not supported in disable_jit() mode because the "
                     "output type is unknown.")
  carry, ys = init, []
  steps = range(length)
  for i in reversed(steps) if reverse else steps:
    x = [shapes.squeeze(shapes.slice_in_dim(leaf, i, i + 1), (0,)) for leaf in x_leaves]
    carry, y = f(carry, tree.tree_unflatten(x_tree, x))
    ys.append(y)
  if reverse:
    ys.reverse()
  stack = lambda *ys: shapes.concatenate([shapes.expand_dims(y, (0,)) for y in ys], 0)
  return carry, tree.tree_map(stack, *ys)


def _scan(f, init, xs, length, reverse, unroll):
  x_leaves, x_tree = tree.tree_flatten(xs)
  ref_state.check_no_refs(x_leaves, "scan's xs")
  ref_state.check_no_refs(tree.tree_leaves(init), "scan's carry")
  x_leaves = [_as_operand(x) for x in x_leaves]
  length = _scan_length(x_leaves, length)
  x_avals = [_scanned(a) for a in _avals_of(x_leaves)]
  given, carry_tree = tree.tree_flatten(init)
  carry_leaves = converted = [_as_operand(c) for c in given]
  carry_avals = _avals_of(carry_leaves)

  def trace(carry_avals):
    store = []

    def body(*args):
      carry = tree.tree_unflatten(carry_tree, args[:len(carry_avals)])
      x = tree.tree_unflatten(x_tree, args[len(carry_avals):])
      out = f(carry, x)
      if not (isinstance(out, tuple) and len(out) == 2):
        raise TypeError("scan body output must be a pair, got "
                        f"{type(out).__name__}: the body returns (carry, y).")
      new_carry, y = out
      c_leaves, c_tree = tree.tree_flatten(new_carry)
      y_leaves, y_tree = tree.tree_flatten(y)
      for leaf in c_leaves + y_leaves:
        _check_not_a_ref(leaf, "scan body")
      store.append((c_tree, y_tree))
      return [_as_operand(c) for c in c_leaves] + [_as_operand(v) for v in y_leaves]
    signature = ("scan body", carry_tree, x_tree, tuple(carry_avals), tuple(x_avals))
    return _trace_cached(f, signature, lambda: (
        trace_to_jaxpr(body, carry_avals + x_avals), store[-1]))
  jaxpr, (c_tree, y_tree) = trace(carry_avals)
  promoted = _promote_weak_carry(carry_leaves, jaxpr.out_avals[:len(carry_leaves)]) \
      if c_tree == carry_tree else None
  if promoted is not None and _same_dtypes(carry_leaves, promoted):
    carry_leaves, carry_avals = promoted, _avals_of(promoted)
    jaxpr = _with_in_avals(jaxpr, carry_avals + x_avals)
  elif promoted is not None:
    carry_leaves, carry_avals = promoted, _avals_of(promoted)
    jaxpr, (c_tree, y_tree) = trace(carry_avals)
  paths = [tree.keystr(p) for p, _ in tree.tree_flatten_with_path(init)[0]]
  _check_carry("scan body", f, carry_tree, c_tree, carry_avals,
               jaxpr.out_avals[:len(carry_avals)], paths)
  jaxpr = _with_out_avals(jaxpr, carry_avals + list(jaxpr.out_avals[len(carry_avals):]))
  closed, consts = _closure_convert(jaxpr)
  # the value passed in for each carry (promoted where the body changed its weak type)
  given = [g if c is a else c for g, a, c in zip(given, converted, carry_leaves)]
  carry, ys = _bind_scan(closed, consts, carry_leaves, given, x_leaves, length=length,
                         reverse=bool(reverse), unroll=_unroll_count(unroll, length))
  return tree.tree_unflatten(carry_tree, carry), tree.tree_unflatten(y_tree, ys)


def _checked_xs(avals):
  """``avals`` (of scan's ``xs``), after JAX's check that none is split over a mesh axis
  along the scanned dimension: each step would need another device's slice."""
  if any(a.spec is not None and a.spec[0] is not None for a in avals):
    explicit = getattr(mesh_context.context.abstract, "_any_axis_explicit", False)
    specs = [PartitionSpec(*(a.spec or ((None,) * a.ndim if explicit else ())))
             for a in avals]
    raise ValueError("0th dimension of all xs should be replicated. Got "
                     + ", ".join(str(s) for s in specs))
  return avals


def _scanned(a):
  """The type of one step's slice of ``xs`` of type ``a``: its split stays on the
  dimensions it keeps, as in JAX."""
  return ShapedArray(a.shape[1:], a.dtype, a.weak_type,
                     spec=a.spec and a.spec[1:], mesh=a.mesh)


def _bind_scan(closed, consts, carry, given, xs, **params):
  """``scan_p.bind`` with JAX's forwarding: a carry the body passes through unchanged is
  read-only, so it becomes a const and the loop returns the value passed in (a Python
  float stays one; under vmap or jvp it is a constant of the loop), and a ``y`` that is
  its ``x`` unchanged is ``xs`` itself. Returns (carry outputs, ys)."""
  nc, ncar, nx = len(consts), len(carry), len(xs)
  n_ys = len(closed.out_avals) - ncar
  carry_fwd = pe.jaxpr_forwarding(closed.jaxpr)[:ncar]
  move = [f == nc + i for i, f in enumerate(carry_fwd)]
  closed = pe.prune_outputs(closed, [not m for m in move] + [True] * n_ys)
  closed = pe.move_binders_to_front(closed, [False] * nc + move + [False] * nx)
  consts = [c for c, m in zip(carry, move) if m] + list(consts)
  kept = [c for c, m in zip(carry, move) if not m]
  first_x = len(consts) + len(kept)
  ys_fwd = [f - first_x if f is not None and f >= first_x else None
            for f in pe.jaxpr_forwarding(closed.jaxpr)[len(kept):]]
  closed = pe.prune_outputs(closed, [True] * len(kept) + [f is None for f in ys_fwd])
  args = [*consts, *kept, *xs]
  outs = scan_p.bind(*args, jaxpr=closed, num_consts=len(consts), num_carry=len(kept),
                     linear=(False,) * len(args), **params)
  carry_out, ys_out = iter(outs[:len(kept)]), iter(outs[len(kept):])
  ys = [next(ys_out) if f is None else xs[f] for f in ys_fwd]
  return [g if m else next(carry_out) for g, m in zip(given, move)], ys


def _scan_jvp(primals, tangents, *, jaxpr, length, reverse, num_consts, num_carry, unroll,
              linear):
  avals = jaxpr.in_avals
  nc, ncar = num_consts, num_carry
  diff = [type(t) is not ad.Zero and _inexact(a) for a, t in zip(avals, tangents)]
  d_consts, d_xs = diff[:nc], diff[nc + ncar:]
  d_carry, nz = _nonzero_carries(jaxpr, d_consts, diff[nc:nc + ncar], d_xs)
  diff = d_consts + d_carry + d_xs
  ys_nz = [z and _inexact(a) for z, a in zip(nz[ncar:], jaxpr.out_avals[ncar:])]
  if not any(d_carry) and not any(ys_nz):
    outs = scan_p.bind(*primals, jaxpr=jaxpr, length=length, reverse=reverse,
                       num_consts=nc, num_carry=ncar, unroll=unroll, linear=linear)
    return outs, [ad.Zero(ad.tangent_aval(core.get_aval(o))) for o in outs]
  jvp, _ = _jvp_nonzeros(jaxpr, diff, d_carry + ys_nz)
  n_in = len(avals)
  n_tc, n_tcar, n_tx = sum(d_consts), sum(d_carry), sum(d_xs)

  # scan layout: consts (primal, tangent), carry (primal, tangent), xs (primal, tangent)
  def body(*args):
    c, tc = args[:nc], args[nc:nc + n_tc]
    k = nc + n_tc
    car, tcar = args[k:k + ncar], args[k + ncar:k + ncar + n_tcar]
    k += ncar + n_tcar
    x, tx = args[k:k + n_in - nc - ncar], args[k + n_in - nc - ncar:]
    outs = core.eval_jaxpr(jvp.jaxpr, jvp.consts, *c, *car, *x, *tc, *tcar, *tx)
    n_out = len(jaxpr.out_avals)
    prim, tans = outs[:n_out], outs[n_out:]
    return prim[:ncar] + tans[:n_tcar] + prim[ncar:] + tans[n_tcar:]
  t_avals = lambda avs, mask: [ad.tangent_aval(a) for a, d in zip(avs, mask) if d]
  body_avals = (list(avals[:nc]) + t_avals(avals[:nc], d_consts)
                + list(avals[nc:nc + ncar]) + t_avals(avals[nc:nc + ncar], d_carry)
                + list(avals[nc + ncar:]) + t_avals(avals[nc + ncar:], d_xs))
  new_jaxpr = trace_to_jaxpr(body, body_avals)
  inst = lambda ts, ps, mask: [ad.instantiate(t) if type(t) is not ad.Zero else
                               _zeros(ad.tangent_aval(core.get_aval(p)))
                               for t, p, d in zip(ts, ps, mask) if d]
  args = (list(primals[:nc]) + inst(tangents[:nc], primals[:nc], d_consts)
          + list(primals[nc:nc + ncar]) + inst(tangents[nc:nc + ncar],
                                               primals[nc:nc + ncar], d_carry)
          + list(primals[nc + ncar:]) + inst(tangents[nc + ncar:], primals[nc + ncar:], d_xs))
  outs = scan_p.bind(*args, jaxpr=new_jaxpr, length=length, reverse=reverse,
                     num_consts=nc + n_tc, num_carry=ncar + n_tcar, unroll=unroll,
                     linear=(False,) * len(args))
  carry, t_carry = outs[:ncar], iter(outs[ncar:ncar + n_tcar])
  n_ys = len(jaxpr.out_avals) - ncar
  ys, t_ys = outs[ncar + n_tcar:ncar + n_tcar + n_ys], iter(outs[ncar + n_tcar + n_ys:])
  carry_t = [next(t_carry) if d else ad.Zero(ad.tangent_aval(a))
             for d, a in zip(d_carry, jaxpr.out_avals[:ncar])]
  ys_t = [next(t_ys) if z else ad.Zero(ad.tangent_aval(core.get_aval(y)))
          for z, y in zip(ys_nz, ys)]
  return list(carry) + list(ys), carry_t + ys_t


def _scan_partial_eval(trace, args, unknowns, params):
  jaxpr, nc, ncar = params["jaxpr"], params["num_consts"], params["num_carry"]
  length, reverse = params["length"], params["reverse"]
  const_uk, carry_uk, xs_uk = (list(unknowns[:nc]), list(unknowns[nc:nc + ncar]),
                               list(unknowns[nc + ncar:]))
  n_ys = len(jaxpr.out_avals) - ncar
  while True:  # a carry becomes unknown if its update depends on anything unknown
    out_uk = pe.partial_eval_jaxpr(jaxpr, const_uk + carry_uk + xs_uk,
                                   instantiate=carry_uk + [False] * n_ys)[2]
    new_carry_uk = [a or b for a, b in zip(carry_uk, out_uk[:ncar])]
    if new_carry_uk == carry_uk:
      break
    carry_uk = new_carry_uk
  known, unknown, out_uk, n_res = pe.partial_eval_jaxpr(
      jaxpr, const_uk + carry_uk + xs_uk, instantiate=carry_uk + [False] * n_ys)
  consts_k = [x for x, u in zip(args[:nc], const_uk) if not u]
  carry_k = [x for x, u in zip(args[nc:nc + ncar], carry_uk) if not u]
  xs_k = [x for x, u in zip(args[nc + ncar:], xs_uk) if not u]
  n_carry_k, n_ck = len(carry_k), len(consts_k)
  # a residual that is a known const or x unchanged is passed on as it is, not stacked
  # per iteration (JAX's forwarding of residuals): a const becomes a const of the linear
  # scan, an x its xs
  res_fwd = pe.jaxpr_forwarding(known.jaxpr)[len(known.out_avals) - n_res:]
  res_const = [f if f is not None and f < n_ck else None for f in res_fwd]
  res_xs = [f - n_ck - n_carry_k if f is not None and f >= n_ck + n_carry_k else None
            for f in res_fwd]
  stacked = [c is None and x is None for c, x in zip(res_const, res_xs)]
  known = pe.prune_outputs(known, [True] * (len(known.out_avals) - n_res) + stacked)
  known, known_consts = _without_unread_consts(known, consts_k)
  known_outs = trace.bind_known(
      scan_p, *known_consts, *carry_k, *xs_k, jaxpr=known, length=length, reverse=reverse,
      num_consts=len(known_consts), num_carry=n_carry_k, unroll=params["unroll"],
      linear=(False,) * (len(known_consts) + n_carry_k + len(xs_k)))
  n_ys_k = len(known.out_avals) - n_carry_k - sum(stacked)
  carry_out_k = known_outs[:n_carry_k]
  ys_k = known_outs[n_carry_k:n_carry_k + n_ys_k]
  stacked_res = iter(known_outs[n_carry_k + n_ys_k:])
  residuals = [consts_k[c] if c is not None else xs_k[x] if x is not None
               else next(stacked_res) for c, x in zip(res_const, res_xs)]
  is_const = [c is not None for c in res_const]
  # unknown body: (const residuals, consts_u, carry_u, residual xs, xs_u) -> (carry_u, ys_u)
  n_cu, n_caru = sum(const_uk), sum(carry_uk)
  n_rc = sum(is_const)
  n_rx = n_res - n_rc
  u_avals = unknown.in_avals[n_res:]
  res_avals = unknown.in_avals[:n_res]

  def body(*a):
    rc, a = a[:n_rc], a[n_rc:]
    consts_u, carry_u = a[:n_cu], a[n_cu:n_cu + n_caru]
    rx, xs_u = a[n_cu + n_caru:n_cu + n_caru + n_rx], a[n_cu + n_caru + n_rx:]
    rc, rx = iter(rc), iter(rx)
    res = [next(rc) if c else next(rx) for c in is_const]
    return core.eval_jaxpr(unknown.jaxpr, unknown.consts, *res, *consts_u, *carry_u, *xs_u)
  split = lambda xs: ([x for x, c in zip(xs, is_const) if c],
                      [x for x, c in zip(xs, is_const) if not c])
  (rc_avals, rx_avals), (rc_vals, rx_vals) = split(res_avals), split(residuals)
  unknown_body = trace_to_jaxpr(body, rc_avals + list(u_avals[:n_cu + n_caru]) + rx_avals
                                + list(u_avals[n_cu + n_caru:]))
  consts_u = [x for x, u in zip(args[:nc], const_uk) if u]
  carry_u = [x for x, u in zip(args[nc:nc + ncar], carry_uk) if u]
  xs_u = [x for x, u in zip(args[nc + ncar:], xs_uk) if u]
  unknown_body, consts_u = _without_unread_consts(unknown_body, rc_vals + consts_u)
  unknown_outs = trace.bind_unknown(
      scan_p, *consts_u, *carry_u, *rx_vals, *xs_u, jaxpr=unknown_body, length=length,
      reverse=reverse, num_consts=len(consts_u), num_carry=n_caru, unroll=params["unroll"],
      linear=(False,) * (len(consts_u) + n_caru + len(rx_vals) + len(xs_u)))
  carry_out_u, ys_u = unknown_outs[:n_caru], unknown_outs[n_caru:]
  ck, cu = iter(carry_out_k), iter(carry_out_u)
  yk, yu = iter(ys_k), iter(ys_u)
  carry_out = [next(cu) if u else next(ck) for u in carry_uk]
  ys_out = [next(yu) if u else next(yk) for u in out_uk[ncar:]]
  return carry_out + ys_out


def _without_unread_consts(body, consts):
  """``body`` and ``consts`` (its leading inputs) without the consts it never reads, as
  JAX's scan drops them when it differentiates (a carry forwarded into a const, or its
  tangent, that the split bodies no longer use)."""
  n = len(consts)
  unread = [not r for r in _reads_inputs(body)[:n]]
  if not any(unread):
    return body, consts
  body = pe.drop_inputs(_without_dead_code(body),
                        unread + [False] * (len(body.in_avals) - n))
  return body, [c for c, u in zip(consts, unread) if not u]


def _scan_transpose(cts, *args, jaxpr, length, reverse, num_consts, num_carry, unroll,
                    linear):
  nc, ncar = num_consts, num_carry
  consts, carry, xs = args[:nc], args[nc:nc + ncar], args[nc + ncar:]
  const_lin = [ad.is_undefined(c) for c in consts]
  xs_lin = [ad.is_undefined(x) for x in xs]
  # Every carry of a linear scan is a tangent; one that starts from a known value (an
  # instantiated zero) is still linear in the body, and its cotangent is simply dropped.
  carry_defined = [not ad.is_undefined(c) for c in carry]
  ct_carry = [ad.instantiate(c) for c in cts[:ncar]]
  ct_ys = [ad.instantiate(c) for c in cts[ncar:]]
  body_avals = jaxpr.in_avals
  nl_consts = [c for c, lin in zip(consts, const_lin) if not lin]
  nl_xs = [x for x, lin in zip(xs, xs_lin) if not lin]
  lin_const_avals = [a for a, lin in zip(body_avals[:nc], const_lin) if lin]
  carry_avals = list(body_avals[nc:nc + ncar])
  ys_avals = list(jaxpr.out_avals[ncar:])
  nl_x_avals = [a for a, lin in zip(body_avals[nc + ncar:], xs_lin) if not lin]
  linear_mask = const_lin + [True] * ncar + xs_lin
  body_t = ad.transpose_jaxpr(jaxpr, linear_mask)
  n_nlc, n_lc = len(nl_consts), len(lin_const_avals)

  # transposed body: consts = non-linear consts; carry = (const ct acc, carry ct);
  # xs = (non-linear xs, ys cts) -> carry', linear xs cts
  def body(*a):
    nlc = a[:n_nlc]
    acc, ctc = a[n_nlc:n_nlc + n_lc], a[n_nlc + n_lc:n_nlc + n_lc + ncar]
    rest = a[n_nlc + n_lc + ncar:]
    nlx, cty = rest[:len(nl_xs)], rest[len(nl_xs):]
    outs = core.eval_jaxpr(body_t.jaxpr, body_t.consts, *nlc, *nlx, *ctc, *cty)
    ct_consts, ct_carry_in, ct_xs = outs[:n_lc], outs[n_lc:n_lc + ncar], outs[n_lc + ncar:]
    new_acc = [ad.add_tangents(x, y) for x, y in zip(acc, ct_consts)]
    return new_acc + list(ct_carry_in) + list(ct_xs)
  t_jaxpr = trace_to_jaxpr(body, [a for a, lin in zip(body_avals[:nc], const_lin)
                                  if not lin] + lin_const_avals + carry_avals
                           + nl_x_avals + ys_avals)
  init_acc = [_zeros(a) for a in lin_const_avals]
  outs = scan_p.bind(*nl_consts, *init_acc, *ct_carry, *nl_xs, *ct_ys, jaxpr=t_jaxpr,
                     length=length, reverse=not reverse, num_consts=n_nlc,
                     num_carry=n_lc + ncar, unroll=unroll,
                     linear=(False,) * (n_nlc + n_lc + ncar + len(nl_xs) + len(ct_ys)))
  ct_consts, ct_init = iter(outs[:n_lc]), outs[n_lc:n_lc + ncar]
  ct_xs = iter(outs[n_lc + ncar:])
  return ([next(ct_consts) if lin else None for lin in const_lin]
          + [None if defined else ct for ct, defined in zip(ct_init, carry_defined)]
          + [next(ct_xs) if lin else None for lin in xs_lin])


ad.jvp_rules[scan_p] = _scan_jvp
ad.transpose_rules[scan_p] = _scan_transpose
pe.partial_eval_rules[scan_p] = _scan_partial_eval


@traceback_util.api_boundary
def map(f, xs, *, batch_size=None):
  """``f`` applied to each slice of ``xs`` along its leading axis (a ``scan``)."""
  if batch_size is not None:
    leaves, treedef = tree.tree_flatten(xs)
    n = leaves[0].shape[0]
    full = n - n % batch_size
    batched = tree.tree_unflatten(treedef, [
        shapes.reshape(shapes.slice_in_dim(x, 0, full), (full // batch_size, batch_size)
                       + x.shape[1:]) for x in leaves])
    _, ys = scan(lambda _, x: (None, vmap_axis(f, x, batch_size)), None, batched)
    ys = tree.tree_map(lambda y: shapes.reshape(y, (full,) + y.shape[2:]), ys)
    if full < n:
      rest = tree.tree_unflatten(treedef, [shapes.slice_in_dim(x, full, n) for x in leaves])
      tail = map(f, rest)
      ys = tree.tree_map(lambda a, b: shapes.concatenate([a, b], 0), ys, tail)
    return ys
  _, ys = scan(lambda _, x: (None, f(x)), None, xs)
  return ys


# ----------------------------------------------------------------------------- batching
from jaxlite._src.transforms import batching  # noqa: E402


def vmap_axis(f, x, size, in_axis=0, out_axis=0):
  """``vmap(f, in_axes=in_axis, out_axes=out_axis)(x)``: ``f`` mapped over axis
  ``in_axis`` (non-negative) of every leaf of ``x``, each output's batch axis put at
  ``out_axis`` as ``vmap`` puts it. Modules below the ``vmap`` API (lax, the libraries,
  the backends) batch through this."""
  leaves, treedef = tree.tree_flatten(x)
  out_trees = []

  def flat(*xs):
    out_leaves, out_tree = tree.tree_flatten(f(tree.tree_unflatten(treedef, xs)))
    out_trees.append(out_tree)
    return [_as_operand(o) for o in out_leaves]
  outs, dims = batching.vmap_flat(flat, leaves, [in_axis] * len(leaves), size)
  return tree.tree_unflatten(out_trees[-1], [_to_out_axis(o, d, out_axis, size)
                                             for o, d in zip(outs, dims)])


def _to_out_axis(x, src, dst, size):
  if src == dst:
    return x
  ndim = core.get_aval(x).ndim
  if src is None:
    return batching.broadcast(x, size, dst % (ndim + 1))
  return batching.moveaxis(x, src, dst % ndim)


def _at_front(vals, dims):
  """Batched values moved to axis 0; their in_dims become 0."""
  moved = [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(vals, dims)]
  return moved, [None if d is None else 0 for d in dims]


def _cond_batch(axis_data, vals, dims, *, branches):
  (index, *ops), (index_dim, *op_dims) = vals, dims
  n_out = len(branches[0].out_avals)
  if index_dim is None:
    # an output is batched if some branch batches it; the others stay shared, as in JAX
    # (libraries check that a loop counter computed in a cond is not batched)
    ops, op_dims = _at_front(ops, op_dims)
    out_bat = [False] * n_out
    for b in branches:
      dims_b = batching.batch_jaxpr(b, axis_data, op_dims)[1]
      out_bat = [u or d is not None for u, d in zip(out_bat, dims_b)]
    out_dims = [0 if u else None for u in out_bat]
    batched = [batching.batch_jaxpr(b, axis_data, op_dims, out_dims)[0] for b in branches]
    return cond_p.bind(index, *ops, branches=tuple(batched)), out_dims
  # A batched predicate picks per example: run every branch, then select (as JAX does).
  index = batching.bdim_at_front(index, index_dim, axis_data.size)
  ops = [batching.bdim_at_front(x, d, axis_data.size) for x, d in zip(ops, op_dims)]
  batched = [batching.batch_jaxpr(b, axis_data, [0] * len(ops), [0] * n_out)[0]
             for b in branches]
  results = [core.eval_jaxpr(b.jaxpr, b.consts, *_own_examples(index, i, ops))
             for i, b in enumerate(batched)]
  outs = []
  for k in range(n_out):
    cases = [r[k] for r in results]
    which = shapes.broadcast_in_dim(index, core.get_aval(cases[0]).shape, (0,))
    outs.append(ew.select_n(which, *cases))
  return outs, [0] * n_out


def _own_examples(index, i, ops):
  """``ops`` with gradients cut where branch ``i`` is not taken, so that a branch's NaN
  or infinite slope at examples it does not answer cannot reach the gradient (JAX's
  safeguard, jax#1052)."""
  taken = ew.eq(index, ew._const(index, i))
  return [ew.select(shapes.broadcast_in_dim(taken, core.get_aval(x).shape, (0,)), x,
                    stop_gradient(x)) for x in ops]


def _carry_batched(body, axis_data, in_dims_of, carry_bat, n_carry):
  """Fixed point: a carry is batched if its initial value or its update is. Returns the
  carries' batching and whether each of the body's other outputs is batched."""
  while True:
    _, out_dims = batching.batch_jaxpr(body, axis_data, in_dims_of(carry_bat))
    new = [b or d is not None for b, d in zip(carry_bat, out_dims[:n_carry])]
    if new == carry_bat:
      return carry_bat, [d is not None for d in out_dims[n_carry:]]
    carry_bat = new


def _while_batch(axis_data, vals, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
  size = axis_data.size
  vals, dims = _at_front(vals, dims)
  nc, nb = cond_nconsts, body_nconsts
  cconsts, bconsts, carry = vals[:nc], vals[nc:nc + nb], vals[nc + nb:]
  cdims, bdims, carry_dims = dims[:nc], dims[nc:nc + nb], dims[nc + nb:]
  n_carry = len(carry)
  carry_bat, _ = _carry_batched(body_jaxpr, axis_data,
                                lambda bat: bdims + [0 if b else None for b in bat],
                                [d is not None for d in carry_dims], n_carry)
  _, (pred_dim,) = batching.batch_jaxpr(cond_jaxpr, axis_data,
                                        cdims + [0 if b else None for b in carry_bat])
  if pred_dim is not None:
    carry_bat = [True] * n_carry   # lanes finish at different times: every carry is masked
  carry_in_dims = [0 if b else None for b in carry_bat]
  carry = [batching.bdim_at_front(x, d, size) if b and d is None else x
           for x, d, b in zip(carry, carry_dims, carry_bat)]
  cond_b, _ = batching.batch_jaxpr(cond_jaxpr, axis_data, cdims + carry_in_dims,
                                   [0 if pred_dim is not None else None])
  body_b, _ = batching.batch_jaxpr(body_jaxpr, axis_data, bdims + carry_in_dims,
                                   carry_in_dims)
  if pred_dim is None:
    outs = while_p.bind(*cconsts, *bconsts, *carry, cond_jaxpr=cond_b, body_jaxpr=body_b,
                        cond_nconsts=nc, body_nconsts=nb)
    return outs, carry_in_dims
  # Batched predicate: loop while any lane runs; finished lanes keep their values.

  def any_running(*args):
    pred, = core.eval_jaxpr(cond_b.jaxpr, cond_b.consts, *args)
    return [reductions.reduce_or(pred, (0,))]

  def masked_body(*args):
    cc, bc, c = args[:nc], args[nc:nc + nb], args[nc + nb:]
    pred, = core.eval_jaxpr(cond_b.jaxpr, cond_b.consts, *cc, *c)
    new = core.eval_jaxpr(body_b.jaxpr, body_b.consts, *bc, *c)
    return [ew.select_n(shapes.broadcast_in_dim(pred, core.get_aval(o).shape, (0,)), o, n)
            for o, n in zip(c, new)]
  carry_avals = _avals_of(carry)
  new_cond = trace_to_jaxpr(any_running, list(cond_b.in_avals))
  new_body = trace_to_jaxpr(masked_body, list(cond_b.in_avals[:nc])
                            + list(body_b.in_avals[:nb]) + carry_avals)
  outs = while_p.bind(*cconsts, *cconsts, *bconsts, *carry, cond_jaxpr=new_cond,
                      body_jaxpr=new_body, cond_nconsts=nc, body_nconsts=nc + nb)
  return outs, [0] * n_carry


def _scan_batch(axis_data, vals, dims, *, jaxpr, length, reverse, num_consts, num_carry,
                unroll, linear):
  size = axis_data.size
  nc, ncar = num_consts, num_carry
  consts, cdims = _at_front(vals[:nc], dims[:nc])
  carry, carry_dims = vals[nc:nc + ncar], dims[nc:nc + ncar]
  # scanned values keep the loop axis first; their batch axis goes to 1
  xs = [x if d is None else batching.moveaxis(x, d, 1) for x, d in
        zip(vals[nc + ncar:], dims[nc + ncar:])]
  x_dims = [None if d is None else 0 for d in dims[nc + ncar:]]
  # ys the body computes from shared values only stay shared, as in JAX
  carry_bat, ys_bat = _carry_batched(
      jaxpr, axis_data, lambda bat: cdims + [0 if b else None for b in bat] + x_dims,
      [d is not None for d in carry_dims], ncar)
  carry_in_dims = [0 if b else None for b in carry_bat]
  carry = [batching.bdim_at_front(x, d, size) if b else x
           for x, d, b in zip(carry, carry_dims, carry_bat)]
  ys_dims = [0 if b else None for b in ys_bat]
  body, _ = batching.batch_jaxpr(jaxpr, axis_data, cdims + carry_in_dims + x_dims,
                                 carry_in_dims + ys_dims)
  outs = scan_p.bind(*consts, *carry, *xs, jaxpr=body, length=length, reverse=reverse,
                     num_consts=nc, num_carry=ncar, unroll=unroll,
                     linear=(False,) * (nc + ncar + len(xs)))
  return outs, carry_in_dims + [None if d is None else 1 for d in ys_dims]


batching.axis_batching_rules[cond_p] = _cond_batch
batching.axis_batching_rules[while_p] = _while_batch
batching.axis_batching_rules[scan_p] = _scan_batch


# ----------------------------------------------------------------------------- associative_scan

@traceback_util.api_boundary
def associative_scan(fn, elems, reverse=False, axis=0):
  """Inclusive scan of pytree ``elems`` along ``axis`` with the associative ``fn``, in
  O(log n) parallel steps (Blelloch's even/odd recursion, as ``jax.lax.associative_scan``).

  ``fn(a, b)`` must combine two pytrees of arrays elementwise (batched along ``axis``).
  """
  leaves, treedef = tree.tree_flatten(elems)
  leaves = [_as_operand(x) for x in leaves]
  if not leaves:
    return elems
  ndim = leaves[0].ndim
  axis = shapes._canonical_axis(axis, ndim)
  n = leaves[0].shape[axis]
  if any(x.shape[axis] != n for x in leaves):
    raise ValueError("Array inputs to associative_scan must have the same first dimension. "
                     f"(saw: {[x.shape for x in leaves]})")
  if reverse:
    leaves = [shapes.rev(x, (axis,)) for x in leaves]

  def combine(a, b):
    out = fn(tree.tree_unflatten(treedef, a), tree.tree_unflatten(treedef, b))
    out_leaves, out_tree = tree.tree_flatten(out)
    if out_tree != treedef:
      raise ValueError(f"associative_scan: fn must return the structure of elems "
                       f"{treedef}, got {out_tree}.")
    return [_as_operand(x) for x in out_leaves]

  def part(xs, start, stop=None):
    return [shapes.slice_in_dim(x, start, stop if stop is not None else x.shape[axis], 2, axis)
            for x in xs]

  def interleave(evens, odds):
    out = []
    for e, o in zip(evens, odds):
      zero = Array(np.zeros((), core.get_aval(e).dtype))
      ne, no = e.shape[axis], o.shape[axis]
      total = ne + no
      cfg_e = [(0, 0, 0)] * ndim
      cfg_o = [(0, 0, 0)] * ndim
      cfg_e[axis] = (0, total - (2 * ne - 1), 1)
      cfg_o[axis] = (1, total - 2 * no, 1)
      pe_, po = shapes.pad(e, zero, cfg_e), shapes.pad(o, zero, cfg_o)
      out.append(ew.bitwise_or(pe_, po) if e.dtype == np.bool_ else ew.add(pe_, po))
    return out

  def scan(xs):
    size = xs[0].shape[axis]
    if size < 2:
      return xs
    reduced = combine(part(xs, 0, size - 1), part(xs, 1))
    odds = scan(reduced)
    if size % 2 == 0:
      evens = combine([shapes.slice_in_dim(o, 0, o.shape[axis] - 1, 1, axis) for o in odds],
                      part(xs, 2))
    else:
      evens = combine(odds, part(xs, 2))
    evens = [shapes.concatenate([shapes.slice_in_dim(x, 0, 1, 1, axis), e], axis)
             for x, e in zip(xs, evens)]
    return interleave(evens, odds)

  out = scan(leaves)
  if reverse:
    out = [shapes.rev(x, (axis,)) for x in out]
  return tree.tree_unflatten(treedef, out)
