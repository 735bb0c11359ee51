"""Probe: what do OpenBLAS's threads cost while a background XLA compile runs?

W5's MLP step, freshly jitted under ``auto``, called for 4 s in a fresh process, with host
BLAS narrowed to one thread while the background work runs (``background.host_blas``,
the default) and without (``--keep-threads``: the narrowing made a no-op). Prints one JSON
line: the background compile's time, the first call, the p99 of the first 200 calls, the
median of the second half of the calls and the tier they ended on.

    for i in 1 2 3; do for flag in "" --keep-threads; do
      .venv/bin/python benchmarks/probes/blas_narrowing.py $flag; done; done
    JAXLITE_TIER=xla .venv/bin/python benchmarks/probes/blas_narrowing.py   # alone
"""
import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workers"))
import numpy as np  # noqa: E402

import _common  # noqa: E402
import jaxlite as jax  # noqa: E402
import jaxlite.numpy as jnp  # noqa: E402
from jaxlite._src.backends import background  # noqa: E402


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--keep-threads", action="store_true")
  parser.add_argument("--seconds", type=float, default=4.0)
  args = parser.parse_args()
  if args.keep_threads:
    blas = background.host_blas()
    blas.narrow = blas.restore = lambda: None
  jax.config.update("jaxlite_persistent_cache", False)
  params, x, y = jax.tree_util.tree_map(jnp.asarray, _common.mlp_data(np))
  step = jax.jit(_common.sgd_step_fn(jax, jnp))
  times, start = [], time.perf_counter()
  while time.perf_counter() - start < args.seconds:
    t0 = time.perf_counter()
    jax.block_until_ready(step(params, x, y))
    times.append(time.perf_counter() - t0)
  stats = step.stats()[0]
  print(json.dumps({
      "narrowed": not args.keep_threads, "compile_xla_ms": stats["compile_ms"].get("xla"),
      "first_ms": times[0] * 1e3, "p99_first200_ms": sorted(times[:200])[-3] * 1e3,
      "late_median_ms": statistics.median(times[len(times) // 2:]) * 1e3,
      "calls": len(times), "tier": stats.get("tier")}))


if __name__ == "__main__":
  main()
