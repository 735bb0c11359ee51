"""``jax.check_tracer_leaks``: when a jit or vmap trace ends, no tracer of it may be
referenced any more (stored in a global, a list, an object outside the function).

The check is JAX's: with ``jax_check_tracer_leaks`` on, the end of each trace collects
garbage and raises if tracers of that trace are still alive, naming each with its
referrers. It costs a full garbage collection per trace, so it only runs under the flag.
"""
from __future__ import annotations

import gc
import types

from jaxlite._src.core import core
from jaxlite._src.base.config import config


def _referrers(tracer, leaked) -> str:
  """One line per object holding ``tracer``, besides the checker's own list and frame."""
  lines = []
  for holder in gc.get_referrers(tracer):   # before any closure of ours refers to it
    if holder is leaked or isinstance(holder, types.FrameType):
      continue
    where = f"<{type(holder).__name__} {id(holder)}>"
    if isinstance(holder, (list, tuple)):
      where += f"[{[id(x) for x in holder].index(id(tracer))}]"
    lines.append(f"<{type(tracer).__name__} {id(tracer)}> is referred to by {where}")
  return "\n".join(lines)


def check_no_leaks(trace: core.Trace, what: str) -> None:
  """Raise JAX's leak error if tracers of ``trace``, which has ended, are still alive.

  ``what`` says where the tracers came from (the function and transformation), shown after
  each leaked tracer. Does nothing unless ``jax_check_tracer_leaks`` is on.

  Raises
  ------
  Exception
    ``Leaked trace <TraceClass>. Leaked tracer(s): ...``, the class and message JAX raises.
  """
  if not config.jax_check_tracer_leaks:
    return
  gc.collect()
  leaked = [t for t in gc.get_objects()
            if isinstance(t, core.Tracer) and getattr(t, "_trace", None) is trace]
  if leaked:
    details = ""
    for tracer in leaked:
      details += f"{tracer!r}\n{what}\n{_referrers(tracer, leaked)}\n"
    raise Exception(f"Leaked trace {type(trace).__name__}. Leaked tracer(s):\n\n{details}")
