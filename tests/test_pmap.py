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


@pytest.mark.parametrize("backend", ["numpy", None])
def test_pmap_lower_compile_as_jax(backend):
  # as JAX 0.10.2: pmap(f).lower(*args) is a jax.stages.Lowered whose compile() is a
  # Compiled that runs the program on arguments of that signature and refuses others
  import jaxlite.numpy as jnp
  f = jax.pmap(lambda x, y: 2 * x + y, in_axes=(0, None), backend=backend)
  x = jnp.array([3])
  lowered = f.lower(x, 4)
  assert isinstance(lowered, jax.stages.Lowered)
  from jaxlite._src import tiers
  on_xla = backend is None and tiers.xla_available()
  assert ('"stablehlo.multiply"' if on_xla else "mul") in lowered.as_text()
  compiled = lowered.compile()
  assert isinstance(compiled, jax.stages.Compiled)
  np.testing.assert_array_equal(np.asarray(compiled(x, 4)), [10])
  np.testing.assert_array_equal(np.asarray(compiled(jnp.array([5]), 1)), [11])
  with pytest.raises(TypeError, match=r"Argument 0 compiled with int32\[1\] and called "
                                      r"with float32\[1\]"):
    compiled(jnp.array([3.0]), 4)
  donating = jax.pmap(lambda v: v * 2, donate_argnums=0, backend=backend)
  y = donating(jnp.ones((1, 3)))
  out = donating.lower(y).compile()(y)
  np.testing.assert_array_equal(np.asarray(out), [[4.0, 4.0, 4.0]])
  assert y.is_deleted()


def test_pmap_compile_passes_compiler_options_to_xla():
  from jaxlite._src import tiers
  import jaxlite.numpy as jnp
  if not tiers.xla_available():
    pytest.skip("XLA options need the XLA tier")
  lowered = jax.pmap(lambda v: v + 1, backend="xla").lower(jnp.ones((1, 2)))
  assert '"stablehlo.add"' in lowered.as_text()
  out = lowered.compile({"xla_cpu_enable_fast_math": True})(jnp.ones((1, 2)))
  np.testing.assert_array_equal(np.asarray(out), [[2.0, 2.0]])
  with pytest.raises(jax.errors.JaxRuntimeError, match="No such compile option: 'bad'"):
    lowered.compile({"bad": 1})


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
