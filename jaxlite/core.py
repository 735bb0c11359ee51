"""The public part of JAX's core (``jax.core``): tracers and abstract values.

Libraries use it for ``isinstance(x, jax.core.Tracer)`` (is this value being traced?) and
to evaluate jaxprs.
"""
from jaxlite._src.core import (
    AbstractValue as AbstractValue,
    Atom as Atom,
    Primitive as Primitive,
    ShapedArray as ShapedArray,
    Trace as Trace,
    Tracer as Tracer,
    eval_jaxpr as eval_jaxpr,
)
from jaxlite._src.api import ensure_compile_time_eval as ensure_compile_time_eval
