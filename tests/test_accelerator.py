"""Arrays on a device: platforms, residency, eager ops on the device, transfers.

The resident path is what every accelerator runs: arrays in PJRT buffers, each eager
primitive a cached XLA executable, jit on XLA, the transfer guard watching every move.
Where a TPU or GPU is the default backend these tests run on it; elsewhere they run on the
CPU's PJRT device (``jaxlite_cpu_backend='pjrt'``), the same code with the host's chip.
Tests marked ``accelerator`` need a real one and are skipped without it.
Values are checked against NumPy; on a TPU, float32 matmuls at default precision use
bf16 passes, so those compare loosely there.
"""
import gc
import logging
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import config
from jaxlite._src import tiers
from jaxlite._src.core.array import in_device_memory
from jaxlite._src.backends import platforms, plugins
from jaxlite._src.backends.xla import pjrt
from jaxlite.errors import JaxRuntimeError

if not tiers.xla_available():
  pytest.skip("no XLA plugin", allow_module_level=True)

ACCELERATOR = jax.default_backend() != "cpu"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def device():
  """The resident device: the accelerator, or the CPU's PJRT device standing in for it."""
  if ACCELERATOR:
    yield jax.devices()[0]
    return
  with config.override("jaxlite_cpu_backend", "pjrt"):
    yield jax.devices()[0]


def resident(x, device):
  """Whether ``x``'s value lives in ``device``'s PJRT memory, not read back."""
  return (in_device_memory(x)
          and x._buf.client is device.client.pjrt_client() and x.device == device)


def run_python(code, **env):
  proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT,
                        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", **env),
                        capture_output=True, text=True, timeout=300)
  assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
  return proc.stdout


# ----------------------------------------------------------------------------- platforms

def test_devices_carry_jaxs_attributes():
  d = jax.devices()[0]
  assert d.id == 0 and d.process_index == 0 and d.client.platform == d.platform
  assert d.platform == jax.default_backend() and isinstance(d.device_kind, str)
  cpu = jax.devices("cpu")[0]
  assert repr(cpu) == "CpuDevice(id=0)" and cpu.platform == "cpu"
  assert cpu.memory_stats() is None   # as JAX on the CPU
  with pytest.raises(AttributeError, match="coords"):
    cpu.coords
  assert jax.device_count("cpu") == len(jax.devices("cpu"))


def test_platform_names_follow_jax_platforms():
  with config.override("jax_platforms", "tpu, CPU,cuda"):
    assert platforms._requested() == ["tpu", "cpu", "gpu"]
  with config.override("jax_platforms", "metal"):
    with pytest.raises(RuntimeError, match="Unknown backend 'metal'"):
      platforms._requested()
  with config.override("jax_platforms", ""):
    assert platforms._requested() == []


def test_a_named_platform_that_is_missing_is_an_error():
  if plugins.find_plugin("tpu") is not None:
    pytest.skip("a TPU plugin is installed here")
  out = run_python("""
    import jaxlite as jax
    try:
      jax.devices()
    except RuntimeError as e:
      print(e)
  """, JAX_PLATFORMS="tpu")
  assert "Unable to initialize backend 'tpu'" in out and "pip install" in out


def test_unknown_and_absent_backends_are_refused_as_in_jax():
  with pytest.raises(RuntimeError, match=r"Unknown backend bogus. Available backends are"):
    jax.devices("bogus")
  if "tpu" not in platforms.backends():
    with pytest.raises(RuntimeError, match="Backend 'tpu' failed to initialize.*libtpu"):
      jax.devices("tpu")


STAND_IN = """
import numpy as np
import jaxlite as jax, jaxlite.numpy as jnp
from jaxlite._src.core.array import in_device_memory
print(jax.default_backend(), jax.devices()[0], jax.devices("cpu")[0])
x = jnp.arange(24.0).reshape(2, 3, 4)
y = jnp.sin(x) + 1                     # eager, on the accelerator
assert in_device_memory(y) and y.device == jax.devices()[0]
z = jax.jit(lambda a: a.sum(0))(y)     # jit, on the accelerator
assert z.device == jax.devices()[0]
np.testing.assert_allclose(np.asarray(z), (np.sin(np.arange(24.0)) + 1).reshape(2, 3, 4)
                           .sum(0), rtol=1e-5)
c = jax.device_put(y, jax.devices("cpu")[0])   # committed to the host CPU
assert c.committed and c.device.platform == "cpu"
assert (c * 2).device.platform == "cpu" and (c * 2).committed   # computed where it lives
doubled = jax.jit(lambda a, b: a * b)(c, y[0, 0])   # jit follows the committed operand
assert doubled.device.platform == "cpu" and doubled.committed
np.testing.assert_allclose(np.asarray(doubled), np.asarray(y) * np.asarray(y[0, 0]), rtol=1e-6)
with jax.default_device(jax.devices("cpu")[0]):
  h = jnp.ones(3) * 2
  assert h.device.platform == "cpu" and not in_device_memory(h)   # NumPy on the host
  assert jax.jit(lambda a: a + 1)(h).device.platform == "cpu"
assert (jnp.ones(3) * 2).device.platform == "tpu"
print("ok")
"""


def test_an_accelerator_and_the_cpu_live_side_by_side():
  """A stand-in accelerator: the CPU plugin loaded as libtpu (TPU_LIBRARY_PATH, as JAX
  reads it), so the process has a 'tpu' backend and the 'cpu' one, each with its client."""
  if jax.default_backend() == "tpu":   # the real one, held by this process: run it here
    exec(compile(STAND_IN, "<stand-in>", "exec"), {})
    return
  if plugins.find_plugin("tpu") is not None:
    pytest.skip("a real TPU plugin is installed here, and no chip answered")
  out = run_python(STAND_IN, TPU_LIBRARY_PATH=plugins.cpu_plugin().path)
  assert out.splitlines()[0].startswith("tpu TpuDevice(id=0, process_index=0, coords=(")
  assert out.splitlines()[0].endswith("CpuDevice(id=0)") and out.splitlines()[-1] == "ok"
  # JAX_PLATFORMS=cpu leaves the accelerator out
  out = run_python("import jaxlite as jax; print(jax.default_backend(), "
                   "list(jax._src.backends.backends()))", JAX_PLATFORMS="cpu",
                   TPU_LIBRARY_PATH=plugins.cpu_plugin().path)
  assert out.strip() == "cpu ['cpu']"


# ----------------------------------------------------------------------------- residency

CREATIONS = {
    "array": (lambda: jnp.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[1.0, 2.0], [3.0, 4.0]])),
    "asarray": (lambda: jnp.asarray(np.arange(6).reshape(2, 3)), np.arange(6).reshape(2, 3)),
    "scalar": (lambda: jnp.asarray(2.5), np.float32(2.5)),
    "zeros": (lambda: jnp.zeros((2, 3)), np.zeros((2, 3))),
    "ones_like": (lambda: jnp.ones_like(np.zeros(4)), np.ones(4)),
    "arange": (lambda: jnp.arange(5), np.arange(5)),
    "linspace": (lambda: jnp.linspace(0.0, 1.0, 5), np.linspace(0.0, 1.0, 5)),
    "eye": (lambda: jnp.eye(3), np.eye(3)),
    "full": (lambda: jnp.full((2, 2), 7), np.full((2, 2), 7)),
}


@pytest.mark.parametrize("name", sorted(CREATIONS))
def test_created_arrays_live_on_the_device(device, name):
  make, want = CREATIONS[name]
  x = make()
  assert resident(x, device), name
  np.testing.assert_allclose(np.asarray(x), want, rtol=1e-6)


def test_eager_random_and_jitted_results_stay_on_the_device(device):
  key = jax.random.key(0)
  noise = jax.random.normal(key, (4, 3))
  assert resident(noise, device)
  x = jnp.arange(12.0).reshape(4, 3)
  eager = [jnp.sin(x), x @ x.T, x[::-1, 1:], jnp.cumsum(x, 1), x.sum(0), jnp.where(x > 3, x, 0),
           jax.nn.relu(x - 5), x.astype(jnp.int32), jnp.concatenate([x, x]), x.at[0].set(9.0)]
  for out in eager:
    assert resident(out, device)
  f = jax.jit(lambda a, b: (a * b).sum(), device=device)
  assert resident(f(x, noise), device)
  g = jax.grad(lambda a: jnp.sum(jnp.tanh(a) ** 2))(x)
  assert resident(g, device)
  np.testing.assert_allclose(np.asarray(eager[1]), np.arange(12.0).reshape(4, 3) @
                             np.arange(12.0).reshape(4, 3).T, rtol=1e-2 if ACCELERATOR else 1e-6)
  # a TPU's tanh is good to about 1e-4 near 1, where (1 - tanh) (1 + tanh) is small
  np.testing.assert_allclose(np.asarray(g), 2 * np.tanh(np.arange(12.0).reshape(4, 3)) /
                             np.cosh(np.arange(12.0).reshape(4, 3)) ** 2, rtol=1e-5,
                             atol=2e-4 if ACCELERATOR else 1e-6)
  # read once, the array stays on the device: its next op runs there
  y = jnp.cos(x)
  np.asarray(y)
  assert resident(y, device) and resident(y + 1, device)


def test_vmap_scan_cond_and_while_run_on_the_device(device):
  x = jnp.arange(6.0).reshape(2, 3)
  rows = jax.vmap(lambda r: jnp.dot(r, r))(x)
  carry, ys = jax.lax.scan(lambda c, r: (c + r, c * r), jnp.zeros(3), x)
  branch = jax.lax.cond(True, lambda a: a * 2, lambda a: a, x)
  loop = jax.lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 2), (0, x))
  for out in (rows, carry, ys, branch, loop[1]):
    assert resident(out, device)
  np.testing.assert_allclose(np.asarray(rows), [5.0, 50.0])
  np.testing.assert_allclose(np.asarray(carry), [3.0, 5.0, 7.0])
  np.testing.assert_allclose(np.asarray(loop[1]), np.arange(6.0).reshape(2, 3) * 32)


# Rank-3 results: a device may keep them in a layout of its own; each must come back in
# C order (JAX pins host layouts; a TPU read without one returns permuted axes).
RANK3 = {
    "add": (lambda a: a + 1, lambda a: a + 1),
    "reverse": (lambda a: a[::-1, :, ::-1], lambda a: a[::-1, :, ::-1]),
    "transpose": (lambda a: jnp.transpose(a, (1, 0, 2)), lambda a: np.transpose(a, (1, 0, 2))),
    "pad": (lambda a: jnp.pad(a, ((1, 0), (0, 1), (2, 0))),
            lambda a: np.pad(a, ((1, 0), (0, 1), (2, 0)))),
    "cumsum": (lambda a: jnp.cumsum(a, axis=1), lambda a: np.cumsum(a, axis=1)),
    "matmul": (lambda a: a @ jnp.swapaxes(a, 1, 2), lambda a: a @ np.swapaxes(a, 1, 2)),
    "einsum": (lambda a: jnp.einsum("ijk,ilk->ijl", a, a),
               lambda a: np.einsum("ijk,ilk->ijl", a, a)),
    "concatenate": (lambda a: jnp.concatenate([a, a * 2], axis=1),
                    lambda a: np.concatenate([a, a * 2], axis=1)),
    "stack": (lambda a: jnp.stack([a[0], a[1]], axis=2), lambda a: np.stack([a[0], a[1]], axis=2)),
    "roll": (lambda a: jnp.roll(a, 2, axis=2), lambda a: np.roll(a, 2, axis=2)),
    "broadcast_to": (lambda a: jnp.broadcast_to(a[:1], (3, 3, 4)),
                     lambda a: np.broadcast_to(a[:1], (3, 3, 4))),
    "rank4": (lambda a: a.reshape(2, 3, 2, 2) * 3, lambda a: a.reshape(2, 3, 2, 2) * 3),
}


@pytest.mark.parametrize("name", sorted(RANK3))
def test_rank3_results_come_back_in_c_order(device, name):
  ours, numpy_fn = RANK3[name]
  a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
  want = numpy_fn(a)
  eager = ours(jnp.asarray(a))
  jitted = jax.jit(ours)(jnp.asarray(a))
  for got in (eager, jitted):
    assert resident(got, device)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-2 if ACCELERATOR else 1e-6)


def test_reads_through_pjrt_pass_a_c_order_host_layout(device, monkeypatch):
  """The copy a device read makes (PJRT_Buffer_ToHostBuffer, with a row-major host
  layout) gives the values a direct read of CPU memory gives."""
  client = device.client.pjrt_client()
  a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
  buf = client.put(a)
  monkeypatch.setattr(client, "direct_read", False)
  for shape in [(3, 4, 5), (60,), (), (0, 3)]:
    value = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    np.testing.assert_array_equal(client.put(value).to_numpy(), value)
  np.testing.assert_array_equal(buf.to_numpy(), a)


@pytest.mark.parametrize("shape,order", [((4, 8), (1, 0)), ((2, 3, 4), (2, 0, 1)),
                                         ((256, 128), (1, 0))])
def test_arrays_in_another_dimension_order_on_the_device(device, shape, order):
  """A column-major (or other order) array on the device: its buffer has that layout,
  every read, eager op and jit sees its values (NumPy's), and a jit asked for that layout
  computes to it. On a TPU the device's own tiles come on top."""
  from jaxlite.experimental.layout import Format, Layout
  from jaxlite.sharding import SingleDeviceSharding
  s = SingleDeviceSharding(device)
  a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
  y = jax.device_put(a, Format(Layout(order), s))
  assert y.format.layout.major_to_minor == order and y.sharding == s
  np.testing.assert_array_equal(np.asarray(y), a)
  np.testing.assert_array_equal(np.asarray(y * 2), a * 2)
  np.testing.assert_array_equal(np.asarray(jax.jit(lambda v: v + 1)(y)), a + 1)
  out = jax.jit(lambda v: v * 3, out_shardings=Format(Layout(order), s))(jnp.asarray(a))
  assert out.format.layout.major_to_minor == order
  np.testing.assert_array_equal(np.asarray(out), a * 3)
  back = jax.device_put(out, Format(None, s))   # (the device's default: a TPU's rank-3
  assert back.format.layout == jnp.asarray(a).format.layout   # order is (1, 0, 2))
  assert resident(back, device)
  np.testing.assert_array_equal(np.asarray(back), a * 3)


# ----------------------------------------------------------------------------- transfers

def _training_step():
  def loss(w, x, y):
    return jnp.mean((jnp.tanh(x @ w[0]) @ w[1] - y) ** 2)

  @jax.jit
  def step(w, x, y):
    value, grads = jax.value_and_grad(loss)(w, x, y)
    return value, [p - 0.1 * g for p, g in zip(w, grads)]
  return step


def test_typed_keys_live_on_the_device(device):
  """A typed key's data is a device array: eager key operations and jitted ones keep it
  there, and draw what raw keys of the same data draw."""
  key = jax.random.key(3)
  keys = jax.random.split(key, 4)
  assert resident(keys._base_array, device)
  counts, even = jnp.arange(4), jnp.array([True, False, True, False])
  with jax.transfer_guard("disallow"):
    folded = jax.vmap(jax.random.fold_in)(keys, counts)
    picked = jnp.where(even, folded, keys)[::-1]
    jitted = jax.jit(lambda ks: (jax.random.split(ks[0]), jax.random.bits(ks[1])))(picked)
  assert resident(folded._base_array, device) and resident(jitted[0]._base_array, device)
  raw = jax.random.key_data(keys)
  want = jnp.stack([jax.random.fold_in(k, i) for i, k in enumerate(raw)])
  np.testing.assert_array_equal(np.asarray(jax.random.key_data(folded)), np.asarray(want))
  np.testing.assert_array_equal(np.asarray(jitted[1]),
                                np.asarray(jax.random.bits(jax.random.key_data(picked)[1])))


def test_a_training_step_makes_no_hidden_transfer(device):
  key = jax.random.key(1)
  k1, k2, k3 = jax.random.split(key, 3)
  w = [jax.random.normal(k1, (8, 16)) * 0.1, jax.random.normal(k2, (16, 1)) * 0.1]
  x = jax.random.normal(k3, (32, 8))
  y = jnp.sum(x, axis=1, keepdims=True)
  step = _training_step()
  first, w = step(w, x, y)
  with jax.transfer_guard("disallow"):
    for _ in range(5):
      value, w = step(w, x, y)
    value = value * 1.0   # an eager op on the device is no transfer either
    with pytest.raises(JaxRuntimeError, match="Disallowed device-to-host transfer"):
      float(value)
    last = jax.device_get(value)   # explicit: allowed under 'disallow'
  assert last < float(first)


def test_closed_over_device_arrays_are_parameters_not_copies(device):
  """A jitted function closing over device arrays takes their buffers: compiling it reads
  nothing back (embedding them as constants would), with or without donation."""
  data = jax.random.normal(jax.random.key(2), (64, 8))
  scale = jnp.asarray(3.0)
  host_data = np.asarray(data)
  loss = jax.jit(lambda w: jnp.sum((data @ w * scale) ** 2))
  grad = jax.jit(jax.grad(lambda w: jnp.sum((data @ w) ** 2)))
  shift = jax.jit(lambda w, v: (w + data[0] * scale, v * 2), donate_argnums=0)
  w = jnp.linspace(-1.0, 1.0, 8)
  with jax.transfer_guard("disallow"):
    value, g = loss(w), grad(w)
    donated = jnp.ones(8)
    moved, _ = shift(donated, w)
  assert donated.is_deleted() and resident(moved, device)
  w_np = np.linspace(-1.0, 1.0, 8)
  tol = 2e-2 if ACCELERATOR else 1e-5
  np.testing.assert_allclose(float(value), np.sum((host_data @ w_np * 3) ** 2), rtol=tol)
  np.testing.assert_allclose(np.asarray(g), 2 * host_data.T @ (host_data @ w_np), rtol=tol)
  np.testing.assert_allclose(np.asarray(moved), 1 + host_data[0] * 3, rtol=1e-6)
  np.testing.assert_allclose(np.asarray(loss.lower(w).compile()(w)), float(value), rtol=1e-6)


def test_guard_levels_follow_jax(device, caplog):
  host = np.ones(3, np.float32)
  x = jnp.asarray(host)
  with jax.transfer_guard("disallow"):
    with pytest.raises(JaxRuntimeError, match=r"INVALID_ARGUMENT: Disallowed host-to-device "
                       r"transfer: aval=ShapedArray\(float32\[3\]\)"):
      jnp.array(host)
    with pytest.raises(JaxRuntimeError, match="host-to-device"):
      jax.jit(lambda a: a * 2)(host)
    assert resident(jax.device_put(host), device)   # explicit
    with pytest.raises(JaxRuntimeError, match="device-to-host"):
      np.asarray(x + 1)
  with jax.transfer_guard("disallow_explicit"):
    with pytest.raises(JaxRuntimeError, match="host-to-device"):
      jax.device_put(host)
    with pytest.raises(JaxRuntimeError, match="device-to-host"):
      jax.device_get(x + 1)
  with jax.transfer_guard_device_to_host("disallow"):
    jnp.array(host)   # the other direction is not guarded
  with caplog.at_level(logging.WARNING, logger="jaxlite"):
    with jax.transfer_guard("log"):
      np.asarray(jnp.array(host) + 1)
  assert sum("transfer: aval=ShapedArray(float32[3])" in r.message for r in caplog.records) == 2
  with pytest.raises(ValueError, match="new enum value must be None or in"):
    with jax.transfer_guard("sometimes"):
      pass


def test_host_memory_arrays_are_never_transfers():
  """On the default CPU backend (NumPy memory) nothing moves: the guard stays quiet."""
  if ACCELERATOR:
    pytest.skip("the default backend is an accelerator")
  with jax.transfer_guard("disallow_explicit"):
    x = jnp.array(np.ones(3)) + 1
    assert float(x[0]) == 2.0 and jax.device_get(x).tolist() == [2.0, 2.0, 2.0]


# ----------------------------------------------------------------------------- placement

def test_device_put_commits_only_to_a_named_device(device):
  x = np.arange(4.0, dtype=np.float32)
  assert not jax.device_put(x).committed and not jnp.ones(2).committed
  placed = jax.device_put(x, device)
  assert placed.committed and placed.devices() == {device} and resident(placed, device)
  assert (placed + 1).committed   # results of committed operands stay committed
  copy = jax.device_put(placed, device)
  assert copy is placed or np.array_equal(np.asarray(copy), x)
  assert jax.device_put(jnp.ones(2)).devices() == {jax.devices()[0]}


def test_jnp_array_of_a_device_array_is_a_copy_on_the_device(device):
  x = jnp.arange(3.0) * 2
  y = jnp.array(x)
  assert resident(y, device) and y._buf is not x._buf
  x.delete()
  np.testing.assert_array_equal(np.asarray(y), [0.0, 2.0, 4.0])


def test_default_device_is_a_context_and_a_config_option():
  cpu = jax.devices("cpu")[0]
  assert config.jax_default_device is None
  with jax.default_device(cpu):
    assert config.jax_default_device == cpu and jnp.ones(2).devices() == {cpu}
  with jax.default_device("cpu"):
    assert jnp.ones(2).device == cpu
  assert config.jax_default_device is None
  with pytest.raises(ValueError, match="jax.default_device must be passed either a Device"):
    config.update("jax_default_device", 3)


def test_live_arrays_and_delete_free_device_buffers(device):
  x = jnp.arange(1000.0) + 1
  y = x * 2
  live = jax.live_arrays()
  assert any(a is x for a in live) and any(a is y for a in live)
  gc.collect()
  before = pjrt.live_buffers()
  x.delete()
  assert x.is_deleted() and pjrt.live_buffers() == before - 1
  assert not any(a is x for a in jax.live_arrays())
  with pytest.raises(RuntimeError, match="Array has been deleted"):
    np.asarray(x)
  np.testing.assert_array_equal(np.asarray(y[:3]), [2.0, 4.0, 6.0])


def test_donation_on_the_device(device):
  f = jax.jit(lambda a, b: a * 2 + b, donate_argnums=0)
  a = jnp.arange(1000.0)
  out = f(a, jnp.ones(1000))
  assert a.is_deleted() and resident(out, device)
  np.testing.assert_array_equal(np.asarray(out[:3]), [1.0, 3.0, 5.0])


def test_jit_follows_the_default_device_and_retraces_when_it_moves(device, caplog):
  f = jax.jit(lambda a: a * 3)
  assert resident(f(jnp.ones(2)), device)
  cpu = jax.devices("cpu")[0]
  with config.override("jaxlite_cpu_backend", "numpy"):
    if not ACCELERATOR:   # the CPU is the host again: its tiers serve
      with caplog.at_level(logging.INFO, logger="jaxlite"):
        out = f(jnp.ones(2))
      assert out.device == cpu and not in_device_memory(out)
      assert any("default device moved" in r.message for r in caplog.records)


def test_eager_executables_are_cached_per_primitive_shapes_and_params(device):
  backend = device.client
  backend.clear_cache()
  x = jnp.ones((2, 3))
  jnp.sin(x), jnp.sin(x * 2), jnp.sin(jnp.ones((4,)))
  sines = [k for k in backend._eager if k[0].name == "sin"]
  assert len(sines) == 2   # two shapes, one executable each
  x.sum(0), x.sum(1), x.sum(0)
  sums = [k for k in backend._eager if k[0].name == "reduce_sum"]
  assert len(sums) == 2   # two params


def test_a_second_process_loads_device_executables_from_the_cache(tmp_path):
  if ACCELERATOR:   # one process at a time holds the chip: this one, so start afresh here
    fn = lambda a: jnp.tanh(a) @ a.T
    with config.override("jax_compilation_cache_dir", str(tmp_path)):
      stats = []
      for _ in range(2):
        jax.clear_caches()
        f = jax.jit(fn)
        f(jnp.ones((16, 16))).block_until_ready()
        stats.append(f.stats()[0])
    assert stats[0]["tier"] == "xla" and "persistent compile cache" in stats[1]["note"]
    return
  code = """
    import jaxlite as jax, jaxlite.numpy as jnp
    f = jax.jit(lambda a: jnp.tanh(a) @ a.T)
    f(jnp.ones((16, 16))).block_until_ready()
    print(f.stats()[0]["tier"], f.stats()[0]["note"])
  """
  env = dict(JAXLITE_CACHE_DIR=str(tmp_path), JAXLITE_CPU_BACKEND="pjrt")
  first = run_python(code, **env).split()
  second = run_python(code, **env)
  assert first[0] == "xla" and "persistent compile cache" in second


# ----------------------------------------------------------------------------- the chip

def test_an_allocation_larger_than_the_device_is_a_clear_error(device):
  limit = (device.memory_stats() or {}).get("bytes_limit", 1 << 38)
  with pytest.raises(JaxRuntimeError, match="RESOURCE_EXHAUSTED"):
    jnp.zeros((max(limit, 1 << 38) // 4 + (1 << 28),), jnp.float32).block_until_ready()
  assert float(jnp.ones(3).sum()) == 3.0   # the process keeps working


@pytest.mark.accelerator
def test_memory_stats_show_allocations_and_frees():
  d = jax.devices()[0]
  before = d.memory_stats()["bytes_in_use"]
  x = jnp.ones((1 << 20,), jnp.float32).block_until_ready()
  peak = d.memory_stats()["bytes_in_use"]
  assert peak >= before + 4 * (1 << 20)
  x.delete()   # (making x also loaded an executable: the frees are measured from the peak)
  assert d.memory_stats()["bytes_in_use"] <= peak - 4 * (1 << 20)


@pytest.mark.accelerator
@pytest.mark.parametrize("example", ["mnist_digits_mlp.py", "optax_training.py"])
def test_examples_run_on_the_accelerator_unchanged(example):
  if jax.default_backend() == "tpu":
    pytest.skip("one process at a time holds a TPU, and this one does: "
                "tools/accelerator_check.sh runs the examples after the tests")
  proc = subprocess.run([sys.executable, "-m", "jaxlite", os.path.join("examples", example)],
                        cwd=ROOT, capture_output=True, text=True, timeout=600)
  assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
