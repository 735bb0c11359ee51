"""Probe: how long should the compile thread keep the GIL between hand-overs?

The caller repeats tier 0's call of a workload (one thread) while another thread, marked as
the compile thread is (``background.run_in_background``), lowers the same program once,
handing the GIL over once per ``background.TURN`` seconds of lowering (0: after every
equation). For each turn, medians over 30 lowerings of:

  lost    the caller's calls beside the lowering, less as many calls alone (ms)
  worst   the slowest of those calls (ms)
  hit     how many of them took more than 1.5x a call alone
  took    the lowering's wall time (ms)

Each hand-over costs the caller a wake-up on top of the Python it waits for, so short
turns lose more in all, spread over more calls; long turns lose little more than the
lowering's own CPU time, in one or two calls.

    .venv/bin/python benchmarks/probes/lowering_turn.py [heavy|vmap]
"""
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workers"))
from _common import threads_env  # noqa: E402 (standard library only)
os.environ.update(threads_env(1))   # one thread each, as run.py's default rows

import numpy as np  # noqa: E402

import jaxlite as jax  # noqa: E402
import jaxlite.numpy as jnp  # noqa: E402
from _common import heavy_fn, per_example_loss_fn, small_mlp_data  # noqa: E402
from jaxlite._src.backends import background, xla  # noqa: E402

TURNS = (0.0, 3e-4, 1e-3, 2e-3)


def workload(name):
  if name == "heavy":
    return heavy_fn(jnp), (jnp.arange(100_000, dtype=jnp.float32),)
  params, xs, ys = jax.tree_util.tree_map(jnp.asarray, small_mlp_data(np))
  return jax.vmap(jax.grad(per_example_loss_fn(jnp)), in_axes=(None, 0, 0)), (params, xs, ys)


def main(name):
  fn, args = workload(name)
  tier0 = jax.jit(fn, backend="numpy")
  closed = jax.make_jaxpr(fn)(*args)
  xla.lower(closed, "f")

  def call():
    t0 = time.perf_counter()
    jax.block_until_ready(tier0(*args))
    return time.perf_counter() - t0
  for _ in range(50):
    call()
  alone = statistics.median(call() for _ in range(300))
  print(f"{name}: tier 0 alone {alone * 1e3:.3f} ms per call")
  print("  turn ms | lost ms | worst ms | hit | took ms")
  for turn in TURNS:
    rows = []
    for _ in range(30):
      done, took = threading.Event(), []

      def lower_once():
        background.TURN = turn
        background.run_in_background()
        t0 = time.perf_counter()
        xla.lower(closed, "f")
        took.append(time.perf_counter() - t0)
        done.set()
      thread = threading.Thread(target=lower_once)
      thread.start()
      calls = [call()]   # at least the one the lowering starts beside
      while not done.is_set():
        calls.append(call())
      thread.join()
      rows.append((sum(calls) - len(calls) * alone, max(calls),
                   sum(c > 1.5 * alone for c in calls), took[0]))
    lost, worst, hit, wall = (statistics.median(column) for column in zip(*rows))
    print(f"  {turn * 1e3:7.1f} | {lost * 1e3:7.2f} | {worst * 1e3:8.2f} | {hit:3.1f} | "
          f"{wall * 1e3:7.2f}")


if __name__ == "__main__":
  main(sys.argv[1] if len(sys.argv) > 1 else "heavy")
