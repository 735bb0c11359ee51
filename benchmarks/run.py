"""Benchmark jaxlite against JAX, PyTorch and NumPy; write results.jsonl, .md and .png.

    python benchmarks/run.py [--quick] [--systems S ...] [--jax-python PATH]
                             [--torch-python PATH] [--out DIR]

Every (system, job) runs in a fresh worker process (``workers/*.py``, one JSON line per
measurement). Rounds interleave the systems: each round runs every job once for every
system, in a freshly shuffled system order, so that a noisy neighbour on a shared machine
slows all systems alike. Figures are medians over rounds; ratios are taken to JAX measured
in the same run. See ``benchmarks/README.md`` for what each workload measures.
"""
import argparse
import datetime
import json
import os
import platform
import random
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORKERS = HERE / "workers"
sys.path.insert(0, str(WORKERS))
from _common import JOBS, threads_env  # noqa: E402


@dataclass(frozen=True)
class System:
  worker: str  # script in workers/
  python: str  # which interpreter runs it: "jaxlite", "jax", "torch" or "numpy"
  args: tuple = ()


# A new jaxlite tier is one more row here.
SYSTEMS = {
  "jaxlite-numpy": System("jax_api.py", "jaxlite", ("--lib", "jaxlite", "--backend", "numpy")),
  "jaxlite-xla": System("jax_api.py", "jaxlite", ("--lib", "jaxlite", "--backend", "xla")),
  "jaxlite-auto": System("jax_api.py", "jaxlite", ("--lib", "jaxlite", "--backend", "auto")),
  "jax": System("jax_api.py", "jax", ("--lib", "jax")),
  "torch": System("torch_api.py", "torch", ("--mode", "eager")),
  "torch-compile": System("torch_api.py", "torch", ("--mode", "compile")),
  "numpy": System("numpy_api.py", "numpy"),
}
BASELINE = "jax"

# metric -> (label, unit); the table's rows, in this order. Workers report seconds.
METRICS = {
  "import": ("W10 import time (fresh process)", "ms"),
  "w1_eager_sin": ("W1 eager sin, 4 f32", "us"),
  "w2_jit_cached": ("W2 cached jit call x**2+1, 4 f32", "us"),
  "w3_heavy_first": ("W3 heavy, first call in fresh process, 1M f32", "ms"),
  "w4_heavy_steady": ("W4 heavy, steady", "ms"),
  "w5_mlp_first": ("W5 MLP grad+SGD step, first call", "ms"),
  "w5_mlp_steady": ("W5 MLP grad+SGD step, steady", "ms"),
  "w6_loop200_first": ("W6 Python loop, 200 steps, first call", "ms"),
  "w6_scan200_first": ("W6 lax.scan, 200 steps, first call", "ms"),
  "w6_loop2000_first": ("W6 Python loop, 2000 steps, first call", "ms"),
  "w6_scan2000_first": ("W6 lax.scan, 2000 steps, first call", "ms"),
  "w7_vmap_grad_first": ("W7 vmap(grad) per-example, first call", "ms"),
  "w7_vmap_grad_steady": ("W7 vmap(grad) per-example, steady", "ms"),
  "w8_hessian_first": ("W8 hessian n=100, first call", "ms"),
  "w8_hessian_steady": ("W8 hessian n=100, steady", "ms"),
  "w9_call1_100": ("W9 call 1, shape (100,)", "ms"),
  "w9_call2_200": ("W9 call 2, shape (200,)", "ms"),
  "w9_call3_100": ("W9 call 3, shape (100,)", "ms"),
  "w9_call4_200": ("W9 call 4, shape (200,)", "ms"),
  "w9_call5_300": ("W9 call 5, shape (300,)", "ms"),
  "w11_scan2000_p99": ("W11 p99 of the first 200 calls: lax.scan 2000 steps", "ms"),
  "w11_heavy_p99": ("W11 p99 of the first 200 calls: heavy, 100k f32", "ms"),
  "w11_mlp_p99": ("W11 p99 of the first 200 calls: MLP step", "ms"),
  "w11_vmap_grad_p99": ("W11 p99 of the first 200 calls: vmap(grad)", "ms"),
  "w11_hessian_p99": ("W11 p99 of the first 200 calls: hessian", "ms"),
  "w12_heavy_window": ("W12 heavy 100k f32, median call from the 2nd second", "ms"),
  "w12_mlp_window": ("W12 MLP step, median call from the 2nd second", "ms"),
  "w12_vmap_grad_window": ("W12 vmap(grad), median call from the 2nd second", "ms"),
  "w12_hessian_window": ("W12 hessian, median call from the 2nd second", "ms"),
  "w12_mlp_compile_busy": ("W12 MLP step's XLA compile beside busy calls (auto)", "ms"),
  "w12_mlp_compile_alone": ("W12 MLP step's XLA compile alone (xla, first call)", "ms"),
}
SCALE = {"us": 1e6, "ms": 1e3}


def run_job(name, job, python, quick, timeout, env):
  """Run one job of one system in a fresh process; return (records, versions)."""
  s = SYSTEMS[name]
  cmd = [python, "-u", str(WORKERS / s.worker), "--job", job, *s.args]
  cmd += ["--quick"] if quick else []
  proc = subprocess.Popen(cmd, cwd=WORKERS, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, start_new_session=True)
  try:
    out, err = proc.communicate(timeout=timeout)
    why = f"worker failed (exit {proc.returncode}): {(err.strip().splitlines() or [''])[-1]}"
  except subprocess.TimeoutExpired:
    os.killpg(proc.pid, signal.SIGKILL)
    out, err = proc.communicate()
    why = f"timed out after {timeout:.0f} s"
  records, versions = {}, {}
  for line in out.splitlines():
    if line.startswith("{"):
      rec = json.loads(line)
      if "versions" in rec:
        versions = rec["versions"]
      else:
        records[rec.pop("metric")] = rec
  for m in ["import", *JOBS[job]]:
    records.setdefault(m, {"unavailable": why})
  return records, versions


def worker_env(threads, inductor_cache):
  """The workers' environment: CPU only, jaxlite from this checkout, ``threads`` each."""
  env = dict(os.environ, JAX_PLATFORMS="cpu", TORCHINDUCTOR_CACHE_DIR=inductor_cache,
             PYTHONPATH=os.pathsep.join([str(HERE.parent), os.environ.get("PYTHONPATH", "")]))
  if threads:
    env.update(threads_env(threads))
  return env


def parse_threads(specs, systems):
  """``--threads`` values -> {system: threads}: a plain ``N`` sets every system,
  ``SYSTEM=N`` one of them (later values win)."""
  threads = dict.fromkeys(systems, 1)
  for spec in specs:
    name, _, n = spec.rpartition("=")
    if name and name not in SYSTEMS:
      raise SystemExit(f"--threads {spec}: unknown system {name!r} (one of {', '.join(SYSTEMS)})")
    if not n.isdigit():
      raise SystemExit(f"--threads {spec}: expected N or SYSTEM=N with N a whole number")
    threads.update({name: int(n)} if name else dict.fromkeys(systems, int(n)))
  return threads


def run_rounds(systems, jobs, rounds, pythons, quick, timeout, envs, seed):
  """Run every job of every system once per round, systems shuffled; return (rows, versions).
  ``envs`` maps each system to its workers' environment."""
  rng = random.Random(seed)
  rows, versions, skip = [], {}, set()
  for rnd in range(1, rounds + 1):
    for job in jobs:
      order = systems[:]
      rng.shuffle(order)
      for s in order:
        if (s, job) in skip:
          continue
        recs, vers = run_job(s, job, pythons[SYSTEMS[s].python], quick, timeout, envs[s])
        versions.setdefault(s, vers)
        for m, rec in recs.items():
          row = {"system": s, "workload": m, "job": job, "round": rnd}
          if "value" in rec:
            row.update(value=rec["value"] * SCALE[METRICS[m][1]], unit=METRICS[m][1])
          else:
            row.update(unavailable=rec["unavailable"])
          rows.append(row)
        got = [m for m in JOBS[job] if "value" in recs[m]]
        shown = ", ".join(f"{m}={recs[m]['value'] * SCALE[METRICS[m][1]]:.3g}" for m in got)
        print(f"round {rnd} {job:10s} {s:14s} {shown or recs[JOBS[job][0]]['unavailable']}",
              flush=True)
        timed_out = any("timed out" in recs[m].get("unavailable", "") for m in JOBS[job])
        if not got or timed_out:  # do not pay for it again in later rounds
          skip.add((s, job))
        if "value" not in recs["import"]:
          skip.update((s, j) for j in JOBS)
  return rows, versions


def machine():
  """A line describing this machine's CPU."""
  model = platform.processor() or platform.machine()
  try:
    for line in open("/proc/cpuinfo"):
      if line.startswith("model name"):
        model = line.split(":", 1)[1].strip()
        break
  except OSError:
    pass
  return f"{model}, {os.cpu_count()} logical cores, {platform.platform()}"


def summarize(rows):
  """(system, metric) -> list of values (display units), and -> the reason it is missing."""
  values, missing = {}, {}
  for r in rows:
    key = (r["system"], r["workload"])
    if "value" in r:
      values.setdefault(key, []).append(r["value"])
    else:
      missing.setdefault(key, r["unavailable"])
  return {k: statistics.median(v) for k, v in values.items()}, missing


def fmt(v):
  return f"{v:.3g}" if v < 1000 else f"{v:.0f}"


def markdown(medians, missing, systems, jobs, header):
  """The results table: median per system, with its ratio to JAX in parentheses."""
  notes = []
  lines = [*header, "",
           f"Median over rounds (unit per row); in parentheses the ratio to `{BASELINE}` "
           "in the same run (time / JAX time: below 1 is faster than JAX).", "",
           "| workload | unit | " + " | ".join(systems) + " |",
           "|---|---|" + "---|" * len(systems)]
  for m, (label, unit) in METRICS.items():
    if not any(m in JOBS[j] for j in jobs) and m != "import":
      continue
    cells = []
    base = medians.get((BASELINE, m))
    for s in systems:
      v = medians.get((s, m))
      if v is None:
        reason = missing.get((s, m), "not run")
        notes += [] if reason in notes else [reason]
        cells.append(f"— [{notes.index(reason) + 1}]")
      elif base and s != BASELINE:
        cells.append(f"{fmt(v)} ({v / base:.2g}×)")
      else:
        cells.append(fmt(v))
    lines.append(f"| {label} | {unit} | " + " | ".join(cells) + " |")
  lines += ["", "Missing figures:", ""] + [f"{i + 1}. {n}" for i, n in enumerate(notes)]
  return "\n".join(lines) + "\n"


def chart(medians, systems, path):
  """A log-scale bar chart of every system's ratio to JAX; returns a note if skipped."""
  try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
  except ImportError:
    return "results.png skipped: matplotlib is not installed for this interpreter."
  others = [s for s in systems if s != BASELINE]
  metrics = [m for m in METRICS if (BASELINE, m) in medians]
  if not others or not metrics:
    return "results.png skipped: no ratios to JAX to plot."
  fig, ax = plt.subplots(figsize=(9, 0.25 * len(metrics) * max(1, len(others)) ** 0.5 + 1.5))
  height = 0.8 / len(others)
  for i, s in enumerate(others):
    ys, ratios = [], []
    for j, m in enumerate(metrics):
      if (s, m) in medians:
        ys.append(j + i * height)
        ratios.append(medians[(s, m)] / medians[(BASELINE, m)])
    ax.barh(ys, ratios, height=height, label=s, left=0)
  ax.set_xscale("log")
  ax.axvline(1.0, color="black", linewidth=0.8)
  ax.set_yticks([j + 0.4 - height / 2 for j in range(len(metrics))])
  ax.set_yticklabels([METRICS[m][0] for m in metrics], fontsize=7)
  ax.invert_yaxis()
  ax.set_xlabel("time / JAX time (log scale; left of 1 = faster than JAX)")
  ax.legend(fontsize=7, loc="lower right")
  fig.tight_layout()
  fig.savefig(path, dpi=110)
  return None


def main():
  p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
  p.add_argument("--quick", action="store_true",
                 help="one round, few repetitions, no torch-compile unless named (smoke test)")
  p.add_argument("--systems", nargs="+", choices=list(SYSTEMS), help="default: all")
  p.add_argument("--jobs", nargs="+", choices=list(JOBS), help="default: all")
  p.add_argument("--rounds", type=int, help="default: 5 (1 with --quick)")
  p.add_argument("--timeout", type=float, help="seconds per worker process (default 120, "
                 "60 with --quick); a job that times out is not run again")
  p.add_argument("--threads", nargs="+", default=[], metavar="N|SYSTEM=N",
                 help="threads per system (BLAS, OpenMP, XLA, torch and its compiler, jaxlite's "
                 "tier-0 blocks): N "
                 "for all, SYSTEM=N for one;\ndefault 1, which keeps a shared machine's "
                 "contention out of the figures; 0 leaves a library's default")
  p.add_argument("--jaxlite-python", default=sys.executable)
  p.add_argument("--jax-python", default=sys.executable)
  p.add_argument("--torch-python", default=sys.executable)
  p.add_argument("--numpy-python", default=sys.executable)
  p.add_argument("--out", default=str(HERE / "results"))
  p.add_argument("--seed", type=int, default=0, help="for the shuffled system order")
  a = p.parse_args()
  systems = a.systems or [s for s in SYSTEMS if not (a.quick and s == "torch-compile")]
  jobs = a.jobs or list(JOBS)
  rounds = a.rounds or (1 if a.quick else 5)
  timeout = a.timeout or (60 if a.quick else 120)
  pythons = {"jaxlite": a.jaxlite_python, "jax": a.jax_python, "torch": a.torch_python,
             "numpy": a.numpy_python}
  out = Path(a.out)
  out.mkdir(parents=True, exist_ok=True)
  command = shlex.join([sys.executable, *sys.argv])
  # torch.compile's on-disk cache starts empty for each run: round 1 compiles cold.
  inductor = tempfile.mkdtemp(prefix="jaxlite-bench-inductor-")
  started = datetime.datetime.now(datetime.timezone.utc)
  threads = parse_threads(a.threads, systems)
  envs = {s: worker_env(threads[s], inductor) for s in systems}
  try:
    rows, versions = run_rounds(systems, jobs, rounds, pythons, a.quick, timeout, envs, a.seed)
  finally:
    shutil.rmtree(inductor, ignore_errors=True)
  finished = datetime.datetime.now(datetime.timezone.utc)

  with open(out / "results.jsonl", "w") as f:
    for r in rows:
      f.write(json.dumps(r) + "\n")
  medians, missing = summarize(rows)
  header = [
    f"- Command: `{command}`",
    f"- Date: {started:%Y-%m-%d %H:%M} UTC, {(finished - started).total_seconds() / 60:.1f} min;"
    f" {rounds} round(s), systems interleaved in shuffled order each round;"
    " threads per system: " + ", ".join(f"{s} {threads[s] or 'library default'}"
                                        for s in systems),
    f"- Machine: {machine()}",
  ] + [f"- {s}: " + ", ".join(f"{k} {v}" for k, v in versions[s].items())
       for s in systems if versions.get(s)]
  note = chart(medians, systems, out / "results.png")
  md = markdown(medians, missing, systems, jobs, header)
  md += f"\n{note}\n" if note else ""
  (out / "results.md").write_text(md)
  print("\n" + md)
  print(f"wrote {out / 'results.jsonl'}, {out / 'results.md'}"
        + ("" if note else f", {out / 'results.png'}"))


if __name__ == "__main__":
  main()
