"""Tier 0's products watch OpenBLAS's threads (``background.HostBlas.product``): threaded
products whose calling thread was kept off its CPU for most of their time, two in a row,
move products to one thread for a while. The watch is driven here by a fake clock; the products it runs are
checked against NumPy's on both thread counts."""
import math
import types

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite._src.backends import background


class FakeBlas(background.HostBlas):
  """A HostBlas over a fake OpenBLAS (thread count only) and a fake clock."""

  def __init__(self, threads=2):
    self.calls = []
    self.get, self.set = (lambda: self.current), self.calls.append
    self.narrowed, self.full, self.current = 0, threads, threads
    self.single_until, self.single_for, self.threaded_since = 0.0, self.SINGLE_FOR, 0.0
    self.starved = 0
    self.judged_from = 1e-6   # a thread clock that steps in 0.1 us, as most do
    self.found, self.unwatched = True, 0   # (the watch started)

  def find(self):   # (the fake OpenBLAS is found)
    self.found = True


@pytest.fixture
def clock(monkeypatch):
  now = types.SimpleNamespace(wall=100.0, cpu=0.0)
  monkeypatch.setattr(background, "time", types.SimpleNamespace(
      perf_counter=lambda: now.wall, thread_time=lambda: now.cpu, sleep=lambda s: None))
  return now


def _product(clock, wall, cpu):
  """A product that takes ``wall`` seconds, ``cpu`` of them on the calling thread's CPU."""
  def fn():
    clock.wall += wall
    clock.cpu += cpu
    return "out"
  return fn


def test_starved_threaded_products_move_products_to_one_thread_for_a_while(clock):
  blas = FakeBlas()
  big = blas.THREADED_FROM
  starved = lambda: blas.product(_product(clock, 0.010, 0.002), size=big)
  healthy = lambda: blas.product(_product(clock, 0.010, 0.009), size=big)
  assert healthy() == "out" and blas.calls == [] and blas.current == 2
  starved()   # one alone is a hiccup: nothing changes
  healthy()
  starved()
  assert blas.calls == [] and not blas.single_until
  starved()   # two in a row: one thread from now
  assert blas.calls == [1] and blas.current == 1
  first = blas.single_for
  assert blas.single_until == pytest.approx(clock.wall + first)
  starved()   # on one thread: not judged
  assert blas.calls == [1]
  clock.wall = blas.single_until   # the period is over: threads again, starved at once
  starved()
  starved()
  assert blas.calls == [1, 2, 1] and blas.single_for == 2 * first
  clock.wall = blas.single_until   # threads again, healthy for longer than the period
  healthy()
  clock.wall += 10 * blas.single_for
  starved()   # then starved: the period halves
  starved()
  assert blas.calls == [1, 2, 1, 2, 1] and blas.single_for == first


def test_the_first_threaded_products_are_not_watched(clock, monkeypatch):
  """Finding OpenBLAS and measuring the thread clock wait for the process's first
  ``WATCH_AFTER`` threaded products: they cost the first call 0.3-0.5 ms in a sandbox."""
  blas = FakeBlas()
  blas.found, blas.unwatched, blas.judged_from = False, 3, math.inf
  measured = []
  monkeypatch.setattr(blas, "measure_thread_clock",
                      lambda: (measured.append(blas.found), setattr(blas, "judged_from", 1e-6)))
  starved = lambda: blas.product(_product(clock, 0.010, 0.001), size=blas.THREADED_FROM)
  starved()
  starved()   # two starved in a row, but not watched yet
  assert measured == [] and blas.calls == [] and blas.unwatched == 1
  starved()   # the third starts the watch, which judges it
  assert measured == [True] and blas.unwatched == 0
  starved()
  assert blas.calls == [1] and blas.single_until


def test_small_products_and_narrowed_blas_are_not_watched(clock):
  blas = FakeBlas()
  blas.product(_product(clock, 0.010, 0.001), size=blas.THREADED_FROM - 1)   # never threaded
  assert blas.calls == [] and not blas.single_until
  blas.narrow()   # background work: one thread already, not judged
  blas.product(_product(clock, 0.010, 0.001), size=blas.THREADED_FROM)
  blas.product(_product(clock, 0.010, 0.001), size=blas.THREADED_FROM)
  blas.restore()
  assert blas.calls == [1, 2] and not blas.single_until
  for _ in range(3):   # too short to judge
    blas.product(_product(clock, 0.0005, 0.0), size=blas.THREADED_FROM)
  assert not blas.single_until
  one = FakeBlas(threads=1)   # OpenBLAS on one thread: nothing to watch
  for _ in range(3):
    one.product(_product(clock, 0.010, 0.001), size=one.THREADED_FROM)
  assert one.calls == [] and not one.single_until


@pytest.mark.parametrize("single", [False, True])
def test_tier0_products_agree_with_numpy_on_either_thread_count(single):
  blas = background.host_blas()
  if single:   # the watch's one-thread period, as after a starved product
    _set_single(blas, float("inf"))
  try:
    _check_products(blas)
  finally:
    if single:
      _set_single(blas, 0.0)


def _set_single(blas, until):
  with background._blas_lock:
    blas.single_until = until
    blas._apply()


def _check_products(blas):
  rng = np.random.default_rng(0)
  a = rng.standard_normal((96, 300)).astype(np.float32)
  b = rng.standard_normal((300, 128)).astype(np.float32)
  batched = rng.standard_normal((3, 64, 200)).astype(np.float32)
  c = rng.standard_normal((3, 200, 80)).astype(np.float32)
  assert a.shape[0] * b.shape[1] * a.shape[1] >= blas.THREADED_FROM
  for f in (jnp.dot, jax.jit(jnp.dot, backend="numpy")):
    np.testing.assert_allclose(np.asarray(f(a, b)), a.astype(np.float64) @ b,
                               rtol=2e-5, atol=2e-4)
  np.testing.assert_allclose(np.asarray(jnp.matmul(batched, c)),
                             batched.astype(np.float64) @ c, rtol=2e-5, atol=2e-4)


def test_a_coarse_thread_clock_turns_the_watch_off(monkeypatch):
  """gVisor's thread clock steps in 10 ms: a 1 ms product reads 0 CPU most times and
  looked starved, so products all ran on one thread on an idle sandbox (1.6x slower
  each). A clock that does not step twice over the measure's short stretches of work
  judges nothing; a fine one is measured (``test_starved_threaded_products_...``)."""
  now = types.SimpleNamespace(wall=100.0, cpu=0.0)

  def work():   # a stretch of 50 us, on the CPU
    now.wall += 50e-6
    now.cpu += 50e-6
  fine = lambda: now.cpu   # noqa: E731 (a clock in nanoseconds, as most are)
  monkeypatch.setattr(background, "time", types.SimpleNamespace(thread_time=fine))
  assert background.thread_clock_step(work=work) == pytest.approx(50e-6)
  monkeypatch.setattr(background, "time", types.SimpleNamespace(
      perf_counter=lambda: now.wall, thread_time=lambda: (now.cpu // 0.010) * 0.010))
  before = now.cpu
  assert background.thread_clock_step(work=work) is None
  assert now.cpu - before < 0.5e-3   # the measure's cost on a coarse clock: 5 stretches
  monkeypatch.setattr(background, "_cpu_work", work)
  blas = FakeBlas()

  def product(wall, cpu):
    def fn():
      now.wall += wall
      now.cpu += cpu
    blas.product(fn, size=blas.THREADED_FROM)
  blas.judged_from = math.inf   # not measured yet: nothing is judged
  for _ in range(3):
    product(0.010, 0.001)
  blas.measure_thread_clock()
  assert blas.judged_from == math.inf
  for _ in range(5):   # 1 ms products of an idle machine: their 0 CPU readings mean nothing
    product(0.001, 0.001)
  assert blas.calls == [] and not blas.single_until


def test_a_clock_that_never_moves_judges_nothing(monkeypatch):
  monkeypatch.setattr(background, "time", types.SimpleNamespace(thread_time=lambda: 0.0))
  assert background.thread_clock_step(work=lambda: None) is None
  monkeypatch.setattr(background, "_cpu_work", lambda: None)
  blas = FakeBlas()
  blas.measure_thread_clock()
  assert blas.judged_from == math.inf
