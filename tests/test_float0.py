"""float0: the tangents and cotangents of integers and booleans, as JAX 0.10.2 gives them.

The expected values were recorded from JAX 0.10.2 (jax, jax.numpy as jnp)."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax


def _vjp_of_int_input(x):
  _, vjp = jax.vjp(lambda i, x: x * 2.0, 0, x)
  return vjp(jnp.ones(3))


def test_jit_returns_float0_outputs_as_numpy_zeros():
  # JAX 0.10.2: type(g[0]) is a NumPy ndarray subclass, dtype [('float0', 'V')], and
  # g[0] == g[0] is NumPy's array(True) (eqx.tree_equal compares gradients so)
  for run in (_vjp_of_int_input, jax.jit(_vjp_of_int_input)):
    ct_int, ct_x = run(jnp.ones(3))
    assert isinstance(ct_int, np.ndarray) and ct_int.dtype == jax.dtypes.float0
    assert ct_int.shape == ()
    assert bool(np.all(ct_int == ct_int))
    np.testing.assert_array_equal(np.asarray(ct_x), [2.0, 2.0, 2.0])


def test_jit_float0_output_beside_a_key_and_in_containers():
  @jax.jit
  def f(x):
    return {"z": np.zeros((2, 3), jax.dtypes.float0), "k": jax.random.key(0), "x": x + 1}
  out = f(jnp.float32(1.0))
  assert type(out["z"]) is np.ndarray and out["z"].shape == (2, 3)
  assert out["z"].dtype == jax.dtypes.float0
  assert out["k"].dtype == jax.random.key(0).dtype
  assert float(out["x"]) == 2.0
  # a second call (the cached entry's fast path) gives the same
  out = f(jnp.float32(2.0))
  assert type(out["z"]) is np.ndarray and float(out["x"]) == 3.0


def test_lowered_and_compiled_give_float0_as_numpy():
  compiled = jax.jit(_vjp_of_int_input).lower(jnp.ones(3)).compile()
  ct_int, _ = compiled(jnp.ones(3))
  assert type(ct_int) is np.ndarray and ct_int.dtype == jax.dtypes.float0


def test_operations_on_float0_raise_jax_error():
  z = np.zeros((), jax.dtypes.float0)
  # JAX 0.10.2's messages
  with pytest.raises(TypeError, match=r"Called eq with a float0 at position 0\. float0s "
                     r"do not support any operations by design"):
    lax.eq(z, z)
  with pytest.raises(TypeError, match=r"Called neg with a float0 array\. float0s do not "
                     r"support any operations by design"):
    lax.neg(z)
  with pytest.raises(TypeError, match="taken a gradient with respect to an integer"):
    lax.add(jnp.float32(1), z)


@pytest.mark.parametrize("how", ["vjp", "linearize", "grad", "vjp_of_offset"])
def test_integer_inputs_are_unperturbed_in_custom_vjp(how):
  # JAX 0.10.2 prints "perturbed True False" for each: an integer's tangent is float0,
  # which JAX's maybe_jvp_tracer treats as zero, also the staged one of vjp and linearize
  seen = []

  @jax.custom_vjp
  def f(x, i):
    return x * 2

  def fwd(x, i):
    seen.append((x.perturbed, i.perturbed))
    return f(x.value, i.value), None

  f.defvjp(fwd, lambda r, g: (g * 2, None), symbolic_zeros=True)
  h = (lambda x, i: f(x, i + 1)) if how == "vjp_of_offset" else f
  if how == "grad":
    jax.grad(h)(1.0, 2)
  elif how == "linearize":
    jax.linearize(h, 1.0, 2)
  else:
    jax.vjp(h, 1.0, jnp.int32(2))
  assert seen == [(True, False)]


def test_linearize_keeps_the_integer_inputs_tangent_slot():
  # JAX 0.10.2: f_jvp takes one tangent per input, float0 for the integer
  out, f_jvp = jax.linearize(lambda x, i: x * i, 3.0, 2)
  assert float(out) == 6.0
  assert float(f_jvp(1.0, np.zeros((), jax.dtypes.float0))) == 2.0
