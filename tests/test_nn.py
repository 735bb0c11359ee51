"""jaxlite.nn: activations against NumPy formulas, gradients against finite differences,
JAX's special cases (relu'(0) = 0), numerical stability, and initializers."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import nn
from jaxlite._src.test_util import check_grads

X = np.linspace(-3, 3, 13).astype(np.float32) + 0.05  # avoid the kinks at 0
_sig = lambda x: 1 / (1 + np.exp(-x))
_erf = np.vectorize(__import__("math").erf)

FORMULAS = {
    "relu": (nn.relu, lambda x: np.maximum(x, 0)),
    "relu6": (nn.relu6, lambda x: np.clip(x, 0, 6)),
    "sigmoid": (nn.sigmoid, _sig),
    "log_sigmoid": (nn.log_sigmoid, lambda x: np.log(_sig(x))),
    "softplus": (nn.softplus, lambda x: np.log1p(np.exp(x))),
    "soft_sign": (nn.soft_sign, lambda x: x / (np.abs(x) + 1)),
    "silu": (nn.silu, lambda x: x * _sig(x)),
    "elu": (nn.elu, lambda x: np.where(x > 0, x, np.expm1(x))),
    "celu": (lambda x: nn.celu(x, 0.5), lambda x: np.maximum(x, 0) + 0.5 * np.minimum(
        np.expm1(x / 0.5), 0)),
    "selu": (nn.selu, lambda x: 1.0507009873554805 * np.where(
        x > 0, x, 1.6732632423543772 * np.expm1(x))),
    "leaky_relu": (nn.leaky_relu, lambda x: np.where(x >= 0, x, 0.01 * x)),
    "hard_tanh": (nn.hard_tanh, lambda x: np.clip(x, -1, 1)),
    "hard_sigmoid": (nn.hard_sigmoid, lambda x: np.clip(x + 3, 0, 6) / 6),
    "hard_silu": (nn.hard_silu, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    "gelu_tanh": (nn.gelu, lambda x: 0.5 * x * (1 + np.tanh(
        np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
    "gelu_erf": (lambda x: nn.gelu(x, approximate=False),
                 lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2)))),
}


@pytest.mark.parametrize("name", sorted(FORMULAS))
def test_activation_matches_formula(name):
  f, ref = FORMULAS[name]
  out = f(jnp.asarray(X))
  assert out.dtype == jnp.float32 and out.shape == X.shape
  np.testing.assert_allclose(np.asarray(out), ref(X.astype(np.float64)), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(set(FORMULAS) - {"hard_tanh", "relu6",
                                                         "hard_sigmoid", "hard_silu"}))
def test_activation_gradients_match_finite_differences(name):
  f, _ = FORMULAS[name]
  check_grads(f, (X,), order=1, modes=("fwd", "rev"))


def test_relu_gradient_at_zero_is_zero():
  assert float(jax.grad(nn.relu)(0.)) == 0.
  assert float(jax.grad(nn.relu)(2.)) == 1.
  np.testing.assert_array_equal(np.asarray(jax.vmap(jax.grad(nn.relu))(
      jnp.array([-1., 0., 1.]))), [0., 0., 1.])


def test_glu_splits_along_the_axis():
  x = np.arange(8.).reshape(2, 4).astype(np.float32)
  np.testing.assert_allclose(np.asarray(nn.glu(jnp.asarray(x))),
                             x[:, :2] * _sig(x[:, 2:]), rtol=1e-6)


def test_softmax_and_log_softmax_are_stable_for_large_inputs():
  x = jnp.array([[1000., 1001., 1002.], [-1000., -1000., -1000.]])
  p = np.asarray(nn.softmax(x))
  assert np.isfinite(p).all()
  np.testing.assert_allclose(p.sum(-1), 1., rtol=1e-6)
  np.testing.assert_allclose(p[1], 1 / 3, rtol=1e-6)
  lp = np.asarray(nn.log_softmax(x))
  np.testing.assert_allclose(lp, np.log(p), rtol=1e-5)
  np.testing.assert_allclose(np.asarray(nn.logsumexp(x, axis=1)),
                             [1002.4076, -1000 + np.log(3)], rtol=1e-6)


def test_softmax_where_masks_entries():
  x = jnp.array([1., 2., 3.])
  where = jnp.array([True, False, True])
  p = np.asarray(nn.softmax(x, where=where))
  np.testing.assert_allclose(p, [1 / (1 + np.e ** 2), 0, np.e ** 2 / (1 + np.e ** 2)],
                             rtol=1e-6)
  assert np.asarray(nn.log_softmax(x, where=where))[1] == -np.inf


def test_softmax_and_logsumexp_gradients():
  x = np.array([[0.3, -1.2, 2.0], [1.0, 0.5, -0.5]], np.float32)
  check_grads(lambda v: nn.softmax(v, axis=-1), (x,), order=2)
  check_grads(lambda v: nn.log_softmax(v, axis=0), (x,), order=1)
  check_grads(lambda v: nn.logsumexp(v, axis=1), (x,), order=2)


def test_logsumexp_with_b_and_sign():
  a = jnp.array([0., 1.])
  out, sign = nn.logsumexp(a, b=jnp.array([2., -0.5]), return_sign=True)
  assert float(sign) == 1.
  np.testing.assert_allclose(float(out), np.log(2 - 0.5 * np.e), rtol=1e-5)
  out, sign = nn.logsumexp(a, b=jnp.array([2., -1.]), return_sign=True)
  assert float(sign) == -1.
  np.testing.assert_allclose(float(out), np.log(np.e - 2), rtol=1e-5)
  assert np.isnan(float(nn.logsumexp(a, b=jnp.array([2., -1.]))))


def test_standardize_gives_zero_mean_unit_variance():
  x = np.random.default_rng(0).normal(3., 2., (4, 50)).astype(np.float32)
  y = np.asarray(nn.standardize(jnp.asarray(x), axis=-1))
  np.testing.assert_allclose(y.mean(-1), 0., atol=1e-5)
  np.testing.assert_allclose(y.var(-1), 1., atol=1e-3)


def test_one_hot():
  out = nn.one_hot(jnp.array([0, 2, 5, -1]), 3)
  np.testing.assert_array_equal(np.asarray(out), [[1, 0, 0], [0, 0, 1], [0, 0, 0], [0, 0, 0]])
  assert out.dtype == jnp.float32
  assert nn.one_hot(jnp.array([1, 0]), 2, dtype=jnp.int32, axis=0).tolist() == [[0, 1], [1, 0]]


K = jax.random.PRNGKey(0)


@pytest.mark.parametrize("name, var", [
    ("glorot_normal", 2 / (200 + 100)), ("glorot_uniform", 2 / (200 + 100)),
    ("lecun_normal", 1 / 200), ("lecun_uniform", 1 / 200),
    ("he_normal", 2 / 200), ("he_uniform", 2 / 200)])
def test_variance_scaling_initializers_have_the_target_variance(name, var):
  w = np.asarray(getattr(nn.initializers, name)()(K, (200, 100)))
  assert w.shape == (200, 100) and w.dtype == np.float32
  np.testing.assert_allclose(w.var(), var, rtol=0.1)


def test_simple_initializers():
  init = nn.initializers
  assert init.zeros(K, (2, 3)).tolist() == [[0.] * 3] * 2
  assert init.ones(K, (2,), jnp.int32).tolist() == [1, 1]
  assert init.constant(3.)(K, (2,)).tolist() == [3., 3.]
  assert float(init.uniform(2.)(K, (500,)).max()) < 2.
  np.testing.assert_allclose(float(init.normal(3.)(K, (4000,)).std()), 3., rtol=0.1)
  assert float(abs(init.truncated_normal(1.)(K, (500,))).max()) <= 2.
  assert init.xavier_normal is init.glorot_normal and init.kaiming_uniform is init.he_uniform


def test_conv_kernel_fans_include_the_receptive_field():
  from jaxlite._src.libraries.nn.initializers import _compute_fans
  assert _compute_fans((3, 3, 4, 8)) == (36., 72.)
  with pytest.raises(ValueError, match="Can't compute input and output sizes"):
    _compute_fans((5,))


def test_orthogonal_initializer():
  try:
    w = np.asarray(nn.initializers.orthogonal()(K, (5, 3)))
  except (TypeError, NotImplementedError) as e:
    pytest.skip(f"lax.linalg.qr is not available yet: {e}")
  np.testing.assert_allclose(w.T @ w, np.eye(3), atol=1e-5)


@pytest.mark.parametrize("distribution, want", [
    # JAX 0.10.2: variance_scaling(2.0, 'fan_in', distribution)(PRNGKey(0), (4, 3),
    # complex64)[0]
    ("truncated_normal", [0.98146802 + 0.0450106j, 0.32668501 + 0.0431297j,
                          -0.32495639 - 0.1824581j]),
    ("normal", [0.50200719 - 1.22122788j, -0.4531686 - 1.01784027j,
                -0.37408611 + 0.1027721j]),
    ("uniform", [0.91681308 + 0.0420455j, 0.42338419 + 0.0558962j,
                 -0.41560099 - 0.2333537j]),
])
def test_variance_scaling_of_complex_dtypes_as_jax(distribution, want):
  init = jax.nn.initializers.variance_scaling(2.0, "fan_in", distribution)
  w = init(jax.random.PRNGKey(0), (4, 3), jnp.complex64)
  assert w.dtype == jnp.complex64
  np.testing.assert_allclose(np.asarray(w)[0], want, rtol=2e-6, atol=1e-7)
  # and the variance it promises: scale / fan_in (JAX: 2.03, 2.0, 2.0 times 1/400)
  big = np.asarray(init(jax.random.PRNGKey(1), (400, 500), jnp.complex64))
  assert abs(np.mean(np.abs(big) ** 2) * 400 - 2.0) < 0.05
