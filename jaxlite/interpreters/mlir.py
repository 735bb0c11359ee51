"""``jax.interpreters.mlir``: lowering rules of primitives, into jaxlite's own table.

``register_lowering(prim, rule)`` takes a rule written for JAX, ``rule(ctx, *operands,
**params)``. The one a library can write for jaxlite is ``lower_fun(fun,
multiple_results)``: ``fun`` (jax operations on the operands) is traced on the operands'
types and emitted in place of the primitive, on the XLA tier and, compiled to NumPy, on
tier 0. jaxlite writes StableHLO text with its own emitter, so a rule that builds MLIR
with JAX's ``ir``/``hlo`` bindings cannot run here.
"""
from jaxlite._src.backends.lowering import (
    LoweringRuleContext as LoweringRuleContext,
    lower_fun as lower_fun,
    register_lowering as register_lowering,
)
