"""Jaxpr -> jaxpr rewrites run before compilation, one module each."""
from jaxlite._src.core import core
from jaxlite._src.passes import (algebraic, cse, dce, constant_folding, inline,
                                 physicalize)


def optimize(closed):
  """The pipeline jit runs: inline nested calls, compute on the data of PRNG keys, fold
  constants, simplify, share and prune."""
  # (at the eager trace: a program lowered while a user's function is traced, as
  # nnx.tabulate lowers its modules' calls, computes nothing into that trace)
  with core.set_current_trace(core.eval_trace):
    closed = inline.run(closed)
    closed = physicalize.run(closed)
    closed = constant_folding.run(closed)
    closed = algebraic.run(closed)
    closed = cse.run(closed)
    return dce.run(closed)
