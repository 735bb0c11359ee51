"""The ``jit`` primitive: a call of a closed jaxpr, printed ``jit[name=f jaxpr={...}]``.

``jit`` (``_src/jit.py``) binds it for a nested jitted call; its rules are here, its
tier-0 implementation (the compiled jaxpr) in ``backends/numpy/control_flow_impls.py``
and its lowering in ``backends/xla/stablehlo.py``.
"""
from __future__ import annotations

import functools

from jaxlite._src import core
from jaxlite._src.core import Primitive, Tracer
from jaxlite._src.passes import inline as inline_pass
from jaxlite._src.transforms import ad
from jaxlite._src.transforms import batching

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


def _jit_jvp(primals, tangents, *, jaxpr, name):
  # Differentiate through the call by evaluating its jaxpr under a nested JVP trace.
  fun = functools.partial(core.eval_jaxpr, jaxpr.jaxpr, jaxpr.consts)
  return ad.jvp_flat(fun, primals, [ad.instantiate(t) for t in tangents])


ad.jvp_rules[jit_p] = _jit_jvp
core.param_order[jit_p] = ("name", "jaxpr")


# -- batching: vmap of a call batches its jaxpr once (cached) and calls the result, so
# the jaxpr keeps the nested `jit` as JAX prints it.
def _jit_batching(axis_data, vals, dims, *, jaxpr, name):
  batched, out_dims = batching.batch_jaxpr(jaxpr, axis_data, dims)
  return call_jaxpr(batched, vals, name), out_dims


batching.axis_batching_rules[jit_p] = _jit_batching
