"""example_libraries: optimizers minimise a quadratic; stax builds and trains networks."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.example_libraries import optimizers, stax

OPTIMIZERS = {
    "sgd": optimizers.sgd(0.1), "momentum": optimizers.momentum(0.05, 0.9),
    "nesterov": optimizers.nesterov(0.05, 0.9), "adagrad": optimizers.adagrad(0.5),
    "rmsprop": optimizers.rmsprop(0.05), "rmsprop_momentum": optimizers.rmsprop_momentum(0.01),
    "adam": optimizers.adam(0.1), "adamax": optimizers.adamax(0.1),
    "sm3": optimizers.sm3(0.5),
    "sgd_schedule": optimizers.sgd(optimizers.exponential_decay(0.1, 100, 0.5)),
}


def _loss(p):
  return jnp.sum((p["w"] - jnp.array([1., -2., 3.])) ** 2) + (p["b"] + 1.) ** 2


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_minimises_a_quadratic(name):
  init, update, get_params = OPTIMIZERS[name]
  state = init({"w": jnp.zeros(3), "b": jnp.array(0.)})
  step = jax.jit(lambda i, s: update(i, jax.grad(_loss)(get_params(s)), s))
  start = float(_loss(get_params(state)))
  for i in range(150):
    state = step(i, state)
  assert float(_loss(get_params(state))) < 1e-2 * start


def test_sgd_step_is_exact():
  init, update, get_params = optimizers.sgd(0.5)
  state = update(0, jnp.array([2., 4.]), init(jnp.array([1., 1.])))
  assert get_params(state).tolist() == [0., -1.]


def test_adam_first_step_moves_by_the_step_size():
  init, update, get_params = optimizers.adam(0.1)
  state = update(0, jnp.array([3., -0.5]), init(jnp.zeros(2)))
  np.testing.assert_allclose(np.asarray(get_params(state)), [-0.1, 0.1], rtol=1e-5)


def test_update_rejects_a_gradient_of_another_structure():
  init, update, _ = optimizers.sgd(0.1)
  with pytest.raises(TypeError, match="did not match the parameter tree"):
    update(0, [jnp.zeros(2)], init((jnp.zeros(2),)))


def test_pack_and_unpack_optimizer_state_round_trip():
  init, update, get_params = optimizers.momentum(0.1, 0.9)
  state = update(0, {"a": jnp.ones(2)}, init({"a": jnp.zeros(2)}))
  again = optimizers.pack_optimizer_state(optimizers.unpack_optimizer_state(state))
  assert jax.tree_util.tree_structure(again) == jax.tree_util.tree_structure(state)
  for x, y in zip(jax.tree_util.tree_leaves(again), jax.tree_util.tree_leaves(state)):
    np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_schedules():
  assert float(optimizers.constant(0.3)(10)) == 0.3
  np.testing.assert_allclose(float(optimizers.exponential_decay(1., 10, 0.5)(20)), 0.25)
  np.testing.assert_allclose(float(optimizers.inverse_time_decay(1., 10, 1.)(10)), 0.5)
  np.testing.assert_allclose(float(optimizers.inverse_time_decay(1., 10, 1., True)(15)), 0.5)
  np.testing.assert_allclose(float(optimizers.polynomial_decay(1., 10, 0.)(5)), 0.5)
  np.testing.assert_allclose(float(optimizers.polynomial_decay(1., 10, 0.1)(50)), 0.1)
  sched = optimizers.piecewise_constant([10, 20], [1., 0.5, 0.1])
  assert [float(sched(i)) for i in (0, 10, 11, 25)] == [1., 1., 0.5, pytest.approx(0.1)]
  with pytest.raises(ValueError, match="one shorter"):
    optimizers.piecewise_constant([1, 2], [1.])


def test_clip_grads_limits_the_norm():
  g = {"a": jnp.array([3., 4.])}
  np.testing.assert_allclose(float(optimizers.l2_norm(optimizers.clip_grads(g, 1.))), 1.,
                             rtol=1e-6)


def test_serial_mlp_shapes_and_training_lowers_the_loss():
  init_fun, apply_fun = stax.serial(stax.Dense(16), stax.Relu, stax.Dense(16), stax.Tanh,
                                    stax.Dense(3), stax.LogSoftmax)
  out_shape, params = init_fun(jax.random.PRNGKey(0), (-1, 4))
  assert out_shape == (-1, 3)
  x = jax.random.normal(jax.random.PRNGKey(1), (32, 4))
  labels = jax.nn.one_hot((x[:, 0] > 0).astype(jnp.int32) + (x[:, 1] > 0), 3)
  loss = lambda p: -jnp.mean(jnp.sum(apply_fun(p, x) * labels, axis=-1))
  opt_init, opt_update, get_params = optimizers.adam(0.01)
  state = opt_init(params)
  step = jax.jit(lambda i, s: opt_update(i, jax.grad(loss)(get_params(s)), s))
  before = float(loss(params))
  for i in range(50):
    state = step(i, state)
  assert float(loss(get_params(state))) < 0.7 * before


def test_tiny_convnet_shapes_match_init():
  init_fun, apply_fun = stax.serial(
      stax.Conv(4, (3, 3), padding="SAME"), stax.BatchNorm(), stax.Relu,
      stax.MaxPool((2, 2), strides=(2, 2)), stax.Conv(6, (3, 3)), stax.Gelu,
      stax.AvgPool((2, 2)), stax.SumPool((1, 1)), stax.Flatten, stax.Dense(5), stax.Softmax)
  out_shape, params = init_fun(jax.random.PRNGKey(0), (-1, 10, 10, 1))
  assert out_shape == (-1, 5)
  out = apply_fun(params, jnp.ones((2, 10, 10, 1)))
  assert out.shape == (2, 5)
  np.testing.assert_allclose(np.asarray(out).sum(-1), 1., rtol=1e-5)


def test_convnet_trains():
  init_fun, apply_fun = stax.serial(stax.Conv(3, (3, 3)), stax.Relu, stax.Flatten,
                                    stax.Dense(1))
  _, params = init_fun(jax.random.PRNGKey(0), (-1, 5, 5, 1))
  x = jax.random.normal(jax.random.PRNGKey(1), (8, 5, 5, 1))
  y = jnp.sum(x, axis=(1, 2, 3))[:, None]
  loss = lambda p: jnp.mean((apply_fun(p, x) - y) ** 2)
  opt_init, opt_update, get_params = optimizers.sgd(0.01)
  state = opt_init(params)
  before = float(loss(params))
  for i in range(20):
    state = opt_update(i, jax.grad(loss)(get_params(state)), state)
  assert float(loss(get_params(state))) < before


def test_fan_out_parallel_and_fan_in():
  init_fun, apply_fun = stax.serial(stax.FanOut(2), stax.parallel(stax.Dense(3), stax.Identity),
                                    stax.FanInConcat())
  out_shape, params = init_fun(jax.random.PRNGKey(0), (-1, 3))
  assert out_shape == (-1, 6) and apply_fun(params, jnp.ones((2, 3))).shape == (2, 6)
  init_fun, apply_fun = stax.serial(stax.FanOut(2), stax.parallel(stax.Identity, stax.Identity),
                                    stax.FanInSum)
  _, params = init_fun(jax.random.PRNGKey(0), (-1, 3))
  assert apply_fun(params, jnp.ones((1, 3))).tolist() == [[2., 2., 2.]]


def test_dropout_needs_a_key_and_scales_kept_units():
  init_fun, apply_fun = stax.Dropout(0.5)
  with pytest.raises(ValueError, match="PRNG key"):
    apply_fun((), jnp.ones(4))
  out = np.asarray(apply_fun((), jnp.ones(1000), rng=jax.random.PRNGKey(0)))
  assert set(np.unique(out).tolist()) <= {0., 2.} and 400 < (out > 0).sum() < 600
  assert stax.Dropout(0.5, mode="test")[1]((), jnp.ones(3), rng=jax.random.PRNGKey(0)).tolist() == [1., 1., 1.]


def test_shape_dependent_builds_the_layer_from_the_input_shape():
  layer = stax.shape_dependent(lambda shape: stax.Dense(shape[-1] * 2))
  out_shape, params = layer[0](jax.random.PRNGKey(0), (-1, 3))
  assert out_shape == (-1, 6) and layer[1](params, jnp.ones((1, 3))).shape == (1, 6)
