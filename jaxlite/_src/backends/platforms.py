"""Platforms, their devices, and where eager computations run.

A ``Backend`` is one platform: the host CPU ('cpu'), or an accelerator reached through its
PJRT plugin ('tpu', 'gpu'). A *resident* backend keeps arrays in its PJRT buffers and runs
eager operations there, each primitive compiled once per shapes and params into a small
XLA executable (JAX's model): every accelerator is resident, and so is the CPU under
``jaxlite_cpu_backend='pjrt'``, which runs the accelerator path on any machine. Otherwise
the CPU keeps arrays in NumPy memory and runs eager operations with NumPy kernels.

The platforms are found once, from ``jax_platforms`` (``JAX_PLATFORMS``, say ``tpu,cpu``)
or else from the plugins installed: a TPU (``libtpu``), then a GPU (the CUDA plugin), then
the CPU. The first is the default backend. An accelerator's client is created when first
needed; where it cannot be and the platform was not named, the CPU takes over with a
warning, as in JAX.
"""
from __future__ import annotations

import logging
import threading
import warnings

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import errors
from jaxlite._src.base import transfer_guard
from jaxlite._src.core.array import (Array, committed_device, from_device, operand_rules,
                                placement)
from jaxlite._src.backends import plugins
from jaxlite._src.backends.cpu_devices import cpu_device_count
from jaxlite._src.base.config import config, _enum
from jaxlite._src.transforms import staging

logger = logging.getLogger("jaxlite")

config.define("jaxlite_cpu_backend", "numpy",
              "Where the CPU keeps arrays and runs eager ops: 'numpy' (NumPy memory and "
              "kernels, two tiers for jit) or 'pjrt' (XLA's CPU device, as an accelerator "
              "does: PJRT buffers, each eager op a cached XLA executable, jit on XLA).",
              env_var="JAXLITE_CPU_BACKEND", parse=str, validate=_enum("numpy", "pjrt"))

_REPR_NAMES = {"cpu": "CpuDevice", "gpu": "CudaDevice", "tpu": "TpuDevice"}


class Device:
  """A device a backend computes on (``jax.Device``).

  ``platform`` is 'cpu', 'gpu' or 'tpu'; ``client`` its backend. A TPU's device also has
  ``coords`` and ``core_on_chip`` (the attributes its plugin describes it with).
  """
  __slots__ = ("id", "platform", "device_kind", "client", "_pjrt", "__weakref__")
  process_index = host_id = task_id = 0

  def __init__(self, client, id: int, device_kind: str, pjrt=None):
    self.client, self.id, self.platform = client, id, client.platform
    self.device_kind = device_kind
    self._pjrt = pjrt   # the plugin's description of it (None: a host CPU device)

  @property
  def local_hardware_id(self):
    return None if self._pjrt is None else self._pjrt.local_hardware_id

  def __getattr__(self, name):
    # the plugin's own attributes: a TPU's coords and core_on_chip
    attributes = {} if self._pjrt is None else self._pjrt.attributes
    if name in attributes:
      return attributes[name]
    raise AttributeError(f"'{_REPR_NAMES.get(self.platform, 'Device')}' object has no "
                         f"attribute '{name}'")

  def memory_stats(self) -> dict | None:
    """The device allocator's statistics (``bytes_in_use``, ``bytes_limit``,
    ``peak_bytes_in_use``, ...), or None where there is none (the CPU)."""
    return None if self._pjrt is None else self._pjrt.memory_stats()

  def live_buffers(self) -> list:
    """The live arrays on this device."""
    return [x for x in self.client.live_arrays() if self in x.devices()]

  def default_memory(self) -> Memory:
    """The memory arrays on this device live in."""
    return Memory(self, "device")

  def addressable_memories(self) -> list:
    """The memories this device can address: jaxlite keeps arrays in the device's own
    ('device'; no pinned or unpinned host memory kinds)."""
    return [self.default_memory()]

  def memory(self, kind: str) -> Memory:
    """This device's memory of ``kind``."""
    if kind != "device":
      raise errors.JaxRuntimeError(
          f"INVALID_ARGUMENT: Could not find memory addressable by device {self.platform}. "
          f"Device {self.platform} can address the following memory kinds: device. Got "
          f"memory kind: {kind}")
    return self.default_memory()

  def __repr__(self):
    name = _REPR_NAMES.get(self.platform, "Device")
    if self.platform == "tpu" and self._pjrt is not None:
      attributes = self._pjrt.attributes
      coords = ",".join(map(str, attributes.get("coords", ())))
      return (f"{name}(id={self.id}, process_index={self.process_index}, "
              f"coords=({coords}), core_on_chip={attributes.get('core_on_chip', 0)})")
    return f"{name}(id={self.id})"

  def __eq__(self, other):
    return isinstance(other, Device) and (self.platform, self.id) == (other.platform, other.id)

  def __hash__(self):
    return hash((self.platform, self.id))


class Memory:
  """A memory a device addresses (``jax.Device.default_memory()``'s), of a ``kind``."""
  __slots__ = ("device", "kind")

  def __init__(self, device: Device, kind: str):
    self.device, self.kind = device, kind

  platform = property(lambda self: self.device.platform)
  process_index = property(lambda self: self.device.process_index)

  def addressable_by_devices(self) -> list:
    return [self.device]

  def __repr__(self):
    return f"{self.platform.upper()}_{self.kind.upper()}_{self.device.id}"

  def __str__(self):
    name = _REPR_NAMES.get(self.platform, "Device")   # (CpuDevice: CpuDeviceMemory)
    return (f"{name}Memory(id={self.device.id}, "
            f"process_index={self.process_index}, client={self.platform})")

  def __eq__(self, other):
    return isinstance(other, Memory) and (self.device, self.kind) == (other.device, other.kind)

  def __hash__(self):
    return hash((self.device, self.kind))


class Backend:
  """One platform's devices, and how computations reach them (JAX's ``Client``)."""

  def __init__(self, platform: str):
    self.platform = platform
    self._devices = None
    self._client = None
    self._lock = threading.Lock()
    self._eager: dict = {}   # (primitive, avals, params) -> (executable, out weak types)

  @property
  def resident(self) -> bool:
    """Whether arrays live in PJRT buffers and eager ops run as XLA executables."""
    return self.platform != "cpu" or config.jaxlite_cpu_backend == "pjrt"

  def pjrt_client(self):
    """The PJRT client of this platform (created on first use)."""
    client = self._client
    if client is None:
      from jaxlite._src.backends import xla
      client = self._client = (xla.client() if self.platform == "cpu" else
                               xla.accelerator_client(self.platform))
    return client

  @property
  def platform_version(self) -> str:
    if self.platform == "cpu":
      return "numpy" if not config.jaxlite_cpu_backend == "pjrt" else (
          self.pjrt_client().platform_version)
    return self.pjrt_client().platform_version

  @property
  def runtime_type(self) -> str:
    return "pjrt"

  def devices(self) -> list:
    if self._devices is None:
      with self._lock:
        if self._devices is None:
          if self.platform == "cpu":
            made = [Device(self, i, "cpu") for i in range(cpu_device_count())]
          else:
            made = [Device(self, d.id, d.device_kind, d)
                    for d in self.pjrt_client().devices]
          self._devices = made
    return list(self._devices)

  local_devices = devices

  def device_count(self) -> int:
    return len(self.devices())

  local_device_count = device_count

  def process_index(self) -> int:
    return 0

  def live_arrays(self) -> list:
    """The live Arrays whose value is on this platform."""
    import gc
    return [x for x in gc.get_objects() if type(x) is Array and not x.is_deleted()
            and any(d.platform == self.platform for d in x.devices())]

  def put(self, value, device: Device | None = None):
    """A buffer on ``device`` (default: the first) holding the host ``value``."""
    index = 0 if device is None else self.devices().index(device)
    return self.pjrt_client().put(np.asarray(value), index)

  def buffer_of(self, x, client):
    """``x`` (an Array or a host value) as a buffer of PJRT ``client``, transferring it
    where it lives elsewhere (the transfer guard watches values the user gave)."""
    if type(x) is Array:
      buf = x._buf
      if buf is not None and buf.client is client:
        return buf
      if buf is not None and buf.__class__ is not _Deleted:   # another platform's buffer
        if transfer_guard.active:
          transfer_guard.check("device_to_device", lambda: _describe(x))
        return client.put(buf.to_numpy())
      return x._to_device(client)
    if transfer_guard.active:
      transfer_guard.check("host_to_device", lambda: _describe(x))
    return client.put(np.asarray(x, core.get_aval(x).dtype))

  def adopt(self, x):
    """``x`` on this backend's first device, uncommitted: an Array held in host memory or
    by another platform is transferred (a guarded transfer); anything else is ``x``."""
    if type(x) is not Array:
      return x
    client = self.pjrt_client()
    buf = x._buf
    if buf is not None and buf.client is client:
      return x
    if buf is None or not self._holds_device_memory(buf.client):
      if transfer_guard.active:
        transfer_guard.check("host_to_device", lambda: _describe(x))
      value = x._value
    else:
      if transfer_guard.active:
        transfer_guard.check("device_to_device", lambda: _describe(x))
      value = buf.to_numpy()
    return from_device(client.put(np.asarray(value)), x.weak_type)

  def copy(self, x):
    """A new Array on ``x``'s device holding ``x``'s value, copied there."""
    buf = self.adopt(x)._buf
    return from_device(buf.copy_to_device(buf.device_index()), x.weak_type)

  @staticmethod
  def _holds_device_memory(client) -> bool:
    owner = backend_of(client)
    return owner is not None and owner.resident

  def apply_primitive(self, prim, args, params):
    """Run ``prim`` on this backend's first device: compiled once per primitive, operand
    signatures and params into an XLA executable, and dispatched without waiting for it
    (JAX's ``dispatch.apply_primitive``)."""
    try:
      client = self.pjrt_client()
    except RuntimeError as e:   # an accelerator found automatically that will not open
      if self.platform == "cpu" or self.platform in _named:
        raise
      _drop(self.platform, e)
      return core.eval_trace.process_primitive(prim, args, params)
    key = [prim, tuple(params.items())]
    committed = None
    for x in args:   # each operand as jit's fast key has it: ((shape, dtype), weak_type)
      t = type(x)
      if t is Array:
        if x._placed is not None and committed is None:   # computed where it lives
          committed = committed_device(args, prim.name)
          if committed is not None and committed.client is not self:
            return _committed_to(committed, prim, args, params)
        buf = x._buf
        if buf is None:
          value = x._value
          key.append(((value.shape, value.dtype), x.weak_type))
        else:
          key.append((buf.spec, x.weak_type))
      elif isinstance(x, core.Tracer):
        raise errors.UnexpectedTracerError(x)
      elif (rule := operand_rules.get(t)) is not None:   # typed PRNG keys
        return rule(prim, args, params)
      else:
        aval = core.get_aval(x)
        key.append(((aval.shape, aval.dtype), aval.weak_type))
    try:
      key = tuple(key)
      compiled = self._eager.get(key)
    except TypeError:   # a param that cannot be hashed: compiled for this call only
      key, compiled = None, None
    if compiled is None:
      compiled = self._compile(prim, [core.ShapedArray(s[0], s[1], w)
                                      for s, w in (key or ())[2:]] if key else
                               list(map(core.get_aval, args)), params, client)
      if key is not None:
        self._eager[key] = compiled
    executable, out_weak = compiled
    outs = executable.execute_device([self.buffer_of(x, client) for x in args])
    if committed is not None:
      commit = placement["commit"]
      outs = [commit(from_device(b, w), committed) for b, w in zip(outs, out_weak)]
      return outs if prim.multiple_results else outs[0]
    if prim.multiple_results:
      return list(map(from_device, outs, out_weak))
    return from_device(outs[0], out_weak[0])

  def _compile(self, prim, avals, params, client):
    from jaxlite._src.backends import xla

    def one_primitive(*xs):
      out = prim.bind(*xs, **params)
      return list(out) if prim.multiple_results else [out]
    closed = staging.trace_to_jaxpr(one_primitive, avals)
    try:
      executable = xla.compile(closed, prim.name, on=client)
    except NotImplementedError as e:
      raise NotImplementedError(
          f"Primitive '{prim.name}' cannot run on {self.platform}: {e}. jaxlite runs "
          "eager operations on a device through XLA, which has no lowering for it.") from None
    return executable, [a.weak_type for a in closed.out_avals]

  def clear_cache(self):
    self._eager.clear()

  def __repr__(self):
    return f"Backend({self.platform!r})"


def _committed_to(device, prim, args, params):
  """``prim`` applied on ``device``, where an operand is committed, and its results
  committed there too."""
  owner = device.client   # (each backend commits what it computes for a committed operand)
  if owner.resident:
    return owner.apply_primitive(prim, args, params)
  return core.eval_trace.apply_on_host(prim, args, params)


def backend_of(client) -> Backend | None:
  """The backend whose PJRT client ``client`` is (None: none of this process's)."""
  for found in _platforms.values():
    if found._client is client:
      return found
  # the CPU plugin's clients (the XLA tier's, made before the backend asked) are the CPU's
  return _platforms.get("cpu") if client is not None and client.platform == "cpu" else None


def _describe(x) -> str:
  return f"aval={core.get_aval(x)!r}"


# Imported after Array for these names (array.py defines both).
from jaxlite._src.core.array import _Deleted  # noqa: E402


# ----------------------------------------------------------------------------- platforms

_platforms: dict = {}   # platform -> Backend, in order of preference; filled once
_platforms_lock = threading.Lock()
_named: list = []       # the platforms jax_platforms named ([] when chosen automatically)


def _requested() -> list:
  """The platforms ``jax_platforms`` names, as JAX's platform names; [] for automatic."""
  text = config.jax_platforms or config.jax_platform_name or ""
  names = []
  for name in filter(None, (n.strip().lower() for n in text.split(","))):
    if name not in plugins.PLATFORM_ALIASES:
      raise RuntimeError(f"Unknown backend {name!r} in jax_platforms={text!r}: jaxlite "
                         "knows 'cpu', 'tpu', 'gpu' and 'cuda'.")
    names.append(plugins.PLATFORM_ALIASES[name])
  return list(dict.fromkeys(names))


def _discover() -> dict:
  """Fill ``_platforms`` (once): the named platforms, else the accelerators whose plugin is
  installed, then the CPU. Accelerator clients are created later, when first needed."""
  if _platforms:
    return _platforms
  with _platforms_lock:
    if not _platforms:
      named = _requested()
      for platform in named or [*(p for p, find in plugins.ACCELERATORS.items()
                                  if plugins.find_plugin(p) is not None), "cpu"]:
        if platform != "cpu" and named and plugins.find_plugin(platform) is None:
          raise RuntimeError(f"Unable to initialize backend '{platform}': "
                             f"{plugins.missing_message(platform)} (set "
                             "JAX_PLATFORMS='' to automatically choose an available "
                             "backend)")
        _platforms[platform] = Backend(platform)
      _named[:] = named
  return _platforms


def _drop(platform: str, error: Exception):
  """An accelerator found automatically whose client could not be created: warn, and let
  the next platform be the default (JAX's fallback)."""
  with _platforms_lock:
    _platforms.pop(platform, None)
  logger.warning("An accelerator plugin for '%s' is installed but could not be used "
                 "(%s). Falling back to %s.", platform, error, next(iter(_platforms)))
  retarget()


def backends() -> dict:
  """``{platform: Backend}`` of the platforms this process uses, the default first."""
  found = _discover()
  for platform in list(found):
    if platform != "cpu":
      try:
        found[platform].pjrt_client()
      except RuntimeError as e:
        if platform in _named:
          raise
        _drop(platform, e)
  return dict(_platforms)


def backend(platform: str | None = None) -> Backend:
  """The backend of ``platform`` ('cpu', 'tpu', 'gpu'/'cuda'; None: the default)."""
  found = backends()
  if platform is None:
    return next(iter(found.values()))
  if platform in ("numpy",):
    platform = "cpu"
  name = plugins.PLATFORM_ALIASES.get(platform)
  if name not in found:
    known = f"Available backends are {list(found)}"
    if name is None:
      raise RuntimeError(f"Unknown backend {platform}. {known}")
    reason = (plugins.missing_message(name) if plugins.find_plugin(name) is None else
              f"jax_platforms={config.jax_platforms!r} leaves it out")
    raise RuntimeError(f"Backend '{platform}' failed to initialize: {reason}. {known}")
  return found[name]


def devices(backend=None) -> list:
  """The devices of ``backend`` (a platform name; default: the default backend)."""
  return _backend(backend).devices()


def local_devices(process_index=None, backend=None, host_id=None) -> list:
  """The devices of ``backend`` that process ``process_index`` (default: this one)
  addresses; ``host_id`` is its older name, as in JAX. jaxlite runs one process."""
  if host_id is not None:
    warnings.warn("The argument to jax.local_devices has been renamed from `host_id` to "
                  "`process_index`. This alias will eventually be removed; please update "
                  "your code.")
    process_index = host_id
  if process_index is None:
    process_index = _backend(backend).process_index()
  if process_index != 0:   # (one process: the only index is 0)
    raise ValueError(f"Unknown process_index {process_index}")
  return [d for d in devices(backend) if d.process_index == process_index]


_backend = backend   # (for functions whose parameter JAX names `backend`)


def default_backend() -> str:
  """The platform of the default backend: 'tpu', 'gpu' or 'cpu'."""
  return next(iter(backends()))


def default_device() -> Device:
  """The device uncommitted arrays and computations go to (``jax_default_device``, else
  the default backend's first device)."""
  chosen = config.jax_default_device
  if chosen is None:
    return backend().devices()[0]
  if isinstance(chosen, str):
    return backend(chosen).devices()[0]
  return chosen


def _check_default_device(value):
  if value is None or isinstance(value, (Device, str)):
    return value
  raise ValueError("jax.default_device must be passed either a Device object (e.g. "
                   "`jax.devices('cpu')[0]`) or a platform name string like 'cpu' or "
                   f"'gpu', got: {value!r}")


def eager_backend() -> Backend | None:
  """The resident backend eager operations run on, or None: NumPy on the host."""
  chosen = config.jax_default_device
  if chosen is None:
    found = _discover()
    target = next(iter(found.values()))
  elif isinstance(chosen, str):
    target = backend(chosen)
  else:
    target = chosen.client
  return target if target.resident else None


def retarget(_value=None):
  """Point eager evaluation at the current default device's backend: a resident one runs
  every primitive there (and lax's direct NumPy kernels stand aside), else NumPy."""
  target = eager_backend()
  core.eval_trace.install(device=target)
  core.block_direct_kernels("device", target is not None)


config.define("jax_default_device", None,
              "The device uncommitted arrays and computations go to: a Device, a platform "
              "name ('cpu', 'tpu', 'gpu'), or None for the default backend's first device.",
              on_change=retarget, validate=_check_default_device)
config.watch("jaxlite_cpu_backend", retarget)
