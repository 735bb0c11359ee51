"""Threads: jitted functions called from 4 threads at once (first calls racing to trace and
compile one signature: one trace, every result right), the auto policy's background XLA
compile racing with calls and with ``jax.clear_caches()``, eager ops, and grad / vmap from
several threads (the current trace is per thread)."""
import threading
import time

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite._src import tiers

THREADS = 4
needs_xla = pytest.mark.skipif(not tiers.xla_available(), reason="no XLA plugin installed")
BACKENDS = ["numpy", pytest.param("xla", marks=needs_xla), "auto"]


def run_threads(target, n=THREADS, timeout=120):
  """Run ``target(i)`` on ``n`` threads released together; re-raise the first error."""
  barrier = threading.Barrier(n)
  errors, results = [], [None] * n

  def body(i):
    try:
      barrier.wait()
      results[i] = target(i)
    except BaseException as e:  # reported to the test below
      errors.append(e)
  threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
  for t in threads:
    t.start()
  for t in threads:
    t.join(timeout)
  assert not any(t.is_alive() for t in threads), "a thread hung"
  if errors:
    raise errors[0]
  return results


@pytest.mark.parametrize("backend", BACKENDS)
def test_first_calls_racing_on_one_signature_trace_once(backend):
  traces = []

  def f(x, w):
    traces.append(1)       # a Python side effect: runs once per trace
    return jnp.tanh(x @ w).sum(axis=0) + 1.0
  jitted = jax.jit(f, backend=None if backend == "auto" else backend)
  x = np.random.default_rng(0).standard_normal((16, 8)).astype(np.float32)
  w = np.random.default_rng(1).standard_normal((8, 4)).astype(np.float32)
  expected = np.tanh(x @ w).sum(axis=0) + 1.0
  outs = run_threads(lambda i: [np.asarray(jitted(x, w)) for _ in range(25)])
  assert len(traces) == 1
  for out in outs:
    for o in out:
      np.testing.assert_allclose(o, expected, rtol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_many_signatures_from_many_threads_trace_once_each(backend):
  traces = []
  jitted = jax.jit(lambda x: (traces.append(x.shape), x * 2 + 1)[1],
                   backend=None if backend == "auto" else backend)
  sizes = list(range(1, 13))

  def work(i):
    for _ in range(3):
      for n in sizes[i % 3:] + sizes[:i % 3]:
        x = np.arange(n, dtype=np.float32) + i
        np.testing.assert_array_equal(jitted(x), x * 2 + 1)
  run_threads(work)
  assert sorted(traces) == [(n,) for n in sizes]


@needs_xla
def test_background_compiles_race_with_calls_and_clear_caches(monkeypatch):
  monkeypatch.setattr(tiers.Probe, "BUDGET", 0.0)     # every signature earns an XLA compile
  fns = [jax.jit(lambda x, k=k: jnp.sin(x) * k + jnp.cos(x)) for k in range(3)]
  stop = time.time() + 4
  clears = []

  def clearer():
    while time.time() < stop:
      jax.clear_caches()
      clears.append(1)
      time.sleep(0.005)
  t = threading.Thread(target=clearer)
  t.start()
  calls = []

  def caller(i):
    rng = np.random.default_rng(i)
    while time.time() < stop:
      k = int(rng.integers(3))
      x = rng.standard_normal(int(rng.choice([8, 16, 32]))).astype(np.float32)
      np.testing.assert_allclose(fns[k](x), np.sin(x) * k + np.cos(x), rtol=1e-5, atol=1e-6)
      calls.append(1)
  try:
    run_threads(caller)
  finally:
    t.join()
  assert len(calls) > 100 and len(clears) > 10
  # the compile thread survived it all: a new signature still reaches XLA and races
  f = jax.jit(lambda x: jnp.exp(x) - 1)
  x = np.linspace(0, 1, 300, dtype=np.float32)
  deadline = time.time() + 60
  np.testing.assert_allclose(f(x), np.expm1(x), rtol=1e-5, atol=1e-6)
  while not f.stats()[0]["tier_ms"] and time.time() < deadline:
    np.testing.assert_allclose(f(x), np.expm1(x), rtol=1e-5, atol=1e-6)
    time.sleep(0.01)
  assert set(f.stats()[0]["tier_ms"]) == {"numpy", "xla"}


def test_eager_ops_from_several_threads():
  def work(i):
    rng = np.random.default_rng(i)
    for _ in range(200):
      a = rng.standard_normal((5, 3)).astype(np.float32)
      b = rng.standard_normal((3,)).astype(np.float32)
      out = jnp.tanh(jnp.asarray(a) @ b) + jnp.max(a, axis=1) * i
      np.testing.assert_allclose(out, np.tanh(a @ b) + a.max(axis=1) * i, rtol=1e-5, atol=1e-6)
      np.testing.assert_array_equal(jnp.sort(b), np.sort(b))
      assert jnp.zeros(3).at[i % 3].set(1.0)[i % 3] == 1.0
  run_threads(work)


def test_grad_and_vmap_from_several_threads_keep_their_own_trace():
  def work(i):
    k = float(i + 1)
    results = []
    for j in range(50):
      x = jnp.float32(0.1 * j)
      results.append(float(jax.grad(lambda x: jnp.sin(k * x) * x)(x)))
      v = jax.vmap(lambda r: jnp.dot(r, r) * k)(jnp.arange(6.0).reshape(3, 2))
      np.testing.assert_allclose(v, np.array([1.0, 13.0, 41.0]) * k, rtol=1e-6)
      h = jax.grad(jax.grad(lambda x: x ** 3 * k))(x)     # nested: the trace is per thread
      np.testing.assert_allclose(h, 6 * k * 0.1 * j, rtol=1e-5, atol=1e-6)
      jg = jax.jit(jax.grad(lambda x: jnp.sum(jnp.tanh(x) * k)), backend="numpy")(jnp.ones(3))
      np.testing.assert_allclose(jg, k * (1 - np.tanh(1.0) ** 2) * np.ones(3), rtol=1e-5)
    xs = 0.1 * np.arange(50)
    np.testing.assert_allclose(results, k * xs * np.cos(k * xs) + np.sin(k * xs),
                               rtol=1e-4, atol=1e-5)
  run_threads(work)


def test_a_jitted_function_traced_inside_grad_in_one_thread_while_others_call_it():
  traces = []
  f = jax.jit(lambda x: (traces.append(1), jnp.sin(x) * 2)[1])

  def work(i):
    for _ in range(30):
      if i % 2:
        np.testing.assert_allclose(jax.grad(lambda x: jnp.sum(f(x)))(jnp.ones(4)),
                                   2 * np.cos(1.0) * np.ones(4), rtol=1e-6)
      else:
        np.testing.assert_allclose(f(jnp.ones(4)), 2 * np.sin(1.0) * np.ones(4), rtol=1e-6)
  run_threads(work)
  assert len(traces) <= 2   # once for the signature (the grad trace may stage it once more)
