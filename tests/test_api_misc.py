"""Smaller parts of the top-level API: context managers, linear_transpose, closure_convert."""
import numpy as np

import jaxlite as jax
import jaxlite.numpy as jnp


def test_disable_jit_context_runs_the_python_function():
  seen = []
  f = jax.jit(lambda x: seen.append(type(x).__name__) or x * 2)
  with jax.disable_jit():
    assert float(f(jnp.ones(()))) == 2.0
  f(jnp.ones(()))
  assert seen == ["Array", "JitTracer"]


def test_enable_x64_context_is_restored():
  with jax.enable_x64():
    assert jnp.arange(2).dtype == np.int64
  assert jnp.arange(2).dtype == np.int32


def test_linear_transpose_matches_the_adjoint():
  a = np.arange(6.0, dtype=np.float32).reshape(2, 3)
  f = lambda x: jnp.asarray(a) @ x
  ct, = jax.linear_transpose(f, jnp.ones(3))(jnp.array([1.0, 2.0]))
  np.testing.assert_allclose(ct, a.T @ np.array([1.0, 2.0]))


def test_tracing_entry_points_take_types_in_place_of_arrays():
  # JAX uses only shapes and dtypes here, so ShapeDtypeStruct and ShapedArray stand in
  from jaxlite._src.core.core import ShapedArray
  w = jnp.arange(2.0)
  for spec in (jax.ShapeDtypeStruct((2,), np.float32), ShapedArray((2,), np.float32)):
    ct, = jax.linear_transpose(lambda x: 2.0 * x, spec)(jnp.array([1.0, 3.0]))
    np.testing.assert_array_equal(ct, [2.0, 6.0])
    assert jax.eval_shape(lambda x: x[:1], spec) == jax.ShapeDtypeStruct((1,), np.float32)
    assert str(jax.make_jaxpr(jnp.sin)(spec)) == (
        "{ lambda ; a:f32[2]. let b:f32[2] = sin a in (b,) }")
    _, consts = jax.closure_convert(lambda x: x * w, spec)
    assert len(consts) == 0   # (a concrete array stays closed over, as in JAX 0.10.2)


def test_closure_convert_hoists_only_values_that_may_carry_tangents():
  # JAX 0.10.2: an eager array stays in the closure (no consts); a traced float value is
  # hoisted, a traced integer one is not (it has no tangent), and the gradient flows
  # through the hoisted one: grad of sum(x * x + w) is 2x = [2, 2]
  w = jnp.arange(3.0)
  converted, consts = jax.closure_convert(lambda x: x * w, 1.0)
  assert consts == []
  np.testing.assert_allclose(converted(2.0), [0, 2, 4])
  seen = []

  def g(x):
    n = jnp.asarray(x, jnp.int32)
    f, consts = jax.closure_convert(lambda y: y * x + w[:2] + n, x)
    seen.append([c.dtype for c in consts])
    return f(x, *consts)
  jax.make_jaxpr(g)(jnp.ones(2))
  assert seen == [[np.float32]]
  np.testing.assert_allclose(jax.grad(lambda x: g(x).sum())(jnp.ones(2)), [2.0, 2.0])


def test_typeof_and_environment():
  assert str(jax.typeof(jnp.ones((2, 3)))) == "float32[2,3]"
  assert "jaxlite" in jax.print_environment_info(return_string=True)
  assert jax.process_count() == 1 and jax.process_index() == 0
  np.testing.assert_allclose(jax.jacobian(lambda x: x ** 2)(jnp.arange(3.0)),
                             np.diag([0.0, 2.0, 4.0]))


def test_nan_and_inf_stay_silent_when_warnings_are_errors():
  # XLA computes them silently; pytest's filterwarnings = error must not make jaxlite's
  # NumPy kernels raise, eagerly (each fast path) or in a tier-0 program
  import warnings
  x = jnp.array([0.0, 1.0, -1.0])
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    np.testing.assert_array_equal(1.0 / x, [np.inf, 1.0, -1.0])        # binary kernel
    np.testing.assert_array_equal(jnp.log(x), [-np.inf, 0.0, np.nan])   # unary kernel
    np.testing.assert_array_equal(jax.lax.div(x, x[::-1]), [0.0, 1.0, -np.inf])
    out = jax.jit(lambda x: (1.0 / x, jnp.sqrt(x)))(x)
    np.testing.assert_array_equal(out[0], [np.inf, 1.0, -1.0])
    np.testing.assert_array_equal(out[1], [0.0, 1.0, np.nan])
    with np.testing.assert_raises(RuntimeWarning):   # the program's own NumPy still warns
      np.float32(1) / np.float32(0)


def test_complex_arithmetic_stays_silent_when_filters_are_replaced():
  # pytest.warns and catch_warnings(record=True) replace jaxlite's warning filters; XLA's
  # special-value complex arithmetic, which tier 0 computes with divisions by zero parts,
  # must still say nothing on finite operands (optimistix's complex tests use pytest.warns;
  # values from NumPy's own complex arithmetic)
  import warnings
  z = np.array([1.5 - 2.0j, -0.5 + 0.25j])
  with warnings.catch_warnings(record=True) as log:
    warnings.simplefilter("always")
    np.testing.assert_allclose(jnp.asarray(z) / jnp.asarray(2.0 + 0j), z / 2, rtol=1e-6)
    np.testing.assert_allclose(jnp.asarray(z) ** 2, z ** 2, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(lambda a: a / (1 + 0j))(z), z, rtol=1e-6)
    np.testing.assert_allclose(jax.lax.rsqrt(jnp.asarray(z)), 1 / np.sqrt(z), rtol=1e-5)
    jax.random.normal(jax.random.key(0), (3,), jnp.complex64)
  assert [str(w.message) for w in log] == []


def test_transformations_wrap_callables_whose_name_is_not_a_string():
  # JAX's wraps copies what it can: an equinox Module's __name__ may be anything
  class Scale:
    __name__ = property(lambda self: 3)

    def __call__(self, x):
      return 2.0 * x

  np.testing.assert_array_equal(jax.vmap(Scale())(jnp.ones(2)), [2.0, 2.0])
  assert float(jax.grad(Scale())(1.0)) == 2.0
  assert float(jax.value_and_grad(Scale())(1.0)[1]) == 2.0
  assert jax.vmap(Scale()).__name__ == "vmap_f"
