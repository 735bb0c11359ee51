"""Probe: eager linear algebra and random sampling, jaxlite against JAX.

    python benchmarks/probes/random_linalg_speed.py jaxlite      (PYTHONPATH=. from the root)
    /work/jaxref/bin/python benchmarks/probes/random_linalg_speed.py jax

Prints the median wall time of each eager call (7 repeats after a warm-up). Run the two
systems one after the other in the same time window and compare the medians as ratios."""
import importlib
import os
import statistics
import sys
import time

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")
lib = sys.argv[1]
jax = importlib.import_module(lib)
jnp = importlib.import_module(lib + ".numpy")
random = importlib.import_module(lib + ".random")


def median_ms(fn, repeat=7):
  jax.block_until_ready(fn())
  times = []
  for _ in range(repeat):
    t0 = time.perf_counter()
    jax.block_until_ready(fn())
    times.append(time.perf_counter() - t0)
  return statistics.median(times) * 1e3


rng = np.random.default_rng(0)
small = rng.random((1000, 4, 4)).astype(np.float32)
small = small @ small.transpose(0, 2, 1) + np.eye(4, dtype=np.float32)
large = rng.random((200, 200)).astype(np.float32)
large = large @ large.T + np.eye(200, dtype=np.float32)
key = random.PRNGKey(0)
cases = {}
for name in ("cholesky", "eigh", "svd"):
  fn = getattr(jnp.linalg, name)
  cases[f"{name} 1000x4x4"] = lambda fn=fn: fn(small)
  cases[f"{name} 200x200"] = lambda fn=fn: fn(large)
cases["normal 1e6"] = lambda: random.normal(key, (1_000_000,))
cases["gumbel 1e6"] = lambda: random.gumbel(key, (1_000_000,))
cases["gamma 1e5"] = lambda: random.gamma(key, 2.0, (100_000,))
for n, draws in ((16, 100), (100, 10_000)):
  mean, cov = jnp.zeros(n), jnp.eye(n) * 2 + 0.1
  cases[f"multivariate_normal {draws}x{n}"] = (
      lambda mean=mean, cov=cov, draws=draws: random.multivariate_normal(key, mean, cov,
                                                                         (draws,)))
for label, fn in cases.items():
  print(f"{lib:8s} {label:28s} {median_ms(fn):9.2f} ms")
