"""Probe: does tier 0 slow down once the XLA client exists?

Times tier 0's blocked ``heavy`` (W11's size, 100k f32, one thread) in one process,
before and after the XLA client is created, as ``auto`` creates it for its first compile.
When each block allocated its intermediates, how fast tier 0 ran depended on the heap's
state: glibc grew and trimmed the heap for them on every call (``strace -e brk`` showed
5 ``brk`` calls per call) in some processes, always once the client existed, and in a
plain NumPy loop over such blocks only after it. Tier 0's blocks now write into
per-thread scratch buffers; run this at an older commit (``PYTHONPATH=<its checkout>``)
to compare.

    .venv/bin/python benchmarks/probes/tier0_heap.py
"""
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workers"))
from _common import threads_env  # noqa: E402 (standard library only)
os.environ.update(threads_env(1))   # one thread each, as run.py's default rows

import jaxlite as jax  # noqa: E402
import jaxlite.numpy as jnp  # noqa: E402
from _common import heavy_fn  # noqa: E402
from jaxlite._src import tiers  # noqa: E402


heavy = heavy_fn(jnp)


def median_ms(f, x, calls=100):
  times = []
  for _ in range(calls):
    t0 = time.perf_counter()
    f(x).block_until_ready()
    times.append(time.perf_counter() - t0)
  return statistics.median(times) * 1e3


def main():
  x = jnp.arange(100_000, dtype=jnp.float32).block_until_ready()
  f = jax.jit(heavy, backend="numpy")
  f(x)
  before = median_ms(f, x)
  tiers.xla_available()   # creates the XLA client
  after = median_ms(f, x)
  print(f"tier 0 heavy, 100k f32, median ms: before the XLA client {before:.3f}, "
        f"after {after:.3f} ({after / before:.2f}x)")


if __name__ == "__main__":
  main()
