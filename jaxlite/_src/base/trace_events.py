"""The events of a profiler trace (``jax.profiler.start_trace``) while one records.

``recording`` is the active ``Recording`` or None. Code that marks a span checks it first,
so a span costs one global read when no trace is active; ``jax.profiler`` starts and stops
the recording and writes its events out.
"""
from __future__ import annotations

import threading
import time

recording: Recording | None = None


class Recording:
  """The spans recorded since ``start``: (name, thread id, start ns, end ns, args)."""

  def __init__(self):
    self.start_ns = time.perf_counter_ns()
    self.start_wall_ns = time.time_ns()
    self.events = []   # (list.append is atomic: threads record without a lock)
    self.thread_names = {}

  def add(self, name, start_ns, end_ns, args=None):
    """Record a span of the calling thread."""
    ident = threading.get_native_id()   # (small ids, as trace viewers expect)
    if ident not in self.thread_names:
      self.thread_names[ident] = threading.current_thread().name
    self.events.append((name, ident, start_ns, end_ns, args))


def start() -> Recording:
  """Start a recording (the caller checks that none is active)."""
  global recording
  recording = Recording()
  return recording


def stop() -> Recording:
  """Stop the active recording and return it."""
  global recording
  done, recording = recording, None
  return done


class span:
  """``with span(name, **args):`` records the enclosed code as a span of the active
  recording (nothing when none is active)."""
  __slots__ = ("name", "args", "start_ns")

  def __init__(self, name, **args):
    self.name = name
    self.args = args

  def __enter__(self):
    self.start_ns = None if recording is None else time.perf_counter_ns()
    return self

  def __exit__(self, *exc):
    active = recording   # (read once: another thread may stop the trace meanwhile)
    if active is not None and self.start_ns is not None:
      active.add(self.name, self.start_ns, time.perf_counter_ns(), self.args)
