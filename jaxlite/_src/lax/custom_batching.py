"""``jax.custom_batching``: functions with a vmap rule of their own (``custom_vmap``), and
functions that vmap runs one example at a time (``sequential_vmap``).

A call binds ``custom_vmap_call`` with the function's jaxpr (``call``, its constants
leading) and a flat rule: every interpreter but vmap evaluates ``call``, and vmap calls the
rule on the values below the batch. The JVP of a call is another ``custom_vmap_call``, of
the JVP of ``call`` with the JVP of the rule as its rule, so vmap of jvp differentiates the
rule, as in JAX. Reverse mode is refused, as JAX refuses it (wrap in ``custom_vjp``).
"""
from __future__ import annotations

import functools

from jaxlite._src.base import api_util
from jaxlite._src.base import dtypes
from jaxlite._src.base import tree
from jaxlite._src.core import core
from jaxlite._src.core.core import Primitive
from jaxlite._src.lax import control_flow
from jaxlite._src.lax.base import operand as _as_operand
from jaxlite._src.lax.custom_derivatives import _resolve_args, _trace_closed
from jaxlite._src.transforms import ad
from jaxlite._src.transforms import batching

custom_vmap_call_p = Primitive("custom_vmap_call")
custom_vmap_call_p.multiple_results = True
custom_vmap_call_p.def_abstract_eval(lambda *avals, call, **_: list(call.out_avals))
core.param_order[custom_vmap_call_p] = ("call", "in_tree", "out_tree", "rule")


def custom_vmap_call_impl(*args, call, **_):
  return core.eval_jaxpr(call.jaxpr, call.consts, *args)


custom_vmap_call_p.def_impl(custom_vmap_call_impl)


class custom_vmap:
  """``fun`` with its own rule under ``jax.vmap`` (``jax.custom_batching.custom_vmap``).

  ``def_vmap(rule)`` sets the rule: ``rule(axis_size, in_batched, *args)``, where
  ``in_batched`` holds a pytree of bools per argument (whether that leaf has the batch
  axis, at its front) and the batched arguments have it; it returns ``(out,
  out_batched)``, ``out_batched`` a bool for every output leaf or one for all of them.
  Everywhere else ``fun`` runs as it is.
  """

  def __init__(self, fun):
    functools.update_wrapper(self, fun)
    self.fun = fun
    self.vmap_rule = None

  def def_vmap(self, vmap_rule):
    """Set the batching rule (returned, so this works as a decorator)."""
    self.vmap_rule = vmap_rule
    return vmap_rule

  def __call__(self, *args, **kwargs):
    args = _resolve_args(self.fun, args, kwargs)
    leaves, in_tree = tree.tree_flatten(args)
    leaves = [_as_operand(x) for x in leaves]
    out_trees = []

    def flat_fun(*xs):
      out_leaves, out_tree = tree.tree_flatten(self.fun(*tree.tree_unflatten(in_tree, xs)))
      out_trees.append(out_tree)
      return out_leaves
    call, consts = _trace_closed(flat_fun, [core.get_aval(x) for x in leaves])
    rule = _UserRule(self.vmap_rule, api_util.fun_name(self.fun), in_tree, out_trees[-1],
                     len(consts))
    # (in_tree as JAX prints it: the closed-over constants, then the arguments)
    outs = custom_vmap_call_p.bind(*consts, *leaves, call=call,
                                   in_tree=tree.tree_structure((list(consts), args)),
                                   out_tree=out_trees[-1], rule=rule)
    return tree.tree_unflatten(out_trees[-1], outs)


class _UserRule:
  """The user's rule as the primitive calls it: flat leaves (constants first) in, flat
  outputs and their batched flags out. Printed as the user's function."""

  def __init__(self, rule, name, in_tree, out_tree, num_consts):
    self.rule, self.name = rule, name
    self.in_tree, self.out_tree, self.num_consts = in_tree, out_tree, num_consts

  def __repr__(self):
    return repr(self.rule)

  def __call__(self, axis_size, in_batched, *leaves):
    if self.rule is None:
      raise AttributeError(f"No batching rule defined for custom_vmap function {self.name} "
                           "using def_vmap.")
    if any(in_batched[:self.num_consts]):
      raise ValueError(f"custom_vmap function {self.name} closes over a value that vmap "
                       "batches; pass that value to the function as an argument instead.")
    args = tree.tree_unflatten(self.in_tree, leaves[self.num_consts:])
    batched = tree.tree_unflatten(self.in_tree, in_batched[self.num_consts:])
    out, out_batched = self.rule(axis_size, list(batched), *args)
    out_leaves, out_tree = tree.tree_flatten(out)
    if out_tree != self.out_tree:
      raise ValueError(f"custom_vmap {self.name}: the vmap rule's output structure "
                       f"{out_tree} differs from the function's {self.out_tree}.")
    return out_leaves, _flags(out_batched, out_tree, self.name)


def _flags(out_batched, out_tree, name) -> list:
  """One bool per output leaf, from a bool or a pytree of bools shaped as the output."""
  if isinstance(out_batched, bool):
    return [out_batched] * out_tree.num_leaves
  flags, flags_tree = tree.tree_flatten(out_batched)
  if flags_tree != out_tree or not all(isinstance(f, bool) for f in flags):
    raise ValueError(f"custom_vmap {name}: the vmap rule's out_batched must be a bool or a "
                     f"pytree of bools shaped as its output {out_tree}, got {out_batched!r}.")
  return flags


def _custom_vmap_batcher(axis_data, vals, dims, *, call, in_tree, out_tree, rule):
  size = axis_data.size
  vals = [x if d is None else batching.moveaxis(x, d, 0) for x, d in zip(vals, dims)]
  outs, flags = rule(size, [d is not None for d in dims], *vals)
  for x, b, aval in zip(outs, flags, call.out_avals):
    want = (size, *aval.shape) if b else aval.shape
    if tuple(core.get_aval(x).shape) != tuple(want):
      raise ValueError(f"custom_vmap rule {rule!r} returned an output of shape "
                       f"{core.get_aval(x).shape} where its out_batched flag {b} asks for "
                       f"{want}.")
  return outs, [0 if b else None for b in flags]


def _custom_vmap_jvp(primals, tangents, *, call, in_tree, out_tree, rule):
  n = len(primals)
  diff = [dtypes.has_tangent(core.get_aval(p).dtype) for p in primals]
  tangents = [ad.instantiate(t) if type(t) is ad.Zero else t
              for t, d in zip(tangents, diff) if d]

  def jvp_of_call(*xs):
    outs, out_tangents = ad.jvp_flat(
        functools.partial(core.eval_jaxpr, call.jaxpr, call.consts), list(xs[:n]),
        _full_tangents(xs[n:], primals, diff))
    return outs + out_tangents
  jvp_call, consts = _trace_closed(jvp_of_call, [core.get_aval(x)
                                                 for x in list(primals) + tangents])
  jvp_rule = _JVPRule(rule, n, diff, len(consts))
  outs = custom_vmap_call_p.bind(*consts, *primals, *tangents, call=jvp_call,
                                 in_tree=in_tree, out_tree=out_tree, rule=jvp_rule)
  k = len(call.out_avals)
  return outs[:k], [t if dtypes.has_tangent(a.dtype) else ad.Zero(ad.tangent_aval(a))
                    for t, a in zip(outs[k:], call.out_avals)]


def _full_tangents(given, primals, diff):
  it = iter(given)
  return [next(it) if d else ad.Zero(ad.tangent_aval(core.get_aval(p)))
          for p, d in zip(primals, diff)]


class _JVPRule:
  """The rule of a call's JVP: the JVP of ``rule`` at the batched primals, tangents
  batched as their primals are."""

  def __init__(self, rule, num_primals, diff, num_consts):
    self.rule, self.n, self.diff, self.num_consts = rule, num_primals, diff, num_consts

  def __repr__(self):
    return f"jvp({self.rule!r})"

  def __call__(self, axis_size, in_batched, *leaves):
    if any(in_batched[:self.num_consts]):
      raise ValueError("a custom_vmap function's derivative closes over a value that vmap "
                       "batches; pass that value to the function as an argument instead.")
    leaves, in_batched = leaves[self.num_consts:], in_batched[self.num_consts:]
    primals, tangents = list(leaves[:self.n]), list(leaves[self.n:])
    p_batched, t_batched = list(in_batched[:self.n]), list(in_batched[self.n:])
    j = 0
    for i, d in enumerate(self.diff):   # a batched tangent batches its primal, and back
      if not d:
        continue
      if t_batched[j] and not p_batched[i]:
        primals[i], p_batched[i] = batching.broadcast(primals[i], axis_size, 0), True
      if p_batched[i] and not t_batched[j]:
        tangents[j] = batching.broadcast(tangents[j], axis_size, 0)
      j += 1
    flags = []

    def primal_rule(*ps):
      outs, out_flags = self.rule(axis_size, p_batched, *ps)
      flags.append(out_flags)
      return outs
    outs, out_tangents = ad.jvp_flat(primal_rule, primals,
                                     _full_tangents(tangents, primals, self.diff))
    return outs + out_tangents, flags[0] + flags[0]


def _custom_vmap_transpose(cts, *args, **params):
  raise ValueError("custom_vmap functions do not support reverse-mode autodiff: to "
                   "differentiate one in reverse mode, wrap it in jax.custom_vjp (outside "
                   "the custom_vmap) and give it a backward rule.")


ad.jvp_rules[custom_vmap_call_p] = _custom_vmap_jvp
ad.transpose_rules[custom_vmap_call_p] = _custom_vmap_transpose
batching.axis_batching_rules[custom_vmap_call_p] = _custom_vmap_batcher


def sequential_vmap(f):
  """``f`` that vmap runs as a loop over the batch, one example at a time
  (``jax.custom_batching.sequential_vmap``), with ``lax.map``."""
  f = custom_vmap(f)

  @f.def_vmap
  def rule(axis_size, in_batched, *args):
    leaves, args_tree = tree.tree_flatten(args)
    flags = tree.tree_leaves(in_batched)
    batched = [x for x, b in zip(leaves, flags) if b]

    def one(xs):
      it = iter(xs)
      return f.fun(*tree.tree_unflatten(args_tree, [next(it) if b else x
                                                    for x, b in zip(leaves, flags)]))
    return control_flow.map(one, batched), True
  return f
