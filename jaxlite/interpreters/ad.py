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
from jaxlite._src.private_ad import *  # noqa: F401,F403  (the public names, __all__)
