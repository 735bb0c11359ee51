"""Probe: the least that a race's work in the caller's process costs the calls beside it.
(Issue 19, nineteenth pass.)

W11's stall goal asks every call under ``auto`` to stay within tier 0's spread: for W7's
vmap(grad), tier 0's calls take 0.32-0.38 ms and its p99 (the third slowest of 200) about
0.47. A race must load its winner where the winner will run: deserialize it in this
process and run it a few times, with some Python around those C calls. This probe does
each of those alone, as cheaply as it can be done, in a fresh process per row and round,
with the main thread pinned to CPU 0 and every other thread to CPU 1 (as the race keeps
its work off the caller's CPU):

  tier 0            200 timed calls of W7's step on tier 0, nothing else
  + load            the same; from call 20 on, the load, with none of its Python inside a
                    timed call (it runs between two calls, one step each time):
                      1. the deserialization's C call, on a native thread that never runs
                         Python (``pthread_create`` with the PJRT function as its start
                         routine, polled with ``pthread_tryjoin_np``);
                      2. the executable's call structs;
                      3. warm-up runs, as the race makes them (``compile_server.warm_up``:
                         up to ``--warmups``, until one takes the executable's steady time);
                      4. the pool threads' CPUs given back.
                    The calls beside step 1 pay only for what that C work does to the
                    process: no GIL is taken from them.
  + load, then XLA  the same, and the calls after the load run the loaded executable
  + GIL steps       tier 0, and from call 20 on, a thread that takes the GIL for 10 us of
                    Python once every other call, 40 times: the least that a step of the
                    race's Python, run on a thread of its own, costs the call it lands in

Each row prints the p99 and median of the 200 calls; the load rows, the calls beside the
load, their median against the same calls of the tier 0 row, their slowest (wall/own CPU
time: wall above CPU is waiting), and the TLB shootdowns this machine counted meanwhile
(``/proc/interrupts``: loading code maps and protects pages, and every CPU running this
process must drop its stale translations); the GIL row, the calls a step landed in.

    .venv/bin/python benchmarks/probes/load_floor.py [--rounds 6] [--warmups 8]

Linux with glibc and two CPUs at least. Run with cached bytecode, as the benchmark does.
"""
import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workers"))
CALLS, FROM = 200, 20
ROWS = {"tier 0": "tier0", "+ load": "load", "+ load, then XLA": "switch",
        "+ GIL steps": "gil"}
GIL_STEP, GIL_STEPS = 10e-6, 40


def tlb_shootdowns() -> int:
  with open("/proc/interrupts") as f:
    for line in f:
      if line.lstrip().startswith("TLB:"):
        return sum(int(n) for n in line.split()[1:] if n.isdigit())
  return 0


def one_round(mode: str, warmups: int) -> dict:
  """One fresh process's 200 calls (in a child): ``mode`` is a row's."""
  from _common import per_example_loss_fn, small_mlp_data, threads_env
  os.environ.update(threads_env(1))
  os.environ["JAXLITE_TIER"] = "numpy"
  import numpy as np
  import jaxlite as jax
  import jaxlite.numpy as jnp
  from jaxlite._src import passes
  from jaxlite._src.backends import xla
  from jaxlite._src.backends.xla import pjrt

  small, xs, ys = jax.tree_util.tree_map(jnp.asarray, small_mlp_data(np))
  batched = jax.vmap(jax.grad(per_example_loss_fn(jnp)), in_axes=(None, 0, 0))
  step = jax.jit(batched)
  leaves = jax.tree_util.tree_leaves((small, xs, ys))
  # The winner's bytes, compiled here beforehand (a race gets them from its server).
  closed = passes.optimize(jax.make_jaxpr(batched)(small, xs, ys))   # as jit compiles it
  compiled = xla.compile(closed)
  data = compiled.serialize()
  client = xla.client()
  placed = [client.put(np.asarray(leaf)) for leaf in leaves]

  def timed_run(exe):
    t0 = time.perf_counter()
    for out in exe.execute_device(placed):   # (the jit's XLA tier adds its Python)
      out.block_until_ready()
    return time.perf_counter() - t0
  # Earlier races in a process have run and waited for XLA's dots: their first run made
  # oneDNN generate its GEMM kernels (20-30 ms), and the first wait that blocked made
  # Abseil measure the CPU's frequency (1-7 ms of sleeps, holding the event's lock, which
  # XLA's thread then waits for). Both happen once per process: here, before the calls.
  warm = min(timed_run(compiled) for _ in range(20))   # a race knows it from its trials
  cpus = os.sched_getaffinity(0)
  os.sched_setaffinity(0, {0})
  for tid in map(int, os.listdir("/proc/self/task")):
    if tid != threading.get_native_id():
      os.sched_setaffinity(tid, {1})

  libc = ctypes.CDLL(None)
  libc.pthread_create.argtypes = [ctypes.c_void_p] * 4
  libc.pthread_tryjoin_np.argtypes = [ctypes.c_ulong, ctypes.c_void_p]
  libc.pthread_attr_setaffinity_np.argtypes = [ctypes.c_void_p, ctypes.c_size_t,
                                               ctypes.c_void_p]
  attr = ctypes.create_string_buffer(256)   # a pthread_attr_t (56 bytes on glibc)
  libc.pthread_attr_init(attr)
  mask = (ctypes.c_ulong * 16)(2)   # CPU 1
  libc.pthread_attr_setaffinity_np(attr, ctypes.sizeof(mask), mask)
  args = pjrt._new(pjrt.DeserializeArgs, client=client.handle,
                   serialized_executable=ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p),
                   serialized_executable_size=len(data))
  start = ctypes.cast(client.api.Executable_DeserializeAndLoad, ctypes.c_void_p)
  thread, result = ctypes.c_ulong(), ctypes.c_void_p()
  spans, marks, switched, tlb = [], [], [], []

  def load():
    """The load, one step per gap between two calls (it yields while one is in flight)."""
    tlb.append(tlb_shootdowns())
    t0 = time.perf_counter()
    assert libc.pthread_create(ctypes.byref(thread), attr, start, ctypes.byref(args)) == 0
    while libc.pthread_tryjoin_np(thread, ctypes.byref(result)):
      yield
    assert not result.value, "the deserialization failed"
    marks.append(("deserialized", time.perf_counter()))
    loaded = pjrt.LoadedExecutable(client, args.loaded_executable)
    loaded.serialized = data
    exe = xla.XlaExecutable(loaded, "", closed.in_avals, closed.out_avals)
    yield
    for run in range(warmups):
      took = timed_run(exe)
      marks.append((f"warm-up {took * 1e3:.2f} ms", time.perf_counter()))
      if run and took <= warm:
        break
      yield
    for tid in map(int, os.listdir("/proc/self/task")):   # as the race's put_back
      os.sched_setaffinity(tid, cpus)
    spans.append((t0, time.perf_counter()))
    tlb.append(tlb_shootdowns())
    switched.append(exe)

  go, steps = threading.Event(), []

  def gil_steps():
    os.sched_setaffinity(0, {1})   # (a thread inherits its starter's CPUs: the caller's)
    for _ in range(GIL_STEPS):
      go.wait()
      go.clear()
      t0 = time.perf_counter()
      while time.perf_counter() - t0 < GIL_STEP:
        pass
      steps.append((t0, time.perf_counter()))
  if mode == "gil":
    threading.Thread(target=gil_steps, daemon=True).start()

  pending = load() if mode in ("load", "switch") else iter(())
  wall, cpu, begin = [], [], []
  for i in range(CALLS):
    if i >= FROM:
      next(pending, None)
      if mode == "gil" and i % 2 == 0:
        go.set()   # the step lands in the call that follows
    c0, t0 = time.thread_time(), time.perf_counter()
    if switched and mode == "switch":
      timed_run(switched[0])
    else:
      jax.block_until_ready(step(small, xs, ys))
    wall.append(time.perf_counter() - t0)
    cpu.append(time.thread_time() - c0)
    begin.append(t0)
  assert mode not in ("load", "switch") or spans, "the load did not end within the calls"
  assert mode != "gil" or len(steps) == GIL_STEPS, "the GIL steps did not all run"
  hit = sorted({i for s0, s1 in (spans or steps) for i in range(CALLS)
                if begin[i] <= s1 and begin[i] + wall[i] >= s0})
  at = [sum(b <= t for b in begin) - 1 for _, t in marks]   # the call each step ended in
  return {"wall": wall, "cpu": cpu, "hit": hit, "steps": list(zip([m for m, _ in marks], at)),
          "load_ms": (spans[0][1] - spans[0][0]) * 1e3 if spans else 0.0,
          "tlb": tlb[1] - tlb[0] if len(tlb) == 2 else 0}


def p99(times):
  return sorted(times)[-3]   # the third slowest of 200, as the benchmark's W11


def main():
  p = argparse.ArgumentParser(description=__doc__)
  p.add_argument("--rounds", type=int, default=6)
  p.add_argument("--warmups", type=int, default=8, help="warm-up runs at most (the race's)")
  p.add_argument("--child", choices=tuple(ROWS.values()), help=argparse.SUPPRESS)
  opts = p.parse_args()
  if opts.child:
    print(json.dumps(one_round(opts.child, opts.warmups)))
    return
  runs = {row: [] for row in ROWS}
  for _ in range(opts.rounds):
    for row, child in ROWS.items():
      out = subprocess.run([sys.executable, __file__, "--child", child, "--warmups",
                            str(opts.warmups)], check=True, capture_output=True, text=True)
      runs[row].append(json.loads(out.stdout.splitlines()[-1]))
  med = statistics.median
  ms = lambda s: f"{s * 1e3:.3f}"   # noqa: E731
  print(f"{opts.rounds} rounds; medians over the rounds, in ms. Hit: the calls beside the "
        "load or that a GIL step landed in; the same calls of the tier 0 row beside them")
  print("| row | p99 | median call | calls hit | their median (tier 0's) | slowest hit, "
        "wall/CPU, per round | load | TLB shootdowns |")
  print("|---|---|---|---|---|---|---|---|")
  for row, rounds in runs.items():
    line = [ms(med(p99(r["wall"]) for r in rounds)), ms(med(med(r["wall"]) for r in rounds))]
    if row != "tier 0":
      pairs = list(zip(rounds, runs["tier 0"]))
      line += [f"{med(len(r['hit']) for r in rounds):.0f}",
               f"{ms(med(med(r['wall'][i] for i in r['hit']) for r in rounds))} "
               f"({ms(med(med(t['wall'][i] for i in r['hit']) for r, t in pairs))})",
               ", ".join(f"{r['wall'][i] * 1e3:.2f}/{r['cpu'][i] * 1e3:.2f}" for r, i in
                         ((r, max(r["hit"], key=r["wall"].__getitem__)) for r in rounds)),
               f"{med(r['load_ms'] for r in rounds):.1f} ms" if row != "+ GIL steps" else "",
               f"{med(r['tlb'] for r in rounds):.0f}" if row != "+ GIL steps" else ""]
    else:
      line += [""] * 5
    print(f"| {row} | " + " | ".join(line) + " |")
  print("p99 per round (" + ", ".join(ROWS) + "):", "; ".join(
      "/".join(f"{p99(r['wall']) * 1e3:.2f}" for r in same) for same in zip(*runs.values())))
  print("the load's steps in the last round (step@the call it ended in):",
        ", ".join(f"{name}@{at}" for name, at in runs["+ load"][-1]["steps"]))


if __name__ == "__main__":
  main()
