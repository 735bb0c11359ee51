"""Probe: what each kind of background work costs a caller running tier 0.

The caller times tier 0's ``heavy`` (W11's size, 100k f32, one thread) while a second
thread repeats one kind of work, as ``auto``'s compile thread does:

  none     nothing (the reference)
  compile  XLA compiles heavy's StableHLO (C++, ctypes releases the GIL)
  execute  XLA runs heavy (C++, and a little Python around each run)
  numpy    np.sin over 100k f32 (C, NumPy releases the GIL)
  lower    jaxlite lowers heavy's jaxpr to StableHLO (Python)
  lower, yield 5 us
  lower, yield 0.5 ms
           the same on a thread marked as the compile thread is
           (``background.run_in_background``): it hands the GIL over after each
           equation (``background.TURN`` 0), sleeping 5 us or 0.5 ms
           (``background.YIELD_FOR``); ``lowering_turn.py`` times longer turns

Tier 0's call makes about 130 ufunc calls, and each releases the GIL. While the other
thread runs Python, it takes the GIL at each release and keeps it until the caller has
waited a whole switch interval (5 ms), so every ufunc call of the caller costs it up to
5 ms. Work in C beside it costs the caller little: three runs gave 2.49-2.52 ms alone,
2.50-3.70 beside XLA's compile, 2.52-4.29 beside its runs, and 576-872 ms beside the
lowering. With the hand-over the thread still takes the GIL at the caller's first release
after each sleep, for one equation. Three runs (2026-12-02): the caller's median call
was 1.6-2.2x its time alone with 5 us sleeps and 1.1-1.6x with 0.5 ms ones, while the
lowering (printed: wall time per pass) took 11 and 63 ms.

    .venv/bin/python benchmarks/probes/gil_contention.py
"""
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workers"))
from _common import threads_env  # noqa: E402 (standard library only)
os.environ.update(threads_env(1))   # one thread each, as run.py's default rows

import numpy as np  # noqa: E402

import jaxlite as jax  # noqa: E402
import jaxlite.numpy as jnp  # noqa: E402
from _common import heavy_fn  # noqa: E402
from jaxlite._src.backends import background as compile_thread  # noqa: E402
from jaxlite._src.backends import xla  # noqa: E402


heavy = heavy_fn(jnp)


def main():
  x = jnp.arange(100_000, dtype=jnp.float32).block_until_ready()
  tier0 = jax.jit(heavy, backend="numpy")
  on_xla = jax.jit(heavy, backend="xla")
  tier0(x).block_until_ready()
  on_xla(x).block_until_ready()
  closed = jax.make_jaxpr(heavy)(x)
  text = xla.lower(closed, "heavy")
  client = xla.client()
  plain = np.asarray(x)
  work = {
      "none": None,
      "compile": lambda: client.compile(text),
      "execute": lambda: on_xla(x).block_until_ready(),
      "numpy": lambda: np.sin(plain),
      "lower": lambda: xla.lower(closed, "heavy"),
  }
  passes = []   # seconds per lowering, of the row being timed

  def timed_lowering():
    t0 = time.perf_counter()
    xla.lower(closed, "heavy")
    passes.append(time.perf_counter() - t0)

  yields = {"lower, yield 5 us": 5e-6, "lower, yield 0.5 ms": 5e-4}
  work.update(dict.fromkeys(yields, timed_lowering))

  def median_ms(background, calls, yield_for):
    stop = threading.Event()

    def repeat():
      if yield_for:
        compile_thread.YIELD_FOR, compile_thread.TURN = yield_for, 0.0
        compile_thread.run_in_background()
      while not stop.is_set():
        background()
    thread = threading.Thread(target=repeat) if background else None
    if thread:
      thread.start()
    times = []
    try:
      for _ in range(calls):
        t0 = time.perf_counter()
        tier0(x).block_until_ready()
        times.append(time.perf_counter() - t0)
    finally:
      stop.set()
      if thread:
        thread.join()
    return statistics.median(times) * 1e3

  print("tier 0 heavy (100k f32), median ms per call, with another thread doing:")
  for name, background in work.items():
    calls = 5 if name == "lower" else 40   # a call takes ~0.6 s beside the lowering
    passes.clear()
    line = f"  {name:20s} {median_ms(background, calls, yields.get(name)):9.2f}"
    if name in yields:
      line += f"   (lowering: {statistics.median(passes) * 1e3:.0f} ms per pass)"
    print(line)


if __name__ == "__main__":
  main()
