"""XSpace, the protocol buffer of JAX's profiler traces (``<host>.xplane.pb``, TSL's
xplane.proto): written from a trace's recording, and read back as JAX's ``ProfileData``
/ ``ProfilePlane`` / ``ProfileEvent`` (jaxlib's ``_profile_data``).

A space holds planes (a host, a device, the session's environment); a plane holds lines
(threads) and the metadata its events and stats name by id; an event holds its offset
and duration in picoseconds from its line's timestamp, and its stats (typed values).
"""
from __future__ import annotations

import os

from jaxlite._src.base import protobuf
from jaxlite._src.base.errors import JaxRuntimeError

HOST_PLANE = "/host:CPU"   # JAX's name for the host's plane (TSL's kHostThreadsPlaneName)


def _stat(metadata_id, value):
  """An XStat: ints as int64, floats as double, str and bytes as such, others as str."""
  if isinstance(value, (bool, int)):
    return protobuf.message([(1, metadata_id), (4, int(value))])
  if isinstance(value, float):
    return protobuf.message([(1, metadata_id), (2, value)])
  if isinstance(value, bytes):
    return protobuf.message([(1, metadata_id), (6, value)])
  return protobuf.message([(1, metadata_id), (5, str(value))])


def serialize_xspace(recording, stop_wall_ns, hostname, pid):
  """The XSpace bytes of a ``trace_events.Recording``: the host plane (a line per
  thread, times from the recording's start) and the 'Task Environment' plane with the
  session's start and stop times, as JAX's profiler writes them."""
  event_ids, stat_ids = {}, {}

  def stat_id(name):
    return stat_ids.setdefault(name, len(stat_ids) + 1)

  by_thread = {}
  for name, tid, t0, t1, args in recording.events:
    t0 = max(t0, recording.start_ns)
    meta = event_ids.setdefault(name, len(event_ids) + 1)
    stats = [(4, _stat(stat_id(k), v)) for k, v in (args or {}).items()]
    by_thread.setdefault(tid, []).append(
        (t0, protobuf.message([(1, meta), (2, (t0 - recording.start_ns) * 1000),
                               (3, (t1 - t0) * 1000)] + stats)))
  lines = []
  for tid, events in sorted(by_thread.items()):
    name = recording.thread_names[tid]
    lines.append((3, protobuf.message(
        [(1, tid), (10, tid), (2, name), (11, name), (3, 0)]
        + [(4, e) for _, e in sorted(events, key=lambda e: e[0])])))
  process_id = stat_id("process_id")
  host = protobuf.message(
      [(1, 0), (2, HOST_PLANE)] + lines
      + [(4, protobuf.message([(1, i), (2, protobuf.message([(1, i), (2, n)]))]))
         for n, i in event_ids.items()]
      + [(5, protobuf.message([(1, i), (2, protobuf.message([(1, i), (2, n)]))]))
         for n, i in stat_ids.items()]
      + [(6, _stat(process_id, pid))])
  environment = protobuf.message(
      [(1, 1), (2, "Task Environment")]
      + [(5, protobuf.message([(1, i), (2, protobuf.message([(1, i), (2, n)]))]))
         for i, n in ((1, "profile_start_time"), (2, "profile_stop_time"))]
      + [(6, _stat(1, recording.start_wall_ns)), (6, _stat(2, stop_wall_ns))])
  return protobuf.message([(1, host), (1, environment), (4, hostname)])


class ProfileEvent:
  """An event of a line: its ``name``, ``start_ns``, ``duration_ns``, ``end_ns`` and
  ``stats`` ((name, value) pairs). Only ``ProfileData`` makes them."""
  __slots__ = ("name", "start_ns", "duration_ns", "_stats")

  def __init__(self, *args, **kwargs):
    raise TypeError("jaxlite.profiler.ProfileEvent: No constructor defined! (events come "
                    "from ProfileData)")

  @classmethod
  def _read(cls, name, start_ns, duration_ns, stats):
    event = object.__new__(cls)
    event.name, event.start_ns, event.duration_ns, event._stats = (
        name, start_ns, duration_ns, stats)
    return event

  @property
  def end_ns(self) -> float:
    return self.start_ns + self.duration_ns

  @property
  def stats(self):
    return iter(self._stats)

  def __repr__(self):
    return f"ProfileEvent({self.name!r}, start_ns={self.start_ns}, duration_ns={self.duration_ns})"


class ProfileLine:
  """A line of a plane (a thread): its ``name`` and ``events``."""
  __slots__ = ("name", "_events")

  def __init__(self, *args, **kwargs):
    raise TypeError("jaxlite.profiler ProfileLine: No constructor defined! (lines come "
                    "from ProfileData)")

  @classmethod
  def _read(cls, name, events):
    line = object.__new__(cls)
    line.name, line._events = name, events
    return line

  @property
  def events(self):
    return iter(self._events)


class ProfilePlane:
  """A plane of a profile (a host, a device, the environment): its ``name``, ``lines``
  and ``stats`` ((name, value) pairs). Only ``ProfileData`` makes them."""
  __slots__ = ("name", "_lines", "_stats")

  def __init__(self, *args, **kwargs):
    raise TypeError("jaxlite.profiler.ProfilePlane: No constructor defined! (planes come "
                    "from ProfileData)")

  @classmethod
  def _read(cls, name, lines, stats):
    plane = object.__new__(cls)
    plane.name, plane._lines, plane._stats = name, lines, stats
    return plane

  @property
  def lines(self):
    return iter(self._lines)

  @property
  def stats(self):
    return iter(self._stats)


def _metadata_names(plane_fields, number):
  """A plane's metadata map (field ``number``: id -> message with the name as field 2)."""
  names = {}
  for entry in protobuf.repeated(plane_fields, number):
    entry = dict(protobuf.fields(entry))
    names[protobuf.int64(entry.get(1, 0))] = dict(protobuf.fields(entry.get(2, b""))).get(
        2, b"").decode()
  return names


def _stat_value(stat, stat_names):
  for n, v in stat:
    if n == 2:
      return protobuf.double(v)
    if n == 3:
      return v
    if n == 4:
      return protobuf.int64(v)
    if n == 5:
      return v.decode()
    if n == 6:   # (bytes read as a str, as JAX's reader gives them)
      return bytes(v).decode("utf-8", "replace")
    if n == 7:   # a reference to a stat metadata, whose name is the value
      return stat_names.get(v, "")
  return None


def _stats(encoded, stat_names):
  out = []
  for stat in encoded:
    stat = protobuf.fields(stat)
    meta = dict(stat).get(1, 0)
    out.append((stat_names.get(protobuf.int64(meta), ""), _stat_value(stat, stat_names)))
  return out


def _plane(encoded):
  f = protobuf.fields(encoded)
  event_names, stat_names = _metadata_names(f, 4), _metadata_names(f, 5)
  lines = []
  for line in protobuf.repeated(f, 3):
    lf = protobuf.fields(line)
    attrs = dict(lf)
    timestamp_ps = protobuf.int64(attrs.get(3, 0)) * 1000
    events = []
    for event in protobuf.repeated(lf, 4):
      ef = protobuf.fields(event)
      e = dict(ef)
      start = (timestamp_ps + protobuf.int64(e.get(2, 0))) / 1000
      events.append(ProfileEvent._read(
          event_names.get(protobuf.int64(e.get(1, 0)), ""), start,
          protobuf.int64(e.get(3, 0)) / 1000, _stats(protobuf.repeated(ef, 4), stat_names)))
    lines.append(ProfileLine._read(attrs.get(2, b"").decode(), events))
  return ProfilePlane._read(dict(f).get(2, b"").decode(), lines,
                            _stats(protobuf.repeated(f, 6), stat_names))


class ProfileData:
  """A profile read from XSpace bytes (``<host>.xplane.pb``, JAX's or jaxlite's).

  Parameters
  ----------
  serialized_xspace : bytes
    The encoded XSpace.
  """

  def __init__(self, serialized_xspace: bytes, /):
    try:
      space = protobuf.fields(bytes(serialized_xspace))
      self._planes = [_plane(p) for n, p in space if n == 1]
    except (ValueError, IndexError, UnicodeDecodeError):
      raise RuntimeError("Failed to parse XSpace from array") from None

  @classmethod
  def from_serialized_xspace(cls, serialized_xspace: bytes) -> ProfileData:
    """The profile of XSpace bytes."""
    return cls(serialized_xspace)

  @classmethod
  def from_file(cls, proto_file_path: str) -> ProfileData:
    """The profile of an XSpace file (``<host>.xplane.pb``)."""
    try:
      with open(proto_file_path, "rb") as f:
        return cls(f.read())
    except FileNotFoundError:
      raise JaxRuntimeError(f"NOT_FOUND: {os.fspath(proto_file_path)}; No such file or "
                            "directory") from None

  @classmethod
  def from_text_proto(cls, text_proto: str) -> ProfileData:
    raise NotImplementedError(_NO_TEXT_PROTO)

  @staticmethod
  def text_proto_to_serialized_xspace(text_proto: str) -> bytes:
    raise NotImplementedError(_NO_TEXT_PROTO)

  @classmethod
  def from_raw_cpp_ptr(cls, raw_proto_ptr):
    raise NotImplementedError("ProfileData.from_raw_cpp_ptr reads an XSpace in C++ "
                              "memory (jaxlib's); jaxlite's are bytes: use "
                              "ProfileData.from_serialized_xspace.")

  @property
  def planes(self):
    return iter(self._planes)

  def find_plane_with_name(self, name: str) -> ProfilePlane | None:
    """The first plane named ``name``, or None."""
    return next((p for p in self._planes if p.name == name), None)


_NO_TEXT_PROTO = ("jaxlite reads XSpace in the binary wire format only (ProfileData, "
                  "from_serialized_xspace, from_file), not protobuf's text format.")
