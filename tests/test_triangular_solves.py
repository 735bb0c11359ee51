"""``jax.scipy.linalg.solve_triangular`` and ``cho_solve`` broadcast batch axes as JAX
0.10.2's do (``jnp.vectorize`` over ``(n,n),(n,k)``), and warn as JAX does about a stack of
vectors beside a stack of matrices; checked against SciPy per batch element (numpyro's
``LowerCholeskyAffine`` solves one matrix against a batch of vectors)."""
import warnings

import numpy as np
import pytest
import scipy.linalg

import jaxlite.numpy as jnp
import jaxlite.scipy.linalg as jsl

A = np.array([[2.0, 0.0], [1.0, 3.0]], np.float32)
A3 = np.stack([A, A + np.eye(2, dtype=np.float32), 2 * A])


def _loop(fn, a, b):
  shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
  a, b = np.broadcast_to(a, shape + a.shape[-2:]), np.broadcast_to(b, shape + b.shape[-2:])
  return np.stack([fn(x, y) for x, y in zip(a.reshape(-1, *a.shape[-2:]),
                                             b.reshape(-1, *b.shape[-2:]))]).reshape(
      shape + b.shape[-2:])


@pytest.mark.parametrize("a, b", [(A, np.ones((5, 2, 1))), (A, np.arange(6.0).reshape(2, 3)),
                                  (A3[:1], np.ones((4, 2, 3))), (A3, np.ones((3, 2, 2)))])
@pytest.mark.parametrize("trans", [0, 1, "C"])
def test_batch_axes_broadcast_as_scipy_per_element(a, b, trans):
  got = jsl.solve_triangular(a, b, lower=True, trans=trans)
  want = _loop(lambda x, y: scipy.linalg.solve_triangular(x, y, lower=True, trans=trans), a, b)
  np.testing.assert_allclose(got, want, rtol=1e-5)
  spd = a @ np.swapaxes(a, -1, -2) + 3 * np.eye(2)
  c = np.linalg.cholesky(spd)
  got = jsl.cho_solve((c, True), b)
  np.testing.assert_allclose(got, _loop(lambda x, y: np.linalg.solve(x, y), spd, b), rtol=1e-4)


def test_vectors_and_the_deprecated_stack_of_vectors():
  np.testing.assert_allclose(jsl.solve_triangular(A, np.arange(2.0), lower=True),
                             scipy.linalg.solve_triangular(A, np.arange(2.0), lower=True),
                             rtol=1e-6)
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    got = jsl.solve_triangular(A3, np.ones((3, 2)), lower=True)
  assert [w.category for w in caught] == [FutureWarning]   # (as JAX 0.10.2 warns)
  assert "batched 1D solves with b.ndim > 1 are deprecated" in str(caught[0].message)
  assert got.shape == (3, 2)
  np.testing.assert_allclose(got[1], np.linalg.solve(A3[1], np.ones(2)), rtol=1e-6)
  with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
    jsl.solve_triangular(A3, np.ones((2, 2, 2)), lower=True)
  assert jsl.solve_triangular(jnp.eye(2, dtype=jnp.int32), jnp.arange(2)).dtype == np.float32


@pytest.mark.parametrize("batch", [(), (2,), (3, 2)])
@pytest.mark.parametrize("n", [3, 24])   # (a stack substituted at once; LAPACK per matrix)
def test_the_inverse_of_a_triangular_matrix_is_exactly_triangular(batch, n):
  # A general LU solve pivots on the large entries below the diagonal and fills the
  # upper triangle with rounding (1e-17): numpyro's InverseWishartCholesky samples then
  # failed its own lower-Cholesky support check. XLA substitutes, as LAPACK's trtrs does.
  import jaxlite as jax
  rng = np.random.default_rng(0)
  lower = np.tril(rng.normal(size=batch + (n, n)) * 3, -1) + np.eye(n) * 1.5
  lower = lower.astype(np.float32)
  eye = np.broadcast_to(np.eye(n, dtype=np.float32), lower.shape)
  for backend in (None, "numpy", "xla"):
    solve = lambda a, b: jsl.solve_triangular(a, b, lower=True)   # noqa: E731
    got = np.asarray(solve(lower, eye) if backend is None
                     else jax.jit(solve, backend=backend)(lower, eye))
    assert (np.triu(got, 1) == 0).all()
    want = _loop(lambda x, y: scipy.linalg.solve_triangular(x, y, lower=True), lower, eye)
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=1e-5)
