"""``jax.profiler``'s API against JAX 0.10.2's recorded behaviour: signatures, defaults,
errors, the trace's file layout and trace-event JSON, and the device memory profile's
pprof protobuf (read back by a small decoder written from profile.proto)."""
import functools
import gzip
import inspect
import json
import pathlib
import re
import socket
import threading

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import errors

from reference_jax import run_reference

P = jax.profiler

# Recorded from JAX 0.10.2 (jax.profiler, CPU): inspect.signature of each function.
JAX_SIGNATURES = {
    "StepTraceAnnotation": "(name: 'str', **kwargs)",
    "annotate_function": "(func: 'Callable', name: 'str | None' = None, **decorator_kwargs)",
    "device_memory_profile": "(backend: 'str | None' = None) -> 'bytes'",
    "register_subprocess": "(pid: 'int', port: 'int') -> 'Callable[[], None]'",
    "save_device_memory_profile": "(filename, backend: 'str | None' = None) -> 'None'",
    "start_server": "(port: 'int', requires_backend: 'bool' = True)",
    "start_trace": "(log_dir: 'os.PathLike | str', create_perfetto_link: 'bool' = False, "
                   "create_perfetto_trace: 'bool' = False, profiler_options: "
                   "'ProfileOptions | None' = None) -> 'None'",
    "stop_server": "()",
    "stop_trace": "()",
    "trace": "(log_dir: 'os.PathLike | str', create_perfetto_link=False, "
             "create_perfetto_trace=False, profiler_options: 'ProfileOptions | None' = None)",
}
# Recorded: ProfileOptions()'s attributes.
JAX_PROFILE_OPTIONS = {
    "advanced_configuration": {}, "duration_ms": 0, "enable_hlo_proto": True,
    "host_tracer_level": 2, "include_dataset_ops": True, "python_tracer_level": 1,
    "raise_error_on_start_failure": False, "repository_path": "", "session_id": "",
    "start_timestamp_ns": 0,
}


def _signature(name):
  # (JAX's start_server returns a jaxlib type jaxlite does not have: its annotation is
  # compared without the return)
  s = str(inspect.signature(getattr(P, name)))
  return s.split(" -> ")[0] if name == "start_server" else s


@pytest.mark.parametrize("name", sorted(JAX_SIGNATURES))
def test_signatures_match_jax(name):
  assert _signature(name) == JAX_SIGNATURES[name]


def test_recorded_signatures_are_jax_s():
  out = run_reference(
      "import inspect, json, jax.profiler as P\n"
      f"print(json.dumps({{n: str(inspect.signature(getattr(P, n))) for n in "
      f"{sorted(JAX_SIGNATURES)!r}}}))", text=True)
  live = json.loads(out.strip().splitlines()[-1])
  live["start_server"] = live["start_server"].split(" -> ")[0]
  assert live == JAX_SIGNATURES


def test_profile_options_defaults_match_jax():
  options = P.ProfileOptions()
  assert {k: getattr(options, k) for k in JAX_PROFILE_OPTIONS} == JAX_PROFILE_OPTIONS
  options.host_tracer_level = 3
  assert options.host_tracer_level == 3
  with pytest.raises(TypeError):
    P.ProfileOptions(host_tracer_level=1)   # JAX's takes no arguments


def test_stop_trace_without_start_raises_jax_error():
  with pytest.raises(RuntimeError, match="^No profile started$"):
    P.stop_trace()


def test_start_trace_twice_raises_jax_error(tmp_path):
  P.start_trace(tmp_path)
  try:
    with pytest.raises(RuntimeError, match=re.escape(
        "Profile has already been started. Only one profile may be run at a time.")):
      P.start_trace(tmp_path)
  finally:
    P.stop_trace()


def _trace_files(log_dir):
  folders = list((pathlib.Path(log_dir) / "plugins" / "profile").iterdir())
  assert len(folders) == 1
  assert re.fullmatch(r"\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d", folders[0].name)   # JAX's name
  return {p.name: p for p in folders[0].iterdir()}


def _events(path):
  with gzip.open(path, "rt") as f:
    return json.load(f)


def test_trace_writes_jax_layout_with_annotations_and_jit_events(tmp_path):
  f = jax.jit(lambda x: jnp.sin(x) * 2)
  f(jnp.ones(2))   # a signature served from the fast path before the trace
  with P.trace(tmp_path):
    with P.StepTraceAnnotation("train", step_num=3):
      with P.TraceAnnotation("myann", foo=1, bar="x"):
        f(jnp.ones(3)).block_until_ready()   # traced and compiled here
        f(jnp.ones(2)).block_until_ready()
  files = _trace_files(tmp_path)
  # JAX writes <host>.trace.json.gz and <host>.xplane.pb
  host = socket.gethostname()
  assert {f"{host}.trace.json.gz", f"{host}.xplane.pb"} <= set(files)
  assert "perfetto_trace.json.gz" not in files
  trace = _events(files[f"{socket.gethostname()}.trace.json.gz"])
  assert trace["displayTimeUnit"] == "ns" and trace["metadata"] == {"highres-ticks": True}
  spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
  by_name = {}
  for e in spans:
    by_name.setdefault(e["name"], []).append(e)
  # as JAX records them: the kwargs as string arguments, the step nesting the annotation
  (train,), (ann,) = by_name["train"], by_name["myann"]
  assert train["args"] == {"step_num": "3"} and ann["args"] == {"bar": "x", "foo": "1"}
  assert train["ts"] <= ann["ts"] and ann["ts"] + ann["dur"] <= train["ts"] + train["dur"]
  # both calls, each inside the annotation on its thread; the compile (JAX's event name)
  calls = by_name["PjitFunction(<lambda>)"]   # JAX's name
  assert len(calls) == 2
  compiles = [e for e in by_name["backend_compile_and_load"]
              if e["args"]["fun_name"] == "<lambda>"]
  assert compiles and all(e["tid"] == ann["tid"] or e["ts"] >= ann["ts"] for e in compiles)
  for e in calls:
    assert e["tid"] == ann["tid"] and ann["ts"] <= e["ts"] <= ann["ts"] + ann["dur"]
  (traced,) = by_name["/jax/core/compile/jaxpr_trace_duration"]
  assert traced["args"] == {"fun_name": "<lambda>"}
  names = {e["args"]["name"] for e in trace["traceEvents"]
           if e["ph"] == "M" and e["name"] == "process_name"}
  assert names == {"/host:CPU"}   # JAX's name for the host's plane


def test_annotations_record_on_their_thread_and_only_while_tracing(tmp_path):
  @P.annotate_function
  def g(x):
    return x + 1

  @functools.partial(P.annotate_function, name="named", k=2)
  def h(x):
    return x + 1

  g(0)   # before the trace: not recorded
  P.start_trace(tmp_path)
  assert P.TraceAnnotation.is_enabled()
  assert g(1) == 2 and h(2) == 3
  worker = threading.Thread(target=g, args=(5,), name="worker")
  worker.start()
  worker.join()
  P.stop_trace()
  assert not P.TraceAnnotation.is_enabled()
  g(0)
  trace = _events(_trace_files(tmp_path)[f"{socket.gethostname()}.trace.json.gz"])
  spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
  gs = [e for e in spans if e["name"] == g.__qualname__]   # JAX's default name
  (named,) = [e for e in spans if e["name"] == "named"]
  assert named["args"] == {"k": "2"} and len(gs) == 2
  assert gs[0]["tid"] != gs[1]["tid"]
  threads = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"]
             if e["ph"] == "M" and e["name"] == "thread_name"}
  assert threads[gs[1]["tid"]] == "worker"


def test_host_tracer_level_zero_records_no_spans(tmp_path):
  # recorded: JAX 0.10.2 with host_tracer_level=0 writes the host plane's two metadata
  # events and no span, annotations and jitted calls included
  options = P.ProfileOptions()
  options.host_tracer_level = 0
  with P.trace(tmp_path, profiler_options=options):
    with P.TraceAnnotation("ann"):
      jax.jit(lambda x: x + 1)(1.0).block_until_ready()
  trace = _events(_trace_files(tmp_path)[f"{socket.gethostname()}.trace.json.gz"])
  assert [e for e in trace["traceEvents"] if e["ph"] == "X"] == []
  assert [e["name"] for e in trace["traceEvents"]] == ["process_name", "process_sort_index"]


def test_perfetto_trace_is_the_trace_without_metadata(tmp_path, capsys):
  with P.trace(tmp_path, create_perfetto_link=True):
    with P.TraceAnnotation("x"):
      pass
  files = _trace_files(tmp_path)
  perfetto = _events(files["perfetto_trace.json.gz"])
  trace = _events(files[f"{socket.gethostname()}.trace.json.gz"])
  del trace["metadata"]   # what JAX's _write_perfetto_trace_file removes
  assert perfetto == trace
  assert str(files["perfetto_trace.json.gz"]) in capsys.readouterr().out


def test_trace_context_stops_on_exception(tmp_path):
  with pytest.raises(ZeroDivisionError):
    with P.trace(tmp_path):
      1 / 0
  assert "perfetto_trace.json.gz" not in _trace_files(tmp_path)
  with pytest.raises(RuntimeError, match="No profile started"):
    P.stop_trace()


def test_trace_annotation_api_matches_jax():
  with P.TraceAnnotation("x", a=1) as t:
    assert isinstance(t, P.TraceAnnotation)   # JAX's __enter__ returns the annotation
  assert issubclass(P.StepTraceAnnotation, P.TraceAnnotation)
  t.set_metadata(b=2)
  for bad in [(), (3,), ("a", "b")]:
    with pytest.raises(TypeError):
      P.TraceAnnotation(*bad)
  with pytest.raises(TypeError, match="missing 1 required positional argument: 'func'"):
    P.annotate_function(name="named")   # JAX's too: pass name with functools.partial

  def ff(x):
    return x
  wrapped = P.annotate_function(ff)
  assert wrapped.__wrapped__ is ff and wrapped.__name__ == "ff"


def _varint(b, i):
  result = shift = 0
  while True:
    byte = b[i]
    i += 1
    result |= (byte & 0x7F) << shift
    shift += 7
    if byte < 0x80:
      return result, i


def _fields(b):
  """(field number, value) of a protobuf message: varints as ints, the rest as bytes."""
  i, out = 0, []
  while i < len(b):
    key, i = _varint(b, i)
    assert key & 7 in (0, 2)
    if key & 7 == 0:
      value, i = _varint(b, i)
    else:
      n, i = _varint(b, i)
      value, i = b[i:i + n], i + n
    out.append((key >> 3, value))
  return out


def _packed(b):
  i, out = 0, []
  while i < len(b):
    v, i = _varint(b, i)
    out.append(v)
  return out


def _pprof(data):
  """perftools.profiles.Profile: sample_type = 1, sample = 2, string_table = 6."""
  fields = _fields(gzip.decompress(data))
  strings = [v.decode() for n, v in fields if n == 6]
  types = [tuple(strings[v] for _, v in _fields(t)) for n, t in fields if n == 1]
  samples = []
  for n, s in fields:
    if n == 2:
      sample = _fields(s)
      values = [x for m, v in sample if m == 2 for x in _packed(v)]
      labels = {strings[dict(_fields(v))[1]]: strings[dict(_fields(v))[2]]
                for m, v in sample if m == 3}
      samples.append((values, labels))
  return strings, types, samples


def test_device_memory_profile_is_jax_s_pprof_of_live_buffers(tmp_path):
  x = jnp.ones((100,), jnp.float32)
  y = jnp.zeros((3, 4), jnp.int32)
  data = P.device_memory_profile()
  assert data[:2] == b"\x1f\x8b"   # gzipped, as JAX's
  strings, types, samples = _pprof(data)
  assert strings[0] == ""
  # recorded from JAX 0.10.2 on the CPU: these sample types, and for these two arrays
  # samples [1, 400] and [1, 48] labelled kind=buffer, device=cpu:0
  assert types == [("allocations", "count"), ("space", "bytes")]
  buffers = [(v, lab) for v, lab in samples if lab.get("kind") == "buffer"]
  device = jax.devices()[0]
  label = {"kind": "buffer", "device": f"{device.platform}:{device.id}"}
  for array in (x, y):
    assert ([1, array.nbytes], label) in buffers
  assert sum(v[1] for v, _ in buffers) >= 448
  path = tmp_path / "memory.prof"
  P.save_device_memory_profile(path)
  assert _pprof(path.read_bytes())[1] == types
  del x, y


def test_device_memory_profile_unknown_backend_raises_jax_error():
  with pytest.raises(RuntimeError, match=re.escape("Unknown backend nope. Available "
                                                   "backends are")):
    P.device_memory_profile("nope")


def test_profiler_server_is_reported_missing():
  with pytest.raises(errors.JaxRuntimeError, match="UNIMPLEMENTED.*no profiler server"):
    P.start_server(9999)
  with pytest.raises(ValueError, match="^No active profiler server.$"):
    P.stop_server()   # JAX's error when none runs
  # JAX raises JaxRuntimeError for a subprocess it cannot register
  with pytest.raises(errors.JaxRuntimeError, match="UNIMPLEMENTED"):
    P.register_subprocess(1, 1)


DATA = pathlib.Path(__file__).parent / "data"


def _dump(profile):
  """A ProfileData as plain lists: planes (name, stats, lines (name, events (name,
  start_ns, duration_ns, end_ns, stats)))."""
  return [[p.name, [list(s) for s in p.stats],
           [[line.name, [[e.name, e.start_ns, e.duration_ns, e.end_ns,
                          [list(s) for s in e.stats]] for e in line.events]]
            for line in p.lines]]
          for p in profile.planes]


def test_profile_data_reads_jax_s_xspace_as_jax_does():
  # a trace JAX 0.10.2 wrote (python_tracer_level=0, host_tracer_level=1) of a
  # StepTraceAnnotation("train", step_num=3) around a TraceAnnotation("myann", foo=1,
  # bar="x", r=2.5, neg=-7) around a jitted call, and what JAX's ProfileData read in it
  path = DATA / "profiler_jax_0.10.2.xplane.pb"
  recorded = json.loads((DATA / "profiler_jax_0.10.2_profile_data.json").read_text())
  assert _dump(P.ProfileData.from_file(str(path))) == recorded
  assert _dump(P.ProfileData.from_serialized_xspace(path.read_bytes())) == recorded
  profile = P.ProfileData(path.read_bytes())
  host = profile.find_plane_with_name("/host:CPU")
  events = {e.name: e for line in host.lines for e in line.events}
  assert list(events["train"].stats) == [("_r", 1), ("step_num", 3)]
  assert list(events["myann"].stats) == [("foo", 1), ("bar", "x"), ("r", 2.5), ("neg", -7)]
  assert "PjitFunction(<lambda>)" in events   # JAX's name for a jitted call
  assert profile.find_plane_with_name("nope") is None


def test_jax_reads_jaxlite_s_xspace_as_jaxlite_does(tmp_path):
  f = jax.jit(lambda x: x * 2)
  with P.trace(tmp_path):
    with P.StepTraceAnnotation("train", step_num=3):
      with P.TraceAnnotation("myann", foo=1, bar="x", r=2.5, neg=-7):
        f(jnp.ones(3)).block_until_ready()
  files = _trace_files(tmp_path)
  path = files[f"{socket.gethostname()}.xplane.pb"]
  ours = _dump(P.ProfileData.from_file(str(path)))
  host = next(p for p in ours if p[0] == "/host:CPU")
  events = {e[0]: e for line in host[2] for e in line[1]}
  assert events["train"][4] == [["_r", 1], ["step_num", 3]]   # as JAX's trace records it
  assert events["myann"][4] == [["foo", 1], ["bar", "x"], ["r", 2.5], ["neg", -7]]
  assert "PjitFunction(<lambda>)" in events
  out = run_reference(
      "import json, jax.profiler as P\n"
      f"d = P.ProfileData.from_file({str(path)!r})\n"
      "print(json.dumps([[p.name, [list(s) for s in p.stats], [[l.name, [[e.name, "
      "e.start_ns, e.duration_ns, e.end_ns, [list(s) for s in e.stats]] for e in l.events]] "
      "for l in p.lines]] for p in d.planes]))", text=True)
  assert json.loads(out.strip().splitlines()[-1]) == ours


def test_profile_data_errors_match_jax(tmp_path):
  missing = str(tmp_path / "nonexistent")
  with pytest.raises(errors.JaxRuntimeError, match=re.escape(
      f"NOT_FOUND: {missing}; No such file or directory")):
    P.ProfileData.from_file(missing)
  with pytest.raises(RuntimeError, match="^Failed to parse XSpace from array$"):
    P.ProfileData.from_serialized_xspace(b"garbage\xff")
  assert list(P.ProfileData.from_serialized_xspace(b"").planes) == []
  with pytest.raises(TypeError):
    P.ProfileData()
  for cls in (P.ProfilePlane, P.ProfileEvent):   # only ProfileData makes them, as in JAX
    with pytest.raises(TypeError, match="No constructor defined"):
      cls()


def test_report_still_lists_jitted_functions():
  f = jax.jit(lambda x: x * 2)
  np.testing.assert_allclose(f(jnp.arange(3.0)), [0.0, 2.0, 4.0])
  assert any(s.calls >= 1 for s in P.report(print_=False))
