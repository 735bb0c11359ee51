"""How the size of the caller's XLA pools sets W5's and W8's steady times (issue 19,
seventeenth pass).

    env -u PYTHONDONTWRITEBYTECODE .venv/bin/python benchmarks/probes/xla_pools.py \
        --tier auto --job w5|w7w8 [--pool-per-cpu-from SECONDS] [--place none|pool-off]

Settles one workload in this process as `run.py`'s worker does (calls with 1 ms sleeps
until the tier is chosen), then times 7 rounds of calls (50 for W5's MLP step, 200 for
W8's hessian; ``w7w8`` first settles W7's vmap(grad) in the same process, as the
benchmark's transforms job does) and prints the median, then each thread of this process
with the CPU time it used in the rounds (``/proc``'s schedstat) and its CPUs.

- ``--tier xla`` makes the client on the main thread: a pool thread per CPU.
- ``--tier auto`` lets the race make it on the compile thread. ``--pool-per-cpu-from``
  overrides ``xla.POOL_PER_CPU_FROM``: 0 gives every winner a pool thread per CPU, ``inf``
  none (the compile thread's CPUs then size the pools: one on a 2-CPU machine).
- ``--place pool-off`` pins the main thread to the first CPU and the PJRT client's own
  pool threads (the unnamed ones XLA starts with the client) to the others, after
  settling. This is an experiment: the library cannot pin a user's thread.

Needs Linux.
"""
import argparse
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workers"))
from _common import (hessian_input, mlp_data, per_example_loss_fn,  # noqa: E402
                     sgd_step_fn, small_mlp_data, threads_env)


def _threads() -> dict:
  """native id -> (name, CPU microseconds so far, CPUs) of this process's threads."""
  out = {}
  for tid in map(int, os.listdir("/proc/self/task")):
    try:
      with open(f"/proc/self/task/{tid}/comm") as f:
        name = f.read().strip()
      with open(f"/proc/self/task/{tid}/schedstat") as f:
        ns = int(f.read().split()[0])
      out[tid] = (name, ns // 1000, os.sched_getaffinity(tid))
    except OSError:   # ended
      continue
  return out


def _settle(tiers, fn, jitted):
  deadline = time.perf_counter() + 30
  fn()
  while not tiers.settled(jitted) and time.perf_counter() < deadline:
    fn()
    time.sleep(0.001)


def main():
  p = argparse.ArgumentParser(description=__doc__)
  p.add_argument("--tier", choices=("auto", "xla"), default="auto")
  p.add_argument("--job", choices=("w5", "w7w8"), default="w5")
  p.add_argument("--pool-per-cpu-from", type=float, default=None)
  p.add_argument("--place", choices=("none", "pool-off"), default="none")
  opts = p.parse_args()
  os.environ.update(threads_env(1))
  os.environ["JAXLITE_TIER"] = opts.tier
  import numpy as np
  import jaxlite as jax
  import jaxlite.numpy as jnp
  from jaxlite._src import tiers
  from jaxlite._src.backends import xla
  if opts.pool_per_cpu_from is not None:
    xla.POOL_PER_CPU_FROM = opts.pool_per_cpu_from
  block = jax.block_until_ready
  block(jax.jit(lambda v: v + 1)(jnp.ones(7, jnp.float32)))   # the first jit's costs
  if opts.job == "w5":
    params, x, y = jax.tree_util.tree_map(jnp.asarray, mlp_data(np))
    f = jax.jit(sgd_step_fn(jax, jnp))
    fn, calls = (lambda: block(f(params, x, y))), 50
  else:
    small, xs, ys = jax.tree_util.tree_map(jnp.asarray, small_mlp_data(np))
    g = jax.jit(jax.vmap(jax.grad(per_example_loss_fn(jnp)), in_axes=(None, 0, 0)))
    _settle(tiers, lambda: block(g(small, xs, ys)), g)
    xq = jnp.asarray(hessian_input(np))
    f = jax.jit(jax.hessian(lambda v: jnp.sum(jnp.tanh(v) ** 3)))
    fn, calls = (lambda: block(f(xq))), 200
  _settle(tiers, fn, f)
  for _ in range(20):
    fn()
  if opts.place == "pool-off":
    cpus = sorted(os.sched_getaffinity(0))
    python_threads = {t.native_id for t in threading.enumerate()}
    os.sched_setaffinity(0, {cpus[0]})
    for tid, (name, _, _) in _threads().items():
      if tid not in python_threads and name == "python":   # the PJRT client's pool
        os.sched_setaffinity(tid, set(cpus[1:]) or {cpus[0]})
  before = _threads()
  rounds = []
  for _ in range(7):
    t0 = time.perf_counter()
    for _ in range(calls):
      fn()
    rounds.append((time.perf_counter() - t0) / calls)
  after = _threads()
  entry, = f._cache.values()
  print(f"{opts.tier} {opts.job}: median {statistics.median(rounds) * 1e3:.4f} ms a call "
        f"on {entry.tier}; pool threads per CPU from {xla.POOL_PER_CPU_FROM} s; "
        f"the client's pools: {xla._pool_size}")
  for tid, (name, used, cpus) in after.items():
    print(f"  {tid} {name:16s} {used - before.get(tid, (0, 0))[1]:8d} us  CPUs {sorted(cpus)}")


if __name__ == "__main__":
  main()
