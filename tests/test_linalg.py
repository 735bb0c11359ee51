"""jaxlite.numpy.linalg and jaxlite.lax.linalg against NumPy/SciPy, with gradients."""
import functools
import os

import numpy as np
import pytest
import scipy.linalg

import jaxlite
import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite._src.test_util import check_grads
from jaxlite._src import tiers
from reference_jax import run_reference

RNG = np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _x64():
  # the oracles are float64: compare in float64 (float32 cases ask for it explicitly)
  old = jaxlite.config.jax_enable_x64
  jaxlite.config.update("jax_enable_x64", True)
  yield
  jaxlite.config.update("jax_enable_x64", old)


def _spd(n, batch=(), dtype=np.float64):
  a = RNG.standard_normal(batch + (n, n))
  return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def _mat(shape, dtype=np.float64):
  return RNG.standard_normal(shape).astype(dtype)


TOL = {np.float32: 2e-4, np.float64: 1e-10}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
def test_cholesky_matches_numpy(dtype, batch):
  a = _spd(4, batch, dtype)
  out = jnp.linalg.cholesky(a)
  assert out.dtype == dtype
  np.testing.assert_allclose(out, np.linalg.cholesky(a), rtol=TOL[dtype] * 10, atol=TOL[dtype])


def test_cholesky_of_indefinite_matrix_is_nan():
  out = jnp.linalg.cholesky(np.array([[1.0, 2.0], [2.0, 1.0]], np.float32))
  assert np.isnan(np.asarray(out)).any()


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("transpose_a", [True, False])
@pytest.mark.parametrize("unit_diagonal", [True, False])
def test_triangular_solve_matches_scipy(left_side, lower, transpose_a, unit_diagonal):
  a = _mat((4, 4)) + 4 * np.eye(4)
  b = _mat((4, 3) if left_side else (3, 4))
  out = lax.linalg.triangular_solve(a, b, left_side=left_side, lower=lower,
                                    transpose_a=transpose_a, unit_diagonal=unit_diagonal)
  if left_side:
    want = scipy.linalg.solve_triangular(a, b, lower=lower, trans=int(transpose_a),
                                         unit_diagonal=unit_diagonal)
  else:
    want = scipy.linalg.solve_triangular(a, b.T, lower=lower, trans=int(not transpose_a),
                                         unit_diagonal=unit_diagonal).T
  np.testing.assert_allclose(out, want, rtol=1e-10)


@pytest.mark.parametrize("left_side", [True, False])
@pytest.mark.parametrize("transpose_a", [True, False])
def test_triangular_solve_of_vectors(left_side, transpose_a):
  # as in JAX, a b with one dimension fewer than a is a (batch of) vector(s): the solve of
  # its one-column (left_side) or one-row matrix, with b's shape
  a = _mat((2, 4, 4)) + 4 * np.eye(4)
  b = _mat((2, 4))
  f = lambda a, b: lax.linalg.triangular_solve(a, b, left_side=left_side, lower=True,
                                               transpose_a=transpose_a)
  out = f(a, b)
  assert out.shape == (2, 4)
  column = b[..., :, None] if left_side else b[..., None, :]
  want = lax.linalg.triangular_solve(a, column, left_side=left_side, lower=True,
                                     transpose_a=transpose_a)
  np.testing.assert_allclose(out, want[..., 0] if left_side else want[..., 0, :], rtol=1e-12)
  text = str(jax.make_jaxpr(f)(a[0], b[0]))
  assert "broadcast_in_dim" in text and "squeeze" in text
  check_grads(f, (a, b), order=1, modes=["rev"])


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 4)])
def test_lu_reconstructs_and_matches_scipy(shape):
  a = _mat(shape)
  lu, piv, perm = lax.linalg.lu(a)
  assert piv.dtype == np.int32 and perm.dtype == np.int32
  m, n = shape[-2:]
  k = min(m, n)
  lu = np.asarray(lu)
  L = np.tril(lu, -1)[..., :, :k] + np.eye(m, k)
  U = np.triu(lu)[..., :k, :]
  np.testing.assert_allclose(L @ U, np.take_along_axis(a, np.asarray(perm)[..., None], -2),
                             rtol=1e-10, atol=1e-12)
  if len(shape) == 2:
    ref_lu, ref_piv = scipy.linalg.lu_factor(a)
    np.testing.assert_allclose(lu, ref_lu, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(piv, ref_piv)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("batch", [(), (2,)])
def test_solve_inv_det_slogdet(dtype, batch):
  a = _mat(batch + (4, 4), dtype) + 2 * np.eye(4, dtype=dtype)
  b = _mat(batch + (4, 2), dtype)
  tol = TOL[dtype] * 10
  np.testing.assert_allclose(jnp.linalg.solve(a, b), np.linalg.solve(a, b), rtol=tol, atol=tol)
  np.testing.assert_allclose(jnp.linalg.inv(a), np.linalg.inv(a), rtol=tol, atol=tol)
  np.testing.assert_allclose(jnp.linalg.det(a), np.linalg.det(a), rtol=tol)
  sign, logdet = jnp.linalg.slogdet(a)
  ref = np.linalg.slogdet(a)
  np.testing.assert_allclose(sign, ref.sign)
  np.testing.assert_allclose(logdet, ref.logabsdet, rtol=tol, atol=tol)


def test_solve_with_vector_rhs_and_singular_det():
  a = _mat((3, 3)) + 3 * np.eye(3)
  v = _mat((3,))
  np.testing.assert_allclose(jnp.linalg.solve(a, v), np.linalg.solve(a, v), rtol=1e-10)
  assert float(jnp.linalg.det(np.ones((3, 3)))) == 0.0
  assert float(jnp.linalg.slogdet(np.ones((3, 3)))[1]) == -np.inf


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_reconstructs(shape, mode):
  a = _mat(shape)
  q, r = jnp.linalg.qr(a, mode=mode)
  rq, rr = np.linalg.qr(a, mode=mode)
  assert q.shape == rq.shape and r.shape == rr.shape
  np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), a, atol=1e-10)
  np.testing.assert_allclose(np.abs(r), np.abs(rr), atol=1e-10)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_matches_numpy(shape, full_matrices):
  a = _mat(shape)
  u, s, vh = jnp.linalg.svd(a, full_matrices=full_matrices)
  ru, rs, rvh = np.linalg.svd(a, full_matrices=full_matrices)
  assert u.shape == ru.shape and vh.shape == rvh.shape
  np.testing.assert_allclose(s, rs, rtol=1e-10)
  k = min(shape[-2:])
  recon = (np.asarray(u)[..., :, :k] * np.asarray(s)[..., None, :]) @ np.asarray(vh)[..., :k, :]
  np.testing.assert_allclose(recon, a, atol=1e-10)
  np.testing.assert_allclose(jnp.linalg.svdvals(a), rs, rtol=1e-10)


@pytest.mark.parametrize("batch", [(), (3,)])
def test_eigh_matches_numpy(batch):
  a = _spd(4, batch)
  w, v = jnp.linalg.eigh(a)
  rw, _ = np.linalg.eigh(a)
  np.testing.assert_allclose(w, rw, rtol=1e-10)
  np.testing.assert_allclose(a @ np.asarray(v), np.asarray(v) * np.asarray(w)[..., None, :],
                             atol=1e-9)
  np.testing.assert_allclose(jnp.linalg.eigvalsh(a), rw, rtol=1e-10)


def test_eig_and_eigvals():
  a = _mat((4, 4))
  w, v = jnp.linalg.eig(a)
  np.testing.assert_allclose(a @ np.asarray(v), np.asarray(v) * np.asarray(w)[None, :],
                             atol=1e-9)
  np.testing.assert_allclose(np.sort_complex(np.asarray(jnp.linalg.eigvals(a))),
                             np.sort_complex(np.linalg.eigvals(a)), atol=1e-10)
  assert w.dtype == np.complex64 or w.dtype == np.complex128


@pytest.mark.parametrize("ord,axis", [(None, None), ("fro", None), (1, None), (2, None),
                                      (np.inf, None), (-np.inf, None), ("nuc", None),
                                      (-1, None), (-2, None), (None, 0), (1, 1), (3, 0),
                                      (0, 1), (np.inf, 1), (None, (0, 1))])
def test_norm_matches_numpy(ord, axis):
  x = _mat((4, 3))
  np.testing.assert_allclose(jnp.linalg.norm(x, ord, axis), np.linalg.norm(x, ord, axis),
                             rtol=1e-10)
  np.testing.assert_allclose(jnp.linalg.norm(x, ord, axis, keepdims=True),
                             np.linalg.norm(x, ord, axis, keepdims=True), rtol=1e-10)


def test_vector_and_matrix_norm():
  x = _mat((2, 4, 3))
  np.testing.assert_allclose(jnp.linalg.vector_norm(x), np.linalg.norm(x.ravel()))
  np.testing.assert_allclose(jnp.linalg.matrix_norm(x), np.linalg.norm(x, axis=(-2, -1)))


def test_lstsq_pinv_rank_power_multidot():
  a, b = _mat((6, 3)), _mat((6, 2))
  x, resid, rank, s = jnp.linalg.lstsq(a, b)
  rx, rresid, rrank, rs = np.linalg.lstsq(a, b, rcond=None)
  np.testing.assert_allclose(x, rx, atol=1e-10)
  np.testing.assert_allclose(resid, rresid, rtol=1e-8)
  assert int(rank) == rrank
  np.testing.assert_allclose(jnp.linalg.pinv(a), np.linalg.pinv(a), atol=1e-10)
  low_rank = _mat((5, 2)) @ _mat((2, 5))
  assert int(jnp.linalg.matrix_rank(low_rank)) == 2
  m = _mat((3, 3))
  for n in (0, 1, 2, 5, -2):
    np.testing.assert_allclose(jnp.linalg.matrix_power(m, n), np.linalg.matrix_power(m, n),
                               rtol=1e-8, atol=1e-10)
  arrays = [_mat((2, 5)), _mat((5, 4)), _mat((4, 3)), _mat((3,))]
  np.testing.assert_allclose(jnp.linalg.multi_dot(arrays), np.linalg.multi_dot(arrays),
                             rtol=1e-10)


def test_tensorsolve_tensorinv_cond():
  a = _mat((6, 2, 3)) + 0.0
  a = (a.reshape(6, 6) + 4 * np.eye(6)).reshape(6, 2, 3)
  b = _mat((6,))
  np.testing.assert_allclose(jnp.linalg.tensorsolve(a, b), np.linalg.tensorsolve(a, b),
                             atol=1e-10)
  t = (_mat((4, 6)) + 0).reshape(4, 6)
  t = (np.eye(4 * 6)[:24, :24].reshape(4, 6, 24) + 0.1 * _mat((4, 6, 24))).reshape(4, 6, 4, 6)
  np.testing.assert_allclose(jnp.linalg.tensorinv(t), np.linalg.tensorinv(t), atol=1e-8)
  m = _mat((4, 4))
  np.testing.assert_allclose(jnp.linalg.cond(m), np.linalg.cond(m), rtol=1e-8)


# ----------------------------------------------------------------------------- gradients

def test_cholesky_gradients():
  a = _spd(3)
  check_grads(lambda x: jnp.linalg.cholesky(x), (a,), order=2)


def test_solve_inv_det_gradients():
  a = _mat((3, 3)) + 3 * np.eye(3)
  b = _mat((3, 2))
  check_grads(jnp.linalg.solve, (a, b), order=2)
  check_grads(jnp.linalg.inv, (a,), order=2)
  check_grads(jnp.linalg.det, (a,), order=1)
  check_grads(lambda x: jnp.linalg.slogdet(x)[1], (a,), order=1)


def test_triangular_solve_gradients():
  a = _mat((3, 3)) + 3 * np.eye(3)
  for left in (True, False):
    b = _mat((3, 2) if left else (2, 3))
    for lower in (True, False):
      for trans in (True, False):
        f = lambda a, b: lax.linalg.triangular_solve(a, b, left_side=left, lower=lower,
                                                     transpose_a=trans)
        check_grads(f, (a, b), order=1)


def test_eigh_gradients():
  a = _spd(3) + np.diag([0.0, 3.0, 7.0])
  check_grads(lambda x: jnp.linalg.eigh(x)[0], (a,), order=2)
  # eigenvectors are defined up to sign: check a sign-invariant function of them
  check_grads(lambda x: jnp.linalg.eigh(x)[1] ** 2, (a,), order=1)


def test_svd_gradients():
  a = np.diag([5.0, 3.0, 1.0]) + 0.1 * _mat((3, 3))
  check_grads(lambda x: jnp.linalg.svd(x, compute_uv=False), (a,), order=2)

  def uv(x):
    u, s, vh = jnp.linalg.svd(x, full_matrices=False)
    return jnp.matmul(u * s, vh), u[:, 0] * vh[0, :]
  check_grads(uv, (a,), order=1)
  tall = np.concatenate([np.diag([5.0, 3.0, 1.0]), 0.1 * _mat((2, 3))]) + 0.05 * _mat((5, 3))
  check_grads(lambda x: jnp.abs(jnp.linalg.svd(x, full_matrices=False)[0]), (tall,), order=1)
  check_grads(lambda x: jnp.abs(jnp.linalg.svd(x, full_matrices=False)[2]), (tall.T,), order=1)


def test_qr_gradients():
  a = _mat((4, 3))
  check_grads(lambda x: jnp.linalg.qr(x), (a,), order=1)
  check_grads(lambda x: jnp.linalg.qr(x), (_mat((3, 3)),), order=2)


def test_lu_gradient():
  a = _mat((4, 4)) + 2 * np.eye(4)
  check_grads(lambda x: lax.linalg.lu(x)[0], (a,), order=1)
  check_grads(lambda x: lax.linalg.lu(x)[0], (_mat((4, 3)),), order=1)


def test_norm_gradients():
  x = _mat((3, 4))
  check_grads(lambda v: jnp.linalg.norm(v), (x,), order=2)
  check_grads(lambda v: jnp.linalg.norm(v, "nuc"), (x,), order=1)
  check_grads(lambda v: jnp.linalg.norm(v, 3, axis=1), (x,), order=1)


# ----------------------------------------------------------------------------- transformations

def test_linalg_under_vmap_and_jit_matches_batched():
  a = _spd(3, (4,))
  b = _mat((4, 3, 2))
  np.testing.assert_allclose(jaxlite.vmap(jnp.linalg.cholesky)(a), np.linalg.cholesky(a),
                             rtol=1e-10)
  np.testing.assert_allclose(jaxlite.vmap(jnp.linalg.solve)(a, b), np.linalg.solve(a, b),
                             rtol=1e-10)
  np.testing.assert_allclose(jaxlite.vmap(jnp.linalg.solve, (None, 0))(a[0], b),
                             np.linalg.solve(a[0], b), rtol=1e-10)
  np.testing.assert_allclose(jaxlite.vmap(jnp.linalg.eigvalsh)(a), np.linalg.eigvalsh(a),
                             rtol=1e-10)
  np.testing.assert_allclose(jaxlite.jit(jnp.linalg.det)(a), np.linalg.det(a), rtol=1e-10)
  np.testing.assert_allclose(jaxlite.vmap(jnp.linalg.svdvals, 1)(np.moveaxis(a, 0, 1)),
                             np.linalg.svd(a, compute_uv=False), rtol=1e-10)
  g = jaxlite.vmap(jaxlite.grad(lambda x: jnp.linalg.det(x)))(a)
  np.testing.assert_allclose(g, np.linalg.det(a)[:, None, None] *
                             np.swapaxes(np.linalg.inv(a), -1, -2), rtol=1e-8)


def test_linalg_primitives_trace_into_jaxprs():
  a = _spd(3).astype(np.float32)
  text = str(jaxlite.make_jaxpr(jnp.linalg.solve)(a, a))
  assert "lu" in text and "triangular_solve" in text


JAXPR_CASES = {
    "cholesky": "lax.linalg.cholesky",
    "tri": "lambda a: lax.linalg.triangular_solve(a, a, left_side=True, lower=True)",
    "lu": "lax.linalg.lu",
    "qr": "lax.linalg.qr",
    "svd": "lax.linalg.svd",
    "eigh": "lax.linalg.eigh",
}


def _jax_jaxprs():
  lines = ["import jax, numpy as np", "from jax import lax",
           "x = np.ones((3, 3), np.float32)"]
  for name, expr in JAXPR_CASES.items():
    lines.append(f"print('##{name}'); print(jax.make_jaxpr({expr})(x))")
  stdout = run_reference("\n".join(lines), text=True, timeout=120)
  found = {}
  for chunk in stdout.split("##")[1:]:
    name, _, body = chunk.partition("\n")
    found[name] = body.strip()
  return found


def test_linalg_jaxprs_print_like_jax():
  from jaxlite import lax  # noqa: F811  (names in JAXPR_CASES refer to it)
  want = _jax_jaxprs()
  x = np.ones((3, 3), np.float32)
  for name, expr in JAXPR_CASES.items():
    fun = eval(expr, {"lax": lax})
    assert str(jaxlite.make_jaxpr(fun)(x)).strip() == want[name], name


def _complex_normal(rng, shape):
  return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _central_difference(f, a, d, eps):
  """(f(a + eps d) - f(a - eps d)) / (2 eps): the directional derivative, numerically."""
  return (np.asarray(f(jnp.asarray(a + eps * d)))
          - np.asarray(f(jnp.asarray(a - eps * d)))) / (2 * eps)


def test_cholesky_jvp_of_hermitian_complex_matrices(x64):
  x64(True)
  from jaxlite import lax
  rng = np.random.default_rng(0)
  b = _complex_normal(rng, (3, 3))
  a = b @ b.conj().T + 3 * np.eye(3)
  d = _complex_normal(rng, (3, 3))
  d = d + d.conj().T
  _, dl = jax.jvp(lax.linalg.cholesky, (jnp.asarray(a),), (jnp.asarray(d),))
  eps = 1e-6
  numeric = (np.linalg.cholesky(a + eps * d) - np.linalg.cholesky(a - eps * d)) / (2 * eps)
  np.testing.assert_allclose(np.asarray(dl), numeric, atol=1e-7)
  np.testing.assert_allclose(lax.linalg.symmetrize(jnp.asarray(b)), (b + b.conj().T) / 2)


def test_eigh_and_triangular_solve_jvps_of_complex_matrices(x64):
  x64(True)
  from jaxlite import lax
  rng = np.random.default_rng(1)
  b = _complex_normal(rng, (3, 3))
  a = b + b.conj().T + np.diag([0.0, 3.0, 7.0])
  d = _complex_normal(rng, (3, 3))
  d = d + d.conj().T
  (v, w), (dv, dw) = jax.jvp(lax.linalg.eigh, (jnp.asarray(a),), (jnp.asarray(d),))
  eps = 1e-6
  numeric_w = (np.linalg.eigvalsh(a + eps * d) - np.linalg.eigvalsh(a - eps * d)) / (2 * eps)
  np.testing.assert_allclose(np.asarray(dw), numeric_w, atol=1e-7)
  v, w, dv, dw = map(np.asarray, (v, w, dv, dw))
  rebuilt = (dv @ np.diag(w) @ v.conj().T + v @ np.diag(dw) @ v.conj().T
             + v @ np.diag(w) @ dv.conj().T)
  np.testing.assert_allclose(rebuilt, d, atol=1e-9)
  lo = np.tril(b) + 3 * np.eye(3)
  rhs = _complex_normal(rng, (3, 2))
  dlo = np.tril(_complex_normal(rng, (3, 3)))
  for transpose_a, conjugate_a in [(False, False), (True, False), (True, True)]:
    f = lambda m: lax.linalg.triangular_solve(m, jnp.asarray(rhs), left_side=True, lower=True,
                                              transpose_a=transpose_a,
                                              conjugate_a=conjugate_a)
    _, t = jax.jvp(f, (jnp.asarray(lo),), (jnp.asarray(dlo),))
    numeric = _central_difference(f, lo, dlo, eps)
    np.testing.assert_allclose(np.asarray(t), numeric, atol=1e-7)


def test_lu_jvp_of_complex_matrices(x64):
  x64(True)
  from jaxlite import lax
  rng = np.random.default_rng(2)
  a = _complex_normal(rng, (4, 4))
  d = _complex_normal(rng, (4, 4))
  f = lambda m: lax.linalg.lu(m)[0]
  _, t = jax.jvp(f, (jnp.asarray(a),), (jnp.asarray(d),))
  eps = 1e-6
  numeric = _central_difference(f, a, d, eps)
  np.testing.assert_allclose(np.asarray(t), numeric, atol=1e-7)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (2, 4, 3)])
def test_qr_jvp_of_complex_matrices(x64, shape):
  x64(True)
  from jaxlite import lax
  rng = np.random.default_rng(3)
  a = _complex_normal(rng, shape)
  d = _complex_normal(rng, shape)
  f = lambda m: lax.linalg.qr(m, full_matrices=False)
  (q, r), (dq, dr) = jax.jvp(f, (jnp.asarray(a),), (jnp.asarray(d),))
  assert np.allclose(np.diagonal(np.asarray(r), axis1=-2, axis2=-1).imag, 0)
  eps = 1e-6
  plus, minus = f(jnp.asarray(a + eps * d)), f(jnp.asarray(a - eps * d))
  for tangent, p, m in zip((dq, dr), plus, minus):
    numeric = (np.asarray(p) - np.asarray(m)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(tangent), numeric, atol=1e-7)


@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 4, 3)])
def test_svd_jvp_of_complex_matrices(x64, shape):
  # U and V of a complex SVD are defined up to a phase per column, so check what is
  # gauge-free: the singular values' tangent, the rebuilt dA, and U^H dU skew-Hermitian.
  x64(True)
  from jaxlite import lax
  rng = np.random.default_rng(4)
  a = _complex_normal(rng, shape)
  d = _complex_normal(rng, shape)
  f = lambda m: lax.linalg.svd(m, full_matrices=False)
  (u, s, vt), (du, ds, dvt) = map(lambda t: map(np.asarray, t),
                                  jax.jvp(f, (jnp.asarray(a),), (jnp.asarray(d),)))
  assert ds.dtype == np.float64
  eps = 1e-6
  numeric = (np.linalg.svd(a + eps * d, compute_uv=False)
             - np.linalg.svd(a - eps * d, compute_uv=False)) / (2 * eps)
  np.testing.assert_allclose(ds, numeric, atol=1e-7)
  diag = lambda v: v[..., None, :] * np.eye(v.shape[-1])
  np.testing.assert_allclose(du @ diag(s) @ vt + u @ diag(ds) @ vt + u @ diag(s) @ dvt, d,
                             atol=1e-12)
  uh_du = np.swapaxes(u.conj(), -1, -2) @ du
  np.testing.assert_allclose(uh_du, -np.swapaxes(uh_du.conj(), -1, -2), atol=1e-12)
  frobenius = jax.grad(lambda m: jnp.sum(jnp.linalg.svd(m, compute_uv=False) ** 2))
  np.testing.assert_allclose(frobenius(jnp.asarray(a)),
                             jax.grad(lambda m: jnp.sum(jnp.abs(m) ** 2))(jnp.asarray(a)))


LINALG_REF = np.load(os.path.join(os.path.dirname(__file__), "data", "linalg_reference.npz"))
# LAPACK's last bits depend on the BLAS kernel the CPU picks, for JAX as for jaxlite
LINALG_TOL = {np.float32: 1e-4, np.complex64: 1e-4, np.float64: 1e-12, np.complex128: 1e-12}


def _linalg_cases():
  return sorted({k.split("|")[0] for k in LINALG_REF.files if "|" in k})


def _unit_phases(u, k, rows):
  """The unit phase of the entry in row ``rows[..., i]`` of each of u's first k columns."""
  entry = np.take_along_axis(u[..., :k], rows[..., None, :], axis=-2)
  return entry / np.abs(entry)


def _assert_same_up_to_phases(close, k, u, want_u, vh=None, want_vh=None):
  """The first k columns of u (and rows of vh) against the reference, each after dividing
  out the phase (sign, for real matrices) that LAPACK picks and the decomposition leaves
  free; u's column and vh's row share theirs."""
  if k == 0:
    return
  rows = np.argmax(np.abs(want_u[..., :k]), axis=-2)   # where the reference is largest
  p, q = _unit_phases(u, k, rows), _unit_phases(want_u, k, rows)
  close(u[..., :k] / p, want_u[..., :k] / q)
  if vh is not None:
    close(vh[..., :k, :] * np.swapaxes(p, -1, -2), want_vh[..., :k, :] * np.swapaxes(q, -1, -2))


def _assert_orthonormal_columns(close, q):
  n = q.shape[-1]
  close(np.swapaxes(q.conj(), -1, -2) @ q, np.broadcast_to(np.eye(n), q.shape[:-2] + (n, n)))


@pytest.mark.parametrize("tag", _linalg_cases())
def test_cholesky_eigh_svd_match_jax_to_rounding(tag):
  """Against JAX 0.10.2's results (tests/data/make_linalg_reference.py), to rounding."""
  ref = {k.split("|")[1]: LINALG_REF[k] for k in LINALG_REF.files if k.startswith(tag + "|")}
  a = ref["a"]
  tol = LINALG_TOL[a.dtype.type]
  close = functools.partial(np.testing.assert_allclose, rtol=tol, atol=tol)
  with jax.config.override("jax_enable_x64", a.dtype in (np.float64, np.complex128)):
    got = {"svdvals": jnp.linalg.svd(a, compute_uv=False)}
    for full in (True, False):
      got.update({f"svd{int(full)}{i}": t
                  for i, t in enumerate(jnp.linalg.svd(a, full_matrices=full))})
    if "spd" in ref:
      got["cholesky"] = jnp.linalg.cholesky(ref["spd"])
      shifted = a - 5 * np.eye(a.shape[-1], dtype=a.dtype)   # not positive definite: NaN
      got["cholesky_indefinite"] = jnp.linalg.cholesky(shifted)
      got.update({f"eigh{i}": t for i, t in enumerate(jnp.linalg.eigh(ref["spd"]))})
      got.update({f"eigh_nonsym{i}": t for i, t in enumerate(jnp.linalg.eigh(a))})
  assert set(got) == set(ref) - {"a", "spd"}
  got = {name: np.asarray(v) for name, v in got.items()}
  for name, value in got.items():
    assert value.dtype == ref[name].dtype and value.shape == ref[name].shape, name
    if name in ("svdvals", "svd01", "svd11", "cholesky", "cholesky_indefinite", "eigh0",
                "eigh_nonsym0"):
      close(value, ref[name], err_msg=name)
  k = min(a.shape[-2:])
  for full in "01":
    u, vh = got[f"svd{full}0"], got[f"svd{full}2"]
    _assert_same_up_to_phases(close, k, u, ref[f"svd{full}0"], vh, ref[f"svd{full}2"])
    for q in (u, np.swapaxes(vh, -1, -2)):   # full_matrices' extra columns: any basis
      _assert_orthonormal_columns(close, q)
  for name in ("eigh1", "eigh_nonsym1"):
    if name in got:
      _assert_same_up_to_phases(close, a.shape[-1], got[name], ref[name])


# jnp.linalg.qr(a, mode="raw") in JAX 0.10.2 (LAPACK's geqrf; NumPy's raw mode agrees)
_RAW_A = np.array([[1., 2., 0.], [3., 4., 1.], [5., 6., -2.], [0., 1., 1.]])
_RAW_H = np.array([[-5.916079783099616, 0.4337717455676132, 0.7229529092793553, 0.],
                   [-7.437357441610946, 1.2983506020002014, 0.5910627416951431,
                    -0.7183858435069754],
                   [1.183215956619923, 1.3863743716273336, 1.636449235905262,
                    -0.3820488671800937]])
_RAW_TAU = np.array([1.1690308509457032, 1.0721369180626528, 1.7452595786403944])
_RAW_WIDE_H = np.array([[-2.23606797749979, 0.6180339887498948, 0.],
                        [-4.919349550499537, 1.3416407864998734, -0.4472135954999581],
                        [-7.602631123499284, -0.29814239699997347, -2.6666666666666656],
                        [-0.8944271909999157, 0.4472135954999581, 1.]])
_RAW_WIDE_TAU = np.array([1.4472135954999579, 1.6666666666666665, 0.])


def _raw_tiers():
  ways = [lambda f: f, lambda f: jax.jit(f, backend="numpy")]
  if tiers.xla_available():
    ways.append(lambda f: jax.jit(f, backend="xla"))
  return ways


@pytest.mark.parametrize("tier", range(3), ids=["eager", "numpy", "xla"])
def test_qr_raw_mode_is_lapacks_packed_form_like_jax(tier):
  ways = _raw_tiers()
  if tier >= len(ways):
    pytest.skip("the XLA backend is unavailable")
  raw = ways[tier](lambda x: jnp.linalg.qr(x, mode="raw"))
  for a, h_ref, tau_ref in ((_RAW_A, _RAW_H, _RAW_TAU), (_RAW_A.T, _RAW_WIDE_H, _RAW_WIDE_TAU)):
    h, tau = raw(a)
    assert h.shape == h_ref.shape and tau.shape == tau_ref.shape
    np.testing.assert_allclose(h, h_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tau, tau_ref, rtol=1e-12, atol=1e-12)
  # the packed form is what householder_product reads: its q is qr's
  q = lax.linalg.householder_product(*jaxlite._src.lax.linalg.geqrf(_RAW_A))
  np.testing.assert_allclose(q, np.linalg.qr(_RAW_A)[0], atol=1e-12)


def test_qr_raw_mode_batches_keeps_float32_and_has_no_derivative():
  h, tau = jax.vmap(lambda x: jnp.linalg.qr(x, mode="raw"))(np.stack([_RAW_A, 2 * _RAW_A]))
  np.testing.assert_allclose(tau, [_RAW_TAU, _RAW_TAU], rtol=1e-12)
  np.testing.assert_allclose(h[0], _RAW_H, rtol=1e-12, atol=1e-12)
  assert jnp.linalg.qr(np.ones((3, 2), np.float32), mode="raw")[0].dtype == np.float32
  assert jnp.linalg.qr(np.ones((3, 2), np.int32), mode="raw")[1].dtype == np.float32
  # JAX 0.10.2: NotImplementedError "Differentiation rule for 'geqrf' not implemented"
  with pytest.raises(NotImplementedError, match="Differentiation rule for 'geqrf'"):
    jax.jvp(lambda x: jnp.linalg.qr(x, mode="raw"), (_RAW_A,), (_RAW_A,))
  with pytest.raises(ValueError, match="Unsupported QR decomposition mode 'economic'"):
    jnp.linalg.qr(_RAW_A, mode="economic")


def test_singular_triangular_systems_give_xlas_inf_and_nan():
  """XLA substitutes through a zero pivot (inf, then inf - inf = nan) where LAPACK's solver
  raises; values recorded from JAX 0.10.2."""
  tri = jax.lax.linalg.triangular_solve
  a = jnp.array([[0., 0.], [1., 1.]])
  ones = jnp.ones((2, 2))
  inf, nan = np.inf, np.nan
  m = jnp.array([[1., 2.], [2., 4.]])
  cases = [
      (tri(a, ones, left_side=True, lower=True), [[inf, inf], [-inf, -inf]]),
      (tri(a, ones, left_side=False, lower=True), [[nan, 1.], [nan, 1.]]),
      (tri(a.T, ones, left_side=True, lower=False, transpose_a=True),
       [[inf, inf], [-inf, -inf]]),
      (jnp.linalg.inv(m), [[-inf, inf], [inf, -inf]]),
      (jax.jit(jnp.linalg.inv)(m), [[-inf, inf], [inf, -inf]]),
      (jnp.linalg.solve(m, jnp.ones(2)), [-inf, inf]),
      (jnp.linalg.inv(jnp.zeros((2, 2))), [[nan, nan], [nan, inf]]),
  ]
  for got, want in cases:
    np.testing.assert_array_equal(np.asarray(got), np.float32(want))
