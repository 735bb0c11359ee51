"""``jax.interpreters.ad``: differentiation rules of primitives.

``primitive_jvps`` and ``primitive_transposes`` are jaxlite's own tables, and its rules
are written as JAX's are:

- a JVP rule is ``rule(primals, tangents, **params) -> (primal_out, tangent_out)``, run
  with the enclosing trace current; a tangent may be ``Zero(aval)``, a symbolic zero, in
  and out (``instantiate_zeros`` makes it an array); a ``multiple_results`` primitive
  takes and returns lists;
- a transpose rule is ``rule(cts, *args, **params) -> cotangents``, one per operand, with
  ``UndefinedPrimal(aval)`` standing for the operands it is linear in; None or ``Zero``
  where an operand gets no cotangent. It is not called when every cotangent is zero.
"""
from jaxlite._src.transforms.ad import (
    JVPTrace as JVPTrace,
    JVPTracer as JVPTracer,
    UndefinedPrimal as UndefinedPrimal,
    Zero as Zero,
    add_jaxvals as add_jaxvals,
    add_jaxvals_p as add_jaxvals_p,
    add_tangents as add_tangents,
    backward_pass as backward_pass,
    defbilinear as defbilinear,
    defjvp as defjvp,
    defjvp2 as defjvp2,
    defjvp_zero as defjvp_zero,
    deflinear as deflinear,
    deflinear2 as deflinear2,
    get_primitive_transpose as get_primitive_transpose,
    instantiate_zeros as instantiate_zeros,
    is_undefined_primal as is_undefined_primal,
    primitive_jvps as primitive_jvps,
    primitive_transposes as primitive_transposes,
    zeros_like_aval as zeros_like_aval,
)
