"""The part of JAX's ``jax._src.xla_bridge`` that libraries read: which backends exist yet.

chex's ``set_n_cpu_devices`` reads ``jax._src.xla_bridge._backends`` to refuse changing the
CPU device count after the backends were created. jaxlite fixes its CPU device count when
the devices are first used (``backends/cpu_devices.py``), so that moment is when its 'cpu'
backend counts as created.
"""
from jaxlite._src import compiler
from jaxlite._src.backends import cpu_devices


def _created_backends() -> dict:
  """``{platform: Backend}`` for the backends created so far: 'cpu' once its device count
  is fixed, else nothing."""
  return {"cpu": compiler.Backend("cpu")} if cpu_devices._cpu_count else {}


def __getattr__(name):
  # computed on each read: the answer changes when the devices are first used
  if name == "_backends":
    return _created_backends()
  raise AttributeError(f"jaxlite does not provide jax._src.xla_bridge.{name}: only "
                       "_backends (which backends were created) is served.")
