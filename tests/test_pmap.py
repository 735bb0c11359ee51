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


def test_pmap_digits_example_matches_one_device():
  pytest.importorskip("sklearn")
  import os
  import subprocess
  import sys
  from spmd_subprocess import ROOT
  env = dict(os.environ, PYTHONPATH=str(ROOT), TF_CPP_MIN_LOG_LEVEL="2")
  env.pop("XLA_FLAGS", None)
  env.pop("JAX_NUM_CPU_DEVICES", None)
  proc = subprocess.run([sys.executable, str(ROOT / "examples" / "pmap_digits.py"),
                         "--quick"], cwd=ROOT, env=env, capture_output=True, text=True,
                        timeout=600)
  assert proc.returncode == 0, proc.stdout + proc.stderr
  assert "the three loss curves agree to float32 rounding" in proc.stdout


def test_everything_runs_on_tier_0_when_xla_is_off():
  run_cases(4, "pmap or collective or shard_map or jit or device_put", xla=False)
