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


# -- a caller's filters that show or record warnings (catch_warnings(record=True) with
# simplefilter("always"), pytest.warns) go in front of the library's own filter; JAX
# 0.10.2 records nothing there, and gives these values (recorded from JAX 0.10.2)
_SPECIAL_OPS = {
    "divide": (lambda: jnp.float32(1) / jnp.float32(0), np.inf, False),
    "exp": (lambda: jnp.exp(1000.0), np.inf, True),
    "log": (lambda: jnp.log(-1.0), np.nan, True),
}


def _run(name, how):
  fn = _SPECIAL_OPS[name][0]
  if how == "eager":
    return fn()
  return jax.jit(fn, backend="numpy")()


@pytest.mark.parametrize("how", ["eager", "jit"])
@pytest.mark.parametrize("name", sorted(_SPECIAL_OPS))
def test_recording_every_warning_records_none_from_the_library(name, how):
  with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    out = _run(name, how)
  assert [str(w.message) for w in seen] == []
  _, want, weak = _SPECIAL_OPS[name]
  assert out.dtype == np.float32 and out.weak_type == weak
  np.testing.assert_array_equal(np.asarray(out), np.float32(want))


def test_pytest_warns_sees_the_users_warning_alone():
  with pytest.warns(UserWarning) as seen:
    warnings.warn("the user's own", UserWarning)
    for name in _SPECIAL_OPS:
      _run(name, "eager")
      _run(name, "jit")
  assert [str(w.message) for w in seen] == ["the user's own"]


def test_kernels_that_call_numpy_python_code_are_quiet_too():
  # fft and the convolution's einsum warn from NumPy's own modules (JAX 0.10.2: no
  # warning; convolve gives [inf, inf, inf, inf, inf] and fft's second entry is inf+0j)
  big = jnp.full(3, 3e38, jnp.float32)
  with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    conv = jnp.convolve(big, big)
    fft = jnp.fft.fft(jnp.array([np.inf, -np.inf], jnp.float32))
  assert [str(w.message) for w in seen] == []
  np.testing.assert_array_equal(np.asarray(conv), np.full(5, np.inf, np.float32))
  assert np.asarray(fft)[1] == np.complex64(np.inf)


def test_the_callers_filters_and_numpy_itself_are_left_as_they_were():
  with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    jnp.exp(jnp.float32(1000))
    np.exp(np.float32(1000))   # the user's own NumPy call still warns
  assert [str(w.message) for w in seen] == ["overflow encountered in exp"]
  with warnings.catch_warnings():
    warnings.resetwarnings()   # (no filters at all)
    np.testing.assert_array_equal(np.asarray(jnp.log(jnp.float32(-1))), np.nan)
