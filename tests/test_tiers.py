"""Tier selection: pinned policies, the auto policy's probe and race, and the fallback."""
import collections
import math
import os
import threading
import time
import types

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite._src import backends
from jaxlite._src.backends import background
from jaxlite._src.backends import compile_server
from jaxlite._src import tiers

needs_xla = pytest.mark.skipif(not tiers.xla_available(), reason="no XLA plugin installed")


def test_policy_resolution_and_bad_backend():
  assert tiers.resolve_policy(None) is None and tiers.resolve_policy("cpu") == "xla"
  assert jax.jit(lambda x: x, backend="numpy")._policy == "numpy"
  with pytest.raises(ValueError, match="Unknown backend 'bogus'"):
    jax.jit(lambda x: x, backend="bogus")
  if "tpu" not in jax._src.backends.backends():   # as JAX: refused at the call
    with pytest.raises(RuntimeError, match="Backend 'tpu' failed to initialize.*libtpu.*"
                       r"Available backends are \['cpu'\]"):
      jax.jit(lambda x: x, backend="tpu")(1.0)


def test_numpy_policy_never_compiles_xla():
  f = jax.jit(lambda x: jnp.sin(x) * 2, backend="numpy")
  for _ in range(3):
    f(jnp.ones(1000))
  row = f.stats()[0]
  assert row["tier"] == "numpy" and list(row["compile_ms"]) == ["numpy"]


def test_cheap_functions_are_never_sent_to_xla_under_auto():
  f = jax.jit(lambda x: x + 1)
  for _ in range(20):
    f(jnp.ones(4))
  assert list(f.stats()[0]["compile_ms"]) == ["numpy"]


@needs_xla
def test_xla_policy_agrees_with_numpy_policy():
  def fn(x, w):
    return jnp.tanh(x @ w).sum(axis=0) + jnp.max(w)
  x = np.random.default_rng(0).standard_normal((8, 5)).astype(np.float32)
  w = np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32)
  xla_f = jax.jit(fn, backend="xla")
  np.testing.assert_allclose(xla_f(x, w), jax.jit(fn, backend="numpy")(x, w), rtol=1e-5)
  assert xla_f.stats()[0]["tier"] == "xla"
  assert "stablehlo" in xla_f.lower(x, w).as_text()


def test_the_probe_starts_xla_after_two_early_calls_in_a_row_or_its_budget(monkeypatch):
  # a call is early when it would spend the budget within EARLY_CALLS calls
  now = [0.0]
  monkeypatch.setattr(tiers, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
  monkeypatch.setattr(tiers.Probe, "prepare", lambda self: True)   # (no jaxpr here)
  monkeypatch.setattr(tiers.Probe, "LONG_CALL", 1e6)   # (fake time: no race during calls)

  class Entry:
    pass

  def start_race(entry, name, run, values, program, lost_races, in_flight=None):
    entry.started = (len(taken), values)
  monkeypatch.setattr(tiers, "start_race", start_race)

  def probe_with_calls_taking(*seconds):
    entry = Entry()
    entry.started = None

    def run(*values):
      now[0] += seconds[len(taken)]
      taken.append(1)
      return values
    entry.run = probe = tiers.Probe(entry, "f", run)
    for i in range(len(seconds)):
      probe(i)
    return entry
  early = tiers.Probe.BUDGET / tiers.Probe.EARLY_CALLS
  slow, fast = early * 1.01, early * 0.99
  taken = []   # a pause of the machine's: one early call alone starts nothing
  assert probe_with_calls_taking(fast, slow, fast, fast, slow, fast).started is None
  taken = []   # two in a row: the second call's values are raced on
  entry = probe_with_calls_taking(fast, slow, slow, fast)
  assert entry.started == (3, (2,)) and not isinstance(entry.run, tiers.Probe)
  taken = []   # the first two calls (which traced, and ran cold) count as any others
  assert probe_with_calls_taking(slow, slow).started == (2, (1,))
  taken = []   # the execution budget, in calls of any length
  n = math.ceil(tiers.Probe.BUDGET / fast)
  assert probe_with_calls_taking(*[fast] * (n + 1)).started[0] == n


def test_the_probe_prepares_in_its_first_call_only_a_race_expected_early(monkeypatch):
  # the race's pickle of the jaxpr goes into the first call (which traced) when that run
  # says the budget is spent within EARLY_CALLS calls; otherwise into the call that earns
  # the race, once
  now = [0.0]
  monkeypatch.setattr(tiers, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
  prepared = []
  monkeypatch.setattr(tiers.Probe, "prepare",
                      lambda self: prepared.append(self.calls) or True)
  monkeypatch.setattr(tiers.Probe, "LONG_CALL", 1e6)   # (fake time: no race during calls)

  class Entry:
    pass
  monkeypatch.setattr(tiers, "start_race", lambda entry, *args: setattr(entry, "started", True))
  early = tiers.Probe.BUDGET / tiers.Probe.EARLY_CALLS
  for first, expected in ((early * 1.1, [1]), (early * 0.9, [])):
    prepared.clear()
    entry = Entry()
    took = iter([first, early * 0.9])   # (a second early call would earn the race)
    entry.run = probe = tiers.Probe(entry, "f",
                                    lambda: now.__setitem__(0, now[0] + next(took)))
    probe()
    probe()
    assert prepared == expected and entry.run is probe
  entry.run = probe = tiers.Probe(entry, "f", lambda: now.__setitem__(0, now[0] + 1.0))
  prepared.clear()
  probe()   # earns the race at once: prepared there
  assert prepared == [1] and entry.started and entry.run is not probe


def test_a_first_call_still_running_after_long_call_seconds_starts_the_race(monkeypatch):
  # XLA then compiles beside that call, ready for the second; a short first call starts
  # nothing while it runs, and a race started during a call is not started again after it
  monkeypatch.setattr(tiers.Probe, "LONG_CALL", 0.05)
  monkeypatch.setattr(tiers.Probe, "prepare", lambda self: True)   # (no jaxpr here)
  started = []

  def start_race(entry, name, run, values, program, lost_races, in_flight=None):
    started.append((values, in_flight, running.is_set()))
  monkeypatch.setattr(tiers, "start_race", start_race)
  running = threading.Event()

  def long_run(*values):
    running.set()
    deadline = time.time() + 20
    while not started and time.time() < deadline:
      time.sleep(0.005)
    running.clear()
    return values

  class Entry:
    pass
  entry = Entry()
  entry.run = probe = tiers.Probe(entry, "f", long_run)
  t0 = time.perf_counter()
  assert probe(7) == (7,)
  assert len(started) == 1
  values, (since, thread), was_running = started[0]
  assert values == (7,) and was_running and thread == threading.get_native_id()
  assert t0 <= since <= t0 + 0.05
  assert entry.run is long_run
  started.clear()
  entry.run = probe = tiers.Probe(entry, "f", lambda *values: values)
  monkeypatch.setattr(tiers.Probe, "BUDGET", 1e6)   # (nor after it)
  probe(1)
  time.sleep(0.2)
  assert started == [] and entry.run is probe


def test_the_first_call_watch_starts_with_jit_and_wakes_from_its_idle_sleep(monkeypatch):
  # the watching thread starts when jit makes a function, not inside a call, and arming a
  # watch wakes it only once it sleeps (no first call for IDLE_AFTER seconds): a long
  # first call made then is still found
  watcher = tiers.LongCalls()
  monkeypatch.setattr(tiers, "_long_calls", watcher)
  monkeypatch.setattr(tiers.LongCalls, "IDLE_AFTER", 0.05)
  jax.jit(lambda v: v + 1)
  assert watcher.thread is not None and watcher.thread.is_alive()
  deadline = time.time() + 20
  while not watcher.asleep and time.time() < deadline:
    time.sleep(0.01)
  assert watcher.asleep
  monkeypatch.setattr(tiers.Probe, "LONG_CALL", 0.05)
  monkeypatch.setattr(tiers.Probe, "prepare", lambda self: True)
  started, running = [], threading.Event()
  monkeypatch.setattr(tiers, "start_race",
                      lambda *a, **k: started.append((a[3], running.is_set())))

  def long_run(*values):
    running.set()
    deadline = time.time() + 5
    while not started and time.time() < deadline:
      time.sleep(0.005)
    running.clear()
    return values

  class Entry:
    pass
  entry = Entry()
  entry.run = probe = tiers.Probe(entry, "f", long_run)
  assert probe(3) == (3,) and started == [((3,), True)]   # (found while it ran)


def test_a_race_started_during_the_first_call_takes_its_running_time_as_a_bound(
    monkeypatch):
  # No call served yet: tier 0 takes at least as long as the first call has run by the
  # end of XLA's trials (2 s before them, and them), never a trial on the compile thread;
  # XLA clearly faster than that wins at once, the verdict to be reviewed later.
  monkeypatch.setattr(background.host_blas(), "overstatement", lambda: 1)
  race_tiers, trials = _timed_tiers(monkeypatch, 2.0, [0.002])
  calls = _threads_calling_tier_0(race_tiers)
  entry = _Entry(lambda x: jnp.sin(x))
  entry.run = race = tiers.Race(entry, race_tiers, in_flight_since=-2.0)
  tiers.submit(race.run_trials, ["x"])
  _call_until_settled(entry, race)
  assert "jaxlite-xla-compile" not in calls and entry.run == "xla-run"
  assert entry.tier_ms["numpy"] >= 2000.0 and entry.review_at > 0


@needs_xla
def test_auto_policy_probes_then_races_and_keeps_a_tier(monkeypatch):
  monkeypatch.setattr(tiers.Probe, "BUDGET", 0.0)   # any execution earns a compile
  f = jax.jit(lambda x: jnp.sin(x) * jnp.cos(x))
  x = jnp.linspace(0, 1, 1000)
  expected = np.sin(np.asarray(x)) * np.cos(np.asarray(x))
  deadline = time.time() + 60
  np.testing.assert_allclose(f(x), expected, rtol=1e-6)
  while f.stats()[0]["tier_ms"] == {} and time.time() < deadline:
    np.testing.assert_allclose(f(x), expected, rtol=1e-6)
    time.sleep(0.01)
  row = f.stats()[0]
  assert set(row["tier_ms"]) == {"numpy", "xla"} and row["tier"] in ("numpy", "xla")
  assert "xla" in row["compile_ms"]
  np.testing.assert_allclose(f(x), expected, rtol=1e-6)


@needs_xla
def test_a_signature_whose_xla_tier_is_clearly_faster_ends_up_on_xla():
  """Under the default policy, with nothing patched: a 3,000-step loop of small ops is
  3,000 Python steps on tier 0 (milliseconds) and one compiled while loop on XLA
  (microseconds), so the race, whatever the machine's load, must end on XLA."""
  def program(x):
    return jax.lax.fori_loop(0, 3000, lambda i, c: jnp.sin(c) * 0.5 + c * 0.25, x)
  f = jax.jit(program)
  x = jnp.linspace(-1.0, 1.0, 8)
  want = np.asarray(jax.jit(program, backend="numpy")(x))
  deadline = time.time() + 120
  while not (f._cache and tiers.settled(f)) and time.time() < deadline:
    np.testing.assert_allclose(np.asarray(f(x)), want, rtol=1e-5, atol=1e-6)
  row = f.stats()[0]
  assert row["tier"] == "xla", row
  assert row["tier_ms"]["numpy"] > row["tier_ms"]["xla"]
  np.testing.assert_allclose(np.asarray(f(x)), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("where", ["traced", "earned"])
def test_a_race_that_cannot_start_is_never_the_callers_error(monkeypatch, where):
  # the race's start runs in the call that traced (the program's pickle, the lost races'
  # look-up) and in the call that earned it (the request, the hand-over): a failure in
  # either leaves tier 0 serving, with the reason in the signature's note
  monkeypatch.setattr(tiers.Probe, "BUDGET", 0.0)   # the first call earns the race

  def broken(*args, **kwargs):
    raise OSError("disk gone")
  if where == "traced":
    monkeypatch.setattr(tiers.LostRaces, "recall", broken)
  else:
    monkeypatch.setattr(tiers, "submit", broken)
  f = jax.jit(lambda x: jnp.sin(x) * 2.0)
  x = np.linspace(0.0, 1.0, 9, dtype=np.float32)
  for _ in range(3):
    np.testing.assert_allclose(np.asarray(f(x)), np.sin(x) * 2.0, rtol=1e-6)
  row = f.stats()[0]
  assert row["tier"] == "numpy" and "disk gone" in row["note"], row
  assert tiers.settled(f)


def _eager_call_of(name):
  """The latest jitted function made to run eagerly bound ``jit`` equations named ``name``."""
  from jaxlite._src import jit as jit_module
  return [f for f in jit_module._eager_calls.values() if f._name == name][-1]


@needs_xla
@pytest.mark.parametrize("tier", ["auto", "numpy"])
def test_an_eager_vmap_or_jvp_of_a_jitted_function_runs_under_the_tier_policy(
    monkeypatch, tier):
  """``vmap(jit(f))(x)`` and ``jvp(jit(f), ...)`` outside jit bind a ``jit`` equation of
  the batched (or JVP) jaxpr eagerly; JAX compiles it. It runs as a jitted function of
  that jaxpr, so under ``auto`` a hot one races XLA as a direct call does (tier 0 alone
  ran it: diffrax's batched Brownian tree look-ups), and under ``numpy`` stays on tier 0.
  Values: NumPy's and the analytic derivative, on both policies."""
  monkeypatch.setattr(tiers.Probe, "BUDGET", 0.0)   # any execution earns a compile

  def scaled_sine(x, y):
    return jnp.sin(x) * y
  f = jax.jit(scaled_sine)
  x = np.linspace(-2.0, 2.0, 24, dtype=np.float32).reshape(4, 6)
  y = np.float32(1.5)
  batched = jax.vmap(f, in_axes=(0, None))
  with jax.config.override("jaxlite_tier", tier):
    np.testing.assert_allclose(np.asarray(batched(x, y)), np.sin(x) * y, rtol=1e-6)
    runner = _eager_call_of("scaled_sine")
    deadline = time.time() + 60
    while tier == "auto" and runner.stats()[0]["tier_ms"] == {} and time.time() < deadline:
      np.testing.assert_allclose(np.asarray(batched(x, y)), np.sin(x) * y, rtol=1e-6)
      time.sleep(0.01)
    row = runner.stats()[0]
    if tier == "auto":
      assert set(row["tier_ms"]) == {"numpy", "xla"} and "xla" in row["compile_ms"], row
    else:
      assert row["tier"] == "numpy" and list(row["compile_ms"]) == ["numpy"], row
    np.testing.assert_allclose(np.asarray(batched(x, y)), np.sin(x) * y, rtol=1e-6)
    out, tangent = jax.jvp(f, (x, y), (np.ones_like(x), np.float32(0.0)))
  np.testing.assert_allclose(np.asarray(out), np.sin(x) * y, rtol=1e-6)
  np.testing.assert_allclose(np.asarray(tangent), np.cos(x) * y, rtol=1e-6)


def test_missing_plugin_gives_a_clear_error(monkeypatch):
  monkeypatch.setitem(backends.xla_state, "available", False)
  monkeypatch.setitem(backends.xla_state, "reason", "no plugin (pip install xla-cpu-pjrt)")
  with pytest.raises(RuntimeError, match="pip install xla-cpu-pjrt"):
    jax.jit(lambda x: x * 2, backend="xla")(1.0)
  assert float(jax.jit(lambda x: x * 2)(1.0)) == 2.0   # auto falls back to tier 0


@needs_xla
def test_exiting_while_a_background_compile_runs_is_clean():
  import subprocess
  import sys
  code = ("import jaxlite as jax, jaxlite.numpy as jnp\n"
          "from jaxlite._src import tiers\n"
          "tiers.Probe.BUDGET = 0.0\n"
          "f = jax.jit(lambda x: jnp.sin(x) * jnp.cos(x) + jnp.tanh(x))\n"
          "f(jnp.ones(1000))\n"
          "print('exiting')\n")
  for _ in range(2):
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "exiting"


def _threads_calling_tier_0(race_tiers) -> list:
  """The names of the threads that run tier 0's race calls from now on, in order."""
  calls = []
  numpy_run, numpy_call = race_tiers["numpy"]
  race_tiers["numpy"] = (numpy_run, lambda leaves: calls.append(
      threading.current_thread().name) or numpy_call(leaves))
  return calls


class _Entry:
  """The fields of a jit cache entry that a Race reads and writes."""

  def __init__(self, fn):
    self.optimized = jax.make_jaxpr(fn)(jnp.ones(3))
    self.run = None
    self.tier = self.tier_note = None
    self.tier_ms = {}
    self.exec_s = collections.deque(maxlen=256)   # the caller's timed calls (none yet)
    self.effects = None   # (tiers.has_effects fills it in)
    self.calls, self.review_at, self.race = 0, -1, None


def _recording_tiers(threads, xla_error=None):
  """Race tiers whose calls record (tier, thread name); the 'xla' one optionally fails."""
  def call(tier):
    def run(leaves):
      threads.append((tier, threading.current_thread().name))
      if tier == "xla" and xla_error is not None:
        raise xla_error
      return [tier]
    return run
  return {"numpy": ("numpy-run", call("numpy")), "xla": ("xla-run", call("xla"))}


def _start(entry, race_tiers):
  """Install a race as ``jit`` does: its trials (none for a function with effects) run
  on the compile thread."""
  entry.run = race = tiers.Race(entry, race_tiers)
  if not race.effectful:
    tiers.submit(race.run_trials, ["x"])
  return race


def _race(fn, threads, **kw):
  entry = _Entry(fn)
  return entry, _start(entry, _recording_tiers(threads, **kw))


def _call_until_settled(entry, race, leaves=("x",)):
  deadline = time.time() + 30
  outs = []
  while entry.run is race:
    assert time.time() < deadline, "the race never finished"
    outs.append(race(list(leaves)))
    time.sleep(0.001)
  return outs


def test_race_screens_xla_off_the_callers_path_then_decides_on_their_calls():
  threads = []
  entry, race = _race(lambda x: jnp.sin(x), threads)
  outs = _call_until_settled(entry, race)
  caller = threading.current_thread().name
  # on the compile thread XLA warms up (instant runs: as many as allowed), then every
  # tier's trials run in turn: the screen, which an instant XLA passes
  trials = [tier for tier, name in threads if name == "jaxlite-xla-compile"]
  assert trials == ["xla"] * tiers.Race.WARMUP + ["numpy", "xla"] * tiers.Race.TRIALS
  # until then tier 0 served every call (none waited for XLA); then the callers' calls
  # took turns, CONFIRM each, and decided
  served = [tier for tier, name in threads if name == caller]
  assert served == [out[0] for out in outs]
  # (tier 0 ran on from the screen into its turn: then XLA's turn, to the verdict)
  turn = served.index("xla")
  assert set(served[:turn]) == {"numpy"} and set(served[turn:]) == {"xla"}
  assert len(served) - turn >= tiers.Race.CONFIRM
  assert entry.run in ("numpy-run", "xla-run") and set(entry.tier_ms) == {"numpy", "xla"}


class _ThreadClock:
  """``time.perf_counter`` for the race under test: each thread's clock moves only by the
  seconds the fake tiers declare in that thread. Real sleeps on the compile thread (which
  runs at the lowest priority) measured anything on a loaded machine, and the slower tier
  sometimes won."""

  def __init__(self):
    self._local = threading.local()

  def perf_counter(self):
    return getattr(self._local, "now", 0.0)

  def advance(self, seconds):
    self._local.now = self.perf_counter() + seconds


def _timed_tiers(monkeypatch, numpy_s, xla_s):
  """Race tiers that take the given seconds per call, on a per-thread clock the race
  reads: a constant for tier 0, one figure per successive trial for XLA (its last
  figure repeats); ``trials`` counts XLA's."""
  clock = _ThreadClock()
  fake_time = types.SimpleNamespace(perf_counter=clock.perf_counter)
  monkeypatch.setattr(tiers, "time", fake_time)
  monkeypatch.setattr(compile_server, "time", fake_time)   # the race's warm-up and trials
  trials = []

  def xla(leaves):
    clock.advance(xla_s[min(len(trials), len(xla_s) - 1)])
    trials.append(1)
    return ["xla"]

  def numpy(leaves):
    clock.advance(numpy_s)
    return ["numpy"]
  return {"numpy": ("numpy-run", numpy), "xla": ("xla-run", xla)}, trials


@pytest.mark.parametrize("narrowed", [False, True])
def test_race_warms_xla_up_and_keeps_the_tier_with_the_best_time(monkeypatch, narrowed):
  # an executable's first runs are slower: they must not decide the race
  # (narrowed on four threads: tier 0's 4 ms may be 1 ms on all of them)
  monkeypatch.setattr(background.host_blas(), "overstatement", lambda: 4 if narrowed else 1)
  race_tiers, trials = _timed_tiers(monkeypatch, 0.004, [0.03, 0.01, 0.008, 0.001])
  entry = _Entry(lambda x: jnp.sin(x))
  race = _start(entry, race_tiers)
  _call_until_settled(entry, race)
  assert entry.run == "xla-run" and entry.tier == "xla"
  if narrowed:
    # tier 0's calls beside the compile had one BLAS thread of four: XLA is not clearly
    # faster than tier 0 on four, so the callers' calls decide (and XLA wins there too)
    assert len(trials) > tiers.Race.WARMUP + tiers.Race.TRIALS
    return
  # clearly faster in its trials (where it can only be understated): no verdict on calls
  assert len(trials) == tiers.Race.WARMUP + tiers.Race.TRIALS
  assert entry.tier_ms == {"numpy": pytest.approx(4.0), "xla": pytest.approx(1.0)}


def test_host_blas_runs_on_one_thread_while_background_work_is_kept_away():
  blas = background.host_blas()
  blas.find()
  if blas.set is None or blas.get() < 2:
    pytest.skip("NumPy's BLAS here is not OpenBLAS, or runs one thread")
  had = blas.get()
  worker = threading.Thread(target=time.sleep, args=(0.5,))
  worker.start()
  first = background.keep_away(threading.get_native_id(), worker.native_id)
  if first is None:
    worker.join()
    pytest.skip("no other CPU to keep the background work on")
  try:
    assert blas.get() == 1 and blas.overstatement() == had
    blas.narrow()              # another placement meanwhile (they nest)
    background.put_back(first)
    assert blas.get() == 1     # the other still holds
  finally:
    blas.restore()
    worker.join()
  assert blas.get() == had and blas.overstatement() == 1


def test_race_warm_up_stops_once_its_runs_spend_the_budget(monkeypatch):
  # the first run is free (one-time costs); two more of just over half the budget spend it
  slow = tiers.Race.WARMUP_BUDGET * 0.51
  race_tiers, trials = _timed_tiers(monkeypatch, 0.001, [slow])
  entry = _Entry(lambda x: jnp.sin(x))
  race = _start(entry, race_tiers)
  _call_until_settled(entry, race)
  assert len(trials) == 3 + tiers.Race.TRIALS and entry.run == "numpy-run"



def test_race_screens_with_tier_0s_best_served_call(monkeypatch):
  # Enough timed tier-0 calls: their best time stands for tier 0 in the screen, and tier 0
  # runs no trials on the compile thread; fewer: tier 0 runs its trials there.
  race_tiers, trials = _timed_tiers(monkeypatch, 0.0, [0.003])
  calls = _threads_calling_tier_0(race_tiers)
  entry = _Entry(lambda x: jnp.sin(x))
  entry.exec_s.extend([0.009, 0.001, 0.05] + [0.004] * (tiers.Race.CALLER_CALLS - 3))
  race = _start(entry, race_tiers)
  _call_until_settled(entry, race)
  assert "jaxlite-xla-compile" not in calls         # no tier-0 trial in the background
  # XLA's 3 ms against the best served call's 1 ms: screened out, never loaded
  assert entry.tier_ms == {"numpy": pytest.approx(1.0), "xla": pytest.approx(3.0)}
  assert entry.run == "numpy-run" and len(trials) == tiers.Race.WARMUP + tiers.Race.TRIALS
  # the same calls, but too few of them: tier 0 is timed by trials on the compile thread
  entry = _Entry(lambda x: jnp.sin(x))
  entry.exec_s.extend([0.003] * (tiers.Race.CALLER_CALLS - 1))
  calls.clear()
  race = _start(entry, race_tiers)
  _call_until_settled(entry, race)
  assert calls.count("jaxlite-xla-compile") == tiers.Race.TRIALS
  assert entry.run == "numpy-run"


def test_a_slow_tier_0_is_timed_by_its_served_calls_alone(monkeypatch):
  # One served call of 2 s: three more trials of tier 0 on the compile thread would take
  # it for 6 s beside the callers (and keep the process from exiting meanwhile); XLA a
  # thousand times faster wins at once, even against tier 0 on all of four BLAS threads,
  # and the verdict, from one call, is reviewed later.
  monkeypatch.setattr(background.host_blas(), "overstatement", lambda: 4)
  race_tiers, trials = _timed_tiers(monkeypatch, 2.0, [0.002])
  calls = _threads_calling_tier_0(race_tiers)
  entry = _Entry(lambda x: jnp.sin(x))
  entry.exec_s.append(2.0)
  race = _start(entry, race_tiers)
  _call_until_settled(entry, race)
  assert "jaxlite-xla-compile" not in calls
  assert entry.run == "xla-run" and entry.race is race and entry.review_at > 0
  assert entry.tier_ms == {"numpy": pytest.approx(2000.0), "xla": pytest.approx(2.0)}
  # within the factor the narrowed BLAS may account for, the callers' calls decide
  race_tiers, trials = _timed_tiers(monkeypatch, 2.0, [0.9])
  entry = _Entry(lambda x: jnp.sin(x))
  entry.exec_s.append(2.0)
  race = _start(entry, race_tiers)
  _call_until_settled(entry, race)
  assert len(trials) > tiers.Race.WARMUP + tiers.Race.TRIALS   # XLA's turn on the calls
  assert entry.run == "xla-run"


def test_a_verdict_the_screen_would_get_wrong_is_taken_on_the_callers_calls(monkeypatch):
  # XLA timed a little slower in its trials (elsewhere: one CPU) is faster on the callers'
  # calls (its last figure, which the calls see): the calls decide, and XLA wins
  race_tiers, trials = _timed_tiers(monkeypatch, 0.003, [0.0033] * (
      tiers.Race.WARMUP + tiers.Race.TRIALS) + [0.002])
  entry = _Entry(lambda x: jnp.sin(x))
  race = _start(entry, race_tiers)
  _call_until_settled(entry, race)
  assert entry.run == "xla-run"
  assert entry.tier_ms == {"numpy": pytest.approx(3.0), "xla": pytest.approx(2.0)}


def test_the_verdict_times_each_tier_only_once_it_has_settled_in(monkeypatch):
  # XLA's first calls after tier 0's are slow (OpenBLAS's threads still spin, caches are
  # tier 0's): untimed for SETTLE seconds, they must not decide the verdict
  settling = [0.02] * 7   # starting 0, 0.02, ..., 0.12 s into XLA's turn: all untimed
  race_tiers, trials = _timed_tiers(monkeypatch, 0.003, [0.0035] * (
      tiers.Race.WARMUP + tiers.Race.TRIALS) + settling + [0.002])
  entry = _Entry(lambda x: jnp.sin(x))
  race = _start(entry, race_tiers)
  _call_until_settled(entry, race)
  assert entry.run == "xla-run"
  assert entry.tier_ms == {"numpy": pytest.approx(3.0), "xla": pytest.approx(2.0)}


def test_a_close_verdict_is_taken_again_later(monkeypatch):
  race_tiers, trials = _timed_tiers(monkeypatch, 0.003, [0.0025])
  entry = _Entry(lambda x: jnp.sin(x))
  entry.calls = 10
  race = _start(entry, race_tiers)
  _call_until_settled(entry, race)
  assert entry.run == "xla-run" and entry.race is race
  assert entry.review_at == 10 + tiers.Race.REVIEW_AFTER
  tiers.review(entry)   # the call jit makes at entry.review_at
  assert entry.run is race
  _call_until_settled(entry, race)
  assert entry.run == "xla-run"
  # a clear verdict is final: on the calls (XLA timed slower in its trials, twice as fast
  # on the calls) and in the trials
  for xla_s in ([0.004] * (tiers.Race.WARMUP + tiers.Race.TRIALS) + [0.0015], [0.001]):
    race_tiers, _ = _timed_tiers(monkeypatch, 0.003, xla_s)
    entry = _Entry(lambda x: jnp.sin(x))
    _call_until_settled(entry, _start(entry, race_tiers))
    assert entry.run == "xla-run" and entry.review_at == -1 and entry.race is None


def test_race_of_a_function_with_effects_runs_each_trial_as_a_real_call():
  # a debug callback must fire once per call: no extra runs on the background thread
  threads = []
  entry, race = _race(lambda x: jax.debug.callback(print, x) or x, threads)
  outs = _call_until_settled(entry, race)
  assert [[tier] for tier, _ in threads] == outs
  assert {name for _, name in threads} == {threading.current_thread().name}
  turn = [tier for tier, _ in threads].index("xla")
  assert [tier for tier, _ in threads] == ["numpy"] * turn + ["xla"] * (len(threads) - turn)
  assert min(turn, len(threads) - turn) >= tiers.Race.CONFIRM


def test_race_of_a_function_with_a_pure_callback_runs_each_trial_as_a_real_call():
  # JAX runs a pure_callback once per call: trial runs on the compile thread would call the
  # user's function again, on the other tier's numbers (diffrax's test_revisit_steps
  # collected both tiers' values through one)
  threads = []
  fn = lambda x: jax.pure_callback(lambda v: v, jax.ShapeDtypeStruct(x.shape, x.dtype), x)
  entry, race = _race(fn, threads)
  assert tiers.has_effects(entry)
  outs = _call_until_settled(entry, race)
  assert [[tier] for tier, _ in threads] == outs
  assert {name for _, name in threads} == {threading.current_thread().name}


def test_a_failing_background_trial_leaves_tier_0_serving():
  threads = []
  entry, race = _race(lambda x: jnp.sin(x), threads, xla_error=RuntimeError("deleted"))
  _call_until_settled(entry, race)
  assert entry.run == "numpy-run" and "RuntimeError: deleted" in entry.tier_note


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="per-thread priorities: Linux")
def test_the_compile_thread_keeps_the_callers_priority():
  """Background work runs at the callers' priority, XLA's compile included: at the lowest
  priority the compile starved beside a caller that kept every CPU busy (3-7 s for a
  0.2 s compile, issue 42), and Python there was descheduled holding the GIL."""
  def priority():
    tid = threading.get_native_id()
    return (os.getpriority(os.PRIO_PROCESS, tid),
            os.sched_getscheduler(tid) if hasattr(os, "SCHED_IDLE") else None)

  seen = []
  tiers.submit(lambda: seen.append(priority()))
  tiers._worker.queue.join()
  assert seen == [priority()]


def test_the_compile_thread_is_not_idle_between_taking_a_task_and_running_it(monkeypatch):
  # A caller that found it idle sent its request to the compile server ahead, and the
  # task just taken then waited for the server forever (a deadlock).
  tiers.submit(lambda: None)
  worker = tiers._worker
  worker.queue.join()
  taken, proceed = threading.Event(), threading.Event()
  get = worker.queue.get

  def get_and_pause():
    task = get()
    if task is not None and not taken.is_set():
      taken.set()
      proceed.wait(10)
    return task
  monkeypatch.setattr(worker.queue, "get", get_and_pause)
  tiers.submit(lambda: None)   # taken by the get the thread is blocked in
  worker.queue.join()
  ran = []
  tiers.submit(lambda: ran.append(1))   # taken by get_and_pause, which pauses
  assert taken.wait(10)
  assert not worker.idle() and not ran   # taken, not yet running
  proceed.set()
  worker.queue.join()
  assert ran == [1] and worker.idle()


def _raised(fn):
  try:
    fn()
  except Exception as e:
    return e
  return None


def test_background_compile_thread_hands_the_gil_over_once_per_turn_while_it_lowers(
    monkeypatch):
  """The compile thread lowers handing the GIL over once per ``TURN`` of lowering (a
  sleep, so a caller waiting for the GIL takes it; ``time.sleep(0)`` would not): without
  hand-overs a caller making ufunc calls waits a whole switch interval at each, and with
  one per equation each hand-over's wake-up cost the caller more than the lowering itself
  (gil_contention.py, lowering_turn.py). The caller's own thread never sleeps. The clock here advances one
  second per reading (whole numbers: exact)."""
  def f(x):
    return jnp.tanh(jnp.sin(x) * 2.0 + x) / (x * x + 1.0)

  closed = jax.make_jaxpr(f)(jnp.ones(8))
  eqns = len(closed.jaxpr.eqns)
  assert eqns >= 6
  sleeps = collections.Counter()
  ticks = iter(range(10**9))
  background.host_blas()   # (its thread clock measured on the real clock first)
  for thread in threading.enumerate():
    if thread.name == "jaxlite-thread-clock":
      thread.join(10)
  monkeypatch.setattr(background, "time", types.SimpleNamespace(
      sleep=lambda s: sleeps.update([threading.current_thread().name]),
      perf_counter=lambda: next(ticks)))

  def on_the_worker(fn):
    tiers.submit(fn)
    tiers._worker.queue.join()

  def new_turn():   # the worker's last hand-over, read from the real clock: long ago
    on_the_worker(lambda: setattr(background._courtesy, "since", 0))

  def lowerings(turn):
    monkeypatch.setattr(background, "TURN", turn)
    new_turn()
    sleeps.clear()
    xla.lower(closed, "f")
    assert sleeps == {}   # the calling thread: no hand-overs
    on_the_worker(lambda: xla.lower(closed, "f"))
    return sleeps["jaxlite-xla-compile"]

  try:
    if tiers.xla_available():
      from jaxlite._src.backends import xla
      assert lowerings(0) == eqns   # a hand-over at every equation
      assert lowerings(2) == (eqns + 1) // 2   # at the first, then one per two readings
    new_turn()
    sleeps.clear()
    on_the_worker(background.yield_to_callers)
    background.yield_to_callers()
    assert sleeps == {"jaxlite-xla-compile": 1}
  finally:
    monkeypatch.undo()
    new_turn()


needs_two_cpus = pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or not os.path.isdir("/proc/self/task")
    or len(os.sched_getaffinity(0)) < 2, reason="per-thread CPU affinity, two CPUs: Linux")


@needs_two_cpus
def test_background_work_keeps_off_the_callers_cpu_while_it_lasts():
  """While the compile thread works for a caller, it and the C threads adopted from XLA's
  client run on the CPUs other than the caller's, and each
  gets its CPUs back afterwards. Beside XLA's runs on another thread, tier 0's heavy had a
  p99 of 10.4-12.6 ms free and 4.0-5.6 kept apart (probes/stall_affinity.py)."""
  import _thread
  every = os.sched_getaffinity(0)
  cpu, others = min(every), every - {min(every)}
  hold, started = _thread.allocate_lock(), []
  hold.acquire()

  def c_pool_thread():   # a C library's thread: Python's threading did not start it
    started.append(threading.get_native_id())
    hold.acquire()   # until the test ends; then let the next one end too
    hold.release()
  background.adopt_threads_started_by(_thread.start_new_thread, c_pool_thread, ())
  deadline = time.time() + 10
  while not started and time.time() < deadline:
    time.sleep(0.001)
  [pool] = started
  tiers.submit(int)   # the compile thread exists
  tiers._worker.queue.join()
  worker = tiers._worker.thread.native_id
  before = {t: os.sched_getaffinity(t) for t in (worker, pool)}
  seen = {}

  def job():
    seen.update(worker=os.sched_getaffinity(0), pool=os.sched_getaffinity(pool))
    _thread.start_new_thread(c_pool_thread, ())   # as XLA does at its first compile
    while len(started) < 2:
      time.sleep(0.001)
    seen.update(later=os.sched_getaffinity(started[1]))
  try:
    assert pool in background._helpers
    os.sched_setaffinity(0, {cpu})   # the caller (this thread) runs on ``cpu``
    tiers.submit(job)
    tiers._worker.queue.join()
    [later] = started[1:]
    assert seen == {"worker": others, "pool": others, "later": others}
    assert {t: os.sched_getaffinity(t) for t in before} == before
    # the thread started meanwhile inherited the narrowed CPUs: widened back, and adopted
    assert os.sched_getaffinity(later) == every and later in background._helpers
  finally:
    os.sched_setaffinity(0, every)
    hold.release()
    background._helpers.difference_update(started)


@needs_two_cpus
def test_the_caller_places_an_idle_compile_thread_and_a_busy_one_places_itself(monkeypatch):
  """Placing the background threads is a dozen system calls. On the compile thread each
  took the GIL back from the caller's next call, so the caller places an idle compile
  thread itself; a busy one places itself when it comes to the task."""
  placed_on = []
  keep_away = background.keep_away
  monkeypatch.setattr(background, "keep_away", lambda caller, worker: (
      placed_on.append(threading.current_thread().name) or keep_away(caller, worker)))
  tiers.submit(int)
  tiers._worker.queue.join()
  started, gate = threading.Event(), threading.Event()
  # idle when this one is handed over; then busy running it until the gate
  tiers.submit(lambda: (started.set(), gate.wait()))
  assert started.wait(10)
  tiers.submit(int)
  gate.set()
  tiers._worker.queue.join()
  caller = threading.current_thread().name
  assert placed_on == [caller, caller, "jaxlite-xla-compile"]


@needs_two_cpus
def test_background_work_stays_put_when_there_is_nowhere_else_to_go():
  """No move without another CPU, or when the caller's CPU cannot be told."""
  every = os.sched_getaffinity(0)
  here = threading.get_native_id()
  with background.kept_away(background.keep_away(-1, here)):   # no such thread
    assert os.sched_getaffinity(0) == every
  seen = []

  def on_one_cpu():
    os.sched_setaffinity(0, {min(every)})
    itself = threading.get_native_id()
    with background.kept_away(background.keep_away(itself, itself)):
      seen.append(os.sched_getaffinity(0))
  thread = threading.Thread(target=on_one_cpu)
  thread.start()
  thread.join()
  assert seen == [{min(every)}]


_PRIORITIES_SCRIPT = r"""
import glob, os, threading, time
import jaxlite as jax, jaxlite.numpy as jnp
from jaxlite._src import tiers
from jaxlite._src.backends import background, xla
def threads():
  return {int(t.rsplit("/", 1)[1]) for t in glob.glob(f"/proc/{os.getpid()}/task/*")}
before = threads()
tiers.submit(tiers.xla_available)   # the compile thread starts, and creates XLA's client
tiers._worker.queue.join()
worker = tiers._worker.thread.native_id
started = threads() - before - {worker}   # the client's threads
adopted = started <= background._helpers   # and they move with the background work
compiled_at = []   # XLA's compile, or its load from the persistent compile cache
api = xla.client().api
def spy(c_function):
  def call(args):
    compiled_at.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
    return c_function(args)
  return call
api.Client_Compile = spy(api.Client_Compile)
api.Executable_DeserializeAndLoad = spy(api.Executable_DeserializeAndLoad)
f = jax.jit(lambda x: jnp.sin(x) * jnp.cos(x) + x, backend="auto")
x = jnp.ones(200_000)
f(x)
deadline = time.time() + 60
while not tiers.settled(f) and time.time() < deadline:
  f(x)
assert f.stats()[0]["tier"], f.stats()
print(len(started), adopted, os.getpriority(os.PRIO_PROCESS, worker), sorted(set(compiled_at)),
      sorted({os.getpriority(os.PRIO_PROCESS, t) for t in started}))
"""


@needs_xla
@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="per-thread priorities: Linux")
def test_xlas_compile_and_its_client_keep_the_callers_priority():
  """XLA's client starts its thread pools, which run every XLA computation, from the
  thread that creates it, and they inherit its priority. Under auto the compile thread
  creates the client, and it, the client's threads and XLA's compile all keep the
  callers' priority (a fresh process: this one has its client). This is the race in the
  caller's process, without the compile server."""
  import subprocess
  import sys
  out = subprocess.run([sys.executable, "-c", _PRIORITIES_SCRIPT], capture_output=True,
                       text=True, timeout=300, env=dict(os.environ, JAXLITE_TIER="auto",
                                                        JAXLITE_COMPILE_SERVER="0"))
  assert out.returncode == 0, out.stderr
  started, adopted, worker, compiled_at, client = out.stdout.split(maxsplit=4)
  assert int(started) >= 1, "the compile thread did not create XLA's client"
  assert adopted == "True", "XLA's threads do not keep off the callers' CPU in a race"
  caller = os.getpriority(os.PRIO_PROCESS, 0)
  assert int(worker) == caller and compiled_at == f"[{caller}]"
  assert client.strip() == str([caller])


def _counting_loop(n):
  """A while loop whose result is known exactly: (n, n (n - 1) / 2, 2**n mod 1000003)."""
  def body(c):
    i, total, power = c
    return i + 1, total + i, (power * 2) % 1000003
  return lambda start: jax.lax.while_loop(lambda c: c[0] < n, body, start)


@pytest.fixture
def handoff_at_once(monkeypatch):
  """Loops hand over at their first check, and the compile runs in the call that starts
  the handoff (so it is ready at the next one)."""
  from jaxlite._src.backends.numpy import control_flow_impls
  monkeypatch.setattr(control_flow_impls, "HANDOFF_AFTER", 0.0)
  monkeypatch.setattr(tiers, "submit", lambda fn, *args, **options: fn(*args))
  runs = []
  run = tiers.LoopHandoff.run
  monkeypatch.setattr(tiers.LoopHandoff, "run",
                      lambda self, values: runs.append(len(values)) or run(self, values))
  return runs


@needs_xla
def test_a_long_tier_0_loop_hands_its_carry_over_to_xla(handoff_at_once, monkeypatch):
  n = 5000
  start = (jnp.int32(0), jnp.int32(0), jnp.int32(1))
  want = [n, n * (n - 1) // 2, pow(2, n, 1000003)]
  out = _counting_loop(n)(start)
  assert handoff_at_once == [3]   # handed over once, with the three carries
  assert [int(v) for v in out] == want
  # the same loop where it never hands over: the same values
  from jaxlite._src.backends.numpy import control_flow_impls
  monkeypatch.setattr(control_flow_impls, "handoffs", [])
  assert [int(v) for v in _counting_loop(n)(start)] == want
  assert handoff_at_once == [3]


@needs_xla
def test_a_loop_that_ran_long_hands_over_at_its_first_look_in_the_next_call(
    handoff_at_once, monkeypatch):
  from jaxlite._src.backends.numpy import control_flow_impls
  n = 5000
  f = jax.jit(_counting_loop(n))
  out = f((jnp.int32(0), jnp.int32(0), jnp.int32(1)))
  assert handoff_at_once == [3] and int(out[1]) == n * (n - 1) // 2
  # no handoff by time any more: the next call takes the kept one at its first look
  monkeypatch.setattr(control_flow_impls, "HANDOFF_AFTER", 1e9)
  out = f((jnp.int32(10), jnp.int32(0), jnp.int32(1)))
  assert handoff_at_once == [3, 3]
  assert [int(v) for v in out] == [n, n * (n - 1) // 2 - 45, pow(2, n - 10, 1000003)]
  # another loop has no kept handoff: it stays on tier 0 (by time: never)
  g = jax.jit(_counting_loop(300))
  assert int(g((jnp.int32(0), jnp.int32(0), jnp.int32(1)))[1]) == 300 * 299 // 2
  assert handoff_at_once == [3, 3]


@needs_xla
@pytest.mark.parametrize("reverse", [False, True])
def test_a_long_tier_0_scan_hands_its_step_carry_and_outputs_over_to_xla(
    handoff_at_once, monkeypatch, reverse):
  n = 3000
  xs = jnp.arange(n, dtype=jnp.int32)
  order = np.arange(n)[::-1] if reverse else np.arange(n)
  carries = np.concatenate([[0], np.cumsum(order)])   # the carry before each step
  want_ys = np.empty(n, np.int64)
  want_ys[order] = 2 * carries[:-1] - order

  def scan():
    return jax.lax.scan(lambda c, x: (c + x, c * 2 - x), jnp.int32(0), xs, reverse=reverse)
  c, ys = scan()
  assert handoff_at_once == [4]   # the step, one carry, one input, one output
  assert int(c) == n * (n - 1) // 2
  np.testing.assert_array_equal(ys, want_ys)
  from jaxlite._src.backends.numpy import control_flow_impls
  monkeypatch.setattr(control_flow_impls, "handoffs", [])
  c, ys = scan()
  assert int(c) == n * (n - 1) // 2
  np.testing.assert_array_equal(ys, want_ys)


@needs_xla
def test_a_long_loop_solving_linear_systems_hands_over_under_rank_promotion_raise(
    handoff_at_once, monkeypatch):
  # XLA's LU is jaxlite's own jnp code: diffrax's 'raise' made its compile fail, so the
  # loops of implicit solvers never left tier 0
  a = np.array([[4.0, 1.0, 0.5], [0.5, 3.0, 1.0], [1.0, 0.0, 5.0]], np.float32)
  n = 200

  def loop(x):
    return jax.lax.while_loop(lambda c: c[0] < n,
                              lambda c: (c[0] + 1, jnp.linalg.solve(a, c[1] + 1.0)),
                              (jnp.int32(0), x))
  want = np.zeros(3)
  for _ in range(n):
    want = np.linalg.solve(a.astype(np.float64), want + 1.0)
  with jax.numpy_rank_promotion("raise"):
    _, got = jax.jit(loop)(jnp.zeros(3, jnp.float32))
    assert handoff_at_once == [3]   # the matrix (a const) and the two carries
    np.testing.assert_allclose(got, want, rtol=1e-5)
    from jaxlite._src.backends.numpy import control_flow_impls
    monkeypatch.setattr(control_flow_impls, "handoffs", [])
    _, on_tier_0 = jax.jit(loop)(jnp.ones(3, jnp.float32) * 0)
  np.testing.assert_allclose(got, on_tier_0, rtol=1e-5)


@needs_xla
def test_a_loops_handoff_compiles_ahead_of_the_races_queued_before_it(monkeypatch):
  """A loop running on tier 0 waits for its handoff, while a race only speeds up later
  calls: a process that made a new signature per test queued hundreds of races, and a
  long loop's handoff behind them all never came (optimistix's test_minimise)."""
  from jaxlite._src.backends.numpy import control_flow_impls
  monkeypatch.setattr(control_flow_impls, "HANDOFF_AFTER", 0.0)
  order, gate, busy = [], threading.Event(), threading.Event()
  compile_, init = tiers.LoopHandoff._compile, tiers.LoopHandoff.__init__
  monkeypatch.setattr(tiers.LoopHandoff, "_compile",
                      lambda self, *args: (order.append("handoff"), compile_(self, *args)))
  # (the compile thread is busy until the loop has asked for its handoff)
  monkeypatch.setattr(tiers.LoopHandoff, "__init__",
                      lambda self, *args: (init(self, *args), gate.set()) and None)
  tiers.submit(lambda: (busy.set(), gate.wait(60)))
  assert busy.wait(10)
  for i in range(3):
    tiers.submit(order.append, f"race {i}")
  n = 1_000_000   # minutes on tier 0, milliseconds on XLA
  out = _counting_loop(n)((jnp.int32(0), jnp.int32(0), jnp.int32(1)))
  tiers._worker.queue.join()
  assert order == ["handoff", "race 0", "race 1", "race 2"]
  total = int(np.array(n * (n - 1) // 2, np.int64).astype(np.int32))   # int32 wraps
  assert [int(v) for v in out] == [n, total, pow(2, n, 1000003)]


@needs_xla
def test_loops_pinned_to_tier_0_or_with_effects_never_hand_over(handoff_at_once):
  n = 200
  start = (jnp.int32(0), jnp.int32(0), jnp.int32(1))
  pinned = jax.jit(_counting_loop(n), backend="numpy")
  assert [int(v) for v in pinned(start)] == [n, n * (n - 1) // 2, pow(2, n, 1000003)]
  # (a scan too: fori_loop with static bounds is one)
  pinned_scan = jax.jit(lambda c: jax.lax.fori_loop(0, n, lambda i, c: c + i, c),
                        backend="numpy")
  assert int(pinned_scan(jnp.int32(0))) == n * (n - 1) // 2
  seen = []

  def body(i):
    jax.debug.callback(lambda i: seen.append(int(i)), i)
    return i + 1
  assert int(jax.lax.while_loop(lambda i: i < n, body, jnp.int32(0))) == n
  assert seen == list(range(n))   # every iteration's callback, once
  assert handoff_at_once == []
