"""The compile server: XLA's side of the auto tier's race in a separate process."""
import collections
import datetime
import os
import pickle
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite._src.core import core
from jaxlite._src import passes, tiers
from jaxlite._src.compiler import XlaDispatch
from jaxlite._src.backends import background, compile_server

needs_xla = pytest.mark.skipif(not tiers.xla_available(), reason="no XLA plugin installed")


def _program(x, w):
  """A scan (a sub-jaxpr), a matrix product, literals and a closed-over constant."""
  table = np.linspace(-1.0, 1.0, 8, dtype=np.float32)

  def body(carry, row):
    return jnp.tanh(carry @ w + row) * 0.5, jnp.sum(carry)
  carry, sums = lax.scan(body, x[0], x)
  return carry + table, sums


def _program_in_numpy(x, w):
  carry, sums = x[0], []
  for row in x:
    sums.append(carry.sum())
    carry = np.tanh(carry @ w + row) * 0.5
  return carry + np.linspace(-1.0, 1.0, 8, dtype=np.float32), np.array(sums)


_X = np.random.default_rng(0).standard_normal((5, 8)).astype(np.float32)
_W = np.random.default_rng(1).standard_normal((8, 8)).astype(np.float32) * 0.3


def _closed():
  return passes.optimize(jax.make_jaxpr(_program)(_X, _W))


def test_a_jaxpr_crosses_the_wire_with_its_primitives_by_name():
  closed = _closed()
  large = np.arange(compile_server.OUT_OF_BAND_BYTES // 4, dtype=np.float32)
  parts = compile_server.dumps((closed, [_X, large]))
  # the large argument's memory travels out of band, uncopied; small arrays (the closed
  # constant, _X) inside the pickle
  assert len(parts) == 2 and parts[1].nbytes == large.nbytes
  back, (x, y) = compile_server.loads([bytes(p) for p in parts])
  np.testing.assert_array_equal(x, _X)
  np.testing.assert_array_equal(y, large)
  assert str(back) == str(closed)   # variables shared between equations stay shared
  aval = core.ShapedArray((2,), np.float32)
  dropped, kept = compile_server.loads(compile_server.dumps((core.DropVar(aval), core.Var(aval))))
  assert type(dropped) is core.DropVar and type(kept) is core.Var and kept.aval == aval
  prims = lambda c: [e.primitive for e in c.jaxpr.eqns]   # noqa: E731
  assert all(a is b for a, b in zip(prims(back), prims(closed))) and prims(back)
  scan_eqn = next(e for e in back.jaxpr.eqns if e.primitive.name == "scan")
  known = compile_server._primitives()
  assert all(known[e.primitive.name] is e.primitive for e in scan_eqn.params["jaxpr"].jaxpr.eqns)
  out = core.eval_jaxpr(back.jaxpr, back.consts, _X, _W)
  for got, want in zip(out, _program_in_numpy(_X, _W)):
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5, atol=2e-6)


def test_the_wire_refuses_what_the_server_would_have_to_import_or_cannot_rebuild():
  class Local:   # a class of the user's (here: of this test module)
    pass
  with pytest.raises(pickle.UnpicklingError, match="outside what the compile server"):
    compile_server.loads([pickle.dumps(datetime.date(2026, 12, 2))])   # a module of its own
  with pytest.raises((pickle.PicklingError, AttributeError)):
    compile_server.dumps(Local())
  twin = core.Primitive("sin")   # not the primitive named "sin" that the server knows
  with pytest.raises(pickle.PicklingError, match="'sin' is not the one"):
    compile_server.dumps(twin)
  with pytest.raises(pickle.UnpicklingError, match="no primitive named"):
    compile_server.primitive("no_such_primitive")


def test_warm_up_stops_at_its_budget_or_once_a_run_is_as_fast_as_when_warm(monkeypatch):
  now = [0.0]
  monkeypatch.setattr(compile_server, "time", type("Clock", (), {
      "perf_counter": staticmethod(lambda: now[0])}))

  def runs_taking(*seconds):
    taken = []

    def run():
      now[0] += seconds[min(len(taken), len(seconds) - 1)]
      taken.append(1)
    return run, taken
  run, taken = runs_taking(0.040, 0.009, 0.002, 0.0001)
  compile_server.warm_up(run, 8, 0.1, warm=0.0003)
  assert len(taken) == 4   # the first run is never enough: one-time costs
  run, taken = runs_taking(0.040, 0.009, 0.002, 0.0001)
  compile_server.warm_up(run, 8, 0.1)   # no known warm time: as many runs as allowed
  assert len(taken) == 8
  run, taken = runs_taking(0.040, 0.06)
  compile_server.warm_up(run, 8, 0.1, warm=0.0003)
  assert len(taken) == 3   # the budget (0.1 s after the first run) ends it


def _fresh_auto_function():
  return jax.jit(lambda x, w: _program(x, w))


def _settle(f, *args, timeout=60):
  deadline = time.time() + timeout
  outs = f(*args)
  while not tiers.settled(f) and time.time() < deadline:
    outs = f(*args)
    time.sleep(0.005)
  assert tiers.settled(f), "the race did not finish"
  return outs


def _check(outs):
  for got, want in zip(outs, _program_in_numpy(_X, _W)):
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-5, atol=2e-6)


@needs_xla
def test_the_auto_race_times_xla_in_the_server_and_loads_it_here_when_it_wins(monkeypatch):
  served = _xla_always_wins(monkeypatch)   # on the server's real figures
  server = compile_server.server()
  assert server is not None, compile_server.failure()
  f = _fresh_auto_function()
  _check(_settle(f, _X, _W))
  row = f.stats()[0]
  assert row["tier"] == "xla" and "xla" in row["compile_ms"], row
  entry, = f._cache.values()
  [times] = served[entry]   # (races of earlier tests' functions may finish meanwhile)
  assert len(times) == tiers.Race.TRIALS and all(t > 0 for t in times)
  assert entry.xla_text.startswith("module") and "stablehlo" in entry.xla_text
  assert type(entry.run) is XlaDispatch   # deserialized in this process
  _check(f(_X, _W))
  _check(f(_X * 1, _W * 1))
  assert compile_server.server() is server   # one server, kept


@needs_xla
def test_the_race_pickles_its_request_on_the_callers_thread(monkeypatch):
  # in the call that earned the race: on the compile thread, pickling took the GIL from
  # the caller's next call in many turns (benchmarks/README.md, fourteenth pass)
  _xla_always_wins(monkeypatch)
  pickled_on = []
  dumps = compile_server.dumps
  monkeypatch.setattr(compile_server, "dumps", lambda obj: (
      pickled_on.append(threading.current_thread()) or dumps(obj)))
  f = _fresh_auto_function()
  _check(_settle(f, _X, _W))
  assert f.stats()[0]["tier"] == "xla"
  assert pickled_on and set(pickled_on) == {threading.current_thread()}


def _idle_compile_thread():
  """Wait for the races of earlier tests to end: the compile thread is then idle."""
  if tiers._worker is not None:
    tiers._worker.queue.join()


@needs_xla
def test_the_caller_sends_the_request_and_the_compile_thread_reads_the_answer(monkeypatch):
  # Taking the request over woke the compile thread into 0.4-0.6 ms of Python while the
  # caller's next call ran: the caller sends it when that thread is idle
  _xla_always_wins(monkeypatch)
  assert compile_server.server() is not None, compile_server.failure()   # running
  _idle_compile_thread()
  sent_on, read_on = [], []
  send, reply = compile_server.Server.send, compile_server.Server.reply
  monkeypatch.setattr(compile_server.Server, "send", lambda self, *args, **kw: (
      sent_on.append(threading.current_thread()) or send(self, *args, **kw)))
  monkeypatch.setattr(compile_server.Server, "reply", lambda self: (
      read_on.append(threading.current_thread()) or reply(self)))
  f = _fresh_auto_function()
  _check(_settle(f, _X, _W))
  assert f.stats()[0]["tier"] == "xla"
  assert sent_on == [threading.current_thread()]
  assert [t.name for t in read_on] == ["jaxlite-xla-compile"]


def _xla_always_wins(monkeypatch):
  """Make every race's XLA win on the server's real figures; returns those figures, per
  jit cache entry."""
  monkeypatch.setattr(tiers.Probe, "BUDGET", 0.0)   # any execution earns a compile
  served = collections.defaultdict(list)
  trial_times = tiers.RemoteXla.trial_times

  def xla_wins(self, race, leaves):
    served[self.entry].append(trial_times(self, race, leaves))
    return [0.0] * race.TRIALS

  monkeypatch.setattr(tiers.RemoteXla, "trial_times", xla_wins)
  _verdict_for_xla(monkeypatch)
  return served


def _verdict_for_xla(monkeypatch):
  """The verdict on the callers' calls (tested in tests/test_tiers.py) goes to XLA."""
  def verdict(race):
    with race.lock:
      race._install("xla", {"numpy": 1.0, "xla": 0.5})
  monkeypatch.setattr(tiers.Race, "restart", verdict)


@needs_xla
def test_an_executable_the_server_found_in_the_persistent_cache_runs_here(monkeypatch, tmp_path):
  _xla_always_wins(monkeypatch)
  old = jax.config.jaxlite_cache_dir
  jax.config.update("jaxlite_cache_dir", str(tmp_path))   # the server takes it per request
  try:
    notes = []
    for _ in range(2):   # the first compiles and writes the entry, the second loads it
      f = _fresh_auto_function()
      _check(_settle(f, _X, _W))
      entry, = f._cache.values()
      assert entry.tier == "xla" and type(entry.run) is XlaDispatch, entry.tier_note
      _check(f(_X, _W))
      _check(f(_X + 0, _W))
      notes.append(entry.tier_note)
  finally:
    jax.config.update("jaxlite_cache_dir", old)
  assert notes[0] is None and "persistent compile cache" in notes[1], notes


@needs_xla
def test_a_loss_in_the_server_keeps_tier_0_without_loading_xla_here(monkeypatch):
  monkeypatch.setattr(tiers.Probe, "BUDGET", 0.0)
  # (per jit cache entry: races of earlier tests' functions may finish meanwhile)
  loads, raced_on, jobs = [], collections.defaultdict(list), collections.defaultdict(list)
  monkeypatch.setattr(tiers.RemoteXla, "trial_times", lambda self, race, leaves: (
      raced_on[self.entry].append([np.asarray(x) for x in leaves]) or [1.0] * race.TRIALS))
  monkeypatch.setattr(tiers.RemoteXla, "load",
                      lambda self, race, leaves: loads.append(1))
  submit = tiers.submit
  monkeypatch.setattr(tiers, "submit", lambda fn, *args, **kw: (
      jobs[args[0]].append(fn) or submit(fn, *args, **kw)))   # (args[0]: the entry)
  server = compile_server.server()
  assert server is not None, compile_server.failure()
  _idle_compile_thread()   # (so that the caller sends the request: see below)
  f = _fresh_auto_function()
  f(_X, _W)   # earns the compile: the race runs on these values, whatever comes next
  _settle(f, _X + 1, _W)
  entry, = f._cache.values()
  assert f.stats()[0]["tier"] == "numpy" and not loads
  # the caller sent the request and the race ended without reading the answer: the
  # compile thread read it all the same, and the server serves the next request
  _idle_compile_thread()
  assert not server.owed and not server.lock.locked()
  assert len(server.compete(compile_server.request(_closed(), "g", None, [_X, _W], 0, 0.0,
                                                   1))["times"]) == 1
  _check(f(_X, _W))
  [(x, w)] = raced_on[entry]
  np.testing.assert_array_equal(x, _X)
  np.testing.assert_array_equal(w, _W)
  assert len(jobs[entry]) == 1   # one background job per race: each takes the GIL from a caller


@needs_xla
@pytest.mark.parametrize("early", [True, False])
def test_the_jaxpr_is_pickled_once_and_early_for_a_race_expected_early(monkeypatch, early):
  # A signature whose first run says it earns its race within Probe.EARLY_CALLS calls
  # pickles its jaxpr (compile_server.Program) in that first call, which traced, and the
  # call that earns the race pickles only its values; the others pickle it when they earn
  # it. Either way once, and the race reuses it.
  made, requests = [], []
  program = compile_server.Program
  monkeypatch.setattr(compile_server, "Program", lambda *a: made.append(a) or program(*a))
  request = compile_server.request
  monkeypatch.setattr(compile_server, "request",
                      lambda *a, **k: requests.append(a) or request(*a, **k))
  monkeypatch.setattr(tiers.Probe, "BUDGET", 1.0)   # watched, not earned
  monkeypatch.setattr(tiers.Probe, "EARLY_CALLS", 1e12 if early else 0)
  f = _fresh_auto_function()
  _check(f(_X, _W))
  entry, = f._cache.values()
  assert isinstance(entry.run, tiers.Probe) and not requests
  assert len(made) == (1 if early else 0)
  assert (entry.run.program is not None) == early
  assert not early or (entry.run.program.parts and entry.run.program.modules)
  _check(f(_X, _W))
  assert len(made) == (1 if early else 0)   # later calls prepare nothing
  monkeypatch.setattr(tiers.Probe, "BUDGET", 0.0)   # the next call earns the race
  _check(_settle(f, _X + 0, _W))
  assert len(made) == 1 and len(requests) == 1 and requests[0][-1] is not None
  assert set(f.stats()[0]["tier_ms"]) == {"numpy", "xla"}   # raced in the server
  _check(f(_X, _W))


@needs_xla
def test_the_race_runs_here_when_the_server_cannot_take_the_jaxpr(monkeypatch):
  monkeypatch.setattr(tiers.Probe, "BUDGET", 0.0)

  def refuse(*args, **kwargs):
    raise compile_server.ServerError("cannot send this jaxpr")
  monkeypatch.setattr(compile_server.Server, "compete", refuse)
  f = _fresh_auto_function()
  _check(_settle(f, _X, _W))
  row = f.stats()[0]
  assert set(row["tier_ms"]) == {"numpy", "xla"} and "xla" in row["compile_ms"]
  entry, = f._cache.values()
  assert entry.xla_text and "stablehlo" in entry.xla_text   # compiled here
  _check(f(_X, _W))


@needs_xla
def test_a_program_pickled_beforehand_makes_the_same_request():
  # tiers.Probe.prepare pickles the jaxpr once; the request reuses that pickle
  server = compile_server.server()
  assert server is not None, compile_server.failure()
  closed = _closed()
  donation = [None, None]
  fresh = server.compete(compile_server.request(closed, "g", donation, [_X, _W], 1, 0.1, 2))
  reused = server.compete(compile_server.request(
      None, "g", None, [_X, _W], 1, 0.1, 2, program=compile_server.Program(closed, donation)))
  assert fresh["text"] == reused["text"] and "stablehlo" in fresh["text"]
  assert len(fresh["times"]) == len(reused["times"]) == 2 and reused["executable"]


@needs_xla
def test_the_winner_dispatches_with_the_code_the_server_compiled(monkeypatch):
  # The server sends its compiled dispatch code (pjrt.cached_call_code) with the
  # executable, so that loading the winner compiles no Python here. The answers are
  # NumPy's, and the generated dispatch agrees with the general path.
  import marshal
  from jaxlite._src.backends import xla
  from jaxlite._src.backends.xla import pjrt
  server = compile_server.server()
  assert server is not None, compile_server.failure()
  closed = _closed()
  r = server.compete(compile_server.request(closed, "g", None, [_X, _W], 0, 0.0, 1))
  version, data = r["call_code"]
  assert version == sys.version
  counts = (len(closed.in_avals), len(closed.out_avals))
  monkeypatch.setattr(pjrt, "_cached_call_code", {})
  monkeypatch.setattr(pjrt, "_cached_call_makers", {})
  compiled = []
  monkeypatch.setattr(pjrt, "compile", lambda *a: compiled.append(a) or compile(*a),
                      raising=False)
  exe = xla.deserialize(r["executable"], closed, r["text"], None, r["call_code"])
  assert not compiled and marshal.dumps(pjrt._cached_call_code[counts]) == data
  bufs = [xla.device_put(_X), xla.device_put(_W)]
  fast, general = exe.execute_device(bufs), exe.loaded.execute_device(bufs)
  assert exe.execute_device is not exe.loaded.execute_device   # the generated function
  _check([b.to_numpy() for b in fast])
  for a, b in zip(fast, general):
    np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())
  # code from another Python version is not used: it is compiled here
  monkeypatch.setattr(pjrt, "_cached_call_code", {})
  monkeypatch.setattr(pjrt, "_cached_call_makers", {})
  exe = xla.deserialize(r["executable"], closed, r["text"], None, ("2.7.18", b"\0"))
  assert len(compiled) == 1
  _check([b.to_numpy() for b in exe.execute_device(bufs)])


@needs_xla
def test_the_server_answers_an_error_and_keeps_serving():
  server = compile_server.server()
  assert server is not None, compile_server.failure()
  foreign = core.Primitive("compile_server_test_only")   # no lowering rule anywhere
  foreign.def_abstract_eval(lambda x: x)
  x = np.ones(3, np.float32)
  closed = jax.make_jaxpr(lambda v: foreign.bind(v))(x)
  with pytest.raises(compile_server.ServerError, match="compile_server_test_only"):
    server.compete(compile_server.request(closed, "f", None, [x], 0, 0.0, 1))
  del core.abstract_eval_rules[foreign]
  result = server.compete(compile_server.request(_closed(), "g", None, [_X, _W], 1, 0.1, 2))
  assert len(result["times"]) == 2 and result["executable"] and result["text"]


def test_no_server_when_the_flag_is_off():
  with jax.config.override("jaxlite_compile_server", False):
    assert compile_server.server() is None


def test_a_missing_plugin_is_a_clear_refusal(monkeypatch):
  monkeypatch.setenv("JAXLITE_PJRT_CPU_PLUGIN", "/nonexistent/plugin.so")
  monkeypatch.setenv("JAXLITE_PLATFORM", "cpu")
  with pytest.raises(compile_server.ServerError, match="no CPU plugin"):
    compile_server.Server()


@needs_xla
def test_a_forked_process_and_a_dead_server_are_handled(monkeypatch):
  first = compile_server.server()
  assert first is not None, compile_server.failure()
  real_pid = os.getpid()
  monkeypatch.setattr(compile_server.os, "getpid", lambda: real_pid + 10**6)
  try:
    second = compile_server.server()   # "forked": its own server, not its parent's pipes
    assert second is not None and second is not first
    assert second.process.pid != first.process.pid
    second.process.kill()
    second.process.wait()
    assert compile_server.server() is None   # ended: not restarted, and it says why
    assert "ended" in compile_server.failure()
  finally:
    monkeypatch.setattr(compile_server.os, "getpid", lambda: real_pid)
    compile_server._server, compile_server._failure = first, None
  assert compile_server.server() is first


_AFFINITY_SCRIPT = textwrap.dedent("""
    import os, threading
    from jaxlite._src.backends import background
    cpus = os.sched_getaffinity(0)
    ready, done = threading.Event(), threading.Event()
    t = threading.Thread(target=lambda: (ready.set(), done.wait()))
    t.start(); ready.wait()
    tids = [int(x) for x in os.listdir("/proc/self/task")]
    first = min(cpus)
    background.keep_process_off(first, cpus)
    print(all(os.sched_getaffinity(tid) == cpus - {first} for tid in tids))
    background.keep_process_off(None, cpus)
    print(all(os.sched_getaffinity(tid) == cpus for tid in tids))
    background.keep_process_off(first, {first})
    print(all(os.sched_getaffinity(tid) == {first} for tid in tids))
    done.set(); t.join()
""")


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs Linux and two CPUs")
def test_the_server_keeps_every_thread_off_the_callers_cpu():
  out = subprocess.run([sys.executable, "-c", _AFFINITY_SCRIPT], capture_output=True,
                       text=True, timeout=120)
  assert out.stdout.split() == ["True", "True", "True"], out.stderr


_EXIT_SCRIPT = textwrap.dedent("""
    import atexit, os, signal, sys, time
    import numpy as np
    import jaxlite as jax, jaxlite.numpy as jnp
    from jaxlite._src import tiers
    from jaxlite._src.backends import compile_server
    tiers.Probe.BUDGET = 0.0   # the first call starts the race
    server = compile_server.server()
    assert server is not None, compile_server.failure()
    os.kill(server.process.pid, signal.SIGSTOP)   # a server that gets no CPU: no answer
    # (registered before the compile thread starts, so it runs after that thread stopped)
    atexit.register(lambda: print("xla loaded here:", "jaxlite._src.backends.xla.pjrt" in
                                  sys.modules, f.stats()[0]["tier"], flush=True))
    f = jax.jit(lambda x: jnp.sin(x) * 2.0)
    print(np.asarray(f(jnp.arange(3.0))).tolist())
    while not server.lock.locked():   # the race's request is in the server
      time.sleep(0.01)
    print("exiting", flush=True)
""")


@needs_xla
@pytest.mark.skipif(os.name != "posix", reason="SIGSTOP stands in for a server with no CPU")
def test_exit_does_not_wait_for_a_server_that_has_not_answered():
  """The server compiles at the lowest priority: on a busy machine its answer can take
  minutes. Exit ends it instead, and races nothing in this process."""
  t0 = time.time()
  out = subprocess.run([sys.executable, "-c", _EXIT_SCRIPT], capture_output=True, text=True,
                       timeout=120)
  assert out.returncode == 0, out.stderr
  assert out.stdout.split("\n")[:3] == [
      str((np.sin(np.arange(3.0, dtype=np.float32)) * 2.0).tolist()), "exiting",
      "xla loaded here: False numpy"], out.stdout + out.stderr
  assert time.time() - t0 < 60


@needs_xla
def test_a_program_that_calls_back_into_python_is_compiled_here(monkeypatch):
  """np.sin crosses the wire by name, but its callback must run in this process."""
  monkeypatch.setattr(tiers.Probe, "BUDGET", 0.0)
  server = compile_server.server()
  assert server is not None, compile_server.failure()
  x = np.linspace(0.0, 1.0, 16, dtype=np.float32)
  spec = jax.ShapeDtypeStruct(x.shape, x.dtype)

  def f(v):
    return jax.pure_callback(np.sin, spec, v * 2.0) + 1.0
  closed = passes.optimize(jax.make_jaxpr(f)(x))
  with pytest.raises(compile_server.ServerError, match="calls back into Python"):
    server.compete(compile_server.request(closed, "f", None, [x], 0, 0.0, 1))
  g = jax.jit(f)
  want = np.sin(x * 2.0) + 1.0
  np.testing.assert_allclose(np.asarray(_settle(g, x)), want, rtol=1e-6)
  row = g.stats()[0]
  assert set(row["tier_ms"]) == {"numpy", "xla"}, row   # raced here instead
  np.testing.assert_allclose(np.asarray(g(x)), want, rtol=1e-6)


@needs_xla
def test_an_executable_from_the_server_keeps_its_donation(monkeypatch):
  monkeypatch.setattr(tiers.Probe, "BUDGET", 0.0)
  monkeypatch.setattr(tiers.Race, "CALLER_CALLS", 10**9)   # tier 0 runs trials here
  trial_times = tiers.RemoteXla.trial_times
  monkeypatch.setattr(tiers.RemoteXla, "trial_times", lambda self, race, leaves: (
      trial_times(self, race, leaves), [0.0] * race.TRIALS)[1])   # XLA wins
  _verdict_for_xla(monkeypatch)
  f = jax.jit(lambda a, b: a * 2.0 + b, donate_argnums=0)
  b = jnp.ones(1000, jnp.float32)
  deadline = time.time() + 60
  while not (f._cache and tiers.settled(f)) and time.time() < deadline:
    a = jnp.arange(1000, dtype=jnp.float32)
    np.testing.assert_allclose(np.asarray(f(a, b)), np.arange(1000) * 2.0 + 1.0)
    time.sleep(0.005)
  assert f.stats()[0]["tier"] == "xla"
  entry, = f._cache.values()
  assert entry.run.executable.loaded.donors == (0,)
  a = jnp.arange(1000, dtype=jnp.float32)
  np.testing.assert_allclose(np.asarray(f(a, b)), np.arange(1000) * 2.0 + 1.0)
  assert a.is_deleted()


@needs_xla
@pytest.mark.skipif(not hasattr(os, "SCHED_IDLE"), reason="per-thread priorities: Linux")
def test_the_server_compiles_and_runs_xla_at_the_callers_priority():
  server = compile_server.server()
  assert server is not None, compile_server.failure()
  server.compete(compile_server.request(_closed(), "h", None, [_X, _W], 1, 0.1, 1))
  pid = server.process.pid
  nice = {}   # thread name -> the (priority, policy) of the threads of that name
  for tid in os.listdir(f"/proc/{pid}/task"):
    with open(f"/proc/{pid}/task/{tid}/comm") as f:
      nice.setdefault(f.read().strip(), []).append(
          (os.getpriority(os.PRIO_PROCESS, int(tid)), os.sched_getscheduler(int(tid))))
  caller = (os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0))
  assert caller[1] != os.SCHED_IDLE
  assert (os.getpriority(os.PRIO_PROCESS, pid), os.sched_getscheduler(pid)) == caller
  # (at the lowest priority XLA's compile starved beside a busy caller: issue 42)
  assert all(set(v) == {caller} for v in nice.values()), nice   # XLA's pools too


@pytest.mark.skipif(os.name != "posix", reason="a shell script stands in for Python")
def test_a_server_that_never_answers_is_given_up_on(monkeypatch, tmp_path):
  silent = tmp_path / "silent-python"
  silent.write_text("#!/bin/sh\nexec sleep 30\n")
  silent.chmod(0o755)
  monkeypatch.setattr(sys, "executable", str(silent))
  monkeypatch.setattr(compile_server.Server, "START_TIMEOUT", 0.5)
  t0 = time.time()
  with pytest.raises(compile_server.ServerError, match="did not start within 0.5 s"):
    compile_server.Server()
  assert time.time() - t0 < 10


@needs_xla
def test_xla_flags_changed_since_the_server_started_send_the_race_home(monkeypatch):
  server = compile_server.server()
  assert server is not None, compile_server.failure()
  monkeypatch.setenv("XLA_FLAGS", (os.environ.get("XLA_FLAGS") or "") + " --xla_dump_to=/x")
  with pytest.raises(compile_server.ServerError, match="XLA_FLAGS changed"):
    server.compete(compile_server.request(_closed(), "g", None, [_X, _W], 0, 0.0, 1))


@needs_xla
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs Linux and two CPUs")
def test_a_server_started_on_one_cpu_splits_large_programs_for_its_caller(
    monkeypatch, tmp_path):
  """XLA splits what a client compiles into a task per thread of its pools, sized by the
  CPUs its creating thread may use. A server started on one CPU must still split a large
  program for its caller's CPUs, and a small one not at all (XLA's dump shows both)."""
  monkeypatch.setenv("XLA_FLAGS", f"--xla_dump_to={tmp_path} --xla_dump_hlo_as_text")
  monkeypatch.setenv("JAXLITE_PERSISTENT_CACHE", "0")
  cpus = os.sched_getaffinity(0)
  made = {}

  def start_narrowed():
    os.sched_setaffinity(0, {min(cpus)})
    made["server"] = compile_server.Server()
  t = threading.Thread(target=start_narrowed)
  t.start()
  t.join()
  big = np.linspace(-1.0, 1.0, 1 << 20, dtype=np.float32)
  programs = {   # W8's hessian: a loop XLA splits in two when it may
      "large": (lambda x: jnp.sin(x) * jnp.cos(x) + jnp.tanh(x) * x[::-1], big),
      "small": (jax.hessian(lambda x: jnp.sum(jnp.tanh(x) ** 3)), big[:100])}
  try:
    for name, (fn, x) in programs.items():
      closed = passes.optimize(jax.make_jaxpr(fn)(x))
      made["server"].compete(compile_server.request(closed, name, None, [x], 0, 0.0, 1))
  finally:
    made["server"].close()

  def partitions(name):
    return sum(open(p).read().count("outer_dimension_partitions")
               for p in tmp_path.glob(f"*{name}*after_optimizations.txt"))
  assert partitions("large") > 0 and partitions("small") == 0


@needs_xla
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs Linux and two CPUs")
def test_a_server_started_off_a_cpu_still_keeps_off_the_callers(monkeypatch):
  """The compile thread starts the server while it keeps off the caller's CPU, so the
  server inherits only the other CPUs. Each request says which CPUs the caller has and
  which one to keep off: a server started off CPU ``first`` must move there when the
  caller has moved to another, and spread over all of them when it keeps off none."""
  cpus = os.sched_getaffinity(0)
  first, last = min(cpus), max(cpus)
  made = {}

  def start_narrowed():
    os.sched_setaffinity(0, cpus - {first})
    made["server"] = compile_server.Server()
  t = threading.Thread(target=start_narrowed)
  t.start()
  t.join()
  server = made["server"]
  try:
    def affinities():
      tids = os.listdir(f"/proc/{server.process.pid}/task")
      return {frozenset(os.sched_getaffinity(int(tid))) for tid in tids}
    assert affinities() == {frozenset(cpus - {first})}   # inherited from its starter
    monkeypatch.setattr(background._courtesy, "avoiding", last, raising=False)
    server.compete(compile_server.request(_closed(), "g", None, [_X, _W], 0, 0.0, 1))
    assert affinities() == {frozenset(cpus - {last})}
    monkeypatch.setattr(background._courtesy, "avoiding", None, raising=False)
    server.compete(compile_server.request(_closed(), "g", None, [_X, _W], 0, 0.0, 1))
    assert affinities() == {frozenset(cpus)}
  finally:
    server.close()



def test_closing_a_server_that_does_not_stop_reaps_it():
  """``close`` kills a server that has not ended a second after its input closed (one
  busy compiling), and must then reap it: an unreaped child made Popen warn "subprocess
  ... is still running" at the exit of numpyro's test_hmc_gibbs run."""
  server = object.__new__(compile_server.Server)   # its process only: one that sleeps on
  server.process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE)
  server.close()
  assert server.process.returncode is not None   # set once the child was waited for


_POOLS_SCRIPT = textwrap.dedent("""
    import os, sys, time
    import numpy as np
    import jaxlite as jax, jaxlite.numpy as jnp
    from jaxlite._src import tiers
    from jaxlite._src.backends import background, xla
    tiers.Probe.BUDGET = 0.0   # the first call starts the race
    xla.POOL_PER_CPU_FROM = float(sys.argv[1])   # 0: every winner runs long enough
    server_trial_times = tiers.RemoteXla.trial_times

    def xla_wins(self, race, leaves):   # the server's real figures stay in self.result
      server_trial_times(self, race, leaves)
      return [0.0] * race.TRIALS
    tiers.RemoteXla.trial_times = xla_wins

    def verdict_for_xla(race):
      with race.lock:
        race._install("xla", {"numpy": 1.0, "xla": 0.5})
    tiers.Race.restart = verdict_for_xla
    x = np.linspace(-1.0, 1.0, 64, dtype=np.float32).reshape(8, 8)
    f = jax.jit(lambda a: jnp.tanh(a @ a.T) + 1.0)
    deadline = time.time() + 60
    f(x)
    while not tiers.settled(f) and time.time() < deadline:
      f(x)
      time.sleep(0.005)
    assert f.stats()[0]["tier"] == "xla", f.stats()
    np.testing.assert_allclose(np.asarray(f(x)), np.tanh(x @ x.T) + 1.0, rtol=1e-5, atol=1e-6)
    print(xla._pool_size, len(background.process_cpus()), len(background._helpers))
""")


@needs_xla
@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs Linux and two CPUs")
def test_a_winner_that_runs_long_gets_a_pool_thread_per_cpu_here():
  """The compile thread, kept off the caller's CPU, makes the caller's XLA client when the
  race loads its first winner. XLA sizes the client's pools by that thread's CPUs: fewer
  than the process has. A winner whose run takes ``POOL_PER_CPU_FROM`` or longer gets a
  pool thread per CPU of the process instead (a 2 ms MLP step ran at 2.7 ms a call on one
  pool thread and at 2.1 on two); a shorter one keeps the fewer (a 0.02 ms hessian ran at
  0.02 ms on one and at 0.034-0.041 on two)."""
  def run(threshold):
    out = subprocess.run([sys.executable, "-c", _POOLS_SCRIPT, threshold], capture_output=True,
                         text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    return list(map(int, out.stdout.split()))
  wide_pool, cpus, wide_threads = run("0")
  narrow_pool, _, narrow_threads = run("inf")
  assert wide_pool == cpus and narrow_pool < cpus
  assert wide_threads > narrow_threads   # XLA started a pool thread per CPU
