"""Probe: does keeping XLA's threads off the caller's core remove heavy's stall?

The caller times 200 calls of tier 0's ``heavy`` (W11's size, 100k f32) while a second
thread repeats the XLA tier's ``heavy``, as the tier race's trials do. Modes:

  none    no second thread (the reference)
  free    the second thread runs; the kernel places every thread
  pinned  the caller on CPU 0; every other thread (the second one, XLA's pools) on CPU 1

Everything runs with one thread, as in ``run.py``'s default rows: tier 0's blocks on the
caller alone (a second tier-0 thread pinned to CPU 1 would share it with XLA, as it did in
this probe's first version, whose "pinned" rows came out as slow as the "free" ones).
Three runs each (2026-12-02, seventh pass), p99: none 4.1-4.4 ms, free 10.4-12.6,
pinned 4.0-5.6.

    for m in none free pinned; do .venv/bin/python benchmarks/probes/stall_affinity.py $m; done

Linux only (``os.sched_setaffinity`` per thread), two CPUs at least.
"""
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workers"))
from _common import threads_env  # noqa: E402 (standard library only)
os.environ.update(threads_env(1))   # one thread each, as run.py's default rows

import jaxlite as jax  # noqa: E402
import jaxlite.numpy as jnp  # noqa: E402
from _common import heavy_fn  # noqa: E402


def run(mode, calls=200):
  heavy = heavy_fn(jnp)
  x = jnp.arange(100_000, dtype=jnp.float32).block_until_ready()
  tier0, on_xla = jax.jit(heavy, backend="numpy"), jax.jit(heavy, backend="xla")
  tier0(x).block_until_ready()
  on_xla(x).block_until_ready()
  stop = threading.Event()

  def background():
    while not stop.is_set():
      on_xla(x).block_until_ready()

  other = threading.Thread(target=background, daemon=True)
  if mode != "none":
    other.start()
  if mode == "pinned":
    main = threading.get_native_id()
    os.sched_setaffinity(main, {0})
    for tid in map(int, os.listdir("/proc/self/task")):
      if tid != main:
        os.sched_setaffinity(tid, {1})
  time.sleep(0.05)
  times = []
  for _ in range(calls):
    t0 = time.perf_counter()
    tier0(x).block_until_ready()
    times.append(time.perf_counter() - t0)
  stop.set()
  times.sort()
  p99 = times[int(len(times) * 0.99) - 1]
  print(f"{mode}: median {statistics.median(times) * 1e3:.2f} ms, p99 {p99 * 1e3:.2f} ms")


if __name__ == "__main__":
  run(sys.argv[1])   # one mode per process: pinning lasts
