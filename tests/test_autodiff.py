"""Differentiation: every differentiable primitive against finite differences, in both
modes, to second order; the API's errors; higher-order and nested derivatives."""
import re

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.test_util import check_grads

rng = np.random.default_rng(0)


def _uniform(lo, hi, shape=(3,)):
  return lambda dtype: rng.uniform(lo, hi, shape).astype(dtype)


# (name, function, domain of each argument)
UNARY = [
    ("neg", lax.neg, _uniform(-2, 2)), ("exp", lax.exp, _uniform(-2, 2)),
    ("exp2", lax.exp2, _uniform(-2, 2)), ("log", lax.log, _uniform(0.5, 3)),
    ("log1p", lax.log1p, _uniform(-0.5, 2)), ("expm1", lax.expm1, _uniform(-2, 2)),
    ("tanh", lax.tanh, _uniform(-2, 2)), ("logistic", lax.logistic, _uniform(-3, 3)),
    ("sin", lax.sin, _uniform(-3, 3)), ("cos", lax.cos, _uniform(-3, 3)),
    ("tan", lax.tan, _uniform(-1, 1)), ("asin", lax.asin, _uniform(-0.8, 0.8)),
    ("acos", lax.acos, _uniform(-0.8, 0.8)), ("atan", lax.atan, _uniform(-2, 2)),
    ("sinh", lax.sinh, _uniform(-2, 2)), ("cosh", lax.cosh, _uniform(-2, 2)),
    ("asinh", lax.asinh, _uniform(-2, 2)), ("acosh", lax.acosh, _uniform(1.5, 3)),
    ("atanh", lax.atanh, _uniform(-0.8, 0.8)), ("sqrt", lax.sqrt, _uniform(0.5, 3)),
    ("rsqrt", lax.rsqrt, _uniform(0.5, 3)), ("cbrt", lax.cbrt, _uniform(0.5, 3)),
    ("abs", lax.abs, _uniform(0.5, 3)), ("square", lax.square, _uniform(-2, 2)),
    ("integer_pow3", lambda x: lax.integer_pow(x, 3), _uniform(-2, 2)),
    ("integer_pow-2", lambda x: lax.integer_pow(x, -2), _uniform(0.5, 2)),
    ("reduce_sum", lambda x: lax.reduce_sum(x, (0,)), _uniform(-2, 2)),
    ("reduce_max", lambda x: lax.reduce_max(x, (0,)), _uniform(-2, 2)),
    ("reduce_min", lambda x: lax.reduce_min(x, (0,)), _uniform(-2, 2)),
    ("broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 3), (1,)), _uniform(-2, 2)),
    ("reshape", lambda x: lax.reshape(x, (3, 1)), _uniform(-2, 2)),
    ("rev", lambda x: lax.rev(x, (0,)), _uniform(-2, 2)),
    ("slice", lambda x: lax.slice(x, (1,), (3,)), _uniform(-2, 2)),
    ("strided_slice", lambda x: lax.slice(x, (0,), (3,), (2,)), _uniform(-2, 2)),
    ("pad", lambda x: lax.pad(x, np.float32(0) if x.dtype == np.float32 else 0.0,
                              [(1, -1, 1)]), _uniform(-2, 2)),
    ("dynamic_slice", lambda x: lax.dynamic_slice(x, (np.int32(1),), (2,)), _uniform(-2, 2)),
]

BINARY = [
    ("add", lax.add), ("sub", lax.sub), ("mul", lax.mul), ("div", lax.div),
    ("max", lax.max), ("min", lax.min), ("atan2", lax.atan2), ("rem", lax.rem),
    ("pow", lax.pow),
    ("concatenate", lambda x, y: lax.concatenate([x, y], 0)),
    ("dot_general", lambda x, y: lax.dot_general(x, y, (((0,), (0,)), ((), ())))),
    ("dynamic_update_slice", lambda x, y: lax.dynamic_update_slice(
        x, lax.slice(y, (0,), (2,)), (np.int32(1),))),
    ("select_n", lambda x, y: lax.select_n(x > 0.5, x, y)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,fun,domain", UNARY, ids=[u[0] for u in UNARY])
def test_unary_primitive_derivatives_match_finite_differences(name, fun, domain, dtype,
                                                              x64):
  x64(dtype == np.float64)
  check_grads(fun, (domain(dtype),), order=2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,fun", BINARY, ids=[b[0] for b in BINARY])
def test_binary_primitive_derivatives_match_finite_differences(name, fun, dtype, x64):
  x64(dtype == np.float64)
  x = rng.uniform(0.5, 2, 3).astype(dtype)
  y = rng.uniform(0.5, 2, 3).astype(dtype) + np.array([0, 0.1, 0.2], dtype)
  check_grads(fun, (x, y), order=2)


def test_every_differentiable_elementwise_primitive_is_checked_above():
  """The specs with derivative rules (not ZERO, not a reason for having none) each have
  a row above (``integer_pow`` under the names of its powers)."""
  from jaxlite._src.lax import elementwise as ew
  names = {row[0] for row in UNARY + BINARY}
  differentiable = [spec.name for spec in ew.specs.values()
                    if spec.jvp is None or isinstance(spec.jvp, tuple)]
  assert [n for n in differentiable
          if not any(re.fullmatch(rf"{n}(-?\d+)?", row) for row in names)] == []


def test_convert_element_type_derivative_between_float_widths(x64):
  x64(True)
  x = rng.uniform(-2, 2, 3).astype(np.float32)
  # (float32 inputs, float64 outputs: the finite difference carries float32 rounding)
  check_grads(lambda x: lax.convert_element_type(x, np.float64) ** 2, (x,), order=2,
              atol=1e-3, rtol=1e-3)
  check_grads(lambda x: lax.convert_element_type(x.astype(np.float64), np.float32), (x,), 2)
  assert float(jax.grad(lambda x: lax.convert_element_type(x, np.int32) * 1.0)(1.5)) == 0.0


def test_matrix_products_with_batch_dimensions_match_finite_differences():
  a = rng.standard_normal((2, 3, 4)).astype(np.float32)
  b = rng.standard_normal((2, 4, 5)).astype(np.float32)
  check_grads(lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))), (a, b), 2,
              eps=1e-3)   # (float32: JAX's 1e-4 step leaves rounding above its tolerance)
  check_grads(lambda a, b: jnp.matmul(a, b), (a, b), 1, eps=1e-3)
  c = rng.standard_normal((4, 2, 3)).astype(np.float32)
  check_grads(lambda a, c: lax.dot_general(a, c, (((1, 0), (2, 1)), ((), ()))), (a, c), 1,
              eps=1e-3)


def test_broadcasting_binary_ops_sum_their_gradient_back():
  x = rng.standard_normal((2, 3)).astype(np.float32)
  check_grads(lambda x, s: lax.mul(x, s), (x, np.float32(1.5)), 2)
  check_grads(lambda x, r: x * r + r, (x, rng.standard_normal(3).astype(np.float32)), 2)
  check_grads(lambda x, c: x / c, (x, rng.uniform(1, 2, (2, 1)).astype(np.float32)), 2)


def test_numpy_functions_derivatives():
  x = rng.uniform(0.5, 2, (2, 3)).astype(np.float32)
  for f in [jnp.mean, jnp.var, jnp.std, lambda x: jnp.max(x, axis=1), jnp.log2,
            lambda x: jnp.where(x > 1, x ** 2, jnp.sin(x)), lambda x: x.T @ x,
            lambda x: jnp.concatenate([x, 2 * x], axis=1), lambda x: jnp.linspace(0, 1, 3) * x,
            lambda x: jnp.stack([x, x]).sum(0), lambda x: jnp.maximum(x, 1.0),
            lambda x: jnp.clip(x, 0.7, 1.5), lambda x: jnp.asarray(x)[::-1, 1:]]:
    check_grads(f, (x,), order=1)


def test_tutorial_sum_of_squares_gradient():
  def sum_of_squares(x):
    return jnp.sum(x ** 2)
  g = jax.grad(sum_of_squares)(jnp.asarray([1., 2., 3., 4.]))
  assert repr(g) == "Array([2., 4., 6., 8.], dtype=float32)"


def test_grad_with_argnums_tuple_and_value_and_grad():
  f = lambda x, y: jnp.sum(x * y ** 2)
  x, y = jnp.arange(3.0), jnp.ones(3) * 2
  gx, gy = jax.grad(f, argnums=(0, 1))(x, y)
  np.testing.assert_allclose(gx, [4, 4, 4])
  np.testing.assert_allclose(gy, 2 * np.arange(3.0) * 2)
  value, g = jax.value_and_grad(f)(x, y)
  assert float(value) == 12.0 and np.allclose(g, [4, 4, 4])


def test_has_aux_returns_the_auxiliary_data():
  def loss(w):
    return jnp.sum(w ** 2), {"norm": jnp.sqrt(jnp.sum(w ** 2))}
  g, aux = jax.grad(loss, has_aux=True)(jnp.array([3.0, 4.0]))
  np.testing.assert_allclose(g, [6.0, 8.0])
  assert float(aux["norm"]) == 5.0
  (v, aux2), g2 = jax.value_and_grad(loss, has_aux=True)(jnp.array([3.0, 4.0]))
  assert float(v) == 25.0 and float(aux2["norm"]) == 5.0


def test_tuple_output_without_has_aux_suggests_it():
  with pytest.raises(TypeError, match="has_aux=True"):
    jax.grad(lambda x: (jnp.sum(x), x))(jnp.ones(2))


def test_grad_of_non_scalar_output_is_a_clear_error():
  with pytest.raises(TypeError, match=r"Gradient only defined for scalar-output functions. "
                     r"Output had shape: \(2,\)"):
    jax.grad(lambda x: x * 2)(jnp.ones(2))


def test_grad_of_integer_input_needs_allow_int():
  with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
    jax.grad(lambda x: x * 1.0)(1)
  g = jax.grad(lambda x, y: x * y, argnums=(0, 1), allow_int=True)(2.0, 3)
  assert float(g[0]) == 3.0 and g[1].dtype == jax.dtypes.float0


def test_argnums_out_of_range_is_a_clear_error():
  with pytest.raises(TypeError, match="requires at least 3 positional arguments"):
    jax.grad(lambda x: x, argnums=2)(1.0)


def test_higher_order_derivatives():
  assert float(jax.grad(jax.grad(jax.grad(lambda x: x ** 4)))(2.0)) == 48.0
  np.testing.assert_allclose(jax.grad(jax.grad(jnp.sin))(1.0), -np.sin(1.0), rtol=1e-6)
  # jvp of vjp and vjp of jvp agree with the analytic second derivative
  f = lambda x: jnp.exp(jnp.sin(x))
  x = 0.7
  fpp = np.exp(np.sin(x)) * (np.cos(x) ** 2 - np.sin(x))
  _, t = jax.jvp(jax.grad(f), (x,), (1.0,))
  np.testing.assert_allclose(t, fpp, rtol=1e-5)
  _, pullback = jax.vjp(lambda x: jax.jvp(f, (x,), (1.0,))[1], x)
  np.testing.assert_allclose(pullback(1.0)[0], fpp, rtol=1e-5)


def test_closing_over_an_outer_tracer_is_not_confused_with_the_inner_one():
  # d/dx [d/dy (x * y)] = d/dx x = 1 (perturbation confusion would give 2)
  assert float(jax.grad(lambda x: jax.grad(lambda y: x * y)(1.0) * x)(2.0)) == 4.0
  assert float(jax.grad(lambda x: jax.grad(lambda y: x * y)(1.0))(2.0)) == 1.0


def test_python_control_flow_on_concrete_values_works_under_grad():
  def f(x):
    return x ** 2 if x > 0 else -x
  assert float(jax.grad(f)(3.0)) == 6.0 and float(jax.grad(f)(-3.0)) == -1.0


def test_where_leaks_nan_into_gradients_like_jax():
  def unsafe(x):
    return jnp.where(x > 0, jnp.sqrt(x), 0.0)

  def safe(x):
    return jnp.where(x > 0, jnp.sqrt(jnp.where(x > 0, x, 1.0)), 0.0)
  assert np.isnan(jax.grad(unsafe)(-1.0))
  assert float(jax.grad(safe)(-1.0)) == 0.0


def test_linearize_gives_a_linear_jaxpr():
  y, f_jvp = jax.linearize(jnp.sin, 1.0)
  np.testing.assert_allclose(f_jvp(2.0), 2 * np.cos(1.0), rtol=1e-6)
  np.testing.assert_allclose(y, np.sin(1.0), rtol=1e-6)
  text = str(jax.make_jaxpr(f_jvp)(1.0))
  assert "mul" in text and "sin" not in text and "cos" not in text


def test_vjp_with_pytrees():
  def f(p):
    return {"out": p["w"] * p["b"][0]}
  p = {"w": jnp.arange(3.0), "b": (jnp.array(2.0),)}
  out, pullback = jax.vjp(f, p)
  ct, = pullback({"out": jnp.ones(3)})
  np.testing.assert_allclose(ct["w"], [2, 2, 2])
  np.testing.assert_allclose(ct["b"][0], 3.0)


def test_jvp_checks_its_arguments():
  with pytest.raises(TypeError, match="must be tuples or lists"):
    jax.jvp(jnp.sin, 1.0, 1.0)
  with pytest.raises(ValueError, match="different primal and tangent shapes"):
    jax.jvp(jnp.sin, (jnp.ones(3),), (jnp.ones(2),))


def test_gradient_tracer_prints_like_jax():
  shown = []
  jax.grad(lambda x: shown.append(repr(x)) or x * 1.0)(1.0)
  assert shown == ["GradTracer(primal=1.0, typeof(tangent)=f32[])"]


def test_jvp_of_a_jitted_call_leaves_outputs_without_tangent_plain():
  # As in JAX: an output of the call that no differentiated input reaches is not a
  # JVPTracer (equinox's filter_jvp returns None as its tangent; JAX 0.10.2 prints
  # "JVPTracer ArrayImpl JVPTracer" for the three outputs here)
  f = jax.jit(lambda x, y: (x * 2.0, y + 1.0, jnp.sin(x) * 0.0 + 3.0))
  kinds = []

  def outer(x):
    outs = f(x, jnp.array(1.0))
    kinds.extend(type(o).__name__ for o in outs)
    return outs

  primals, tangents = jax.jvp(outer, (1.0,), (1.0,))
  assert kinds == ["JVPTracer", "Array", "JVPTracer"]
  np.testing.assert_allclose(primals, [2.0, 2.0, 3.0])
  np.testing.assert_allclose(tangents, [2.0, 0.0, 0.0])
  assert jax.grad(lambda x: sum(f(x, x)))(1.0) == pytest.approx(3.0)


def test_jvp_returns_the_values_it_was_given():
  # JAX 0.10.2 (recorded with /work/jaxref): jvp(lambda x: x, (2.0,), (3.0,)) is the
  # Python floats (2.0, 3.0); a NumPy input comes back as itself; a constant output stays
  # as the function made it; an integer input with a float0 tangent is not traced, so
  # Python computes 3 ** 2 = 9 (an int)
  assert jax.jvp(lambda x: x, (2.0,), (3.0,)) == (2.0, 3.0)
  assert all(type(v) is float for v in jax.jvp(lambda x: x, (2.0,), (3.0,)))
  a = np.ones(2, np.float32)
  p, t = jax.jvp(lambda x: x, (a,), (a,))
  assert p is a and t is a
  (p, c), _ = jax.jvp(lambda x: (x, 5.0), (2.0,), (3.0,))
  assert (p, c) == (2.0, 5.0) and type(c) is float
  p, _ = jax.jvp(lambda x: x ** 2, (3,), (np.zeros((), jax.dtypes.float0),))
  assert p == 9 and type(p) is int


def test_a_custom_jvp_rules_python_values_pass_through_jvp():
  # JAX 0.10.2: the rule sees the Python float 2.0 and returns Python floats (5.0, 9.0)
  @jax.custom_jvp
  def f(x):
    return x ** 2 + 1

  @f.defjvp
  def f_jvp(primals, tangents):
    x, = primals
    return x ** 2 + 1, tangents[0] ** 2

  out = jax.jvp(f, (2.0,), (3.0,))
  assert out == (5.0, 9.0) and all(type(v) is float for v in out)


def test_operations_on_a_jvp_of_python_floats_give_arrays():
  # JAX 0.10.2: jnp.asarray, x + 1 and a jitted identity all return Arrays (a conversion
  # of a concrete tracer is bound; a jitted call returns arrays)
  for f in (jnp.asarray, lambda x: x + 1, jax.jit(lambda x: x)):
    p, t = jax.jvp(f, (2.0,), (1.0,))
    assert isinstance(p, jax.Array) and isinstance(t, jax.Array)
  seen = []

  def g(y):
    seen.append(jax.jvp(lambda x: x + 1, (1.0,), (1.0,))[1])
    return y
  jax.jit(g)(1.0)
  assert isinstance(seen[0], jax.Array)
