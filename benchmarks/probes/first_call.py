"""Probe: W5's step as a process's first jitted call, timed in pieces, for source trees
and tier policies by turns.

Each run is a fresh process (the first call pays the process's one-time costs, as
``run.py``'s mlp job does) that jits W5's step from the tree given and calls it once, then
once more. It reports, in ms on the main thread: the first call, its trace, tier 0's
code generation, the probe's preparation of a race (``tiers.Probe.prepare``, under
``auto``), the process's CPU time over the call, and the second call. Variants:

  numpy           the step pinned to tier 0 (``backend="numpy"``)
  auto            the default policy
  auto-noprep     ``auto`` without the race's preparation in the first call
  auto-nolong     ``auto`` without the thread that watches long first calls
  auto-noprobe    ``auto`` serving tier 0 without a probe

    python benchmarks/probes/first_call.py --trees . /path/to/other/checkout \
        --variants numpy auto --seconds 300 [--cpus 2,3]

Trees and variants alternate in a shuffled order per round until ``--seconds`` pass;
the medians are printed per tree and variant (benchmarks/README.md, "The first call's
diet"). ``--one TREE VARIANT`` runs one process's measurement (what each round starts).
"""
import argparse
import collections
import json
import os
import random
import statistics
import subprocess
import sys
import time

PIECES = ("total", "trace", "compile", "prep", "cpu", "second")


def measure(tree, variant):
  """One process's measurement of the first call (run by ``--one``)."""
  os.environ.setdefault("JAX_PLATFORMS", "cpu")
  sys.path[:0] = [tree, os.path.join(tree, "benchmarks", "workers")]
  import numpy as np
  import jaxlite as jax
  import jaxlite.numpy as jnp
  from jaxlite._src import tiers
  from _common import mlp_data, sgd_step_fn
  pieces = {}
  prepare = tiers.Probe.prepare

  def timed_prepare(probe):
    t0 = time.perf_counter()
    try:
      return prepare(probe)
    finally:
      pieces["prep"] = pieces.get("prep", 0.0) + (time.perf_counter() - t0) * 1e3
  tiers.Probe.prepare = timed_prepare
  if variant == "auto-noprep":
    tiers.Probe.EARLY_CALLS = 0
  elif variant == "auto-nolong":
    watcher = tiers._long_calls
    watcher.start = watcher.watch = watcher.unwatch = lambda *args: None
  elif variant == "auto-noprobe":
    class Bare:
      def prepare(self, entry, name):
        entry.tier = "numpy"
        return entry.compile_numpy(name)
    tiers.POLICIES["auto"] = Bare()
  params, x, y = jax.tree_util.tree_map(jnp.asarray, mlp_data(np))
  step = jax.jit(sgd_step_fn(jax, jnp), **({"backend": "numpy"} if variant == "numpy" else {}))
  time.sleep(0.05)
  cpu0, t0 = os.times(), time.perf_counter()
  jax.block_until_ready(step(params, x, y))
  total, cpu1 = (time.perf_counter() - t0) * 1e3, os.times()
  entry = next(iter(step._cache.values()))
  t0 = time.perf_counter()
  jax.block_until_ready(step(params, x, y))
  pieces.update(total=total, trace=entry.trace_ms, compile=entry.compile_ms.get("numpy"),
                cpu=(cpu1.user + cpu1.system - cpu0.user - cpu0.system) * 1e3,
                second=(time.perf_counter() - t0) * 1e3)
  print(json.dumps(pieces))


def main():
  p = argparse.ArgumentParser()
  p.add_argument("--trees", nargs="+", default=["."])
  p.add_argument("--variants", nargs="+", default=["numpy", "auto"],
                 choices=["numpy", "auto", "auto-noprep", "auto-nolong", "auto-noprobe"])
  p.add_argument("--seconds", type=float, default=120.0)
  p.add_argument("--cpus", default=None, help="taskset CPU list for each process")
  p.add_argument("--one", nargs=2, metavar=("TREE", "VARIANT"))
  args = p.parse_args()
  if args.one:
    return measure(os.path.abspath(args.one[0]), args.one[1])
  runs = [(os.path.abspath(t), v) for t in args.trees for v in args.variants]
  prefix = ["taskset", "-c", args.cpus] if args.cpus else []
  results = collections.defaultdict(list)
  end = time.monotonic() + args.seconds
  while time.monotonic() < end:
    for tree, variant in random.sample(runs, len(runs)):
      out = subprocess.run([*prefix, sys.executable, __file__, "--one", tree, variant],
                           capture_output=True, text=True)
      if out.returncode == 0:
        results[tree, variant].append(json.loads(out.stdout.strip().splitlines()[-1]))
      else:
        print(out.stderr[-2000:], file=sys.stderr)
  print("tree variant runs " + " ".join(PIECES) + "  (medians, ms)")
  for (tree, variant), rows in sorted(results.items()):
    values = [[r[k] for r in rows if r.get(k) is not None] for k in PIECES]
    medians = [statistics.median(v) if v else float("nan") for v in values]
    print(f"{tree} {variant} {len(rows)} " + " ".join(f"{m:.2f}" for m in medians))


if __name__ == "__main__":
  main()
