"""Waiting for a small XLA computation: polled, or asleep? (Issue 19, eleventh pass.)

    .venv/bin/python benchmarks/probes/xla_wait.py [--processes 6] [--jax-python PY]
    .venv/bin/python benchmarks/probes/xla_wait.py --placement [--processes 6]

W8's hessian (n=100) pinned to the XLA tier, 1000 calls each waited for with
``block_until_ready``, in fresh processes that alternate ``pjrt.POLL_FOR`` = 0 (sleep on
the event at once) and its default (poll first); with ``--jax-python``, JAX's same call in
a third process each time. Prints each process's 10th, 50th and 90th percentile and its
mean, in us.

``--placement`` asks where the time goes instead (twelfth pass), each polled: the
process as it is; the whole process on one CPU (its affinity set before jaxlite loads,
so XLA's client sees one CPU); XLA's threads gathered on the caller's CPU after warm-up;
and gathered with the caller pinned to that CPU as well.
"""
import argparse
import os
import subprocess
import sys

CHILD = r"""
import os, statistics, sys, threading, time
lib, poll, place = sys.argv[1], sys.argv[2], sys.argv[3]
if place == "one-cpu":
  os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
import numpy as np
if lib == "jax":
  import jax, jax.numpy as jnp
  jit = jax.jit
else:
  import functools
  import jaxlite as jax, jaxlite.numpy as jnp
  from jaxlite._src.backends.xla import pjrt
  if poll != "default":
    pjrt.POLL_FOR = float(poll)
  jit = functools.partial(jax.jit, backend="xla")
x = jnp.asarray(np.linspace(-1.0, 1.0, 100, dtype=np.float32))
h = jit(jax.hessian(lambda x: jnp.sum(jnp.tanh(x) ** 3)))
for _ in range(50):
  jax.block_until_ready(h(x))
if place.startswith("gathered"):
  from jaxlite._src.backends import background
  cpu = int(open(f"/proc/self/task/{threading.get_native_id()}/stat").read()
            .rsplit(")", 1)[1].split()[36])
  for tid in background._helpers:   # XLA's threads, adopted when its client started
    os.sched_setaffinity(tid, {cpu})
  if place == "gathered+caller":
    os.sched_setaffinity(0, {cpu})
  for _ in range(50):
    jax.block_until_ready(h(x))
times = []
for _ in range(1000):
  t0 = time.perf_counter()
  jax.block_until_ready(h(x))
  times.append(time.perf_counter() - t0)
q = statistics.quantiles(times, n=10)
print(f"{q[0] * 1e6:.1f} {q[4] * 1e6:.1f} {q[8] * 1e6:.1f} {statistics.mean(times) * 1e6:.1f}")
"""


def run(python, lib, poll, place=""):
  env = dict(os.environ, JAX_PLATFORMS="cpu", OMP_NUM_THREADS="1",
             PYTHONPATH=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
  out = subprocess.run([python, "-c", CHILD, lib, poll, place], capture_output=True, text=True,
                       env=env, timeout=300)
  if out.returncode:
    return "failed: " + out.stderr.strip().splitlines()[-1]
  return "p10 {} p50 {} p90 {} mean {}".format(*out.stdout.split())


def main():
  p = argparse.ArgumentParser(description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument("--processes", type=int, default=6)
  p.add_argument("--jax-python", help="a Python with jax 0.10.2 installed")
  p.add_argument("--placement", action="store_true",
                 help="where XLA's threads and the caller run, instead of how it waits")
  args = p.parse_args()
  if args.placement:
    for i in range(args.processes):
      for place in ("as-is", "one-cpu", "gathered", "gathered+caller"):
        print(f"{i + 1}: {place:16s} {run(sys.executable, 'jaxlite', 'default', place)}",
              flush=True)
    return
  for i in range(args.processes):
    print(f"{i + 1}: jaxlite asleep  {run(sys.executable, 'jaxlite', '0')}", flush=True)
    print(f"{i + 1}: jaxlite polled  {run(sys.executable, 'jaxlite', 'default')}", flush=True)
    if args.jax_python:
      print(f"{i + 1}: jax             {run(args.jax_python, 'jax', '')}", flush=True)


if __name__ == "__main__":
  main()
