"""Matrix decompositions and triangular solves (``jax.lax.linalg``): the primitives, and
at the end the functions composed from them and other lax ops (``tridiagonal``,
``householder_product``, ``tridiagonal_solve``, ...).

Every primitive acts on the trailing two axes and maps over any leading (batch) axes, so
the batching rules only move the vmapped axis to the front. The JVP rules are the usual
matrix-calculus identities, written as JAX writes them, in lax ops that transpose.
Complex inputs run forward; their derivatives need ``conj``, which lax lacks, so the
rules refuse them with a clear error.
"""
from __future__ import annotations

import enum

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.core.array import Array
from jaxlite._src.core.core import Primitive, ShapedArray
from jaxlite._src.lax import bits
from jaxlite._src.lax import control_flow
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.lax.base import operand as _operand
from jaxlite._src.lax import indexing
from jaxlite._src.lax import reductions as red
from jaxlite._src.lax import shapes as sh
from jaxlite._src.lax import sorting
from jaxlite._src.transforms import ad
from jaxlite._src.transforms import batching


def _aval(x):
  return core.get_aval(x)


def _check_matrix(name, a, square=True):
  if a.ndim < 2 or (square and a.shape[-1] != a.shape[-2]):
    what = "square matrices" if square else "matrices"
    raise ValueError(f"{name} requires {what} (arrays with ndim >= 2 whose trailing two "
                     f"axes are the matrix), got shape {a.shape}.")
  if not dtypes.is_inexact(a.dtype):
    raise TypeError(f"{name} requires a floating or complex dtype, got {a.dtype.name}.")


def _real_dtype(dtype):
  return np.finfo(dtype).dtype if dtypes.is_complex(dtype) else np.dtype(dtype)


# -- helpers in lax ops: batched matrix algebra over the trailing two axes

def _T(x):
  n = _aval(x).ndim
  return sh.transpose(x, tuple(range(n - 2)) + (n - 1, n - 2))


def _mm(a, b):
  """Batched ``a @ b``; the leading axes of both operands must agree."""
  nb = _aval(a).ndim - 2
  batch = tuple(range(nb))
  return red.dot_general(a, b, (((nb + 1,), (nb,)), (batch, batch)))


def _scalar(value, dtype):
  return Array(np.array(value, dtype))


def _tri_mask(shape, k, lower):
  """Boolean mask of ``shape``: True on and below (lower) or above diagonal ``k``."""
  m, n = shape[-2:]
  rows = ew.add(sh.broadcasted_iota(np.int32, (m, n), 0), _scalar(k, np.int32))
  cols = sh.broadcasted_iota(np.int32, (m, n), 1)
  mask = ew.ge(rows, cols) if lower else ew.le(rows, cols)
  return sh.broadcast_in_dim(mask, shape, (len(shape) - 2, len(shape) - 1))


def _tril(x, k=0):
  aval = _aval(x)
  mask = _tri_mask(aval.shape, k, True)
  return ew.select_n(mask, sh.broadcast_in_dim(_scalar(0, aval.dtype), aval.shape, ()), x)


def _triu(x, k=0):
  aval = _aval(x)
  mask = _tri_mask(aval.shape, k, False)
  return ew.select_n(mask, sh.broadcast_in_dim(_scalar(0, aval.dtype), aval.shape, ()), x)


def _eye(dtype, shape):
  """The identity in the trailing two axes, broadcast to ``shape``."""
  m, n = shape[-2:]
  eq = ew.eq(sh.broadcasted_iota(np.int32, (m, n), 0), sh.broadcasted_iota(np.int32, (m, n), 1))
  eye = ew.convert_element_type(eq, dtype)
  return sh.broadcast_in_dim(eye, shape, (len(shape) - 2, len(shape) - 1))


def _diagonal(x):
  """The main diagonal of the trailing two axes (square): a masked sum, so it transposes."""
  aval = _aval(x)
  return red.reduce_sum(ew.mul(x, _eye(aval.dtype, aval.shape)), (aval.ndim - 1,))


def _batch_front(name, vals, dims):
  size = batching.batch_size(vals, dims)
  return [batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims)]


def _leading_batcher(prim):
  """The primitive already maps over leading axes: move the vmapped one to the front."""
  def rule(vals, dims, **params):
    args = _batch_front(prim.name, vals, dims)
    out = prim.bind(*args, **params)
    return (out, [0] * len(out)) if prim.multiple_results else (out, 0)
  batching.batching_rules[prim] = rule


# ----------------------------------------------------------------------------- cholesky
cholesky_p = Primitive("cholesky")


@cholesky_p.def_abstract_eval
def _cholesky_rule(operand):
  _check_matrix("cholesky", operand)
  return operand.strip_weak_type()


def cholesky(x, *, symmetrize_input: bool = True):
  """Cholesky factor ``L`` (lower triangular) of Hermitian positive definite ``x``.

  Parameters
  ----------
  x : array (..., n, n)
  symmetrize_input : bool
    Use ``(x + x^H) / 2`` instead of ``x``, so that the result does not depend on
    which triangle holds the data and gradients are symmetric.

  Returns
  -------
  array (..., n, n), lower triangular; NaNs where ``x`` is not positive definite.
  """
  if symmetrize_input:
    x = symmetrize(x)
  return _tril(cholesky_p.bind(x))


def _H(x):
  """The conjugate transpose of the trailing two axes."""
  if dtypes.is_complex(_aval(x).dtype):
    return bits.conj(_T(x))
  return _T(x)


def symmetrize(x):
  """``(x + x^H) / 2``."""
  return ew.div(ew.add(x, _H(x)), _scalar(2, _aval(x).dtype))


def _cholesky_jvp(primals, tangents):
  (x,), (sigma_dot,) = primals, tangents
  L = _tril(cholesky_p.bind(x))
  # L_dot = L phi(L^{-1} sigma_dot L^{-H}), phi taking the lower triangle with a halved
  # diagonal (Murray 2016, as JAX).
  sigma_dot = symmetrize(sigma_dot)
  tmp = triangular_solve(L, sigma_dot, left_side=False, transpose_a=True, lower=True,
                         conjugate_a=dtypes.is_complex(_aval(x).dtype))
  inner = triangular_solve(L, tmp, left_side=True, transpose_a=False, lower=True)
  aval = _aval(x)
  half = ew.sub(_scalar(1, aval.dtype), ew.div(_eye(aval.dtype, aval.shape),
                                               _scalar(2, aval.dtype)))
  return L, _mm(L, ew.mul(_tril(inner), half))


ad.jvp_rules[cholesky_p] = _cholesky_jvp
_leading_batcher(cholesky_p)


# ----------------------------------------------------------------------------- triangular_solve
triangular_solve_p = Primitive("triangular_solve")


@triangular_solve_p.def_abstract_eval
def _triangular_solve_rule(a, b, *, left_side, lower, transpose_a, conjugate_a,
                           unit_diagonal):
  _check_matrix("triangular_solve", a)
  if b.ndim != a.ndim or b.shape[:-2] != a.shape[:-2]:
    raise TypeError(f"triangular_solve requires a and b to have equal batch dimensions, "
                    f"got a {a.shape} and b {b.shape}.")
  if a.dtype != b.dtype:
    raise TypeError(f"triangular_solve requires a and b of one dtype, got {a.dtype.name} "
                    f"and {b.dtype.name}.")
  common = b.shape[-2] if left_side else b.shape[-1]
  if common != a.shape[-1]:
    side = "left" if left_side else "right"
    raise TypeError(f"triangular_solve with left_side={left_side} requires b's "
                    f"{'second-to-last' if left_side else 'last'} axis to match a: got a "
                    f"{a.shape} and b {b.shape} ({side} side).")
  return b.strip_weak_type()


core.param_order[triangular_solve_p] = ("conjugate_a", "left_side", "lower", "transpose_a",
                                        "unit_diagonal")


def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False):
  """Solve ``op(a) x = b`` (``left_side``) or ``x op(a) = b`` for triangular ``a``.

  ``op(a)`` is ``a``, its transpose (``transpose_a``) and/or its conjugate
  (``conjugate_a``); only the ``lower`` (or upper) triangle of ``a`` is read, and its
  diagonal is taken to be ones if ``unit_diagonal``. ``b`` may also be a (batch of)
  vector(s), with one dimension fewer than ``a``; the result then has ``b``'s shape.
  """
  if conjugate_a and not dtypes.is_complex(_aval(a).dtype):
    conjugate_a = False
  # a vector b (one dimension fewer than a) is solved as a one-column or one-row matrix
  ndim = np.ndim(a)
  singleton = np.ndim(b) == ndim - 1
  if singleton:
    b = sh.expand_dims(b, (ndim - 1 if left_side else ndim - 2,))
  out = triangular_solve_p.bind(a, b, left_side=bool(left_side), lower=bool(lower),
                                transpose_a=bool(transpose_a),
                                conjugate_a=bool(conjugate_a),
                                unit_diagonal=bool(unit_diagonal))
  if singleton:
    out = sh.squeeze(out, (ndim - 1 if left_side else ndim - 2,))
  return out


def _triangular_solve_jvp(primals, tangents, **params):
  (a, b), (ta, tb) = primals, tangents
  ans = triangular_solve_p.bind(a, b, **params)
  out = ad.Zero(ad.tangent_aval(_aval(ans)))
  if type(tb) is not ad.Zero:
    out = ad.add_tangents(out, triangular_solve_p.bind(a, tb, **params))
  if type(ta) is not ad.Zero:
    out = ad.add_tangents(out, _triangular_solve_jvp_a(ta, ans, a, **params))
  return ans, out


def _triangular_solve_jvp_a(g_a, ans, a, *, left_side, lower, transpose_a, conjugate_a,
                            unit_diagonal):
  # d(op(a)^{-1} b) = -op(a)^{-1} op(da) x, with da restricted to the triangle read.
  k = 1 if unit_diagonal else 0
  g_a = _tril(g_a, -k) if lower else _triu(g_a, k)
  g_a = ew.neg(g_a)
  g_a = _T(g_a) if transpose_a else g_a
  if conjugate_a and dtypes.is_complex(_aval(g_a).dtype):
    g_a = bits.conj(g_a)
  params = dict(left_side=left_side, lower=lower, transpose_a=transpose_a,
                conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)
  solve = lambda rhs: triangular_solve_p.bind(a, rhs, **params)
  m, n = _aval(ans).shape[-2:]
  # a solve costs about a product: order the two to keep the intermediate small
  if left_side:
    return solve(_mm(g_a, ans)) if m > n else _mm(solve(g_a), ans)
  return solve(_mm(ans, g_a)) if m < n else _mm(ans, solve(g_a))


def _triangular_solve_transpose(ct, a, b, *, left_side, lower, transpose_a, conjugate_a,
                                unit_diagonal):
  # linear in b only: (op(a)^{-1})^T = (op(a)^T)^{-1}
  if ad.is_undefined(a):
    raise NotImplementedError("triangular_solve is not linear in a: it cannot be "
                              "transposed with respect to a.")
  if type(ct) is ad.Zero:
    return [None, ad.Zero(b.aval)]
  ct_b = triangular_solve_p.bind(a, ct, left_side=left_side, lower=lower,
                                 transpose_a=not transpose_a, conjugate_a=conjugate_a,
                                 unit_diagonal=unit_diagonal)
  return [None, ct_b]


ad.jvp_rules[triangular_solve_p] = _triangular_solve_jvp
ad.transpose_rules[triangular_solve_p] = _triangular_solve_transpose
_leading_batcher(triangular_solve_p)


# ----------------------------------------------------------------------------- lu
lu_p = Primitive("lu")
lu_p.multiple_results = True


@lu_p.def_abstract_eval
def _lu_rule(operand):
  _check_matrix("lu", operand, square=False)
  *batch, m, n = operand.shape
  return [operand.strip_weak_type(), ShapedArray((*batch, min(m, n)), np.int32),
          ShapedArray((*batch, m), np.int32)]


def lu(x):
  """LU decomposition with partial pivoting: ``x[..., perm, :] = L @ U``.

  Returns
  -------
  lu : array (..., m, n)
    ``L`` (unit diagonal, strictly below the diagonal) and ``U`` packed together.
  pivots : int32 array (..., min(m, n))
    Row ``i`` was swapped with row ``pivots[i]`` (LAPACK's convention, 0-based).
  permutation : int32 array (..., m)
    The permutation those swaps compose to.
  """
  return tuple(lu_p.bind(x))


def _lu_jvp(primals, tangents):
  (a,), (a_dot,) = primals, tangents
  lu_, pivots, perm = lu_p.bind(a)   # the rule has no transposes: complex works as is
  aval = _aval(a)
  *batch, m, n = aval.shape
  k = min(m, n)
  nd = aval.ndim
  dtype = aval.dtype
  zero = _scalar(0, dtype)
  # rows of a_dot permuted as the factorisation did: a one-hot matrix product (linear)
  rows = sh.broadcasted_iota(np.int32, (*batch, m, m), nd - 1)
  onehot = ew.convert_element_type(
      ew.eq(sh.broadcast_in_dim(perm, (*batch, m, m), tuple(range(nd - 1))), rows), dtype)
  x = _mm(onehot, a_dot)
  l_cfg = [(0, 0, 0)] * nd
  l_cfg[-1] = (0, m - k, 0)
  l = sh.pad(_tril(sh.slice(lu_, (0,) * nd, (*batch, m, k)), -1), zero, l_cfg)
  l = ew.add(l, _eye(dtype, (*batch, m, m)))
  u_cfg = [(0, 0, 0)] * nd
  u_cfg[-2] = (0, n - k, 0)
  u = sh.pad(_triu(sh.slice(lu_, (0,) * nd, (*batch, k, n))), zero, u_cfg)
  if n > k:
    u_eye = sh.pad(_eye(dtype, (n - k, n - k)), zero, ((k, 0, 0), (k, 0, 0)))
    u = ew.add(u, sh.broadcast_in_dim(u_eye, (*batch, n, n), (nd - 2, nd - 1)))
  la = triangular_solve(l, x, left_side=True, lower=True, unit_diagonal=True)
  lau = triangular_solve(u, la, left_side=False, lower=False)
  lu_dot = ew.add(_mm(l, _tril(lau, -1)), _mm(_triu(lau), u))
  int_zero = lambda v: ad.Zero(ad.tangent_aval(_aval(v)))
  return [lu_, pivots, perm], [lu_dot, int_zero(pivots), int_zero(perm)]


ad.jvp_rules[lu_p] = _lu_jvp
_leading_batcher(lu_p)


# ----------------------------------------------------------------------------- qr
qr_p = Primitive("qr")
qr_p.multiple_results = True


@qr_p.def_abstract_eval
def _qr_rule(operand, *, pivoting, full_matrices, use_magma):
  _check_matrix("qr", operand, square=False)
  if pivoting:
    raise NotImplementedError("qr with pivoting=True is not supported by jaxlite.")
  *batch, m, n = operand.shape
  k = m if full_matrices else min(m, n)
  dtype = operand.dtype
  return [ShapedArray((*batch, m, k), dtype), ShapedArray((*batch, k, n), dtype)]


core.param_order[qr_p] = ("full_matrices", "pivoting", "use_magma")


def qr(x, *, pivoting: bool = False, full_matrices: bool = True, use_magma=None):
  """QR decomposition ``x = q @ r`` with orthonormal ``q`` and upper-triangular ``r``.

  With ``full_matrices`` (the default), ``q`` is (..., m, m) and ``r`` (..., m, n);
  otherwise they are (..., m, k) and (..., k, n) with ``k = min(m, n)``.
  """
  q, r = qr_p.bind(x, pivoting=bool(pivoting), full_matrices=bool(full_matrices),
                   use_magma=use_magma)
  return q, r


def _thin_qr_jvp(q, r, dx):
  """The QR JVP for m >= n (j-towns.github.io/papers/qr-derivative.pdf)."""
  dtype = _aval(dx).dtype
  dx_rinv = triangular_solve(r, dx)  # dx r^{-1}
  qt_dx_rinv = _mm(_H(q), dx_rinv)
  lower = _tril(qt_dx_rinv, -1)
  do = ew.sub(lower, _H(lower))  # skew-Hermitian
  if dtypes.is_complex(dtype):
    # R's diagonal stays real, so the imaginary part of the diagonal rotates into Q.
    imag_part = ew.sub(qt_dx_rinv, ew.convert_element_type(bits.real(qt_dx_rinv), dtype))
    do = ew.add(do, ew.mul(_eye(dtype, _aval(qt_dx_rinv).shape), imag_part))
  dq = ew.add(_mm(q, ew.sub(do, qt_dx_rinv)), dx_rinv)
  dr = _mm(ew.sub(qt_dx_rinv, do), r)
  return dq, dr


def _qr_jvp(primals, tangents, *, pivoting, full_matrices, use_magma):
  (x,), (dx,) = primals, tangents
  q, r = qr_p.bind(x, pivoting=pivoting, full_matrices=full_matrices, use_magma=use_magma)
  *_, m, n = _aval(x).shape
  if m < n:
    # X = [X1 X2] with X1 square: X1 = Q R1 is a square QR, and R2 = Q^H X2, so
    # dR2 = dQ^H X2 + Q^H dX2 (as JAX)
    cols = lambda a, lo, hi: sh.slice_in_dim(a, lo, hi, axis=_aval(a).ndim - 1)
    dq, dr1 = _thin_qr_jvp(q, cols(r, 0, m), cols(dx, 0, m))
    dr2 = ew.add(_mm(_H(dq), cols(x, m, n)), _mm(_H(q), cols(dx, m, n)))
    return [q, r], [dq, sh.concatenate([dr1, dr2], _aval(dr1).ndim - 1)]
  if full_matrices and m != n:
    raise NotImplementedError("Unimplemented case of QR decomposition derivative: "
                              "full_matrices=True (mode='complete') for a tall matrix")
  dq, dr = _thin_qr_jvp(q, r, dx)
  return [q, r], [dq, dr]


ad.jvp_rules[qr_p] = _qr_jvp
_leading_batcher(qr_p)


# ----------------------------------------------------------------------------- geqrf
# LAPACK's packed Householder QR, as JAX's internal ``geqrf`` (``jnp.linalg.qr``'s
# mode='raw'): ``householder_product`` and ``ormqr`` read its packed form.
geqrf_p = Primitive("geqrf")
geqrf_p.multiple_results = True


@geqrf_p.def_abstract_eval
def _geqrf_rule(operand):
  _check_matrix("geqrf", operand, square=False)
  *batch, m, n = operand.shape
  return [ShapedArray(operand.shape, operand.dtype),
          ShapedArray((*batch, min(m, n)), operand.dtype)]


def geqrf(a):
  """LAPACK's Householder QR of ``a`` (..., m, n): ``(a_out, taus)`` with ``r`` in the
  upper triangle of ``a_out`` and the reflectors ``v_i`` (their unit first entry left
  out) below its diagonal, ``q = H_0 ... H_{k-1}`` with ``H_i = I - taus[i] v_i v_i^H``.
  """
  a_out, taus = geqrf_p.bind(a)
  return a_out, taus


ad.defunsupported(geqrf_p, "")
_leading_batcher(geqrf_p)


# ----------------------------------------------------------------------------- svd
svd_p = Primitive("svd")
svd_p.multiple_results = True


@svd_p.def_abstract_eval
def _svd_rule(operand, *, full_matrices, compute_uv, subset_by_index, algorithm):
  _check_matrix("svd", operand, square=False)
  if subset_by_index is not None:
    raise NotImplementedError("svd with subset_by_index is not supported by jaxlite.")
  *batch, m, n = operand.shape
  k = min(m, n)
  s = ShapedArray((*batch, k), _real_dtype(operand.dtype))
  if not compute_uv:
    return [s]
  ku, kv = (m, n) if full_matrices else (k, k)
  return [s, ShapedArray((*batch, m, ku), operand.dtype),
          ShapedArray((*batch, kv, n), operand.dtype)]


core.param_order[svd_p] = ("algorithm", "compute_uv", "full_matrices", "subset_by_index")


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True, subset_by_index=None,
        algorithm=None):
  """Singular value decomposition ``x = u @ diag(s) @ vh``.

  Returns ``(u, s, vh)`` if ``compute_uv`` else ``s``; singular values descend.
  """
  outs = svd_p.bind(x, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv),
                    subset_by_index=subset_by_index, algorithm=algorithm)
  if compute_uv:
    s, u, vh = outs
    return u, s, vh
  return outs[0]


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv, subset_by_index, algorithm):
  (A,), (dA,) = primals, tangents
  if compute_uv and full_matrices:
    raise NotImplementedError(
        "Singular value decomposition JVP not implemented for full matrices")
  s, U, Vt = svd_p.bind(A, full_matrices=False, compute_uv=True,
                        subset_by_index=subset_by_index, algorithm=algorithm)
  aval = _aval(A)
  dtype, real = aval.dtype, _real_dtype(aval.dtype)
  *batch, m, n = aval.shape
  k = _aval(s).shape[-1]
  nd = aval.ndim
  as_a = lambda x: ew.convert_element_type(x, dtype) if dtype != real else x
  Ut, V = _H(U), _H(Vt)
  dS = _mm(_mm(Ut, dA), V)
  ds = _diagonal(bits.real(dS) if dtype != real else dS)
  if not compute_uv:
    return [s], [ds]
  kk = (*batch, k, k)
  s_row = sh.broadcast_in_dim(s, kk, tuple(range(nd - 2)) + (nd - 1,))  # s[..., None, :]
  s_col = sh.broadcast_in_dim(s, kk, tuple(range(nd - 1)))              # s[..., :, None]
  eye = _eye(real, kk)
  one = _scalar(1, real)
  s_diffs = ew.mul(ew.add(s_row, s_col), ew.sub(s_row, s_col))
  F = as_a(ew.sub(ew.div(one, ew.add(s_diffs, eye)), eye))
  dSS = ew.mul(as_a(s_row), dS)
  SdS = ew.mul(as_a(s_col), dS)
  s_zero = ew.convert_element_type(ew.eq(s, _scalar(0, real)), real)
  s_inv = ew.sub(ew.div(one, ew.add(s, s_zero)), s_zero)
  s_inv_mat = ew.mul(sh.broadcast_in_dim(s_inv, kk, tuple(range(nd - 2)) + (nd - 1,)), eye)
  # For complex inputs the imaginary diagonal of U^H dU is a free phase; it goes into dU.
  dUdV_diag = ew.mul(ew.mul(_scalar(0.5, dtype), ew.sub(dS, _H(dS))), as_a(s_inv_mat))
  dU = _mm(U, ew.add(ew.mul(F, ew.add(dSS, _H(dSS))), dUdV_diag))
  dV = _mm(V, ew.mul(F, ew.add(SdS, _H(SdS))))
  if m > n:
    dAV = _mm(dA, V)
    s_u = as_a(sh.broadcast_in_dim(s, (*batch, m, k), tuple(range(nd - 2)) + (nd - 1,)))
    dU = ew.add(dU, ew.div(ew.sub(dAV, _mm(U, _mm(Ut, dAV))), s_u))
  if n > m:
    dAHU = _mm(_H(dA), U)
    s_v = as_a(sh.broadcast_in_dim(s, (*batch, n, k), tuple(range(nd - 2)) + (nd - 1,)))
    dV = ew.add(dV, ew.div(ew.sub(dAHU, _mm(V, _mm(Vt, dAHU))), s_v))
  return [s, U, Vt], [ds, dU, _H(dV)]


ad.jvp_rules[svd_p] = _svd_jvp
_leading_batcher(svd_p)


# ----------------------------------------------------------------------------- eigh
eigh_p = Primitive("eigh")
eigh_p.multiple_results = True


@eigh_p.def_abstract_eval
def _eigh_rule(operand, *, lower, sort_eigenvalues, subset_by_index, algorithm):
  _check_matrix("eigh", operand)
  if subset_by_index is not None:
    raise NotImplementedError("eigh with subset_by_index is not supported by jaxlite.")
  return [operand.strip_weak_type(),
          ShapedArray(operand.shape[:-1], _real_dtype(operand.dtype))]


core.param_order[eigh_p] = ("algorithm", "lower", "sort_eigenvalues", "subset_by_index")


def eigh(x, *, lower: bool = True, symmetrize_input: bool = True,
         sort_eigenvalues: bool = True, subset_by_index=None):
  """Eigendecomposition of a Hermitian matrix: ``x @ v = v * w``.

  Returns ``(v, w)``: eigenvectors as columns of ``v`` and real eigenvalues ``w``
  (ascending if ``sort_eigenvalues``). Only the ``lower`` (or upper) triangle is read,
  unless ``symmetrize_input`` first replaces ``x`` by ``(x + x^H) / 2``.
  """
  if symmetrize_input:
    x = symmetrize(x)
  v, w = eigh_p.bind(x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues),
                     subset_by_index=subset_by_index, algorithm=None)
  return v, w


def _eigh_jvp(primals, tangents, **params):
  (a,), (a_dot,) = primals, tangents
  v, w = eigh_p.bind(a, **params)
  aval = _aval(a)
  is_complex = dtypes.is_complex(aval.dtype)
  nd, n = aval.ndim, aval.shape[-1]
  eye = _eye(_real_dtype(aval.dtype), aval.shape)
  w_row = sh.broadcast_in_dim(w, aval.shape, tuple(range(nd - 2)) + (nd - 1,))
  w_col = sh.broadcast_in_dim(w, aval.shape, tuple(range(nd - 1)))
  # 1 / (w_j - w_i) off the diagonal, 0 on it, without dividing by zero
  Fmat = ew.sub(ew.integer_pow(ew.add(eye, ew.sub(w_row, w_col)), -1), eye)
  if is_complex:
    Fmat = ew.convert_element_type(Fmat, aval.dtype)
  vh_adot_v = _mm(_mm(_H(v), a_dot), v)
  dv = _mm(v, ew.mul(Fmat, vh_adot_v))
  dw = _diagonal(vh_adot_v)
  if is_complex:   # eigenvalues of a Hermitian matrix are real
    dw = bits.real(dw)
  return [v, w], [dv, dw]


ad.jvp_rules[eigh_p] = _eigh_jvp
_leading_batcher(eigh_p)


# ----------------------------------------------------------------------------- eig
eig_p = Primitive("eig")
eig_p.multiple_results = True


@eig_p.def_abstract_eval
def _eig_rule(operand, *, compute_left_eigenvectors, compute_right_eigenvectors,
              use_magma):
  _check_matrix("eig", operand)
  dtype = np.dtype(np.complex128 if _real_dtype(operand.dtype) == np.float64
                   else np.complex64)
  w = ShapedArray(operand.shape[:-1], dtype)
  vs = [ShapedArray(operand.shape, dtype)] * (int(compute_left_eigenvectors)
                                               + int(compute_right_eigenvectors))
  return [w] + vs


def eig(x, *, compute_left_eigenvectors: bool = True, compute_right_eigenvectors: bool = True,
        use_magma=None):
  """Eigendecomposition of a general square matrix (complex results; no derivative).

  Returns ``w``, then the left eigenvectors if requested, then the right ones.
  """
  return eig_p.bind(x, compute_left_eigenvectors=bool(compute_left_eigenvectors),
                    compute_right_eigenvectors=bool(compute_right_eigenvectors),
                    use_magma=use_magma)


def _eig_jvp(primals, tangents, **params):
  raise NotImplementedError("Differentiation of eig (non-symmetric eigendecomposition) is "
                            "not supported by jaxlite; for symmetric matrices use eigh.")


ad.jvp_rules[eig_p] = _eig_jvp
_leading_batcher(eig_p)


# ----------------------------------------------------------------------------- schur
schur_p = Primitive("schur")
schur_p.multiple_results = True


@schur_p.def_abstract_eval
def _schur_rule(operand, *, compute_schur_vectors, sort_eig_vals, select_callable):
  if operand.ndim < 2 or operand.shape[-1] != operand.shape[-2]:
    raise ValueError(f"The input to schur must be a square matrix. Got shape "
                     f"{operand.shape[-2:]}.")
  if not dtypes.is_inexact(operand.dtype):
    raise TypeError(f"schur does not accept dtype {operand.dtype.name} at position 0. "
                    "Accepted dtypes at position 0 are subtypes of floating, "
                    "complexfloating.")
  if sort_eig_vals:
    raise NotImplementedError("The sort feature of LAPACK's gees routine is not "
                              "implemented.")
  out = ShapedArray(operand.shape, operand.dtype)
  return [out, out] if compute_schur_vectors else [out]


core.param_order[schur_p] = ("compute_schur_vectors", "select_callable", "sort_eig_vals")


def schur(x, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable=None):
  """Schur decomposition ``x = q u q^H`` of square matrices (trailing two axes).

  ``u`` is upper triangular for complex ``x`` and quasi-upper-triangular (2x2 diagonal
  blocks for complex conjugate eigenvalue pairs, in LAPACK's standard form) for real
  ``x``. Returns ``[u, q]``, or ``[u]`` without ``compute_schur_vectors``.
  ``sort_eig_vals`` is refused and ``select_callable`` unused, as in JAX.
  """
  return schur_p.bind(_operand(x), compute_schur_vectors=bool(compute_schur_vectors),
                      sort_eig_vals=bool(sort_eig_vals), select_callable=select_callable)


def _schur_jvp(primals, tangents, **params):
  raise NotImplementedError("Differentiation rule for 'schur' not implemented")


ad.jvp_rules[schur_p] = _schur_jvp
_leading_batcher(schur_p)


# ----------------------------------------------------------------------------- hessenberg
hessenberg_p = Primitive("hessenberg")
hessenberg_p.multiple_results = True


@hessenberg_p.def_abstract_eval
def _hessenberg_rule(operand):
  if operand.ndim < 2 or operand.shape[-1] != operand.shape[-2]:
    raise ValueError("Argument to Hessenberg reduction must have shape [..., n, n], got "
                     f"shape {operand.shape}")
  if not dtypes.is_inexact(operand.dtype):
    raise TypeError(f"hessenberg does not accept dtype {operand.dtype.name} at position 0. "
                    "Accepted dtypes at position 0 are subtypes of floating, "
                    "complexfloating.")
  n = operand.shape[-1]
  return [ShapedArray(operand.shape, operand.dtype),
          ShapedArray(operand.shape[:-2] + (max(n - 1, 0),), operand.dtype)]


def _hessenberg_jvp(primals, tangents):
  raise NotImplementedError("Differentiation rule for 'hessenberg' not implemented")


ad.jvp_rules[hessenberg_p] = _hessenberg_jvp
_leading_batcher(hessenberg_p)


# ----------------------------------------------------------------------------- composed
# The rest of jax.lax.linalg, composed from the primitives above and other lax ops:
# Householder reductions to Hessenberg and tridiagonal form with LAPACK's packed outputs,
# Householder products and ormqr, rank-one Cholesky updates, pivot conversion, a polar
# decomposition under qdwh's name, and tridiagonal solves. The Householder loops run in
# Python over the (static) columns, so they suit small matrices; they take one matrix
# (vmap them for batches).
class EigImplementation(enum.Enum):
  """Backend choice for ``eig`` (accepted for compatibility; jaxlite has one)."""
  CUSOLVER = "cusolver"
  MAGMA = "magma"
  LAPACK = "lapack"


class EighImplementation(enum.Enum):
  """Algorithm choice for ``eigh`` (accepted for compatibility; jaxlite has one)."""
  QR = "qr"
  JACOBI = "jacobi"
  QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
  """Algorithm choice for ``svd`` (accepted for compatibility; jaxlite has one)."""
  DEFAULT = "default"
  QR = "QR"
  JACOBI = "Jacobi"
  POLAR = "polar"
  DIVIDE_AND_CONQUER = "divide_and_conquer"


def _array(x):
  """``x`` as an operand, lists and tuples read as NumPy reads them (as ``jnp.asarray``)."""
  return _operand(np.asarray(x) if isinstance(x, (list, tuple)) else x)


def _promoted(*xs):
  """The operands in their common dtype: LAPACK's routines take one type."""
  xs = [_array(x) for x in xs]
  dtype = dtypes.result_type(*[_aval(x).dtype for x in xs])
  return [ew.convert_element_type(x, dtype) for x in xs]


def _conj(x):
  return bits.conj(x) if dtypes.is_complex(_aval(x).dtype) else x


def _real(x):
  return bits.real(x) if dtypes.is_complex(_aval(x).dtype) else x


def _matmul(x, y):
  """``x @ y`` for the vectors and matrices multiplied below (batch axes, if any, alike in
  both or in ``y`` alone), laid out as ``jnp.matmul`` lays out its one ``dot_general``."""
  xa, ya = _aval(x), _aval(y)
  shared = xa.shape[:-2] if xa.shape[:-2] == ya.shape[:-2] else ()
  batch = tuple(range(len(shared)))
  contract = ((xa.ndim - 1,), (ya.ndim - 2 if ya.ndim > 1 else 0,))
  out = red.dot_general(x, y, (contract, (batch, batch)), preferred_element_type=xa.dtype)
  y_batch = len(ya.shape[:-2]) - len(shared)
  if xa.ndim == 2 and y_batch:   # x's rows came first: put them after y's batch axes
    return sh.transpose(out, tuple(range(1, y_batch + 1)) + (0, y_batch + 1))
  return out


def _outer(x, y):
  """``x[:, None] * y[None, :]`` for vectors."""
  n, m = _aval(x).shape[0], _aval(y).shape[0]
  return ew.mul(sh.reshape(x, (n, 1)), sh.broadcast_in_dim(y, (1, m), (1,)))


def _diagonal_entries(x, below=0):
  """The entries ``x[i + below, i]`` of a square matrix: every ``(n + 1)``-th entry of its
  rows laid end to end, from entry ``below * n``. Exact reads, where ``_diagonal``'s
  masked sum would turn -0.0 into 0.0."""
  n = _aval(x).shape[0]
  return sh.slice(sh.reshape(x, (n * n,)), (below * n,), (n * n,), (n + 1,))


def _matrix(name, a):
  a = _array(a)
  shape = _aval(a).shape
  if len(shape) != 2 or shape[0] != shape[1]:
    raise ValueError(f"{name} takes one square matrix (vmap it for batches), got shape "
                     f"{shape}")
  if dtypes.is_inexact(_aval(a).dtype):
    return a
  return ew.convert_element_type(a, dtypes.result_type(a, 1.0))


def _householder(x):
  """LAPACK's dlarfg on ``x = [alpha, rest]``: ``(beta, tau, v)`` with
  ``(I - tau [1; v][1; v]^H) x = [beta, 0...]``."""
  dtype, n = _aval(x).dtype, _aval(x).shape[0]
  alpha = sh.squeeze(sh.slice(x, (0,), (1,)), (0,))
  rest = sh.slice(x, (1,), (n,))
  xnorm = ew.sqrt(red.reduce_sum(ew.integer_pow(ew.abs(rest), 2), (0,)))
  norm = ew.sqrt(ew.add(ew.integer_pow(ew.abs(alpha), 2), ew.integer_pow(xnorm, 2)))
  real = _aval(norm).dtype
  # beta = -sign(re alpha) * norm
  sign = ew.select(ew.ge(_real(alpha), ew._const(norm, 0)), _scalar(1, real),
                   _scalar(-1, real))
  beta = ew.mul(ew.neg(sign), norm)
  # nothing to zero and nothing to make real (a complex alpha still gets a reflector)
  trivial = ew.eq(xnorm, ew._const(xnorm, 0))
  if dtypes.is_complex(dtype):
    trivial = ew.bitwise_and(trivial, ew.eq(bits.imag(alpha), ew._const(xnorm, 0)))
  # beta is real: complex x takes it (and its stand-in 1) as complex numbers
  safe_beta = ew.convert_element_type(ew.select(trivial, _scalar(1, real), beta), dtype)
  beta = ew.convert_element_type(beta, dtype)
  tau = ew.select(trivial, _scalar(0, dtype), ew.div(ew.sub(beta, alpha), safe_beta))
  scale = ew.select(trivial, _scalar(1, dtype), ew.sub(alpha, beta))
  quotient = ew.div(rest, scale)
  v = ew.select(trivial, sh._fill(quotient, 0), quotient)
  return ew.select(trivial, alpha, beta), tau, v


def _reduce(a):
  """Householder similarity transforms, column by column, that zero ``a`` below its first
  subdiagonal: the reduced matrix holding each reflector's vector below that subdiagonal,
  and the reflectors' ``tau``s."""
  n, dtype = _aval(a).shape[0], _aval(a).dtype
  taus = []
  # n - 1 reflectors, as LAPACK's: the last one (of length 1) only makes a complex
  # subdiagonal entry real, and is the identity (tau = 0) for real matrices
  for k in range(n - 1):
    beta, tau, v = _householder(sh.squeeze(sh.slice(a, (k + 1, k), (n, k + 1)), (1,)))
    u = sh.concatenate([sh.full((1,), 1, dtype), v], 0)
    # H = I - tau u u^H (H^H x = [beta, 0...], as LAPACK's larfg): H^H from the left to
    # rows k+1: and H from the right to columns k+1: (a similarity transform). The left
    # product skips columns :k, which are zero there in the reduced matrix and hold the
    # earlier reflectors' vectors.
    block = sh.slice(a, (k + 1, k), (n, n))
    block = ew.sub(block, ew.mul(_conj(tau), _outer(u, _matmul(_conj(u), block))))
    a = indexing.dynamic_update_slice(a, block, (k + 1, k))
    cols = sh.slice(a, (0, k + 1), (n, n))
    cols = ew.sub(cols, ew.mul(tau, _outer(_matmul(cols, u), _conj(u))))
    a = indexing.dynamic_update_slice(a, cols, (0, k + 1))
    a = indexing.dynamic_update_slice(a, sh.reshape(beta, (1, 1)), (k + 1, k))
    if k < n - 2:
      a = indexing.dynamic_update_slice(a, sh.reshape(v, (n - k - 2, 1)), (k + 2, k))
    taus.append(tau)
  return a, sh.stack(taus) if taus else sh.full((0,), 0, dtype)


def hessenberg(a):
  """Reduce square matrices (the trailing two axes) to upper Hessenberg form by
  Householder similarity transforms: ``[a, taus]`` packed as LAPACK's ``gehrd`` (the
  reflectors' vectors below the first subdiagonal, ``taus`` of shape ``(..., n - 1)``).
  """
  return hessenberg_p.bind(_array(a))


def reduce_to_hessenberg(a):
  """``hessenberg`` of one matrix, in lax operations (how XLA computes hessenberg_p)."""
  return _reduce(a)


def tridiagonal(a, *, lower=True):
  """Reduce a Hermitian matrix to real symmetric tridiagonal form: ``(arr, d, e,
  taus)`` packed as LAPACK's ``sytrd`` with ``uplo='L'`` (only ``lower=True``)."""
  if not lower:
    raise NotImplementedError("tridiagonal: only lower=True is implemented")
  a = _matrix("tridiagonal", a)
  reduced, taus = _reduce(a)
  n = _aval(a).shape[0]
  d = _real(_diagonal_entries(reduced))
  e = _real(_diagonal_entries(reduced, 1))
  arr = ew.add(_triu(a, 1), _tril(reduced))
  return arr, d, e, sh.slice(taus, (0,), (max(n - 1, 0),))


def householder_product(a, taus):
  """The first ``n`` columns of ``H_0 H_1 ... H_{k-1}``, ``H_i = I - taus[i] v_i
  v_i^H``, with ``v_i`` stored below the diagonal of column ``i`` of ``a`` (``m x n``),
  as LAPACK's ``orgqr``."""
  a, taus = _promoted(a, taus)
  (m, n), dtype = _aval(a).shape[-2:], _aval(a).dtype
  q = _eye(dtype, (m, n))
  for i in range(_aval(taus).shape[-1] - 1, -1, -1):
    below = sh.squeeze(sh.slice(a, (i + 1, i), (m, i + 1)), (1,))
    v = sh.concatenate([sh.full((i,), 0, dtype), sh.full((1,), 1, dtype), below], 0)
    tau = indexing.index_in_dim(taus, i, keepdims=False)
    q = ew.sub(q, ew.mul(tau, _outer(v, _matmul(_conj(v), q))))
  return q


def ormqr(a, taus, c, *, left=True, transpose=False):
  """Multiply ``c`` by the ``Q`` of a packed QR factorization (``a``, ``taus``):
  ``Q c``, ``Q^H c``, ``c Q`` or ``c Q^H``."""
  a, taus, c = _promoted(a, taus, c)
  (m, n), dtype = _aval(a).shape[-2:], _aval(a).dtype
  if _aval(taus).shape[-1] > m:
    raise ValueError(f"ormqr: {_aval(taus).shape[-1]} taus for a matrix of {m} rows")
  zero = _scalar(0, dtype)
  full = sh.slice(sh.pad(a, zero, ((0, 0, 0), (0, max(m - n, 0), 0))), (0, 0), (m, m))
  taus = sh.pad(taus, zero, ((0, m - _aval(taus).shape[-1], 0),))
  q = householder_product(full, taus)
  q = _H(q) if transpose else q
  return _matmul(q, c) if left else _matmul(c, q)


def lu_pivots_to_permutation(pivots, permutation_size):
  """The permutation that LAPACK-style row-swap ``pivots`` (row ``i`` swapped with
  ``pivots[i]`` in turn) apply to ``range(permutation_size)``."""
  pivots = _array(pivots)
  shape, dtype = _aval(pivots).shape, _aval(pivots).dtype
  axis, out_shape = len(shape) - 1, shape[:-1] + (permutation_size,)
  positions = sh.broadcasted_iota(dtype, out_shape, axis)
  if not shape[-1]:
    return positions

  def swap(i, perm):
    # entries i and j = pivots[..., i] of each row trade places (a negative j counts
    # from the end, as an index does)
    j = indexing.dynamic_slice_in_dim(pivots, i, 1, axis)
    j = indexing.normalize_start(j, permutation_size)
    i = sh.broadcast_in_dim(ew.convert_element_type(i, dtype), shape[:-1] + (1,), ())
    at_i, at_j = (sh.broadcast_to_shape(p, out_shape) for p in (i, j))
    p_i, p_j = (sh.broadcast_to_shape(sorting.take_along_axis(perm, p, axis), out_shape)
                for p in (i, j))
    return ew.select(ew.eq(positions, at_i), p_j,
                     ew.select(ew.eq(positions, at_j), p_i, perm))
  return control_flow.fori_loop(0, shape[-1], swap, positions)


def cholesky_update(r_matrix, w_vector):
  """The upper Cholesky factor of ``R^H R + w w^H`` given the upper factor ``R``
  (recomputed with a fresh Cholesky decomposition)."""
  r, w = _promoted(r_matrix, w_vector)
  a = ew.add(_matmul(_H(r), r), _outer(w, _conj(w)))
  return _H(cholesky(a))


def symmetric_product(a_matrix, c_matrix, *, alpha=1.0, beta=0.0,
                      symmetrize_output=False):
  """``alpha * a @ a^T + beta * c`` (symmetrized exactly when ``symmetrize_output``)."""
  a, c = _promoted(a_matrix, c_matrix)
  # Python scalars promote as in jnp: integer matrices give a weakly typed float
  dtype, weak = dtypes.result_type(a, alpha, beta, return_weak_type_flag=True)
  a, c, alpha, beta = (ew.convert_element_type(_operand(v), dtype)
                       for v in (a, c, alpha, beta))
  out = ew.add(ew.mul(alpha, _matmul(a, _T(a))), ew.mul(beta, c))
  if symmetrize_output:
    out = ew.div(ew.add(out, _T(out)), ew._const(out, 2))
  return ew._convert_element_type(out, dtype, weak_type=weak)


def tridiagonal_solve(dl, d, du, b, *, perturb_singular=False):
  """Solve ``T x = b`` for the tridiagonal ``T`` with sub-, main and super-diagonals
  ``dl``, ``d``, ``du`` (``dl[0]`` and ``du[-1]`` ignored), by the Thomas algorithm
  (no pivoting) as a scan down and back up the rows."""
  dl, d, du, b = _promoted(dl, d, du, b)
  shape, dtype = _aval(d).shape, _aval(d).dtype
  m, last = shape[-1], len(shape) - 1
  if m:   # dl[..., 0] = du[..., m - 1] = 0
    dl = indexing.dynamic_update_slice_in_dim(
        dl, sh.full(_aval(dl).shape[:-1] + (1,), 0, dtype), 0, _aval(dl).ndim - 1)
    du = indexing.dynamic_update_slice_in_dim(
        du, sh.full(_aval(du).shape[:-1] + (1,), 0, dtype), m - 1, _aval(du).ndim - 1)
  rows = lambda v, axis: sh.transpose(v, (axis,) + tuple(
      k for k in range(_aval(v).ndim) if k != axis))
  column = lambda v: sh.expand_dims(v, (_aval(v).ndim,))

  def forward(carry, xs):
    cp, dp = carry
    a_i, b_i, c_i, d_i = xs
    denom = ew.sub(b_i, ew.mul(a_i, cp))
    if perturb_singular:
      denom = ew.select(ew.eq(denom, ew._const(denom, 0)),
                        sh._fill(denom, dtypes.finfo(dtype).eps), denom)
    cp = ew.div(c_i, denom)
    dp = ew.div(ew.sub(d_i, ew.mul(column(a_i), dp)), column(denom))
    return (cp, dp), (cp, dp)

  b_shape = _aval(b).shape
  zero_c = sh.full(shape[:-1], 0, dtype)
  zero_d = sh.full(b_shape[:-2] + b_shape[-1:], 0, dtype)
  _, (cps, dps) = control_flow.scan(
      forward, (zero_c, zero_d),
      (rows(dl, last), rows(d, last), rows(du, last), rows(b, len(b_shape) - 2)))

  def backward(x_next, xs):
    cp, dp = xs
    x = ew.sub(dp, ew.mul(column(cp), x_next))
    return x, x

  _, xs = control_flow.scan(backward, zero_d, (cps, dps), reverse=True)
  n = len(b_shape)
  return sh.transpose(xs, tuple(range(1, n - 1)) + (0, n - 1))


def qdwh(x, *, is_hermitian=False, max_iterations=None, eps=None, dynamic_shape=None):
  """Polar decomposition ``x = u h``: ``(u, h, num_iters, is_converged)``. Computed from
  the SVD here (so ``num_iters`` is 0 and ``is_converged`` True), not by QDWH
  iterations."""
  x = _array(x)
  dtype = _aval(x).dtype
  if not dtypes.is_inexact(dtype):
    x = ew.convert_element_type(x, dtypes.to_inexact_dtype(dtype))
  w, s, vh = svd(x, full_matrices=False)
  u = _matmul(w, vh)
  v = _H(vh)
  s = ew.convert_element_type(sh.expand_dims(s, (_aval(s).ndim - 1,)), _aval(vh).dtype)
  h = _matmul(ew.mul(v, s), vh)   # v s v^H
  return u, h, 0, True
