"""pmap and shard_map on 4 and 8 CPU devices, both tiers (cases: spmd_cases.py)."""
import numpy as np
import pytest

import jaxlite as jax
from jaxlite import lax

from spmd_subprocess import run_cases


@pytest.mark.parametrize("n", [4, 8])
def test_pmap_on_n_devices(n):
  run_cases(n, "pmap or collective")


@pytest.mark.parametrize("n", [4, 8])
def test_shard_map_on_n_devices(n):
  run_cases(n, "shard_map")


@pytest.mark.parametrize("backend", ["numpy", None])
def test_pmap_on_the_one_default_device(backend):
  x = np.arange(6.0, dtype=np.float32).reshape(1, 6)
  out = jax.pmap(lambda v: lax.psum(v, "i") * 2, "i", backend=backend)(x)
  np.testing.assert_array_equal(np.asarray(out), x * 2)
  assert out.sharding.device_set == {jax.devices()[0]}
