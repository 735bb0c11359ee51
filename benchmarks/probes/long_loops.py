"""Tier 0's long calls and long loops under ``auto``: seconds per call, and the wait at exit.

    PYTHONPATH=<tree> python benchmarks/probes/long_loops.py [--steps 200000]

Rows: a jitted function whose first call runs a long loop on tier 0 (its first three
calls); the same loops called eagerly (``while_loop``, and ``fori_loop`` with static
bounds, which is a scan); and how long the process takes to exit after its last call,
measured by a child process.
"""
import argparse
import subprocess
import sys
import time

CHILD = """
import time, jaxlite as jax, jaxlite.numpy as jnp
f = jax.jit(lambda x: jax.lax.fori_loop(0, {steps}, lambda i, c: c * 0.999999 + 1e-6, x))
x = jnp.float32(1.0)
for i in range(3):
  t = time.perf_counter(); f(x).block_until_ready()
  print(f"jit call {{i + 1}}: {{time.perf_counter() - t:.3f}} s", flush=True)
print(time.time(), flush=True)
"""


def eager_loops(steps):
  import jaxlite as jax
  import jaxlite.numpy as jnp

  def body(c):
    i, x = c
    return i + 1, x * 0.999 + jnp.sin(x) * 1e-3
  t = time.perf_counter()
  jax.lax.while_loop(lambda c: c[0] < steps, body, (0, jnp.ones(100)))[1].block_until_ready()
  print(f"eager while_loop: {time.perf_counter() - t:.3f} s")
  t = time.perf_counter()
  jax.lax.fori_loop(0, steps, lambda i, x: x * 0.999 + jnp.sin(x) * 1e-3,
                    jnp.ones(100)).block_until_ready()
  print(f"eager fori_loop: {time.perf_counter() - t:.3f} s")


def main():
  parser = argparse.ArgumentParser(description=__doc__)
  parser.add_argument("--steps", type=int, default=200_000)
  args = parser.parse_args()
  child = subprocess.run([sys.executable, "-c", CHILD.format(steps=args.steps)],
                         capture_output=True, text=True, check=True)
  *lines, last_call_done = child.stdout.strip().splitlines()
  exited = time.time()
  print("\n".join(lines))
  print(f"exit after the last call: {exited - float(last_call_done):.3f} s")
  eager_loops(args.steps)


if __name__ == "__main__":
  main()
