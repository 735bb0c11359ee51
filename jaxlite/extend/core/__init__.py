"""``jax.extend.core``: primitives and jaxprs, as libraries define and rewrite them.

``Primitive`` is the class of every jaxlite primitive: ``Primitive(name)``, then
``def_impl`` (eager evaluation on concrete arrays), ``def_abstract_eval`` (the shape rule)
and the rules in ``jax.interpreters.ad``, ``batching`` and ``mlir``. A primitive with side
effects gives ``def_effectful_abstract_eval`` a rule that also returns instances of its
subclasses of ``Effect``.
"""
from jaxlite._src.base.api_util import DebugInfo as DebugInfo
from jaxlite._src.core.core import (
    ClosedJaxpr as ClosedJaxpr,
    DropVar as DropVar,
    Jaxpr as Jaxpr,
    JaxprEqn as JaxprEqn,
    Literal as Literal,
    Primitive as Primitive,
    TraceTag as TraceTag,
    Var as Var,
    concrete_or_error as concrete_or_error,
    eval_jaxpr as eval_jaxpr,
    find_top_trace as find_top_trace,
    gensym as gensym,
    get_opaque_trace_state as get_opaque_trace_state,
    jaxpr_as_fun as jaxpr_as_fun,
    jaxprs_in_params as jaxprs_in_params,
    jaxpr_subjaxprs as subjaxprs,
    mapped_aval as mapped_aval,
    new_jaxpr_eqn as new_jaxpr_eqn,
    no_effects as no_effects,
    primal_dtype_to_tangent_dtype as primal_dtype_to_tangent_dtype,
    set_current_trace as set_current_trace,
    take_current_trace as take_current_trace,
    unmapped_aval as unmapped_aval,
    valid_jaxtype as valid_jaxtype,
)
from jaxlite._src.api import ensure_compile_time_eval as ensure_compile_time_eval
from jaxlite._src.base.effects import Effect as Effect

Effects = frozenset

# JAX's jax.extend.core imports its primitives module, so `import jax.extend as jex` then
# `jex.core.primitives.jit_p` works (distrax's function inversion reads it so).
from jaxlite.extend.core import primitives as primitives  # noqa: E402,F401
