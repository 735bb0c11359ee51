"""``jax.test_util.check_grads`` follows JAX's algorithm, so a library's gradient test
passes or fails on jaxlite as on JAX 0.10.2 (values and outcomes recorded from JAX)."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite._src.test_util import numerical_jvp
from jaxlite.test_util import check_grads


def _off_by_15_percent():
  @jax.custom_jvp
  def f(x):
    return x ** 2
  f.defjvp(lambda p, t: (f(p[0]), 2.3 * p[0] * t[0]))
  return f


def test_tolerances_scale_with_the_number_of_elements_as_jaxs():
  # JAX 0.10.2: rtol=0.1 fails for one element and passes for ten (it becomes 1.0)
  f = _off_by_15_percent()
  with pytest.raises(AssertionError, match="rtol=0.1, atol=0.002"):
    check_grads(f, (np.linspace(1, 2, 1).astype(np.float32),), order=1, modes=("fwd",),
                rtol=0.1)
  check_grads(f, (np.linspace(1, 2, 10).astype(np.float32),), order=1, modes=("fwd",),
              rtol=0.1)


def test_numerical_jvp_keeps_the_inputs_dtype_and_jaxs_step():
  # JAX 0.10.2 (jax._src.public_test_util.numerical_jvp, eps 1e-4): float32 in, float32
  # out; a Python float gives a float64 difference
  out = numerical_jvp(lambda x: x ** 3, (np.float32(2.0),), (np.float32(1.0),))
  assert out.dtype == np.float32
  np.testing.assert_allclose(out, 11.994839, rtol=1e-3)
  out = numerical_jvp(lambda x: x ** 3, (2.0,), (1.0,))
  assert out.dtype == np.float64
  np.testing.assert_allclose(out, 12.00000001000845, rtol=1e-9)


def test_second_order_checks_of_smooth_functions_pass():
  check_grads(lambda x: jnp.sin(x) * x, (np.float32(0.7),), order=2)
  check_grads(lambda x: jnp.tanh(x) ** 2, (np.linspace(-1, 1, 4),), order=2,
              modes=("fwd", "rev", "lin"))
