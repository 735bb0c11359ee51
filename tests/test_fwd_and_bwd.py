"""``jax.fwd_and_bwd``: the forward pass gives the VJP as residuals, the backward pass
applies it; values recorded from JAX 0.10.2 running the same calls."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp


def f(x, w):
  return (x @ w).sum() * x[0, 0]


X = np.arange(4.0, dtype=np.float32).reshape(2, 2)
W = np.ones((2, 2), np.float32)


def test_the_backward_pass_compiles_once_across_forward_passes():
  fwd, bwd = jax.fwd_and_bwd(f, argnums=(0, 1))
  for _ in range(3):
    y, residuals = fwd(X, W)
    ct_x, ct_w = bwd(residuals, 1.0)
  # JAX 0.10.2: y 0.0, cotangents [[12, 0], [0, 0]] and zeros
  assert float(y) == 0.0
  np.testing.assert_array_equal(ct_x, [[12.0, 0.0], [0.0, 0.0]])
  np.testing.assert_array_equal(ct_w, np.zeros((2, 2)))
  assert bwd._cache_size() == 1 and fwd._cache_size() == 1


@pytest.mark.parametrize("jitted", [True, False])
def test_an_int_argnums_gives_one_cotangent(jitted):
  fwd, bwd = jax.fwd_and_bwd(f, argnums=0, jitted=jitted)
  y, residuals = fwd(X + 1, W)
  # JAX 0.10.2: 20.0 and [[44, 4], [4, 4]]; for argnums=1, [[8, 8], [12, 12]]
  assert float(y) == 20.0
  np.testing.assert_array_equal(bwd(residuals, 2.0), [[44.0, 4.0], [4.0, 4.0]])
  fwd, bwd = jax.fwd_and_bwd(f, argnums=1, jitted=jitted)
  np.testing.assert_array_equal(bwd(fwd(X + 1, W)[1], 2.0), [[8.0, 8.0], [12.0, 12.0]])


def test_aux_comes_last():
  fwd, bwd = jax.fwd_and_bwd(lambda x: (x.sum(), {"a": x * 2}), argnums=0, has_aux=True)
  y, residuals, aux = fwd(X)
  assert float(y) == 6.0
  np.testing.assert_array_equal(aux["a"], X * 2)
  np.testing.assert_array_equal(bwd(residuals, 1.0), np.ones((2, 2)))


def test_bad_argnums_raise():
  with pytest.raises(TypeError, match="argnums"):
    jax.fwd_and_bwd(f, argnums="a")
  fwd, _ = jax.fwd_and_bwd(f, argnums=3, jitted=False)
  with pytest.raises(ValueError, match="out of range"):
    fwd(X, W)
