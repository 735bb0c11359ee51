"""Does background work on the other CPU slow tier 0, by its scheduling policy? (Issue 19,
tenth pass.)

    .venv/bin/python benchmarks/probes/other_cpu_wakeups.py [--rounds 6] [--threads N]

Each round runs, in fresh processes and in turn, tier 0's heavy (100k f32) 200 times:
``alone``, or beside a separate process that, from its third call and kept off the
caller's CPU, does what the compile server does for a race: compiles heavy with XLA (no
cache) and runs it 12 times (``race``), or only compiles it (``compile``); at an ordinary
priority, at nice 19 (``-nice19``) or under Linux's ``SCHED_IDLE`` policy (``-idle``).

It prints, per variant, the median over rounds of: the p99 of the 200 calls (W11's
figure), the median call of calls 3-69 (while the other process works) over that of calls
120-199, and the times the caller's thread was preempted (``ru_nivcsw``) in its 150
fastest calls. Tier 0 keeps its default threads (two here) unless ``--threads`` says
otherwise. Needs Linux and two CPUs; run from the repository root.

Found (benchmarks/README, tenth pass): with tier 0 on two threads, the other process's
work slows its calls about 1.4x while it lasts at an ordinary priority, less at nice 19
and not at all under SCHED_IDLE; with one thread, not at all. So XLA's compile, a long C
call, runs under SCHED_IDLE in the compile server (``background.serve_alone``);
XLA's trials do not: there they got a CPU only between the caller's calls, and XLA lost
races it wins. Nor does it in the caller's process, where the thread that runs it takes
the GIL back after each call and, preempted holding it, stalled the caller's calls.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

# (what the other process does: "race" compiles and runs 12 times, "compile" only
# compiles; at which priority)
VARIANTS = ("alone", "race", "race-nice19", "race-idle", "compile-nice19", "compile-idle")
CALLS = 200


def heavy_setup(backend):
  sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workers"))
  import _common
  import jaxlite as jax
  import jaxlite.numpy as jnp
  x = jnp.arange(_common.STALL_HEAVY_SIZE, dtype=jnp.float32).block_until_ready()
  return jax.jit(_common.heavy_fn(jnp), backend=backend), x


def side(variant):
  """The other process: waits for the caller's CPU on stdin, then works beside it."""
  g, x = heavy_setup("xla")
  print("ready", flush=True)
  cpu = int(sys.stdin.readline())
  keep = set(range(os.cpu_count())) - {cpu}
  for tid in os.listdir("/proc/self/task"):   # XLA's threads start later: they inherit
    os.sched_setaffinity(int(tid), keep)
    if variant.endswith("-idle"):
      os.sched_setscheduler(int(tid), os.SCHED_IDLE, os.sched_param(0))
    elif variant.endswith("-nice19"):
      os.setpriority(os.PRIO_PROCESS, int(tid), 19)
  if variant.startswith("compile"):
    g.lower(x).compile()
  else:
    for _ in range(12):   # the first compiles
      g(x).block_until_ready()
  print("done", flush=True)


def caller(variant):
  helper = None
  if variant != "alone":
    helper = subprocess.Popen([sys.executable, __file__, "--side", variant], text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    helper.stdout.readline()
  f, x = heavy_setup("numpy")
  calls = []   # (seconds, preemptions)
  for i in range(CALLS):
    before = resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw
    t0 = time.perf_counter()
    f(x).block_until_ready()
    calls.append((time.perf_counter() - t0,
                  resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw - before))
    if i == 1 and helper:
      with open("/proc/thread-self/stat") as stat:
        helper.stdin.write(f"{stat.read().rsplit(')', 1)[1].split()[36]}\n")
      helper.stdin.flush()
  if helper:
    helper.stdout.readline()
    helper.wait()
  times = [t for t, _ in calls]
  ranked = sorted(calls)
  print(json.dumps({
      "p99": sorted(times)[int(0.99 * CALLS) - 1] * 1e3,
      "window": statistics.median(times[3:70]) / statistics.median(times[120:]),
      "preempted": sum(p for _, p in ranked[:150])}))


def main():
  p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  p.add_argument("--rounds", type=int, default=6)
  p.add_argument("--threads", type=int, help="tier 0's threads (default: jaxlite's)")
  p.add_argument("--side", help=argparse.SUPPRESS)
  p.add_argument("--variant", help=argparse.SUPPRESS)
  a = p.parse_args()
  os.environ["JAXLITE_PERSISTENT_CACHE"] = "0"
  if a.side:
    return side(a.side)
  if a.variant:
    return caller(a.variant)
  env = dict(os.environ)
  if a.threads:
    env["JAXLITE_TIER0_THREADS"] = str(a.threads)
  results = {v: [] for v in VARIANTS}
  for _ in range(a.rounds):
    for v in VARIANTS:
      out = subprocess.run([sys.executable, __file__, "--variant", v], env=env,
                           capture_output=True, text=True, check=True)
      results[v].append(json.loads(out.stdout.strip().splitlines()[-1]))
  for v, rs in results.items():
    med = {k: statistics.median(r[k] for r in rs) for k in rs[0]}
    spans = {k: (min(r[k] for r in rs), max(r[k] for r in rs)) for k in rs[0]}
    print(f"{v:12s} p99 {med['p99']:.2f} ms ({spans['p99'][0]:.2f}-{spans['p99'][1]:.2f}), "
          f"window/late {med['window']:.2f} ({spans['window'][0]:.2f}-{spans['window'][1]:.2f}), "
          f"preempted {med['preempted']:.0f} ({spans['preempted'][0]}-{spans['preempted'][1]})")


if __name__ == "__main__":
  main()
