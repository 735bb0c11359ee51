"""Tier 0 computes inf and nan silently, as XLA does, even where a warnings filter turns
NumPy's RuntimeWarnings into errors (``python -W error``, pytest's ``filterwarnings =
error`` in numpyro's suite): eager ops, jitted programs, loop bodies and helper threads."""
import warnings

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite._src.backends.numpy import blocks

X = np.array([1000.0, -1000.0, 0.0], np.float32)
WANT = {"exp": [np.inf, 0.0, 1.0], "sigmoid": [1.0, 0.0, 0.5], "recip": [0.001, -0.001, np.inf],
        "log": [np.log(np.float32(1000)), np.nan, -np.inf]}


def _ops(x):
  return {"exp": jnp.exp(x), "sigmoid": jax.nn.sigmoid(x), "recip": 1 / x, "log": jnp.log(x)}


@pytest.fixture
def warnings_are_errors():
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    yield


@pytest.mark.parametrize("how", ["eager", "jit", "fori_loop"])
def test_overflow_and_log_of_negatives_give_inf_and_nan_without_raising(how,
                                                                        warnings_are_errors):
  run = {"eager": _ops, "jit": jax.jit(_ops, backend="numpy"),
         "fori_loop": lambda x: jax.lax.fori_loop(0, 2, lambda i, d: _ops(x), _ops(x))}[how]
  got = run(jnp.asarray(X))
  for name, want in WANT.items():
    np.testing.assert_allclose(np.asarray(got[name]), np.float32(want), rtol=1e-6)


def test_numpy_itself_still_warns_as_the_user_asked(warnings_are_errors):
  jnp.exp(jnp.asarray(X))
  with pytest.raises(RuntimeWarning, match="overflow"):
    np.exp(X)


def test_helper_threads_compute_quietly_too(warnings_are_errors):
  x = np.full(4 * blocks.BLOCK + 5, 1000.0, np.float32)
  with jax.config.override("jaxlite_tier0_threads", 2):
    out = jax.jit(lambda x: jnp.exp(x) * 2 + jnp.sin(x) * x, backend="numpy")(x)
  assert np.all(np.isinf(np.asarray(out)))


def test_a_program_with_a_callback_runs_it_once(warnings_are_errors):
  seen = []
  def f(x):
    jax.debug.callback(lambda v: seen.append(np.asarray(v)), x)
    return jnp.exp(x)
  out = jax.jit(f, backend="numpy")(jnp.asarray(X))
  assert len(seen) == 1 and np.isinf(np.asarray(out)[0])
