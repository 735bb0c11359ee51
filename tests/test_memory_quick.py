"""Memory, quick version (the long ones are in tests/stress/test_memory.py): 1,000 distinct
signatures then ``jax.clear_caches()`` leave the process near its starting RSS, and a
second identical round adds almost nothing (no per-signature leak); big arrays are freed
when collected."""
import gc
import os
import tracemalloc

import numpy as np

import jaxlite as jax
import jaxlite.numpy as jnp


def rss_mib():
  """Resident set size from /proc/self/statm, in MiB."""
  with open("/proc/self/statm") as f:
    return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def signature_round(f, n, offset=0):
  for i in range(n):
    f(np.ones(i + 1 + offset, np.float32), np.float32(2.0))


def check_signatures_return_memory(n, bound_mib, leak_mib):
  f = jax.jit(lambda x, y: jnp.tanh(x * y).sum() + x.mean(), backend="numpy")
  signature_round(f, 100, offset=10**5)    # warm the allocator and the import-time caches
  jax.clear_caches()
  gc.collect()
  start = rss_mib()
  signature_round(f, n)
  assert f._cache_size() == n
  jax.clear_caches()
  gc.collect()
  after_first = rss_mib()
  assert f._cache_size() == 0
  signature_round(f, n)
  jax.clear_caches()
  gc.collect()
  after_second = rss_mib()
  assert after_first - start < bound_mib, (start, after_first)
  assert after_second - after_first < leak_mib, (after_first, after_second)
  return start, after_first, after_second


def test_thousand_signatures_then_clear_caches_return_memory():
  check_signatures_return_memory(1000, bound_mib=32, leak_mib=8)


def test_arrays_are_freed_when_collected():
  # counted by tracemalloc (NumPy reports its buffers to it), not by RSS: after earlier
  # tests glibc may serve these 4 MiB buffers from heap memory that is already resident,
  # so RSS need not grow even though the arrays are alive
  tracemalloc.start()
  try:
    gc.collect()
    start = tracemalloc.get_traced_memory()[0] / 2**20
    for _ in range(3):
      arrays = [jnp.ones((1024, 1024)) * i for i in range(64)]      # 256 MiB
      assert tracemalloc.get_traced_memory()[0] / 2**20 - start > 128
      del arrays
      gc.collect()
      assert tracemalloc.get_traced_memory()[0] / 2**20 - start < 48
  finally:
    tracemalloc.stop()
