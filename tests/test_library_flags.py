"""The config flags that change what library functions do, against JAX 0.10.2: typed keys
from ``PRNGKey`` (``jax.enable_custom_prng``), raw keys refused or warned about
(``jax.legacy_prng_key``), softmax's own derivative rule (``jax.softmax_custom_jvp``),
``jax.no_tracing`` and ``jax.debug_key_reuse`` (which jaxlite accepts only off). Every
recorded figure below came from JAX 0.10.2 running the same calls."""
import warnings

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp

K = np.array([0, 0], np.uint32)   # jax.random.PRNGKey(0), a raw key

CALLS = {
    "normal": lambda: jax.random.normal(K),
    "split": lambda: jax.random.split(K),
    "PRNGKey": lambda: jax.random.PRNGKey(1),
    "key_data": lambda: jax.random.key_data(K),
    "uniform": lambda: jax.random.uniform(K, (3,)),
    "fold_in": lambda: jax.random.fold_in(K, 3),
    "bits": lambda: jax.random.bits(K),
    "randint": lambda: jax.random.randint(K, (2,), 0, 5),
    "permutation": lambda: jax.random.permutation(K, 4),
    "jit_normal": lambda: jax.jit(jax.random.normal)(K),   # (a traced key: refused too)
    "wrap": lambda: jax.random.wrap_key_data(K),
    "typed": lambda: jax.random.normal(jax.random.key(0)),
}
# mode -> call -> (ValueError raised, legacy-key warnings), recorded from JAX 0.10.2
JAX_LEGACY = {
    "warn": dict.fromkeys(["normal", "split", "key_data", "uniform", "fold_in", "bits",
                           "randint", "permutation", "jit_normal"], (False, 1))
            | dict.fromkeys(["PRNGKey", "wrap", "typed"], (False, 0)),
    "error": dict.fromkeys(["normal", "split", "key_data", "uniform", "fold_in", "bits",
                            "randint", "permutation", "jit_normal"], (True, 0))
             | dict.fromkeys(["PRNGKey", "wrap", "typed"], (False, 0)),
}


@pytest.mark.parametrize("mode", sorted(JAX_LEGACY))
@pytest.mark.parametrize("name", sorted(CALLS))
def test_legacy_prng_key_warns_or_refuses_raw_keys_as_jax_does(mode, name):
  with jax.legacy_prng_key(mode), warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
      CALLS[name]()
      raised = False
    except ValueError as e:
      assert str(e).startswith("Legacy uint32 key array passed as key to jax.random "
                               "function. Please create keys using jax.random.key().")
      raised = True
  legacy = [w for w in caught if "Legacy uint32 key array" in str(w.message)]
  assert (raised, len(legacy)) == JAX_LEGACY[mode][name]
  assert all(w.category is UserWarning for w in legacy)


def test_enable_custom_prng_makes_prngkey_typed():
  assert jax.random.PRNGKey(3).dtype == np.uint32
  f = jax.jit(lambda s: jax.random.PRNGKey(s))
  assert f(3).dtype == np.uint32
  with jax.enable_custom_prng():
    key = jax.random.PRNGKey(3)
    assert str(key.dtype) == "key<fry>" and key.shape == ()
    np.testing.assert_array_equal(jax.random.key_data(key), [0, 3])
    assert str(f(3).dtype) == "key<fry>"   # (the flag is part of jit's cache key)
    # JAX 0.10.2: -1.446257 (its erf_inv may round the last bit otherwise)
    np.testing.assert_allclose(jax.random.normal(key), -1.446257, rtol=1e-6)
  assert f(3).dtype == np.uint32


def test_a_flag_change_is_a_recompile_reason():
  f = jax.jit(lambda s: jax.random.PRNGKey(s))
  f(3)
  with jax.explain_cache_misses(), warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with jax.enable_custom_prng():
      f(3)
  assert any("jax_enable_custom_prng changed False -> True" in str(w.message)
             for w in caught)


X = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 4.0]], np.float32)
WHERE = np.array([[True, True, False], [True, True, True]])
# JAX 0.10.2's gradients of sum(softmax(x, where) * [0, 1, 2]): by the formula (off) and
# by softmax's own rule (on), which rounds two elements otherwise
JAX_SOFTMAX_GRAD = {
    False: [[-0.141817, -0.14077, 0.282587], [-0.056358, -0.006077, 0.062436]],
    True: [[-0.141817, -0.14077, 0.282588], [-0.056358, -0.006077, 0.062435]],
}
JAX_SOFTMAX_GRAD_WHERE = [[-0.196612, 0.196612, 0.0], [-0.056358, -0.006077, 0.062436]]


@pytest.mark.parametrize("flag", [False, True])
def test_softmax_custom_jvp_gives_jaxs_derivatives(flag):
  def f(x, where=None):
    return (jax.nn.softmax(x, where=where) * jnp.arange(3.0)).sum()
  with jax.softmax_custom_jvp(flag):
    np.testing.assert_allclose(jax.nn.softmax(X), [[0.090031, 0.244728, 0.665241],
                                                   [0.029122, 0.006498, 0.96438]], atol=2e-6)
    for grad in (jax.grad(f), jax.jit(jax.grad(f))):
      np.testing.assert_allclose(grad(X), JAX_SOFTMAX_GRAD[flag], atol=2e-6)
    np.testing.assert_allclose(jax.grad(f)(X, WHERE), JAX_SOFTMAX_GRAD_WHERE, atol=2e-6)


def test_no_tracing_refuses_a_trace_and_lets_cached_calls_run():
  f = jax.jit(lambda x: x + 1)
  f(1.0)
  with jax.no_tracing():
    assert float(f(1.0)) == 2.0
    with pytest.raises(RuntimeError, match=r"re-tracing function <lambda> at .* for `jit`, "
                                           r"but 'no_tracing' is set"):
      f(jnp.ones(2))
  np.testing.assert_array_equal(f(jnp.ones(2)), [2.0, 2.0])


def test_debug_key_reuse_is_accepted_off_and_refused_on():
  with jax.debug_key_reuse(False):
    jax.random.normal(jax.random.key(0))
  with pytest.raises(NotImplementedError, match="does not check random keys for reuse"):
    with jax.debug_key_reuse(True):
      pass
  assert jax.config.jax_debug_key_reuse is False
