"""A data-parallel training step on 1, 2 and 4 CPU devices: jaxlite against JAX 0.10.2.

    python benchmarks/spmd_data_parallel.py [--jax-python /work/jaxref/bin/python]
                                            [--steps 30] [--out benchmarks/results]

The step: an MLP 64-256-256-10 with SGD on a batch of 512 synthetic examples, split over
n devices, run two ways: ``pmap`` (gradients averaged with ``lax.pmean``) and ``jit``
with ``NamedSharding`` (batch split, parameters replicated; XLA's SPMD partitioner).
Parameters stay on the devices between steps. Each (system, n) runs in a fresh process
(the device count is fixed per process); the figure is the median step time. On a
2-core machine more devices do not mean more speed: the point is the overhead of
jaxlite's dispatch relative to JAX's with the same device count.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
COUNTS = (1, 2, 4)


def worker(n: int, steps: int, jaxlite: bool):
  import numpy as np
  if jaxlite:
    sys.path.insert(0, str(ROOT))
    import jaxlite as jax
    jax.config.update("jax_num_cpu_devices", n)
    jax.config.update("jaxlite_tier", "xla")
  else:
    import jax
    jax.config.update("jax_num_cpu_devices", n)
  jnp, lax = jax.numpy, jax.lax
  from_sharding = __import__(("jaxlite" if jaxlite else "jax") + ".sharding",
                             fromlist=["NamedSharding"])
  NamedSharding, P = from_sharding.NamedSharding, from_sharding.PartitionSpec

  rng = np.random.RandomState(0)
  sizes = [64, 256, 256, 10]
  params = [(rng.randn(m, k).astype(np.float32) * np.sqrt(2 / m), np.zeros(k, np.float32))
            for m, k in zip(sizes[:-1], sizes[1:])]
  x = rng.randn(512, 64).astype(np.float32)
  y = rng.randint(0, 10, 512).astype(np.int32)

  def loss(p, x, y):
    for W, b in p[:-1]:
      x = jnp.tanh(x @ W + b)
    W, b = p[-1]
    logp = jax.nn.log_softmax(x @ W + b)
    return -jnp.mean(jnp.sum(logp * jax.nn.one_hot(y, 10), axis=-1))

  def sgd(p, g):
    return jax.tree.map(lambda a, b: a - 0.01 * b, p, g)

  def pstep(p, x, y):
    value, g = jax.value_and_grad(loss)(p, x, y)
    g, value = lax.pmean((g, value), "d")
    return sgd(p, g), value

  def jstep(p, x, y):
    value, g = jax.value_and_grad(loss)(p, x, y)
    return sgd(p, g), value

  results = {}
  par = jax.pmap(pstep, "d", in_axes=(None, 0, 0), out_axes=(None, 0))
  xs, ys = x.reshape(n, -1, 64), y.reshape(n, -1)
  mesh = jax.make_mesh((n,), ("d",), **({} if jaxlite else {
      "axis_types": (jax.sharding.AxisType.Auto,)}))
  data, rep = NamedSharding(mesh, P("d")), NamedSharding(mesh, P())
  sh = jax.jit(jstep, in_shardings=(rep, data, data), out_shardings=(rep, rep))
  xd, yd = jax.device_put(x, data), jax.device_put(y, data)
  pd = jax.device_put(params, rep)
  for name, fn, args in (("pmap", par, (params, xs, ys)), ("sharded_jit", sh, (pd, xd, yd))):
    p = args[0]
    for _ in range(3):   # compile and warm up
      p, v = fn(p, *args[1:])
    jax.block_until_ready(p)
    times = []
    for _ in range(steps):
      t0 = time.perf_counter()
      p, v = fn(p, *args[1:])
      jax.block_until_ready((p, v))
      times.append(time.perf_counter() - t0)
    results[name] = statistics.median(times) * 1e3
  print(json.dumps(results))


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--jax-python", default="/work/jaxref/bin/python")
  parser.add_argument("--steps", type=int, default=30)
  parser.add_argument("--out", default=str(HERE / "results"))
  parser.add_argument("--worker", nargs=2, metavar=("SYSTEM", "N"), help=argparse.SUPPRESS)
  args = parser.parse_args()
  if args.worker:
    return worker(int(args.worker[1]), args.steps, args.worker[0] == "jaxlite")
  rows = []
  for n in COUNTS:
    row = {"devices": n}
    for system, python in (("jaxlite", sys.executable), ("jax", args.jax_python)):
      env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", JAX_PLATFORMS="cpu")
      env.pop("XLA_FLAGS", None)
      out = subprocess.run([python, __file__, "--worker", system, str(n), "--steps",
                            str(args.steps)], env=env, capture_output=True, text=True,
                           check=True).stdout
      row[system] = json.loads(out.strip().splitlines()[-1])
    rows.append(row)
    print(json.dumps(row), flush=True)
  lines = ["| devices | pmap jaxlite ms | pmap JAX ms | ratio | sharded jit jaxlite ms | "
           "sharded jit JAX ms | ratio |", "|---|---|---|---|---|---|---|"]
  for r in rows:
    a, b = r["jaxlite"], r["jax"]
    lines.append(f"| {r['devices']} | {a['pmap']:.2f} | {b['pmap']:.2f} | "
                 f"{a['pmap'] / b['pmap']:.2f} | {a['sharded_jit']:.2f} | "
                 f"{b['sharded_jit']:.2f} | {a['sharded_jit'] / b['sharded_jit']:.2f} |")
  table = "\n".join(lines)
  print(table)
  out = Path(args.out)
  out.mkdir(parents=True, exist_ok=True)
  (out / "spmd_data_parallel.md").write_text(
      "# Data-parallel step (MLP 64-256-256-10, batch 512, SGD), median ms per step\n\n"
      "Written by benchmarks/spmd_data_parallel.py; ratio = jaxlite / JAX 0.10.2 with the "
      "same device count (CPU devices of one 2-core machine).\n\n" + table + "\n")


if __name__ == "__main__":
  main()
