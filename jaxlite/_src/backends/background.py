"""The background compile thread's manners: it hands the GIL to the callers it runs beside.

A caller that wants the GIL waits a whole switch interval (5 ms) while another thread runs
Python, and tier 0 releases the GIL at every ufunc call; so Python on the compile thread
(lowering above all) would be taken out of the caller's calls many times over. Loops that
run there call ``yield_to_callers`` once per step.
"""
import threading
import time


class _Courtesy(threading.local):
  """Whether this thread is a background one that should hand the GIL to callers."""
  background = False


_courtesy = _Courtesy()
YIELD_FOR = 5e-6   # seconds a hand-over sleeps (Linux's timer slack makes it ~55 us)


def run_in_background():
  """Mark the calling thread as a background one (``yield_to_callers`` hands over there)."""
  _courtesy.background = True


def yield_to_callers():
  """On a background thread, release the GIL long enough for a waiting caller to take it.
  Beside a thread lowering in a loop, tier 0's heavy (100k f32) took 576-872 ms per call
  instead of 2.5, and 2.8-4.6 with this hand-over (``benchmarks/probes/
  gil_contention.py``). ``time.sleep(0)`` would not hand over: the sleeper takes the GIL
  back before the waiter wakes."""
  if _courtesy.background:
    time.sleep(YIELD_FOR)
