"""Backends: devices, and the table of eager implementations the EvalTrace dispatches to."""
from jaxlite._src import core
from jaxlite._src.backends.numpy.impls import impl_rules as numpy_impl_rules
from jaxlite._src.backends.numpy import indexing as _numpy_indexing  # gather/scatter rows
from jaxlite._src.backends.numpy import parallel as _numpy_parallel  # collectives' rows


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


_CPU = Device(0, "cpu", "cpu")


def default_device() -> Device:
  return _CPU


def devices(backend=None) -> list:
  """The devices of ``backend`` (default: the default backend)."""
  if backend not in (None, "cpu", "numpy"):
    raise RuntimeError(f"Unknown backend {backend!r}: the available backends are 'cpu'.")
  return [_CPU]


def default_backend() -> str:
  """The platform name of the default backend ('cpu')."""
  return "cpu"


core.EvalTrace.impls = numpy_impl_rules
