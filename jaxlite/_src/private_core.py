"""JAX's private ``jax._src.core`` as libraries use it, served under that name by the
alias: jaxlite's core where it has JAX's names (``ShapedArray``, ``Tracer``, ...; flax),
``physical_aval`` of extended dtypes (flax's fp8 rules), and ``trace_state_clean()``, which numpyro's MCMC asks (is no transformation tracing
now?) before caching functions that could close over tracers."""
from jaxlite._src.core import core
from jaxlite._src.core.extended import physical_aval, physical_element_aval  # noqa: F401


def trace_state_clean() -> bool:
  """True when no transformation is tracing in this thread: the current trace is the
  eager one."""
  return core.current_trace() is core.eval_trace


def __getattr__(name):
  # the rest is jaxlite's core, where it has JAX's name (ShapedArray, Tracer, Primitive, ...)
  if not name.startswith("__") and hasattr(core, name):
    return getattr(core, name)
  raise AttributeError(f"jaxlite does not provide jax._src.core.{name}.")
