"""Lowerings for the decompositions, which XLA's CPU plugin must compute without LAPACK.

JAX's CPU backend calls LAPACK through custom calls that jaxlib registers; the PJRT
plugin alone has none of them. What the plugin's compiler does have are its own
expanders for two custom calls: ``Eigh`` (a Jacobi eigensolver) and ``Qr`` with
``ProductOfElementaryHouseholderReflectors`` (Householder QR). ``eigh`` and ``qr`` lower
to those. ``svd``, ``lu``, ``eig`` and ``schur`` are written with other primitives and
lowered as functions (JAX's ``mlir.lower_fun`` idea):

* SVD: the Hermitian matrix ``[[0, A], [A^H, 0]]`` has eigenpairs ``(+-s, [u; +-v]/sqrt2)``,
  so one eigendecomposition gives the singular values and the right singular vectors
  without squaring the condition number, as ``eig(A^H A)`` would. QR then orthonormalises
  those vectors, which also completes the basis when singular values are zero, and the
  left vectors come from a QR of ``A V``. A tall matrix is first reduced by a QR.
* LU: the unblocked partial-pivoting loop of LAPACK's ``getf2``, which tier 0 runs too.
* eig: what LAPACK's ``geev`` does, in complex arithmetic: Hessenberg reduction, implicit
  single-shift QR to the Schur form, back-substitution for the eigenvectors.
* schur: LAPACK's ``gees``: for complex input the same Schur form as eig; for real input
  Francis double-shift QR to the real (quasi-triangular) Schur form, its 2x2 blocks in
  LAPACK's standard form.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.libraries import random
from jaxlite._src.backends.xla import stablehlo as hlo
from jaxlite._src.lax import control_flow as cf
from jaxlite._src.lax import indexing as lax_indexing
from jaxlite._src.lax import linalg as la
from jaxlite._src.lax import special as lax_special
from jaxlite._src.libraries.numpy import namespace as jnp_namespace


def _jnp():
  return jnp_namespace


lowered_function = hlo.lowered_function


def _custom_call(b, target, args, outs, backend_config=""):
  attrs = f'api_version = 1 : i32, call_target_name = "{target}"'
  if backend_config:
    attrs = f'{attrs}, backend_config = "{backend_config}"'
  return b.op("stablehlo.custom_call", list(args), outs, attrs)


# ----------------------------------------------------------------------------- eigh and qr

def _iota(b, shape, dim):
  return b.op1("stablehlo.iota", [], shape, np.int32, f"iota_dimension = {dim} : i64")


# eigh_p's ``algorithm`` inside this lowering: emit the bare custom call
_XLA_JACOBI = "xla_jacobi"


def _eigh_rule(b, eqn, x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
  if algorithm != _XLA_JACOBI:
    return _eigh_lowered(b, eqn, x, lower=lower, sort_eigenvalues=sort_eigenvalues,
                         subset_by_index=subset_by_index, algorithm=algorithm)
  outs = [hlo._out(eqn, 0), hlo._out(eqn, 1)]
  # Sweeps stop once the off-diagonal mass falls below tol relative to the matrix's norm.
  tol = float(np.finfo(outs[1][1]).eps)
  return _custom_call(b, "Eigh", [x], outs, f"{int(lower)},1,100,{tol!r}")


def _refine_eigh(a, v):
  """One step of Ogita and Aishima's refinement of an approximate eigenbasis ``v`` of
  Hermitian ``a`` (SIAM J. Matrix Anal. Appl. 2018; quadratic convergence). Within a
  cluster of eigenvalues closer than the residual it only restores orthogonality."""
  jnp = _jnp()
  real = la._real_dtype(a.dtype)
  eye = jnp.eye(a.shape[-1], dtype=a.dtype)
  r = eye - la._mm(la._H(v), v)
  s = la._mm(la._mm(la._H(v), a), v)
  r_diag = jnp.real(jnp.diagonal(r, axis1=-2, axis2=-1))
  lam = jnp.real(jnp.diagonal(s, axis1=-2, axis2=-1)) / (1 - r_diag)
  gap = lam[..., None, :] - lam[..., :, None]            # lam_j - lam_i
  norm = lambda m: jnp.sqrt(jnp.sum(jnp.abs(m) ** 2, axis=(-2, -1)))[..., None, None]
  spread = 2 * (norm(s - lam[..., None, :] * eye) + norm(a) * norm(r))
  separated = (jnp.abs(gap) > spread) & (eye == 0)
  e = jnp.where(separated, (s + lam[..., None, :].astype(a.dtype) * r)
                / jnp.where(separated, gap, 1).astype(a.dtype), r / 2)
  return v + la._mm(v, e), lam.astype(real)


def _eigh(x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
  """XLA's Jacobi eigensolver, made accurate. Eigenvalues always ascend, as LAPACK's do on
  tier 0 (an unsorted result may come in any order)."""
  jnp = _jnp()
  real = la._real_dtype(x.dtype)
  if 0 in x.shape:
    return [jnp.zeros(x.shape, x.dtype), jnp.zeros(x.shape[:-1], real)]
  x = la._tril(x) if lower else la._triu(x)
  x = x + la._H(la._tril(x, -1) if lower else la._triu(x, 1))
  # The expander leaves off-diagonal entries below 1e-6 in absolute value unrotated, so the
  # matrix is scaled to a largest entry of 1e6 first: the threshold then sits far below
  # the rounding error, whatever the matrix's own scale.
  peak = jnp.max(jnp.abs(x), axis=(-2, -1), keepdims=True)
  scale = jnp.where((peak > 0) & jnp.isfinite(peak), 1e6 / jnp.where(peak > 0, peak, 1), 1)
  x = x * scale.astype(x.dtype)
  jacobi = lambda a: la.eigh_p.bind(a, lower=True, sort_eigenvalues=True,
                                    subset_by_index=None, algorithm=_XLA_JACOBI)
  v, w = jacobi(x)
  if real == np.float64:
    # The expander stops at about 1e-9 relative accuracy (its thresholds are fixed); two
    # refinement steps bring the eigenvectors to full double precision.
    for _ in range(2):
      v, w = _refine_eigh(x, v)
    # refinement can swap eigenvalues closer than rounding (zero singular values in svd)
    order = jnp.argsort(w, axis=-1)
    w = jnp.take_along_axis(w, order, -1)
    v = jnp.take_along_axis(v, jnp.broadcast_to(order[..., None, :], v.shape), -1)
  return [v, w / scale[..., 0]]


def _qr_rule(b, eqn, x, *, pivoting, full_matrices, use_magma):
  """Householder QR: ``Qr`` leaves R above the diagonal and the reflectors below it (as
  LAPACK's geqrf), ``ProductOfElementaryHouseholderReflectors`` builds Q from them."""
  (q_shape, dtype), (r_shape, _) = hlo._out(eqn, 0), hlo._out(eqn, 1)
  *batch, m, n = x.shape
  k, kq = min(m, n), q_shape[-1]
  nd = len(x.shape)
  eye = hlo.compare(b, _iota(b, q_shape, nd - 2), _iota(b, q_shape, nd - 1), "EQ")
  if k == 0:
    return [hlo.convert(b, eye, dtype), hlo.full(b, 0, r_shape, dtype)]
  packed, taus = _custom_call(b, "Qr", [x], [(x.shape, dtype), ((*batch, k), dtype)])
  r = hlo._slice(b, packed, (0,) * nd, r_shape, (1,) * nd)
  upper = hlo.compare(b, _iota(b, r_shape, nd - 2), _iota(b, r_shape, nd - 1), "LE")
  r = hlo.select(b, upper, r, hlo.full(b, 0, r_shape, dtype))
  # The reflectors fill Q's first k columns; Q has kq columns (m when full_matrices).
  reflectors = hlo._slice(b, packed, (0,) * nd, (*batch, m, min(n, kq)), (1,) * nd)
  if kq > n:
    reflectors = b.op1("stablehlo.pad", [reflectors, hlo.constant(b, 0, dtype)],
                       (*batch, m, kq), dtype,
                       f"edge_padding_high = {hlo._i64s([0] * (nd - 1) + [kq - n])}, "
                       f"edge_padding_low = {hlo._i64s([0] * nd)}, "
                       f"interior_padding = {hlo._i64s([0] * nd)}")
  q, = _custom_call(b, "ProductOfElementaryHouseholderReflectors", [reflectors, taus],
                    [(q_shape, dtype)])
  return [q, r]


def _geqrf_rule(b, eqn, x):
  """LAPACK's geqrf is what the ``Qr`` custom call computes."""
  (shape, dtype), (taus_shape, _) = hlo._out(eqn, 0), hlo._out(eqn, 1)
  if not taus_shape[-1]:
    return [x, hlo.full(b, 0, taus_shape, dtype)]
  return list(_custom_call(b, "Qr", [x], [(shape, dtype), (taus_shape, dtype)]))


# ----------------------------------------------------------------------------- svd and lu

def _phase(z):
  """``z / |z|``, 1 where ``z`` is 0: the unit that rotates ``z`` onto the positive reals."""
  jnp = _jnp()
  mag = jnp.abs(z)
  return jnp.where(mag == 0, jnp.ones_like(z), z / jnp.where(mag == 0, 1, mag).astype(z.dtype))


def _svd_square(a, compute_uv):
  """SVD of square ``a`` (..., n, n) from the eigenproblem of [[0, A], [A^H, 0]]."""
  jnp = _jnp()
  n = a.shape[-1]
  zeros = jnp.zeros(a.shape, a.dtype)
  jw = jnp.concatenate([jnp.concatenate([zeros, a], -1),
                        jnp.concatenate([la._H(a), zeros], -1)], -2)
  vecs, w = la.eigh(jw, symmetrize_input=False)
  # The n largest eigenvalues, descending, are the singular values; rounding can leave a
  # zero one slightly negative.
  s = jnp.maximum(jnp.flip(w[..., n:], -1), 0)
  if not compute_uv:
    return s, None, None
  v, _ = la.qr(jnp.flip(vecs[..., n:, n:], -1), full_matrices=False)
  u, r = la.qr(la._mm(a, v), full_matrices=False)
  u = u * _phase(jnp.diagonal(r, axis1=-2, axis2=-1))[..., None, :]
  return s, u, la._H(v)


def _svd(a, *, full_matrices, compute_uv, subset_by_index, algorithm):
  jnp = _jnp()
  *batch, m, n = a.shape
  if m < n:   # A^H = V S U^H
    outs = _svd(la._H(a), full_matrices=full_matrices, compute_uv=compute_uv,
                subset_by_index=None, algorithm=None)
    if not compute_uv:
      return outs
    s, u, vh = outs
    return [s, la._H(vh), la._H(u)]
  if n == 0:
    s = jnp.zeros((*batch, 0), la._real_dtype(a.dtype))
    ku = m if full_matrices else 0
    return [s] if not compute_uv else [s, jnp.broadcast_to(jnp.eye(m, ku, dtype=a.dtype),
                                                           (*batch, m, ku)),
                                       jnp.zeros((*batch, 0, 0), a.dtype)]
  if m > n:   # reduce a tall matrix to its square triangle first
    q, r = la.qr(a, full_matrices=full_matrices)
    s, ur, vh = _svd_square(r[..., :n, :], compute_uv)
    if not compute_uv:
      return [s]
    u = la._mm(q[..., :n], ur)
    if full_matrices:
      u = jnp.concatenate([u, q[..., n:]], -1)
    return [s, u, vh]
  s, u, vh = _svd_square(a, compute_uv)
  return [s] if not compute_uv else [s, u, vh]


def _lu(a):
  """Unblocked LU with partial pivoting (LAPACK's getf2): at step j, swap the row with the
  largest |a[i, j]| (i >= j) into row j, scale the column below the pivot by it (unless it
  is 0) and subtract the outer product from the trailing block."""
  jnp = _jnp()
  *batch, m, n = a.shape
  k = min(m, n)
  rows = jnp.arange(m, dtype=np.int32)
  cols = jnp.arange(n, dtype=np.int32)

  def step(j, state):
    a, pivots, perm = state
    col = jnp.abs(a[..., :, j])
    p = jnp.argmax(jnp.where(rows >= j, col, -1), axis=-1).astype(np.int32)
    row_j, row_p = a[..., j, :], jnp.take_along_axis(a, p[..., None, None], -2)[..., 0, :]
    is_j, is_p = rows == j, rows == p[..., None]
    a = jnp.where(is_j[..., None], row_p[..., None, :],
                  jnp.where(is_p[..., None], row_j[..., None, :], a))
    perm_j, perm_p = perm[..., j], jnp.take_along_axis(perm, p[..., None], -1)[..., 0]
    perm = jnp.where(is_j, perm_p[..., None], jnp.where(is_p, perm_j[..., None], perm))
    pivots = jnp.where(jnp.arange(k) == j, p[..., None], pivots)
    pivot = a[..., j, j]
    below = (rows > j) & (pivot != 0)[..., None]
    l = jnp.where(below, a[..., :, j] / jnp.where(pivot == 0, 1, pivot)[..., None], 0)
    u_row = jnp.where(cols > j, a[..., j, :], 0)
    a = a - l[..., :, None] * u_row[..., None, :]
    return jnp.where((cols == j) & (rows > j)[:, None], l[..., :, None], a), pivots, perm

  init = (a, jnp.zeros((*batch, k), np.int32), jnp.broadcast_to(rows, (*batch, m)))
  return list(cf.fori_loop(0, k, step, init) if k else init)


# ----------------------------------------------------------------------------- eig
# LAPACK's geev, written out: Householder reduction to Hessenberg form, the complex Schur
# form by single-shift implicit QR with deflation (Wilkinson shifts, an exceptional shift
# when a block stalls), eigenvectors of the triangular factor by back-substitution.

def _hessenberg(a):
  """a (n, n) complex -> (h, q) with a = q h q^H, h upper Hessenberg (Householder)."""
  jnp = _jnp()
  n = a.shape[-1]
  rows = jnp.arange(n)

  def step(k, state):
    h, q = state
    x = jnp.where(rows > k, h[:, k], 0)
    alpha = jnp.sum(jnp.where(rows == k + 1, x, 0))
    norm = jnp.sqrt(jnp.sum(jnp.abs(x) ** 2))
    mag = jnp.abs(alpha)
    phase = jnp.where(mag == 0, 1, alpha / jnp.where(mag == 0, 1, mag))
    v = x + jnp.where(rows == k + 1, phase * norm, 0)
    vv = jnp.sum(jnp.abs(v) ** 2)
    tau = jnp.where(vv == 0, 0, 2 / jnp.where(vv == 0, 1, vv)).astype(h.dtype)
    vc = jnp.conj(v)
    h = h - tau * v[:, None] * (vc @ h)[None, :]
    h = h - tau * (h @ v)[:, None] * vc[None, :]
    q = q - tau * (q @ v)[:, None] * vc[None, :]
    return h, q
  return cf.fori_loop(0, max(n - 2, 0), step, (a, jnp.eye(n, dtype=a.dtype)))


def _givens(x, y):
  """(c, s) with [[c, s], [-conj(s), c]] @ [x, y] = [r, 0], c real."""
  jnp = _jnp()
  ax, ay = jnp.abs(x), jnp.abs(y)
  r = jnp.sqrt(ax * ax + ay * ay)
  safe_r = jnp.where(r == 0, 1, r)
  phase = jnp.where(ax == 0, 1, x / jnp.where(ax == 0, 1, ax).astype(x.dtype))
  c = jnp.where(r == 0, 1, ax / safe_r)
  s = jnp.where(r == 0, 0, phase * jnp.conj(y) / safe_r.astype(x.dtype))
  return c.astype(x.dtype), s


def _schur(h, q, eps):
  """Complex Schur form of Hessenberg h by single-shift implicit QR with deflation."""
  jnp = _jnp()
  n = h.shape[-1]
  rows, ks = jnp.arange(n), jnp.arange(n - 1)

  def rotate(h, q, k, c, s):
    # rows k, k+1 of h by G = [[c, s], [-conj(s), c]]; columns k, k+1 of h and q by G^H
    hk, hk1 = h[k], h[k + 1]
    h = h.at[k].set(c * hk + s * hk1).at[k + 1].set(-jnp.conj(s) * hk + c * hk1)
    hk, hk1 = h[:, k], h[:, k + 1]
    h = h.at[:, k].set(c * hk + jnp.conj(s) * hk1).at[:, k + 1].set(-s * hk + c * hk1)
    qk, qk1 = q[:, k], q[:, k + 1]
    q = q.at[:, k].set(c * qk + jnp.conj(s) * qk1).at[:, k + 1].set(-s * qk + c * qk1)
    return h, q

  def cond(state):
    h, q, hi, it, stall = state
    return (hi > 0) & (it < 60 * n)

  def body(state):
    h, q, hi, it, stall = state
    # a subdiagonal entry negligible against its diagonal neighbours splits the matrix
    d = jnp.abs(jnp.diagonal(h))
    split = (jnp.abs(jnp.diagonal(h, -1)) <= eps * (d[:-1] + d[1:])) & (ks + 1 <= hi)
    h = jnp.where((rows[:, None] == rows[None, :] + 1)
                  & jnp.concatenate([split, jnp.zeros(1, bool)])[None, :], 0, h)
    # the unreduced block ends at row hi and starts at lo; a 1x1 block has converged
    lo = jnp.max(jnp.where(split, ks + 1, 0))
    converged = lo == hi
    # Wilkinson shift from the trailing 2x2 of the block; an exceptional one when stalled
    a11, a12 = h[hi - 1, hi - 1], h[hi - 1, hi]
    a21, a22 = h[hi, hi - 1], h[hi, hi]
    disc = jnp.sqrt((a11 - a22) ** 2 / 4 + a12 * a21)
    m1, m2 = (a11 + a22) / 2 + disc, (a11 + a22) / 2 - disc
    mu = jnp.where(jnp.abs(m1 - a22) < jnp.abs(m2 - a22), m1, m2)
    mu = jnp.where(stall % 11 == 10, a22 + jnp.abs(a21) * 0.75, mu)

    def sweep(k, hq):   # the implicit QR step: rotations chase the bulge down the block
      h, q = hq
      first = k == lo
      x = jnp.where(first, h[k, k] - mu, h[k, jnp.maximum(k - 1, 0)])
      y = jnp.where(first, h[k + 1, k], h[k + 1, jnp.maximum(k - 1, 0)])
      c, s = _givens(x, y)
      active = (k >= lo) & (k < hi) & ~converged
      c = jnp.where(active, c, 1)
      s = jnp.where(active, s, 0)
      return rotate(h, q, k, c, s)
    h, q = cf.fori_loop(0, n - 1, sweep, (h, q))
    hi = jnp.where(converged, hi - 1, hi)
    stall = jnp.where(converged, 0, stall + 1)
    return h, q, hi, it + 1, stall

  h, q, *_ = cf.while_loop(cond, body, (h, q, jnp.int32(n - 1), jnp.int32(0), jnp.int32(0)))
  return h, q


def _triangular_eigenvectors(t, eps):
  """Eigenvectors of upper-triangular t as columns of an upper-triangular y (y[k,k] = 1)."""
  jnp = _jnp()
  n = t.shape[-1]
  lam = jnp.diagonal(t)
  rows = jnp.arange(n)
  smin = eps * jnp.max(jnp.abs(t))
  smin = jnp.where(smin == 0, 1, smin)

  def step(i, y):
    j = n - 1 - i                        # solve row j for every column k > j
    denom = t[j, j] - lam                # (n,) over k
    denom = jnp.where(jnp.abs(denom) < smin, smin.astype(t.dtype), denom)
    acc = t[j] @ y                       # sum_m t[j, m] y[m, k] (y zero below its diag)
    yj = jnp.where(rows > j, -acc / denom, y[j])
    return y.at[j].set(yj)
  return cf.fori_loop(0, n, step, jnp.eye(n, dtype=t.dtype))


def _normalize(v):
  jnp = _jnp()
  v = v / jnp.sqrt(jnp.sum(jnp.abs(v) ** 2, axis=0, keepdims=True)).astype(v.dtype)
  # LAPACK's convention: the component of largest magnitude is real
  i = jnp.argmax(jnp.abs(v), axis=0)
  big = jnp.take_along_axis(v, i[None, :], axis=0)
  return v * (jnp.conj(big) / jnp.abs(big).astype(v.dtype))


def _eig_one(a, eps):
  jnp = _jnp()
  if a.shape[-1] <= 1:   # also the empty matrix
    return jnp.diagonal(a), jnp.ones_like(a)
  h, q = _hessenberg(a)
  t, q = _schur(h, q, eps)
  return jnp.diagonal(t), _normalize(q @ _triangular_eigenvectors(jnp.triu(t), eps))


def _eig(x, *, compute_left_eigenvectors, compute_right_eigenvectors, use_magma):
  """Eigenvalues and (right, left) eigenvectors; the left ones as tier 0 computes them, the
  conjugate rows of V^-1, normalised."""
  jnp = _jnp()
  real = la._real_dtype(x.dtype)
  ctype = np.dtype(np.complex128 if real == np.float64 else np.complex64)
  *batch, n, _ = x.shape
  a = x.astype(ctype).reshape((int(np.prod(batch)), n, n))   # -1 fails when empty
  w, vr = cf.vmap_axis(lambda m: _eig_one(m, float(np.finfo(ctype).eps)), a, a.shape[0])
  outs = [w.reshape((*batch, n))]
  if compute_left_eigenvectors:
    vl = la._H(jnp.linalg.inv(vr))
    outs.append((vl / jnp.linalg.norm(vl, axis=-2, keepdims=True).astype(ctype))
                .reshape(x.shape))
  if compute_right_eigenvectors:
    outs.append(vr.reshape(x.shape))
  return outs


# ----------------------------------------------------------------------------- schur
# LAPACK's gees, written out. Complex: the Hessenberg reduction and single-shift QR above.
# Real: Francis double-shift QR (Golub and Van Loan, algorithm 7.5.2) to a quasi-triangular
# form, then each 2x2 diagonal block rotated to LAPACK's standard form: upper triangular
# when its eigenvalues are real, equal diagonal entries when they are a complex pair.

def _reflect(h, q, k, v):
  """``P h P`` and ``q P`` for the reflector ``P = I - 2 v v^T / v^T v`` acting on the
  rows and columns ``k .. k + len(v) - 1`` (v = 0: the identity)."""
  jnp = _jnp()
  n, m = h.shape[-1], v.shape[0]
  vv = jnp.sum(v * v)
  tau = jnp.where(vv == 0, 0, 2 / jnp.where(vv == 0, 1, vv)).astype(h.dtype)
  rows = lax_indexing.dynamic_slice(h, (k, 0), (m, n))
  h = lax_indexing.dynamic_update_slice(h, rows - tau * jnp.outer(v, v @ rows), (k, 0))
  cols = lax_indexing.dynamic_slice(h, (0, k), (n, m))
  h = lax_indexing.dynamic_update_slice(h, cols - tau * jnp.outer(cols @ v, v), (0, k))
  qcols = lax_indexing.dynamic_slice(q, (0, k), (n, m))
  q = lax_indexing.dynamic_update_slice(q, qcols - tau * jnp.outer(qcols @ v, v), (0, k))
  return h, q


def _householder_vector(u, active):
  """v with ``(I - 2 v v^T / v^T v) u`` a multiple of e_1; 0 where not ``active``. ``u``
  is scaled to a largest entry of 1 first: the bulge shrinks towards underflow as QR
  converges, and squares flushed to zero (as XLA flushes subnormals) would make the
  reflector not orthogonal."""
  jnp = _jnp()
  peak = jnp.max(jnp.abs(u))
  u = u / jnp.where(peak == 0, 1, peak)
  norm = jnp.sqrt(jnp.sum(u * u))
  sign = jnp.where(u[0] < 0, -1, 1).astype(u.dtype)
  v = u.at[0].add(sign * norm)
  return jnp.where(active & (norm > 0), v, 0)


def _francis_schur(h, q, eps, tiny):
  """Real Schur form of real Hessenberg h by Francis double-shift QR with deflation (NaNs
  if it does not converge in 30 sweeps per eigenvalue, LAPACK's budget)."""
  jnp = _jnp()
  n = h.shape[-1]
  ks, rows = jnp.arange(n - 1, dtype=np.int32), jnp.arange(n, dtype=np.int32)
  hessenberg = rows[:, None] <= rows[None, :] + 1

  def cond(state):
    h, q, hi, it, stall = state
    return (hi > 0) & (it < 30 * max(10, n) * n)

  def body(state):
    h, q, hi, it, stall = state
    split = _negligible_subdiagonal(h, eps, tiny) & (ks + 1 <= hi)
    h = jnp.where((rows[:, None] == rows[None, :] + 1)
                  & jnp.concatenate([split, jnp.zeros(1, bool)])[None, :], 0, h)
    lo = jnp.max(jnp.where(split, ks + 1, 0))
    done = hi - lo <= 1        # a 1x1 or 2x2 block has converged
    # the double shift: the eigenvalues of the block's trailing 2x2 (an exceptional
    # pair when the block stalls)
    g = lambda r, c: h[jnp.clip(r, 0, n - 1), jnp.clip(c, 0, n - 1)]
    s = g(hi - 1, hi - 1) + g(hi, hi)
    t = g(hi - 1, hi - 1) * g(hi, hi) - g(hi - 1, hi) * g(hi, hi - 1)
    w = jnp.abs(g(hi, hi - 1)) + jnp.abs(g(hi - 1, hi - 2))
    first_of = lambda s, t: jnp.stack([
        g(lo, lo) * g(lo, lo) + g(lo, lo + 1) * g(lo + 1, lo) - s * g(lo, lo) + t,
        g(lo + 1, lo) * (g(lo, lo) + g(lo + 1, lo + 1) - s),
        g(lo + 1, lo) * g(lo + 2, lo + 1)])
    first = first_of(s, t)
    # the exceptional pair also where the shifts annihilate the first column (a nilpotent
    # block with zero shifts), which would leave the sweep the identity
    odd = (stall % 11 == 10) | (jnp.sum(first * first) == 0)
    first = jnp.where(odd, first_of(1.5 * w, w * w), first)

    def chase(k, hq):   # 3x3 reflectors push the bulge down the block
      h, q = hq
      below = jnp.stack([g_(h, k, k - 1), g_(h, k + 1, k - 1), g_(h, k + 2, k - 1)])
      u = jnp.where(k == lo, first, below)
      v = _householder_vector(u, (k >= lo) & (k <= hi - 2) & ~done)
      return _reflect(h, q, k, v)
    if n > 2:
      h, q = cf.fori_loop(0, n - 2, chase, (h, q))
    # a 2x2 reflector ends the sweep at rows hi - 1, hi
    k = jnp.maximum(hi - 1, 0)
    u = jnp.stack([g_(h, k, k - 1), g_(h, k + 1, k - 1)])
    h, q = _reflect(h, q, jnp.minimum(k, n - 2), _householder_vector(u, ~done & (hi >= 2)))
    h = jnp.where(hessenberg, h, 0)
    hi = jnp.where(done, lo - 1, hi)
    stall = jnp.where(done, 0, stall + 1)
    return h, q, hi, it + 1, stall

  h, q, hi, *_ = cf.while_loop(cond, body,
                               (h, q, jnp.int32(n - 1), jnp.int32(0), jnp.int32(0)))
  h, q = _standardize_blocks(h, q)
  # no convergence within the iteration budget: NaNs, as where LAPACK's gees fails
  failed = hi > 0
  return jnp.where(failed, np.nan, h), jnp.where(failed, np.nan, q)


def _negligible_subdiagonal(h, eps, tiny):
  """LAPACK's dlahqr deflation test for each ``h[k + 1, k]``: small against its diagonal
  neighbours (or, where those are zero, the neighbouring subdiagonal entries), with Ahues
  and Tisseur's refinement, or below the underflow-safe ``tiny``; and, where the
  neighbours are themselves at the rounding level of the matrix (a nilpotent block, whose
  entries QR leaves as rounding noise), at that level too: the backward error stays
  ``eps * |h|``."""
  jnp = _jnp()
  d = jnp.abs(jnp.diagonal(h))
  sub = jnp.abs(jnp.diagonal(h, -1))
  sup = jnp.abs(jnp.diagonal(h, 1))
  zero = jnp.zeros(1, h.dtype)
  tst = d[:-1] + d[1:]
  neighbours = jnp.concatenate([zero, sub[:-1]]) + jnp.concatenate([sub[1:], zero])
  tst = jnp.where(tst == 0, neighbours, tst)
  ab, ba = jnp.maximum(sub, sup), jnp.minimum(sub, sup)
  diff = jnp.abs(jnp.diagonal(h)[:-1] - jnp.diagonal(h)[1:])
  aa, bb = jnp.maximum(d[1:], diff), jnp.minimum(d[1:], diff)
  total = jnp.where(aa + ab == 0, 1, aa + ab)
  refined = ba * (ab / total) <= jnp.maximum(tiny, eps * (bb * (aa / total)))
  noise = eps * jnp.sqrt(jnp.sum(h * h))
  return (sub <= tiny) | ((sub <= eps * tst) & refined) | ((tst <= noise) & (sub <= noise))


def g_(h, r, c):
  """``h[r, c]`` with the indices clamped into the matrix."""
  jnp = _jnp()
  n = h.shape[-1]
  return h[jnp.clip(r, 0, n - 1), jnp.clip(c, 0, n - 1)]


def _standardize_blocks(h, q):
  """Rotate each 2x2 diagonal block with a nonzero subdiagonal: to upper triangular if its
  eigenvalues are real, to equal diagonal entries if they are complex."""
  jnp = _jnp()
  n = h.shape[-1]

  def step(k, hq):
    h, q = hq
    a, b, c, d = h[k, k], h[k, k + 1], h[k + 1, k], h[k + 1, k + 1]
    p = (a - d) / 2
    disc = p * p + b * c
    real = disc >= 0
    # real: the first basis vector becomes an eigenvector (of the eigenvalue away from
    # the mean, for accuracy), whichever row of (A - lam I) gives it better
    root = jnp.sqrt(jnp.where(real, disc, 0))
    lam = (a + d) / 2 + jnp.where(p < 0, -root, root)
    v1, v2 = jnp.stack([b, lam - a]), jnp.stack([lam - d, c])
    n1, n2 = jnp.sum(v1 * v1), jnp.sum(v2 * v2)
    v = jnp.where(n1 > n2, v1, v2) / jnp.sqrt(jnp.maximum(n1, n2))
    # complex: the rotation by theta changes a - d to (a - d) cos 2t + (b + c) sin 2t
    theta = 0.5 * jnp.arctan2(-(a - d), b + c)
    cs = jnp.where(real, v[0], jnp.cos(theta))
    sn = jnp.where(real, v[1], jnp.sin(theta))
    active = c != 0
    cs, sn = jnp.where(active, cs, 1), jnp.where(active, sn, 0)
    g = jnp.stack([jnp.stack([cs, sn]), jnp.stack([-sn, cs])])   # H <- G H G^T
    rows = lax_indexing.dynamic_slice(h, (k, 0), (2, n))
    h = lax_indexing.dynamic_update_slice(h, g @ rows, (k, 0))
    cols = lax_indexing.dynamic_slice(h, (0, k), (n, 2))
    h = lax_indexing.dynamic_update_slice(h, cols @ g.T, (0, k))
    qcols = lax_indexing.dynamic_slice(q, (0, k), (n, 2))
    q = lax_indexing.dynamic_update_slice(q, qcols @ g.T, (0, k))
    # exact zeros and equal diagonals where rounding left them almost so
    h = h.at[k + 1, k].set(jnp.where(active & real, 0, h[k + 1, k]))
    mean = (h[k, k] + h[k + 1, k + 1]) / 2
    h = h.at[k, k].set(jnp.where(active & ~real, mean, h[k, k]))
    h = h.at[k + 1, k + 1].set(jnp.where(active & ~real, mean, h[k + 1, k + 1]))
    return h, q
  return cf.fori_loop(0, n - 1, step, (h, q))


def _hessenberg_lowered(x):
  """Householder reduction of each matrix, as tier 0's gehrd packs it."""
  *batch, n, _ = x.shape
  a = x.reshape((int(np.prod(batch)), n, n))   # -1 fails when empty
  out, taus = cf.vmap_axis(la.reduce_to_hessenberg, a, a.shape[0])
  return [out.reshape(x.shape), taus.reshape((*batch, max(n - 1, 0)))]


def _schur_one(a, eps, tiny):
  jnp = _jnp()
  if a.shape[-1] <= 1:
    return a, jnp.ones_like(a)
  h, q = _hessenberg(a)
  if jnp.iscomplexobj(a):
    t, q = _schur(h, q, eps)
    return jnp.triu(t), q
  return _francis_schur(h, q, eps, tiny)


def _schur_lowered(x, *, compute_schur_vectors, sort_eig_vals, select_callable):
  """The Schur form and vectors of each matrix; NaNs for a matrix that is not finite."""
  jnp = _jnp()
  *batch, n, _ = x.shape
  a = x.reshape((int(np.prod(batch)), n, n))   # -1 fails when empty
  info = np.finfo(x.dtype)
  tiny = float(info.tiny) * max(n, 1) / float(info.eps)
  t, q = cf.vmap_axis(lambda m: _schur_one(m, float(info.eps), tiny), a, a.shape[0])
  finite = jnp.all(jnp.isfinite(a), axis=(-2, -1))[:, None, None]
  t, q = (jnp.where(finite, o, np.nan).astype(x.dtype).reshape(x.shape) for o in (t, q))
  return [t, q] if compute_schur_vectors else [t]


_eigh_lowered = lowered_function(_eigh)
hlo.lowering_rules.update({
    la.eigh_p: _eigh_rule, la.qr_p: _qr_rule, la.geqrf_p: _geqrf_rule, la.svd_p: lowered_function(_svd),
    la.lu_p: lowered_function(_lu), la.eig_p: lowered_function(_eig),
    la.schur_p: lowered_function(_schur_lowered),
    la.hessenberg_p: lowered_function(_hessenberg_lowered),
    lax_special.random_gamma_p: lowered_function(   # jax.random's sampler, vectorised
        lambda key, a, *, log_space: [random._gamma_impl(key, a, log_space=log_space)])})
