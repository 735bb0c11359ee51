import contextlib
import os

import pytest

from jaxlite import config


@contextlib.contextmanager
def _session_setting(flag, env_var, value):
  """``flag`` set to ``value`` here and, through ``env_var``, in every process a test
  starts; both restored at the end."""
  old, old_env = getattr(config, flag), os.environ.get(env_var)
  config.update(flag, value)
  os.environ[env_var] = str(int(value)) if isinstance(value, bool) else str(value)
  try:
    yield
  finally:
    config.update(flag, old)
    if old_env is None:
      os.environ.pop(env_var, None)
    else:
      os.environ[env_var] = old_env


@pytest.fixture(autouse=True, scope="session")
def _private_compile_cache(tmp_path_factory):
  """Tests never read or write the user's persistent compile cache, nor do the processes
  they start."""
  import jaxlite._src.backends.disk_cache  # noqa: F401  (defines the flag)
  with _session_setting("jaxlite_cache_dir", "JAXLITE_CACHE_DIR",
                        str(tmp_path_factory.mktemp("xla-cache"))):
    yield


@pytest.fixture(autouse=True, scope="session")
def _every_race_runs():
  """Every test races its signatures afresh: a loss of XLA's remembered by one test
  (``tiers.LostRaces``) would keep another's identical signature off XLA, in this process
  or in one a test starts (a subprocess found a loss remembered by an earlier run and never
  compiled XLA). ``tests/test_lost_races.py`` turns the memory back on."""
  from jaxlite._src import tiers  # noqa: F401  (defines the flag)
  with _session_setting("jaxlite_remember_tiers", "JAXLITE_REMEMBER_TIERS", False):
    yield


@pytest.fixture
def x64():
  """Call ``x64(True)`` to run the test with 64-bit types; restored afterwards."""
  old = config.jax_enable_x64

  def set_flag(value=True):
    config.update("jax_enable_x64", bool(value))
  yield set_flag
  config.update("jax_enable_x64", old)


def pytest_collection_modifyitems(config, items):
  """Tests marked ``accelerator`` need a TPU or GPU as the default backend."""
  marked = [item for item in items if "accelerator" in item.keywords]
  if not marked:
    return
  import jaxlite
  platform = jaxlite.default_backend()
  if platform != "cpu":
    return
  skip = pytest.mark.skip(reason=f"no accelerator: the default backend is {platform!r} "
                          "(run tools/accelerator_check.sh on a machine with a TPU or GPU)")
  for item in marked:
    item.add_marker(skip)
