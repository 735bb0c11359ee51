"""jaxlite's own decompositions under the user's numpy promotion options.

XLA's CPU plugin has no LAPACK, so jaxlite lowers ``lu``, ``svd``, ``eigh``, ``eig``,
``schur`` and ``hessenberg`` as functions written with ``jnp``. JAX computes them in
LAPACK, where ``jax_numpy_rank_promotion='raise'`` and ``jax_numpy_dtype_promotion=
'strict'`` (diffrax's test settings) never reach; jaxlite used to trace its decompositions
under them, so every XLA compile holding an LU failed and such programs, and their long
loops, stayed on tier 0 (diffrax's Kvaerno5 solves: minutes). Values against NumPy/SciPy
and tier 0 (LAPACK).
"""
import numpy as np
import pytest
import scipy.linalg

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite._src import tiers

needs_xla = pytest.mark.skipif(not tiers.xla_available(), reason="no XLA plugin installed")

_RNG = np.random.RandomState(0)
_REAL = _RNG.randn(2, 4, 4).astype(np.float32) + 4 * np.eye(4, dtype=np.float32)
_COMPLEX = (_RNG.randn(2, 3, 3) + 1j * _RNG.randn(2, 3, 3)).astype(np.complex64)

_CASES = {
    "lu": (lambda a: jax.lax.linalg.lu(a)[0], lambda a: np.stack(
        [np.tril(l, -1) + u for l, u in
         (scipy.linalg.lu(m, permute_l=False)[1:] for m in a)])),
    "solve": (lambda a: jnp.linalg.solve(a, a[..., :1]), lambda a: np.linalg.solve(a, a[..., :1])),
    "det": (jnp.linalg.det, np.linalg.det),
    "svd": (lambda a: jnp.linalg.svd(a, compute_uv=False),
            lambda a: np.linalg.svd(a, compute_uv=False)),
    "eigh": (lambda a: jnp.linalg.eigh(a + jnp.swapaxes(a, -1, -2).conj())[0],
             lambda a: np.linalg.eigvalsh(a + np.swapaxes(a, -1, -2).conj())),
}


@needs_xla
@pytest.mark.parametrize("setting", ["rank_raise", "dtype_strict"])
@pytest.mark.parametrize("kind", ["real", "complex"])
@pytest.mark.parametrize("name", sorted(_CASES))
def test_decompositions_compile_for_xla_under_the_users_promotion_options(name, kind, setting):
  fun, oracle = _CASES[name]
  a = _REAL if kind == "real" else _COMPLEX
  rank = "raise" if setting == "rank_raise" else "allow"
  dtype = "strict" if setting == "dtype_strict" else "standard"
  with jax.numpy_rank_promotion(rank), jax.numpy_dtype_promotion(dtype):
    on_xla = np.asarray(jax.jit(fun, backend="xla")(a))
    on_tier_0 = np.asarray(jax.jit(fun, backend="numpy")(a))
  want = oracle(a.astype(np.complex128 if kind == "complex" else np.float64))
  scale = np.abs(want).max()
  np.testing.assert_allclose(on_xla, want, rtol=1e-4, atol=1e-5 * scale)
  np.testing.assert_allclose(on_xla, on_tier_0, rtol=1e-4, atol=1e-5 * scale)


@needs_xla
def test_the_users_own_code_still_obeys_rank_promotion_raise():
  # JAX 0.10.2: ValueError "Operands could not be broadcast together for add on shapes
  # (4, 4) (4,) ..." (the LU in the same function lowers: the error is the user's add)
  def f(a):
    return jnp.linalg.solve(a, a) + a[0, 0]

  def g(a):
    return jnp.linalg.solve(a, a) + a[0]
  with jax.numpy_rank_promotion("raise"):
    np.testing.assert_allclose(jax.jit(f, backend="xla")(_REAL[0]),
                               np.eye(4) + _REAL[0, 0, 0], rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="jax_numpy_rank_promotion='raise'"):
      jax.jit(g, backend="xla")(_REAL[0])
