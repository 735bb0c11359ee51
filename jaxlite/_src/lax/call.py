"""The ``jit`` primitive: a call of a closed jaxpr, printed ``jit[name=f jaxpr={...}]``.

``jit`` (``_src/jit.py``) binds it for a nested jitted call, and ``staged`` for the
library functions that JAX decorates with ``jax.jit`` (``jnp.where``, ``clip``, most of
``jax.nn``); its rules are here, its tier-0 implementation (the compiled jaxpr) in
``backends/numpy/control_flow_impls.py`` and its lowering in ``backends/xla/stablehlo.py``.

Beside it, the other boundaries the compiler sees: JAX's ``closed_call`` and ``call``,
``composite`` (a named decomposition) and ``optimization_barrier``.
"""
from __future__ import annotations

import functools
import inspect
import weakref

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.base import config as config_lib
from jaxlite._src.base.config import config
from jaxlite._src.base.tree import tree_flatten, tree_unflatten
from jaxlite._src.core.core import Primitive, Tracer
from jaxlite._src.lax.base import operand as _operand
from jaxlite._src.passes import inline as inline_pass
from jaxlite._src.transforms import ad
from jaxlite._src.transforms import batching
from jaxlite._src.transforms import partial_eval as pe
from jaxlite._src.transforms import staging

jit_p = Primitive("jit")
jit_p.multiple_results = True
jit_p.is_call = True
inline_pass.call_primitives.add(jit_p)


@jit_p.def_abstract_eval
def _jit_abstract_eval(*avals, jaxpr, name):
  expected = jaxpr.in_avals
  if len(avals) != len(expected) or any(
      a.shape != e.shape or a.dtype != e.dtype for a, e in zip(avals, expected)):
    raise TypeError(f"jit of {name}: called with {[a.str_short() for a in avals]} but the "
                    f"jaxpr expects {[e.str_short() for e in expected]}.")
  return list(jaxpr.out_avals)


def call_jaxpr(closed, args, name):
  """Bind ``jit`` on ``closed``; consts that are outer tracers become explicit operands."""
  tracer_consts = [i for i, c in enumerate(closed.consts) if isinstance(c, Tracer)]
  if tracer_consts:
    jaxpr = closed.jaxpr
    moved = [jaxpr.constvars[i] for i in tracer_consts]
    kept = [i for i in range(len(closed.consts)) if i not in tracer_consts]
    new = core.Jaxpr([jaxpr.constvars[i] for i in kept], moved + jaxpr.invars,
                     jaxpr.outvars, jaxpr.eqns, jaxpr.debug_info)
    args = [closed.consts[i] for i in tracer_consts] + list(args)
    closed = core.ClosedJaxpr(new, [closed.consts[i] for i in kept])
  return jit_p.bind(*args, jaxpr=closed, name=name)


# The jaxprs derived from a call's jaxpr (its JVP, its split into known and unknown
# parts, its transpose) are made once per jaxpr and what they depend on, as JAX caches
# them: differentiating a jitted function again reuses them, and a custom_vjp's bwd in it
# is traced once. ClosedJaxpr -> {key: derived}
_derived: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _derive(closed, key, make):
  # the flags and the named axes in scope change how a jaxpr traces
  key = (key, config.generation, batching._env_key())
  table = _derived.setdefault(closed, {})
  hit = table.get(key)
  if hit is None:
    hit = table[key] = make()
  return hit


def _jvp_jaxpr(closed, diff):
  """The JVP of ``closed`` for the inputs with a tangent (``diff``): a jaxpr of the primals
  and those tangents giving the outputs and their nonzero tangents, and which those are
  (a tangent that is a symbolic zero stays one, as in JAX)."""
  avals = closed.in_avals
  n = len(avals)
  nonzero = []

  def fun(*args):
    it = iter(args[n:])
    tangents = [next(it) if d else ad.Zero(ad.tangent_aval(a)) for a, d in zip(avals, diff)]
    outs, out_tangents = ad.jvp_flat(functools.partial(core.eval_jaxpr, closed.jaxpr,
                                                       closed.consts),
                                     list(args[:n]), tangents, instantiate_zeros=False)
    nonzero[:] = [type(t) is not ad.Zero for t in out_tangents]
    return outs + [t for t in out_tangents if type(t) is not ad.Zero]
  jvp = staging.trace_to_jaxpr(
      fun, list(avals) + [ad.tangent_aval(a) for a, d in zip(avals, diff) if d])
  return jvp, tuple(nonzero)


def _jit_jvp(primals, tangents, *, jaxpr, name):
  # The call of the jaxpr's JVP: under linearize, the partial-eval rule below splits it
  # into a call of the primal work and a staged call of the tangent work, as JAX does.
  diff = tuple(type(t) is not ad.Zero and dtypes.has_tangent(core.get_aval(p).dtype)
               for p, t in zip(primals, tangents))
  jvp, nonzero = _derive(jaxpr, ("jvp", diff), lambda: _jvp_jaxpr(jaxpr, diff))
  ts = [ad.instantiate(t) for t, d in zip(tangents, diff) if d]
  outs = call_jaxpr(jvp, [*map(_operand, primals), *ts], name)
  n = len(jaxpr.out_avals)
  it = iter(outs[n:])
  return outs[:n], [next(it) if nz else ad.Zero(ad.tangent_aval(a))
                    for a, nz in zip(jaxpr.out_avals, nonzero)]


ad.jvp_rules[jit_p] = _jit_jvp
core.param_order[jit_p] = ("name", "jaxpr")


def _jit_partial_eval(trace, args, unknowns, params):
  # known operands only: a call now; the rest: a staged call taking the residuals
  jaxpr, name = params["jaxpr"], params["name"]
  known, unknown, out_unknowns, n_res = _derive(
      jaxpr, ("partial_eval", tuple(unknowns)),
      lambda: pe.partial_eval_jaxpr(jaxpr, unknowns))
  with core.set_current_trace(trace.known):
    k_outs = call_jaxpr(known, [x for x, u in zip(args, unknowns) if not u], name)
  n_known = len(k_outs) - n_res
  u_outs = trace.bind_unknown(jit_p, *k_outs[n_known:],
                              *[x for x, u in zip(args, unknowns) if u],
                              jaxpr=unknown, name=name)
  k_it, u_it = iter(k_outs[:n_known]), iter(u_outs)
  return [next(u_it) if u else next(k_it) for u in out_unknowns]


pe.partial_eval_rules[jit_p] = _jit_partial_eval


def _jit_transpose(cts, *args, jaxpr, name):
  # A call in a linear jaxpr (a rule staged a jitted function of tangents): the call
  # of its transpose, which takes the non-linear operands and the cotangents.
  linear = tuple(ad.is_undefined(a) for a in args)
  transposed = _derive(jaxpr, ("transpose", linear), lambda: ad.transpose_jaxpr(jaxpr, linear))
  operands = [a for a in args if not ad.is_undefined(a)] + [ad.instantiate(c) for c in cts]
  outs = iter(call_jaxpr(transposed, operands, name))
  return [next(outs) if lin else None for lin in linear]


ad.transpose_rules[jit_p] = _jit_transpose


# -- batching: vmap of a call batches its jaxpr once (cached) and calls the result, so
# the jaxpr keeps the nested `jit` as JAX prints it.
def _jit_batching(axis_data, vals, dims, *, jaxpr, name):
  batched, out_dims = batching.batch_jaxpr(
      jaxpr, axis_data, dims, batched_avals=[core.get_aval(v) for v in vals])
  return call_jaxpr(batched, vals, name), out_dims


batching.axis_batching_rules[jit_p] = _jit_batching


# -- JAX's other call primitives: ``closed_call`` (a ClosedJaxpr) and ``call`` (a Jaxpr
# without consts), the ``call_jaxpr`` param applied to the operands. jaxlite's own code
# stages ``jit``; these serve libraries that bind them or look for them in jaxprs.
def _define_call(name, opened):
  prim = Primitive(name)
  prim.multiple_results = True
  closed = (lambda j: core.ClosedJaxpr(j, [])) if opened else (lambda j: j)
  prim.def_abstract_eval(lambda *avals, call_jaxpr: list(closed(call_jaxpr).out_avals))

  def jvp(primals, tangents, *, call_jaxpr):
    c = closed(call_jaxpr)
    fun = functools.partial(core.eval_jaxpr, c.jaxpr, c.consts)
    return ad.jvp_call_flat(fun, primals, tangents)

  def transpose(cts, *args, call_jaxpr):
    linear = [ad.is_undefined(a) for a in args]
    transposed = ad.transpose_jaxpr(closed(call_jaxpr), linear)
    operands = [a for a in args if not ad.is_undefined(a)] + [ad.instantiate(c) for c in cts]
    outs = iter(closed_call_p.bind(*operands, call_jaxpr=transposed))
    return [next(outs) if lin else None for lin in linear]

  def batch(axis_data, vals, dims, *, call_jaxpr):
    batched, out_dims = batching.batch_jaxpr(closed(call_jaxpr), axis_data, dims)
    return closed_call_p.bind(*vals, call_jaxpr=batched), out_dims

  ad.jvp_rules[prim] = jvp
  ad.transpose_rules[prim] = transpose
  batching.axis_batching_rules[prim] = batch
  return prim, closed


closed_call_p, _ = _define_call("closed_call", opened=False)
call_p, closed_of_call = _define_call("call", opened=True)


def closed_call(closed, *args):
  """``closed`` (a ClosedJaxpr) applied to ``args`` as one ``closed_call`` equation."""
  return closed_call_p.bind(*args, call_jaxpr=closed)


def composite(decomposition, name, version=0):
  """Decorator marking ``decomposition`` as a named composite op. XLA may swap in a
  fused kernel for it; jaxlite always runs the decomposition."""

  @functools.wraps(decomposition)
  def wrapped(*args, **kwargs):
    return decomposition(*args, **kwargs)

  wrapped.composite_name, wrapped.composite_version = name, version
  return wrapped


# -- optimization_barrier: the identity, as one equation the compiler may not see through
optimization_barrier_p = core.Primitive("optimization_barrier")
optimization_barrier_p.multiple_results = True
optimization_barrier_p.def_abstract_eval(lambda *avals: list(avals))
ad.deflinear2(optimization_barrier_p, lambda cts, *_: optimization_barrier_p.bind(
    *[ad.instantiate(ct) for ct in cts]))
batching.batching_rules[optimization_barrier_p] = lambda vals, dims: (
    optimization_barrier_p.bind(*vals), list(dims))


def optimization_barrier(operand, /):
  """The identity on a pytree of arrays, staged as one ``optimization_barrier`` equation.

  As in JAX, it keeps XLA from moving computation across it (what ``checkpoint`` relies
  on to stop common-subexpression elimination from undoing rematerialisation). XLA's CPU
  compiler turns it into scheduling constraints before fusion, so it does not stop, e.g.,
  ``a * b`` and ``+ c`` from contracting into one FMA. Tier 0 returns the operands.
  """
  leaves, treedef = tree_flatten(operand)
  return tree_unflatten(treedef, optimization_barrier_p.bind(*map(_operand, leaves)))


# -- library functions that JAX decorates with ``jax.jit``
def _trace_config():
  """The options a traced library function's jaxpr depends on, besides its avals."""
  return (config.jax_enable_x64, config_lib.numpy_dtype_promotion(),
          config_lib.numpy_rank_promotion(), config.jax_default_matmul_precision)


def staged(fun=None, *, static_argnames=(), name=None):
  """Decorate a library function that JAX decorates with ``jax.jit`` so that it is staged
  as JAX stages it: under a trace it is one ``jit`` equation (printed
  ``jit[name=...]``, its jaxpr traced once per argument types and options), and eagerly
  on a device one executable (where XLA keeps the intermediates of one program: float16
  math in float32 on a TPU). Eagerly on the host it runs as written, the same NumPy
  kernels one by one. Arguments named in ``static_argnames`` are part of the cache key;
  defaults not passed are constants of the jaxpr, as in JAX. The jaxpr's operands are the
  positional arguments in order, then the keyword ones sorted by name, as in JAX."""
  if fun is None:
    return functools.partial(staged, static_argnames=static_argnames, name=name)
  signature = inspect.signature(fun)
  label = name or fun.__name__
  cache = {}

  @functools.wraps(fun)
  def wrapper(*args, **kwargs):
    if core._context.trace is core.eval_trace and core.eval_trace.device is None:
      return fun(*args, **kwargs)
    arguments = signature.bind(*args, **kwargs).arguments
    # the arguments passed: positional ones in order, then keywords by name, as JAX's
    # jit flattens (args, kwargs) (its operands come in that order)
    names = tuple(arguments)[:len(args)] + tuple(sorted(kwargs))
    static = tuple((k, v) for k, v in arguments.items() if k in static_argnames)
    leaves, tree = tree_flatten([arguments[k] for k in names if k not in static_argnames])
    # NumPy and Python values enter at their canonical dtypes, as jit's arguments do in JAX:
    # a float64 array otherwise reaches the jaxpr's rules beside the float32 its aval says
    leaves = [_operand(x) for x in leaves]
    avals = tuple(core.get_aval(x) for x in leaves)
    key = (names, tree, avals, static, _trace_config())
    entry = cache.get(key)
    if entry is None:
      out_trees = []

      def flat(*inner):
        values = iter(tree_unflatten(tree, inner))
        given = dict(static)
        bound = inspect.BoundArguments(signature, {
            k: given[k] if k in given else next(values) for k in names})
        outs, out_tree = tree_flatten(fun(*bound.args, **bound.kwargs))
        out_trees.append(out_tree)
        return outs
      closed = staging.trace_to_jaxpr(flat, avals)
      entry = cache[key] = (closed, out_trees[0])
    closed, out_tree = entry
    return tree_unflatten(out_tree, call_jaxpr(closed, leaves, label))
  return wrapper
