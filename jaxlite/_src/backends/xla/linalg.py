"""Lowerings for the decompositions that XLA's CPU plugin reaches without LAPACK.

JAX's CPU backend calls LAPACK through custom calls that jaxlib registers; the PJRT
plugin alone has none of them. What the plugin's compiler does have are its own
expanders for two custom calls: ``Eigh`` (a Jacobi eigensolver) and ``Qr`` with
``ProductOfElementaryHouseholderReflectors`` (Householder QR). ``eigh`` and ``qr`` lower
to those. ``svd`` and ``lu`` are written with other primitives and lowered as functions
(JAX's ``mlir.lower_fun`` idea):

* SVD: the Hermitian matrix ``[[0, A], [A^H, 0]]`` has eigenpairs ``(+-s, [u; +-v]/sqrt2)``,
  so one eigendecomposition gives the singular values and the right singular vectors
  without squaring the condition number, as ``eig(A^H A)`` would. QR then orthonormalises
  those vectors, which also completes the basis when singular values are zero, and the
  left vectors come from a QR of ``A V``. A tall matrix is first reduced by a QR.
* LU: the unblocked partial-pivoting loop of LAPACK's ``getf2``, which tier 0 runs too.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.backends.xla import stablehlo as hlo
from jaxlite._src.lax import control_flow as cf
from jaxlite._src.lax import linalg as la
from jaxlite._src.transforms import staging


def _jnp():
  from jaxlite import numpy as jnp   # the layer above lax; imported when first lowering
  return jnp


def lowered_function(fn):
  """A lowering rule that traces ``fn(*operands, **params)`` (a list of outputs, written
  with other primitives) on the equation's input types and emits its jaxpr inline."""
  def rule(b, eqn, *args, **params):
    closed = staging.trace_to_jaxpr(lambda *xs: list(fn(*xs, **params)),
                                    [v.aval for v in eqn.invars])
    return hlo.lower_closed(b, closed, list(args))
  return rule


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


_eigh_lowered = lowered_function(_eigh)
rules = {"eigh": _eigh_rule, "qr": _qr_rule, "svd": lowered_function(_svd),
         "lu": lowered_function(_lu)}
