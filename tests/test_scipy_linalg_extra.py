"""jax.scipy.linalg's schur, rsf2csf, hessenberg, sqrtm and funm, and jax.lax.linalg's
schur primitive and hessenberg / tridiagonal, against values recorded from JAX 0.10.2 and
against SciPy. Tier 0 runs LAPACK's gees as JAX's CPU backend does, so its Schur forms
match JAX's; the XLA tier computes its own (a Schur form is not unique), checked by what
defines one: Z T Z^H = A, Z unitary, T (quasi-)upper-triangular, the eigenvalues of A."""
import inspect

import numpy as np
import pytest
import scipy.linalg as sla

import jaxlite
import jaxlite.numpy as jnp
import jaxlite.scipy.linalg as L
from jaxlite import lax
from jaxlite._src import tiers

A4 = np.array([[1., 2., 3., 4.], [1., 4., 2., 3.], [3., 2., 1., 4.], [2., 3., 2., 2.]],
              np.float32)
A3 = np.array([[0., 3., 3.], [0., 1., 2.], [2., 0., 1.]], np.float32)
S = np.array([[1., 2., 3.], [2., 4., 2.], [3., 2., 1.]], np.float32)
P = np.array([[4., 1.3, 0.5], [1, 3, 0.3], [0.7, 0.2, 2]], np.float32)
F = np.array([[1., 2.], [3., 4.]], np.float32)

# Recorded from JAX 0.10.2 (CPU), rounded to 6 decimals: LAX_HESS_* =
# lax.linalg.hessenberg(A4), LAX_TRIDIAG = lax.linalg.tridiagonal(A4 + A4.T)[0], HESS_* =
# scipy.linalg.hessenberg(A4, calc_q=True) (HESS_B_Q1: of A4.T in a batch), SCHUR_* =
# schur(A3), RSF_* = rsf2csf(*schur(A3)), SCHURC_* = schur(A3, output='complex'),
# SQRTM_S / SQRTM_P = sqrtm(S) / sqrtm(P), FUNM_SINCOS = funm(F, sin + 2 cos),
# FUNM_EXP = funm(A3, exp), SQRTM64 = sqrtm(A4 + 4 I) in float64.
JAX = {
    'LAX_HESS_A': [[1.0, -5.077963, 1.167477, 1.360618], [-3.741657, 5.785713, -3.612969, -1.824582], [0.63269, -2.992336, 2.493487, -0.577163], [0.421793, 0.130803, -0.04264, -1.279202]],
    'LAX_HESS_TAUS': [1.267261, 1.966357, 0.0],
    'LAX_TRIDIAG': [[2.0, 3.0, 6.0, 6.0], [-8.999999, 13.33334, 4.0, 6.0], [0.5, -5.374844, 3.712826, 6.0], [0.5, 0.265565, -0.830767, -3.046154]],
    'HESS_H': [[1.0, -5.077963, 1.167477, 1.360618], [-3.741657, 5.785713, -3.612969, -1.824582], [0.0, -2.992336, 2.493487, -0.577163], [0.0, 0.0, -0.04264, -1.279202]],
    'HESS_Q': [[1.0, 0.0, 0.0, 0.0], [0.0, -0.267261, 0.912291, -0.310316], [0.0, -0.801784, -0.389159, -0.453539], [0.0, -0.534522, 0.127593, 0.835467]],
    'HESS_B_Q1': [[1.0, 0.0, 0.0, 0.0], [0.0, -0.371391, 0.895156, -0.246506], [0.0, -0.557086, -0.427233, -0.712128], [0.0, -0.742781, -0.127153, 0.657349]],
    'SCHUR_T': [[3.756321, -2.168157, 1.382625], [0.0, -0.878161, -0.348686], [0.0, 2.369299, -0.878161]],
    'SCHUR_Z': [[0.74459, 0.557796, -0.366674], [0.392028, -0.810004, -0.436128], [0.540278, -0.18099, 0.821792]],
    'RSF_T': [[(3.756321+0j), (1.290895-0.776577j), (2.02431-0.49522j)], [0j, (-0.878161+0.908923j), (-2.020613+0j)], [0j, 0j, (-0.878161-0.908923j)]],
    'RSF_Z': [[(0.74459+0j), (-0.342347+0.199788j), (-0.520789+0.131333j)], [(0.392028+0j), (-0.407194-0.290122j), (0.756264+0.15621j)], [(0.540278+0j), (0.76727-0.064826j), (0.168983-0.294344j)]],
    'SCHURC_T': [[(3.756322+0j), (1.19624-0.915693j), (-1.002878-1.826832j)], [0j, (-0.878161+0.908923j), (0.302709+1.99781j)], [0j, 0j, (-0.87816-0.908923j)]],
    'SCHURC_Z': [[(-0.682627-0.297379j), (0.386017-0.090043j), (-0.052717-0.5345j)], [(-0.359404-0.156571j), (0.303629+0.397224j), (-0.266542+0.72477j)], [(-0.495317-0.21578j), (-0.752308-0.164133j), (0.266057+0.210731j)]],
    'SQRTM_S': [[(0.92388+0.707108j), (0.541196+0j), (0.92388-0.707107j)], [(0.541196-0j), (1.84776-0j), (0.541196+0j)], [(0.92388-0.707108j), (0.541197-0j), (0.92388+0.707107j)]],
    'SQRTM_P': [[(1.969063+0j), (0.352403+0j), (0.139445+0j)], [(0.267578+0j), (1.703589+0j), (0.084562+0j)], [(0.204327+0j), (0.041203+0j), (1.402863+0j)]],
    'FUNM_SINCOS': [[(1.245265+0j), (-0.370177+0j)], [(-0.555266+0j), (0.69+0j)]],
    'FUNM_EXP': [[(14.491038+0j), (16.2314+0j), (27.223936-0j)], [(7.32835+0j), (8.908969+0j), (14.485112-0j)], [(10.820944+0j), (10.992521+0j), (19.901506+0j)]],
    'SQRTM64': [[(2.061345+0j), (0.288014+0j), (0.636507+0j), (0.77574+0j)], [(0.116226+0j), (2.75162+0j), (0.361883+0j), (0.524196+0j)], [(0.647131+0j), (0.288014+0j), (2.05072+0j), (0.77574+0j)], [(0.393792+0j), (0.554921+0j), (0.358904+0j), (2.263894+0j)]],
}

BACKENDS = ["numpy", "xla"]
TOL = dict(rtol=2e-5, atol=2e-5)


def _jit(fun, backend):
  if backend is None:
    return fun
  if backend == "xla" and not tiers.xla_available():
    pytest.skip("XLA is not available here")
  return jaxlite.jit(fun, backend=backend)


def _close(x, name, **tol):
  np.testing.assert_allclose(np.asarray(x), np.array(JAX[name]), err_msg=name, **(tol or TOL))


C5 = (np.random.default_rng(0).normal(size=(5, 5))
      + 1j * np.random.default_rng(1).normal(size=(5, 5))).astype(np.complex64)


def _hessenbergs(a, batch, c):
  return (lax.linalg.hessenberg(a), lax.linalg.tridiagonal(a + a.T)[0],
          L.hessenberg(a, calc_q=True), L.hessenberg(batch, calc_q=True),
          lax.linalg.hessenberg(c))


@pytest.mark.parametrize("backend", [None] + BACKENDS)
def test_hessenberg_matches_jax(backend):
  # (the lax reduction used to overwrite the earlier reflectors' vectors from n = 4 on)
  (a, taus), tri, (h, q), (hb, qb), packed = _jit(_hessenbergs, backend)(
      A4, np.stack([A4, A4.T]), C5)
  _close(a, "LAX_HESS_A")
  _close(taus, "LAX_HESS_TAUS")
  _close(tri, "LAX_TRIDIAG")
  _close(h, "HESS_H")
  _close(q, "HESS_Q")
  assert hb.shape == qb.shape == (2, 4, 4)
  _close(qb[1], "HESS_B_Q1")
  np.testing.assert_allclose(qb[1] @ hb[1] @ qb[1].T, A4.T, atol=2e-5)
  assert L.hessenberg(A4).shape == (4, 4)
  assert lax.linalg.hessenberg(np.stack([A4, A4]))[1].shape == (2, 3)
  # complex: LAPACK's cgehrd (what JAX calls) packs n - 1 reflectors, the last making the
  # final subdiagonal entry real
  from scipy.linalg import lapack
  lapack_packed, lapack_taus, _ = lapack.cgehrd(C5)
  np.testing.assert_allclose(packed[0], lapack_packed, atol=1e-5)
  np.testing.assert_allclose(packed[1], lapack_taus, atol=1e-5)


@pytest.mark.parametrize("backend", [None, "numpy"])
def test_complex_hessenberg_and_tridiagonal_pack_as_lapack(backend):
  # LAPACK's gehrd / hetrd (what JAX calls) as the oracle (XLA: test_hessenberg_matches_jax)
  from scipy.linalg import lapack
  a = C5
  h, q = _jit(lambda m: L.hessenberg(m, calc_q=True), backend)(a)
  sh, sq = sla.hessenberg(a, calc_q=True)
  np.testing.assert_allclose(h, sh, atol=1e-5)
  np.testing.assert_allclose(q, sq, atol=1e-5)
  c = a + a.conj().T
  arr, d, e, tri_taus = lapack.chetrd(c, lower=1)[:4]
  got = lax.linalg.tridiagonal(c)
  np.testing.assert_allclose(np.tril(got[0]), np.tril(arr), atol=1e-5)
  for x, y in zip(got[1:], (d, e, tri_taus)):
    np.testing.assert_allclose(x, y, atol=1e-5)


@pytest.mark.parametrize("backend", [None, "numpy"])
def test_schur_and_rsf2csf_match_jax_on_lapack(backend):
  t, z = _jit(L.schur, backend)(A3)
  _close(t, "SCHUR_T")
  _close(z, "SCHUR_Z")
  tc, zc = _jit(L.rsf2csf, backend)(t, z)
  _close(tc, "RSF_T")
  _close(zc, "RSF_Z")
  t, z = _jit(lambda m: L.schur(m, output="complex"), backend)(A3)
  _close(t, "SCHURC_T")
  _close(z, "SCHURC_Z")


def _check_schur(a, t, z, complex_output):
  a, t, z = (np.asarray(v).astype(np.complex128) for v in (a, t, z))
  n = a.shape[-1]
  scale = max(1.0, np.abs(a).max())
  tol = 1e-4 if t.dtype == np.complex64 else 1e-4
  np.testing.assert_allclose(z @ t @ z.conj().T, a, atol=tol * scale)
  np.testing.assert_allclose(z.conj().T @ z, np.eye(n), atol=tol)
  assert np.all(np.tril(t, -1 if complex_output else -2) == 0)
  sub = np.diagonal(t, -1)
  for k in np.flatnonzero(sub):   # real form: 2x2 blocks only for complex pairs
    assert k + 1 >= n - 1 or sub[k + 1] == 0
    block = t[k:k + 2, k:k + 2]
    assert block[0, 0] == block[1, 1] and (block[0, 1] * block[1, 0]).real < 0
  ev = np.linalg.eigvals(np.asarray(a))
  got = np.diagonal(t) if complex_output else np.linalg.eigvals(t)
  key = lambda v: np.lexsort((np.round(v.imag, 3), np.round(v.real, 3)))
  np.testing.assert_allclose(np.sort_complex(got)[key(np.sort_complex(got))],
                             np.sort_complex(ev)[key(np.sort_complex(ev))], atol=1e-3 * scale)


def _hard_cases(n=5):
  """Matrices of one size that exercise the QR iterations: random, a cyclic permutation
  (a known stall for shifted QR), zero, a Jordan block, rotations (complex pairs), a
  skew-symmetric one (purely imaginary eigenvalues), a triangular one, a nilpotent one
  (zero shifts: QR cycles and leaves rounding noise to deflate) and integer ones (whose
  bulges shrink to underflow)."""
  rng = np.random.default_rng(0)
  rot = np.eye(n)
  rot[:2, :2] = [[1., 2.], [-3., 1.]]
  skew = rng.normal(size=(n, n))
  nilpotent = np.diag([-1.192, 2.6576, 0.7, 1.3][:n - 1], -1)
  integers = np.round(np.random.default_rng(5).normal(size=(4, n, n)))
  return np.concatenate([np.stack([
      rng.normal(size=(n, n)), np.roll(np.eye(n), 1, 0), np.zeros((n, n)),
      2 * np.eye(n) + np.eye(n, k=1), rot, skew - skew.T, np.triu(rng.normal(size=(n, n))),
      nilpotent]), integers]).astype(np.float32)


@pytest.mark.parametrize("backend", [None] + BACKENDS)
def test_schur_is_a_schur_decomposition(backend):
  mats = _hard_cases()
  # a matrix that is not finite gives NaNs, as LAPACK's failure does in JAX
  with_nan = np.concatenate([mats, np.full((1, 5, 5), np.nan, np.float32)])

  def forms(m):
    t, z = L.schur(m)
    return (t, z), L.rsf2csf(t, z)
  (t, z), (rt, rz) = _jit(forms, backend)(with_nan)
  assert t.dtype == z.dtype == np.float32 and t.shape == with_nan.shape
  assert rt.dtype == np.complex64
  assert np.isnan(t[-1]).all() and np.isnan(z[-1]).all()
  # (XLA's complex Schur form is checked through sqrtm's values below, which it takes
  # one compile less to test there)
  complex_schur = lambda m: L.schur(m, output="complex")
  tc, zc = _jit(complex_schur, None if backend is None else "numpy")(mats)
  assert tc.dtype == np.complex64
  for i, m in enumerate(mats):
    _check_schur(m, t[i], z[i], complex_output=False)
    _check_schur(m, tc[i], zc[i], complex_output=True)
    _check_schur(m, rt[i], rz[i], complex_output=True)
  if backend is None:   # other sizes and complex input, eagerly
    for m in [A3, A4, S, np.array([[1., 2.], [-3., 1.]], np.float32)]:
      _check_schur(m, *L.schur(m), complex_output=False)
    c = (mats[0] + 1j * mats[0].T).astype(np.complex64)
    _check_schur(c, *L.schur(c), complex_output=True)


def test_schur_float64_and_batches(x64):
  x64(True)
  rng = np.random.default_rng(1)
  batch = rng.normal(size=(3, 5, 5))
  for backend in [None] + BACKENDS:
    t, z = _jit(L.schur, backend)(batch)
    assert t.dtype == np.float64 and t.shape == (3, 5, 5)
    for i in range(3):
      np.testing.assert_allclose(z[i] @ t[i] @ z[i].T, batch[i], atol=1e-12)
      np.testing.assert_allclose(np.sort_complex(np.linalg.eigvals(t[i])),
                                 np.sort_complex(np.linalg.eigvals(batch[i])), atol=1e-10)
  tv = jaxlite.vmap(lambda m: lax.linalg.schur(m)[0])(batch)
  np.testing.assert_allclose(tv, L.schur(batch)[0], atol=1e-12)
  # tier 0 runs the same LAPACK routine as SciPy
  t, z = L.schur(batch[0])
  st, sz = sla.schur(batch[0])
  np.testing.assert_allclose(t, st, atol=1e-12)
  np.testing.assert_allclose(z, sz, atol=1e-12)


@pytest.mark.parametrize("backend", [None] + BACKENDS)
def test_sqrtm_and_funm_match_jax(backend):
  # one program for both (batches of sqrtm: beyond JAX's (N, N))
  roots, (f, err) = _jit(lambda m, n: (L.sqrtm(m), L.funm(n, jnp.exp, disp=False)),
                         backend)(np.stack([S, P]), A3)
  _close(roots[0], "SQRTM_S")
  _close(roots[1], "SQRTM_P")
  _close(L.sqrtm(P), "SQRTM_P")
  sincos = L.funm(F, lambda x: jnp.sin(x) + 2 * jnp.cos(x))
  _close(sincos, "FUNM_SINCOS")
  assert f.dtype == np.complex64 and err.dtype == np.float32
  _close(f, "FUNM_EXP", rtol=2e-5, atol=1e-4)
  assert 0 < float(err) < 1e-5   # JAX 0.10.2: 2.69e-07


def test_sqrtm_and_funm_float64_against_scipy(x64):
  x64(True)
  a = A4.astype(np.float64) + 4 * np.eye(4)
  for backend in [None, "numpy"]:   # (XLA's float64 Schur forms: the test above)
    root, exp, sin = _jit(lambda m: (L.sqrtm(m), L.funm(m, jnp.exp), L.funm(m, jnp.sin)),
                          backend)(a)
    assert root.dtype == exp.dtype == np.complex128
    _close(root, "SQRTM64", rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(root, sla.sqrtm(a), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(exp, sla.expm(a), rtol=1e-9)
    np.testing.assert_allclose(sin, sla.funm(a, np.sin), rtol=1e-9, atol=1e-9)
  # 32-bit integers become float32 and so complex64, also with x64 on (as JAX 0.10.2)
  assert L.sqrtm(np.eye(2, dtype=np.int32)).dtype == np.complex64
  assert L.hessenberg(a).dtype == np.float64


def test_dtypes_and_containers_as_jax():
  assert isinstance(L.schur(A3), list) and isinstance(lax.linalg.schur(A3), list)
  assert isinstance(L.rsf2csf(*L.schur(A3)), tuple)
  assert len(lax.linalg.schur(A3, compute_schur_vectors=False)) == 1
  assert L.sqrtm(np.eye(2, dtype=np.int32)).dtype == np.complex64
  assert L.sqrtm(S).dtype == np.complex64
  # JAX 0.10.2's jaxpr: one hessenberg equation
  assert str(jaxlite.make_jaxpr(lax.linalg.hessenberg)(A3)) == (
      "{ lambda ; a:f32[3,3]. let b:f32[3,3] c:f32[2] = hessenberg a in (b, c) }")
  assert isinstance(lax.linalg.hessenberg(A3), list)
  assert str(jaxlite.make_jaxpr(lax.linalg.schur)(A3)).count(
      "schur[\n      compute_schur_vectors=True\n      select_callable=None\n"
      "      sort_eig_vals=False\n    ]") == 1


def test_bad_inputs_raise_as_jax():
  cases = [
      (lambda: L.schur(A3, output="foo"), ValueError,
       "Expected 'output' to be either 'real' or 'complex', got output='foo'."),
      (lambda: L.rsf2csf(np.ones((2, 3)), np.eye(2)), ValueError, "Input 'T' must be square."),
      (lambda: L.rsf2csf(np.eye(3), np.eye(2)), ValueError, "Input array shapes must match"),
      (lambda: L.sqrtm(S, blocksize=2), NotImplementedError,
       "Blocked version is not implemented yet."),
      (lambda: L.funm(np.ones((2, 3)), jnp.exp), ValueError,
       "expected square array_like input"),
      (lambda: L.schur(np.ones((3, 3), np.int32)), TypeError,
       "schur does not accept dtype int32 at position 0"),
      (lambda: L.schur(np.ones((2, 3), np.float32)), ValueError,
       r"The input to schur must be a square matrix. Got shape \(2, 3\)."),
      (lambda: lax.linalg.schur(A3, sort_eig_vals=True), NotImplementedError,
       "The sort feature of LAPACK's gees routine is not implemented."),
      (lambda: jaxlite.grad(lambda a: lax.linalg.schur(a)[0].sum())(A3), NotImplementedError,
       "Differentiation rule for 'schur' not implemented"),
      (lambda: jaxlite.grad(lambda a: lax.linalg.hessenberg(a)[0].sum())(A3),
       NotImplementedError, "Differentiation rule for 'hessenberg' not implemented"),
      (lambda: lax.linalg.hessenberg(np.ones((3, 3), np.int32)), TypeError,
       "hessenberg does not accept dtype int32 at position 0"),
      (lambda: lax.linalg.hessenberg(np.ones((2, 3), np.float32)), ValueError,
       r"Argument to Hessenberg reduction must have shape \[..., n, n\]"),
  ]
  for fun, error, match in cases:
    with pytest.raises(error, match=match):
      fun()


def test_schur_of_non_finite_matrices_is_nan():
  for backend in [None, "numpy"]:
    t, z = _jit(lax.linalg.schur, backend)(np.stack([np.eye(3, dtype=np.float32),
                                                     np.full((3, 3), np.nan, np.float32)]))
    np.testing.assert_array_equal(t[0], np.eye(3))
    assert np.isnan(t[1]).all() and np.isnan(z[1]).all()


# Recorded from JAX 0.10.2: inspect.signature of each function
SIGNATURES = {
    L.funm: [("A", None), ("func", None), ("disp", True)],
    L.hessenberg: [("a", None), ("calc_q", False), ("overwrite_a", False),
                   ("check_finite", True)],
    L.rsf2csf: [("T", None), ("Z", None), ("check_finite", True)],
    L.schur: [("a", None), ("output", "real")],
    L.sqrtm: [("A", None), ("blocksize", 1)],
    lax.linalg.schur: [("x", None), ("compute_schur_vectors", True),
                       ("sort_eig_vals", False), ("select_callable", None)],
    lax.linalg.hessenberg: [("a", None)],
}


def test_signatures_as_jax():
  for fun, params in SIGNATURES.items():
    got = [(p.name, None if p.default is inspect.Parameter.empty else p.default)
           for p in inspect.signature(fun).parameters.values()]
    assert got == params, fun.__name__
  kinds = inspect.signature(L.hessenberg).parameters
  assert kinds["calc_q"].kind is inspect.Parameter.KEYWORD_ONLY
  assert inspect.signature(lax.linalg.schur).parameters["compute_schur_vectors"].kind is (
      inspect.Parameter.KEYWORD_ONLY)
  assert lax.linalg.schur_p.name == "schur"


def test_small_and_empty_matrices_as_jax():
  # values recorded from JAX 0.10.2
  for backend in [None, "numpy"]:
    t, z = _jit(L.schur, backend)(np.zeros((0, 0), np.float32))
    assert t.shape == z.shape == (0, 0) and t.dtype == np.float32
    t, z = _jit(lambda m: L.schur(m, "complex"), backend)(np.zeros((2, 0, 0), np.float32))
    assert t.shape == (2, 0, 0) and t.dtype == np.complex64
    one = np.array([[2.]], np.float32)
    np.testing.assert_allclose(_jit(L.sqrtm, backend)(one), [[1.4142135]], rtol=1e-6)
    np.testing.assert_allclose(_jit(lambda m: L.funm(m, jnp.exp), backend)(one),
                               [[7.389056]], rtol=1e-6)
    h, q = _jit(lambda m: L.hessenberg(m, calc_q=True), backend)(one)
    assert h.tolist() == [[2.0]] and q.tolist() == [[1.0]]


@pytest.mark.parametrize("trans", [0, 1])
def test_lu_solve_matches_scipy_and_takes_empty_systems(trans):
  # the row swaps come from lax.linalg.lu_pivots_to_permutation, which an empty pivot
  # vector passes (JAX 0.10.2 returns an empty solution; lineax's LU of a size-0 state
  # in diffrax's implicit solvers raised IndexError)
  a = np.array([[1.0, 2.0, 0.5], [4.0, 1.0, 3.0], [2.0, 7.0, 1.0]])
  b = np.array([[1.0, 2.0], [0.0, 1.0], [3.0, -1.0]])
  want = sla.lu_solve(sla.lu_factor(a), b, trans=trans)
  for fun in (L.lu_solve, jaxlite.jit(L.lu_solve, static_argnames="trans")):
    np.testing.assert_allclose(fun(L.lu_factor(jnp.asarray(a, jnp.float32)), b, trans=trans),
                               want, rtol=1e-5, atol=1e-6)
    empty = fun(L.lu_factor(jnp.zeros((0, 0))), jnp.zeros((0, 2)), trans=trans)
    assert empty.shape == (0, 2)
  assert L.lu_solve(L.lu_factor(jnp.zeros((0, 0))), jnp.zeros(0)).shape == (0,)
