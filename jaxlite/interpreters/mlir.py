"""``jax.interpreters.mlir``: lowering rules of primitives, into jaxlite's own table.

``register_lowering(prim, rule)`` takes a rule written for JAX, ``rule(ctx, *operands,
**params)``. The rules a library can write for jaxlite are made of ``lower_fun(fun,
multiple_results)``: ``fun`` (jax operations on the operands) is traced on the operands'
types and emitted in place of the primitive, and ``emit_python_callback``, a host function
called when the program runs; both run on the XLA tier and, compiled to NumPy, on tier 0.
jaxlite writes StableHLO text with its own emitter, so a rule that builds MLIR with JAX's
``ir``/``hlo`` bindings cannot run here (tier 0 then runs the primitive's ``impl``).
"""
from jaxlite._src.backends.lowering import (
    LoweringRuleContext as LoweringRuleContext,
    ModuleContext as ModuleContext,
    emit_python_callback as emit_python_callback,
    lower_fun as lower_fun,
    register_lowering as register_lowering,
)
