"""Devices, shardings, device_put and sharded jit on 4 and 8 CPU devices, both tiers
(cases: spmd_cases.py), and the one-device defaults in this process."""
import os
import subprocess
import sys

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite._src import tiers
from jaxlite.sharding import NamedSharding, PartitionSpec as P, SingleDeviceSharding

from spmd_subprocess import run_cases


@pytest.mark.parametrize("n", [4, 8])
def test_devices_and_shardings_on_n_devices(n):
  run_cases(n, "not pmap and not collective and not shard_map")


def test_default_is_one_device():
  assert jax.device_count() == 1 and jax.local_device_count() == 1


def test_single_device_sharding():
  x = jnp.arange(3.0)
  assert x.sharding == SingleDeviceSharding(jax.devices()[0])
  assert x.is_fully_replicated and len(x.addressable_shards) == 1
  mesh = jax.make_mesh((1,), ("x",))
  y = jax.device_put(np.arange(4.0), NamedSharding(mesh, P("x")))
  np.testing.assert_array_equal(np.asarray(y), np.arange(4.0))
  assert y.sharding.spec == P("x")


def test_sharded_jit_on_one_device_runs_the_plain_jit():
  mesh = jax.make_mesh((1,), ("x",))
  f = jax.jit(lambda v: v + 1, in_shardings=NamedSharding(mesh, P("x")))
  np.testing.assert_array_equal(np.asarray(f(np.arange(4.0))), np.arange(4.0) + 1)


def test_sharded_jit_on_one_device_keeps_its_static_arguments():
  # nnx.jit passes in_shardings (one per dynamic argument) with static_argnames: the
  # statics reach the function, and the dynamic arguments stay dynamic (JAX 0.10.2: [1., 4.])
  f = jax.jit(lambda scale, x, d: {"y": x["v"] * scale + d}, static_argnames=("scale",),
              in_shardings=(None, None))
  np.testing.assert_array_equal(f(3.0, {"v": jnp.arange(2.0)}, 1.0)["y"], [1.0, 4.0])
  np.testing.assert_array_equal(f(2.0, {"v": jnp.arange(2.0)}, 0.0)["y"], [0.0, 2.0])


def test_distributed_initialize_is_one_process_only():
  with pytest.raises(RuntimeError, match="jaxlite runs in one process"):
    jax.distributed.initialize("localhost:1234", num_processes=2, process_id=0)
  jax.distributed.initialize(num_processes=1, process_id=0)
  try:
    assert jax.distributed.is_initialized() and jax.process_count() == 1
  finally:
    jax.distributed.shutdown()


def test_one_device_processes_skip_the_walk_for_layouts_over_devices():
  # no Mesh of several devices can be made here: jit's trace does not look for layouts
  # over devices (the walk is checked where meshes exist: spmd_cases.py)
  from jaxlite._src import jit as jit_mod
  from jaxlite._src.base import mesh_context
  assert not mesh_context.several_devices
  closed = jax.make_jaxpr(lambda v: jnp.sin(v) * 2.0)(jnp.ones(3))
  assert not jit_mod.constrains_over_devices(closed.jaxpr)
  assert not jit_mod._constrains_over_devices(closed.jaxpr)


def test_sharded_jit_compiles_with_shardy_as_jax(tmp_path):
  # JAX 0.10.2 hands XLA Shardy's (sdy) shardings; with GSPMD's mhlo.sharding strings XLA
  # logs that GSPMD is deprecated on every sharded compile
  if not tiers.xla_available():
    pytest.skip("no XLA plugin")
  code = ("import numpy as np, jaxlite as jax\n"
          "from jaxlite.sharding import NamedSharding, PartitionSpec as P\n"
          "mesh = jax.make_mesh((2,), ('x',), axis_types=(jax.sharding.AxisType.Auto,))\n"
          "f = jax.jit(lambda a: (a * 2).sum(0), backend='xla',\n"
          "            in_shardings=NamedSharding(mesh, P('x')))\n"
          "print(np.asarray(f(np.arange(8.).reshape(4, 2))).tolist())\n")
  env = dict(os.environ, JAX_NUM_CPU_DEVICES="2", JAXLITE_CACHE_DIR=str(tmp_path))
  out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       timeout=300)
  assert out.returncode == 0, out.stderr
  assert out.stdout.strip() == "[24.0, 32.0]"
  assert "GSPMD" not in out.stderr, out.stderr
