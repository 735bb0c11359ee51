"""Which steps of an `auto` tier race slow which calls? (Issue 19, fourteenth pass.)

    env -u PYTHONDONTWRITEBYTECODE .venv/bin/python benchmarks/probes/race_timeline.py \
        [--skip scan,heavy,mlp] [--watch vmap_grad] [--calls 200] [--queued]

Replays the stalls job (W11) in one process, one thread each: scan, heavy, MLP step,
vmap(grad) and hessian, each freshly jitted under ``auto``, ``--calls`` calls in a row.
For the ``--watch``ed workload it prints the slowest calls, each as
``index@ms-since-first-call: wall/cpu`` in ms, where cpu is the calling thread's CPU
time: a call whose wall time exceeds it was waiting, for the GIL or for a CPU. With
``--queued``, each also shows its wait for a CPU (``/proc/self/task/<id>/schedstat``); but
reading that file between calls hands the GIL to the compile thread there, whose Python
then runs between the calls instead of inside them, as it does in the benchmark: that
mode hides part of the stalls (vmap(grad)'s p99 0.82-0.84 ms with it, 0.92-1.10 without,
three alternating runs each, sixteenth pass). Then the race's steps, timestamped by
wrapping the functions that run them (none of them on a call's own path), with the calls
each overlapped, and the CPU time each step took on its own thread: on the compile thread
that is Python holding the GIL (or a C call it makes there), which the calls beside it
wait for. Needs Linux. Run with cached bytecode, as the benchmark does: without it every
lazily imported module is compiled again.
"""
import argparse
import functools
import math
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workers"))
from _common import (STALL_HEAVY_SIZE, heavy_fn, mlp_data, sgd_step_fn,  # noqa: E402
                     per_example_loss_fn, small_mlp_data, hessian_input, threads_env)

os.environ.update(threads_env(1))
os.environ["JAXLITE_TIER"] = "auto"

import numpy as np  # noqa: E402

import jaxlite as jax  # noqa: E402
import jaxlite.numpy as jnp  # noqa: E402
from jaxlite import lax  # noqa: E402
from jaxlite._src import tiers  # noqa: E402
from jaxlite._src.backends import background, compile_server  # noqa: E402

STEPS = []   # (start, end, name): the race's steps, in this process


def _step(owner, attribute, name):
  original = getattr(owner, attribute)

  @functools.wraps(original)
  def timed(*args, **kwargs):
    t0, c0 = time.perf_counter(), time.thread_time()
    try:
      return original(*args, **kwargs)
    finally:
      STEPS.append((t0, time.perf_counter(), f"{name} [{(time.thread_time() - c0) * 1e3:.3f} "
                                             f"ms CPU on {threading.current_thread().name}]"))
  setattr(owner, attribute, timed)


def _load_steps():
  """Wrap the XLA backend's step, once a race has loaded the backend (importing it here
  would take that cost out of the first race)."""
  global _loaded
  from jaxlite._src.backends import xla
  _step(xla, "deserialize", "deserialize (C, then the set-up in Python)")
  _step(xla.pjrt.Client, "deserialize", "  the C call")
  _step(xla.pjrt.LoadedExecutable, "set_signature", "  the set-up's structs")
  _loaded = True


_loaded = False


_step(tiers, "start_race", "start_race (the call that earned the race)")
_step(compile_server.Server, "send", "send the request")
_step(compile_server.Server, "reply", "wait for and read the server's answer")
_step(tiers.RemoteXla, "load", "load the winner (client, deserialize, warm-up)")
_step(tiers.Race, "warm_up", "warm-up runs")
_step(background, "put_back", "the background threads' CPUs given back")
_step(tiers.Race, "_install", "the winner installed")


def record(name, fn, calls, watch, with_queued):
  """Call ``fn`` ``calls`` times; print its p99 (the benchmark's: the third slowest of
  200), median and total, and for ``watch`` the slowest calls and the race's steps."""
  wall, cpu, queued, start = [], [], [], []
  stat = open(f"/proc/self/task/{threading.get_native_id()}/schedstat")

  def waited():   # (reading the file hands over the GIL: only with --queued)
    stat.seek(0)
    return int(stat.read().split()[1]) * 1e-9 if with_queued else 0.0
  del STEPS[:]
  for _ in range(calls):
    q0 = waited()
    c0 = time.thread_time()
    t0 = time.perf_counter()
    fn()
    wall.append(time.perf_counter() - t0)
    cpu.append(time.thread_time() - c0)
    start.append(t0)
    queued.append(waited() - q0)
  ranked = sorted(wall)
  p99 = ranked[math.ceil(0.99 * calls) - 1]   # as the benchmark's W11 takes it
  print(f"{name:10s} p99 {p99 * 1e3:.3f} ms, median {ranked[calls // 2] * 1e3:.3f} ms, "
        f"total {sum(wall) * 1e3:.1f} ms")
  if not watch:
    return
  slowest = sorted(range(calls), key=lambda i: -wall[i])[:6]
  print("  slowest calls:", "  ".join(
      f"{i}@{(start[i] - start[0]) * 1e3:.1f}: {wall[i] * 1e3:.2f}/{cpu[i] * 1e3:.2f}"
      + (f"/{queued[i] * 1e3:.2f}" if with_queued else "") for i in slowest))
  time.sleep(0.5)   # the race's last steps
  for t0, t1, step in sorted(STEPS):
    inside = [i for i in range(calls) if start[i] <= t1 and start[i] + wall[i] >= t0]
    span = f"calls {inside[0]}-{inside[-1]}" if inside else "after the calls"
    print(f"  {(t0 - start[0]) * 1e3:8.2f} .. {(t1 - start[0]) * 1e3:8.2f} ms  {span:16s} "
          f"{step}")


def main():
  p = argparse.ArgumentParser(description=__doc__)
  p.add_argument("--skip", default="", help="workloads to leave out, comma-separated")
  p.add_argument("--watch", default="vmap_grad")
  p.add_argument("--calls", type=int, default=200)
  p.add_argument("--queued", action="store_true",
                 help="show each slow call's wait for a CPU (hides part of the stalls)")
  opts = p.parse_args()
  skip = set(filter(None, opts.skip.split(",")))
  block = jax.block_until_ready
  block(jax.jit(lambda v: v + 1)(jnp.ones(7, jnp.float32)))   # the first jit's costs
  work = {}
  x = jnp.ones((1024,), dtype=jnp.float32)
  scan = jax.jit(lambda y: lax.scan(lambda c, _: (jnp.sin(c) + 0.01 * c, None), y, xs=None,
                                    length=2000)[0])
  work["scan"] = lambda: block(scan(x))
  xh = block(jnp.arange(STALL_HEAVY_SIZE, dtype=jnp.float32))
  heavy = jax.jit(heavy_fn(jnp))
  work["heavy"] = lambda: block(heavy(xh))
  params, xm, ym = jax.tree_util.tree_map(jnp.asarray, mlp_data(np))
  step = jax.jit(sgd_step_fn(jax, jnp))
  work["mlp"] = lambda: block(step(params, xm, ym))
  small, xs, ys = jax.tree_util.tree_map(jnp.asarray, small_mlp_data(np))
  per_example = jax.jit(jax.vmap(jax.grad(per_example_loss_fn(jnp)), in_axes=(None, 0, 0)))
  work["vmap_grad"] = lambda: block(per_example(small, xs, ys))
  xq = jnp.asarray(hessian_input(np))
  hessian = jax.jit(jax.hessian(lambda v: jnp.sum(jnp.tanh(v) ** 3)))
  work["hessian"] = lambda: block(hessian(xq))
  for name, fn in work.items():
    if name in skip:
      continue
    record(name, fn, opts.calls, name == opts.watch, opts.queued)
    if "jaxlite._src.backends.xla" in sys.modules and not _loaded:
      _load_steps()


if __name__ == "__main__":
  main()
