"""``jax_debug_nans`` and ``jax_debug_infs``: stop at the primitive that made a NaN or an inf.

With either flag on, every eagerly run primitive checks its floating outputs and raises
FloatingPointError naming itself ("invalid value (nan) encountered in log"), and a jitted
function whose output holds one is run again op by op, with jit disabled, so that the
eager check names the primitive, as JAX's de-optimized re-run does. The checks are the
eager trace's checker (``EvalTrace.install``) and jit's output check
(``jit.set_output_check``), set only while a flag is on, so the hot paths pay nothing.

``jax_no_execution`` uses the same two hooks: while it is on, an eager primitive raises
RuntimeError instead of running, and so does a jitted function's call once compiled
(jit's ``_execute`` refuses to run it while an output check is set and the flag is on).
"""
import logging

import numpy as np

from jaxlite._src.core import core
from jaxlite._src import jit
from jaxlite._src.base import tree
from jaxlite._src.core.array import Array
from jaxlite._src.base.config import config

logger = logging.getLogger("jaxlite")


def _bad_value(values):
  """'nan' or 'inf' if a flag that is on finds one in ``values`` (Arrays), else None."""
  for x in values:
    if not isinstance(x, Array) or x.dtype.kind not in "fc":
      continue
    value = np.asarray(x._value)
    if config.jax_debug_nans and np.isnan(value).any():
      return "nan"
    if config.jax_debug_infs and np.isinf(value).any():
      return "inf"
  return None


class CheckedBackend:
  """An eager backend that runs primitives on ``inner`` and checks their outputs."""

  def __init__(self, inner):
    self.inner = inner

  def apply_primitive(self, prim, args, params):
    out = self.inner.apply_primitive(prim, args, params)
    bad = _bad_value(out if prim.multiple_results else [out])
    if bad is not None:
      raise FloatingPointError(f"invalid value ({bad}) encountered in {prim.name}")
    return out


def _no_execution_message(name):
  return (f"JAX tried to execute function {name}, but the no_execution config option is "
          "set")


class RefusingBackend:
  """An eager backend that runs nothing: ``jax_no_execution`` is on."""

  def __init__(self, inner):
    self.inner = inner

  def apply_primitive(self, prim, args, params):
    raise RuntimeError(_no_execution_message(f"jit({prim.name})"))


def _check_jit_output(fun, args, kwargs, out):
  if not (config.jax_debug_nans or config.jax_debug_infs):
    return out
  bad = _bad_value(tree.tree_leaves(out))
  if bad is None:
    return out
  logger.warning("Invalid %s value encountered in the output of a jax.jit function. "
                 "Calling the de-optimized version.", bad)
  with config.override("jax_disable_jit", True):
    fun.fun(*args, **kwargs)   # the eager check raises, naming the primitive
  raise FloatingPointError(
      f"invalid value ({bad}) encountered in the output of jit({fun._name}), but not when "
      "running it op by op without jit: the compiled code computed it differently.")


def _update(_value=None):
  checking = bool(config.jax_debug_nans or config.jax_debug_infs)
  on = checking or bool(config.jax_no_execution)
  core.eval_trace.install(checker=RefusingBackend if config.jax_no_execution else
                          CheckedBackend if checking else None)
  core.block_direct_kernels("debug_nans", on)
  jit.set_output_check(_check_jit_output if on else None)


config.watch("jax_debug_nans", _update)
config.watch("jax_debug_infs", _update)
config.watch("jax_no_execution", _update)
_update()   # JAX_DEBUG_NANS / JAX_DEBUG_INFS set in the environment
