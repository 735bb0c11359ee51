"""The part of JAX's private ``jax._src.core`` that libraries use, served under that name
by the alias: numpyro's MCMC asks ``trace_state_clean()`` (is no transformation tracing
now?) before caching functions that could close over tracers."""
from jaxlite._src import core


def trace_state_clean() -> bool:
  """True when no transformation is tracing in this thread: the current trace is the
  eager one."""
  return core.current_trace() is core.eval_trace


def __getattr__(name):
  raise AttributeError(f"jaxlite does not provide jax._src.core.{name}: only "
                       "trace_state_clean is served.")
