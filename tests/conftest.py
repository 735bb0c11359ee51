import pytest

from jaxlite import config


@pytest.fixture(autouse=True, scope="session")
def _private_compile_cache(tmp_path_factory):
  """Tests never read or write the user's persistent compile cache."""
  import jaxlite._src.backends.disk_cache  # noqa: F401  (defines the flag)
  old = config.jaxlite_cache_dir
  config.update("jaxlite_cache_dir", str(tmp_path_factory.mktemp("xla-cache")))
  yield
  config.update("jaxlite_cache_dir", old)


@pytest.fixture(autouse=True, scope="session")
def _every_race_runs():
  """Every test races its signatures afresh: a loss of XLA's remembered by one test
  (``tiers.LostRaces``) would keep another's identical signature off XLA.
  ``tests/test_lost_races.py`` turns the memory back on."""
  from jaxlite._src import tiers  # noqa: F401  (defines the flag)
  old = config.jaxlite_remember_tiers
  config.update("jaxlite_remember_tiers", False)
  yield
  config.update("jaxlite_remember_tiers", old)


@pytest.fixture
def x64():
  """Call ``x64(True)`` to run the test with 64-bit types; restored afterwards."""
  old = config.jax_enable_x64

  def set_flag(value=True):
    config.update("jax_enable_x64", bool(value))
  yield set_flag
  config.update("jax_enable_x64", old)
