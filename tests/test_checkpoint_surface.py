"""What orbax (and through it flax's checkpoints) takes from JAX: colocated Python, the
TensorStore array serialization, devices' memories and device lists, ``pjit``, the
distributed state and IFRT program descriptions. Expected values and messages were
recorded from JAX 0.10.2 on the CPU."""
import os
import pathlib
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
import jaxlite.experimental.colocated_python as cp
from jaxlite.experimental.array_serialization import serialization
from jaxlite.experimental.layout import Format, Layout
from jaxlite.sharding import Mesh, NamedSharding, PartitionSpec, SingleDeviceSharding

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_colocated_python_runs_on_the_arguments_devices():
  calls = []

  @cp.colocated_python
  def add_one(x):
    calls.append(x.sharding)
    return x + 1

  x = jnp.arange(3.0)
  y = add_one(x)
  np.testing.assert_array_equal(np.asarray(y), [1.0, 2.0, 3.0])   # JAX: [1. 2. 3.]
  assert y.sharding == x.sharding and calls == [x.sharding]
  assert add_one.__name__ == "add_one"
  np.testing.assert_array_equal(
      np.asarray(add_one.specialize(out_specs_fn=lambda x: x)(x)), [1.0, 2.0, 3.0])


def test_colocated_python_errors_are_jaxs():
  @cp.colocated_python
  def ones():
    return jnp.ones(2)

  with pytest.raises(ValueError, match="No devices found. colocated_python function without "
                     "input arguments must be first specialized with devices."):
    ones()
  np.testing.assert_array_equal(np.asarray(ones.specialize(devices=jax.devices())()), [1, 1])
  with pytest.raises(ValueError, match="devices already specified"):
    ones.specialize(devices=jax.devices()).specialize(devices=jax.devices())
  with pytest.raises(ValueError, match="colocated_python only supports jax.Array as input "
                     "and output, but got <class 'float'>"):
    cp.colocated_python(lambda x: x)(1.0)
  wrong = cp.colocated_python(lambda x: x).specialize(
      out_specs_fn=lambda x: jax.ShapeDtypeStruct((4,), jnp.float32))
  with pytest.raises(ValueError, match="out_specs_fn gives"):
    wrong(jnp.ones(3))


def test_colocated_cpu_devices():
  devices = jax.devices()
  assert cp.colocated_cpu_devices(devices) == devices   # JAX: [CpuDevice(id=0)]
  mesh = cp.colocated_cpu_devices(Mesh(devices, ("x",)))
  assert isinstance(mesh, Mesh) and mesh.axis_names == ("x",)
  assert list(mesh.devices.flat) == devices


def test_colocated_python_class_makes_its_object_once():
  made = []

  @cp.colocated_python_class
  class Adder:
    def __init__(self, a):
      made.append(a)
      self.a = a

    def add(self, x):
      return x + self.a

  adder = Adder(3.0)
  assert made == []   # (made on the first method call, as JAX's)
  np.testing.assert_array_equal(np.asarray(adder.add(jnp.arange(3.0))), [3.0, 4.0, 5.0])
  adder.add(jnp.ones(1))
  assert made == [3.0] and Adder.__name__ == "Adder"


def test_memories_and_device_lists():
  device = jax.devices()[0]
  memory = device.default_memory()
  assert repr(memory) == "CPU_DEVICE_0"
  assert str(memory) == "CpuDeviceMemory(id=0, process_index=0, client=cpu)"
  assert device.addressable_memories() == [memory] and memory.kind == "device"
  assert memory.addressable_by_devices() == [device] and device.memory("device") == memory
  with pytest.raises(jax.errors.JaxRuntimeError, match="Could not find memory addressable "
                     "by device cpu.*Got memory kind: pinned"):
    device.memory("pinned")
  sharding = SingleDeviceSharding(device)
  assert sharding._internal_device_list == (device,) and repr(
      sharding._internal_device_list) == "(CpuDevice(id=0),)"
  assert sharding._internal_device_list.device_kind == "cpu"
  assert sharding._addressable_device_assignment == (device,)


def test_device_put_takes_a_format():
  sharding = NamedSharding(Mesh(jax.devices(), ("x",)), PartitionSpec())
  y = jax.device_put(jnp.arange(4.0), Format(None, sharding))
  assert y.sharding == sharding
  # a column-major layout, as JAX 0.10.2 lays it out (values unchanged)
  z = jax.device_put(jnp.arange(6.0).reshape(2, 3), Format(Layout((1, 0)), sharding))
  assert z.format.layout == Layout((1, 0), ())
  assert z.sharding == sharding
  np.testing.assert_array_equal(np.asarray(z), np.arange(6.0).reshape(2, 3))


def test_pjit_is_jit_with_jaxs_deprecation():
  import jaxlite.experimental.pjit as pjit_module
  pjit_module.__getattr__.cache_clear()
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    pjit = pjit_module.pjit
  assert [str(w.message) for w in caught] == [
      "jax.experimental.pjit.pjit has been deprecated. Please use `jax.jit` instead."]
  assert float(pjit(lambda x: x * 2, out_shardings=None)(3.0)) == 6.0


def test_ifrt_program_descriptions():
  from jaxlite.extend.ifrt_programs import ifrt_programs
  program = ifrt_programs.make_plugin_program("data")
  assert isinstance(program, ifrt_programs.Program) and program.data == b"data"
  assert isinstance(ifrt_programs.make_plugin_compile_options(), ifrt_programs.CompileOptions)


# JAX 0.10.2's jax.experimental.array_serialization.serialization.get_tensorstore_spec
SPECS = [
    (("/tmp/ck/a",), {"arr": (3, 4)},
     {"driver": "zarr", "kvstore": {"driver": "file", "path": "/tmp/ck/a"},
      "metadata": {"compressor": {"id": "zstd"}, "shape": (3, 4), "chunks": [3, 4]}}),
    (("/tmp/ck/a",), {"process_idx": 2},
     {"driver": "zarr", "kvstore": {"driver": "file", "path": "/tmp/ck/process_2/a"}}),
    (("gs://bucket/dir/a",), {},
     {"driver": "zarr", "kvstore": {"driver": "gcs", "bucket": "bucket", "path": "dir/a"}}),
]


@pytest.mark.parametrize("args,kwargs,expected", SPECS)
def test_tensorstore_specs_are_jaxs(args, kwargs, expected):
  if "arr" in kwargs:
    kwargs = dict(kwargs, arr=jnp.ones(kwargs["arr"]))
  assert serialization.get_tensorstore_spec(*args, **kwargs) == expected


def test_tensorstore_spec_checks_and_remote_storage():
  with pytest.raises(ValueError, match="Checkpoint path should be absolute. Got rel"):
    serialization.get_tensorstore_spec("rel/a", ocdbt=True)
  assert serialization.is_remote_storage({"kvstore": {"driver": "gcs"}})
  assert serialization.is_remote_storage("s3://x")
  assert not serialization.is_remote_storage({"driver": "zarr", "kvstore": {"driver": "file"}})
  # JAX 0.10.2's tensorstore_impl._compute_chunk_shape of the same (float32)
  assert serialization._chunk_shape((6, 10), 4, target=40) == [3, 5]
  assert serialization._chunk_shape((7, 9), 4, target=10) == [7, 3]
  assert serialization._chunk_shape((8,), 4, target=4) == [2]
  assert serialization._chunk_shape((), 4) == []


@pytest.mark.parametrize("driver,ocdbt", [("zarr", False), ("zarr3", True)])
def test_checkpoint_manager_round_trip(tmp_path, driver, ocdbt):
  pytest.importorskip("tensorstore", reason="TensorStore checkpoints need tensorstore")
  manager = serialization.GlobalAsyncCheckpointManager()
  x = jnp.arange(12.0, dtype=jnp.bfloat16).reshape(3, 4)
  y = jnp.arange(5, dtype=jnp.int32)
  specs = [serialization.get_tensorstore_spec(str(tmp_path / name), ocdbt=ocdbt,
                                              driver=driver) for name in "xy"]
  committed = []
  manager.serialize([x, y], specs, on_commit_callback=lambda: committed.append(True))
  manager.wait_until_finished()
  assert committed == [True]
  sharding = SingleDeviceSharding(jax.devices()[0])
  a, b = manager.deserialize([sharding, sharding], specs, global_shapes=[(3, 4), (7,)],
                             dtypes=[jnp.float32, None])
  assert a.dtype == jnp.float32 and b.dtype == jnp.int32 and a.sharding == sharding
  np.testing.assert_array_equal(np.asarray(a), np.arange(12.0).reshape(3, 4))
  np.testing.assert_array_equal(np.asarray(b), [0, 1, 2, 3, 4, 0, 0])   # padded with zeros


def test_distributed_state_and_absl_flags_under_the_alias(tmp_path):
  pytest.importorskip("absl", reason="absl-py makes absltest's flags")
  code = textwrap.dedent("""
      import jax
      from absl import flags
      state = jax._src.distributed.global_state
      print(state.client, state.process_id, state.num_processes)
      print(flags.FLAGS.is_parsed())
      jax.config.parse_flags_with_absl()
      print(flags.FLAGS.is_parsed(), jax.config.jax_enable_x64)
      """)
  env = dict(os.environ, PYTHONPATH=str(ROOT))
  out = subprocess.run([sys.executable, "-m", "jaxlite", "-c", code, "--jax_enable_x64"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
  assert out.returncode == 0, out.stderr
  assert out.stdout.splitlines() == ["None 0 1", "False", "True True"]
