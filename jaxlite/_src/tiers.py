"""Which compiler tier runs a jitted signature.

Policies: ``numpy`` (tier 0 only), ``xla`` (tier 1, compiled before the first call
returns) and ``auto`` (the default): the first call runs tier 0 at once while XLA
compiles on a background thread; once both exist, the next calls alternate between them
and the signature keeps whichever measured faster. ``jit(f, backend=...)`` pins a policy
per function; ``jaxlite.config.update("jaxlite_tier", ...)`` or ``JAXLITE_TIER`` globally.
"""
from __future__ import annotations

import concurrent.futures
import statistics
import threading
import time

from jaxlite._src.config import config

POLICIES = ("auto", "numpy", "xla")
_BACKEND_ALIASES = {None: None, "auto": "auto", "numpy": "numpy", "xla": "xla",
                    "cpu": "xla", "gpu": "xla", "cuda": "xla"}

config.define("jaxlite_tier", "auto", "Default tier policy of jit: auto, numpy or xla.",
              env_var="JAXLITE_TIER", parse=str)


def resolve_policy(backend):
  """The policy a ``jit(..., backend=...)`` argument pins (None: follow the config)."""
  if backend not in _BACKEND_ALIASES:
    raise ValueError(f"Unknown backend {backend!r} for jit: use 'numpy' (the instant NumPy "
                     "tier), 'xla' (XLA through PJRT; 'cpu' and 'gpu' also select it) or "
                     "None for the default policy.")
  return _BACKEND_ALIASES[backend]


def default_policy() -> str:
  policy = config.jaxlite_tier
  if policy not in POLICIES:
    raise ValueError(f"jaxlite_tier must be one of {POLICIES}, got {policy!r}.")
  return policy


_xla_state = {}


def xla_available() -> bool:
  """Whether an XLA plugin loads (checked once; the answer is cached)."""
  if "available" not in _xla_state:
    try:
      from jaxlite._src.backends import xla
      _xla_state["available"] = xla.is_available()
    except Exception as e:  # a missing or broken plugin means tier 0 only
      _xla_state["available"] = False
      _xla_state["reason"] = f"{type(e).__name__}: {e}"
  return _xla_state["available"]


def compile_xla(closed, name):
  """Compile ``closed`` with XLA; a clear error when no plugin is installed."""
  from jaxlite._src.backends import xla
  if not xla_available():
    reason = _xla_state.get("reason") or xla.unavailable_reason()
    raise RuntimeError(f"The XLA tier is not available: {reason}")
  return xla.compile(closed, name)


_executor = None
_executor_lock = threading.Lock()


def submit(fn, *args):
  """Run ``fn(*args)`` on the background compile thread."""
  global _executor
  with _executor_lock:
    if _executor is None:
      _executor = concurrent.futures.ThreadPoolExecutor(
          max_workers=1, thread_name_prefix="jaxlite-xla-compile")
  return _executor.submit(fn, *args)


class Race:
  """Alternates two tiers on real calls, then installs the faster one as ``entry.run``."""
  TRIALS = 3

  def __init__(self, entry, numpy_run, xla_run):
    self.entry = entry
    self.runs = {"numpy": numpy_run, "xla": xla_run}
    self.times = {"numpy": [], "xla": []}
    self.calls = 0
    self.lock = threading.Lock()

  def __call__(self, *args):
    with self.lock:
      tier = ("numpy", "xla")[self.calls % 2]
      self.calls += 1
    t0 = time.perf_counter()
    out = self.runs[tier](*args)
    elapsed = time.perf_counter() - t0
    with self.lock:
      self.times[tier].append(elapsed)
      if self.entry.run is self and all(len(t) >= self.TRIALS for t in self.times.values()):
        medians = {t: statistics.median(v) for t, v in self.times.items()}
        best = min(medians, key=medians.get)
        self.entry.tier_ms = {t: m * 1e3 for t, m in medians.items()}
        self.entry.tier = best
        self.entry.run = self.runs[best]
    return out
