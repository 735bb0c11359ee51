"""Compare jaxlite's NumPy gamma sampler with jax.random.gamma / loggamma bit for bit.

Run with the reference venv:  /work/jaxref/bin/python benchmarks/probes/gamma_bits.py [nseeds]
Prints mismatch counts per (alpha, shape, log_space) group and totals.
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))

import numpy as np
import jax
import jax.numpy as jnp

from jaxlite._src.backends.numpy.gamma_sampler import gamma

ALPHAS = [0.1, 0.5, 0.9, 1.0, 1.5, 2.0, 3.7, 10.0, 100.0]
SHAPES = [(1,), (5,), (7,), (16,), (100,), (1000,)]


def main():
  nseeds = int(sys.argv[1]) if len(sys.argv) > 1 else 30
  total = total_el = 0
  by_shape = {}
  by_alpha = {}
  for log_space in (False, True):
    f = jax.random.loggamma if log_space else jax.random.gamma
    for shape in SHAPES:
      for alpha in ALPHAS:
        a = np.full(shape, alpha, np.float32)
        bad = 0
        ulps = []
        for seed in range(nseeds):
          key = jax.random.PRNGKey(seed)
          ref = np.asarray(f(key, jnp.asarray(a)))
          got = gamma(np.asarray(jax.random.key_data(key)), a, log_space)
          diff = ref.view(np.int32) != got.view(np.int32)
          diff &= ~(np.isnan(ref) & np.isnan(got))
          bad += int(diff.sum())
          if diff.any():
            ulps += list(np.abs(ref.view(np.int32)[diff].astype(np.int64) - got.view(np.int32)[diff]))
        n = nseeds * a.size
        total += bad
        total_el += n
        by_shape[(shape, log_space)] = by_shape.get((shape, log_space), 0) + bad
        by_alpha[(alpha, log_space)] = by_alpha.get((alpha, log_space), 0) + bad
        if bad:
          print(f"log_space={log_space} shape={shape} alpha={alpha}: {bad}/{n} differ, "
                f"ulps {sorted(set(ulps))[:6]}", flush=True)
  print("\nby shape:")
  for (shape, ls), b in by_shape.items():
    print(f"  log_space={ls!s:5} shape={shape!s:8} mismatches={b}")
  print("by alpha:")
  for (alpha, ls), b in by_alpha.items():
    print(f"  log_space={ls!s:5} alpha={alpha:<6} mismatches={b}")
  print(f"\nTOTAL mismatches: {total} / {total_el} elements")
  a = np.full((1000,), 3.7, np.float32)
  kd = np.array([0, 0], np.uint32)
  gamma(kd, a)
  t = time.perf_counter()
  for _ in range(20):
    gamma(kd, a)
  print(f"cost: {(time.perf_counter() - t) / 20 * 1e3:.2f} ms per call, 1000 elements, alpha 3.7")
  a = np.full((1000,), 0.5, np.float32)
  t = time.perf_counter()
  for _ in range(20):
    gamma(kd, a, True)
  print(f"cost: {(time.perf_counter() - t) / 20 * 1e3:.2f} ms per call, 1000 elements, alpha 0.5, log_space")


if __name__ == "__main__":
  main()
