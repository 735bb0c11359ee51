"""Backends: platforms and devices, and the table of eager implementations the EvalTrace
dispatches to on the host."""
import logging

from jaxlite._src.core import array
from jaxlite._src.core import core
from jaxlite._src.backends import platforms
from jaxlite._src.backends.platforms import (Backend, Device, backend, backends,
                                             default_backend, default_device, devices,
                                             local_devices)
from jaxlite._src.backends.numpy.impls import impl_rules as numpy_impl_rules
# the modules that fill the NumPy backend's table, one family each
from jaxlite._src.backends.numpy import callback_impls as _numpy_callbacks  # noqa: F401
from jaxlite._src.backends.numpy import control_flow_impls as _numpy_control_flow  # noqa: F401
from jaxlite._src.backends.numpy import bits_impls as _numpy_bits  # noqa: F401
from jaxlite._src.backends.numpy import indexing as _numpy_indexing  # gather/scatter rows
from jaxlite._src.backends.numpy import linalg_impls as _numpy_linalg  # noqa: F401
from jaxlite._src.backends.numpy import parallel as _numpy_parallel  # collectives' rows
from jaxlite._src.backends.numpy import rng_impls as _numpy_rng  # noqa: F401
from jaxlite._src.backends.numpy import sorting_impls as _numpy_sorting  # noqa: F401
from jaxlite._src.backends.numpy import special_impls as _numpy_special  # noqa: F401
from jaxlite._src.backends.numpy import subnormals as _numpy_subnormals

# over every family's rows: the kernels flush subnormal operands where XLA's results show it
_numpy_subnormals.install(numpy_impl_rules)

logger = logging.getLogger("jaxlite")


xla_state = {}


def xla_available(pool_per_cpu: bool = False) -> bool:
  """Whether an XLA plugin loads (checked once; the answer is cached). ``pool_per_cpu``:
  should this check create the process's XLA client, its pools get a thread per CPU of
  the process (``xla.client``)."""
  if "available" not in xla_state:
    try:
      from jaxlite._src.backends import xla
      xla_state["available"] = xla.is_available(pool_per_cpu)
    except Exception as e:  # a missing or broken plugin means tier 0 only
      xla_state["available"] = False
      xla_state["reason"] = f"{type(e).__name__}: {e}"
  return xla_state["available"]


assert core.EvalTrace.impls is numpy_impl_rules   # tier 0's table is the eager table


def _xla_device_put(value, client=None):
  from jaxlite._src.backends import xla   # loads the PJRT plugin: only when first needed
  return (client or xla.client()).put(value)


def _device_of(buf):
  """The Device holding PJRT buffer ``buf``."""
  owner = platforms.backend_of(buf.client)
  found = (owner or backend("cpu")).devices()
  return found[buf.device_index() if len(found) > 1 else 0]


def _resident(client) -> bool:
  """Whether the buffers of PJRT ``client`` are a resident backend's memory (an
  accelerator's, or the CPU's under jaxlite_cpu_backend='pjrt'): reading one is a
  transfer, and its Array stays there."""
  owner = platforms.backend_of(client)
  return owner is not None and owner.resident


array.placement.update(device_put=_xla_device_put, default_device=default_device,
                       devices=devices, device_of=_device_of, resident=_resident)
try:
  platforms.retarget()
except RuntimeError as e:   # a bad jax_platforms: said again where devices are asked for
  logger.debug("no eager device: %s", e)
