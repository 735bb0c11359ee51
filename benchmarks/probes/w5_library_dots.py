"""Probe: does W5's XLA gap come from the library XLA runs its dots with?

JAX 0.10.2's jaxlib compiles W5's step (the MLP's gradient and SGD update) with its
dot products and reductions as YNNPACK fusions (``"kind":"__ynn_fusion"`` in the
optimized HLO); the ``xla-cpu-pjrt`` plugin that jaxlite drives compiles them as XLA's
own ``dot`` instructions. This probe counts both in each system's optimized HLO and
times the step, each way in a fresh process per round, alternating:

  jax                 jaxlib, its default flags
  jax, no YNN         jaxlib with ``--xla_cpu_experimental_ynn_fusion_type=`` (none)
  jaxlite             the plugin (jaxlite's XLA tier), its default flags
  jaxlite, YNN dots   the plugin with ``--xla_cpu_experimental_ynn_fusion_type=
                      individual_dot``: its XLA has no YNNPACK fusion of dots, but its
                      dot instructions then call YNNPACK one at a time (``dot,reduce``
                      fuses the two reductions and leaves the dots to XLA)

    .venv/bin/python benchmarks/probes/w5_library_dots.py --jax-python /work/jaxref/bin/python \
        [--rounds 3]

One thread each, as in ``run.py``; jaxlite compiles in-process (no compile server), its
persistent cache off, so that the flags reach its compile.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

WORKERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workers")
sys.path.insert(0, WORKERS)
from _common import threads_env  # noqa: E402 (standard library only)

ASK_YNN = "--xla_cpu_experimental_ynn_fusion_type=individual_dot"
NO_YNN = "--xla_cpu_experimental_ynn_fusion_type="
SYSTEMS = {"jax": ("jax", ""), "jax, no YNN": ("jax", NO_YNN),
           "jaxlite": ("jaxlite", ""), "jaxlite, YNN dots": ("jaxlite", ASK_YNN)}


def side(lib, dump):
  """Runs in a fresh process of ``lib``: compile and time W5's step; print the optimized
  HLO's YNN fusions and XLA's own dots, then the median ms of a call."""
  import importlib
  import numpy as np
  from _common import mlp_data, sgd_step_fn
  jax = importlib.import_module(lib)
  jnp = importlib.import_module(lib + ".numpy")
  params, x, y = jax.tree_util.tree_map(jnp.asarray, mlp_data(np))   # on the device
  step = jax.jit(sgd_step_fn(jax, jnp), **({"backend": "xla"} if lib == "jaxlite" else {}))
  jax.block_until_ready(step(params, x, y))
  start = time.perf_counter()
  while time.perf_counter() - start < 0.1:   # warm, as run.py's steady rows
    jax.block_until_ready(step(params, x, y))
  times = []
  for _ in range(21):
    t0 = time.perf_counter()
    for _ in range(10):
      jax.block_until_ready(step(params, x, y))
    times.append((time.perf_counter() - t0) / 10)
  (optimized,) = [os.path.join(dump, name) for name in os.listdir(dump)
                  if "sgd_step" in name and name.endswith("after_optimizations.txt")]
  with open(optimized) as f:
    text = f.read()
  print(text.count('"kind":"__ynn_fusion"'), len(plain_dots(text)),
        statistics.median(times) * 1e3)


def plain_dots(text):
  """The ``dot`` instructions of an optimized HLO module that XLA emits itself: those
  outside the computations that library (YNNPACK, XNNPACK, oneDNN) fusions call."""
  library = set(re.findall(
      r'calls=(%[\w.-]+)[^\n]*"kind":"__(?:ynn|xnn|onednn)_fusion"', text))
  dots, computation = [], None
  for line in text.splitlines():
    if line.endswith("{") and not line.startswith(" "):   # a computation's header
      computation = line.split()[1] if line.startswith("ENTRY") else line.split()[0]
    elif " dot(" in line and computation not in library:
      dots.append(line)
  return dots


def run(python, lib, flags):
  """One fresh process of ``lib`` with ``flags``: (YNN fusions, XLA's own dots, ms)."""
  with tempfile.TemporaryDirectory() as dump:
    one_thread = threads_env(1)   # (its XLA_FLAGS too: one Eigen thread, as run.py)
    flags = " ".join([one_thread.pop("XLA_FLAGS", ""), f"--xla_dump_to={dump}",
                      "--xla_dump_hlo_as_text", flags])
    env = dict(os.environ, **one_thread, JAX_PLATFORMS="cpu", JAXLITE_COMPILE_SERVER="0",
               JAXLITE_PERSISTENT_CACHE="0", XLA_FLAGS=flags.strip())
    out = subprocess.run([python, os.path.abspath(__file__), "--side", lib, dump], env=env,
                         capture_output=True, text=True, check=True, cwd=WORKERS)
  ynn, dots, ms = out.stdout.split()[-3:]
  return int(ynn), int(dots), float(ms)


def main():
  p = argparse.ArgumentParser(description=__doc__)
  p.add_argument("--jax-python", help="the Python of a JAX 0.10.2 environment")
  p.add_argument("--rounds", type=int, default=3)
  p.add_argument("--side", nargs=2, help=argparse.SUPPRESS)
  opts = p.parse_args()
  if opts.side:
    return side(*opts.side)
  if not opts.jax_python:
    p.error("--jax-python is required")
  pythons = {"jax": opts.jax_python, "jaxlite": sys.executable}
  results = {name: [] for name in SYSTEMS}
  for _ in range(opts.rounds):
    for name, (lib, flags) in SYSTEMS.items():
      results[name].append(run(pythons[lib], lib, flags))
  print(f"W5 step, {opts.rounds} fresh processes each (one thread):")
  print(f"{'system':20s} {'YNN fusions':>11s} {'own dots':>8s}  ms per call (median; each)")
  for name, rows in results.items():
    ms = [r[2] for r in rows]
    print(f"{name:20s} {rows[0][0]:11d} {rows[0][1]:8d}  {statistics.median(ms):.3f}; "
          + ", ".join(f"{m:.2f}" for m in ms))


if __name__ == "__main__":
  main()
