"""Backends: devices, and the table of eager implementations the EvalTrace dispatches to."""
from jaxlite._src import array
from jaxlite._src import core
from jaxlite._src.backends.cpu_devices import cpu_device_count
from jaxlite._src.backends.numpy.impls import impl_rules as numpy_impl_rules
# the modules that fill the NumPy backend's table, one family each
from jaxlite._src.backends.numpy import callback_impls as _numpy_callbacks  # noqa: F401
from jaxlite._src.backends.numpy import control_flow_impls as _numpy_control_flow  # noqa: F401
from jaxlite._src.backends.numpy import extra_impls as _numpy_extra  # noqa: F401
from jaxlite._src.backends.numpy import indexing as _numpy_indexing  # gather/scatter rows
from jaxlite._src.backends.numpy import linalg_impls as _numpy_linalg  # noqa: F401
from jaxlite._src.backends.numpy import parallel as _numpy_parallel  # collectives' rows
from jaxlite._src.backends.numpy import rng_impls as _numpy_rng  # noqa: F401


class Device:
  """A device a backend computes on (``jax.Device``)."""
  __slots__ = ("id", "platform", "device_kind")

  def __init__(self, id: int, platform: str, device_kind: str):
    self.id = id
    self.platform = platform
    self.device_kind = device_kind

  def __repr__(self):
    return f"{self.platform.capitalize()}Device(id={self.id})"

  def __eq__(self, other):
    return isinstance(other, Device) and (self.platform, self.id) == (other.platform, other.id)

  def __hash__(self):
    return hash((self.platform, self.id))


_NAMES = {"cuda": "gpu", "rocm": "gpu"}

_cpu_devices: list = []


def _cpus() -> list:
  if not _cpu_devices:
    _cpu_devices.extend(Device(i, "cpu", "cpu") for i in range(cpu_device_count()))
  return list(_cpu_devices)


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


def _plugin_devices() -> list:
  """The devices the XLA plugin offers (a GPU plugin's GPUs), else the host CPU."""
  if not xla_available():
    return _cpus()
  from jaxlite._src.backends import xla
  platform = _NAMES.get(xla.platform(), xla.platform())
  if platform == "cpu":
    return _cpus()
  # JAX names GPU devices CudaDevice(id=...)
  return [Device(d.id, "cuda" if platform == "gpu" else platform, d.device_kind)
          for d in xla.devices()]


def default_device() -> Device:
  return devices()[0]


def devices(backend=None) -> list:
  """The devices of ``backend`` (default: the default backend), as the plugins offer them."""
  if backend in ("cpu", "numpy"):
    return _cpus()
  if backend not in (None, "gpu", "cuda"):
    raise RuntimeError(f"Unknown backend {backend!r}: use 'cpu' or 'gpu'.")
  found = _plugin_devices()
  if backend in ("gpu", "cuda") and found[0].platform == "cpu":
    raise RuntimeError("Unknown backend: 'gpu' requested, but no GPU plugin works here. "
                       "Install one with pip install -e '.[cuda]' on a machine with a GPU.")
  return found


def default_backend() -> str:
  """The platform of the default backend: 'gpu' when a GPU plugin works, else 'cpu'."""
  return "gpu" if devices()[0].platform != "cpu" else "cpu"


assert core.EvalTrace.impls is numpy_impl_rules   # tier 0's table is the eager table


def _xla_device_put(value):
  from jaxlite._src.backends import xla   # loads the PJRT plugin: only when first needed
  return xla.device_put(value)


array.placement.update(device_put=_xla_device_put, default_device=default_device,
                       devices=devices)
