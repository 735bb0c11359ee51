"""Device-resident Arrays: outputs of the XLA tier stay on the device until read."""
import gc
import pickle
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

from jaxlite._src import tiers

if not tiers.xla_available():
  pytest.skip("no XLA plugin", allow_module_level=True)

import jaxlite as jax  # noqa: E402
import jaxlite.numpy as jnp  # noqa: E402
from jaxlite._src.core.array import Array  # noqa: E402
from jaxlite._src.backends.xla import pjrt  # noqa: E402


def xla_jit(f, **kw):
  return jax.jit(f, backend="xla", **kw)


def on_device(x):
  return x._on_device


def test_outputs_are_device_backed_until_read():
  f = xla_jit(lambda x: x * 2 + 1)
  y = f(jnp.arange(4.0))
  assert isinstance(y, Array) and on_device(y)
  assert y.shape == (4,) and y.dtype == np.float32 and y.ndim == 1 and y.size == 4
  assert y.aval.shape == (4,) and not y.weak_type
  assert on_device(y)                       # shape and dtype did not transfer
  np.testing.assert_array_equal(y._value, [1, 3, 5, 7])
  assert not on_device(y)                   # converted once, stored
  np.testing.assert_array_equal(np.asarray(y), [1, 3, 5, 7])


def test_values_after_lazy_conversion_many_dtypes():
  f = xla_jit(lambda x, y: (x + y, x * y, (x > y).astype(jnp.int32), x.sum()))
  x = jnp.asarray(np.linspace(-2, 3, 12, dtype=np.float32).reshape(3, 4))
  y = jnp.asarray(np.linspace(1, 2, 12, dtype=np.float32).reshape(3, 4))
  s, p, g, t = f(x, y)
  xn, yn = np.asarray(x), np.asarray(y)
  np.testing.assert_allclose(s, xn + yn, rtol=1e-6)
  np.testing.assert_allclose(p, xn * yn, rtol=1e-6)
  np.testing.assert_array_equal(g, (xn > yn).astype(np.int32))
  assert g.dtype == np.int32
  assert t.shape == () and abs(float(t) - xn.sum()) < 1e-4
  assert repr(t).startswith("Array(")


def test_large_output_aliases_device_memory_safely():
  n = pjrt.ALIAS_MIN_BYTES // 4 * 2
  f = xla_jit(lambda x: x + 1)
  y = f(jnp.zeros((n,)))
  v = np.asarray(y)
  assert not v.flags.writeable
  del y
  gc.collect()
  np.testing.assert_array_equal(v[:5], np.ones(5))   # the view keeps the buffer alive
  assert v.sum() == n


def test_chaining_keeps_data_on_device():
  f = xla_jit(lambda x: x * 2 + 1)
  x = jnp.arange(4.0)
  ys = [f(x)]
  for _ in range(5):
    ys.append(f(ys[-1]))
  assert all(on_device(y) for y in ys)
  expected = np.arange(4.0)
  for _ in range(6):
    expected = expected * 2 + 1
  np.testing.assert_array_equal(ys[-1], expected)
  assert all(on_device(y) for y in ys[:-1])   # intermediates were never read


def test_device_argument_passes_its_buffer(monkeypatch):
  f = xla_jit(lambda x: x + 1)
  y = f(jnp.arange(3.0))
  calls = []
  original = pjrt.DeviceBuffer.to_numpy

  def spy(self):
    calls.append(self)
    return original(self)
  monkeypatch.setattr(pjrt.DeviceBuffer, "to_numpy", spy)
  z = f(y)
  z = f(z)
  assert calls == []
  np.testing.assert_array_equal(z, [3, 4, 5])
  assert len(calls) == 1


def test_block_until_ready_waits_and_returns_the_array():
  f = xla_jit(lambda x: jnp.tanh(x @ x) @ x)
  x = jnp.ones((256, 256)) * 0.01
  y = f(x)
  assert y.block_until_ready() is y
  assert y.is_ready() and y._buf.ready
  assert on_device(y)                        # waiting did not transfer
  out = jax.block_until_ready({"a": y, "b": [f(y)]})
  assert out["a"] is y and out["b"][0].is_ready()
  # NumPy-backed arrays are always ready
  assert jnp.ones(3).is_ready() and jnp.ones(3).block_until_ready() is not None


def test_eager_ops_and_tier0_accept_device_arrays():
  f = xla_jit(lambda x: x * 2)
  y = f(jnp.arange(4.0))
  np.testing.assert_array_equal(y + 1, [1, 3, 5, 7])
  np.testing.assert_allclose(jnp.sin(f(jnp.arange(4.0))), np.sin(np.arange(4.0) * 2), rtol=1e-6)
  g0 = jax.jit(lambda a, b: a * b, backend="numpy")
  np.testing.assert_array_equal(g0(f(jnp.arange(4.0)), f(jnp.ones(4))), [0, 4, 8, 12])
  np.testing.assert_array_equal(f(jnp.arange(4.0))[1:3], [2, 4])
  assert f(jnp.arange(4.0)).sum() == 12
  # grad and vmap read the values of device-backed arrays too
  z = f(jnp.arange(3.0))
  np.testing.assert_allclose(jax.grad(lambda v: (v ** 2).sum())(z), 2 * np.asarray(z))
  np.testing.assert_allclose(jax.vmap(lambda v: v * 3)(f(jnp.arange(3.0))), [0, 6, 12])
  # Python conversions
  s = xla_jit(lambda x: x.sum())(jnp.arange(4.0))
  assert float(s) == 6.0 and int(s) == 6 and bool(s) and f"{s:.1f}" == "6.0"
  assert len(f(jnp.arange(4.0))) == 4
  assert [float(v) for v in f(jnp.arange(2.0))] == [0.0, 2.0]
  i = xla_jit(lambda x: x + 1)(jnp.asarray(2))
  assert [10, 20, 30, 40][i] == 40


def test_pytree_outputs_and_jit_slow_path():
  f = xla_jit(lambda d, s: {"a": d["x"] * s, "b": d["x"] + s})
  out = f({"x": jnp.arange(3.0)}, 2.0)
  assert on_device(out["a"]) and on_device(out["b"])
  out2 = f({"x": out["a"]}, 1.0)
  assert on_device(out2["a"]) and on_device(out["a"])
  np.testing.assert_array_equal(out2["b"], [1, 3, 5])
  # static arguments take the general path as well
  g = xla_jit(lambda x, n: x * n, static_argnums=1)
  np.testing.assert_array_equal(g(out["a"], 3), [0, 6, 12])
  assert on_device(out["a"])


def test_buffers_are_freed_when_arrays_are_collected():
  f = xla_jit(lambda x: (x + 1, x * 2))
  x = jnp.arange(8.0)
  f(x)
  gc.collect()
  before = pjrt.live_buffers()
  outs = [f(x) for _ in range(10)]
  assert pjrt.live_buffers() == before + 20
  np.asarray(outs[0][0])                    # read ones keep their buffer too
  assert pjrt.live_buffers() == before + 20
  del outs
  gc.collect()
  assert pjrt.live_buffers() == before
  y = f(x)[0]
  z = f(y)[1]
  del y
  gc.collect()
  np.testing.assert_array_equal(z, (np.arange(8.0) + 1) * 2)
  del z
  gc.collect()
  assert pjrt.live_buffers() == before


def test_pickle_print_and_numpy_conversion():
  f = xla_jit(lambda x: x * 2)
  y = f(jnp.arange(3.0))
  assert repr(y) == "Array([0., 2., 4.], dtype=float32)"
  y = f(jnp.arange(3.0))
  assert str(y) == "[0. 2. 4.]"
  y = f(jnp.arange(3.0))
  z = pickle.loads(pickle.dumps(y))
  assert isinstance(z, Array) and not on_device(z)
  np.testing.assert_array_equal(z, [0, 2, 4])
  y = f(jnp.arange(3.0))
  a = np.asarray(y)
  assert a.dtype == np.float32 and a.tolist() == [0.0, 2.0, 4.0]
  assert y.tolist() == [0.0, 2.0, 4.0] and y.item(1) == 2.0
  assert np.array(f(jnp.arange(3.0)), dtype=np.int64).tolist() == [0, 2, 4]
  w = xla_jit(lambda x: x * 2)(2.0)
  assert w.weak_type and repr(w) == "Array(4., dtype=float32, weak_type=True)"


def test_shape_mismatch_still_checked():
  f = xla_jit(lambda x: x + 1)
  y = f(jnp.arange(3.0))
  exe = next(iter(f._cache.values())).run.executable
  with pytest.raises(TypeError, match="float32"):
    exe.execute_device([np.arange(3, dtype=np.int32)])
  g = xla_jit(lambda x: x + 1)
  w = g(jnp.arange(4.0))
  with pytest.raises(TypeError, match=r"float32\[3\]"):
    exe.execute_device([w._buf])
  np.testing.assert_array_equal(f(y), [2, 3, 4])


def test_threads_calling_concurrently():
  f = xla_jit(lambda x, y: x @ y + 1)
  a = jnp.asarray(np.random.default_rng(0).normal(size=(32, 32)).astype(np.float32))
  expected = np.asarray(a) @ np.asarray(a) + 1
  errors = []

  def work():
    try:
      for _ in range(50):
        y = f(a, a)
        z = f(y, a)      # device argument
        np.testing.assert_allclose(y, expected, rtol=1e-4)
        z.block_until_ready()
    except Exception as e:  # pragma: no cover - reported below
      errors.append(e)
  threads = [threading.Thread(target=work) for _ in range(4)]
  for t in threads:
    t.start()
  for t in threads:
    t.join()
  assert not errors, errors


def test_process_exits_cleanly_with_live_device_arrays():
  code = textwrap.dedent("""
    import jaxlite as jax, jaxlite.numpy as jnp
    f = jax.jit(lambda x: jnp.tanh(x @ x) @ x, backend="xla")
    x = f(jnp.ones((1024, 1024)) * 0.001)
    x.block_until_ready()
    ys = [f(x) for _ in range(10)]   # still running at exit, held
    for _ in range(10):
      f(x)                           # still running at exit, dropped
    read = f(x); read._value
    g = jax.jit(lambda x: x + 1, backend="xla")
    host_in = g(jnp.ones((1 << 16,)))   # a host argument kept alive for the device
    print("ok")
  """)
  r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                     timeout=120)
  assert r.returncode == 0, r.stderr
  assert r.stdout.strip() == "ok"


def test_dispatch_that_finished_at_once_matches_the_asking_path():
  # Fast path: a dispatch found finished right after Execute gets no flight, and after
  # INLINE_AFTER of them in a row (on ready inputs) the executable stops asking. Slow
  # path: the same program with the streak reset before every call asks each time.
  f = xla_jit(lambda x: jnp.sin(x) * 2 + 1)
  x = jax.block_until_ready(f(jnp.arange(16.0)))
  loaded = next(iter(f._cache.values())).run.executable.loaded
  expected = np.sin(np.sin(np.arange(16.0)) * 2 + 1) * 2 + 1
  fast = [f(x) for _ in range(pjrt.INLINE_AFTER + 40)]
  assert loaded._streak[0] >= pjrt.INLINE_AFTER
  slow = []
  for _ in range(8):
    loaded._streak[0] = 0
    slow.append(f(x))
  for y in fast + slow:
    assert y._buf._flight is None and y._buf.ready and y.is_ready()
    np.testing.assert_allclose(y, expected, rtol=1e-6)


def test_input_not_known_ready_takes_the_asking_path():
  # An input still being computed (a large matmul chain) must not make the next dispatch
  # wait for it: that dispatch asks whether it finished instead of waiting at once.
  heavy = xla_jit(lambda x: (jnp.tanh(x @ x) @ x)[0, :4])
  small = xla_jit(lambda v: v * 2)
  a = jnp.ones((512, 512)) * 0.001
  ready = jax.block_until_ready(heavy(a))
  for _ in range(pjrt.INLINE_AFTER + 2):
    small(ready)
  loaded = next(iter(small._cache.values())).run.executable.loaded
  assert loaded._streak[0] >= pjrt.INLINE_AFTER
  pending = heavy(a)
  still_running = pending._buf._flight is not None
  streak = loaded._streak[0]
  out = small(pending)
  if still_running:   # (it always is, unless the machine ran it inside Execute)
    assert loaded._streak[0] in (0, streak)   # not counted: it asked
  np.testing.assert_allclose(out, np.asarray(ready) * 2, rtol=1e-6)


def test_unfetched_array_becomes_a_host_array_when_read():
  f = xla_jit(lambda x: x * 2)
  y = f(jnp.arange(3.0))
  cls = type(y)
  assert cls is Array and y._host is None   # one class: the state is a field
  assert on_device(y) and y.shape == (3,) and y.dtype == np.float32
  with pytest.raises(AttributeError, match="'Array' object has no attribute 'nope'"):
    y.nope
  np.testing.assert_array_equal(y, [0, 2, 4])
  assert type(y) is cls and not on_device(y) and y._host is not None
  # deleting makes the value unreadable again, with JAX's error
  z = f(jnp.arange(3.0))
  z.delete()
  assert z.is_deleted() and z.shape == (3,)
  with pytest.raises(RuntimeError, match="Array has been deleted"):
    np.asarray(z)
  w = jnp.arange(3.0)
  w.delete()
  with pytest.raises(RuntimeError, match="Array has been deleted"):
    w + 1


_SYNCHRONOUS_SCRIPT = textwrap.dedent("""
    import numpy as np
    import jaxlite as jax, jaxlite.numpy as jnp
    assert jax.config.jax_cpu_enable_async_dispatch is False
    def heavy(x):
      for _ in range(20):
        x = jnp.sin(x) * jnp.cos(x) + jnp.tanh(x)
      return x
    x = jax.jit(lambda: jnp.arange(1_000_000, dtype=jnp.float32) / 1e6, backend="xla")()
    f = jax.jit(heavy, backend="xla")
    for _ in range(3):
      out = f(x)
      assert out.is_ready()   # a 1M-element program: returned only once computed
    np.testing.assert_allclose(np.asarray(out),
                               np.asarray(jax.jit(heavy, backend="numpy")(x)),
                               rtol=1e-5, atol=1e-6)
    def host(v):
      raise ValueError("boom on the host")
    g = jax.jit(lambda v: jax.pure_callback(host, jax.ShapeDtypeStruct((3,), jnp.float32),
                                            v), backend="xla")
    try:   # raised by the call, as in JAX (or, had the call returned, when read)
      np.asarray(g(jnp.ones(3)))
    except Exception as e:
      assert "boom on the host" in str(e), e
    else:
      raise AssertionError("no error")
    print("ok")
""")


def test_cpu_async_dispatch_off_returns_computed_outputs():
  """JAX's ``jax_cpu_enable_async_dispatch=False`` (env JAX_CPU_ENABLE_ASYNC_DISPATCH),
  read when the client is created: every XLA call returns once its outputs are computed,
  and a computation's error is still raised."""
  if not tiers.xla_available():
    pytest.skip("no XLA plugin installed")
  import os
  out = subprocess.run([sys.executable, "-c", _SYNCHRONOUS_SCRIPT], capture_output=True,
                       text=True, timeout=300,
                       env=dict(os.environ, JAX_CPU_ENABLE_ASYNC_DISPATCH="false"))
  assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_cpu_async_dispatch_is_a_config_option_as_in_jax():
  assert jax.config.jax_cpu_enable_async_dispatch is True   # JAX's default
  with jax.config.override("jax_cpu_enable_async_dispatch", False):
    assert jax.config.jax_cpu_enable_async_dispatch is False
  jax.config.update("jax_cpu_enable_async_dispatch", True)


def _loaded(f):
  return next(iter(f._cache.values())).run.executable.loaded


@pytest.mark.parametrize("program, nargs", [
    (lambda m: lambda: m.arange(3.0) * 2, 0),
    (lambda m: lambda x: x * 2 + 1, 1),
    (lambda m: lambda x, y, z: (x @ y + z, m.tanh(z).sum(), x.T), 3),
    (lambda m: lambda x, y: [x, y, x - y, x * y], 2),
])
def test_cached_call_matches_the_general_path_and_numpy(program, nargs):
  # The cached call is generated per (arguments, outputs) count (pjrt._cached_call);
  # the general path (LoadedExecutable.execute_device) takes the same buffers. The
  # answers are NumPy's, the same program written with NumPy.
  rng = np.random.default_rng(0)
  host = [rng.normal(size=(3, 3)).astype(np.float32) for _ in range(nargs)]
  args = [jax.block_until_ready(xla_jit(lambda a: a + 0)(h)) for h in host]
  f = xla_jit(program(jnp))
  expected = program(np)(*host)
  for _ in range(pjrt.INLINE_AFTER + 3):   # past the streak: the inline path too
    got = f(*args)
    jax.tree_util.tree_map(lambda g, e: np.testing.assert_allclose(g, e, rtol=1e-5), got,
                           expected)
  loaded = _loaded(f)
  exe = next(iter(f._cache.values())).run.executable
  assert exe.execute_device is not loaded.execute_device     # the generated function
  bufs = [a._buf for a in args]
  fast, general = exe.execute_device(bufs), loaded.execute_device(bufs)
  assert len(fast) == len(general) == len(jax.tree_util.tree_leaves(expected))
  for a, b in zip(fast, general):
    assert a.spec is b.spec and a.client is b.client
    np.testing.assert_array_equal(a.to_numpy(), b.to_numpy())


def test_cached_call_hands_anything_else_to_the_general_path():
  f = xla_jit(lambda x, y: x * y)
  x = jax.block_until_ready(f(jnp.arange(3.0), jnp.arange(3.0)))
  exe = next(iter(f._cache.values())).run.executable
  with pytest.raises(TypeError, match="takes 2 arguments, got 1"):
    exe.execute_device([x._buf])
  with pytest.raises(TypeError, match="takes 2 arguments, got 3"):
    exe.execute_device([x._buf] * 3)
  wrong = xla_jit(lambda v: v + 1)(jnp.arange(4.0))
  with pytest.raises(TypeError, match=r"float32\[3\]"):
    exe.execute_device([x._buf, wrong._buf])
  # NumPy arguments are transferred; a held lock (another thread's call) makes fresh structs
  host = np.arange(3, dtype=np.float32)
  np.testing.assert_array_equal(exe.execute_device([x._buf, host])[0].to_numpy(),
                                [0, 1, 8])
  loaded = _loaded(f)
  with loaded._lock:
    outs = exe.execute_device([x._buf, x._buf])
  np.testing.assert_array_equal(outs[0].to_numpy(), [0, 1, 16])


def test_many_arguments_take_the_general_path(monkeypatch):
  monkeypatch.setattr(pjrt, "CACHED_CALL_MAX_ARITY", 2)
  f = xla_jit(lambda x, y: x - y)
  np.testing.assert_array_equal(f(jnp.arange(3.0), jnp.ones(3)), [-1, 0, 1])
  exe = next(iter(f._cache.values())).run.executable
  assert exe.execute_device == _loaded(f).execute_device
  y = f(jnp.arange(3.0), jnp.ones(3))
  np.testing.assert_array_equal(f(y, y), [0, 0, 0])


def test_buffer_types_are_pjrts_however_the_dtype_is_named():
  # (remembered per dtype object: NumPy works out a dtype's name in Python)
  import ml_dtypes
  for _ in range(2):   # the first asks NumPy, the second finds it remembered
    for given in (np.float32, np.dtype(np.float32), "float32", "f4"):
      assert pjrt.buffer_type(given) == 11   # PJRT_Buffer_Type_F32
    assert pjrt.buffer_type(np.bool_) == 1 and pjrt.buffer_type(np.dtype("int64")) == 5
    assert pjrt.buffer_type(ml_dtypes.bfloat16) == 13
    with pytest.raises(TypeError, match="dtype str1024 is not supported"):
      pjrt.buffer_type(np.dtype("U32"))
