"""``jax.profiler``: traces of a program's activity, device memory profiles, and jaxlite's
trace / compile / execute statistics of jitted functions (``report``).

A trace (``start_trace`` / ``stop_trace`` / ``trace``) records, on the threads where they
happen, the spans of ``TraceAnnotation`` / ``StepTraceAnnotation`` / ``annotate_function``
and jaxlite's own: each eager call of a jitted function (``PjitFunction(f)``, JAX's
name), each compile (``backend_compile_and_load``, naming tier 0's ``compile_jaxpr`` or
XLA's ``compile_xla``) and the durations ``jax.monitoring`` reports (the trace to a
jaxpr, the compile). It writes them as JAX does, under
``log_dir/plugins/profile/<timestamp>/``: ``<host>.xplane.pb`` (XSpace, which
``ProfileData`` reads) and ``<host>.trace.json.gz`` (Chrome trace events, which
TensorBoard's profile plugin and Perfetto's UI open). Unlike JAX's, the trace has no
Python function calls, no eager operations and no XLA-internal events.
"""
from __future__ import annotations

from collections.abc import Callable
from contextlib import contextmanager
from functools import wraps
import gzip
import json
import os
import pathlib
import socket
import statistics
import threading
import time

from jaxlite._src import backends
from jaxlite._src.base import protobuf
from jaxlite._src import tiers
from jaxlite._src.profile_data import serialize_xspace
from jaxlite._src.base import monitoring, trace_events
from jaxlite._src.base.config import config
from jaxlite._src.base.errors import JaxRuntimeError


class ProfileOptions:
  """Profiler Options to configure the collectors for the profiler.

  jaxlite reads ``host_tracer_level`` (0 records no host events); the other options
  configure collectors jaxlite does not have (Python, device and dataset tracers) and
  are kept for programs that set them."""

  def __init__(self):
    self.advanced_configuration = {}
    self.duration_ms = 0
    self.enable_hlo_proto = True
    self.host_tracer_level = 2
    self.include_dataset_ops = True
    self.python_tracer_level = 1
    self.raise_error_on_start_failure = False
    self.repository_path = ""
    self.session_id = ""
    self.start_timestamp_ns = 0


class _ProfileState:
  def __init__(self):
    self.lock = threading.Lock()
    self.reset()

  def reset(self):
    self.recording = None   # the trace_events.Recording of the running trace
    self.log_dir = None     # None: no trace is running
    self.create_perfetto_link = False
    self.create_perfetto_trace = False


_profile_state = _ProfileState()


def _record_duration(event, duration, **kwargs):
  # a duration reported as it ends (jax.monitoring) is a span ending now
  recording = trace_events.recording
  if recording is not None:
    end = time.perf_counter_ns()
    recording.add(event, end - int(duration * 1e9), end, kwargs)


def start_trace(log_dir: os.PathLike | str, create_perfetto_link: bool = False,
                create_perfetto_trace: bool = False,
                profiler_options: ProfileOptions | None = None) -> None:
  """Starts a profiler trace.

  The trace captures the spans of ``TraceAnnotation`` and jaxlite's own activity
  (jitted calls, traces and compiles) until ``stop_trace``, which saves it to
  ``log_dir``. Only one trace may be collected at a time.

  Parameters
  ----------
  log_dir : str or os.PathLike
    The directory to save the trace to (usually the TensorBoard log directory).
  create_perfetto_link : bool
    If true, print where the Perfetto trace is, to open in https://ui.perfetto.dev.
    Unlike JAX, jaxlite serves no link and does not block: it prints the file's path.
  create_perfetto_trace : bool
    If true, also write ``perfetto_trace.json.gz`` (implied by
    ``create_perfetto_link``).
  profiler_options : ProfileOptions, optional
    Options for the collectors.

  Raises
  ------
  RuntimeError
    If a trace is already running.
  """
  with _profile_state.lock:
    if _profile_state.log_dir is not None:
      raise RuntimeError("Profile has already been started. "
                         "Only one profile may be run at a time.")
    options = profiler_options if profiler_options is not None else ProfileOptions()
    _profile_state.log_dir = str(log_dir)
    _profile_state.create_perfetto_link = create_perfetto_link
    _profile_state.create_perfetto_trace = create_perfetto_trace or create_perfetto_link
    if options.host_tracer_level > 0:
      _profile_state.recording = trace_events.start()
      monitoring.register_event_duration_secs_listener(_record_duration)
      config.new_generation()   # jitted calls leave their fast path, to be recorded
    else:
      _profile_state.recording = trace_events.Recording()   # (one recording nothing)


def stop_trace():
  """Stops the currently-running profiler trace and saves it to the ``log_dir`` given to
  ``start_trace``.

  Raises
  ------
  RuntimeError
    If no trace is running.
  """
  with _profile_state.lock:
    if _profile_state.log_dir is None:
      raise RuntimeError("No profile started")
    recording = _profile_state.recording
    if trace_events.recording is recording:
      trace_events.stop()
      if _record_duration in monitoring.get_event_duration_listeners():   # (not cleared)
        monitoring.unregister_event_duration_listener(_record_duration)
    log_dir = _profile_state.log_dir
    perfetto, link = _profile_state.create_perfetto_trace, _profile_state.create_perfetto_link
    _profile_state.reset()
  folder = (pathlib.Path(log_dir).absolute() / "plugins" / "profile"
            / time.strftime("%Y_%m_%d_%H_%M_%S"))
  folder.mkdir(parents=True, exist_ok=True)
  host = socket.gethostname()
  (folder / f"{host}.xplane.pb").write_bytes(
      serialize_xspace(recording, time.time_ns(), host, os.getpid()))
  trace_json = _trace_json(recording)
  with gzip.open(folder / f"{host}.trace.json.gz", "wt") as f:
    json.dump(trace_json, f)
  if perfetto:
    del trace_json["metadata"]   # (Perfetto refuses it, as JAX's writer notes)
    path = folder / "perfetto_trace.json.gz"
    with gzip.open(path, "wt") as f:
      json.dump(trace_json, f)
    if link:
      print(f"Perfetto trace written to {path}; open it in https://ui.perfetto.dev "
            "(Open trace file). jaxlite serves no link.")


def _trace_json(recording):
  """The recording as Chrome trace events: one process (the host), one row per thread,
  times in microseconds from the start."""
  pid = os.getpid()
  events = [{"ph": "M", "pid": pid, "name": "process_name", "args": {"name": "/host:CPU"}},
            {"ph": "M", "pid": pid, "name": "process_sort_index",
             "args": {"sort_index": pid}}]
  for i, (tid, name) in enumerate(sorted(recording.thread_names.items())):
    events += [{"ph": "M", "pid": pid, "tid": tid, "name": "thread_name",
                "args": {"name": name}},
               {"ph": "M", "pid": pid, "tid": tid, "name": "thread_sort_index",
                "args": {"sort_index": i + 1}}]
  start = recording.start_ns
  for name, tid, t0, t1, args in sorted(recording.events, key=lambda e: e[2]):
    event = {"ph": "X", "pid": pid, "tid": tid, "ts": max(t0 - start, 0) / 1e3,
             "dur": (t1 - max(t0, start)) / 1e3, "name": name}
    # (JAX's arguments are strings, without the step marker _r)
    args = {k: str(v) for k, v in (args or {}).items() if k != "_r"}
    if args:
      event["args"] = args
    events.append(event)
  return {"displayTimeUnit": "ns", "metadata": {"highres-ticks": True},
          "traceEvents": events}


@contextmanager
def trace(log_dir: os.PathLike | str, create_perfetto_link=False,
          create_perfetto_trace=False, profiler_options: ProfileOptions | None = None):
  """Context manager to take a profiler trace (``start_trace`` on entry, ``stop_trace``
  on exit); see ``start_trace`` for the parameters.

  Examples
  --------
  >>> import tempfile, jaxlite as jax, jaxlite.numpy as jnp
  >>> with jax.profiler.trace(tempfile.mkdtemp()):
  ...   _ = jax.jit(jnp.sin)(1.0).block_until_ready()
  """
  start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
  try:
    yield
  finally:
    stop_trace()


class TraceAnnotation(trace_events.span):
  """Context manager that generates a trace event in the profiler.

  The event spans the code the context encloses, on its thread, with the keyword
  arguments as its arguments, if a trace is running; otherwise it costs a global read.

  Examples
  --------
  >>> import jaxlite as jax
  >>> with jax.profiler.TraceAnnotation("my_label", size=3):
  ...   pass
  """

  __slots__ = ()

  def __init__(self, name, /, **kwargs):
    if name.__class__ is not str and not isinstance(name, str):
      raise TypeError("__init__(): incompatible function arguments. The following "
                      "argument types are supported:\n    1. __init__(self, arg0: str, /, "
                      f"**kwargs) -> None\n\nInvoked with types: {type(self).__name__}, "
                      f"{type(name).__name__}")
    self.name = name   # (not through span.__init__: an annotation is on hot paths)
    self.args = kwargs

  @staticmethod
  def is_enabled() -> bool:
    """Whether a trace is recording."""
    return trace_events.recording is not None

  def set_metadata(self, **kwargs) -> None:
    """Add arguments to the event."""
    self.args.update(kwargs)


class StepTraceAnnotation(TraceAnnotation):
  """Context manager that generates a step trace event in the profiler: a
  ``TraceAnnotation`` marking one step, usually given ``step_num=``."""

  __slots__ = ()

  def __init__(self, name: str, **kwargs):
    TraceAnnotation.__init__(self, name, _r=1, **kwargs)   # (_r=1 marks a step, as JAX's)


def annotate_function(func: Callable, name: str | None = None, **decorator_kwargs):
  """Decorator that generates a trace event for each execution of a function.

  Parameters
  ----------
  func : callable
    The function to annotate.
  name : str, optional
    The event's name (default: the function's qualified name). Pass it with
    ``functools.partial``, as in JAX.
  **decorator_kwargs
    The event's arguments.

  Examples
  --------
  >>> import jaxlite as jax
  >>> @jax.profiler.annotate_function
  ... def f(x):
  ...   return x + 1
  >>> f(1)
  2
  """
  name = name or getattr(func, "__qualname__", None)
  name = name or func.__name__

  @wraps(func)
  def wrapper(*args, **kwargs):
    with TraceAnnotation(name, **decorator_kwargs):
      return func(*args, **kwargs)
  return wrapper


def device_memory_profile(backend: str | None = None) -> bytes:
  """Captures a device memory profile as a gzipped ``pprof``-format protocol buffer.

  As JAX's, the profile has the sample types ``allocations`` (count) and ``space``
  (bytes), and one sample per live array buffer, labelled ``kind=buffer`` and
  ``device=<platform>:<id>``. Unlike JAX's, its samples have no Python stack (jaxlite
  does not record where each array was made) and it lists no executables.

  Parameters
  ----------
  backend : str, optional
    The name of the backend whose arrays to profile (default: the default backend).

  Returns
  -------
  bytes
    The gzipped ``perftools.profiles.Profile`` message, for the ``pprof`` tool.
  """
  platform = backends.backend(backend)
  strings = {"": 0}

  def string(s):
    return strings.setdefault(s, len(strings))

  sample_types = [(string("allocations"), string("count")), (string("space"), string("bytes"))]
  samples = []
  for x in platform.live_arrays():
    shards = ([(s.device, s.data.nbytes) for s in x.addressable_shards]
              if len(x.devices()) > 1 else [(next(iter(x.devices())), x.nbytes)])
    for device, nbytes in shards:
      labels = [(string("kind"), string("buffer")),
                (string("device"), string(f"{device.platform}:{device.id}"))]
      samples.append(protobuf.message([(2, protobuf.packed([1, nbytes]))]
                              + [(3, protobuf.message([(1, k), (2, v)])) for k, v in labels]))
  profile = ([(1, protobuf.message([(1, t), (2, u)])) for t, u in sample_types]
             + [(2, s) for s in samples]
             + [(6, s.encode()) for s in strings])
  return gzip.compress(protobuf.message(profile))


def save_device_memory_profile(filename, backend: str | None = None) -> None:
  """Collects a device memory profile (``device_memory_profile``) and writes it to
  ``filename``."""
  profile = device_memory_profile(backend)
  with open(filename, "wb") as f:
    f.write(profile)


_NO_SERVER = ("jaxlite has no profiler server: JAX's is the TSL gRPC profiler service "
              "(jaxlib's C++), which TensorBoard's 'capture profile' connects to, and "
              "jaxlite does not include it. Record a trace in the process instead, with "
              "jax.profiler.trace(log_dir) or start_trace/stop_trace.")


def start_server(port: int, requires_backend: bool = True):
  """JAX starts its gRPC profiler server on ``port``; jaxlite has none.

  Raises
  ------
  JaxRuntimeError
    Always (UNIMPLEMENTED), saying so.
  """
  raise JaxRuntimeError(f"UNIMPLEMENTED: cannot start a profiler server on port {port}: "
                        + _NO_SERVER)


def stop_server():
  """Stops the running profiler server: as none can run in jaxlite, always raises
  JAX's ValueError for none running."""
  raise ValueError("No active profiler server.")


def register_subprocess(pid: int, port: int) -> Callable[[], None]:
  """JAX registers a subprocess's profiler server to profile it alongside this process;
  jaxlite has no profiler servers.

  Raises
  ------
  JaxRuntimeError
    Always (UNIMPLEMENTED; JAX's class for a subprocess that cannot be registered).
  """
  raise JaxRuntimeError(f"UNIMPLEMENTED: cannot register the profiler server of process "
                        f"{pid} on port {port}: " + _NO_SERVER)


class FunctionStats:
  """What happened to one jitted function, one row per signature."""

  def __init__(self, name, location, entries):
    self.name = name
    self.location = location
    self.rows = [_row(e) for e in entries]

  @property
  def calls(self):
    return sum(r["calls"] for r in self.rows)

  @property
  def cache_hits(self):
    return sum(r["cache_hits"] for r in self.rows)

  @property
  def traces(self):
    return len(self.rows)

  def __getitem__(self, i):
    return self.rows[i]

  def __len__(self):
    return len(self.rows)

  def __str__(self):
    header = (f"{self.name} ({self.location}): {self.calls} calls, {self.cache_hits} cache "
              f"hits, {self.traces} traces")
    lines = [header, f"  {'signature':<28} {'calls':>6} {'hits':>6} {'trace ms':>9} "
             f"{'compile ms':>11} {'exec ms (median)':>17}  tier"]
    for r in self.rows:
      compile_ms = ", ".join(f"{t} {ms:.2f}" for t, ms in r["compile_ms"].items()) or "-"
      exec_ms = f"{r['execute_ms_median']:.4f}" if r["execute_ms_median"] is not None else "-"
      raced = (" (raced: " + ", ".join(f"{t} {m:.4f} ms" for t, m in r["tier_ms"].items())
               + ")") if r["tier_ms"] else ""
      lines.append(f"  {r['signature']:<28} {r['calls']:>6} {r['cache_hits']:>6} "
                   f"{r['trace_ms']:>9.2f} {compile_ms:>11} {exec_ms:>17}  {r['tier'] or '-'}"
                   f"{raced}")
      if r["note"]:
        lines.append(f"    {r['note']}")
    return "\n".join(lines)

  __repr__ = __str__


def _row(entry):
  avals = entry.jaxpr.in_avals
  times = list(entry.exec_s)
  return {
      "signature": "(" + ", ".join(a.str_short(short_dtypes=True) for a in avals) + ")",
      "calls": entry.calls,
      "cache_hits": max(entry.calls - 1, 0),   # every call but the one that traced
      "trace_ms": entry.trace_ms,
      "compile_ms": dict(entry.compile_ms),
      "execute_ms_median": statistics.median(times) * 1e3 if times else None,
      "tier": entry.tier,
      "tier_ms": dict(entry.tier_ms),
      "note": entry.tier_note,
  }


def report(print_=True):
  """Statistics of every live jitted function (``jaxlite.profiler.report()``)."""
  stats = [f.stats() for f in tiers.all_jitted() if f._cache_size()]
  if print_:
    print("\n\n".join(str(s) for s in stats) if stats else "no jitted function has run")
  return stats
