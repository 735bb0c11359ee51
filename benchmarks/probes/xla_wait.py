"""Waiting for a small XLA computation: polled, or asleep? (Issue 19, eleventh pass.)

    .venv/bin/python benchmarks/probes/xla_wait.py [--processes 6] [--jax-python PY]

W8's hessian (n=100) pinned to the XLA tier, 1000 calls each waited for with
``block_until_ready``, in fresh processes that alternate ``pjrt.POLL_FOR`` = 0 (sleep on
the event at once) and its default (poll first); with ``--jax-python``, JAX's same call in
a third process each time. Prints each process's 10th, 50th and 90th percentile and its
mean, in us.
"""
import argparse
import os
import subprocess
import sys

CHILD = r"""
import statistics, sys, time
lib, poll = sys.argv[1], sys.argv[2]
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
times = []
for _ in range(1000):
  t0 = time.perf_counter()
  jax.block_until_ready(h(x))
  times.append(time.perf_counter() - t0)
q = statistics.quantiles(times, n=10)
print(f"{q[0] * 1e6:.1f} {q[4] * 1e6:.1f} {q[8] * 1e6:.1f} {statistics.mean(times) * 1e6:.1f}")
"""


def run(python, lib, poll):
  env = dict(os.environ, JAX_PLATFORMS="cpu", OMP_NUM_THREADS="1",
             PYTHONPATH=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
  out = subprocess.run([python, "-c", CHILD, lib, poll], capture_output=True, text=True,
                       env=env, timeout=300)
  if out.returncode:
    return "failed: " + out.stderr.strip().splitlines()[-1]
  return "p10 {} p50 {} p90 {} mean {}".format(*out.stdout.split())


def main():
  p = argparse.ArgumentParser(description=__doc__,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
  p.add_argument("--processes", type=int, default=6)
  p.add_argument("--jax-python", help="a Python with jax 0.10.2 installed")
  args = p.parse_args()
  for i in range(args.processes):
    print(f"{i + 1}: jaxlite asleep  {run(sys.executable, 'jaxlite', '0')}", flush=True)
    print(f"{i + 1}: jaxlite polled  {run(sys.executable, 'jaxlite', 'default')}", flush=True)
    if args.jax_python:
      print(f"{i + 1}: jax             {run(args.jax_python, 'jax', '')}", flush=True)


if __name__ == "__main__":
  main()
