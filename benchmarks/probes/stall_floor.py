"""Probe: what does any work at all on the other CPU cost W11's calls on this machine?

W11 (the stalls job) compares the p99 of the first 200 calls under ``auto`` with tier 0's.
Under ``auto`` a race's background work (lowering, XLA's compile, the trials) runs beside
those calls. This probe runs the same job, in the same fresh worker processes as
``run.py``, three ways per round:

  tier 0          ``--backend numpy``, the worker pinned to CPU 0, nothing else running
  tier 0 + spin   the same, while another process spins (``while True: pass``, a few KB
                  of memory, no system calls) pinned to CPU 1
  auto            ``--backend auto`` as the stalls job runs it (unpinned)

The spinning process shares nothing with the worker (no GIL, no memory, no allocator),
so the second row's ratio to the first is the least that any background work on the
other CPU costs the calls beside it: the floor for a race run off the caller's path.

    .venv/bin/python benchmarks/probes/stall_floor.py [--rounds 5]

Linux only (``os.sched_setaffinity``), two CPUs at least.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from run import JOBS, METRICS, run_job, worker_env  # noqa: E402

ROWS = ("tier 0", "tier 0 + spin", "auto")


def stalls(backend, env, cpus=None, spin=False):
  """One fresh run of the stalls job: {metric: ms}."""
  every = os.sched_getaffinity(0)
  spinner = None
  if spin:
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    os.sched_setaffinity(spinner.pid, {1})
  try:
    if cpus:
      os.sched_setaffinity(0, cpus)  # the worker inherits it
    records, _ = run_job(f"jaxlite-{backend}", "stalls", sys.executable, False, 300, env)
  finally:
    os.sched_setaffinity(0, every)
    if spinner:
      spinner.kill()
      spinner.wait()
  return {m: records[m].get("value", float("nan")) * 1e3 for m in JOBS["stalls"]}


def main():
  p = argparse.ArgumentParser(description=__doc__)
  p.add_argument("--rounds", type=int, default=5)
  a = p.parse_args()
  if len(os.sched_getaffinity(0)) < 2:
    raise SystemExit("stall_floor needs two CPUs")
  env = worker_env(1, tempfile.mkdtemp())
  runs = {r: [] for r in ROWS}
  for i in range(a.rounds):
    runs["tier 0"].append(stalls("numpy", env, cpus={0}))
    runs["tier 0 + spin"].append(stalls("numpy", env, cpus={0}, spin=True))
    runs["auto"].append(stalls("auto", env))
    print(f"round {i + 1}: " + "; ".join(
        f"{r} " + " ".join(f"{runs[r][-1][m]:.3g}" for m in JOBS["stalls"]) for r in ROWS),
        flush=True)
  print("\np99 of the first 200 calls, ms, median over rounds (ratio to tier 0's; per-round "
        "ratios in brackets)\n")
  print("| workload | " + " | ".join(ROWS) + " |")
  print("|---" * (len(ROWS) + 1) + "|")
  for m in JOBS["stalls"]:
    base = [run[m] for run in runs["tier 0"]]
    cells = []
    for r in ROWS:
      vals = [run[m] for run in runs[r]]
      ratios = [v / b for v, b in zip(vals, base)]
      cell = f"{statistics.median(vals):.3g}"
      if r != "tier 0":
        cell += (f" ({statistics.median(ratios):.2f}x; "
                 + ", ".join(f"{x:.2f}" for x in ratios) + ")")
      cells.append(cell)
    print(f"| {METRICS[m][0].split(': ')[-1]} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
  main()
