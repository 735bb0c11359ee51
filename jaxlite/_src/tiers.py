"""Which compiler tier runs a jitted signature: the tier policy, an object ``jit`` calls.

``jit`` caches signatures and dispatches their executables (``compiler``'s three kinds);
choosing the executable is this module's. Each policy has ``prepare(entry, name)``, which
returns the executable a signature's calls start on:

- ``numpy``: tier 0 only;
- ``xla``: tier 1, compiled before the first call returns;
- ``auto`` (the default): tier 0 at once, watched by a ``Probe``; once the signature has
  spent long enough executing (or two calls in a row say it soon will), XLA compiles it
  on a background thread (``start_race``), then a ``Race`` times both tiers and installs
  the faster as the signature's executable. Functions too cheap to gain anything never
  pay for XLA.

``jit(f, backend=...)`` pins a policy per function; ``jaxlite.config.update("jaxlite_tier",
...)`` or ``JAXLITE_TIER`` globally. The numbers the policy is tuned with live in
``tuning``. The entry a policy works on is jit's ``_Entry``: its jaxprs, statistics and
``run`` (the executable), and its ``compile_numpy`` / ``compile_xla``.
"""
from __future__ import annotations

import atexit
import collections
import json
import logging
import os
import queue
import statistics
import sys
import threading
import time
import weakref

import numpy as np

from jaxlite._src import arguments
from jaxlite._src import backends
from jaxlite._src.base import tuning
from jaxlite._src.core.array import Array, from_device
from jaxlite._src.backends import background
from jaxlite._src.backends import compile_server
from jaxlite._src.backends import disk_cache
from jaxlite._src.backends import xla_available  # noqa: F401 (tiers.xla_available)
from jaxlite._src.compiler import XlaDispatch
from jaxlite._src.base.config import config
from jaxlite._src.passes import dce
from jaxlite._src.core import core
from jaxlite._src.lax import callbacks as lax_callbacks
from jaxlite._src.lax import control_flow as cf
from jaxlite._src.lax import indexing as lax_indexing
from jaxlite._src.transforms import staging
from jaxlite._src.backends.numpy import control_flow_impls

logger = logging.getLogger("jaxlite")

_BACKEND_ALIASES = {None: None, "auto": "auto", "numpy": "numpy", "xla": "xla",
                    "cpu": "xla", "gpu": "xla", "cuda": "xla", "tpu": "xla"}

config.define("jaxlite_tier", "auto", "Default tier policy of jit: auto, numpy or xla.",
              env_var="JAXLITE_TIER", parse=str)
config.define("jaxlite_remember_tiers", True,
              "Under the auto tier policy, remember in the persistent compile cache the "
              "signatures whose race XLA clearly lost, and run them on tier 0 without "
              "compiling XLA in later processes, for a day.",
              env_var="JAXLITE_REMEMBER_TIERS")


def resolve_policy(backend):
  """The policy a ``jit(..., backend=...)`` argument pins (None: follow the config)."""
  if backend not in _BACKEND_ALIASES:
    raise ValueError(f"Unknown backend {backend!r} for jit: use 'numpy' (the instant NumPy "
                     "tier), 'xla' (XLA through PJRT; 'cpu' and 'gpu' also select it) or "
                     "None for the default policy.")
  return _BACKEND_ALIASES[backend]


def placement_target(backend, device):
  """The resident backend ``jit(backend=..., device=...)`` pins (None: the host's tiers).
  A tier name or 'cpu' on the host selects a tier policy instead (``resolve_policy``)."""
  if device is not None:
    if not isinstance(device, backends.Device):
      raise TypeError(f"jit: device must be a Device, such as jax.devices()[0]; got "
                      f"{device!r}.")
    return device.client if device.client.resident else None
  if backend in (None, "auto", "numpy", "xla"):
    return None
  found = backends.backend(backend)
  return found if found.resident else None


def default_policy() -> str:
  policy = config.jaxlite_tier
  if policy not in POLICIES:
    raise ValueError(f"jaxlite_tier must be one of {tuple(POLICIES)}, got {policy!r}.")
  return policy


def compile_xla(closed, name, donation=None, on=None, options=None):
  """Compile ``closed`` with XLA for PJRT client ``on`` (None: the CPU's) with XLA compiler
  ``options`` (None: XLA's defaults); a clear error when no plugin is installed."""
  from jaxlite._src.backends import xla
  if on is None and not xla_available():
    reason = backends.xla_state.get("reason") or xla.unavailable_reason()
    raise RuntimeError(f"The XLA tier is not available: {reason}")
  return xla.compile(closed, name, donation, on, options)


class NumpyTier:
  """The ``numpy`` policy: tier 0 serves every call (its long loops stay there too)."""

  def prepare(self, entry, name):
    entry.tier = "numpy"
    run = entry.compile_numpy(name)
    return _tier_0_only(run) if _has_loops(entry.optimized.jaxpr) else run


def _has_loops(jaxpr) -> bool:
  """Whether ``jaxpr`` holds a loop that ``LoopHandoff`` could hand over, at any depth."""
  return any(eqn.primitive in LoopHandoff.REST or any(map(_has_loops, core.subjaxprs(eqn)))
             for eqn in jaxpr.eqns)


_pinned = threading.local()   # .tier_0: a call pinned to tier 0 runs in this thread


def _tier_0_only(run):
  """``run`` with its loops kept on tier 0 (``LoopHandoff``)."""
  def pinned(*args):
    outer = getattr(_pinned, "tier_0", False)
    _pinned.tier_0 = True
    try:
      return run(*args)
    finally:
      _pinned.tier_0 = outer
  return pinned


def _while_rest(params):
  """A while loop's remaining iterations: the loop itself, from the carry it has."""
  return lambda *args: cf.while_p.bind(*args, **params)


def _scan_rest(params):
  """A scan's steps from ``k`` on, given its consts, carry at step ``k``, inputs and
  outputs so far (those of the steps done), as one while loop."""
  body, length, reverse = params["jaxpr"], params["length"], params["reverse"]
  n_consts, n_carry = params["num_consts"], params["num_carry"]
  n_xs = len(body.in_avals) - n_consts - n_carry

  def rest(k, *args):
    consts, args = args[:n_consts], args[n_consts:]
    carry, xs, ys = args[:n_carry], args[n_carry:n_carry + n_xs], args[n_carry + n_xs:]

    def step(state):
      s, carry, ys = state
      i = length - 1 - s if reverse else s
      outs = core.jaxpr_as_fun(body)(*consts, *carry, *[
          lax_indexing.dynamic_index_in_dim(x, i, keepdims=False) for x in xs])
      ys = [lax_indexing.dynamic_update_index_in_dim(y, o, i, 0)
            for y, o in zip(ys, outs[n_carry:])]
      return s + 1, list(outs[:n_carry]), ys
    _, carry, ys = cf.while_loop(lambda state: state[0] < length, step,
                                 (k, list(carry), list(ys)))
    return [*carry, *ys]
  return rest


class LoopHandoff:
  """The iterations left to a tier-0 loop that ran long, on XLA: the rest of the loop
  (``REST``, by primitive) compiles on the background compile thread while tier 0
  iterates on, and the loop hands its state over at the first check after that
  (``control_flow_impls``). Only under the ``auto`` policy, for loops without effects,
  with XLA installed. The same loop on the same types runs long again in the next call
  of its jitted function: its handoff is kept (``KEPT`` loops), compiled once."""
  REST = {cf.while_p: _while_rest, cf.scan_p: _scan_rest}
  KEPT = 32
  count = 0   # handoffs started in this process (a statistic, and the tests' witness)
  _kept: "collections.OrderedDict" = collections.OrderedDict()
  _kept_lock = threading.Lock()

  def __init__(self, prim, params, avals):
    self.executable = None
    if prim is cf.scan_p:   # (and the step to go on from)
      avals = [core.ShapedArray((), np.dtype(np.int32)), *avals]
    LoopHandoff.count += 1
    submit(self._compile, prim, params, avals, first=True)

  @classmethod
  def start(cls, prim, params, values, start=True):
    """The loop's handoff, started now unless kept (with ``start`` False: only a kept
    one), or None where the loop stays on tier 0."""
    if (config.jaxlite_tier != "auto" or getattr(_pinned, "tier_0", False)
        or not xla_available()):
      return None
    avals = tuple(core.ShapedArray(np.shape(v), np.asarray(v).dtype) for v in values)
    # (jaxprs by identity, kept alive by the entry: their ids stay theirs meanwhile)
    key = (prim, tuple((k, id(v) if isinstance(v, (core.Jaxpr, core.ClosedJaxpr)) else v)
                       for k, v in params.items()), avals)
    with cls._kept_lock:
      kept = cls._kept.get(key)
      if kept is not None:
        cls._kept.move_to_end(key)
        return kept[0]
      if not start:
        return None
      handoff = cls(prim, params, avals)
      cls._kept[key] = (handoff, params)
      if len(cls._kept) > cls.KEPT:
        cls._kept.popitem(last=False)
    return handoff

  def _compile(self, prim, params, avals):
    try:
      closed = staging.trace_to_jaxpr(self.REST[prim](params), avals)
      if any(map(dce.has_effects, closed.jaxpr.eqns)):
        return   # (callbacks run once per iteration, here)
      self.executable = compile_xla(closed, f"{prim.name}_rest")
    except Exception as e:   # never the caller's error: tier 0 iterates on
      logger.debug("a long %s loop stays on tier 0: %s: %s", prim.name,
                   type(e).__name__, e)

  def ready(self) -> bool:
    return self.executable is not None

  def run(self, values):
    return list(self.executable(*values))


control_flow_impls.handoffs.append(LoopHandoff.start)


class XlaTier:
  """The ``xla`` policy (and any device's): XLA compiles before the first call returns."""

  def prepare(self, entry, name):
    entry.tier = "xla"
    return entry.compile_xla(name)


class AutoTiers:
  """The ``auto`` policy: tier 0 serves at once, and a ``Probe`` watches its calls for
  a signature that earns a race with XLA."""

  def prepare(self, entry, name):
    entry.tier = "numpy"
    return Probe(entry, name, entry.compile_numpy(name))


POLICIES = {"auto": AutoTiers(), "numpy": NumpyTier(), "xla": XlaTier()}


# every live jitted function (jit adds itself), for settled(), the profiler and
# jit.clear_caches
jitted: "weakref.WeakSet" = weakref.WeakSet()


def all_jitted() -> list:
  return list(jitted)


def settled(*functions) -> bool:
  """Whether the signatures of ``functions`` (default: every jitted function) have chosen
  their tier: none probing, compiling or racing. Benchmarks warm up until this holds."""
  for f in functions or all_jitted():
    for entry in list(f._cache.values()):
      if entry.compiling or isinstance(entry.run, (Probe, Race)):
        return False
  return True


class _Tasks(queue.Queue):
  """The compile thread's queue: tasks that a running call waits for (``submit``'s
  ``first``) in the order they came, then the others in theirs."""

  def _init(self, maxsize):
    self.queue, self.waited_for = collections.deque(), collections.deque()

  def _qsize(self):
    return len(self.queue) + len(self.waited_for)

  def _put(self, task):
    (self.waited_for if task is not None and task[6] else self.queue).append(task)

  def _get(self):
    return (self.waited_for or self.queue).popleft()


class _Worker:
  """One daemon thread compiling in the background. At exit, queued compiles are dropped
  and only the one in progress is waited for (never a crash inside the C library)."""

  def __init__(self):
    self.queue = _Tasks()
    self.stopping = False
    self.thread = threading.Thread(target=self.loop, name="jaxlite-xla-compile", daemon=True)
    self.thread.start()
    atexit.register(self.stop)

  def loop(self):
    # (XLA's client, when this process needs one, is created on this thread, which keeps
    # the callers' priority, as does everything here: its thread pools inherit it)
    background.run_in_background()
    while True:
      task = self.queue.get()
      if task is None or self.stopping:
        return
      fn, args, caller, placement = task[:4]
      try:
        if placement is _UNPLACED:   # (the caller found this thread busy)
          placement = background.keep_away(caller, threading.get_native_id())
        with background.kept_away(placement):
          fn(*args)
      finally:
        self.queue.task_done()

  def stop(self):
    self.stopping = True
    self.queue.put(None)
    # A job waiting for the compile server (whose XLA compile runs at the lowest priority,
    # so on a busy machine it can take minutes) gets its answer now: the server is gone.
    compile_server.shut_down()
    self.thread.join()


  def idle(self) -> bool:
    """Whether this thread has nothing to do: no task queued, taken or running (the
    queue counts a task from ``put`` to ``task_done``). A flag set once a task was taken
    left a window where it looked idle: a caller then sent its request to the compile
    server ahead, and the task taken waited forever for the server that request held."""
    return self.queue.unfinished_tasks == 0


_worker = None
_worker_lock = threading.Lock()
_UNPLACED = object()   # a task whose caller left placing the background work to it


def submit(fn, *args, ahead=None, on_cancel=None, caller=None, first=False):
  """Run ``fn(*args)`` on the background compile thread, off the calling thread's CPU.

  With ``first``, a call running now waits for the task (a loop's handoff): it goes ahead
  of the tasks queued without it, which only make later calls faster. In a process that
  makes a new signature per test, hundreds of races queue up, and a long loop's handoff
  behind them all came too late (optimistix's test_minimise: a test ran past 300 s).

  When that thread is idle, this thread places it (``background.keep_away``) and, with
  ``ahead``, calls ``ahead(where)`` (``where``: ``background.placement`` of the task)
  before handing the task over, atomically with respect to other submits; ``fn`` gets its
  result as a last argument (None when the compile thread was busy and ``ahead`` was not
  called). ``on_cancel()`` runs if ``cancel_pending`` drops the task. ``caller``: the
  native id of the thread whose CPU to keep away from (this thread's by default)."""
  global _worker
  caller = caller or threading.get_native_id()
  with _worker_lock:
    if _worker is None:
      _worker = _Worker()
    if _worker.idle():
      placement = background.keep_away(caller, _worker.thread.native_id)
      try:
        done = ahead and ahead(background.placement(placement))
      except BaseException:
        if placement is not None:
          background.put_back(placement)
        raise
    else:
      placement, done = _UNPLACED, None
    # (a task whose ``ahead`` did something is never cancelled: ``fn`` must follow it up)
    _worker.queue.put((fn, (*args, done) if ahead else args, caller, placement, bool(done),
                       on_cancel, first))


def cancel_pending():
  """Drop the queued background compiles (the one running finishes, and so do those
  whose ``ahead`` did something: ``submit``)."""
  if _worker is None:
    return
  kept = []
  while True:
    try:
      task = _worker.queue.get_nowait()
    except queue.Empty:
      break
    _worker.queue.task_done()
    if task is None or task[4]:   # the stop sentinel, or a task that must run
      kept.append(task)
      continue
    placement, on_cancel = task[3], task[5]
    if isinstance(placement, background.Placement):   # placed by its caller
      background.put_back(placement)
    if on_cancel is not None:
      on_cancel()
  for task in kept:
    _worker.queue.put(task)


class Probe:
  """Tier 0 under ``auto``: times calls until the signature has earned an XLA compile.

  A signature earns its race once its calls have spent ``BUDGET`` seconds in all, or at
  once when two calls in a row each say that they would spend it within ``EARLY_CALLS``
  calls (``early``): one such call alone can be a pause of the machine's, while two
  in a row let a short function race in its first calls, where latency matters most
  (benchmarks/README.md, sixteenth pass).

  The race needs the jaxpr pickled (``compile_server.Program``: the compile server's
  program and the lost race's key, ``LostRaces``) and a look-up of a lost race
  (``prepare``). Made in the call that earned the race, that Python slowed the call
  several times over. A signature whose first call is early is prepared in that call;
  the others are prepared when they earn the race: most never do, and preparing slows
  every retrace (fifteenth pass)."""
  BUDGET = tuning.PROBE_BUDGET
  EARLY_CALLS = tuning.PROBE_EARLY_CALLS
  MAX_CALLS = tuning.PROBE_MAX_CALLS
  LONG_CALL = tuning.PROBE_LONG_CALL

  def __init__(self, entry, name, run):
    self.entry, self.name, self.run = entry, name, run
    self.program = None      # the race's compile_server.Program, once prepared
    self.lost_races = None   # its LostRaces, once prepared
    self.total = 0.0
    self.calls = 0
    self.early = False   # whether the last call would spend BUDGET within EARLY_CALLS

  def __call__(self, *args):
    t0 = time.perf_counter()
    if self.calls == 0:
      _long_calls.watch(self, args, (t0, threading.get_native_id()))
      try:
        out = self.run(*args)
      finally:
        _long_calls.unwatch(self)
    else:
      out = self.run(*args)
    elapsed = time.perf_counter() - t0
    self.total += elapsed
    self.calls += 1
    early, self.early = self.early, elapsed * self.EARLY_CALLS >= self.BUDGET
    if self.entry.run is self:
      if (early and self.early) or self.total >= self.BUDGET:
        self.start(args)   # (its trials run on these arguments)
      elif self.calls >= self.MAX_CALLS:
        self.entry.run = self.run
      elif self.calls == 1 and self.early:
        self.prepare()
    return out

  def start(self, args, in_flight=None):
    """Leave the probe and race XLA on ``args``: once, from the caller's thread after a
    call or from ``LongCalls``' during one (``in_flight``: when that call started, and
    its thread's native id)."""
    with _probe_lock:
      if self.entry.run is not self:
        return
      self.entry.run = self.run
    if self.prepare():
      start_race(self.entry, self.name, self.run, args, self.program, self.lost_races,
                 in_flight)

  def prepare(self) -> bool:
    """Pickle the jaxpr for the race and look up a lost race, once; False where the race
    must not start: XLA lost it in an earlier process, or preparing failed (never the
    caller's error). Tier 0 then serves unwatched, and the signature's note says why."""
    if self.lost_races is not None:
      return True
    entry = self.entry
    try:
      program = None
      if not has_effects(entry) and (LostRaces.wanted() or compile_server.wanted()):
        try:
          program = compile_server.Program(entry.optimized, entry.donation)
        except compile_server.ServerError as e:   # XLA races in this process, if it must
          logger.debug("%s: %s", self.name, e)
      lost_races = LostRaces(entry, program)
      lost = lost_races.recall()
    except Exception as e:
      note = f"the race with XLA cannot start: {type(e).__name__}: {e}"
    else:
      if lost is None:
        self.program, self.lost_races = program, lost_races
        return True
      entry.tier_ms = lost["ms"]
      note = (f"tier 0: XLA lost this signature's race in an earlier process "
              f"({lost['ms'].get('xla', float('nan')):.3g} ms a call against "
              f"{lost['ms'].get('numpy', float('nan')):.3g}), remembered in the persistent "
              f"compile cache for a day (jaxlite_remember_tiers)")
    entry.tier_note = note
    logger.debug("%s: %s", self.name, note)
    if entry.run is self:
      entry.run = self.run
    return False


_probe_lock = threading.Lock()   # a probe leaves once, whichever thread starts its race


class LongCalls:
  """Starts the race of a signature whose first call is still running on tier 0 after
  ``Probe.LONG_CALL`` seconds, so that XLA compiles beside that call.

  One daemon thread, started with the first jitted function (``start``), not in a call,
  looks at the calls watched every ``POLLS``-th of ``LONG_CALL`` while first calls come,
  and sleeps once none has come for ``IDLE_AFTER`` seconds. Arming a watch is a dict write
  under a lock, which wakes the thread only from that sleep: a thread started in a first
  call, or woken by it, took the GIL and a CPU from the short call it watched
  (benchmarks/README.md, "Threads started in a first call")."""
  POLLS = 4
  IDLE_AFTER = tuning.PROBE_WATCH_IDLE_AFTER
  # The thread's clock, bound once: it runs on whatever a test does to this module's time.
  _now, _sleep = staticmethod(time.perf_counter), staticmethod(time.sleep)

  def __init__(self):
    self.cond = threading.Condition()
    self.watched = {}   # probe -> (the call's arguments, (its start, its thread's id))
    self.thread = None
    self.asleep = False   # waiting for a watch, not looking
    self.last = 0.0   # when the last watch was armed
    self.settled = threading.Event()   # the thread has reached its first wait

  def after_fork(self):
    """In a forked child, which has none of the parent's threads: start afresh."""
    self.__init__()

  def start(self):
    """Start the thread, once (``jit`` calls this for each function it makes), and wait
    until it first waits: the Python it runs until then would otherwise take the GIL from
    the call that follows."""
    if self.thread is None:
      with self.cond:
        if self.thread is None:
          self.last = self._now()
          self.thread = threading.Thread(target=self.loop, name="jaxlite-long-calls",
                                         daemon=True)
          self.thread.start()
      self.settled.wait(1.0)

  def watch(self, probe, args, in_flight):
    with self.cond:
      self.watched[probe] = (args, in_flight)
      self.last = self._now()
      if self.asleep:
        self.cond.notify()
    if self.thread is None:   # (a probe made without jit: tests)
      self.start()

  def unwatch(self, probe):
    with self.cond:
      self.watched.pop(probe, None)

  def loop(self):
    # (no call's arguments stay referenced here while it waits: tier 0's donation
    # reuses a donated buffer only where nothing else holds it, by reference count)
    while True:
      with self.cond:
        now = self._now()
        if not self.watched and now - self.last > self.IDLE_AFTER:
          self.asleep = True
          self.settled.set()
          self.cond.wait()
          self.asleep = False
          continue
        due = [p for p, (_, (since, _)) in self.watched.items() if now - since >= p.LONG_CALL]
        look = min((p.LONG_CALL for p in self.watched), default=Probe.LONG_CALL) / self.POLLS
        watched = [(p, self.watched.pop(p)) for p in due]
      for probe, (args, in_flight) in watched:
        self._start(probe, args, in_flight)
      del watched
      self.settled.set()
      self._sleep(look)

  @staticmethod
  def _start(probe, args, in_flight):
    try:
      probe.start(args, in_flight)
    except Exception as e:   # never the caller's error: tier 0 serves on
      logger.debug("%s: the race did not start during its first call: %s", probe.name, e)


_long_calls = LongCalls()
if hasattr(os, "register_at_fork"):
  os.register_at_fork(after_in_child=_long_calls.after_fork)


def made_jitted(fn):
  """Note a jitted function ``fn`` that ``jit`` just made: it counts as live (``jitted``)
  and the thread that watches first calls runs from now on."""
  jitted.add(fn)
  _long_calls.start()


def has_effects(entry) -> bool:
  """Whether the signature's program must run once per call: it has effects, or it calls
  a ``pure_callback`` (JAX runs it once per call; a trial run would call the user's
  function again, from another thread, on the other tier's numbers). Worked out once per
  signature (``entry.effects``)."""
  if entry.effects is None:
    once = dce.effectful_primitives | {lax_callbacks.pure_callback_p}
    entry.effects = any(dce.uses(e, once) for e in entry.optimized.jaxpr.eqns)
  return entry.effects


def start_race(entry, name, numpy_run, values, program, lost_races, in_flight=None):
  """Compile XLA in the background and race it against ``numpy_run`` on ``values`` (the
  NumPy arguments of the call that earned it; immutable, so safe to keep); ``program``
  (None: XLA races in this process) and ``lost_races``: ``Probe.prepare``'s;
  ``in_flight``: when that call started and its thread, if it still runs (``LongCalls``).

  The race's Python that must run in this process before XLA compiles, and that
  ``prepare`` did not do, runs here, on the caller's thread, in the call that earned the
  race: the compile server's request (the call's values pickled), its placement and its
  sending; on the compile thread it took the GIL from the caller's next call in many
  turns. Nothing here is the caller's error: should it fail, tier 0 keeps serving and the
  signature's note says why."""
  if entry.donate:
    # a donated argument's buffer may become an output's (donation.reuse_host_buffers):
    # the race keeps copies of those
    values = [np.array(v) if i in entry.donate else v for i, v in enumerate(values)]
  try:
    request = None   # where there is none, XLA compiles and races in this process
    if program is not None and compile_server.wanted():
      try:
        request = compile_server.request(
            entry.optimized, name, entry.donation, list(map(np.asarray, values)),
            Race.WARMUP, Race.WARMUP_BUDGET, Race.TRIALS, program)
      except compile_server.ServerError as e:
        logger.debug("%s: racing XLA in this process: %s", name, e)
    server = compile_server.running()

    def send_ahead(where):
      """Send the request here when the compile thread is idle and the pipe has room:
      that thread then only waits for the answer (taking it over woke that thread into
      Python while the caller's next call ran)."""
      if request is None or server is None:
        return None
      try:
        return server if server.send(request, where, block=False) else None
      except compile_server.ServerError:
        return None

    def cancelled():
      entry.compiling = False
    entry.compiling = True
    submit(_race_in_background, entry, name, numpy_run, values, lost_races, request,
           in_flight and in_flight[0], ahead=send_ahead, on_cancel=cancelled,
           caller=in_flight and in_flight[1])
  except Exception as e:
    entry.compiling = False
    entry.tier_note = f"the race with XLA did not start: {type(e).__name__}: {e}"
    logger.debug("%s: %s", name, entry.tier_note)


def _race_in_background(entry, name, numpy_run, values, lost_races, request,
                        in_flight_since, sent_to):
  """The compile thread's side of ``start_race``; ``sent_to``: the server the caller sent
  the request to, whose answer this reads (None: not sent)."""
  try:
    race = install_race(entry, name, numpy_run, lost_races, request, sent_to,
                        in_flight_since)
    if race is not None and not race.effectful:
      race.run_trials([Array(np.asarray(v), a.weak_type)
                       for v, a in zip(values, entry.jaxpr.in_avals)])
  finally:
    entry.compiling = False
    if sent_to is not None and sent_to.owed:   # unread (the race ended otherwise): the
      try:                                     # server serves nothing else until it is
        sent_to.reply()                        # read
      except compile_server.ServerError:
        pass


def install_race(entry, name, numpy_run, lost_races=None, request=None, sent_to=None,
                 in_flight_since=None):
  """Install the race between tier 0 and XLA as ``entry.run`` (None where XLA is
  unavailable); it remembers a clear loss of XLA's in ``lost_races``. With a ``request``
  (``compile_server.request``), XLA compiles and runs its trials in the compile server;
  ``sent_to``: the server it was sent to already; ``in_flight_since``: when the call that
  started the race began, if it was still running then."""
  out_weak = entry.out_weak

  def numpy_call(leaves):
    return list(map(Array, numpy_run(*map(arguments.leaf_value, leaves)), out_weak))
  server = sent_to or (None if request is None else compile_server.server())
  if server is not None:   # XLA compiles and runs its trials there
    xla = RemoteXla(entry, name, server, request, sent=sent_to is not None)
  elif not xla_available():
    entry.tier_note = "no XLA plugin: the NumPy tier only"
    return None
  else:
    try:
      xla = xla_contender(entry, entry.compile_xla(name))
    except Exception as e:  # the NumPy tier keeps serving; say why in the stats
      entry.tier_note = f"xla unavailable for this function: {type(e).__name__}: {e}"
      logger.debug("%s: %s", name, entry.tier_note)
      return None
  # (a function with effects alternates the tiers on real calls, in this process)
  entry.run = race = Race(entry, {"numpy": (numpy_run, numpy_call), "xla": xla},
                          has_effects(entry), lost_races=lost_races,
                          in_flight_since=in_flight_since)
  return race


def xla_contender(entry, xla_run):
  """The race's ``(run, call)`` of the XLA executable ``xla_run`` (an XlaDispatch):
  ``call`` runs it on argument leaves to completion, as tier 0's calls are timed."""
  out_weak = entry.out_weak

  def xla_call(leaves):
    bufs = xla_run.execute_device([arguments.leaf_device_value(x, xla_run.client)
                                   for x in leaves])
    for buf in bufs:
      buf.block_until_ready()
    return list(map(from_device, bufs, out_weak))
  return xla_run, xla_call


class RemoteXla:
  """The race's XLA tier when the compile server compiles and times it
  (``compile_server``): this process loads the executable only if it wins. Where the
  server cannot take the jaxpr, XLA compiles and runs its trials here, as without one."""
  GLUE = tuning.REMOTE_GLUE

  def __init__(self, entry, name, server, request, sent=False):
    self.entry, self.name, self.server, self.request = entry, name, server, request
    self.sent = sent   # whether the request went already (its answer is still to read)
    self.result = None
    self.here = None   # (run, call) when XLA raced in this process after all

  def trial_times(self, race, leaves):
    """XLA's times on ``leaves`` (the ``request``'s values), warm-up done
    (``Race.trial_times``'s contract)."""
    entry = self.entry
    try:
      t0 = time.perf_counter()
      self.result = r = self.server.reply() if self.sent else self.server.compete(
          self.request)
    except compile_server.ServerError as e:
      if compile_server.exiting:
        raise
      logger.debug("%s: racing XLA in this process: %s", self.name, e)
      if not xla_available():
        raise RuntimeError("no XLA plugin") from None
      self.here = xla_contender(entry, entry.compile_xla(self.name))
      return race.trial_times(self.here[1], leaves)
    entry.record_xla(self.name, r["compile_s"] * 1e3, r["text"], r["from_disk_cache"],
                     f" (compile server, {(time.perf_counter() - t0) * 1e3:.2f} ms in all)")
    return r["times"]

  def load(self, race, leaves):
    """The winner's ``(run, call)`` in this process, warmed up."""
    if self.here is not None:
      return self.here
    entry, r = self.entry, self.result
    if r["executable"] is None:   # the plugin could not serialize it: compile it here
      run = entry.compile_xla(self.name)
    else:
      from jaxlite._src.backends import xla
      # (the first winner this process loads makes its client: one that runs long enough
      # gets a pool thread per CPU, ``xla.client``)
      if not xla_available(min(r["times"]) >= xla.POOL_PER_CPU_FROM):
        raise RuntimeError(f"the XLA tier is not available here: "
                           f"{backends.xla_state.get('reason')}")
      run = XlaDispatch(xla.deserialize(r["executable"], entry.optimized, r["text"],
                                        entry.donation, r.get("call_code")))
    self.here = xla_contender(entry, run)
    # Warm only until a run is about as fast as in the server, since each run takes the
    # GIL from a caller's call twice (the run, the wait); a process's first executable
    # needs the most runs.
    race.warm_up(self.here[1], leaves, warm=1.5 * min(r["times"]) + self.GLUE)
    return self.here


class LostRaces:
  """The races of one signature that XLA clearly lost, remembered across processes in the
  persistent compile cache (``.tier`` entries), so that a later process running the same
  program keeps that signature on tier 0 without compiling XLA or racing it again: each
  race costs the callers' calls the race's Python and, where tier 0 uses every CPU, a CPU
  for XLA's compile and trials (benchmarks/README, tenth pass).

  Only a clear loss measured on the callers' own calls is kept (XLA's time at least
  ``MARGIN`` times tier 0's), for ``TTL`` seconds, and it counts only once a second race
  has found it too (``CONFIRMATIONS``): one race is timed once, on a machine that may have
  been busy, and a wrong verdict would pin the slower tier for a day. The key
  is the optimised jaxpr with its constants and donation, and what sets either tier's
  speed here (``_machine``). Functions with effects race on real calls instead: none is
  remembered."""
  MARGIN = tuning.LOST_MARGIN
  TTL = tuning.LOST_TTL
  CONFIRMATIONS = tuning.LOST_CONFIRMATIONS
  KIND = ".tier"

  def __init__(self, entry, program=None):
    """``program``: ``compile_server.Program`` of the entry's jaxpr, made when absent."""
    self.key = None
    if not self.wanted() or has_effects(entry):
      return
    try:   # the jaxpr by value, primitives by name, as the compile server gets it
      program = program or compile_server.Program(entry.optimized, entry.donation)
    except compile_server.ServerError:   # something pickle cannot take: race every time
      return
    self.key = disk_cache.key(*program.parts, repr(_machine()), kind=self.KIND)

  @staticmethod
  def wanted() -> bool:
    """Whether races are remembered (``jaxlite_remember_tiers``, in the persistent cache)."""
    return bool(config.jaxlite_remember_tiers and config.jaxlite_persistent_cache)

  def _stored(self) -> dict | None:
    payload = disk_cache.get(self.key, self.KIND)
    try:
      record = json.loads(payload)
      fresh = 0 <= time.time() - record["at"] < self.TTL and all(
          isinstance(v, float) for v in record["ms"].values())
      count = int(record.get("count", 1))
    except (TypeError, ValueError, KeyError, AttributeError):
      return None
    return dict(record, count=count) if fresh else None

  def recall(self) -> dict | None:
    """The remembered loss, ``{"at": seconds since the epoch, "ms": {tier: ms},
    "count": races that found it}``, if one younger than ``TTL`` was found by
    ``CONFIRMATIONS`` races."""
    if self.key is None:
      return None
    record = self._stored()
    return record if record is not None and record["count"] >= self.CONFIRMATIONS else None

  def remember(self, times: dict, caller: str):
    """Store the race's figures (``times``: tier -> seconds, each tier's typical time on
    the callers' calls) if the caller's tier won clearly; a loss found again counts
    twice, a win of XLA's forgets it."""
    if self.key is None:
      return
    if min(times, key=times.get) != caller or any(
        t < self.MARGIN * times[caller] for tier, t in times.items() if tier != caller):
      if self._stored() is not None:   # XLA won this time: the old verdict was wrong
        disk_cache.put(self.key, b"{}", kind=self.KIND)
      return
    before = self._stored()
    record = {"at": time.time(), "ms": {tier: t * 1e3 for tier, t in times.items()},
              "count": 1 + (before["count"] if before is not None else 0)}
    disk_cache.put(self.key, json.dumps(record).encode(), kind=self.KIND)


def _machine() -> tuple:
  """What sets the tiers' speeds besides the program: versions, the CPUs this process may
  use, tier 0's threads and blocks, XLA's flags and plugins."""
  return (*_INSTALLED, config.jaxlite_tier0_threads, config.jaxlite_tier0_blocks,
          len(background.process_cpus()),
          *(os.environ.get(name) for name in ("XLA_FLAGS", "JAXLITE_PLATFORM",
                                              "JAXLITE_PJRT_CPU_PLUGIN")))


def _installed() -> tuple:
  """The versions of jaxlite, NumPy and Python, and each PJRT plugin's file and when it
  was installed (a new XLA races afresh), found without loading a plugin or XLA."""
  import numpy
  from jaxlite._src.base import version
  from jaxlite._src.backends import plugins

  def stamp(plugin):
    try:
      return plugin and (plugin.path, os.stat(plugin.path).st_mtime_ns)
    except OSError:
      return None
  return (version.__version__, numpy.__version__, sys.version,
          stamp(plugins.cpu_plugin()), stamp(plugins.cuda_plugin()))


# At import (0.4 ms), not on the compile thread while callers wait for the GIL.
_INSTALLED = _installed()


class Race:
  """Chooses between tier 0 and XLA, then installs the faster one as ``entry.run``; no
  call waits for XLA while it chooses.

  ``tiers`` maps a tier's name to ``(run, call)``: ``run`` is what the entry serves once
  that tier has won, ``call(leaves)`` runs it on the call's argument leaves the way it will
  run then (XLA on device-resident inputs) and returns the output Arrays once they are
  computed, so that every tier is timed to completion. A tier timed elsewhere (XLA in the
  compile server, ``RemoteXla``) is instead an object with ``trial_times(race,
  leaves)``, its figures, and ``load(race, leaves)``, its warmed-up ``(run, call)`` here.

  The choice takes two steps.

  1. A screen, off the callers' path (``run_trials``, on the compile thread, in the job
     that compiled XLA): XLA's trials (warmed up, then ``TRIALS`` timed runs, in the
     compile server or here) against tier 0's best served call (``CALLER_CALLS`` of them;
     with fewer, tier 0 runs trials too, unless they would take the compile thread more
     than ``TRIALS_BUDGET`` seconds: a win over a few served calls is then reviewed, and
     a slow tier 0 never keeps the process from exiting). XLA more than ``SCREEN`` times
     slower loses without being loaded in this process, where loading and warming it
     would slow the callers' calls beside it; XLA faster than ``CLEAR`` times tier 0 is
     loaded, warmed and wins, by that margin over tier 0 on all its BLAS threads where
     tier 0's calls ran with host BLAS narrowed to one thread beside the compile
     (``background.host_blas().overstatement()``). XLA's trials run
     on the CPUs the callers leave free, all but one, so they can only understate it:
     a program XLA spreads over every CPU takes up to twice as long there on two CPUs
     as on the callers' calls.
  2. The verdict, on the callers' own calls, where the screen cannot tell: XLA is loaded
     and warmed, then the callers' calls run on each tier in turn, tier 0 first, each for
     a run of calls long enough to settle in: ``SETTLE`` seconds and ``CONFIRM`` calls
     after them, which are timed. The tier whose median timed call is faster wins. Only
     such calls run as the steady calls will, with the callers' thread pools, CPUs and
     load; and only after settling, since OpenBLAS's threads spin on a CPU for a while
     after tier 0's products (benchmarks/README.md, "Measurements moved out of code
     comments"). A function with side effects (debug and io callbacks) must run once per
     call, so it takes this step from the start, with XLA compiled here.

  A close verdict (the loser within ``CLOSE`` of the winner) is checked again on the
  callers' calls from time to time (``review``: after ``REVIEW_AFTER`` calls, then twice
  as many each time), so that a machine whose load changed moves to the faster tier."""
  TRIALS = tuning.RACE_TRIALS
  WARMUP = tuning.RACE_WARMUP
  WARMUP_BUDGET = tuning.RACE_WARMUP_BUDGET
  CALLER_CALLS = tuning.RACE_CALLER_CALLS
  TRIALS_BUDGET = tuning.RACE_TRIALS_BUDGET
  SCREEN = tuning.RACE_SCREEN
  CLEAR = tuning.RACE_CLEAR
  CONFIRM = tuning.RACE_CONFIRM
  SETTLE = tuning.RACE_SETTLE
  CLOSE = tuning.RACE_CLOSE
  REVIEW_AFTER = tuning.RACE_REVIEW_AFTER

  def __init__(self, entry, tiers, effectful=None, caller="numpy", lost_races=None,
               in_flight_since=None):
    self.entry = entry
    self.tiers = tiers
    self.caller = caller
    self.times = {t: [] for t in tiers}
    self.lock = threading.Lock()
    self.effectful = has_effects(entry) if effectful is None else effectful
    self.on_calls = self.effectful   # whether the callers' calls decide (step 2)
    self.order = (caller, *(t for t in tiers if t != caller))
    self.turn = 0            # the tier of ``order`` the callers' calls run on
    self.since = None        # when the turn's first call started
    self.lost_races = lost_races   # where a clear loss of XLA's is remembered
    self.in_flight_since = in_flight_since   # a first call's start, raced while it runs

  def __call__(self, leaves):
    if not self.on_calls:   # the screen runs on the compile thread (``run_trials``)
      return self.tiers[self.caller][1](leaves)
    with self.lock:
      tier = self.order[min(self.turn, len(self.order) - 1)]
    t0 = time.perf_counter()
    outs = self.tiers[tier][1](leaves)
    self._record(tier, t0, time.perf_counter() - t0)
    return outs

  def run_trials(self, leaves):
    """Screen XLA against tier 0 on ``leaves`` (on the compile thread, in the job that made
    this race: one wake-up of that thread per race, each of which takes the GIL from the
    callers); where XLA passes, load it and let the callers' calls decide."""
    tier = None
    try:
      times = {t: [] for t in self.tiers}
      for tier, contender in self.tiers.items():   # timed elsewhere (the compile server)
        if not isinstance(contender, tuple):
          times[tier] = contender.trial_times(self, leaves)
      here = [(t, c[1]) for t, c in self.tiers.items() if isinstance(c, tuple)]
      for tier, call in here:
        if tier != self.caller:
          self.warm_up(call, leaves)
      served = self.entry.exec_s.copy()   # (atomic: the caller appends meanwhile)
      enough = len(served) >= self.CALLER_CALLS
      few = not enough and bool(served) and min(served) * self.TRIALS > self.TRIALS_BUDGET
      # (a first call still running: tier 0 takes at least as long as it has run so far)
      at_least = not served and self.in_flight_since is not None
      if enough or few:
        times[self.caller] = [min(served)] * self.TRIALS
      elif at_least:
        times[self.caller] = [time.perf_counter() - self.in_flight_since] * self.TRIALS
      here = [(tier, call) for tier, call in here if not times[tier]]
      for _ in range(self.TRIALS):
        for tier, call in here:
          if _worker is not None and _worker.stopping:
            raise RuntimeError("the process is exiting")
          times[tier].append(self.timed(call, leaves))
      best = {t: min(v) for t, v in times.items()}
      if not at_least and all(best[t] > self.SCREEN * best[self.caller]
                              for t in best if t != self.caller):
        with self.lock:   # screened out: never loaded here
          self._install(self.caller, best)
        if self.lost_races is not None:
          self.lost_races.remember(best, self.caller)
        return
      for tier, contender in list(self.tiers.items()):
        if not isinstance(contender, tuple):   # the contender, loaded and warmed here
          self.tiers[tier] = contender.load(self, leaves)
    except Exception as e:  # e.g. an argument deleted since: tier 0 keeps serving
      self._abandon(f"{tier} trial failed: {type(e).__name__}: {e}")
      return
    winner = min(best, key=best.get)
    # (tier 0's calls beside the compile may have had one BLAS thread: a shortcut only
    # where the contender wins even against tier 0 on every thread)
    overstated = background.host_blas().overstatement()
    if winner != self.caller and best[winner] * overstated < self.CLEAR * best[self.caller]:
      with self.lock:   # clearly faster; a figure from a few served calls is checked later
        self._install(winner, best, review=few or at_least)
      return
    self.restart()

  def restart(self):
    """Take the verdict (again) on the callers' next calls, each tier's in turn."""
    with self.lock:
      self.times = {t: [] for t in self.tiers}
      self.turn, self.since = 0, None
      self.on_calls = True
      self.entry.run = self

  def warm_up(self, call, leaves, warm=0.0):
    """Run ``call(leaves)`` untimed: ``WARMUP`` times at most, within ``WARMUP_BUDGET``,
    until a run after the first takes at most ``warm`` seconds."""
    compile_server.warm_up(lambda: call(leaves), self.WARMUP, self.WARMUP_BUDGET, warm)

  @staticmethod
  def timed(call, leaves) -> float:
    return compile_server.timed(lambda: call(leaves))

  def trial_times(self, call, leaves) -> list:
    """A tier's figures as the race takes them here: warm-up, then ``TRIALS`` timed runs."""
    self.warm_up(call, leaves)
    return [self.timed(call, leaves) for _ in range(self.TRIALS)]

  def _abandon(self, note):
    with self.lock:
      if self.entry.run is self:
        self.entry.tier_note = note
        self.entry.run = self.tiers[self.caller][0]

  def _record(self, tier, start, elapsed):
    """A call of the verdict's on ``tier``, started at ``start``, took ``elapsed``."""
    with self.lock:
      if tier != self.order[min(self.turn, len(self.order) - 1)]:
        return   # (a call that started before the turn moved on)
      if self.since is None:
        self.since = start
      if start - self.since < self.SETTLE:
        return
      times = self.times[tier]
      times.append(elapsed)
      if len(times) >= self.CONFIRM:
        self.turn += 1
        self.since = None
      if self.entry.run is self and all(len(t) >= self.CONFIRM for t in self.times.values()):
        typical = {t: statistics.median(v) for t, v in self.times.items()}
        winner = min(typical, key=typical.get)
        self._install(winner, typical,
                      review=max(typical.values()) < self.CLOSE * typical[winner])
        self.on_calls = False
        if self.lost_races is not None and not self.effectful:
          self.lost_races.remember(typical, self.caller)

  def _install(self, tier, figures, review=False):
    """Serve ``tier`` from now on (under the lock); ``figures``: tier -> seconds;
    ``review``: take the verdict again later (``review``)."""
    entry = self.entry
    entry.tier_ms = {t: m * 1e3 for t, m in figures.items()}
    entry.tier = tier
    entry.run = self.tiers[tier][0]
    entry.review_at = entry.calls + max(self.REVIEW_AFTER, entry.calls) if review else -1
    entry.race = self if review else None


def review(entry):
  """Check a close verdict again on the callers' calls (jit calls this at the call
  ``entry.review_at`` names)."""
  race = entry.race
  if race is not None and entry.run is race.tiers[entry.tier][0]:
    race.restart()
