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


def test_debug_callback_receives_numpy_values():
  seen = []
  jax.jit(lambda x: jax.debug.callback(lambda v: seen.append(v), x) or x)(3.0)
  assert len(seen) == 1 and isinstance(seen[0], np.ndarray) and seen[0] == 3.0


def test_pure_callback_under_jit_and_its_checks():
  f = jax.jit(lambda x: jax.pure_callback(lambda v: np.sort(v), jax.ShapeDtypeStruct(
      (3,), jnp.float32), x))
  np.testing.assert_allclose(f(jnp.array([3.0, 1.0, 2.0])), [1, 2, 3])
  bad = jax.jit(lambda x: jax.pure_callback(lambda v: v.astype(np.float64),
                                            jax.ShapeDtypeStruct((3,), jnp.float32), x))
  with pytest.raises(TypeError, match="returned dtype float64"):
    bad(jnp.ones(3))
  with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
    jax.grad(lambda x: jax.pure_callback(lambda v: v, jax.ShapeDtypeStruct((), jnp.float32),
                                         x))(1.0)
