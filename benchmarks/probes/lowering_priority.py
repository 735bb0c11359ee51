"""Probe: the compile thread's CPU priority, beside a caller whose tier 0 keeps both cores
busy.

The caller repeats tier 0's W5 MLP step (its matrix products run on OpenBLAS's threads)
while a background thread, marked as the compile thread is (``run_in_background``: one
hand-over of the GIL per equation), lowers the same step to StableHLO, at the callers'
priority or at the lowest (nice 19). Printed per mode: the lowering's wall and CPU time,
and the caller's calls meanwhile (count, median, slowest). Lowering alone and the
caller alone are printed first.

    .venv/bin/python benchmarks/probes/lowering_priority.py
"""
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workers"))

import numpy as np  # noqa: E402

import jaxlite as jax  # noqa: E402
import jaxlite.numpy as jnp  # noqa: E402
from _common import mlp_data, sgd_step_fn  # noqa: E402
from jaxlite._src.backends import background, xla  # noqa: E402

sgd_step = sgd_step_fn(jax, jnp)


def main():
  args = jax.tree_util.tree_map(jnp.asarray, mlp_data(np))
  closed = jax.make_jaxpr(sgd_step)(*args)
  xla.client()
  t0 = time.perf_counter()
  xla.lower(closed, "step")
  print(f"lowering alone: {(time.perf_counter() - t0) * 1e3:.1f} ms "
        f"({len(closed.jaxpr.eqns)} equations)")
  step = jax.jit(sgd_step, backend="numpy")
  alone = []
  for _ in range(20):
    t0 = time.perf_counter()
    jax.block_until_ready(step(*args))
    alone.append(time.perf_counter() - t0)
  print(f"caller alone: median {statistics.median(alone[1:]) * 1e3:.2f} ms, "
        f"slowest {max(alone[1:]) * 1e3:.2f} ms (19 calls)")
  for lowest in (False, True):
    spent = {}

    def lower():
      if lowest:
        background.lower_priority()
      background.run_in_background()
      t0, cpu0 = time.perf_counter(), time.thread_time()
      xla.lower(closed, "step")
      spent["wall"], spent["cpu"] = time.perf_counter() - t0, time.thread_time() - cpu0

    thread = threading.Thread(target=lower)
    thread.start()
    calls = []
    while thread.is_alive():
      t0 = time.perf_counter()
      jax.block_until_ready(step(*args))
      calls.append(time.perf_counter() - t0)
    print(f"{'lowest' if lowest else 'callers'} priority: lowering {spent['wall'] * 1e3:.0f} ms "
          f"wall, {spent['cpu'] * 1e3:.0f} ms CPU; {len(calls)} caller calls meanwhile, "
          f"median {statistics.median(calls) * 1e3:.2f} ms, slowest {max(calls) * 1e3:.2f} ms")


if __name__ == "__main__":
  main()
