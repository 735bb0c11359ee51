"""Library functions that JAX decorates with ``jax.jit`` are staged as JAX stages them
(``lax.call.staged``): one ``jit`` equation under a trace, named as JAX names it; one
executable eagerly on a device; and eagerly on the host the same NumPy kernels one by
one (the fast path, checked here against the staged path bit for bit).
"""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import config
from jaxlite._src import tiers

# JAX 0.10.2's names of the jit equations (recorded with make_jaxpr on f32[2,3]); relu
# and relu6 are custom_jvp functions whose body is the jit call
STAGED = {"celu": "celu", "elu": "elu", "hard_sigmoid": "hard_sigmoid",
          "hard_silu": "hard_silu", "hard_swish": "hard_silu", "hard_tanh": "hard_tanh",
          "identity": "identity", "leaky_relu": "leaky_relu", "log_sigmoid": "log_sigmoid",
          "log_softmax": "log_softmax", "logmeanexp": "logmeanexp", "mish": "mish",
          "selu": "selu", "silu": "silu", "swish": "silu", "soft_sign": "soft_sign",
          "softplus": "softplus", "sparse_plus": "sparse_plus",
          "sparse_sigmoid": "sparse_sigmoid", "squareplus": "squareplus",
          "standardize": "standardize", "relu": "relu", "relu6": "relu6"}

X = np.array([[-3.0, -0.0, 0.0], [0.5, 2.0, 7.5]], np.float32)


def _jit_names(jaxpr):
  names = []
  for eqn in jaxpr.eqns:
    if eqn.primitive.name == "jit":
      names.append(eqn.params["name"])
    for value in eqn.params.values():
      inner = getattr(value, "jaxpr", value)
      if hasattr(inner, "eqns"):
        names += _jit_names(inner)
  return names


@pytest.mark.parametrize("name", sorted(STAGED))
def test_staged_as_jax_names_it(name):
  closed = jax.make_jaxpr(getattr(jax.nn, name))(X)
  assert STAGED[name] in _jit_names(closed.jaxpr)


@pytest.mark.parametrize("name", sorted(STAGED))
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_eager_on_the_host_is_the_staged_computation_bit_for_bit(name, dtype):
  fn = getattr(jax.nn, name)
  x = X.astype(dtype)
  eager = np.atleast_1d(np.asarray(fn(x)))
  staged = np.atleast_1d(np.asarray(jax.jit(fn, backend="numpy")(x)))   # the jit equation
  assert eager.dtype == staged.dtype
  np.testing.assert_array_equal(eager.view(np.uint8), staged.view(np.uint8))


I = np.array([[-7, 0, 5], [9, -3, 2]], np.int32)
J = np.array([[2, 0], [1, 5]], np.int32)
JNP = {  # jnp functions JAX stages: name of the jit equation, function, arguments
    "clip": ("clip", lambda a: jnp.clip(a, -1.0, 2.0), (X,)),
    "remainder": ("remainder", lambda a: a % 3.0, (X,)),
    "floor_divide": ("floor_divide", lambda a, b: a // b, (I, np.int32(2))),
    "floor_divide_float": ("floor_divide", lambda a: a // -0.75, (X,)),
    "round": ("round", lambda a: jnp.round(a, 1), (X,)),
    "cumsum": ("cumsum", lambda a: jnp.cumsum(a, axis=1), (X,)),
    "sort": ("sort", lambda a: jnp.sort(a, axis=0), (X,)),
    "argsort": ("argsort", lambda a: jnp.argsort(a, descending=True), (X,)),
    "take": ("_take", lambda a, i: jnp.take(a, i, mode="clip"), (X, J)),
    "take_along_axis": ("take_along_axis", lambda a, i: jnp.take_along_axis(a, i, axis=1),
                        (X, J)),
    "one_hot": ("_one_hot", lambda i: jax.nn.one_hot(i, 4), (J,)),
}
# JAX 0.10.2's answers (CPU), eagerly and under jit: they differ in the sign of a zero
# where XLA folds the Python scalar into the program (-3 % 3.0 is 0.0 eagerly, -0.0 jitted)
JAX_ANSWERS = {
    "clip": ([-1.0, -0.0, 0.0, 0.5, 2.0, 2.0], [-1.0, -0.0, 0.0, 0.5, 2.0, 2.0]),
    "remainder": ([0.0, 0.0, 0.0, 0.5, 2.0, 1.5], [-0.0, -0.0, 0.0, 0.5, 2.0, 1.5]),
    "floor_divide": ([-4, 0, 2, 4, -2, 1], [-4, 0, 2, 4, -2, 1]),
    "floor_divide_float": ([4.0, 0.0, -0.0, -1.0, -3.0, -10.0],
                           [4.0, -0.0, -0.0, -1.0, -3.0, -10.0]),
    "round": ([-3.0, -0.0, 0.0, 0.5, 2.0, 7.5], [-3.0, -0.0, 0.0, 0.5, 2.0, 7.5]),
    "cumsum": ([-3.0, -3.0, -3.0, 0.5, 2.5, 10.0], [-3.0, -3.0, -3.0, 0.5, 2.5, 10.0]),
    "sort": ([-3.0, -0.0, 0.0, 0.5, 2.0, 7.5], [-3.0, -0.0, 0.0, 0.5, 2.0, 7.5]),
    "argsort": ([1, 2, 0, 2, 1, 0], [1, 2, 0, 2, 1, 0]),
    "take": ([0.0, -3.0, -0.0, 7.5], [0.0, -3.0, -0.0, 7.5]),
    "take_along_axis": ([0.0, -3.0, 2.0, np.nan], [0.0, -3.0, 2.0, np.nan]),
    "one_hot": ([0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0,
                 0.0],) * 2,
}


def _same_bits(got, want):
  got = np.ascontiguousarray(got).ravel()
  want = np.asarray(want, got.dtype)
  np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("case", sorted(JNP))
def test_jnp_functions_are_staged_and_give_jaxs_answers(case):
  name, fn, args = JNP[case]
  assert name in _jit_names(jax.make_jaxpr(fn)(*args).jaxpr)
  eager_want, jit_want = JAX_ANSWERS[case]
  _same_bits(np.asarray(fn(*args)), eager_want)                        # the direct path
  _same_bits(np.asarray(jax.jit(fn, backend="numpy")(*args)), jit_want)  # the jit equation


def test_where_is_staged_as_jax_stages_it_and_computes_the_same_eagerly():
  cond, y = X > 0, np.float32(-1.0)
  assert _jit_names(jax.make_jaxpr(lambda c, a: jnp.where(c, a, 2.0))(cond, X).jaxpr) == [
      "_where"]
  eager = np.asarray(jnp.where(cond, X, y))
  np.testing.assert_array_equal(eager, np.where(cond, X, y))
  np.testing.assert_array_equal(np.asarray(jax.jit(jnp.where, backend="numpy")(cond, X, y)),
                                eager)


def test_static_arguments_key_the_cache_and_defaults_stay_constants():
  jaxpr0 = jax.make_jaxpr(lambda x: jax.nn.log_softmax(x, axis=0))(X)
  jaxpr1 = jax.make_jaxpr(lambda x: jax.nn.log_softmax(x, axis=1))(X)
  inner = [e.params["jaxpr"] for e in (jaxpr0.eqns[0], jaxpr1.eqns[0])]
  assert inner[0] is not inner[1]
  assert jax.make_jaxpr(lambda x: jax.nn.log_softmax(x, axis=0))(X).eqns[0].params[
      "jaxpr"] is inner[0]   # traced once per argument types and static values
  # a default not passed is a literal of the jaxpr; a passed one an operand
  assert len(jax.make_jaxpr(jax.nn.leaky_relu)(X).eqns[0].invars) == 1
  assert len(jax.make_jaxpr(lambda x: jax.nn.leaky_relu(x, 0.2))(X).eqns[0].invars) == 2


def test_transformations_of_staged_functions_match_numpy():
  x = jnp.asarray(X)
  sp = lambda v: (v + np.sqrt(v * v + 4)) / 2
  np.testing.assert_allclose(jax.vmap(jax.nn.squareplus)(x), sp(X), rtol=1e-6)
  grad = jax.grad(lambda v: jax.nn.squareplus(v).sum())(x)
  np.testing.assert_allclose(grad, (1 + X / np.sqrt(X * X + 4)) / 2, rtol=1e-6)
  np.testing.assert_allclose(jax.jit(jax.grad(lambda v: jax.nn.relu(v).sum()))(x),
                             (X > 0).astype(np.float32))


@pytest.mark.skipif(not tiers.xla_available(), reason="no XLA plugin")
def test_numpy_float64_operands_enter_at_the_canonical_dtype_under_transformations():
  # numpyro's obs_mask: jnp.where of a float64 NumPy array under vmap of grad; values
  # recorded from JAX 0.10.2 (x64 off): 15.0 and [2., 4.]
  data, mask = np.array([7.0, 7.0, 7.0]), np.array([True, False, True])
  f = lambda x: (jnp.where(mask, data, x * jnp.ones(3)) ** 2).sum()
  assert jax.grad(lambda x: jax.vmap(f)(x * jnp.arange(1., 3.)).sum())(1.5) == 15.0
  np.testing.assert_array_equal(jax.vmap(jax.grad(f))(jnp.arange(1., 3.)), [2.0, 4.0])
  assert jax.vmap(f)(jnp.ones(2)).dtype == np.float32


def test_on_a_device_a_staged_function_is_one_executable():
  with config.override("jaxlite_cpu_backend", "pjrt"):
    backend = jax.devices()[0].client
    backend.clear_cache()
    x = jnp.asarray(X)
    out = jax.nn.squareplus(x)
    names = [key[0].name for key in backend._eager]
    assert names.count("jit") == 1 and "sqrt" not in names, names
    np.testing.assert_allclose(np.asarray(out), (X + np.sqrt(X * X + 4)) / 2, rtol=1e-6)


def test_staged_keeps_the_name_and_docstring():
  assert jax.nn.squareplus.__name__ == "squareplus" and "Squareplus" in jax.nn.squareplus.__doc__
  assert jax.nn.squareplus.__wrapped__.__name__ == "squareplus"
