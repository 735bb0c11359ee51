"""How many CPU devices the process has (``jax_num_cpu_devices``), fixed on first use.

Both tiers read it: the NumPy tier lists that many logical CPU devices, and the XLA tier
creates its PJRT CPU client with that ``cpu_device_count``.
"""
import os
import re

from jaxlite._src.base.config import config

_cpu_count: list = []   # the count in use, fixed by the first call to cpu_device_count


def cpu_device_count() -> int:
  """How many CPU devices this process has: ``jax_num_cpu_devices`` when set, else
  ``XLA_FLAGS=--xla_force_host_platform_device_count=N``, else 1. Fixed on first use,
  as in JAX: the PJRT client is created with it once per process."""
  if _cpu_count:
    return _cpu_count[0]
  n = config.jax_num_cpu_devices
  if n is None or n < 0:
    found = re.search(r"--xla_force_host_platform_device_count=(\d+)",
                      os.environ.get("XLA_FLAGS", ""))
    n = int(found.group(1)) if found else 1
  if n < 1:
    raise ValueError(f"jax_num_cpu_devices must be at least 1, got {n}.")
  _cpu_count.append(n)
  return n


def _check_count_change(value):
  if _cpu_count and value not in (-1, None, _cpu_count[0]):
    raise RuntimeError(f"jax_num_cpu_devices cannot change to {value} after the devices "
                       f"were first used (this process has {_cpu_count[0]}); set it "
                       "before any computation, or in a new process.")


config.define("jax_num_cpu_devices", -1,
              "Number of CPU devices (-1: XLA_FLAGS' "
              "--xla_force_host_platform_device_count, else 1). Read once, when the "
              "devices are first used.", env_var="JAX_NUM_CPU_DEVICES", parse=int,
              on_change=_check_count_change)

config.define("jax_cpu_enable_async_dispatch", True,
              "Only applies to non-parallel computations. If False, run computations "
              "inline without async dispatch: an XLA call on the CPU returns once its "
              "outputs are computed. Read once, when the XLA client is created.",
              env_var="JAX_CPU_ENABLE_ASYNC_DISPATCH", validate=bool)
