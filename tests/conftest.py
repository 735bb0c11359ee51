import pytest

from jaxlite import config


@pytest.fixture
def x64():
  """Call ``x64(True)`` to run the test with 64-bit types; restored afterwards."""
  old = config.jax_enable_x64

  def set_flag(value=True):
    config.update("jax_enable_x64", bool(value))
  yield set_flag
  config.update("jax_enable_x64", old)
