"""Tier 0's W5 MLP step on a loaded machine: OpenBLAS's threads against one thread.

    PYTHONPATH=<tree> python benchmarks/probes/blas_starvation.py [--threads N] [--load]

Runs the W5 step (784-512-512-10, batch 128, grad + SGD) pinned to tier 0 for 4 seconds
and prints the median step of seconds 1 to 4 (W12's window), the p90 and the share of the
products ``background.HostBlas.product`` ran on one thread. ``--threads 1`` sets
OpenBLAS to one thread first (the floor); ``--load`` starts a busy process per CPU but one
beside it (a loaded machine). Compare trees (``main`` against an older commit) in one
session, alternating, since the machine's load moves.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite._src.backends import background

p = argparse.ArgumentParser()
p.add_argument("--threads", type=int)
p.add_argument("--load", action="store_true")
p.add_argument("--seconds", type=float, default=4.0)
args = p.parse_args()
busy = []
if args.load:
  for _ in range(max(1, len(os.sched_getaffinity(0)) - 1)):
    busy.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
try:
  blas = background.host_blas()
  if args.threads and blas.set:
    blas.set(args.threads)
    blas.full = blas.current = blas.had = args.threads   # (had: an older tree's name)
  rng = np.random.default_rng(0)
  sizes = [784, 512, 512, 10]
  params = [(jnp.asarray(rng.standard_normal((m, n), np.float32) / m ** 0.5), jnp.zeros(n))
            for m, n in zip(sizes[:-1], sizes[1:])]
  x = jnp.asarray(rng.standard_normal((128, 784), np.float32))
  y = jnp.asarray(rng.integers(0, 10, 128))

  def loss(p, x, y):
    for w, b in p[:-1]:
      x = jnp.tanh(x @ w + b)
    w, b = p[-1]
    return -jnp.mean(jax.nn.log_softmax(x @ w + b)[jnp.arange(128), y])

  def sgd(p, x, y):
    g = jax.grad(loss)(p, x, y)
    return [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(p, g)]
  step = jax.jit(sgd, backend="numpy")
  single = [0, 0]   # products on one thread by the watch, products watched

  def counted(fn, *a, size):
    single[1] += 1
    single[0] += bool(blas.single_until) or bool(blas.narrowed)
    return product(fn, *a, size=size)
  product = getattr(blas, "product", None)
  if product is not None:   # (a tree without the watch runs every product unwatched)
    blas.product = counted
  times, first = [], time.perf_counter()
  while time.perf_counter() - first < args.seconds:
    t0 = time.perf_counter()
    jax.block_until_ready(step(params, x, y))
    if t0 - first >= 1.0:
      times.append(time.perf_counter() - t0)
  times.sort()
  print(f"threads {blas.get() if blas.get else '?'}: median {statistics.median(times) * 1e3:.2f} ms, p90 "
        f"{times[int(0.9 * len(times))] * 1e3:.2f} ms, {len(times)} steps, "
        f"{single[0]}/{single[1]} products on one thread")
finally:
  for b in busy:
    b.kill()
