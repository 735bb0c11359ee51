"""jax.debug.print / callback and pure_callback run at run time, on every call."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp


def test_debug_print_prints_values_on_every_jitted_call(capsys):
  @jax.jit
  def f(x):
    jax.debug.print("x = {x}, doubled={}", x * 2, x=x)
    return x + 1
  f(jnp.ones(2))
  f(jnp.zeros(2))
  assert capsys.readouterr().out == "x = [1. 1.], doubled=[2. 2.]\nx = [0. 0.], doubled=[0. 0.]\n"


def test_debug_print_survives_dead_code_elimination_and_grad(capsys):
  def f(x):
    jax.debug.print("{}", x)
    return x * 3
  assert float(jax.jit(jax.grad(f))(2.0)) == 3.0
  assert capsys.readouterr().out == "2.0\n"


def test_debug_print_jaxpr_has_no_binder():
  text = str(jax.make_jaxpr(lambda x: jax.debug.print("{}", x) or x)(1.0))
  assert "    debug_print[" in text and "= debug_print" not in text


def test_debug_callback_receives_arrays():
  # JAX passes its callbacks jax.Arrays (on the CPU), not NumPy arrays
  seen = []
  jax.jit(lambda x: jax.debug.callback(lambda v: seen.append(v), x) or x)(3.0)
  assert len(seen) == 1 and isinstance(seen[0], jax.Array) and seen[0] == 3.0


def test_pure_callback_under_jit_and_its_checks():
  f = jax.jit(lambda x: jax.pure_callback(lambda v: np.sort(v), jax.ShapeDtypeStruct(
      (3,), jnp.float32), x))
  np.testing.assert_allclose(f(jnp.array([3.0, 1.0, 2.0])), [1, 2, 3])
  # results are canonicalized first (float64 is float32 without x64), then checked
  halve = jax.jit(lambda x: jax.pure_callback(lambda v: np.asarray(v, np.float64) / 2,
                                              jax.ShapeDtypeStruct((3,), jnp.float32), x))
  assert halve(jnp.ones(3)).dtype == jnp.float32
  bad = jax.jit(lambda x: jax.pure_callback(lambda v: np.asarray(v).astype(np.int32),
                                            jax.ShapeDtypeStruct((3,), jnp.float32), x))
  with pytest.raises(RuntimeError, match="Incorrect output dtype for return value #0: "
                                         "Expected: float32, Actual: int32"):
    bad(jnp.ones(3))
  with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
    jax.grad(lambda x: jax.pure_callback(lambda v: v, jax.ShapeDtypeStruct((), jnp.float32),
                                         x))(1.0)


def test_debug_print_without_placeholders_appends_the_values(capsys):
  jax.debug.print("values:", jnp.int32(3), "text", skip_format_check=True)
  jax.debug.print("plain")
  assert capsys.readouterr().out == "values: 3 text\nplain\n"


def test_debug_print_and_callback_argument_errors():
  with pytest.raises(ValueError, match=r"Unused positional arguments to `jax.debug.print`: "
                                       r"\[2\]"):
    jax.debug.print("{}", 1, 2)
  with pytest.raises(TypeError, match="debug_print received unexpected arguments in the "
                                      "two-call form"):
    jax.debug.print(None, 1)
  with pytest.raises(TypeError, match="first argument to jax.debug.callback must be "
                                      "callable, but got an object of type <class 'int'>"):
    jax.debug.callback(3, 1.0)
  with pytest.raises(TypeError, match="debug_callback received unexpected arguments"):
    jax.debug.callback(None, 1.0)


def test_debug_print_uses_the_print_options_at_trace_time(capsys):
  f = jax.jit(lambda x: jax.debug.print("{}", x), backend="numpy")
  with np.printoptions(precision=2):
    f(jnp.float32([1 / 3, 2 / 3]))   # traced here
  f(jnp.float32([1 / 3, 2 / 3]))     # the cached trace keeps precision=2
  assert capsys.readouterr().out == "[0.33 0.67]\n[0.33 0.67]\n"


def test_debug_log_goes_to_the_logger_at_the_callers_line(caplog):
  import logging
  import sys
  with caplog.at_level(logging.INFO, logger="jaxlite._src.debugging"):
    jax.jit(lambda x: jax.debug.log("logged {}", x))(jnp.int32(5))
    line = sys._getframe().f_lineno - 1
  (record,) = caplog.records
  assert record.getMessage() == "logged 5" and record.levelno == logging.INFO
  assert record.pathname == __file__ and record.lineno == line


def test_io_callback_is_kept_and_checked():
  from jaxlite.experimental import io_callback
  seen = []
  f = jax.jit(lambda x: (io_callback(seen.append, None, x), x + 1)[1], backend="numpy")
  np.testing.assert_array_equal(f(jnp.arange(2)), [1, 2])   # no result, yet it ran
  assert len(seen) == 1 and isinstance(seen[0], jax.Array)
  with pytest.raises(ValueError, match="result_shape_dtypes cannot specify 64-bit types"):
    io_callback(lambda: np.zeros(()), jax.ShapeDtypeStruct((), np.int64))


def test_effects_inside_control_flow_are_kept_when_results_are_unused(capsys):
  from jaxlite import lax
  from jaxlite.experimental import io_callback
  seen = []

  def record(v):
    seen.append(v)
    return v

  def body(i, c):
    jax.debug.print("it {}", i)
    return c + 1

  def f(x):
    lax.fori_loop(0, 2, body, x)             # a loop whose result is unused
    lax.fori_loop(0, 2, body, x)             # the same loop again: not merged with it
    lax.cond(x > 0, lambda: jax.debug.print("pos"), lambda: None)
    jax.vmap(lambda v: io_callback(record, jax.ShapeDtypeStruct((), jnp.float32), v))(
        jnp.ones(3) * x)                     # a scan of io_callbacks
    return x
  jax.jit(f, backend="numpy")(jnp.float32(1))
  assert capsys.readouterr().out == "it 0\nit 1\nit 0\nit 1\npos\n"
  assert len(seen) == 3


def test_a_value_a_callback_kept_is_not_overwritten_by_tier_0():
  # tier 0 writes results into the buffers of values that die; a callback may keep one
  seen = []

  def f(x):
    y = x * 2
    jax.debug.callback(seen.append, y)
    z = jax.pure_callback(lambda v: (seen.append(v), v)[1],
                          jax.ShapeDtypeStruct(y.shape, y.dtype), y * 3)
    return z + 1
  np.testing.assert_array_equal(jax.jit(f, backend="numpy")(jnp.ones(4)), [7, 7, 7, 7])
  np.testing.assert_array_equal(seen[0], [2, 2, 2, 2])
  np.testing.assert_array_equal(seen[1], [6, 6, 6, 6])


@pytest.mark.parametrize("staged", [False, True])
@pytest.mark.parametrize("kind", ["pure_callback", "io_callback", "debug.callback"])
def test_an_exception_in_a_callback_is_a_runtime_error_with_its_traceback(kind, staged,
                                                                           caplog):
  # JAX 0.10.2 (recorded with /work/jaxref, eager and under jit): JaxRuntimeError (a
  # RuntimeError), "INTERNAL: CpuCallback error calling callback: Traceback (most recent
  # call last):\n ... ValueError: boom", no __cause__, and the logger
  # jax._src.callback (jax._src.debugging for debug.callback) records "jax.<kind> failed"
  from jaxlite.experimental import io_callback

  def boom(*_):
    raise ValueError("boom")
  out = jax.ShapeDtypeStruct((), jnp.float32)
  call = {"pure_callback": lambda x: jax.pure_callback(boom, out, x),
          "io_callback": lambda x: io_callback(boom, out, x),
          "debug.callback": lambda x: jax.debug.callback(boom, x)}[kind]
  f = jax.jit(call) if staged else call
  with pytest.raises(jax.errors.JaxRuntimeError) as info:
    jax.block_until_ready(f(jnp.float32(1)))
  message = str(info.value)
  assert isinstance(info.value, RuntimeError) and info.value.__cause__ is None
  assert message.startswith("INTERNAL: CpuCallback error calling callback: Traceback (most "
                            "recent call last):\n")
  assert message.endswith("\nValueError: boom")
  logger = "jax._src.debugging" if kind == "debug.callback" else "jax._src.callback"
  assert (logger, f"jax.{kind} failed") in [(r.name, r.getMessage()) for r in caplog.records]
