"""The persistent on-disk cache: compiled XLA executables (``.bin``) and the tier races'
remembered losses (``.tier``, ``tiers.LostRaces``).

A second process running the same program skips XLA's compiler. The cache is a trust
boundary: whoever can write an entry can make this process run code. So the directory is
created user-only (0700), entries are written atomically with user-only permissions, an
entry is refused unless it is owned by this user and not writable by others, and its
checksum is verified before it is used. A corrupt or foreign entry is dropped (and
recompiled). An executable is keyed by the sha256 of the StableHLO text, the plugin's XLA
version, the compile options and the device kind (``key``); the directory is kept under
a size bound by evicting the least recently used entries (each process may overshoot it
by a ``SWEEPS``-th).
"""
from __future__ import annotations

import logging
import os
import stat
import tempfile
import time

from jaxlite._src.base.config import config

logger = logging.getLogger("jaxlite")

_MAGIC = b"JAXLITE-XLA-CACHE-1\n"
_DIGEST = 32
_KINDS = (".bin", ".tier")   # the suffixes of entries, by what they hold


try:
  from _blake2 import blake2b as _blake2b   # what hashlib.blake2b is, without OpenSSL
except ImportError:
  from hashlib import blake2b as _blake2b


def _hasher(kind: str = ".bin"):
  """A new hash of ``kind``'s checksums and keys (32 bytes): sha256 for executables, as
  ever; BLAKE2b for the small entries read on tier 0's side, where importing hashlib
  (OpenSSL: 3-5 ms, holding the GIL on the compile thread) stalled the callers' calls."""
  if kind == ".bin":
    import hashlib
    return hashlib.sha256()
  return _blake2b(digest_size=_DIGEST)


# The options (jax_compilation_cache_dir, jax_persistent_cache_min_compile_time_secs,
# jaxlite_persistent_cache, jaxlite_cache_dir, jaxlite_cache_max_bytes) are defined in
# config, so they can be set before this module loads.


def cache_dir() -> str:
  chosen = config.jax_compilation_cache_dir or config.jaxlite_cache_dir
  if chosen:
    return chosen
  base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
  return os.path.join(base, "jaxlite", "xla")


def key(*parts, kind: str = ".bin") -> str:
  """The hash of ``parts`` (each ``str`` or bytes-like), each prefixed by its length: the
  name of an entry of ``kind`` (sha256 for executables)."""
  h = _hasher(kind)
  for part in parts:
    part = part.encode() if isinstance(part, str) else memoryview(part).cast("B")
    h.update(len(part).to_bytes(8, "little"))
    h.update(part)
  return h.hexdigest()


def _trusted_dir(path: str) -> bool:
  """Create ``path`` user-only if missing; refuse it if another user could write it."""
  try:
    os.makedirs(path, mode=0o700, exist_ok=True)
    st = os.stat(path)
  except OSError as e:
    logger.warning("persistent compile cache disabled: cannot use %s (%s)", path, e)
    return False
  if st.st_uid != os.getuid() or st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
    logger.warning("persistent compile cache disabled: %s is not owned by this user or is "
                   "writable by others; fix its permissions (chmod 700) to enable it", path)
    return False
  return True


def _trusted_file(path: str) -> bool:
  st = os.lstat(path)
  return (stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid()
          and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH))


def get(entry_key: str, kind: str = ".bin") -> bytes | None:
  """The payload stored under ``entry_key`` (a serialized executable, or another
  ``kind``), or None (missing, foreign or corrupt entries are dropped)."""
  if not config.jaxlite_persistent_cache:
    return None
  directory = cache_dir()
  path = os.path.join(directory, entry_key + kind)
  if not os.path.exists(path) or not _trusted_dir(directory):
    return None
  try:
    if not _trusted_file(path):
      logger.warning("persistent compile cache: ignoring %s (not owned by this user or "
                     "writable by others)", path)
      return None
    with open(path, "rb") as f:
      blob = f.read()
  except OSError:
    return None
  header = len(_MAGIC) + _DIGEST
  payload = blob[header:]
  if blob[:len(_MAGIC)] != _MAGIC or _checksum(payload, kind) != \
      blob[len(_MAGIC):header]:
    logger.warning("persistent compile cache: dropping corrupt entry %s", path)
    _remove(path)
    return None
  try:
    os.utime(path)   # recently used: evicted last
  except OSError:
    pass
  return payload


def _checksum(payload: bytes, kind: str) -> bytes:
  h = _hasher(kind)
  h.update(payload)
  return h.digest()


def put(entry_key: str, payload: bytes, compile_secs: float = float("inf"),
        kind: str = ".bin") -> None:
  """Store ``payload`` atomically (a reader never sees half an entry), unless it compiled
  faster than ``jax_persistent_cache_min_compile_time_secs`` (untimed payloads are kept)."""
  if not config.jaxlite_persistent_cache:
    return
  if compile_secs < (config.jax_persistent_cache_min_compile_time_secs or 0.0):
    return
  directory = cache_dir()
  if not _trusted_dir(directory):
    return
  blob = _MAGIC + _checksum(payload, kind) + payload
  try:
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    with os.fdopen(fd, "wb") as f:   # mkstemp creates the file with mode 0600
      f.write(blob)
    os.replace(tmp, os.path.join(directory, entry_key + kind))
  except OSError as e:
    logger.warning("persistent compile cache: could not write an entry (%s)", e)
    return
  written = _unswept.get(directory, 0) + len(blob)
  if written * SWEEPS >= config.jaxlite_cache_max_bytes:
    written = 0
    _evict(directory)
  _unswept[directory] = written


# The size bound is kept by sweeping the directory (``_evict``: a listing and a stat of
# every entry) once this process has written a SWEEPS-th of the bound since its last sweep,
# not at every write: with thousands of entries a sweep takes milliseconds, and a race's
# remembered loss (a 0.1 kB entry, written in the caller's process) paid for one each
# time. Each process may so overshoot the bound by a SWEEPS-th of it.
SWEEPS = 32
_unswept = {}   # directory -> bytes this process wrote there since it last swept it


def _remove(path):
  try:
    os.remove(path)
  except OSError:
    pass


# A writer ended mid-entry (the compile server is killed when its caller exits) leaves its
# temporary file: one this old is not being written any more.
_STALE_TMP_S = 600.0


def _evict(directory):
  """Remove the least recently used entries beyond the size bound, and the temporary files
  of writers that ended mid-entry."""
  try:
    names = os.listdir(directory)
    stats = ((os.stat(p), p) for p in (os.path.join(directory, n) for n in names
                                        if n.endswith(_KINDS)))
    sized = sorted((st.st_mtime, st.st_size, p) for st, p in stats)
  except OSError:
    return
  now = time.time()
  for tmp in (os.path.join(directory, n) for n in names if n.startswith(".tmp-")):
    try:
      if now - os.stat(tmp).st_mtime > _STALE_TMP_S:
        os.remove(tmp)
    except OSError:   # renamed into place or removed meanwhile
      pass
  total = sum(size for _, size, _ in sized)
  limit = config.jaxlite_cache_max_bytes
  for _, size, path in sized:
    if total <= limit:
      break
    _remove(path)
    total -= size


def clear() -> None:
  """Remove every entry of the persistent cache."""
  directory = cache_dir()
  if os.path.isdir(directory):
    for name in os.listdir(directory):
      if name.endswith(_KINDS):
        _remove(os.path.join(directory, name))
