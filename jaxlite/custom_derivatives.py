"""``jax.custom_derivatives``: functions with their own differentiation rules, and what
their rules see (``SymbolicZero``, ``CustomVJPPrimal``)."""
from jaxlite._src.api import closure_convert as closure_convert
from jaxlite._src.api import custom_gradient as custom_gradient
from jaxlite._src.lax.custom_derivatives import (
    CustomVJPPrimal as CustomVJPPrimal,
    custom_jvp as custom_jvp,
    custom_jvp_call_p as custom_jvp_call_p,
    custom_vjp as custom_vjp,
    custom_vjp_call_p as custom_vjp_call_p,
    custom_vjp_primal_tree_values as custom_vjp_primal_tree_values,
    linear_call as linear_call,
    zero_from_primal as zero_from_primal,
)
from jaxlite._src.transforms.ad import SymbolicZero as SymbolicZero
