"""The background compile thread's manners: it hands the GIL to the callers it runs beside
and keeps off their CPU.

A caller that wants the GIL waits a whole switch interval (5 ms) while another thread runs
Python, and tier 0 releases the GIL at every ufunc call; so Python on the compile thread
(lowering above all) would be taken out of the caller's calls many times over. Loops that
run there call ``yield_to_callers`` once per step, which hands the GIL over once per turn.

Background work keeps the callers' CPU priority: it holds the GIL in turns, and at the
lowest priority the kernel would deschedule it holding the GIL whenever the callers kept
every core busy, while XLA's compile, a long C call without the GIL, would starve beside
them (issue 42; benchmarks/README.md, "Measurements moved out of code comments").

Background work also keeps off the CPU of the caller it works for (``keep_away``): the
compile thread, the thread of its XLA calls and XLA's own pools run on the other CPUs
while it lasts, since work sharing the caller's CPU slows the caller's calls while work
on another CPU costs it nothing (``benchmarks/probes/stall_affinity.py``,
``benchmarks/probes/stall_floor.py``).
"""
import contextlib
import math
import os
import threading
import time

import numpy as np

from jaxlite._src.base import tuning


class _Courtesy(threading.local):
  """Whether this thread is a background one that should hand the GIL to callers, and
  when it last did."""
  background = False
  since = 0.0
  avoiding = None   # the CPU kept free for the caller (``kept_away``), if any


_courtesy = _Courtesy()
# (benchmarks/probes/gil_contention.py's "yield" rows, benchmarks/probes/lowering_turn.py)
YIELD_FOR = tuning.YIELD_FOR
TURN = tuning.TURN


def run_in_background():
  """Mark the calling thread as a background one (``yield_to_callers`` hands over there)."""
  _courtesy.background = True


def may_poll() -> bool:
  """Whether the calling thread may poll a running computation instead of sleeping on it
  (``pjrt.POLL_FOR``): a caller's thread, or any in the compile server, which has no
  callers whose GIL a poll would hold (``serve_alone``)."""
  return _alone or not _courtesy.background


def yield_to_callers():
  """On a background thread, once per ``TURN`` seconds, release the GIL long enough for a
  waiting caller to take it, which a caller beside a thread lowering in a loop would
  otherwise wait for many times a call (``benchmarks/probes/gil_contention.py``).
  ``time.sleep(0)`` would not hand over: the sleeper takes the GIL back before the
  waiter wakes."""
  if _courtesy.background:
    now = time.perf_counter()
    if now - _courtesy.since >= TURN:
      time.sleep(YIELD_FOR)
      _courtesy.since = time.perf_counter()


_alone = False   # this process is the compile server (``serve_alone``)


def serve_alone():
  """Declare this process the compile server, whose threads all work in the background
  for callers in another process: they poll XLA's computations (``may_poll``), since no
  caller shares their GIL, and the trials then wait as the callers will."""
  global _alone
  _alone = True


def process_cpus() -> set:
  """The CPUs this process's main thread may run on (all of them where that cannot be
  asked): a background thread's own set may be narrowed (``keep_away``)."""
  if hasattr(os, "sched_getaffinity"):
    return os.sched_getaffinity(threading.main_thread().native_id)
  return set(range(os.cpu_count() or 1))


# Native ids of the threads that C libraries started for background work (XLA's pools):
# ``keep_away`` moves them with the compile thread.
_helpers = set()


def _threads() -> set:
  """Native ids of all this process's threads (none known where there is no ``/proc``)."""
  try:
    return set(map(int, os.listdir("/proc/self/task")))
  except OSError:   # not Linux
    return set()


def _native_threads() -> set:
  """Native ids of this process's threads that Python's ``threading`` did not start."""
  return _threads() - {t.native_id for t in threading.enumerate()}


def adopt_threads_started_by(c_function, *args):
  """``c_function(*args)``; the native threads it starts (XLA's client starts its pools
  when it is created) follow the background work's placement from then on."""
  before = _native_threads()
  try:
    return c_function(*args)
  finally:
    _helpers.update(_native_threads() - before)


def _last_cpu(tid) -> int:
  """The CPU that thread ``tid`` of this process last ran on (``/proc``'s stat, field 39)."""
  with open(f"/proc/self/task/{tid}/stat", "rb") as f:
    return int(f.read().rsplit(b")", 1)[1].split()[36])


def placement(kept=None):
  """``(cpu, cpus)``: the CPU that background work keeps off (the caller's; None: none),
  and the CPUs of this process's main thread, which the compile server spreads over when
  it need not keep off one. The CPU is ``kept``'s (a ``keep_away`` placement, made for a
  task this thread hands over), else that of the work running on this thread
  (``kept_away``). The server must be told both: it was started by the compile thread
  while that thread kept off a CPU, and inherited only the others, where the caller may
  since have moved."""
  return (kept.cpu if kept is not None else _courtesy.avoiding), process_cpus()


@contextlib.contextmanager
def on_cpus(cpus: set):
  """While open, the calling thread runs on ``cpus``, so that a C library sizing its
  thread pools by the CPUs it may use sizes them for ``cpus`` (XLA's client does, at
  creation); at the end the thread, and the threads started meanwhile, get the calling
  thread's CPUs back. Nothing changes where CPUs cannot be set (not Linux, ``cpus``
  not allowed here)."""
  try:
    had = os.sched_getaffinity(0)
    existing = _native_threads()
    os.sched_setaffinity(0, cpus)
  except (AttributeError, OSError):
    yield
    return
  try:
    yield
  finally:
    os.sched_setaffinity(0, had)
    for tid in _native_threads() - existing:
      _set_cpus(tid, had)


def keep_process_off(cpu, cpus: set):
  """Run every thread of this process on ``cpus`` but ``cpu`` (on all of ``cpus`` when
  ``cpu`` is None or the only one): the compile server's threads are all background work,
  so it does this at each request."""
  keep = cpus - {cpu} if cpu is not None and cpus - {cpu} else cpus
  for tid in _threads():
    _set_cpus(tid, keep)


def _set_cpus(tid, cpus) -> bool:
  try:
    os.sched_setaffinity(tid, cpus)
    return True
  except OSError:   # the thread has ended
    return False


class HostBlas:
  """NumPy's OpenBLAS thread count: one thread while background work is kept away from a
  caller (``narrow`` to ``restore``), since OpenBLAS's workers spin between a caller's
  products on the CPU the compile was given (benchmarks/README.md), and one thread for a
  while after a threaded product of tier 0's was starved of its CPUs (``product``); else
  the count it had. Nothing where NumPy uses another BLAS. Tier 0's calls timed while
  narrowed overstate its steady time (``overstatement``)."""
  THREADED_FROM = 1 << 18   # m * n * k from which OpenBLAS splits a product over threads
  WATCH_AFTER = tuning.BLAS_WATCH_AFTER
  STARVED = tuning.BLAS_STARVED
  STARVED_IN_ROW = tuning.BLAS_STARVED_IN_ROW
  SINGLE_FOR = tuning.BLAS_SINGLE_FOR
  SINGLE_AT_MOST = tuning.BLAS_SINGLE_AT_MOST

  def __init__(self):
    self.get = self.set = None
    self.found = False   # whether OpenBLAS was looked for (``find``)
    self.narrowed = 0   # open placements
    self.full = self.current = 1   # the count it had, and the count set now
    self.single_until = 0.0   # products run on one thread until then (0: they need not)
    self.single_for = self.SINGLE_FOR
    self.threaded_since = 0.0   # when products last went back to threads
    self.starved = 0   # starved threaded products in a row
    # The shortest product whose CPU time the thread clock can tell: ten of its steps
    # (``measure_thread_clock``; none is judged before it has run). Most clocks step in
    # nanoseconds, but some sandboxes' (gVisor's) in 10 ms, where a 1 ms product reads 0
    # CPU nine times in ten and would always look starved.
    self.judged_from = math.inf
    # Threaded products left before the watch starts: finding OpenBLAS and measuring the
    # clock cost a process's first call 0.3-0.5 ms in a sandbox, whose first products
    # need no watch (benchmarks/README.md, "The first call's diet").
    self.unwatched = self.WATCH_AFTER

  def find(self):
    """Look up OpenBLAS's thread count functions, once (``get`` and ``set``; None where
    NumPy uses another BLAS)."""
    if self.found:
      return
    self.found = True
    try:
      import ctypes
      libs = os.path.dirname(np.__file__) + ".libs"   # (glob's regex costs a first call)
      paths = [os.path.join(libs, name) for name in sorted(os.listdir(libs))
               if "openblas" in name and ".so" in name] if os.path.isdir(libs) else []
      for name in ("scipy_openblas", "openblas"):
        for path in paths:
          lib = ctypes.CDLL(path)
          get = getattr(lib, f"{name}_get_num_threads64_", None)
          set_ = getattr(lib, f"{name}_set_num_threads64_", None)
          if get and set_:
            get.restype, set_.argtypes = ctypes.c_int, [ctypes.c_int]
            self.get, self.set = get, set_
            self.full = self.current = get()
            return
    except (ImportError, OSError):
      pass

  def start_watch(self):
    """Find OpenBLAS and, where it runs threads, measure the thread clock's step."""
    with _blas_lock:
      self.unwatched = 0
      self.find()
    if self.full > 1:
      self.measure_thread_clock()

  def measure_thread_clock(self):
    """Set ``judged_from`` from the thread clock's step (``thread_clock_step``)."""
    step = thread_clock_step()
    self.judged_from = 10 * step if step is not None else math.inf

  def _apply(self):
    """Set the count the state asks for (under ``_blas_lock``); leaving the full count, take
    it afresh first, in case the user set one since (``threadpoolctl``, say)."""
    self.find()
    if self.set is None:
      return
    if self.current == self.full:
      self.full = self.current = self.get()
    want = 1 if self.narrowed or self.single_until else self.full
    if want != self.current:
      self.set(want)
      self.current = want

  def narrow(self):
    with _blas_lock:
      self.find()
      if self.set is not None:
        self.narrowed += 1
        self._apply()

  def overstatement(self) -> int:
    """How many times slower than the callers' steady calls tier 0's calls timed now can
    be: the threads host products lost to narrowing (1 when they lost none)."""
    return self.full if self.narrowed > 0 else 1

  def restore(self):
    if self.set is not None:
      with _blas_lock:
        self.narrowed -= 1
        self._apply()

  def product(self, fn, *args, size):
    """``fn(*args)``, a BLAS product of ``size`` multiply-adds, watched. A threaded product
    whose calling thread was on a CPU for under ``STARVED`` of its time waited for threads
    that other work kept off the CPUs: on a loaded machine one threaded product in five
    took 45 ms against 0.7 (cpu/wall 0.25), and W5's step 60-300 ms against 7-10 on one
    thread. After ``STARVED_IN_ROW`` such products in a row, products run on one thread
    for ``single_for`` seconds before threads are tried again; a run of threads that was
    starved sooner than that doubles it (up to ``SINGLE_AT_MOST``), a longer one halves it
    (down to ``SINGLE_FOR``)."""
    if size < self.THREADED_FROM:
      return fn(*args)
    if self.unwatched > 0:
      self.unwatched -= 1
      if self.unwatched > 0:
        return fn(*args)
      self.start_watch()
    if self.full == 1 or self.narrowed or self.judged_from == math.inf:
      return fn(*args)   # (a clock too coarse to judge by: not read)
    if self.single_until:
      now = time.perf_counter()
      if now < self.single_until:
        return fn(*args)
      with _blas_lock:
        self.single_until, self.threaded_since = 0.0, now
        self._apply()
    wall, cpu = time.perf_counter(), time.thread_time()
    out = fn(*args)
    now = time.perf_counter()
    wall, cpu = now - wall, time.thread_time() - cpu
    # (products under a millisecond are not judged: too short to tell a hiccup)
    if wall < 1e-3 or self.current == 1 or wall < self.judged_from:
      return out
    if cpu >= self.STARVED * wall:
      self.starved = 0
      return out
    self.starved += 1   # (one alone can be a hiccup of an idle machine's: 1 in 100)
    if self.starved >= self.STARVED_IN_ROW:
      self.starved = 0
      with _blas_lock:
        lasted = now - self.threaded_since
        self.single_for = (min(2 * self.single_for, self.SINGLE_AT_MOST)
                           if lasted < self.single_for
                           else max(self.single_for / 2, self.SINGLE_FOR))
        self.single_until = now + self.single_for
        self._apply()
    return out


def _cpu_work(values=np.linspace(0.0, 1.0, 8192)):
  """About 50 us of CPU work that holds no GIL (NumPy lets go of it for the loop)."""
  np.sin(values, out=values)


def thread_clock_step(rounds=5, work=None):
  """The step of this thread's CPU clock (``time.thread_time``) in seconds, found by
  reading it between ``rounds`` short stretches of ``work`` until it moves twice; None if
  it did not (a clock coarser than about 0.1 ms, such as gVisor's 10 ms steps). The work
  holds no GIL and no thread is started for it, and the clock is read few times (a read
  is a system call, costly in a sandbox): each would cost the caller's first call, whose
  first product asks (benchmarks/README.md, "Threads started in a first call")."""
  work = work or _cpu_work
  last, moves = time.thread_time(), []
  for _ in range(rounds):
    now = time.thread_time()
    if now != last:
      moves.append(now - last)
      if len(moves) == 2:   # the first move may be a partial step
        return moves[1]
      last = now
    work()
  return None


_blas_lock = threading.Lock()
_host_blas = None


def host_blas() -> HostBlas:
  global _host_blas
  if _host_blas is None:
    with _blas_lock:   # (one object: a narrowing counted on a second would never end)
      if _host_blas is None:
        _host_blas = HostBlas()
  return _host_blas


class Placement:
  """Background threads moved off the CPU of a caller (``keep_away``): ``cpu``, that CPU;
  ``moved``, ``(thread, the CPUs it had)`` pairs; what ``kept_away`` needs to put them back
  and to find the threads they start meanwhile."""
  __slots__ = ("cpu", "moved", "existing")

  def __init__(self, cpu, moved, existing):
    self.cpu, self.moved, self.existing = cpu, moved, existing


def keep_away(caller, worker) -> Placement | None:
  """Run thread ``worker`` (a native id: the compile thread) and the adopted C threads
  only on the CPUs other than the one
  thread ``caller`` last ran on, so that the caller keeps its CPU to itself; undone by
  ``kept_away``. Any thread may call it: the caller's own does, in the call that hands
  the compile thread its work, where on the compile thread each of its dozen system calls
  took the GIL back from the caller's next call in turn. None where nothing moves: no
  other CPU, or no way to tell (not Linux, either thread gone)."""
  try:
    own = os.sched_getaffinity(worker)
    cpu = _last_cpu(caller)
  except (AttributeError, OSError, ValueError, IndexError):
    return None
  if cpu not in own or len(own) < 2:
    return None
  moved = []
  for tid in {worker, *_helpers}:
    try:
      had = os.sched_getaffinity(tid)
    except OSError:   # ended
      _helpers.discard(tid)
      continue
    if had - {cpu} and cpu in had and _set_cpus(tid, had - {cpu}):
      moved.append((tid, had))
  host_blas().narrow()
  return Placement(cpu, moved, _native_threads())


@contextlib.contextmanager
def kept_away(placement: Placement | None):
  """While open, the calling thread's background work is kept where ``placement`` put
  it (``placement``: ``keep_away``'s); at the end each moved thread gets back the CPUs it
  had, and the C threads they started meanwhile get the caller's CPU back and are
  adopted."""
  if placement is None:
    yield
    return
  _courtesy.avoiding = placement.cpu
  try:
    yield
  finally:
    _courtesy.avoiding = None
    put_back(placement)


def put_back(placement: Placement):
  """Undo ``keep_away``'s ``placement`` (see ``kept_away``)."""
  cpu = placement.cpu
  host_blas().restore()
  for tid, had in placement.moved:
    _set_cpus(tid, had)
  # Threads started meanwhile by the moved ones inherited the narrowed CPUs: XLA starts
  # more of its threads at its first compile and run. Widen them back, and move XLA's
  # with the background work from now on.
  for tid in _native_threads() - placement.existing:
    try:
      cpus = os.sched_getaffinity(tid)
    except OSError:   # ended
      continue
    if cpu not in cpus and _set_cpus(tid, cpus | {cpu}):
      _helpers.add(tid)

