"""Waiting for an XLA computation: a caller's thread asks whether it is done for up to
``pjrt.POLL_FOR`` seconds before it sleeps on its event (a sleeping thread's wake-up made
W8's hessian on the XLA tier 4-6x slower here); background threads of a process with
callers, and processes with one CPU, never poll."""
import threading
import time

import numpy as np
import pytest

from jaxlite._src import tiers

if not tiers.xla_available():
  pytest.skip("no XLA plugin", allow_module_level=True)

import jaxlite as jax  # noqa: E402
import jaxlite.numpy as jnp  # noqa: E402
from jaxlite import lax  # noqa: E402
from jaxlite._src.backends import background, xla  # noqa: E402
from jaxlite._src.backends.xla import pjrt  # noqa: E402


class FakeApi:
  """Answers ``Event_IsReady`` with not ready ``busy`` times, then ready; with an error
  (a ``PJRT_Error*``) on the ``error_at``-th question."""

  def __init__(self, busy, error_at=None):
    self.busy, self.error_at = busy, error_at
    self.asked, self.errors = 0, []

  def Event_IsReady(self, ref):
    self.asked += 1
    if self.asked == self.error_at:
      return 0xE
    ref._obj.is_ready = self.asked > self.busy
    return None

  def error(self, err):
    self.errors.append(err)


@pytest.fixture
def polling(monkeypatch):
  """Polling on, as on a machine with CPUs to spare; returns a setter for POLL_FOR."""
  monkeypatch.setattr(pjrt, "_MANY_CPUS", True)
  return lambda seconds: monkeypatch.setattr(pjrt, "POLL_FOR", seconds)


def test_poll_stops_at_ready(polling):
  polling(10.0)
  api = FakeApi(busy=5)
  pjrt._poll(api, 1)
  assert api.asked == 6 and not api.errors


def test_poll_for_zero_asks_once(polling):
  polling(0.0)
  api = FakeApi(busy=10**12)
  pjrt._poll(api, 1)
  assert api.asked == 1


def test_poll_gives_up_after_poll_for(polling):
  polling(2e-3)
  api = FakeApi(busy=10**12)
  t0 = time.perf_counter()
  pjrt._poll(api, 1)
  assert 2e-3 <= time.perf_counter() - t0 < 5.0 and api.asked > 1


def test_poll_stops_at_an_error_and_frees_it(polling):
  polling(10.0)
  api = FakeApi(busy=10**12, error_at=3)
  pjrt._poll(api, 1)
  assert api.asked == 3 and api.errors == [0xE]


def test_background_threads_sleep_unless_the_process_serves_alone(polling, monkeypatch):
  polling(10.0)
  asked = {}

  def on_background_thread(name):
    def run():
      background.run_in_background()
      api = FakeApi(busy=2)
      pjrt._poll(api, 1)
      asked[name] = api.asked
    t = threading.Thread(target=run)
    t.start()
    t.join()

  on_background_thread("callers here")
  monkeypatch.setattr(background, "_alone", True)   # as background.serve_alone() sets it
  on_background_thread("compile server")
  assert asked == {"callers here": 0, "compile server": 3}


def test_one_cpu_never_polls(monkeypatch):
  monkeypatch.setattr(pjrt, "_MANY_CPUS", False)
  monkeypatch.setattr(pjrt, "POLL_FOR", 10.0)
  api = FakeApi(busy=2)
  pjrt._poll(api, 1)
  assert api.asked == 0


def _slow_program(x):
  """A few ms of work on XLA's threads: longer than a short poll, so that waits may both
  poll to the end and give up and sleep."""
  return lax.fori_loop(0, 200, lambda i, a: jnp.tanh(a @ a.T / 64.0 + i * 1e-3), x)


def _expected(x):
  a = x.astype(np.float64)
  for i in range(200):
    a = np.tanh(a @ a.T / 64.0 + i * 1e-3)
  return a


@pytest.mark.parametrize("poll_for", [0.0, 20e-6, 10.0])
def test_results_with_and_without_polling(polling, monkeypatch, poll_for):
  """The same programs, waited for asleep (0), polled then asleep, and polled to the end:
  the asynchronous dispatch (jit) and the synchronous one (NumPy arguments) agree with
  NumPy."""
  polling(poll_for)
  api = xla.client().api
  asked = [0]
  ask = api.Event_IsReady
  caller = threading.get_ident()

  def counting(ref):
    # only this thread's questions: other tests' background threads share the API
    asked[0] += threading.get_ident() == caller
    return ask(ref)
  monkeypatch.setattr(api, "Event_IsReady", counting)
  x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
  expected = _expected(x)
  f = jax.jit(_slow_program, backend="xla")
  np.testing.assert_allclose(np.asarray(f(x)), expected, rtol=1e-4, atol=1e-5)
  exe = xla.compile(jax.make_jaxpr(_slow_program)(x), "slow")
  for _ in range(3):
    (out,) = exe(x)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)
  # Each of the four waits asks at least once: both wait paths poll. (How often depends on
  # whether XLA ran the program on another thread and on what else asks; the fake API's
  # tests above pin down the loop's stops, POLL_FOR 0 included.)
  assert asked[0] >= 4
