"""Tier 1: jaxpr -> StableHLO text -> XLA executable, through the PJRT C API.

The backend API that ``jit`` uses::

  is_available() / unavailable_reason()
  lower(closed, name) -> str            StableHLO text
  compile(closed, name) -> XlaExecutable
  compile_on_devices(closed, name, device_ids, replicas=...)   several devices at once
  devices(), platform()

The PJRT client is created once per process, on first use, under a lock.
"""
from __future__ import annotations

import contextlib
import logging
import marshal
import math
import os
import sys
import threading
import time

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.base import tuning
from jaxlite._src.backends.cpu_devices import cpu_device_count
from jaxlite._src.base.config import config
from jaxlite._src.lax import reductions
from jaxlite._src.backends import background
from jaxlite._src.backends import disk_cache as cache
from jaxlite._src.backends.xla import pjrt
from jaxlite._src.backends import plugins
from jaxlite._src.backends.xla.pjrt import DeviceBuffer, XlaRuntimeError, live_buffers

__all__ = ["XlaRuntimeError", "XlaExecutable", "DeviceBuffer", "live_buffers", "is_available", "unavailable_reason",
           "lower", "compile", "compile_on_devices", "deserialize", "call_code", "devices", "platform",
           "client", "device_put"]

logger = logging.getLogger("jaxlite")
_lock = threading.Lock()
_client = None
_client_error: str | None = None
# XLA sizes a client's thread pools by the CPUs its creating thread may run on, and splits
# the programs the client compiles into that many tasks. The process's client keeps the
# size its creating thread gives it. Under auto that is the compile thread, kept off the
# caller's CPU, which makes one pool thread; a client made for a long program gets a pool
# thread per CPU of the process instead (``client``'s ``pool_per_cpu``), since one pool
# thread runs short programs faster and long ones slower (benchmarks/README.md,
# thirteenth and seventeenth passes). ``pool_cpus`` are the CPUs the executables compiled here
# will run on, when that is another process (the compile server's caller; None: this
# process's): a large program is compiled split into a task per CPU of those.
pool_cpus: set | None = None
_pool_size = 1   # the process client's
POOL_PER_CPU_FROM = tuning.POOL_PER_CPU_FROM   # (``client``)


def _create_client(pool_per_cpu):
  # absl's INFO lines ("cpu_device_count set via create_options") are noise for users
  os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
  global _pool_size
  plugin = plugins.find_plugin("cpu")
  if plugin is None:
    return None, plugins.missing_message("cpu")
  try:
    api = pjrt.load_api(plugin.path)
    cpus = background.process_cpus() if pool_per_cpu else None
    with background.on_cpus(cpus) if cpus else contextlib.nullcontext():
      made = pjrt.Client(api, {"cpu_device_count": cpu_device_count()},
                         synchronous=not config.jax_cpu_enable_async_dispatch)
      _pool_size = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    return made, None
  except (OSError, XlaRuntimeError) as e:
    return None, f"No PJRT plugin could be loaded:\n  {plugin.package} ({plugin.path}): {e}"


_accelerators: dict = {}   # platform -> its Client, or the error its creation raised


def accelerator_client(platform: str) -> pjrt.Client:
  """The process's client of accelerator ``platform`` ('tpu' or 'gpu'), created on first
  use (opening a TPU takes seconds); raises RuntimeError, naming the package to install
  or XLA's reason, where there is none."""
  made = _accelerators.get(platform)
  if made is None:
    with _lock:
      made = _accelerators.get(platform)
      if made is None:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
        plugin = plugins.find_plugin(platform)
        if plugin is None:
          made = RuntimeError(plugins.missing_message(platform))
        else:
          try:
            made = pjrt.Client(pjrt.load_api(plugin.path))
          except (OSError, XlaRuntimeError) as e:
            made = RuntimeError(f"Unable to initialize backend '{platform}': {e} "
                                f"({plugin.package}, {plugin.path})")
        _accelerators[platform] = made
  if isinstance(made, Exception):
    raise made
  return made


def client(pool_per_cpu: bool = False):
  """The process's PJRT client; raises RuntimeError if no plugin works.

  ``pool_per_cpu``: should this call create the client, it gets a pool thread per CPU of
  the process whichever thread creates it (otherwise, as many as the creating thread may
  run on): the race loads a winner that runs ``POOL_PER_CPU_FROM`` or longer this way."""
  global _client, _client_error
  c = _client
  if c is not None:
    return c
  with _lock:
    if _client is None and _client_error is None:
      _client, _client_error = _create_client(pool_per_cpu)
  if _client is None:
    raise RuntimeError(_client_error)
  return _client


def _lowering():
  """The ``stablehlo`` module with every lowering rule, imported on first use: a process
  that only loads executables the compile server lowered never needs it, and importing
  it would hold the GIL in the callers' calls while a race's winner loads
  (benchmarks/README.md, fourteenth pass)."""
  from jaxlite._src.backends.xla import stablehlo
  from jaxlite._src.backends.xla import callbacks   # (these two add rules to its table)
  from jaxlite._src.backends.xla import linalg  # noqa: F401
  callbacks.client = client
  return stablehlo


def is_available(pool_per_cpu: bool = False) -> bool:
  """Whether a PJRT plugin is installed and a client could be created (``pool_per_cpu``:
  ``client``'s)."""
  try:
    client(pool_per_cpu)
    return True
  except RuntimeError:
    return False


def unavailable_reason() -> str:
  """Why the XLA backend is unavailable ('' when it is available)."""
  return "" if is_available() else _client_error


def devices() -> list:
  return list(client().devices)


def platform() -> str:
  return client().platform


def device_put(value) -> DeviceBuffer:
  """A device buffer holding NumPy ``value`` (see ``pjrt.Client.put``: on CPU a large
  value is shared with the buffer's ``host`` array instead of copied)."""
  return client().put(value)


def lower(closed: core.ClosedJaxpr, name: str = "main", donation=None, arg_layouts=None,
          out_layouts=None) -> str:
  """The StableHLO text of ``closed`` (see ``stablehlo.lower``; ``donation`` per
  parameter: the output it aliases, True for a buffer donor, or None; the layouts per
  parameter and result, None for the default)."""
  return _lowering().lower(closed, name, donation=donation, arg_layouts=arg_layouts,
                           out_layouts=out_layouts)


def donors(donation) -> tuple:
  """The parameters whose buffers a program lowered with ``donation`` may consume."""
  return () if donation is None else tuple(i for i, d in enumerate(donation)
                                           if d is not None)


def buffer_spec(aval) -> tuple:
  """The (shape, dtype) of the buffer that holds a value of type ``aval``: a float0's is
  bool, the i1 it is lowered to (see ``stablehlo.tensor_type``)."""
  return aval.shape, (np.dtype(np.bool_) if aval.dtype == dtypes.float0 else aval.dtype)


class XlaExecutable:
  """A compiled jaxpr. ``exe(*numpy_args)`` returns a list of NumPy arrays whose dtypes
  are exactly the jaxpr's output dtypes, a float0's bool (``buffer_spec``), synchronously;
  ``exe.execute_device(args)`` takes DeviceBuffers or NumPy values and returns
  DeviceBuffers without waiting.

  Attributes
  ----------
  text : str
    The StableHLO it was compiled from.
  compile_time : float
    Seconds spent in XLA's compiler (0 for a deserialized executable).
  """

  from_disk_cache = False

  def __init__(self, loaded, text, in_avals, out_avals, compile_time=0.0, donors=()):
    self.loaded, self.text, self.compile_time = loaded, text, compile_time
    self.in_avals, self.out_avals = list(in_avals), list(out_avals)
    loaded.set_signature(list(map(buffer_spec, in_avals)), list(map(buffer_spec, out_avals)),
                         donors)
    self._execute = loaded.execute
    self.execute_device = loaded.cached_call()
    # execute_donating(args, donate): execute_device letting XLA consume the buffers at
    # the indices ``donate`` (see ``pjrt.LoadedExecutable.execute_donating``)
    self.execute_donating = loaded.execute_donating

  def __call__(self, *args):
    return self._execute(args)

  # execute_device(args) -> list[DeviceBuffer]: asynchronous dispatch. Each argument is a
  # DeviceBuffer (used in place, no host round trip) or a NumPy value (transferred); the
  # outputs are not waited for (see ``pjrt.LoadedExecutable.execute_device``).

  def as_text(self) -> str:
    return self.text

  def serialize(self) -> bytes:
    """Bytes that ``deserialize`` turns back into this executable (same plugin version)."""
    return self.loaded.serialize()


# Below this many element operations (``work``), a program on the CPU is compiled without
# parallel task partitions. XLA's CPU compiler splits a large enough loop into one task
# per thread of the client's pool, and running it then hands the tasks to other threads
# and waits for them, which for a program this small costs more than it saves
# (benchmarks/README.md, thirteenth pass).
UNSPLIT_BELOW = 1_000_000
_compilers = {}   # pool size -> a client made to compile with that many tasks


def work(jaxpr: core.Jaxpr) -> int:
  """An estimate of ``jaxpr``'s size: the elements its equations produce, a dot_general's
  counted once per multiply-add, a loop's body or a branch once."""
  total = 0
  for eqn in jaxpr.eqns:
    out = max((math.prod(v.aval.shape) for v in eqn.outvars
               if isinstance(v.aval, core.ShapedArray)), default=0)
    if eqn.primitive is reductions.dot_general_p:
      (contracted, _), _ = eqn.params["dimension_numbers"]
      out *= math.prod(eqn.invars[0].aval.shape[d] for d in contracted)
    total += out + sum(work(sub) for sub in core.subjaxprs(eqn))
  return total


def _tasks(closed: core.ClosedJaxpr, main: pjrt.Client) -> int:
  """How many tasks XLA may split ``closed`` into: one for a small program, else one per
  CPU it will run on. Only on a CPU client that can load another client's executables,
  and where a thread's CPUs can be set (Linux); elsewhere what ``main`` does."""
  if (main.platform != "cpu" or main.api.Executable_DeserializeAndLoad is None
      or not hasattr(os, "sched_setaffinity")):
    return _pool_size
  if work(closed.jaxpr) < UNSPLIT_BELOW:
    return 1
  return len(pool_cpus or background.process_cpus())


def _compiler(tasks: int, main: pjrt.Client) -> pjrt.Client:
  """A client of ``main``'s plugin that splits what it compiles into ``tasks`` tasks:
  ``main`` when its pools are that size, else one made while its thread runs on that
  many CPUs (``main`` if the plugin will not make one)."""
  if tasks == _pool_size:
    return main
  with _lock:
    made = _compilers.get(tasks)
    if made is None:
      cpus = set(sorted(pool_cpus or background.process_cpus())[:tasks])
      try:
        with background.on_cpus(cpus):
          made = pjrt.Client(main.api, {"cpu_device_count": 1})
      except XlaRuntimeError as e:
        logger.debug("no client with %d-thread pools (%s): compiling on the process's",
                     tasks, e)
        made = main
      _compilers[tasks] = made
  return made


def _with_defaults(options):
  """``options`` over jaxlite's XLA option defaults (``plugins.flag_defaults``)."""
  return {**plugins.flag_defaults(), **(options or {})}


def compile(closed: core.ClosedJaxpr, name: str = "main", donation=None,
            on=None, options=None) -> XlaExecutable:
  """Lower ``closed`` and compile it with XLA for the first device of client ``on``
  (None: the CPU's); ``donation`` says which parameters XLA may write results into (see
  ``lower``); ``options`` a dict of XLA compiler options (``pjrt.compile_options``'s
  ``overrides``). A small program is
  compiled without parallel tasks (``UNSPLIT_BELOW``), a large one split into a task per
  CPU it will run on (``pool_cpus``).

  Raises
  ------
  NotImplementedError
    A primitive has no lowering rule.
  XlaRuntimeError
    XLA rejected the program (its message is kept).
  """
  text = lower(closed, name, donation)
  given = donors(donation)
  c = on or client()
  tasks = _tasks(closed, c)
  # XLA_FLAGS change the generated code (threading, fusions), so they are part of the key,
  # as is the split into tasks: an executable compiled otherwise must not be loaded.
  compile_options = pjrt.compile_options(overrides=_with_defaults(options))
  entry_key = cache.key(text, repr(c.api.attributes().get("xla_version")),
                        compile_options + os.environ.get("XLA_FLAGS", "").encode(),
                        c.devices[0].device_kind, b"tasks=%d" % tasks)
  stored = cache.get(entry_key)
  if stored is not None:
    try:
      exe = deserialize(stored, closed, text, donation, on=c)
      exe.from_disk_cache = True
      return exe
    except XlaRuntimeError as e:   # e.g. written by another plugin build: recompile
      logger.warning("persistent compile cache: entry rejected by XLA (%s); recompiling", e)
  t0 = time.perf_counter()
  compiler = _compiler(tasks, c)
  loaded = compiler.compile(text, compile_options)
  if compiler is not c:   # runs on the process's client, with its buffers
    loaded = c.deserialize(loaded.serialize())
  compile_secs = time.perf_counter() - t0
  exe = XlaExecutable(loaded, text, closed.in_avals, closed.out_avals, compile_secs,
                      given)
  try:
    cache.put(entry_key, exe.serialize(), compile_secs)
  except XlaRuntimeError as e:
    logger.debug("executable not serializable, not cached: %s", e)
  return exe


def lower_on_devices(closed: core.ClosedJaxpr, name: str, n: int, *, replicas: bool,
                     mesh_axes=(), arg_shardings=None, out_shardings=None,
                     donation=None, arg_layouts=None, out_layouts=None) -> str:
  """The StableHLO text of ``closed`` run on ``n`` devices at once (see
  ``compile_on_devices``)."""
  return _lowering().lower(closed, name, mesh_axes=mesh_axes, arg_shardings=arg_shardings,
                           out_shardings=out_shardings, donation=donation,
                           arg_layouts=arg_layouts, out_layouts=out_layouts,
                           **_device_counts(n, replicas))


def _device_counts(n, replicas):
  return (dict(num_replicas=n, num_partitions=1) if replicas
          else dict(num_replicas=1, num_partitions=n))


def compile_on_devices(closed: core.ClosedJaxpr, name: str, device_ids, *, replicas: bool,
                       mesh_axes=(), arg_shardings=None, out_shardings=None,
                       in_specs=None, out_specs=None, donation=None, options=None,
                       arg_layouts=None, out_layouts=None, on=None):
  """Compile ``closed`` to run on the devices ``device_ids`` (client indices) at once.

  ``replicas=True``: ``closed`` is the per-device program (pmap, shard_map), run as one
  replica per device; collectives name the ``mesh_axes``. ``replicas=False``: ``closed``
  is the global program, and XLA's SPMD partitioner splits it into one partition per
  device as the shardings say. ``in_specs``/``out_specs`` are the
  per-device (shape, dtype) of the buffers (default: the jaxpr's avals); ``donation``
  the parameters XLA may write results into (see ``lower``); ``options`` XLA compiler
  options (see ``compile``); ``arg_layouts``/``out_layouts`` the device memory layouts
  of the parameters and results (see ``lower``); ``on`` the client (None: the CPU's).
  Returns the ``pjrt.LoadedExecutable``; run it with ``execute_sharded``.
  """
  n = len(device_ids)
  text = lower_on_devices(closed, name, n, replicas=replicas, mesh_axes=mesh_axes,
                          arg_shardings=arg_shardings, out_shardings=out_shardings,
                          donation=donation, arg_layouts=arg_layouts,
                          out_layouts=out_layouts)
  ids = [[d] for d in device_ids] if replicas else [list(device_ids)]
  loaded = (on or client()).compile(text, pjrt.compile_options(
      device_ids=ids, overrides=_with_defaults(options), **_device_counts(n, replicas)))
  loaded.set_signature(in_specs or list(map(buffer_spec, closed.in_avals)),
                       out_specs or list(map(buffer_spec, closed.out_avals)),
                       donors(donation))
  loaded.text = text
  return loaded


def deserialize(data: bytes, closed_or_avals, text: str = "", donation=None,
                call_code=None, on=None) -> XlaExecutable:
  """An executable from ``XlaExecutable.serialize`` bytes; the signature comes from a
  ClosedJaxpr or an ``(in_avals, out_avals)`` pair, ``donation`` is the one it was
  compiled with (see ``compile``). ``call_code``: ``call_code(exe)`` of the process
  that compiled it, whose Python code this process then need not compile (ignored when
  that process ran another Python version); ``on``: the client to load it into (None: the
  CPU's)."""
  if isinstance(closed_or_avals, core.ClosedJaxpr):
    in_avals, out_avals = closed_or_avals.in_avals, closed_or_avals.out_avals
  else:
    in_avals, out_avals = closed_or_avals
  if call_code is not None and call_code[0] == sys.version:
    pjrt.adopt_cached_call_code(len(in_avals), len(out_avals), marshal.loads(call_code[1]))
  return XlaExecutable((on or client()).deserialize(data), text, in_avals, out_avals,
                       donors=donors(donation))


def call_code(exe: XlaExecutable):
  """The compiled Python of ``exe``'s dispatch (``pjrt.cached_call_code``) as bytes for
  ``deserialize`` in another process of the same Python, with that Python's version;
  None where it has none."""
  code = pjrt.cached_call_code(len(exe.in_avals), len(exe.out_avals))
  return None if code is None else (sys.version, marshal.dumps(code))
