"""Controlling differentiation: custom_jvp, custom_vjp, stop_gradient, checkpoint (remat).

Each is a primitive carrying the traced function as a jaxpr plus the user's rules as
params, so it stages, nests and prints like JAX's. The differentiation tables do the
rest: the JVP rule of ``custom_jvp_call`` runs the user's jvp; the JVP rule of
``custom_vjp_call`` runs ``fwd`` and emits a ``custom_lin`` whose transpose runs ``bwd``;
``remat2`` is linearized without saving residuals from inside, so its primal
computation is recomputed in the backward pass.
"""
from __future__ import annotations

import contextvars
import functools
import inspect

import numpy as np

from jaxlite._src.base import api_util
from jaxlite._src.base import linear_util as lu
from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.base import tree
from jaxlite._src.core.array import as_operand as _as_operand
from jaxlite._src.core.core import Primitive
from jaxlite._src.core.state import types as ref_state
from jaxlite._src.lax import ad_checkpoint
from jaxlite._src.lax.ad_checkpoint import (  # noqa: F401  (jax.checkpoint_policies)
    checkpoint_policies, nothing_saveable)
from jaxlite._src.passes import dce
from jaxlite._src.transforms import ad
from jaxlite._src.transforms import partial_eval as pe
from jaxlite._src.transforms.staging import DynamicJaxprTrace, trace_to_jaxpr


def _positions_of(fun, names):
  """The positions of ``fun``'s parameters named ``names`` (a name or several)."""
  names = (names,) if isinstance(names, str) else tuple(names)
  if not names:
    return ()
  params = list(inspect.signature(fun).parameters)
  return tuple(params.index(n) for n in names if n in params)


def _resolve_args(fun, args, kwargs):
  """The arguments by position, keyword ones and defaults included, as JAX's
  ``resolve_kwargs`` gives them (custom rules take positional arguments; a default may
  be a ``nondiff_argnums`` argument the caller left out)."""
  try:
    signature = inspect.signature(fun)
  except (TypeError, ValueError):   # (a callable without one: arguments as given)
    if kwargs:
      raise
    return tuple(args)
  try:
    bound = signature.bind(*args, **kwargs)
  except TypeError as e:
    raise TypeError(f"{api_util.fun_name(fun)}: {e}") from None
  bound.apply_defaults()
  return tuple(bound.args) + tuple(bound.kwargs.values())


def _split_nondiff(args, nondiff_argnums):
  static = {i: args[i] for i in nondiff_argnums}
  dynamic = [a for i, a in enumerate(args) if i not in static]
  return static, dynamic


def _merge(static, dynamic, n):
  it = iter(dynamic)
  return [static[i] if i in static else next(it) for i in range(n)]


def _trace_call(fun, static, dyn_leaves, dyn_tree, nargs):
  """Trace ``fun`` on the dynamic leaves; returns (ClosedJaxpr with no consts, consts,
  out_tree)."""
  store = []

  def flat(*leaves):
    dyn = tree.tree_unflatten(dyn_tree, leaves)
    out = fun(*_merge(static, dyn, nargs))
    out_leaves, out_tree = tree.tree_flatten(out)
    store.append(out_tree)
    return [_as_operand(x) for x in out_leaves]
  closed = trace_to_jaxpr(flat, [core.get_aval(x) for x in dyn_leaves])
  jaxpr = closed.jaxpr
  converted = core.ClosedJaxpr(core.Jaxpr([], jaxpr.constvars + jaxpr.invars, jaxpr.outvars,
                                          jaxpr.eqns), [])
  return converted, list(closed.consts), store[-1]


# ----------------------------------------------------------------------------- custom_jvp

class JVPRuleFun(lu.WrappedFun):
  """The ``jvp_jaxpr_fun`` param of ``custom_jvp_call``, as JAX's: ``call_wrapped(*zeros)``,
  one flag per argument after the ``num_consts`` closed-over values, stages the custom JVP
  rule with the flagged tangents symbolic zeros and returns ``(jvp_jaxpr, consts,
  out_zeros)``: the jaxpr maps those arguments' primals and nonzero tangents to the
  outputs and their nonzero tangents. jaxlite's JVP rule calls ``rule``,
  ``rule(primals, tangents) -> (outputs, output tangents)`` (closed-over values first,
  which the user's rule does not see), on the values themselves, so that an eager custom
  JVP rule may inspect them as in JAX."""
  __slots__ = ("rule", "in_avals", "num_consts", "_staged")

  def __init__(self, rule, in_avals, num_consts=0):
    name = getattr(rule, "__name__", "jvp")
    super().__init__(self._stage, self._stage, (), (), (), None,
                     api_util.DebugInfo("custom_jvp", name, (), name))
    self.rule, self.in_avals, self.num_consts = rule, list(in_avals), num_consts
    self._staged = {}

  @property
  def __name__(self):
    return self.debug_info.func_name

  def _stage(self, *zeros):
    key = tuple(bool(z) for z in zeros)
    staged = self._staged.get(key)
    if staged is None:
      staged = self._staged[key] = _stage_jvp_rule(self.rule, self.in_avals,
                                                   self.num_consts, key)
    return staged


def _stage_jvp_rule(rule, avals, num_consts, zeros):
  """``JVPRuleFun.call_wrapped``: the rule staged into a jaxpr for the zero pattern."""
  const_avals, avals = avals[:num_consts], avals[num_consts:]
  if len(zeros) != len(avals):
    raise TypeError(f"jvp_jaxpr_fun takes one zero flag per non-const argument "
                    f"({len(avals)}), got {len(zeros)}.")
  n = len(avals)
  out_zeros = []

  def flat(*xs):
    it = iter(xs[n:])
    tangents = [ad.Zero(ad.tangent_aval(a)) if z else next(it) for a, z in zip(avals, zeros)]
    # the user's rule closes over what the consts are: they only fill their places
    consts = [ad.zeros_like_aval(a) for a in const_avals]
    outs, out_tangents = rule(consts + list(xs[:n]),
                              [ad.Zero(ad.tangent_aval(a)) for a in const_avals] + tangents)
    out_zeros[:] = [type(t) is ad.Zero for t in out_tangents]
    return [*outs, *[t for t in out_tangents if type(t) is not ad.Zero]]
  tangent_avals = [ad.tangent_aval(a) for a, z in zip(avals, zeros) if not z]
  closed = trace_to_jaxpr(flat, list(avals) + tangent_avals)
  return closed.jaxpr, list(closed.consts), out_zeros


class CustomJVPCallPrimitive(Primitive):
  """``custom_jvp_call``: params ``call_jaxpr``, ``jvp_jaxpr_fun`` (a ``JVPRuleFun``),
  ``num_consts``, ``symbolic_zeros`` as in JAX, and ``name``, the function's name, which
  JAX reads off the jaxpr's debug info to print it.

  As JAX's, ``get_bind_params`` gives the callables libraries bind it again with
  (``subfuns``: the function and its JVP as ``lu.WrappedFun``s), and ``bind`` takes
  them."""
  multiple_results = True

  def bind(self, *args, subfuns=None, **params):
    if subfuns is not None:
      params = _params_of_subfuns(subfuns, args, params)
    if core.current_trace() is core.eval_trace:   # the impl runs on the Arrays (def_impl)
      return _custom_jvp_call_impl(*args, **params)
    return super().bind(*args, **params)

  def get_bind_params(self, params):
    params = dict(params)
    call_jaxpr = params.pop("call_jaxpr")
    num_consts = params.pop("num_consts")
    jvp_fun = params.pop("jvp_jaxpr_fun")
    fun = lu.wrap_init(core.jaxpr_as_fun(call_jaxpr))
    params["subfuns"] = (fun, _lift_jvp(num_consts, jvp_fun))
    return params


def _lift_jvp(num_consts, jvp_fun: JVPRuleFun) -> lu.WrappedFun:
  """JAX's ``lift_jvp``: the staged rule as a function of ``(*primals, *tangents)``
  (a zero tangent a ``SymbolicZero``) returning ``[*outputs, *output tangents]``."""
  def jvp(*xs):
    n = len(xs) // 2
    primals, tangents = xs[num_consts:n], xs[n + num_consts:]
    zeros = [type(t) is ad.SymbolicZero for t in tangents]
    jaxpr, consts, out_zeros = jvp_fun.call_wrapped(*zeros)
    out = core.eval_jaxpr(jaxpr, consts, *primals,
                          *[t for t, z in zip(tangents, zeros) if not z])
    outs, nonzero = out[:len(out_zeros)], iter(out[len(out_zeros):])
    return [*outs, *[ad.SymbolicZero(ad.tangent_aval(core.get_aval(o))) if z else next(nonzero)
                     for o, z in zip(outs, out_zeros)]]
  return lu.wrap_init(jvp, debug_info=jvp_fun.debug_info)


def _params_of_subfuns(subfuns, args, params):
  """jaxlite's params from JAX's ``subfuns=(fun, jvp)`` (``get_bind_params``'s)."""
  fun, jvp = subfuns
  avals = [core.get_aval(x) for x in args]
  call_jaxpr = trace_to_jaxpr(lambda *xs: list(fun.call_wrapped(*xs)), avals)
  n_out = len(call_jaxpr.out_avals)

  def rule(primals, tangents):
    out = jvp.call_wrapped(*primals, *[ad.SymbolicZero(t.aval) if type(t) is ad.Zero else t
                                       for t in tangents])
    return list(out[:n_out]), [ad.Zero(t.aval) if type(t) is ad.SymbolicZero else t
                               for t in out[n_out:]]
  info = getattr(jvp, "debug_info", None)
  rule.__name__ = info.func_name if info is not None else getattr(jvp, "__name__", "jvp")
  return {"call_jaxpr": call_jaxpr, "jvp_jaxpr_fun": JVPRuleFun(rule, avals),
          "num_consts": 0, "symbolic_zeros": params.get("symbolic_zeros", False),
          "name": params.get("name", getattr(fun, "__name__", "fun"))}


custom_jvp_call_p = CustomJVPCallPrimitive("custom_jvp_call")
custom_jvp_call_p.def_abstract_eval(lambda *avals, call_jaxpr, **_: list(call_jaxpr.out_avals))
core.param_order[custom_jvp_call_p] = ("name", "call_jaxpr", "jvp_jaxpr_fun", "num_consts",
                                       "symbolic_zeros")
core.param_labels[(custom_jvp_call_p, "jvp_jaxpr_fun")] = "jvp"
core.param_printers[(custom_jvp_call_p, "jvp_jaxpr_fun")] = lambda f: f.__name__


class _CustomRuleFunction:
  """What custom_jvp and custom_vjp share: the wrapped function, its non-differentiable
  arguments, and tracing a call into a jaxpr."""

  def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
    functools.update_wrapper(self, fun)
    self.fun = fun
    # names count as their positions in fun's signature; all sorted, as JAX keeps them
    self.nondiff_argnums = tuple(sorted(set(nondiff_argnums)
                                        | set(_positions_of(fun, nondiff_argnames))))
    self.symbolic_zeros = False

  def __get__(self, instance, owner=None):
    return self if instance is None else functools.partial(self, instance)

  @staticmethod
  def _call_trace(args, kwargs):
    """The trace that processes a call on ``args``, as in JAX: below every JVP trace none
    of whose tracers is an argument (their tangents are zeros) and every partial
    evaluation with no unknown argument. There the eval trace runs the function as plain
    Python on the concrete values (so it may branch on them or hand them to NumPy), and a
    JVP trace runs the rule on the primals without tracing the function."""
    leaves = tree.tree_leaves((args, kwargs))
    trace = core.current_trace()
    while True:
      if type(trace) is ad.JVPTrace and not any(
          isinstance(x, ad.JVPTracer) and x._trace is trace for x in leaves):
        trace = trace.parent
      elif type(trace) is pe.PartialEvalTrace and not any(map(trace.is_unknown, leaves)):
        trace = trace.known
      else:
        return trace

  def _dispatch(self, args, kwargs):
    """``(trace, result)``: the call made at its trace when it needs no tracing of the
    function (``_call_trace``), else ``(trace, None)``, where that trace is current."""
    trace = self._call_trace(args, kwargs)
    if trace is core.eval_trace and not any(
        isinstance(x, core.Tracer) for x in tree.tree_leaves((args, kwargs))):
      with core.set_current_trace(trace):
        return trace, (self.fun(*args, **kwargs),)
    if type(trace) is ad.JVPTrace:
      with core.set_current_trace(trace):
        return trace, (self._jvp_call(trace, _resolve_args(self.fun, args, kwargs)),)
    return trace, None

  def _trace(self, args, kwargs, fun=None):
    """Returns (static values, dynamic args, their leaves and treedef, the call jaxpr,
    its consts, the output treedef); ``fun`` (default the function) is what is traced."""
    args = _resolve_args(self.fun, args, kwargs)
    static, dynamic = _split_nondiff(args, self.nondiff_argnums)
    dyn_leaves, dyn_tree = tree.tree_flatten(dynamic)
    dyn_leaves = [_as_operand(x) for x in dyn_leaves]
    call_jaxpr, consts, out_tree = _trace_call(fun or self.fun, static, dyn_leaves,
                                               dyn_tree, len(args))
    static_vals = [static[i] for i in sorted(static)]
    return static_vals, dynamic, dyn_leaves, dyn_tree, call_jaxpr, consts, out_tree


class custom_jvp(_CustomRuleFunction):
  """A function with a custom JVP rule (``jax.custom_jvp``).

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> @jax.custom_jvp
  ... def f(x):
  ...   return jnp.sin(x)
  >>> @f.defjvp
  ... def f_jvp(primals, tangents):
  ...   x, = primals
  ...   return f(x), 2 * jnp.cos(x) * tangents[0]
  >>> float(jax.grad(f)(0.0))
  2.0
  """

  def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
    super().__init__(fun, nondiff_argnums, nondiff_argnames)
    self.jvp = None

  def defjvp(self, jvp, symbolic_zeros=False):
    """Set the JVP rule ``jvp(primals, tangents) -> (primal_out, tangent_out)``."""
    self.jvp = jvp
    self.symbolic_zeros = symbolic_zeros
    return jvp

  def defjvps(self, *jvps):
    """Set one JVP term per argument: ``jvps[i](tangent_i, primal_out, *primals)``."""
    def jvp(primals, tangents):
      out = self(*primals)
      terms = [fn(t, out, *primals) for fn, t in zip(jvps, tangents)
               if fn is not None]
      total = terms[0]
      for t in terms[1:]:
        total = tree.tree_map(lambda a, b: a + b, total, t)
      return out, total
    self.defjvp(jvp)

  def __call__(self, *args, **kwargs):
    if self.jvp is None:
      raise AttributeError(f"No JVP defined for custom_jvp function "
                           f"{api_util.fun_name(self.fun)} using defjvp.")
    trace, done = self._dispatch(args, kwargs)
    if done is not None:
      return done[0]
    with core.set_current_trace(trace):
      staged = _under_staging()
      try:
        traced = self._trace(args, kwargs, ref_state.probing(self.fun))
      except ref_state.UsesRefs as e:
        if staged:   # JAX 0.10.2 has no discharge rule for it there either
          raise ref_state.unsupported_write(e.refs[0], core.current_trace()) from None
        return self._call_carrying(e.refs, _resolve_args(self.fun, args, kwargs))
      static_vals, _, dyn_leaves, dyn_tree, call_jaxpr, consts, out_tree = traced
      jvp_flat = self._rule(static_vals, dyn_tree, len(consts), [out_tree])
      avals = [core.get_aval(x) for x in (*consts, *dyn_leaves)]
      outs = custom_jvp_call_p.bind(*consts, *dyn_leaves, call_jaxpr=call_jaxpr,
                                    jvp_jaxpr_fun=JVPRuleFun(jvp_flat, avals, len(consts)),
                                    num_consts=len(consts),
                                    symbolic_zeros=self.symbolic_zeros,
                                    name=api_util.fun_name(self.fun))
    return tree.tree_unflatten(out_tree, outs)

  def _jvp_call(self, trace, args):
    """The call under ``trace``, a JVP trace with a tangent among ``args``, as JAX's
    ``process_custom_jvp_call``: the rule runs on the primals and tangents (below
    ``trace``: concrete primals stay concrete) and the function is not traced."""
    static, dynamic = _split_nondiff(args, self.nondiff_argnums)
    dyn_leaves, dyn_tree = tree.tree_flatten(dynamic)
    # as JAX's bind: an argument that is no tracer reaches the rule canonical (0.0 as a
    # float32 TypedFloat, a NumPy float64 as a float32 TypedNdArray), a tracer's primal
    # as given (a Python float stays one)
    pairs = [trace.to_primal_tangent(core.canonical_operand(x)) for x in dyn_leaves]
    primals = [p for p, _ in pairs]
    out_tree = [None]   # what the rule returns sets it
    rule = self._rule([static[i] for i in sorted(static)], dyn_tree, 0, out_tree)
    with core.set_current_trace(trace.rule_trace):
      outs, out_tangents = _apply_jvp_rule(rule, primals, [t for _, t in pairs],
                                           self.symbolic_zeros, api_util.fun_name(self.fun))
    return tree.tree_unflatten(out_tree[0],
                               [trace._wrap(o, t) for o, t in zip(outs, out_tangents)])

  def _rule(self, static_vals, dyn_tree, n_consts, out_tree):
    """The JVP rule on flat lists, ``n_consts`` closed-over values first (the user's rule
    does not see them): ``(primals, tangents) -> (outputs, output tangents)``;
    ``out_tree[0]``, the outputs' structure, is set by the first call where None."""
    user_jvp = self.jvp

    def jvp_flat(primals, tangents):
      # flat lists (consts first) in, flat (outputs, output tangents) out; the user's
      # rule sees the non-differentiable arguments first, then the primal and tangent tuples
      p = tree.tree_unflatten(dyn_tree, primals[n_consts:])
      # zero tangents arrive symbolic only when the rule asked for them
      t = tree.tree_unflatten(dyn_tree, [ad.SymbolicZero(x.aval) if type(x) is ad.Zero else x
                                         for x in tangents[n_consts:]])
      primal_out, tangent_out = user_jvp(*static_vals, tuple(p), tuple(t))
      out_leaves, tree_p = tree.tree_flatten(primal_out)
      t_leaves, tree_t = tree.tree_flatten(tangent_out)
      if out_tree[0] is None and tree_p == tree_t:
        out_tree[0] = tree_p
      if tree_p != out_tree[0] or tree_t != out_tree[0]:
        raise TypeError(f"Custom JVP rule must produce primal and tangent outputs with "
                        f"equal container (pytree) structures and matching the primal "
                        f"function's output {out_tree[0] or tree_p}, but got {tree_p} and "
                        f"{tree_t}.")
      # the values stay as the rule made them (a Python float stays one, as in JAX)
      return out_leaves, [_tangent_value(t, o) for t, o in zip(t_leaves, out_leaves)]
    jvp_flat.__name__ = getattr(user_jvp, "__name__", "jvp")
    return jvp_flat

  def _call_carrying(self, refs, args):
    """A call, under autodiff outside every staged region, of a custom_jvp function
    that wrote to outside ``refs`` (as JAX's, which runs it then): a custom_jvp function
    of their values too, whose rule runs the user's with the refs holding them and gives
    their new values no tangent (JAX differentiates no ref effect)."""
    fun, jvp, n_static = self.fun, self.jvp, len(self.nondiff_argnums)
    carrying = custom_jvp(lambda vals, *a: ref_state.run_with(refs, vals, fun, *a),
                          tuple(i + 1 for i in self.nondiff_argnums))

    def carrying_jvp(*a):
      static, (vals, *primals), (_, *tangents) = a[:n_static], a[n_static], a[n_static + 1]
      (out, t_out), new = ref_state.run_with(refs, vals, jvp, *static, tuple(primals),
                                             tuple(tangents))
      zeros = tree.tree_map(lambda v: ad.zeros_like_aval(ad.tangent_aval(core.get_aval(v))),
                            new)
      return (out, new), (t_out, zeros)
    carrying.defjvp(carrying_jvp, self.symbolic_zeros)
    out, vals = carrying(ref_state.values_of(refs), *args)
    ref_state.store_all(refs, [tree.tree_map(stop_gradient, v) for v in vals])
    return out


def _under_staging() -> bool:
  """Whether the current trace, or one it passes primal values to, stages a jaxpr (jit,
  a loop body), where JAX 0.10.2 has no discharge rule for a custom_jvp call's writes."""
  trace = core.current_trace()
  while trace is not None:
    if isinstance(trace, DynamicJaxprTrace):
      return True
    below = getattr(trace, "parent", None)   # (linearize's trace: its primal side, known)
    trace = below if below is not None else getattr(trace, "known", None)
  return False


def _tangent_value(t, out):
  """A rule's tangent as the JVP trace takes it: float0 zeros (the tangent of an integer
  output) and a ``SymbolicZero`` become a symbolic zero."""
  if ad.is_float0(t) or type(t) is ad.SymbolicZero:
    return ad.Zero(ad.tangent_aval(core.get_aval(_as_operand(out))))
  return t


def _custom_jvp_call_impl(*args, call_jaxpr, **_):
  """Eagerly the function's jaxpr runs on the operands themselves, as JAX's EvalTrace runs
  the function: an output that is an operand is that same Array (lineax's
  ``inexact_asarray`` under vmap relies on it). The call primitives below share it."""
  return core.eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *args)


def _custom_jvp_call_jvp(primals, tangents, *, call_jaxpr, jvp_jaxpr_fun, num_consts,
                         symbolic_zeros, name):
  return _apply_jvp_rule(jvp_jaxpr_fun.rule, primals, tangents, symbolic_zeros, name)


def _apply_jvp_rule(rule, primals, tangents, symbolic_zeros, name):
  """``rule(primals, tangents)`` (flat lists), the tangents of non-differentiable inputs
  zeros and the zeros symbolic where the rule asked for them, its tangents checked."""
  if symbolic_zeros:   # the rule sees each zero tangent as a SymbolicZero
    tangents = [t if _inexact(p) or type(t) is ad.Zero else ad.Zero(
        ad.tangent_aval(core.get_aval(p))) for p, t in zip(primals, tangents)]
  else:
    tangents = [ad.instantiate(t) if _inexact(p) else ad.zeros_like_aval(
        ad.tangent_aval(core.get_aval(p))) for p, t in zip(primals, tangents)]
  outs, out_tangents = rule(list(primals), tangents)
  for o, t in zip(outs, out_tangents):
    if type(t) is not ad.Zero and core.get_aval(o).shape != core.get_aval(t).shape:
      raise TypeError(f"Custom JVP rule {name} must produce primal and tangent outputs "
                      f"with equal shapes, got {core.get_aval(o).str_short()} and "
                      f"{core.get_aval(t).str_short()}.")
  return outs, out_tangents


def _inexact(x):
  return dtypes.has_tangent(core.get_aval(x).dtype)


ad.jvp_rules[custom_jvp_call_p] = _custom_jvp_call_jvp


def _custom_jvp_call_transpose(cts, *args, call_jaxpr, **_):
  # applied to tangents (a rule staged it in a linear jaxpr): the function itself is
  # linear there, and transposes as its jaxpr does (as in JAX)
  return ad.backward_pass(call_jaxpr.jaxpr, call_jaxpr.consts, args, cts)


ad.transpose_rules[custom_jvp_call_p] = _custom_jvp_call_transpose


# ----------------------------------------------------------------------------- custom_vjp

custom_vjp_call_p = Primitive("custom_vjp_call")
custom_vjp_call_p.multiple_results = True
custom_vjp_call_p.def_abstract_eval(lambda *avals, call_jaxpr, **_: list(call_jaxpr.out_avals))
core.param_order[custom_vjp_call_p] = ("name", "bwd", "call_jaxpr", "fwd", "num_consts",
                                       "symbolic_zeros")
# JAX prints num_consts only when the function closes over traced values
for _p in (custom_jvp_call_p, custom_vjp_call_p):
  core.hidden_params[_p] = lambda k, v, params: k == "num_consts" and not v
custom_vjp_call_p.def_impl(_custom_jvp_call_impl)
for _k in ("bwd", "fwd"):
  core.param_printers[(custom_vjp_call_p, _k)] = lambda f: getattr(f, "__name__", str(f))

custom_lin_p = Primitive("custom_lin")
custom_lin_p.multiple_results = True
custom_lin_p.def_abstract_eval(lambda *avals, out_avals, **_: list(out_avals))


class custom_vjp(_CustomRuleFunction):
  """A function with a custom VJP rule (``jax.custom_vjp``): ``defvjp(fwd, bwd)`` with
  ``fwd(*args) -> (out, residuals)`` and ``bwd(residuals, ct_out) -> ct_args``.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> @jax.custom_vjp
  ... def f(x):
  ...   return jnp.sin(x)
  >>> f.defvjp(lambda x: (f(x), jnp.cos(x)), lambda cos_x, g: (3 * cos_x * g,))
  >>> float(jax.grad(f)(0.0))
  3.0
  """

  def __init__(self, fun, nondiff_argnums=(), nondiff_argnames=()):
    super().__init__(fun, nondiff_argnums, nondiff_argnames)
    self.fwd = self.bwd = None

  def defvjp(self, fwd, bwd, symbolic_zeros=False, optimize_remat=False):
    self.fwd, self.bwd, self.symbolic_zeros = fwd, bwd, symbolic_zeros

  def __call__(self, *args, **kwargs):
    if self.fwd is None:
      raise AttributeError(f"No VJP defined for custom_vjp function "
                           f"{api_util.fun_name(self.fun)} using defvjp.")
    trace, done = self._dispatch(args, kwargs)
    if done is not None:
      return done[0]
    with core.set_current_trace(trace):
      try:
        traced = self._trace(args, kwargs, ref_state.probing(self.fun))
      except ref_state.UsesRefs as e:
        return self._call_carrying(e.refs, _resolve_args(self.fun, args, kwargs))
      static_vals, dynamic, dyn_leaves, dyn_tree, call_jaxpr, consts, out_tree = traced
      fwd_flat, bwd_flat = self._rules(static_vals, dynamic, dyn_leaves, dyn_tree,
                                       len(consts), [out_tree])
      fwd_flat.call_site = object()   # this call's token while it binds (_binding_calls)
      binding = _binding_calls.set(_binding_calls.get() | {fwd_flat.call_site})
      try:
        outs = custom_vjp_call_p.bind(*consts, *dyn_leaves, call_jaxpr=call_jaxpr,
                                      fwd=fwd_flat, bwd=bwd_flat, num_consts=len(consts),
                                      symbolic_zeros=self.symbolic_zeros,
                                      name=api_util.fun_name(self.fun))
      finally:
        _binding_calls.reset(binding)
    return tree.tree_unflatten(out_tree, outs)

  def _jvp_call(self, trace, args):
    """The call under ``trace``, a JVP trace with a tangent among ``args``, as JAX's
    ``process_custom_vjp_call``: the function is not traced, ``fwd`` runs on the primals below ``trace`` (concrete values
    there stay concrete, so ``fwd`` may hand them to NumPy) and the tangents go through
    ``custom_lin``."""
    static, dynamic = _split_nondiff(args, self.nondiff_argnums)
    dyn_leaves, dyn_tree = tree.tree_flatten(dynamic)
    pairs = [trace.to_primal_tangent(x) for x in dyn_leaves]
    primals = [_as_operand(p) for p, _ in pairs]
    tangents = [t for _, t in pairs]
    out_tree = [None]   # what fwd returns sets it
    fwd_flat, bwd_flat = self._rules([static[i] for i in sorted(static)], dynamic, primals,
                                     dyn_tree, 0, out_tree)
    with core.set_current_trace(trace.parent):
      outs, res = fwd_flat(*primals, perturbed=[type(t) is not ad.Zero for t in tangents])
    with core.set_current_trace(trace.rule_trace):
      lin = _custom_lin(outs, res, tangents, bwd_flat)
    return tree.tree_unflatten(out_tree[0], [trace._wrap(o, t) for o, t in zip(outs, lin)])

  def _rules(self, static_vals, dynamic, dyn_leaves, dyn_tree, n_consts, out_tree):
    """``fwd`` and ``bwd`` on flat lists, as ``custom_vjp_call`` holds them: the
    arguments' leaves after ``n_consts`` closed-over values, the outputs' leaves
    (``out_tree[0]``: their structure, set by the first ``fwd`` where None)."""
    fwd, bwd = self.fwd, self.bwd
    n = len(static_vals) + len(dynamic)
    static = dict(zip(sorted(self.nondiff_argnums), static_vals))
    symbolic_zeros = self.symbolic_zeros

    def fwd_flat(*primals, perturbed=None):
      leaves = primals[n_consts:]
      if symbolic_zeros:   # each argument with whether it has a nonzero tangent
        flags = [True] * len(leaves) if perturbed is None else perturbed[n_consts:]
        leaves = [CustomVJPPrimal(x, bool(f)) for x, f in zip(leaves, flags)]
      dyn = tree.tree_unflatten(dyn_tree, leaves)
      result = fwd(*_merge(static, dyn, n))
      if out_tree[0] is None:
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
          raise TypeError(f"Custom VJP fwd rule {api_util.fun_name(fwd)} must produce a "
                          f"pair (list or tuple of length two) where the first element "
                          f"represents the primal output and the second element "
                          f"represents residuals, got {result}.")
        out_tree[0] = tree.tree_structure(result[0])
      out, res = result
      out_leaves, tree_out = tree.tree_flatten(out)
      if tree_out != out_tree[0]:
        raise TypeError(f"Custom VJP fwd rule {api_util.fun_name(fwd)} must produce a pair "
                        f"(output, residuals) whose output has the primal function's "
                        f"structure {out_tree[0]}, got {tree_out}.")
      return [_as_operand(x) for x in out_leaves], res

    # per-argument avals: a None cotangent from bwd stands for zeros of that argument
    dyn_avals = tree.tree_unflatten(dyn_tree, [core.get_aval(x) for x in dyn_leaves])

    def bwd_flat(res, cts):
      # zero cotangents: a SymbolicZero for a rule that asked for them, else zeros
      cts = [(ad.SymbolicZero(c.aval) if symbolic_zeros else ad.instantiate(c))
             if type(c) is ad.Zero else c for c in cts]
      ct_out = tree.tree_unflatten(out_tree[0], cts)
      cts_in = bwd(*static_vals, res, ct_out)
      if symbolic_zeros:
        cts_in = tree.tree_map(lambda c: None if type(c) is ad.SymbolicZero else c, cts_in)
      if isinstance(cts_in, list) and len(cts_in) == len(dyn_avals):
        cts_in = tuple(cts_in)
      # as JAX: the output is a tree prefix of the arguments; each of its leaves stands
      # for all leaves of that subtree (an array for a Variable node holding one), None
      # for zeros
      expected = tree.tree_structure(tuple(dynamic))
      try:
        if not isinstance(cts_in, tuple):
          raise ValueError
        per_leaf = tree.broadcast_prefix(cts_in, tuple(dyn_avals), is_leaf=lambda x: x is None)
      except ValueError:
        raise TypeError(
            "Custom VJP bwd rule must produce an output with the same container (pytree) "
            "structure as the args tuple of the primal function, and in particular must "
            "produce a tuple of length equal to the number of arguments to the primal "
            "function, but got bwd output structure "
            f"{tree.tree_structure(cts_in)} for primal input structure {expected}.") from None
      ct_leaves = [ad.zeros_like_aval(a) if c is None else c
                   for c, a in zip(per_leaf, tree.tree_leaves(tuple(dyn_avals)))]
      return [None] * n_consts + list(ct_leaves)
    fwd_flat.__name__ = getattr(fwd, "__name__", "fwd")
    bwd_flat.__name__ = getattr(bwd, "__name__", "bwd")
    return fwd_flat, bwd_flat

  def _call_carrying(self, refs, args):
    """A call of a custom_vjp function that wrote to outside ``refs``: a custom_vjp
    function of their values too, whose rules leave those undifferentiated (JAX
    differentiates no ref effect of the function)."""
    fun, fwd, bwd, n_static = self.fun, self.fwd, self.bwd, len(self.nondiff_argnums)
    carrying = custom_vjp(lambda vals, *a: ref_state.run_with(refs, vals, fun, *a),
                          tuple(i + 1 for i in self.nondiff_argnums))

    def carrying_fwd(vals, *a):
      # (with symbolic_zeros the values come wrapped; the refs hold the values)
      vals = [v.value if isinstance(v, CustomVJPPrimal) else v for v in vals]
      (out, res), new = ref_state.run_with(refs, vals, fwd, *a)
      return (out, new), res

    def carrying_bwd(*a):
      static, res, (ct, _) = a[:n_static], a[n_static], a[n_static + 1]
      return (None,) + tuple(bwd(*static, res, ct))
    carrying.defvjp(carrying_fwd, carrying_bwd, self.symbolic_zeros)
    out, vals = carrying(ref_state.values_of(refs), *args)
    ref_state.store_all(refs, [tree.tree_map(stop_gradient, v) for v in vals])
    return out


# The ``call_site`` tokens of the custom_vjp calls binding from where they are called. As
# in JAX, differentiating such a call runs ``fwd`` alone and drops the tangents of the
# values the function closes over; a call staged into a jaxpr (a jitted function's) that is
# differentiated later raises CustomVJPException for them instead.
_binding_calls = contextvars.ContextVar("custom_vjp_calls_binding", default=frozenset())


def _custom_vjp_call_jvp(primals, tangents, *, call_jaxpr, fwd, bwd, num_consts,
                         symbolic_zeros, name):
  if (any(type(t) is not ad.Zero for t in tangents[:num_consts])
      and getattr(fwd, "call_site", None) not in _binding_calls.get()):
    raise ad.CustomVJPException()
  outs, res = fwd(*primals, perturbed=[type(t) is not ad.Zero for t in tangents])
  return outs, _custom_lin(outs, res, tangents, bwd)


def _custom_lin(outs, res, tangents, bwd):
  """The outputs' tangents: ``custom_lin`` of the input ``tangents`` (``bwd`` transposes
  it) with ``fwd``'s residuals ``res``."""
  res_leaves, res_tree = tree.tree_flatten(res)
  # Python scalars stay what they are (staged as literals, bwd gets them back as such:
  # libraries keep flags among the residuals)
  res_leaves = [r if type(r) in _PYTHON_SCALARS else _as_operand(r) for r in res_leaves]
  tangents = [ad.instantiate(t) for t in tangents]
  out_avals = [ad.tangent_aval(core.get_aval(o)) for o in outs]
  return custom_lin_p.bind(*res_leaves, *tangents, num_res=len(res_leaves), bwd=bwd,
                           res_tree=res_tree, out_avals=tuple(out_avals))


_PYTHON_SCALARS = (bool, int, float, complex)


def _custom_lin_impl(*args, **params):
  raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


def _custom_lin_transpose(cts, *args, num_res, bwd, res_tree, out_avals):
  res = tree.tree_unflatten(res_tree, args[:num_res])
  cts_in = bwd(res, list(cts))   # (zero cotangents as ad.Zero: bwd resolves them)
  primals = args[num_res:]
  out = []
  for ct, p in zip(cts_in, primals):
    if ct is None or not ad.is_undefined(p):
      out.append(None)
      continue
    aval = p.aval
    if not dtypes.has_tangent(aval.dtype):
      out.append(None)
      continue
    ct = _as_operand(ct)
    if core.get_aval(ct).shape != aval.shape:
      raise ValueError(f"Custom VJP bwd rule must produce cotangents of the inputs' "
                       f"shapes: got {core.get_aval(ct).str_short()} for an input of type "
                       f"{aval.str_short()}.")
    out.append(ct)
  return [None] * num_res + out


ad.jvp_rules[custom_vjp_call_p] = _custom_vjp_call_jvp
ad.transpose_rules[custom_lin_p] = _custom_lin_transpose


def _custom_lin_jvp(primals, tangents, **params):
  raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


ad.jvp_rules[custom_lin_p] = _custom_lin_jvp


# ----------------------------------------------------------------------------- stop_gradient

stop_gradient_p = Primitive("stop_gradient")
stop_gradient_p.def_abstract_eval(lambda x: x)
stop_gradient_p.def_forwarding(lambda: [0])   # eagerly, the operand as given (JAX's impl)
ad.defzero(stop_gradient_p)


def stop_gradient(x):
  """The identity, with zero derivative: gradients do not flow through ``x``.

  Parameters
  ----------
  x : pytree of arrays
    The values to stop gradients at.

  Returns
  -------
  pytree
    ``x``: outside transformations each leaf as given (a Python float stays one, a
    NumPy array takes the canonical dtype), as in JAX; under differentiation a constant.
  """
  return tree.tree_map(_stop_one, x)


def _stop_one(leaf):
  if dtypes.issubdtype(core.get_aval(leaf).dtype, dtypes.extended):
    return leaf   # (a typed PRNG key has no tangent to stop)
  if isinstance(leaf, ad.JVPTracer) and leaf._trace.tangent_trace is None:
    # as JAX's, for forward mode: the primal, no longer of this trace at all
    return _stop_one(leaf.primal)
  return stop_gradient_p.bind(leaf)


# ----------------------------------------------------------------------------- checkpoint

remat_p = Primitive("remat2")
remat_p.multiple_results = True
remat_p.def_abstract_eval(lambda *avals, jaxpr, **_: list(jaxpr.out_avals))


remat_p.def_forwarding(lambda jaxpr, **_: pe.jaxpr_forwarding(jaxpr.jaxpr))


def _remat_impl(*args, jaxpr, **_):
  return core.eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


remat_p.def_impl(_remat_impl)


def _remat_jvp(primals, tangents, *, jaxpr, prevent_cse, differentiated, policy):
  diff = [type(t) is not ad.Zero and _inexact(p) for p, t in zip(primals, tangents)]
  n = len(jaxpr.out_avals)
  # as JAX's: tangents only where some differentiated input reaches (a ref's counter has
  # none), the others symbolic zeros
  jvp, out_nz = ad.jvp_jaxpr_nonzeros(jaxpr, diff, [False] * n)
  jvp, _ = ad.jvp_jaxpr_nonzeros(jaxpr, diff, out_nz)
  ts = [ad.instantiate(t) for t, d in zip(tangents, diff) if d]
  outs = remat_p.bind(*primals, *ts, jaxpr=jvp, prevent_cse=prevent_cse,
                      differentiated=differentiated, policy=policy)
  it = iter(outs[n:])
  return outs[:n], [next(it) if nz else ad.Zero(ad.tangent_aval(a))
                    for nz, a in zip(out_nz, jaxpr.out_avals)]


def _remat_partial_eval(trace, args, unknowns, params):
  jaxpr = params["jaxpr"]
  # as JAX's rule: the known outputs are computed now, inline, and the unknown ones are
  # staged as one call (the differentiated one) that recomputes what the policy does not
  # save from the primal inputs it reads, in the backward pass
  known, unknown, out_uk, n_res = pe.partial_eval_jaxpr(jaxpr, unknowns)
  saved, recompute = ad_checkpoint.split_by_policy(known, n_res,
                                                   params["policy"] or nothing_saveable)
  n_known = len(known.jaxpr.outvars) - n_res
  known_only = ad_checkpoint.round_residuals(_drop_outputs(known, n_res, saved),
                                             len(saved))
  known_args = [x for x, u in zip(args, unknowns) if not u]
  with core.set_current_trace(trace.known):
    k_outs = core.eval_jaxpr(known_only.jaxpr, known_only.consts, *known_args)
  if saved:
    staged, consts = _recomputing(recompute, unknown, unknowns,
                                  [v.aval for v in saved] + [core.get_aval(x) for x in args])
    operands = consts + list(k_outs[n_known:]) + list(args)
  else:   # (the staged call is the function's own equations, in their order)
    staged, operands = dce.run(pe.prune_outputs(jaxpr, out_uk)), list(args)
  used = dce.used_inputs(staged)
  staged = pe.drop_inputs(staged, [not u for u in used])
  u_outs = iter(trace.bind_unknown(remat_p, *[x for x, u in zip(operands, used) if u],
                                   **{**params, "jaxpr": staged, "differentiated": True}))
  k_it = iter(k_outs[:n_known])
  return [next(u_outs) if u else next(k_it) for u in out_uk]


def _recomputing(recompute, unknown, unknowns, avals):
  """The backward pass's call, and its leading operands: from the saved values and the
  arguments (``avals``), the residuals that were not saved (``recompute``), then the
  unknown outputs (``unknown``)."""
  n_saved = len(avals) - len(unknowns)

  def body(*vals):
    saved, args = vals[:n_saved], vals[n_saved:]
    res = core.eval_jaxpr(recompute.jaxpr, recompute.consts,
                          *[x for x, u in zip(args, unknowns) if not u], *saved)
    return core.eval_jaxpr(unknown.jaxpr, unknown.consts, *res,
                           *[x for x, u in zip(args, unknowns) if u])
  traced = trace_to_jaxpr(body, avals)
  j = traced.jaxpr   # (its consts become leading operands: remat2 takes none)
  return (core.ClosedJaxpr(core.Jaxpr([], j.constvars + j.invars, j.outvars, j.eqns), []),
          list(traced.consts))


def _drop_outputs(closed, n, extra=()):
  """``closed`` without its last ``n`` outputs, returning ``extra`` variables after the
  others."""
  if not n and not extra:
    return closed
  jaxpr = closed.jaxpr
  outvars = jaxpr.outvars[:len(jaxpr.outvars) - n] if n else list(jaxpr.outvars)
  trimmed = core.ClosedJaxpr(core.Jaxpr(jaxpr.constvars, jaxpr.invars,
                                        outvars + list(extra), jaxpr.eqns), closed.consts)
  return dce.run(trimmed)


def _remat_transpose(cts, *args, jaxpr, prevent_cse, differentiated, policy):
  # as JAX's: the transpose is one more remat call, so the non-linear work it needs is
  # recomputed inside it in the backward pass (not merged with the forward pass's)
  linear = [ad.is_undefined(x) for x in args]
  nonlinear = [x for x in args if not ad.is_undefined(x)]
  n = len(nonlinear)
  transposed = trace_to_jaxpr(
      lambda *vals: _transposed_body(jaxpr, linear, vals[:n], vals[n:]),
      [core.get_aval(x) for x in nonlinear] + list(jaxpr.out_avals))
  j = transposed.jaxpr   # (its consts become leading operands: remat2 takes none)
  closed = core.ClosedJaxpr(core.Jaxpr([], j.constvars + j.invars, j.outvars, j.eqns), [])
  outs = iter(remat_p.bind(*transposed.consts, *nonlinear,
                           *[ad.instantiate(c) for c in cts], jaxpr=closed,
                           prevent_cse=prevent_cse, differentiated=differentiated,
                           policy=policy))
  return [next(outs) if lin else None for lin in linear]


def _transposed_body(jaxpr, linear, known_args, cts):
  """The cotangents of ``jaxpr``'s linear inputs: its non-linear part recomputed from
  ``known_args``, then its linear part run backwards from ``cts``."""
  known, unknown, _, n_res = pe.partial_eval_jaxpr(jaxpr, linear, instantiate=True)
  k_outs = core.eval_jaxpr(known.jaxpr, known.consts, *known_args)
  residuals = k_outs[len(k_outs) - n_res:] if n_res else []
  undefined = [ad.UndefinedPrimal(a) for a, lin in zip(jaxpr.in_avals, linear) if lin]
  cts_in = ad.backward_pass(unknown.jaxpr, unknown.consts, list(residuals) + undefined,
                            list(cts))
  return [ad.instantiate(c) if c is not None else ad.zeros_like_aval(u.aval)
          for c, u in zip(cts_in[n_res:], undefined)]


ad.jvp_rules[remat_p] = _remat_jvp
ad.transpose_rules[remat_p] = _remat_transpose
pe.partial_eval_rules[remat_p] = _remat_partial_eval


class _DeprecatedArg:
  """The default of an argument JAX deprecated (``jax.checkpoint``'s ``concrete``)."""

  def __repr__(self):
    return "Deprecated"


def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=(), static_argnames=(),
               concrete=_DeprecatedArg()):
  """Recompute ``fun``'s intermediate values in the backward pass instead of storing them
  (``jax.checkpoint`` / ``jax.remat``).

  ``policy(prim, *avals, **params)`` decides which values differentiation saves from
  the forward pass (``jax.checkpoint_policies``; the default saves none); it is asked about
  the equations of the function itself, not those inside a jit, loop or cond within it,
  which are saved or recomputed whole. ``static_argnames`` name parameters of ``fun`` that are
  static as ``static_argnums`` ones are (JAX 0.10.2 takes the argument but ignores it
  unless its ``remat3`` flag is on). ``concrete`` was removed from JAX: passing it raises
  NotImplementedError, as JAX does.
  """
  if not isinstance(concrete, _DeprecatedArg):
    raise NotImplementedError(
        "The `concrete` option to `jax.checkpoint` was deprecated in JAX v0.8.2, and "
        "removed in JAX v0.10.0. In its place please use `static_argnums`; for details "
        "refer to https://docs.jax.dev/en/latest/jep/11830-new-remat-checkpoint.html.")
  static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(
      static_argnums)
  static_argnums += _positions_of(fun, static_argnames)

  def call(fun, args):
    static, dynamic = _split_nondiff(args, static_argnums)
    leaves, in_tree = tree.tree_flatten(dynamic)
    # Python scalars and NumPy values go in as given: an output that is an input comes
    # back as it was passed, as JAX's impl (which evaluates the jaxpr) gives it
    leaves = [x if isinstance(x, (bool, int, float, complex, np.ndarray, np.generic))
              else _as_operand(x) for x in leaves]
    jaxpr, consts, out_tree = _trace_call(fun, static, leaves, in_tree, len(args))
    outs = remat_p.bind(*consts, *leaves, jaxpr=jaxpr, prevent_cse=prevent_cse,
                        differentiated=False, policy=policy)
    return tree.tree_unflatten(out_tree, outs)

  @functools.wraps(fun)
  def remat_f(*args, **kwargs):
    # positional arguments go in as given, as in JAX: the signature (maybe a wrapped
    # function's, through functools.wraps) is read only to place keyword arguments
    args = _resolve_args(fun, args, kwargs) if kwargs else args
    dynamic = tuple(a for i, a in enumerate(args) if i not in static_argnums)
    split = ref_state.without_refs(dynamic)
    if split is not None:   # ref arguments: the function closes over them
      rest, rebuild = split
      static = {i: args[i] for i in static_argnums if i < len(args)}

      def closing(*leaves):
        dyn = iter(rebuild(leaves))
        return fun(*[static[i] if i in static else next(dyn) for i in range(len(args))])
      return checkpoint(closing, prevent_cse=prevent_cse, policy=policy)(*rest)
    try:
      return call(ref_state.probing(fun), args)
    except ref_state.UsesRefs as e:
      refs = e.refs
    # it wrote to outside refs: their values go in after the arguments and come out after
    # the outputs (written once; JAX 0.10.2 writes them again when it rematerializes)
    out, vals = call(lambda *a: ref_state.run_with(refs, a[-1], fun, *a[:-1]),
                     args + (ref_state.values_of(refs),))
    ref_state.store_all(refs, vals)
    return out
  return remat_f


def remat(fun, *, prevent_cse=True, policy=None, static_argnums=(),
          concrete=_DeprecatedArg()):
  """Alias of ``checkpoint`` (with JAX's signature for it)."""
  return checkpoint(fun, prevent_cse=prevent_cse, policy=policy,
                    static_argnums=static_argnums, concrete=concrete)


# ----------------------------------------------------------------------------- batching
# vmap batches the traced function once (batching.batch_jaxpr) and wraps the user's rules
# in vmap, so a custom rule sees one example at a time, as the user wrote it. Batched
# operands are moved to axis 0 and every output is batched along 0, so that the function
# and its rules agree on where the batch axis is.
from jaxlite._src.lax.reductions import reduce_sum  # noqa: E402
from jaxlite._src.transforms import batching  # noqa: E402

batching.defvectorized(stop_gradient_p)


def _front(vals, dims):
  vals = [v if d is None else batching.moveaxis(v, d, 0) for v, d in zip(vals, dims)]
  return vals, [None if d is None else 0 for d in dims]


def _per_example(x, d):
  """A float0 tangent or cotangent (no values) of one example, else ``x`` as is."""
  if ad.is_float0(x):
    return np.zeros(x.shape[1:] if d == 0 else x.shape, dtypes.float0), None
  return x, d


def _vmapped_rule(rule, axis_data, in_dims, out_dims=None):
  """``rule`` (flat lists in, flat list out) mapped over axis 0 of the inputs whose dim
  is 0; its outputs batched along 0 (None where it returns None). Given a list
  ``out_dims``, an output the examples share stays unbatched instead, and each call sets
  ``out_dims`` to its outputs' dims (0 or None)."""
  def batched(*args):
    pairs = [_per_example(x, d) for x, d in zip(args, in_dims)]
    outs, dims = batching.vmap_flat(lambda *xs: list(rule(*xs)), [x for x, _ in pairs],
                                    [d for _, d in pairs], axis_data.size, axis_data.name,
                                    axis_data.spmd_name)
    if out_dims is None:
      return [_batched_out(o, d, axis_data.size) for o, d in zip(outs, dims)]
    out_dims[:] = [None if d is None else 0 for d in dims]
    return [o if d is None else _batched_out(o, d, axis_data.size)
            for o, d in zip(outs, dims)]
  return batched


def _batched_out(x, d, size):
  if x is None:
    return None
  if type(x) is ad.Zero:
    return ad.Zero(x.aval.update(shape=(size,) + x.aval.shape))
  if ad.is_float0(x):
    return np.zeros((size,) + x.shape, dtypes.float0)
  return batching.matchaxis(d, 0, size, x)


def _custom_jvp_call_batcher(axis_data, vals, dims, *, call_jaxpr, jvp_jaxpr_fun,
                             num_consts, symbolic_zeros, name):
  jvp = jvp_jaxpr_fun.rule
  vals, dims = _front(vals, dims)
  n, n_out = len(vals), len(call_jaxpr.out_avals)
  batched_call, _ = batching.batch_jaxpr(call_jaxpr, axis_data, dims, [0] * n_out)
  # outside this vmap the tangent of an operand is batched as the operand is
  flat = _vmapped_rule(lambda *xs: [*_concat(jvp(list(xs[:n]), list(xs[n:])))], axis_data,
                       dims + dims)

  def batched_jvp(primals, tangents):
    outs = flat(*primals, *[ad.instantiate(t) for t in tangents])
    return outs[:n_out], outs[n_out:]
  batched_jvp.__name__ = jvp.__name__
  outs = custom_jvp_call_p.bind(
      *vals, call_jaxpr=batched_call,
      jvp_jaxpr_fun=JVPRuleFun(batched_jvp, [core.get_aval(v) for v in vals], num_consts),
      num_consts=num_consts, symbolic_zeros=symbolic_zeros, name=name)
  return outs, [0] * n_out


def _concat(pair):
  return list(pair[0]) + list(pair[1])


def _custom_vjp_call_batcher(axis_data, vals, dims, *, call_jaxpr, fwd, bwd, num_consts,
                             symbolic_zeros, name):
  vals, dims = _front(vals, dims)
  n_out = len(call_jaxpr.out_avals)
  batched_call, _ = batching.batch_jaxpr(call_jaxpr, axis_data, dims, [0] * n_out)
  res_trees, res_dims, res_made, flags = [], [], [], [None]

  def fwd_leaves(*primals):
    outs, res = fwd(*primals, perturbed=flags[0])
    res_leaves, res_tree = tree.tree_flatten(res)
    res_trees.append(res_tree)
    res_made.append(res_leaves)
    return list(outs) + [_as_operand(r) for r in res_leaves]
  # residuals the examples share stay unbatched, as JAX's batched fwd jaxpr leaves them, and
  # Python scalars among them reach bwd as fwd made them (equinox's checkpointed loop
  # branches on a Python bool residual and filters with it)
  fwd_dims = []
  flat_fwd = _vmapped_rule(fwd_leaves, axis_data, dims, fwd_dims)

  def batched_fwd(*primals, perturbed=None):
    flags[0] = perturbed
    outs = flat_fwd(*primals)
    res_dims.append(fwd_dims[n_out:])
    primal_outs = [_batched_out(o, d, axis_data.size) for o, d in zip(outs, fwd_dims[:n_out])]
    res = [made if d is None and type(made) in (bool, int, float, complex) else r
           for r, made, d in zip(outs[n_out:], res_made[-1], res_dims[-1])]
    return primal_outs, tree.tree_unflatten(res_trees[-1], res)

  def batched_bwd(res, cts):
    res_leaves, ct_dims = tree.tree_leaves(res), []
    flat_bwd = _vmapped_rule(
        lambda *xs: bwd(tree.tree_unflatten(res_trees[-1], xs[:len(res_leaves)]),
                        list(xs[len(res_leaves):])),
        axis_data, res_dims[-1] + [0] * len(cts), ct_dims)
    cts_in = flat_bwd(*res_leaves, *[ad.instantiate(c) for c in cts])
    # an operand shared by every example gets the sum of the examples' cotangents, or the
    # one cotangent they share
    return [ct if ct is None or ad.is_float0(ct) or (d is None and cd is None)
            else _batched_out(ct, cd, axis_data.size) if d is not None else _sum_batch(ct)
            for ct, d, cd in zip(cts_in, dims, ct_dims)]
  batched_fwd.__name__, batched_bwd.__name__ = fwd.__name__, bwd.__name__
  batched_fwd.call_site = getattr(fwd, "call_site", None)   # the same call, batched
  outs = custom_vjp_call_p.bind(*vals, call_jaxpr=batched_call, fwd=batched_fwd,
                                bwd=batched_bwd, num_consts=num_consts,
                                symbolic_zeros=symbolic_zeros, name=name)
  return outs, [0] * n_out


def _sum_batch(ct):
  return reduce_sum(ct, (0,))


def _remat_batcher(axis_data, vals, dims, *, jaxpr, **params):
  batched, out_dims = batching.batch_jaxpr(jaxpr, axis_data, dims)
  return remat_p.bind(*vals, jaxpr=batched, **params), out_dims


batching.axis_batching_rules[custom_jvp_call_p] = _custom_jvp_call_batcher
batching.axis_batching_rules[custom_vjp_call_p] = _custom_vjp_call_batcher
batching.axis_batching_rules[remat_p] = _remat_batcher
# custom_lin stands for a custom_vjp function under jvp: mapping it is that same error (JAX)
batching.batching_rules[custom_lin_p] = _custom_lin_impl


# ----------------------------------------------------------------------------- JAX's helpers

class CustomVJPPrimal:
  """An argument of a ``custom_vjp``'s ``fwd`` rule defined with ``symbolic_zeros=True``:
  its ``value`` and whether it is ``perturbed`` (has a nonzero tangent)."""
  __slots__ = ("value", "perturbed")

  def __init__(self, value, perturbed: bool):
    self.value = value
    self.perturbed = perturbed

  def __repr__(self):
    return f"CustomVJPPrimal(value={self.value!r}, perturbed={self.perturbed})"


_tree = tree   # (the parameter of the function below is named `tree`, as JAX names it)


def custom_vjp_primal_tree_values(tree):
  """``tree`` (a tree of ``CustomVJPPrimal`` leaves, what a forward rule with
  ``symbolic_zeros=True`` gets) with each replaced by its value; JAX's TypeError for any
  other leaf."""
  def value(leaf):
    if type(leaf) is not CustomVJPPrimal:
      raise TypeError(f"unexpected leaf type {type(leaf)}")
    return leaf.value
  return _tree.tree_map(value, tree)


def zero_from_primal(val, symbolic_zeros: bool = False):
  """A zero tangent for each leaf of ``val`` (a ``SymbolicZero`` with
  ``symbolic_zeros``)."""
  def zero(x):
    aval = ad.tangent_aval(core.get_aval(x))
    return ad.SymbolicZero(aval) if symbolic_zeros else ad.zeros_like_aval(aval)
  return tree.tree_map(zero, val)


# ----------------------------------------------------------------------------- linear_call

linear_call_p = Primitive("linear_call")
linear_call_p.multiple_results = True
linear_call_p.def_abstract_eval(lambda *avals, callee, **_: list(callee.out_avals))
core.param_order[linear_call_p] = ("callee", "transpose")


def _trace_closed(fun, avals):
  """``fun`` (flat leaves in and out) traced to a ClosedJaxpr whose consts become leading
  inputs: ``(jaxpr taking (*consts, *args), consts)``."""
  closed = trace_to_jaxpr(lambda *xs: [_as_operand(y) for y in fun(*xs)], list(avals))
  jaxpr = closed.jaxpr
  converted = core.ClosedJaxpr(core.Jaxpr([], jaxpr.constvars + jaxpr.invars, jaxpr.outvars,
                                          jaxpr.eqns), [])
  return converted, list(closed.consts)


def linear_call(fun, fun_transpose, residual_args, linear_args):
  """``fun(residual_args, linear_args)``, declared linear in ``linear_args`` with
  ``fun_transpose(residual_args, cotangents)`` as its transpose
  (``jax.custom_derivatives.linear_call``): reverse-mode differentiation and
  ``linear_transpose`` call ``fun_transpose`` instead of transposing ``fun``'s
  operations, so ``fun`` may be any computation (an iterative solver) that is linear in
  value. ``fun_transpose`` may be None when no transposition is asked for. Residuals are not
  differentiated."""
  res_leaves, res_tree = tree.tree_flatten(residual_args)
  lin_leaves, lin_tree = tree.tree_flatten(linear_args)
  res_leaves = [_as_operand(x) for x in res_leaves]
  lin_leaves = [_as_operand(x) for x in lin_leaves]
  out_trees = []

  def flat_callee(*xs):
    out = fun(tree.tree_unflatten(res_tree, xs[:len(res_leaves)]),
                 tree.tree_unflatten(lin_tree, xs[len(res_leaves):]))
    leaves, out_tree = tree.tree_flatten(out)
    out_trees.append(out_tree)
    return leaves
  res_avals = [core.get_aval(x) for x in res_leaves]
  lin_avals = [core.get_aval(x) for x in lin_leaves]
  callee_jaxpr, callee_consts = _trace_closed(flat_callee, res_avals + lin_avals)
  out_tree = out_trees[-1]
  if fun_transpose is None:
    transpose_jaxpr, transpose_consts = None, []
  else:
    def flat_transpose(*xs):
      cts = fun_transpose(tree.tree_unflatten(res_tree, xs[:len(res_leaves)]),
                      tree.tree_unflatten(out_tree, xs[len(res_leaves):]))
      leaves, ct_tree = tree.tree_flatten(cts)
      if ct_tree != lin_tree:
        raise TypeError(f"transpose function output structure {ct_tree} does not match "
                        f"that of the linear arguments {lin_tree}")
      return leaves
    transpose_jaxpr, transpose_consts = _trace_closed(
        flat_transpose, res_avals + list(callee_jaxpr.out_avals))
  outs = linear_call_p.bind(*callee_consts, *transpose_consts, *res_leaves, *lin_leaves,
                            callee=callee_jaxpr, transpose=transpose_jaxpr,
                            num_callee_consts=len(callee_consts),
                            num_transpose_consts=len(transpose_consts),
                            num_res=len(res_leaves))
  return tree.tree_unflatten(out_tree, outs)


def _linear_call_split(args, num_callee_consts, num_transpose_consts, num_res):
  c = list(args[:num_callee_consts])
  t = list(args[num_callee_consts:num_callee_consts + num_transpose_consts])
  rest = args[num_callee_consts + num_transpose_consts:]
  return c, t, list(rest[:num_res]), list(rest[num_res:])


def _linear_call_impl(*args, callee, transpose, num_callee_consts, num_transpose_consts,
                      num_res):
  c, _, res, lin = _linear_call_split(args, num_callee_consts, num_transpose_consts, num_res)
  return core.eval_jaxpr(callee.jaxpr, callee.consts, *c, *res, *lin)


linear_call_p.def_impl(_linear_call_impl)


def _linear_call_jvp(primals, tangents, **params):
  c, t, res, _ = _linear_call_split(primals, params["num_callee_consts"],
                                    params["num_transpose_consts"], params["num_res"])
  lin_tangents = [ad.instantiate(x) for x in tangents[len(c) + len(t) + len(res):]]
  outs = linear_call_p.bind(*primals, **params)
  return outs, linear_call_p.bind(*c, *t, *res, *lin_tangents, **params)


def _linear_call_transpose(cts, *args, callee, transpose, num_callee_consts,
                           num_transpose_consts, num_res):
  if transpose is None:
    raise TypeError("linear_call: reverse-mode differentiation (transposition) needs a "
                    "transpose function, and none was given.")
  c, t, res, lin = _linear_call_split(args, num_callee_consts, num_transpose_consts, num_res)
  if any(ad.is_undefined(x) for x in c + t + res):
    raise ValueError("linear_call is linear in its linear arguments only: a residual "
                     "cannot be transposed.")
  cts = [ad.instantiate(ct) if type(ct) is ad.Zero else ct for ct in cts]
  # the transpose of the transpose is the callee again
  cts_in = linear_call_p.bind(*t, *c, *res, *cts, callee=transpose, transpose=callee,
                              num_callee_consts=num_transpose_consts,
                              num_transpose_consts=num_callee_consts, num_res=num_res)
  return [None] * (len(c) + len(t) + len(res)) + list(cts_in)


def _linear_call_batcher(axis_data, vals, dims, *, callee, transpose, num_callee_consts,
                         num_transpose_consts, num_res):
  vals, dims = _front(vals, dims)
  size = axis_data.size
  nc, nt = num_callee_consts, num_transpose_consts
  # every linear argument and output batched at 0, so that the transpose maps batched
  # cotangents to batched cotangents
  n_lead = nc + nt + num_res
  vals = list(vals[:n_lead]) + [_batched_out(x, d, size) for x, d in zip(vals[n_lead:],
                                                                         dims[n_lead:])]
  dims = list(dims[:n_lead]) + [0] * (len(vals) - n_lead)
  callee_dims = dims[:nc] + dims[n_lead - num_res:]
  n_out = len(callee.out_avals)
  batched_callee, _ = batching.batch_jaxpr(callee, axis_data, callee_dims, [0] * n_out)
  batched_transpose = None
  if transpose is not None:
    transpose_dims = dims[nc:nc + nt] + dims[n_lead - num_res:n_lead] + [0] * n_out
    batched_transpose, _ = batching.batch_jaxpr(transpose, axis_data, transpose_dims,
                                                [0] * (len(vals) - n_lead))
  outs = linear_call_p.bind(*vals, callee=batched_callee, transpose=batched_transpose,
                            num_callee_consts=nc, num_transpose_consts=nt, num_res=num_res)
  return outs, [0] * n_out


ad.jvp_rules[linear_call_p] = _linear_call_jvp
ad.transpose_rules[linear_call_p] = _linear_call_transpose
batching.axis_batching_rules[linear_call_p] = _linear_call_batcher
