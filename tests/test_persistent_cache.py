"""The persistent compile cache: reuse across processes, and its trust boundary."""
import os
import subprocess
import sys
import time

import pytest

from jaxlite import config
from jaxlite._src import tiers
from jaxlite._src.backends import disk_cache as cache


@pytest.fixture
def cache_dir(tmp_path):
  path = tmp_path / "cache"
  old = config.jaxlite_cache_dir
  config.update("jaxlite_cache_dir", str(path))
  yield path
  config.update("jaxlite_cache_dir", old)


def test_round_trip_and_user_only_permissions(cache_dir):
  cache.put("k1", b"payload")
  assert cache.get("k1") == b"payload"
  assert oct(os.stat(cache_dir).st_mode & 0o777) == "0o700"
  assert oct(os.stat(cache_dir / "k1.bin").st_mode & 0o777) == "0o600"
  assert cache.get("missing") is None


def test_corrupt_entry_is_dropped(cache_dir, caplog):
  cache.put("k2", b"payload")
  path = cache_dir / "k2.bin"
  data = bytearray(path.read_bytes())
  data[-1] ^= 0xFF
  path.write_bytes(bytes(data))
  assert cache.get("k2") is None and not path.exists()
  assert "corrupt" in caplog.text


def test_entries_writable_by_others_are_refused(cache_dir, caplog):
  cache.put("k3", b"payload")
  os.chmod(cache_dir / "k3.bin", 0o666)
  assert cache.get("k3") is None and "writable by others" in caplog.text


def test_a_directory_writable_by_others_disables_the_cache(cache_dir, caplog):
  cache.put("k4", b"payload")
  os.chmod(cache_dir, 0o777)
  assert cache.get("k4") is None and "chmod 700" in caplog.text


def test_size_bound_evicts_least_recently_used(cache_dir):
  old = config.jaxlite_cache_max_bytes
  config.update("jaxlite_cache_max_bytes", 300)
  try:
    for i in range(5):
      cache.put(f"e{i}", b"x" * 100)
      os.utime(cache_dir / f"e{i}.bin", (i, i))
    remaining = sorted(p.name for p in cache_dir.glob("*.bin"))
  finally:
    config.update("jaxlite_cache_max_bytes", old)
  assert remaining and "e4.bin" in remaining and "e0.bin" not in remaining
  assert sum((cache_dir / n).stat().st_size for n in remaining) <= 300


def test_the_bound_is_kept_by_a_sweep_per_share_of_it_written(cache_dir):
  # a sweep lists and stats every entry: it runs once a SWEEPS-th of the bound has been
  # written by this process since the last, so the bound is overshot by that much at most
  old = config.jaxlite_cache_max_bytes
  share = 1000
  config.update("jaxlite_cache_max_bytes", cache.SWEEPS * share)
  try:
    cache.put("first", b"x")   # (makes the directory)
    os.utime(cache_dir / "first.bin", (0, 0))   # the least recently used
    sizes = []
    for i in range(3 * cache.SWEEPS):
      cache.put(f"e{i}", b"x" * 500)   # (about half a share each)
      sizes.append(sum(p.stat().st_size for p in cache_dir.glob("*.bin")))
  finally:
    config.update("jaxlite_cache_max_bytes", old)
  bound = cache.SWEEPS * share
  assert not (cache_dir / "first.bin").exists()   # evicted, by a sweep
  assert max(sizes) <= bound + 2 * share
  assert any(size > bound for size in sizes)   # a write that did not sweep


def test_a_writer_killed_mid_entry_leaves_no_file_for_long(cache_dir):
  old = config.jaxlite_cache_max_bytes
  # every write of a small entry sweeps (a 32nd of the bound is under 59 bytes), and
  # the entries fit within the bound
  config.update("jaxlite_cache_max_bytes", 1000)
  try:
    cache.put("k5", b"first")   # (makes the directory, as its owner's)
    stale, fresh = cache_dir / ".tmp-stale", cache_dir / ".tmp-fresh"
    stale.write_bytes(b"half an entry")
    fresh.write_bytes(b"being written")
    os.utime(stale, (time.time() - 3600, time.time() - 3600))
    cache.put("k6", b"payload")   # a sweep looks for stale ones
  finally:
    config.update("jaxlite_cache_max_bytes", old)
  assert not stale.exists() and fresh.exists()
  assert cache.get("k6") == b"payload"


def test_disabled_cache_stores_nothing(cache_dir):
  config.update("jaxlite_persistent_cache", False)
  try:
    cache.put("k5", b"payload")
    assert cache.get("k5") is None
  finally:
    config.update("jaxlite_persistent_cache", True)


@pytest.mark.skipif(not tiers.xla_available(), reason="no XLA plugin installed")
def test_a_second_process_skips_the_xla_compiler(tmp_path):
  code = ("import jaxlite as jax, jaxlite.numpy as jnp\n"
          "f = jax.jit(lambda x: jnp.sin(x) * 3 + 1, backend='xla')\n"
          "print(float(f(jnp.ones(4))[0]), f.stats()[0]['note'])\n")
  env = {**os.environ, "JAXLITE_CACHE_DIR": str(tmp_path / "shared")}
  runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=120) for _ in range(2)]
  for r in runs:
    assert r.returncode == 0, r.stderr[-2000:]
  assert "persistent compile cache" not in runs[0].stdout
  assert "loaded from the persistent compile cache" in runs[1].stdout
  assert runs[0].stdout.split()[0] == runs[1].stdout.split()[0]
