"""XLA's clear losses in the tier race, remembered across processes (``tiers.LostRaces``)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import config
from jaxlite._src.core import core
from jaxlite._src import tiers

needs_xla = pytest.mark.skipif(not tiers.xla_available(), reason="no XLA plugin installed")


@pytest.fixture
def cache_dir(tmp_path):
  """A cache of this test's own, with the memory on (conftest turns it off)."""
  path = tmp_path / "cache"
  old = config.jaxlite_cache_dir
  config.update("jaxlite_cache_dir", str(path))
  config.update("jaxlite_remember_tiers", True)
  yield path
  config.update("jaxlite_remember_tiers", False)
  config.update("jaxlite_cache_dir", old)


def _entry(fn, *args):
  """The jit cache entry of ``fn`` at ``args`` (tier 0 only: nothing raced here)."""
  f = jax.jit(fn, backend="numpy")
  f.clear_cache()   # (jits of one function share its signatures, as in JAX)
  f(*args)
  [entry] = f._cache.values()
  return entry


def _heavy(x):
  return jnp.sin(x) * jnp.cos(x) + jnp.tanh(x)


def _lose(entry, times=None):
  """Two races (as two processes would run them) that XLA lost clearly."""
  for _ in range(tiers.LostRaces.CONFIRMATIONS):
    tiers.LostRaces(entry).remember(times or {"numpy": 1e-3, "xla": 9e-3}, "numpy")


def test_only_a_clear_loss_of_xlas_is_remembered(cache_dir):
  entry = _entry(_heavy, jnp.ones(100))
  assert tiers.LostRaces(entry).recall() is None
  close = 0.99 * tiers.LostRaces.MARGIN
  tiers.LostRaces(entry).remember({"numpy": 1e-3, "xla": close * 1e-3}, "numpy")
  tiers.LostRaces(entry).remember({"numpy": 2e-3, "xla": 1e-3}, "numpy")   # won
  assert tiers.LostRaces(entry).recall() is None and not list(cache_dir.glob("*.tier"))
  tiers.LostRaces(entry).remember({"numpy": 1e-3, "xla": 3e-3}, "numpy")
  assert tiers.LostRaces(entry).recall() is None   # one race alone is not trusted
  tiers.LostRaces(entry).remember({"numpy": 1e-3, "xla": 3e-3}, "numpy")
  record = tiers.LostRaces(entry).recall()
  assert record["ms"] == pytest.approx({"numpy": 1.0, "xla": 3.0}) and record["count"] == 2
  # a race XLA wins afterwards forgets the loss
  tiers.LostRaces(entry).remember({"numpy": 2e-3, "xla": 1e-3}, "numpy")
  assert tiers.LostRaces(entry).recall() is None
  _lose(entry, {"numpy": 1e-3, "xla": 3e-3})
  # another signature, function or tier-0 set-up races afresh
  assert tiers.LostRaces(_entry(_heavy, jnp.ones(101))).recall() is None
  assert tiers.LostRaces(_entry(lambda x: jnp.sin(x) * jnp.cos(x) - jnp.tanh(x),
                                jnp.ones(100))).recall() is None
  threads = config.jaxlite_tier0_threads
  config.update("jaxlite_tier0_threads", threads + 1)
  try:
    assert tiers.LostRaces(entry).recall() is None
  finally:
    config.update("jaxlite_tier0_threads", threads)
  assert tiers.LostRaces(entry).recall() is not None


def test_a_remembered_loss_expires_and_can_be_turned_off(cache_dir, monkeypatch):
  entry = _entry(_heavy, jnp.ones(100))
  _lose(entry)
  assert tiers.LostRaces(entry).recall() is not None
  for flag in ("jaxlite_remember_tiers", "jaxlite_persistent_cache"):
    config.update(flag, False)
    try:
      assert tiers.LostRaces(entry).key is None and tiers.LostRaces(entry).recall() is None
    finally:
      config.update(flag, True)
  monkeypatch.setattr(tiers.LostRaces, "TTL", 0.0)
  assert tiers.LostRaces(entry).recall() is None


def test_a_corrupt_or_foreign_record_is_ignored(cache_dir):
  entry = _entry(_heavy, jnp.ones(100))
  _lose(entry)
  [path] = cache_dir.glob("*.tier")
  data = bytearray(path.read_bytes())
  data[-2] ^= 0x01   # a flipped bit: the checksum no longer matches
  path.write_bytes(bytes(data))
  assert tiers.LostRaces(entry).recall() is None and not path.exists()
  _lose(entry)
  os.chmod(path, 0o666)   # writable by others: not trusted
  assert tiers.LostRaces(entry).recall() is None
  from jaxlite._src.backends import disk_cache
  disk_cache.put(tiers.LostRaces(entry).key, b'{"at": "yesterday"}', kind=".tier")
  assert tiers.LostRaces(entry).recall() is None


def test_functions_with_effects_are_never_remembered(cache_dir):
  entry = _entry(lambda x: jax.debug.callback(print, x) or x, jnp.ones(3))
  assert tiers.LostRaces(entry).key is None


def test_the_key_is_the_same_in_every_process():
  # A dtype's hash differs between processes: an aval must not pickle its cached hash
  # (the compile server unpickles avals too).
  code = ("import jaxlite as jax, jaxlite.numpy as jnp\n"
          "from jaxlite._src import tiers\n"
          "def heavy(x):\n"
          "  return jnp.sum(jnp.sin(x) * jnp.cos(x) + jnp.tanh(x) * 2.0)\n"
          "f = jax.jit(heavy, backend='numpy')\n"
          "f(jnp.ones(100_000))\n"
          "[entry] = f._cache.values()\n"
          "print(tiers.LostRaces(entry).key)\n")
  keys = set()
  for seed in ("1", "2"):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "PYTHONHASHSEED": seed,
                                           "JAXLITE_REMEMBER_TIERS": "1"})
    assert out.returncode == 0, out.stderr[-2000:]
    keys.add(out.stdout.strip())
  assert len(keys) == 1 and len(keys.pop()) == 64


def test_an_aval_unpickled_elsewhere_hashes_as_one_made_there():
  aval = core.ShapedArray((2, 3), np.float32, weak_type=True)
  hash(aval)   # caches the hash
  code = ("import pickle, sys, numpy as np\n"
          "from jaxlite._src.core import core\n"
          "aval = pickle.loads(sys.stdin.buffer.read())\n"
          "fresh = core.ShapedArray((2, 3), np.float32, weak_type=True)\n"
          "print(aval == fresh and hash(aval) == hash(fresh) and {fresh: 1}.get(aval) == 1)\n")
  import pickle
  out = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(aval),
                       capture_output=True, timeout=120,
                       env={**os.environ, "PYTHONHASHSEED": "7"})
  assert out.returncode == 0, out.stderr[-2000:]
  assert out.stdout.decode().strip() == "True"


_PROGRAM = """
import sys, time, numpy as np
import jaxlite as jax, jaxlite.numpy as jnp
from jaxlite._src import tiers
from jaxlite._src.backends import compile_server
tiers.Probe.BUDGET = 0.0   # any execution earns a compile
if sys.argv[1] == "slow-xla":   # every XLA run takes 20 ms: XLA loses its race clearly
  xla_contender = tiers.xla_contender
  def slow_xla_contender(entry, run):
    _, call = xla_contender(entry, run)
    return run, lambda leaves: time.sleep(0.02) or call(leaves)
  tiers.xla_contender = slow_xla_contender
f = jax.jit(lambda x: jnp.sin(x) * jnp.cos(x) + jnp.tanh(x))
x = jnp.linspace(0, 1, 1000)
expected = np.sin(np.asarray(x)) * np.cos(np.asarray(x)) + np.tanh(np.asarray(x))
deadline = time.time() + 60
while True:
  np.testing.assert_allclose(f(x), expected, rtol=1e-6)
  if tiers.settled(f) or time.time() > deadline:
    break
  time.sleep(0.005)
row = f.stats()[0]
print(row["tier"], sorted(row["compile_ms"]), "jaxlite._src.backends.xla" in sys.modules,
      compile_server._server is not None)
print(row["note"])
"""


@needs_xla
def test_a_later_process_keeps_a_signature_xla_lost_on_tier_0_without_xla(tmp_path):
  env = {**os.environ, "JAXLITE_CACHE_DIR": str(tmp_path / "shared"),
         "JAXLITE_REMEMBER_TIERS": "1"}   # (the suite turns the memory off: conftest)

  def run(mode, **extra):
    out = subprocess.run([sys.executable, "-c", _PROGRAM, mode], capture_output=True,
                         text=True, timeout=180, env={**env, **extra})
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.splitlines()
  # raced in this process (no compile server), where XLA is slowed down; one race alone
  # is not trusted: the next process races again
  for _ in range(tiers.LostRaces.CONFIRMATIONS):
    first = run("slow-xla", JAXLITE_COMPILE_SERVER="0")
    assert first[0].startswith("numpy ['numpy', 'xla'] True"), first
    assert len(list((tmp_path / "shared").glob("*.tier"))) == 1
  # the same program again: tier 0 at once; XLA never compiled, loaded or started
  second = run("plain")
  assert second[0] == "numpy ['numpy'] False False", second
  assert "XLA lost this signature's race in an earlier process" in second[1]
  # not remembered: the race runs again (the slow path that the memory skips)
  third = run("plain", JAXLITE_REMEMBER_TIERS="0")
  assert "'xla'" in third[0] and "earlier process" not in third[1], third
