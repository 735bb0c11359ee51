"""Probe: is W5's (or W4's) XLA-tier gap to JAX in jaxlite's program or in the XLA runtime?

Times the W5 MLP step (gradient + SGD update), or with ``--workload heavy`` W4's heavy on
1M f32, or with ``--workload hessian`` W8's hessian, as four executables on the same
inputs:
each lowering (jaxlite's StableHLO, JAX's) compiled by each runtime (the PyPI
``xla-cpu-pjrt`` plugin through jaxlite's PJRT binding, jaxlib's own client), one thread
each as in ``run.py``. If the two lowerings take the same time on one runtime and the
runtimes differ, the gap is the runtime build, not jaxlite.

    .venv/bin/python benchmarks/probes/w5_runtime.py --jax-python /work/jaxref/bin/python
    .venv/bin/python benchmarks/probes/w5_runtime.py --jax-python ... --workload heavy

(run with jaxlite's interpreter; the JAX side runs in a subprocess of ``--jax-python``)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workers"))
from _common import threads_env  # noqa: E402 (standard library only)
os.environ.update(threads_env(1))   # one thread each, as run.py's default rows

import numpy as np  # noqa: E402

from _common import (HEAVY_SIZE, heavy_fn, hessian_input, mlp_data,  # noqa: E402
                     sgd_step_fn)


def median_ms(runs, calls=10, repeat=31):
  """Median ms per blocking call of each of ``runs`` (name -> function), timed in turn
  (``repeat`` rounds of ``calls`` calls each), so that the machine's slow spells fall on
  all of them alike."""
  times = {name: [] for name in runs}
  for round_ in range(repeat + 1):
    for name, run in runs.items():
      t0 = time.perf_counter()
      for _ in range(calls):
        run()
      if round_:   # the first round is a warm-up
        times[name].append((time.perf_counter() - t0) / calls)
  return {name: statistics.median(t) * 1e3 for name, t in times.items()}


def lowered_step(lib, workload):
  """``lib``'s (jaxlite's or JAX's) StableHLO of the jitted workload, its flat inputs and
  its flat outputs' shapes and dtypes."""
  import importlib
  jax = importlib.import_module(lib)
  jnp = importlib.import_module(lib + ".numpy")
  if workload == "hessian":
    fn, args = jax.hessian(lambda x: jnp.sum(jnp.tanh(x) ** 3)), (hessian_input(np),)
  elif workload == "heavy":
    fn, args = heavy_fn(jnp), (np.arange(HEAVY_SIZE, dtype=np.float32),)
  else:
    fn, args = sgd_step_fn(jax, jnp), mlp_data(np)
  jitted = jax.jit(fn, backend="xla") if lib == "jaxlite" else jax.jit(fn)
  outs = jax.tree_util.tree_leaves(jax.eval_shape(fn, *args))
  return (jitted.lower(*args).as_text(), jax.tree_util.tree_leaves(args),
          [(o.shape, o.dtype) for o in outs])


def jax_side(folder, workload):
  """Runs in JAX's venv: both lowerings on jaxlib's client; writes JAX's text."""
  import jax
  from jax.extend import backend
  text, leaves, _ = lowered_step("jax", workload)
  with open(os.path.join(folder, "jax.mlir"), "w") as f:
    f.write(text)
  with open(os.path.join(folder, "jaxlite.mlir")) as f:
    theirs = f.read()
  client = backend.get_backend()
  args = [jax.device_put(a) for a in leaves]
  runs = {}
  for name, module in (("jax", text), ("jaxlite", theirs)):
    exe = client.compile_and_load(module, client.devices()[:1])
    runs[name] = lambda exe=exe: jax.block_until_ready(exe.execute(args))
  print(json.dumps(median_ms(runs)))


def main():
  p = argparse.ArgumentParser(description=__doc__)
  p.add_argument("--jax-python", required=True)
  p.add_argument("--workload", choices=("mlp", "heavy", "hessian"), default="mlp")
  p.add_argument("--jax-side", help=argparse.SUPPRESS)
  opts = p.parse_args()
  if opts.jax_side:
    return jax_side(opts.jax_side, opts.workload)
  from jaxlite._src.backends import xla
  import jaxlite as jax
  text, leaves, out_specs = lowered_step("jaxlite", opts.workload)
  with tempfile.TemporaryDirectory() as folder:
    with open(os.path.join(folder, "jaxlite.mlir"), "w") as f:
      f.write(text)
    out = subprocess.run([opts.jax_python, os.path.abspath(__file__), "--jax-python",
                          opts.jax_python, "--workload", opts.workload, "--jax-side",
                          folder],
                         capture_output=True, text=True, check=True)
    on_jaxlib = json.loads(out.stdout.strip().splitlines()[-1])
    with open(os.path.join(folder, "jax.mlir")) as f:
      jax_text = f.read()
  closed = jax.make_jaxpr(lambda *a: a)(*leaves)   # the flat signature, for the avals
  client = xla.client()
  args = [xla.device_put(a) for a in leaves]
  runs = {}
  for name, module in (("jax", jax_text), ("jaxlite", text)):
    loaded = client.compile(module)
    out_avals = [jax.core.ShapedArray(shape, dtype) for shape, dtype in out_specs]
    exe = xla.XlaExecutable(loaded, module, closed.in_avals, out_avals)

    def run(exe=exe):
      for buf in exe.execute_device(args):
        buf.block_until_ready()
    runs[name] = run
  on_plugin = median_ms(runs)
  title = {"mlp": "W5 step", "heavy": "W4 heavy", "hessian": "W8 hessian"}[opts.workload]
  print(f"{title}, median ms (one thread):")
  print(f"{'lowering':10s} {'xla-cpu-pjrt plugin':>20s} {'jaxlib client':>14s}")
  for name in ("jaxlite", "jax"):
    print(f"{name:10s} {on_plugin[name]:20.3f} {on_jaxlib[name]:14.3f}")


if __name__ == "__main__":
  main()
