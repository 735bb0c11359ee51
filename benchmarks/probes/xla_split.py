"""Does XLA's split of a program into parallel tasks pay? (Issue 19, thirteenth pass.)

    .venv/bin/python benchmarks/probes/xla_split.py [--processes 3] [--workloads w8,w7,...]

For each workload pinned to the XLA tier, one fresh process compiles it while restricted
to one CPU (so XLA's pools have one thread and it splits nothing) into one private
persistent cache, another compiles it normally into a second cache; then a normal
process runs each cached executable. Prints the median / mean call in us, per process.
Workloads: w2, w8 (hessian), w7 (vmap(grad)), w5 (MLP step), w4s (W11's heavy, 100k),
w4 (W4's heavy, 1M). Since 7a87295 a normal process compiles small programs unsplit
itself, so on that code the two columns agree below ``xla.UNSPLIT_BELOW``.
"""
import argparse
import os
import subprocess
import sys
import tempfile

WORKERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workers")
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CHILD = r'''
import os, statistics, sys, time, functools
wl, place = sys.argv[1], sys.argv[2]
if place == "one-cpu":
  os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
sys.path.insert(0, WORKERS)
import numpy as np
import jaxlite as jax, jaxlite.numpy as jnp
from _common import *
jit = functools.partial(jax.jit, backend="xla")
if wl == "w8":
  x = jnp.asarray(np.linspace(-1.0, 1.0, 100, dtype=np.float32))
  h = jit(jax.hessian(lambda x: jnp.sum(jnp.tanh(x) ** 3))); call = lambda: h(x); n = 1000
elif wl == "w5":
  params, xm, ym = jax.tree_util.tree_map(jnp.asarray, mlp_data(np))
  step = jit(sgd_step_fn(jax, jnp)); call = lambda: step(params, xm, ym); n = 100
elif wl == "w7":
  per_example_loss = per_example_loss_fn(jnp)
  params, xs, ys = jax.tree_util.tree_map(jnp.asarray, small_mlp_data(np))
  f = jit(jax.vmap(jax.grad(per_example_loss), in_axes=(None, 0, 0))); call = lambda: f(params, xs, ys); n = 500
elif wl in ("w4", "w4s"):
  x = jnp.arange(HEAVY_SIZE if wl == "w4" else STALL_HEAVY_SIZE, dtype=jnp.float32)
  f = jit(heavy_fn(jnp)); call = lambda: f(x); n = 20 if wl == "w4" else 200
elif wl == "w2":
  x = jnp.ones(4, jnp.float32); f = jit(lambda x: x ** 2 + 1); call = lambda: f(x); n = 2000
for _ in range(20): jax.block_until_ready(call())
if place == "compile-only":
  raise SystemExit(0)
times = []
for _ in range(n):
  t0 = time.perf_counter(); jax.block_until_ready(call()); times.append(time.perf_counter() - t0)
print(f"{statistics.median(times)*1e6:.1f}/{statistics.mean(times)*1e6:.1f}")
'''
def run(wl, place, cache):
  env = dict(os.environ, JAXLITE_CACHE_DIR=cache, PYTHONPATH=ROOT)
  out = subprocess.run([sys.executable, "-c", CHILD.replace("WORKERS", repr(WORKERS)), wl,
                        place], capture_output=True, text=True, env=env, timeout=600)
  return out.stdout.strip() or "failed: " + out.stderr.strip()[-300:]


def main():
  p = argparse.ArgumentParser(description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument("--processes", type=int, default=3)
  p.add_argument("--workloads", default="w2,w8,w7,w5,w4s,w4")
  args = p.parse_args()
  for wl in args.workloads.split(","):
    rows = {"one CPU": [], "normal": []}
    for _ in range(args.processes):
      ds, dn = tempfile.mkdtemp(), tempfile.mkdtemp()
      run(wl, "one-cpu", ds)
      run(wl, "compile-only", dn)
      rows["one CPU"].append(run(wl, "as-is", ds))
      rows["normal"].append(run(wl, "as-is", dn))
    for k, v in rows.items():
      print(f"{wl} compiled {k:8s}", "  ".join(v), flush=True)


if __name__ == "__main__":
  main()
