"""Listeners for named events (``jax.monitoring``), as in JAX 0.10.2.

Code marks a point with ``record_event(name, **metadata)`` (or a duration, a time span, a
scalar); every listener registered for that kind of record is called with it, in
registration order. jaxlite records no events of its own yet.
"""
from __future__ import annotations

_event_listeners: list = []
_event_duration_secs_listeners: list = []
_event_time_span_listeners: list = []
_scalar_listeners: list = []


def record_event(event: str, **kwargs) -> None:
  """Call every event listener with ``(event, **kwargs)``."""
  for callback in list(_event_listeners):
    callback(event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs) -> None:
  """Call every duration listener with ``(event, duration, **kwargs)``."""
  for callback in list(_event_duration_secs_listeners):
    callback(event, duration, **kwargs)


def record_event_time_span(event: str, start_time: float, end_time: float, **kwargs) -> None:
  """Call every time-span listener with ``(event, start_time, end_time, **kwargs)``."""
  for callback in list(_event_time_span_listeners):
    callback(event, start_time, end_time, **kwargs)


def record_scalar(event: str, value, **kwargs) -> None:
  """Call every scalar listener with ``(event, value, **kwargs)``."""
  for callback in list(_scalar_listeners):
    callback(event, value, **kwargs)


def register_event_listener(callback) -> None:
  _event_listeners.append(callback)


def register_event_duration_secs_listener(callback) -> None:
  _event_duration_secs_listeners.append(callback)


def register_event_time_span_listener(callback) -> None:
  _event_time_span_listeners.append(callback)


def register_scalar_listener(callback) -> None:
  _scalar_listeners.append(callback)


def get_event_listeners() -> list:
  return list(_event_listeners)


def get_event_duration_listeners() -> list:
  return list(_event_duration_secs_listeners)


def get_event_time_span_listeners() -> list:
  return list(_event_time_span_listeners)


def get_scalar_listeners() -> list:
  return list(_scalar_listeners)


def _unregister(listeners, callback):
  assert callback in listeners   # JAX's check: an AssertionError for an unknown callback
  listeners.remove(callback)


def unregister_event_listener(callback) -> None:
  _unregister(_event_listeners, callback)


def unregister_event_duration_listener(callback) -> None:
  _unregister(_event_duration_secs_listeners, callback)


def unregister_event_time_span_listener(callback) -> None:
  _unregister(_event_time_span_listeners, callback)


def unregister_scalar_listener(callback) -> None:
  _unregister(_scalar_listeners, callback)


def clear_event_listeners() -> None:
  """Remove every listener. (JAX 0.10.2's leaves the scalar listeners registered, a slip
  of a missing ``global``; jaxlite clears them too.)"""
  for listeners in (_event_listeners, _event_duration_secs_listeners,
                    _event_time_span_listeners, _scalar_listeners):
    listeners.clear()
