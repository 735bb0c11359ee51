"""``jax.experimental.hijax``: JAX's API for high-level types (see ``jaxlite._src.hijax``
for how jaxlite runs them).
"""
from jaxlite._src.hijax import (  # noqa: F401
    AbstractRef as AbstractRef,
    AbstractValue as AbstractValue,
    AvalMutableQDD as AvalMutableQDD,
    AvalQDD as AvalQDD,
    HiPrimitive as HiPrimitive,
    HiType as HiType,
    MutableHiType as MutableHiType,
    ShapedArray as ShapedArray,
    Zero as Zero,
    aval_method as aval_method,
    aval_property as aval_property,
    control_flow_allowed_effects as control_flow_allowed_effects,
    instantiate_zeros as instantiate_zeros,
    is_undefined_primal as is_undefined_primal,
    register_hitype as register_hitype,
)
