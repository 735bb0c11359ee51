"""Host callbacks on the XLA tier: pure_callback, debug.callback and debug.print lower to
a typed-FFI custom call whose handler calls back into Python; they agree with tier 0."""
import logging
import subprocess
import sys
import time

import numpy as np
import pytest

from jaxlite._src.backends import plugins

if plugins.cpu_plugin() is None:
  pytest.skip(f"the XLA CPU plugin is not installed ({plugins.INSTALL_CPU})",
              allow_module_level=True)

import jaxlite as jax  # noqa: E402
import jaxlite.numpy as jnp  # noqa: E402
from jaxlite import lax  # noqa: E402
from jaxlite._src import tiers  # noqa: E402
from jaxlite._src.backends import xla  # noqa: E402
from jaxlite._src.backends.xla import pjrt  # noqa: E402

if not xla.is_available() or xla.platform() != "cpu":
  pytest.skip("host callbacks need the XLA CPU backend", allow_module_level=True)


def both(f, *args):
  """``f`` jitted on each tier: (numpy tier's outputs, XLA tier's outputs), as NumPy."""
  def run(backend):
    out = jax.jit(f, backend=backend)(*args)
    jax.effects_barrier()
    return jax.tree_util.tree_map(np.asarray, out)
  return run("numpy"), run("xla")


def _assert_tree_equal(got, want):
  got_leaves, want_leaves = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
  assert len(got_leaves) == len(want_leaves)
  for g, w in zip(got_leaves, want_leaves):
    assert g.dtype == w.dtype and g.shape == w.shape
    np.testing.assert_array_equal(g, w)


# ----------------------------------------------------------------------------- pure_callback

def _host_fn(a, b, c):
  # several arguments, several results, mixed dtypes
  return (np.sin(a) + c.sum(), (b * 3).astype(np.int32), np.float32(a.sum()) * np.ones(
      (2, 2), np.float32))


def _pure(a, b, c):
  shapes = (jax.ShapeDtypeStruct(a.shape, jnp.float32),
            jax.ShapeDtypeStruct(b.shape, jnp.int32),
            jax.ShapeDtypeStruct((2, 2), jnp.float32))
  x, y, z = jax.pure_callback(_host_fn, shapes, a * 2, b + 1, c)
  return x + 1, y * 2, z.sum()   # the results are used by the computation


def test_pure_callback_several_args_and_results_f32_i32_match_numpy_tier():
  a = np.linspace(-1, 1, 5, dtype=np.float32)
  b = np.arange(6, dtype=np.int32).reshape(2, 3)
  c = np.float32(0.5)
  want, got = both(_pure, a, b, c)
  _assert_tree_equal(got, want)


def test_pure_callback_lowers_to_a_typed_ffi_custom_call():
  text = jax.jit(_pure, backend="xla").lower(
      jnp.ones(5), jnp.ones((2, 3), jnp.int32), jnp.float32(1)).as_text()
  assert '"stablehlo.custom_call"' in text and "api_version = 4 : i32" in text
  assert "callback_id = " in text and "has_side_effect = false" in text


def test_pure_callback_pytree_args_and_scalar_and_empty_arrays():
  def f(x, n):
    out = jax.pure_callback(lambda d: {"s": d["x"].sum(), "e": np.zeros((0, 3), np.float32)},
                            {"s": jax.ShapeDtypeStruct((), jnp.float32),
                             "e": jax.ShapeDtypeStruct((0, 3), jnp.float32)},
                            {"x": x * n})
    return out["s"], out["e"]
  want, got = both(f, np.arange(4, dtype=np.float32), np.float32(2))
  _assert_tree_equal(got, want)


def test_pure_callback_inside_a_loop_runs_each_iteration():
  calls = []

  def host(v):
    calls.append(float(v))
    return v * 2
  f = jax.jit(lambda x: lax.fori_loop(0, 4, lambda i, c: jax.pure_callback(
      host, jax.ShapeDtypeStruct((), jnp.float32), c + i), x), backend="xla")
  assert float(f(jnp.float32(1))) == 38.0
  assert calls == [1.0, 3.0, 8.0, 19.0]


# ----------------------------------------------------------------------------- debug effects

def test_debug_print_output_is_printed_under_xla(capsys):
  def f(x):
    jax.debug.print("x = {x}, doubled={}", x * 2, x=x)
    return x + 1
  g = jax.jit(f, backend="xla")
  np.testing.assert_array_equal(g(jnp.ones(2)), [2, 2])
  np.testing.assert_array_equal(g(jnp.zeros(2)), [1, 1])
  jax.effects_barrier()
  assert capsys.readouterr().out == ("x = [1. 1.], doubled=[2. 2.]\n"
                                     "x = [0. 0.], doubled=[0. 0.]\n")


def test_debug_print_without_outputs_or_operands_is_kept(capsys):
  f = jax.jit(lambda x: jax.debug.print("only {}", x), backend="xla")
  assert f(jnp.arange(3)) is None
  g = jax.jit(lambda x: (jax.debug.print("hello"), x * 2)[1], backend="xla")
  np.testing.assert_array_equal(g(jnp.ones(2)), [2, 2])
  jax.effects_barrier()
  assert capsys.readouterr().out == "only [0 1 2]\nhello\n"
  assert "has_side_effect = true" in g.lower(jnp.ones(2)).as_text()


def test_debug_print_under_grad_matches_numpy_tier(capsys):
  def f(x):
    jax.debug.print("{}", x)
    return x * 3
  outs = {}
  for backend in ("numpy", "xla"):
    outs[backend] = float(jax.jit(jax.grad(f), backend=backend)(2.0))
    jax.effects_barrier()
    outs[backend + "_out"] = capsys.readouterr().out
  assert outs["xla"] == outs["numpy"] == 3.0
  assert outs["xla_out"] == outs["numpy_out"] == "2.0\n"


def _recorded(f, *args):
  """The calls ``f`` makes to its ``record`` callback, on each tier."""
  logs = {}
  for backend in ("numpy", "xla"):
    log = []
    out = jax.jit(lambda *a: f(log.append, *a), backend=backend)(*args)
    jax.effects_barrier()
    logs[backend] = (log, np.asarray(out))
  return logs


def test_debug_callback_side_effects_in_order_inside_fori_loop():
  def f(record, c):
    def body(i, c):
      jax.debug.callback(lambda i, c: record((int(i), float(c))), i, c)
      return c * 2
    return lax.fori_loop(0, 5, body, c)
  logs = _recorded(f, np.float32(1))
  assert logs["xla"][0] == logs["numpy"][0] == [(0, 1.0), (1, 2.0), (2, 4.0), (3, 8.0),
                                                (4, 16.0)]
  assert float(logs["xla"][1]) == float(logs["numpy"][1]) == 32.0


def test_debug_callbacks_in_order_inside_scan():
  def f(record, xs):
    def body(c, x):
      jax.debug.callback(lambda v: record(("first", int(v))), x)
      jax.debug.callback(lambda v, w: record(("second", int(v), int(w))), x, c)
      return c + x, c
    return lax.scan(body, 0, xs)[0]
  logs = _recorded(f, np.arange(4, dtype=np.int32))
  want = [e for i, c in zip(range(4), (0, 0, 1, 3))
          for e in (("first", i), ("second", i, c))]
  assert logs["xla"][0] == logs["numpy"][0] == want
  assert int(logs["xla"][1]) == int(logs["numpy"][1]) == 6


def test_debug_callback_receives_array_copies():
  seen = []
  f = jax.jit(lambda x: (jax.debug.callback(seen.append, x), x + 1)[1], backend="xla")
  f(jnp.arange(3.0))
  f(jnp.zeros(3))
  jax.effects_barrier()
  assert all(isinstance(v, jax.Array) and v.dtype == np.float32 for v in seen)
  np.testing.assert_array_equal(seen[0], [0, 1, 2])   # not overwritten by the next call
  np.testing.assert_array_equal(seen[1], [0, 0, 0])


# ----------------------------------------------------------------------------- errors

def _raises(message):
  def host(*_):
    raise ValueError(message)
  return host


def test_a_raising_pure_callback_surfaces_its_message():
  f = jax.jit(lambda x: jax.pure_callback(_raises("boom from the host"),
                                          jax.ShapeDtypeStruct((3,), jnp.float32), x) * 2,
              backend="xla")
  before = pjrt.live_buffers()
  # the failure's log record holds the traceback, whose frames hold buffers, for as long
  # as pytest keeps the record: none is made here
  failures = logging.getLogger("jax._src.callback")
  level = failures.level
  failures.setLevel(logging.CRITICAL)
  try:
    for _ in range(3):   # and again: nothing is left in a bad state
      with pytest.raises(jax.errors.JaxRuntimeError, match="ValueError: boom from the host"):
        np.asarray(f(jnp.ones(3)))
  finally:
    failures.setLevel(level)
  import gc
  gc.collect()
  assert pjrt.live_buffers() <= before
  ok = jax.jit(lambda x: jax.pure_callback(lambda v: v + 1,
                                           jax.ShapeDtypeStruct((3,), jnp.float32), x),
               backend="xla")
  np.testing.assert_array_equal(ok(jnp.ones(3)), [2, 2, 2])


def test_a_raising_debug_callback_surfaces_its_message():
  f = jax.jit(lambda x: (jax.debug.callback(_raises("debug boom"), x), x + 1)[1],
              backend="xla")
  with pytest.raises(jax.errors.JaxRuntimeError,
                     match="(?s)^INTERNAL: CpuCallback error calling callback: Traceback.*"
                           "ValueError: debug boom\n-{20}\nFor simplicity, JAX has removed"):
    np.asarray(f(jnp.ones(2)))


def test_wrong_result_shape_or_dtype_is_a_clear_error():
  wrong_shape = jax.jit(lambda x: jax.pure_callback(
      lambda v: np.zeros(4, np.float32), jax.ShapeDtypeStruct((3,), jnp.float32), x),
      backend="xla")
  with pytest.raises(pjrt.XlaRuntimeError, match=r"RuntimeError: Incorrect output shape for "
                                                r"return value #0: Expected: \(3,\), "
                                                r"Actual: \(4,\)"):
    np.asarray(wrong_shape(jnp.ones(3)))
  wrong_dtype = jax.jit(lambda x: jax.pure_callback(
      lambda v: np.asarray(v).astype(np.int32), jax.ShapeDtypeStruct((3,), jnp.float32), x),
      backend="xla")
  with pytest.raises(pjrt.XlaRuntimeError, match="Incorrect output dtype for return value "
                                                 "#0: Expected: float32, Actual: int32"):
    np.asarray(wrong_dtype(jnp.ones(3)))
  wrong_count = jax.jit(lambda x: jax.pure_callback(
      lambda v: (v, v), jax.ShapeDtypeStruct((3,), jnp.float32), x), backend="xla")
  with pytest.raises(pjrt.XlaRuntimeError, match="Mismatched number of outputs from "
                                                 "callback. Expected: 1, Actual: 2"):
    np.asarray(wrong_count(jnp.ones(3)))


def test_callbacks_from_several_threads():
  import threading
  f = jax.jit(lambda x: jax.pure_callback(lambda v: v + 1,
                                          jax.ShapeDtypeStruct((64,), jnp.float32), x) * 2,
              backend="xla")
  errors = []

  def run(k):
    try:
      for i in range(50):
        out = np.asarray(f(jnp.full(64, float(k * 100 + i))))
        assert (out == 2 * (k * 100 + i + 1)).all()
    except Exception as e:  # reported below
      errors.append(e)
  threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
  for t in threads:
    t.start()
  for t in threads:
    t.join()
  assert not errors, errors


# ----------------------------------------------------------------------------- tiers

def test_auto_policy_now_compiles_functions_with_callbacks(monkeypatch):
  monkeypatch.setattr(tiers.Probe, "BUDGET", 0.0)   # any execution earns a compile
  seen = []

  def f(x):
    jax.debug.callback(lambda v: seen.append(float(v.sum())), x)
    return jax.pure_callback(np.cos, jax.ShapeDtypeStruct(x.shape, x.dtype), x) * 2
  g = jax.jit(f)
  x = jnp.linspace(0, 1, 100)
  expected = np.cos(np.asarray(x)) * 2
  deadline = time.time() + 60
  np.testing.assert_allclose(g(x), expected, rtol=1e-6)
  while g.stats()[0]["tier_ms"] == {} and time.time() < deadline:
    assert "unavailable" not in (g.stats()[0]["note"] or ""), g.stats()[0]["note"]
    np.testing.assert_allclose(g(x), expected, rtol=1e-6)
    time.sleep(0.01)
  row = g.stats()[0]
  assert "xla" in row["compile_ms"] and set(row["tier_ms"]) == {"numpy", "xla"}, row
  jax.effects_barrier()
  assert len(seen) == row["calls"] and set(seen) == {float(np.asarray(x).sum())}


def test_a_fresh_process_registers_runs_and_exits_cleanly():
  code = ("import numpy as np, jaxlite as jax, jaxlite.numpy as jnp\n"
          "f = jax.jit(lambda x: jax.pure_callback(lambda v: v * 2, "
          "jax.ShapeDtypeStruct((2,), jnp.float32), x), backend='xla')\n"
          "jax.jit(lambda x: jax.debug.print('v={}', x), backend='xla')(jnp.ones(2))\n"
          "print(np.asarray(f(jnp.ones(2))).tolist())\n")
  out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
  assert out.returncode == 0, out.stderr[-2000:]
  assert out.stdout == "v=[1. 1.]\n[2.0, 2.0]\n"


# ----------------------------------------------------------------------------- ordering

def test_ordered_effects_run_in_program_order():
  # XLA runs independent side-effecting calls in any order (unordered prints of a vmap
  # come out shuffled, in JAX too); ordered ones are chained by a value each passes to
  # the next, so they run as the jaxpr lists them.
  from jaxlite.experimental import io_callback
  seen = []

  def f(x):
    jax.debug.callback(lambda v: seen.append(("a", int(v))), x, ordered=True)
    jax.debug.callback(lambda v: seen.append(("b", int(v))), x * 10, ordered=True)
  g = jax.jit(jax.vmap(jax.vmap(f)), backend="xla")
  x = jnp.arange(12).reshape(3, 4)
  assert g.lower(x).as_text().count("(tensor<i8>, tensor<i32>) -> (tensor<i8>)") == 24
  # vmap unrolls each callback, the inner axis outermost (as JAX does)
  want = [(tag, scale * (4 * i + j)) for tag, scale in (("a", 1), ("b", 10))
          for j in range(4) for i in range(3)]
  for _ in range(3):
    g(x)
    jax.effects_barrier()
    assert seen == want
    seen.clear()
  h = jax.jit(lambda x: [io_callback(seen.append, None, x[i], ordered=True)
                         for i in range(4)] and x, backend="xla")
  h(jnp.arange(4))
  jax.effects_barrier()
  assert [int(v) for v in seen] == [0, 1, 2, 3]


def test_io_callback_results_and_vmap_on_xla():
  from jaxlite.experimental import io_callback
  calls = []

  def host(v):
    calls.append(np.asarray(v).tolist())
    return np.asarray(v) * 2
  f = jax.jit(jax.vmap(lambda x: io_callback(host, jax.ShapeDtypeStruct((2,), jnp.float32),
                                             x)), backend="xla")
  np.testing.assert_array_equal(f(jnp.arange(6.0).reshape(3, 2)), [[0, 2], [4, 6], [8, 10]])
  assert calls == [[0, 1], [2, 3], [4, 5]]   # one call per element, in order


@pytest.mark.parametrize("n", [3, 1 << 15])   # read by copy; read in place (aliased)
def test_an_error_in_a_dispatch_that_runs_inline_surfaces_when_read(n):
  # A small program on ready inputs runs inside Execute; after INLINE_AFTER such runs its
  # dispatches skip asking whether it finished (the cached call, pjrt._CACHED_CALL). A
  # failing run on that path must still raise (the CPU client reports a callback's error
  # from Execute itself; an error on the completion event would raise at the read), and
  # later runs work.
  def host(v):
    if v[0] < 0:
      raise ValueError("negative on the host")
    return v + 1
  f = jax.jit(lambda x: jax.pure_callback(host, jax.ShapeDtypeStruct((n,), jnp.float32), x),
              backend="xla")
  good = jax.block_until_ready(jnp.ones(n) + 0)
  for _ in range(pjrt.INLINE_AFTER + 2):
    np.testing.assert_array_equal(f(good), np.full(n, 2))
  loaded = next(iter(f._cache.values())).run.executable.loaded
  assert loaded._streak[0] >= pjrt.INLINE_AFTER
  bad = jax.block_until_ready(jax.jit(lambda v: -v, backend="xla")(good))   # ready, too
  with pytest.raises(Exception, match="ValueError: negative on the host"):
    np.asarray(f(bad))
  np.testing.assert_array_equal(f(good), np.full(n, 2))
