"""``jax.scipy.linalg``: SciPy's dense linear algebra, from the ``lax.linalg``
decompositions and ``jaxlite.numpy``. The Schur-based functions (``schur``, ``rsf2csf``,
``sqrtm``, ``funm``) stand on the ``schur`` primitive, ``hessenberg`` on
``lax.linalg.hessenberg``."""
from __future__ import annotations

import math
import warnings

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.libraries.numpy import namespace as jnp
from jaxlite._src.lax import control_flow
from jaxlite._src.lax import indexing as lax_indexing
from jaxlite._src.lax import linalg as lax_linalg
from jaxlite._src.lax.precision import Precision
from jaxlite._src.libraries.numpy.util import promote_dtypes_inexact

__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "companion",
           "convolution_matrix", "det", "dft", "eigh", "eigh_tridiagonal", "expm",
           "expm_frechet", "fiedler", "fiedler_companion", "funm", "hadamard", "hankel",
           "helmert", "hessenberg", "hilbert", "inv", "invhilbert", "invpascal", "leslie",
           "lu", "lu_factor", "lu_solve", "pascal", "polar", "qr", "qr_multiply", "rsf2csf",
           "schur", "solve", "solve_sylvester", "solve_triangular", "sqrtm", "svd",
           "toeplitz"]


def _inexact(a):
  a = jnp.asarray(a)
  return a if jnp.issubdtype(a.dtype, jnp.inexact) else a.astype(jnp.result_type(a, 1.0))


def _mT(x):
  return jnp.swapaxes(x, -1, -2)


# -- decompositions and solves ------------------------------------------------------------
def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
  """Cholesky factor of a Hermitian positive-definite matrix (upper unless ``lower``)."""
  c = lax_linalg.cholesky(_inexact(a))
  return c if lower else jnp.conj(_mT(c))


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
  """``(c, lower)`` for ``cho_solve``: the Cholesky factor and which triangle it is."""
  return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
  """Solve ``A x = b`` given ``cho_factor(A)``; batch axes of ``c`` and ``b`` broadcast."""
  c, lower = c_and_lower
  return _triangular_solves("cho_solve", "cho_solve(c_and_lower, b[..., None])", c, b,
                            dict(lower=lower, transpose_a=not lower, conjugate_a=not lower),
                            dict(lower=lower, transpose_a=lower, conjugate_a=lower))


def _triangular_solves(name, hint, a, b, *solves):
  """``b`` solved against triangular ``a`` by each of ``solves`` (``triangular_solve``'s
  keywords) in turn, as JAX's solves do: a 1-d ``b`` (or, deprecated, a stack of them
  beside a stack of ``a``) is one vector per matrix, else columns; batch axes broadcast."""
  a, b = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(b))
  vector = b.ndim == 1 or (a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1])
  if b.ndim > 1 and vector:
    warnings.warn(f"jax.scipy.linalg.{name}: batched 1D solves with b.ndim > 1 are "
                  "deprecated, and in the future will be treated as a batched 2D solve. "
                  f"Use {hint}.squeeze(-1) to avoid this warning.", FutureWarning,
                  stacklevel=3)

  def solve(a, b):   # (a vector b is a one-column matrix to triangular_solve)
    for keywords in solves:
      b = lax_linalg.triangular_solve(a, b, left_side=True, **keywords)
    return b
  return jnp.vectorize(solve, signature="(n,n),(n)->(n)" if vector
                       else "(n,n),(n,k)->(n,k)")(a, b)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     debug=None, check_finite=True):
  """Solve ``op(a) x = b`` for triangular ``a``; ``trans`` is 0/'N', 1/'T' or 2/'C'. Batch
  axes of ``a`` and ``b`` broadcast, as in JAX."""
  trans = {"N": 0, "T": 1, "C": 2}.get(trans, trans)
  if trans not in (0, 1, 2):
    raise ValueError(f"Invalid 'trans' value {trans}")
  return _triangular_solves("solve_triangular", "solve_triangular(a, b[..., None])", a, b,
                            dict(lower=lower, transpose_a=trans > 0, conjugate_a=trans == 2,
                                 unit_diagonal=unit_diagonal))


def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
  """``p, l, u`` with ``a = p @ l @ u`` (or ``p @ l, u`` when ``permute_l``)."""
  a = _inexact(a)
  lu_, _, perm = lax_linalg.lu(a)
  m, n = a.shape[-2:]
  k = min(m, n)
  l = jnp.tril(lu_[..., :, :k], -1) + jnp.eye(m, k, dtype=a.dtype)
  u = jnp.triu(lu_[..., :k, :])
  p = jnp.swapaxes(jnp.eye(m, dtype=a.dtype)[perm], -1, -2)
  return (jnp.matmul(p, l), u) if permute_l else (p, l, u)


def lu_factor(a, overwrite_a=False, check_finite=True):
  """``(lu, piv)``: packed LU factors and LAPACK-style row-swap pivots."""
  lu_, piv, _ = lax_linalg.lu(_inexact(a))
  return lu_, piv


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
  """Solve ``op(A) x = b`` given ``lu_factor(A)``; ``trans`` 0, 1 (transpose), 2
  (conjugate transpose)."""
  lu_, piv = lu_and_piv
  lu_, b = jnp.asarray(lu_), _inexact(b)
  m = lu_.shape[-1]
  perm = lax_linalg.lu_pivots_to_permutation(jnp.asarray(piv), m)
  vec = b.ndim == 1
  bm = b[:, None] if vec else b
  if trans == 0:
    x = bm[perm]
    x = lax_linalg.triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True)
    x = lax_linalg.triangular_solve(lu_, x, left_side=True, lower=False)
  elif trans in (1, 2):
    conj = trans == 2
    x = lax_linalg.triangular_solve(lu_, bm, left_side=True, lower=False, transpose_a=True,
                                    conjugate_a=conj)
    x = lax_linalg.triangular_solve(lu_, x, left_side=True, lower=True, transpose_a=True,
                                    conjugate_a=conj, unit_diagonal=True)
    x = x[jnp.argsort(perm)]
  else:
    raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
  return x[:, 0] if vec else x


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
  """QR decomposition: ``(q, r)`` for mode 'full' or 'economic', ``(r,)`` for 'r'."""
  if pivoting:
    raise NotImplementedError("qr with pivoting=True")
  if mode not in ("full", "economic", "r"):
    raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
  q, r = lax_linalg.qr(_inexact(a), full_matrices=mode != "economic")
  return (r,) if mode == "r" else (q, r)


def qr_multiply(a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False,
                overwrite_c=False):
  """``(q @ c, r)`` (``mode='left'``) or ``(c @ q, r)`` (``mode='right'``) with the
  economic QR of ``a``."""
  if pivoting:
    raise NotImplementedError("qr_multiply with pivoting=True")
  q, r = lax_linalg.qr(_inexact(a), full_matrices=False)
  q = jnp.conj(q) if conjugate else q
  c = jnp.asarray(c)
  if mode == "left":
    out = jnp.matmul(q, c[:, None] if c.ndim == 1 else c)
    return (out[:, 0] if c.ndim == 1 else out), r
  if mode == "right":
    return jnp.matmul(c, q), r
  raise ValueError(f"mode must be 'left' or 'right', got {mode!r}")


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
        lapack_driver="gesdd"):
  """Singular value decomposition ``u, s, vh`` (or ``s`` alone)."""
  return jnp.linalg.svd(_inexact(a), full_matrices=full_matrices, compute_uv=compute_uv)


def det(a, overwrite_a=False, check_finite=True):
  """The determinant of a square matrix."""
  return jnp.linalg.det(_inexact(a))


def inv(a, overwrite_a=False, check_finite=True):
  """The inverse of a square matrix."""
  return jnp.linalg.inv(_inexact(a))


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False,
          check_finite=True, assume_a="gen"):
  """Solve ``a x = b``; ``assume_a`` 'gen', 'sym', 'her' or 'pos' (Cholesky)."""
  if assume_a not in ("gen", "sym", "her", "pos"):
    raise ValueError(f"Expected assume_a to be one of 'gen', 'sym', 'her', 'pos'; got "
                     f"{assume_a!r}")
  a, b = _inexact(a), _inexact(b)
  if assume_a == "pos":
    return cho_solve(cho_factor(a, lower=lower), b)
  return jnp.linalg.solve(a, b)


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False,
         turbo=True, eigvals=None, type=1, check_finite=True):  # noqa: A002
  """Eigenvalues (ascending) and eigenvectors of a Hermitian matrix; ``b`` (the
  generalized problem) is not supported, as in JAX."""
  if b is not None:
    raise NotImplementedError("Only the b=None case of eigh is implemented")
  if type != 1:
    raise NotImplementedError("Only the type=1 case of eigh is implemented.")
  if eigvals is not None:
    raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
  v, w = lax_linalg.eigh(_inexact(a), lower=lower)
  return w if eigvals_only else (w, v)


def eigh_tridiagonal(d, e, *, eigvals_only=False, select="a", select_range=None, tol=None,
                     key=None):
  """Eigenvalues of the symmetric tridiagonal matrix with diagonal ``d`` and
  off-diagonal ``e`` (via a dense ``eigh``). Like JAX, only ``eigvals_only=True`` and
  ``select`` 'a' or 'i' are supported."""
  if not eigvals_only:
    raise NotImplementedError("Calculation of eigenvectors is not implemented")
  d, e = _inexact(d), _inexact(e)
  n = d.shape[0]
  mat = jnp.diag(d) + jnp.diag(e[:n - 1], 1) + jnp.diag(jnp.conj(e[:n - 1]), -1)
  w = jnp.linalg.eigvalsh(mat)
  if select == "a":
    return w
  if select == "i":
    lo, hi = select_range
    return w[int(lo):int(hi) + 1]
  raise NotImplementedError(f"select={select!r} is not implemented")


def polar(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
  """Polar decomposition ``a = u p`` (``side='right'``) or ``p u`` (``'left'``), from
  the SVD (whatever ``method`` says)."""
  if side not in ("right", "left"):
    raise ValueError(f"side={side!r} must be 'right' or 'left'")
  a = _inexact(a)
  w, s, vh = jnp.linalg.svd(a, full_matrices=False)
  u = jnp.matmul(w, vh)
  if side == "right":
    p = jnp.matmul(jnp.conj(_mT(vh)) * s[..., None, :], vh)
  else:
    p = jnp.matmul(w * s[..., None, :], jnp.conj(_mT(w)))
  return u, p


def solve_sylvester(A, B, C, *, method="schur", tol=1e-8):
  """Solve ``A X + X B = C`` through its Kronecker form (a dense ``(m n) x (m n)``
  solve, so for small matrices; SciPy uses a Schur decomposition)."""
  A, B, C = _inexact(A), _inexact(B), _inexact(C)
  m, n = C.shape
  big = jnp.kron(jnp.eye(n, dtype=A.dtype), A) + jnp.kron(_mT(B), jnp.eye(m, dtype=A.dtype))
  x = jnp.linalg.solve(big, jnp.ravel(_mT(C)))
  return _mT(jnp.reshape(x, (n, m)))


# -- the matrix exponential ---------------------------------------------------------------
_PADE13 = (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
           129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920.,
           40840800., 960960., 16380., 182., 1.)
_PADE7 = (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.)


def _pade(A, coeffs):
  # the identity of A's batch shape, so that rank_promotion='raise' passes for a stack
  ident = jnp.broadcast_to(jnp.eye(A.shape[-1], dtype=A.dtype), A.shape)
  A2 = jnp.matmul(A, A)
  if len(coeffs) == 8:
    A4 = jnp.matmul(A2, A2)
    A6 = jnp.matmul(A4, A2)
    b = coeffs
    U = jnp.matmul(A, b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * ident)
    V = b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * ident
    return U, V
  b = coeffs
  A4 = jnp.matmul(A2, A2)
  A6 = jnp.matmul(A4, A2)
  U = jnp.matmul(A, jnp.matmul(A6, b[13] * A6 + b[11] * A4 + b[9] * A2)
                 + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * ident)
  V = (jnp.matmul(A6, b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4
       + b[2] * A2 + b[0] * ident)
  return U, V


def expm(A, *, upper_triangular=False, max_squarings=16):
  """The matrix exponential, by scaling and squaring with a Pade approximant (degree 7
  in single precision, 13 in double; Higham 2005)."""
  A = _inexact(A)
  if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
    raise ValueError(f"expected a square matrix, got shape {A.shape}")
  double = A.dtype in (np.float64, np.complex128)
  coeffs, theta = (_PADE13, 5.371920351148152) if double else (_PADE7, 3.925724783138660)
  norm = jnp.max(jnp.sum(jnp.abs(A), axis=-2), axis=-1)
  s = jnp.maximum(0, jnp.ceil(jnp.log2(jnp.maximum(norm, 1e-300 if double else 1e-30)
                                       / theta)))
  s = jnp.minimum(s, max_squarings)
  scaled = A / (2.0 ** s)[..., None, None].astype(A.dtype)
  U, V = _pade(scaled, coeffs)
  R = jnp.linalg.solve(V - U, V + U)

  def body(i, r):
    return jnp.where((i < s)[..., None, None], jnp.matmul(r, r), r)

  R = control_flow.fori_loop(0, max_squarings, body, R)
  return jnp.where(jnp.isfinite(norm)[..., None, None], R, jnp.nan)


def expm_frechet(A, E, *, method=None, compute_expm=True):
  """The Frechet derivative of ``expm`` at ``A`` in direction ``E`` (the upper-right
  block of ``expm([[A, E], [0, A]])``), with ``expm(A)`` unless ``compute_expm`` is
  False."""
  A, E = _inexact(A), _inexact(E)
  n = A.shape[-1]
  top = jnp.concatenate([A, E], axis=-1)
  bottom = jnp.concatenate([jnp.zeros_like(A), A], axis=-1)
  big = expm(jnp.concatenate([top, bottom], axis=-2))
  frechet = big[..., :n, n:]
  return (big[..., :n, :n], frechet) if compute_expm else frechet


# -- special matrices ---------------------------------------------------------------------
def block_diag(*arrs):
  """A block-diagonal matrix from the given matrices (scalars and vectors count as
  ``1 x 1`` and ``1 x n`` blocks)."""
  if not arrs:
    return jnp.zeros((1, 0))
  arrs = [jnp.asarray(a) for a in arrs]
  arrs = [jnp.reshape(a, (1,) * (2 - a.ndim) + a.shape) if a.ndim < 2 else a for a in arrs]
  dtype = jnp.result_type(*arrs)
  cols = sum(a.shape[1] for a in arrs)
  rows, start = [], 0
  for a in arrs:
    rows.append(jnp.pad(a.astype(dtype), ((0, 0), (start, cols - start - a.shape[1]))))
    start += a.shape[1]
  return jnp.concatenate(rows, axis=0)


def toeplitz(c, r=None):
  """The Toeplitz matrix with first column ``c`` and first row ``r`` (``conj(c)`` by
  default; ``r[0]`` is ignored)."""
  c = jnp.ravel(jnp.asarray(c)) if r is None or jnp.ndim(c) <= 1 else jnp.asarray(c)
  r = jnp.conj(c) if r is None else jnp.ravel(jnp.asarray(r))
  vals = jnp.concatenate([c[::-1], r[1:]])
  i = np.arange(c.shape[-1])[:, None]
  j = np.arange(r.shape[-1])[None, :]
  return vals[c.shape[-1] - 1 - i + j]


def hankel(c, r=None):
  """The Hankel matrix with first column ``c`` and last row ``r`` (zeros by default)."""
  c = jnp.ravel(jnp.asarray(c))
  r = jnp.zeros_like(c) if r is None else jnp.ravel(jnp.asarray(r))
  vals = jnp.concatenate([c, r[1:]])
  i = np.arange(c.shape[0])[:, None]
  j = np.arange(r.shape[0])[None, :]
  return vals[i + j]


def circulant(c):
  """The circulant matrix whose first column is ``c``."""
  c = jnp.asarray(c)
  n = c.shape[-1]
  idx = (np.arange(n)[:, None] - np.arange(n)[None, :]) % n
  return c[..., idx]


def companion(a):
  """The companion matrix of the polynomial with coefficients ``a`` (highest first)."""
  a = jnp.asarray(a)
  if a.ndim != 1 or a.shape[0] < 2:
    raise ValueError("Incorrect shape for `a`.  `a` must be one-dimensional with length "
                     "at least 2.")
  n = a.shape[0]
  first = -a[1:] / (1.0 * a[0])
  out = jnp.zeros((n - 1, n - 1), first.dtype).at[0].set(first)
  return out.at[np.arange(1, n - 1), np.arange(n - 2)].set(1)


def convolution_matrix(a, n, mode="full"):
  """The matrix ``A`` with ``A @ v == convolve(a, v, mode)`` for vectors ``v`` of
  length ``n``."""
  a = jnp.asarray(a)
  if n <= 0:
    raise ValueError("n must be a positive integer")
  if a.ndim != 1 or a.shape[0] == 0:
    raise ValueError("convolution_matrix expects a non-empty one-dimensional input")
  m = a.shape[0]
  full = toeplitz(jnp.concatenate([a, jnp.zeros((n - 1,), a.dtype)]),
                  jnp.zeros((n,), a.dtype))
  if mode == "full":
    return full
  if mode == "same":
    start = (min(n, m) - 1) // 2
    return full[start:start + max(m, n)]
  if mode == "valid":
    return full[min(m, n) - 1:max(m, n)]
  raise ValueError(f"mode={mode!r} not understood")


def dft(n, scale=None, *, dtype=None):
  """The ``n``-point discrete Fourier transform matrix (``scale`` None, 'n' or
  'sqrtn')."""
  k = np.arange(n)
  m = np.exp(-2j * np.pi * np.outer(k, k) / n)
  if scale == "n":
    m = m / n
  elif scale == "sqrtn":
    m = m / math.sqrt(n)
  elif scale is not None:
    raise ValueError(f"scale must be None, 'n' or 'sqrtn', got {scale!r}")
  return jnp.asarray(m, dtype=dtype or jnp.result_type(1j))


def fiedler(a):
  """The symmetric Fiedler matrix ``|a[i] - a[j]|``."""
  a = jnp.asarray(a)
  return jnp.abs(a[..., :, None] - a[..., None, :])


def fiedler_companion(a):
  """The Fiedler companion matrix of the polynomial with coefficients ``a`` (a
  pentadiagonal matrix with the same eigenvalues as ``companion(a)``)."""
  a = jnp.asarray(a)
  if a.ndim != 1:
    raise ValueError("Input 'a' must be a 1-D array.")
  if a.shape[0] <= 2:
    return (-a[1:] / a[0])[:, None] if a.shape[0] == 2 else jnp.zeros((0, 0), a.dtype)
  a = a / (1.0 * a[0])
  return _fiedler_layout(a, a.shape[0] - 1)


def _fiedler_layout(a, m):
  # SciPy's pattern: alternating 1s and -a[k] in the first two super- and sub-diagonals
  n = m + 1
  c = jnp.zeros((m, m), a.dtype)
  c = c.at[np.arange(3, n - 1, 2), np.arange(1, n - 3, 2)].set(1.0)
  c = c.at[np.arange(2, n - 1, 2), np.arange(1, n - 2, 2)].set(-a[3::2])
  c = c.at[np.arange(0, n - 3, 2), np.arange(2, n - 1, 2)].set(1.0)
  c = c.at[np.arange(0, n - 2, 2), np.arange(1, n - 1, 2)].set(-a[2::2])
  return c.at[0, 0].set(-a[1]).at[1, 0].set(1.0)


def hadamard(n, dtype=int):
  """The ``n x n`` Hadamard matrix (Sylvester's construction; ``n`` a power of 2)."""
  if n < 1 or n & (n - 1):
    raise ValueError("n must be an positive integer, and n must be a power of 2")
  h = np.array([[1]])
  while h.shape[0] < n:
    h = np.block([[h, h], [h, -h]])
  return jnp.asarray(h, dtype=dtype)


def helmert(n, full=False):
  """The Helmert matrix of order ``n`` (without its first row unless ``full``)."""
  h = np.tril(np.ones((n, n)), -1) - np.diag(np.arange(n))
  d = np.arange(n) * np.arange(1, n + 1)
  h[0] = 1
  d[0] = n
  out = h / np.sqrt(d)[:, None]
  return jnp.asarray(out if full else out[1:])


def hilbert(n):
  """The Hilbert matrix ``1 / (i + j + 1)``."""
  a = jnp.arange(n, dtype=jnp.result_type(1.0))
  return 1.0 / (a[:, None] + a[None, :] + 1)


def invhilbert(n):
  """The exact inverse of the ``n x n`` Hilbert matrix (as floats)."""
  from math import comb as _comb
  out = np.empty((n, n))
  for i in range(n):
    for j in range(n):
      s = i + j
      out[i, j] = ((-1) ** s * (s + 1) * _comb(n + i, n - j - 1) * _comb(n + j, n - i - 1)
                   * _comb(s, i) ** 2)
  return jnp.asarray(out)


def pascal(n, kind=None):
  """The Pascal matrix: 'symmetric' (None, the default), 'lower' or 'upper'."""
  from math import comb as _comb
  kind = "symmetric" if kind is None else kind
  lower = np.array([[_comb(i, j) for j in range(n)] for i in range(n)], dtype=float)
  if kind == "lower":
    out = lower
  elif kind == "upper":
    out = lower.T
  elif kind == "symmetric":
    out = lower @ lower.T
  else:
    raise ValueError("kind must be 'symmetric', 'upper', or 'lower'")
  return jnp.asarray(out)


def invpascal(n, kind=None):
  """The inverse of ``pascal(n, kind)`` (exact integers, as floats)."""
  from math import comb as _comb
  kind = "symmetric" if kind is None else kind
  lower_inv = np.array([[(-1) ** (i + j) * _comb(i, j) for j in range(n)]
                        for i in range(n)], dtype=float)
  if kind == "lower":
    out = lower_inv
  elif kind == "upper":
    out = lower_inv.T
  elif kind == "symmetric":
    out = lower_inv.T @ lower_inv
  else:
    raise ValueError("'kind' must be 'symmetric', 'upper' or 'lower'.")
  return jnp.asarray(out)


def leslie(f, s):
  """The Leslie matrix with fecundities ``f`` (first row) and survivals ``s``
  (subdiagonal)."""
  f, s = jnp.asarray(f), jnp.asarray(s)
  n = f.shape[-1]
  if s.shape[-1] != n - 1:
    raise ValueError("Incorrect lengths for f and s.  The length of s must be one less "
                     "than the length of f.")
  dtype = jnp.result_type(f, s, 1.0)
  out = jnp.zeros(f.shape[:-1] + (n, n), dtype)
  out = out.at[..., 0, :].set(f.astype(dtype))
  return out.at[..., np.arange(1, n), np.arange(n - 1)].set(s.astype(dtype))


# -- Schur and Hessenberg forms and the functions built on them ---------------------------
def _complex_dtype(dtype):
  """JAX's ``dtypes.to_complex_dtype``: complex128 from 64-bit types, else complex64."""
  inexact = dtypes.to_inexact_dtype(dtype)
  wide = inexact in (np.dtype(np.float64), np.dtype(np.complex128))
  return np.dtype(np.complex128 if wide else np.complex64)


def schur(a, output="real"):
  """Schur decomposition ``a = z t z^H`` (``scipy.linalg.schur``).

  Parameters
  ----------
  a : array of shape (..., N, N), floating or complex
  output : 'real' or 'complex'
    'real' (default): ``t`` is quasi-upper-triangular for real ``a`` (2x2 diagonal blocks
    for complex conjugate eigenvalue pairs); 'complex': ``a`` is taken as complex and
    ``t`` is upper triangular.

  Returns
  -------
  list of Array
    ``[t, z]``, ``z`` unitary.
  """
  if output not in ("real", "complex"):
    raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got "
                     f"output={output!r}.")
  a = jnp.asarray(a)
  if output == "complex":
    a = a.astype(_complex_dtype(a.dtype))
  return lax_linalg.schur(a)


def _first_eigenvalue(block):
  """The eigenvalue of a 2x2 block that LAPACK's geev lists first for a block in real
  Schur form (equal diagonal entries): ``mean + sqrt(disc)`` on the principal branch, in
  closed form rather than an eigendecomposition inside the loop."""
  a, b, c, d = block[0, 0], block[0, 1], block[1, 0], block[1, 1]
  half = (a - d) / 2
  # (adding a complex zero turns a -0.0 imaginary part into +0.0: the branch cut's +i side)
  disc = half * half + b * c + jnp.zeros((), block.dtype)
  return (a + d) / 2 + jnp.sqrt(disc)


def _givens_2x2_update(m, t, z):
  """Zero ``t[m, m-1]`` of a real Schur form's 2x2 block by a complex rotation built from
  the block's first eigenvalue (SciPy's rsf2csf step)."""
  n = t.shape[0]
  mu = _first_eigenvalue(lax_indexing.dynamic_slice(t, (m - 1, m - 1), (2, 2))) - t[m, m]
  r = jnp.linalg.norm(jnp.array([mu, t[m, m - 1]])).astype(t.dtype)
  c, s = mu / r, t[m, m - 1] / r
  g = jnp.array([[c.conj(), s], [-s, c]], dtype=t.dtype)
  rows = lax_indexing.dynamic_slice_in_dim(t, m - 1, 2, axis=0)
  right = jnp.arange(n) >= m - 1
  rows = jnp.where(~right, rows, g @ jnp.where(right, rows, 0))
  t = lax_indexing.dynamic_update_slice_in_dim(t, rows, m - 1, axis=0)
  cols = lax_indexing.dynamic_slice_in_dim(t, m - 1, 2, axis=1)
  above = jnp.arange(n)[:, None] < m + 1
  cols = jnp.where(~above, cols, jnp.where(above, cols, 0) @ g.conj().T)
  t = lax_indexing.dynamic_update_slice_in_dim(t, cols, m - 1, axis=1)
  z_cols = lax_indexing.dynamic_slice_in_dim(z, m - 1, 2, axis=1)
  z = lax_indexing.dynamic_update_slice_in_dim(z, z_cols @ g.conj().T, m - 1, axis=1)
  return t, z


def _rsf2csf_2d(t, z):
  dtype = jnp.result_type(t, z, 1j)
  t, z = t.astype(dtype), z.astype(dtype)
  eps = dtypes.finfo(dtype).eps
  n = t.shape[0]
  if n == 1:
    return t, z

  def step(i, tz):
    m = n - i
    t, z = tz
    big = jnp.abs(t[m, m - 1]) > eps * (jnp.abs(t[m - 1, m - 1]) + jnp.abs(t[m, m]))
    t, z = control_flow.cond(big, _givens_2x2_update, lambda m, t, z: (t, z), m, t, z)
    return t.at[m, m - 1].set(0.0), z
  return control_flow.fori_loop(1, n, step, (t, z))


def rsf2csf(T, Z, check_finite=True):
  """Convert a real Schur form to a complex one (``scipy.linalg.rsf2csf``).

  Parameters
  ----------
  T, Z : arrays of shape (..., N, N)
    The real Schur form and its Schur vectors (as ``schur`` gives them); batch axes
    broadcast.
  check_finite : bool
    Unused.

  Returns
  -------
  tuple of Array
    ``(T, Z)`` in a complex dtype, ``T`` upper triangular.
  """
  t, z = jnp.asarray(T), jnp.asarray(Z)
  if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
    raise ValueError("Input 'T' must be square.")
  if z.ndim < 2 or z.shape[-1] != z.shape[-2]:
    raise ValueError("Input 'Z' must be square.")
  if t.shape[-1] != z.shape[-1]:
    raise ValueError(f"Input array shapes must match: Z: {z.shape} vs. T: {t.shape}")
  return jnp.vectorize(_rsf2csf_2d, signature="(n,n),(n,n)->(n,n),(n,n)")(t, z)


def hessenberg(a, *, calc_q=False, overwrite_a=False, check_finite=True):
  """Hessenberg form ``a = q h q^H`` (``scipy.linalg.hessenberg``), ``h`` zero below its
  first subdiagonal.

  Parameters
  ----------
  a : array of shape (..., N, N)
  calc_q : bool
    Also return the unitary ``q`` (default False).
  overwrite_a, check_finite : bool
    Unused.

  Returns
  -------
  Array or tuple of Array
    ``h``, or ``(h, q)`` when ``calc_q``.
  """
  a = jnp.asarray(a)
  if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
    raise ValueError(f"hessenberg expects square matrices (..., N, N), got shape "
                     f"{a.shape}.")
  n = a.shape[-1]
  if n == 0:
    return (jnp.zeros_like(a), jnp.zeros_like(a)) if calc_q else jnp.zeros_like(a)
  a_out, taus = lax_linalg.hessenberg(a)
  h = jnp.triu(a_out, -1)
  if not calc_q:
    return h
  reflectors = a_out[..., 1:, :-1]
  batch = a_out.shape[:-2]
  if batch:
    q = jnp.vectorize(lax_linalg.householder_product, signature="(m,k),(k)->(m,k)")(
        reflectors, taus)
  else:
    q = lax_linalg.householder_product(reflectors, taus)
  dtype = a_out.dtype
  q = jnp.block([[jnp.ones(batch + (1, 1), dtype), jnp.zeros(batch + (1, n - 1), dtype)],
                 [jnp.zeros(batch + (n - 1, 1), dtype), q]])
  return h, q


def _upper_pairs(n, by_diagonal):
  """The strictly upper entries (i, j) in the order the Schur recurrences fill them:
  column by column, bottom up (``by_diagonal=False``), or superdiagonal by superdiagonal."""
  if by_diagonal:
    pairs = [(i, i + p) for p in range(1, n) for i in range(n - p)]
  else:
    pairs = [(i, j) for j in range(n) for i in range(j - 1, -1, -1)]
  return (np.array([i for i, _ in pairs], np.int32),
          np.array([j for _, j in pairs], np.int32))


def _sqrtm_triu(t):
  """The upper triangular square root of upper triangular ``t`` (Bjorck and Hammarling,
  1983): ``u[i, j] = (t[i, j] - sum_{i<k<j} u[i, k] u[k, j]) / (u[i, i] + u[j, j])``."""
  diag = jnp.sqrt(jnp.diag(t))
  n = diag.size
  is_, js = _upper_pairs(n, by_diagonal=False)
  ks = jnp.arange(n)

  def entry(step, u):
    i, j = jnp.asarray(is_)[step], jnp.asarray(js)[step]
    inside = (ks > i) & (ks < j)
    s = jnp.sum(jnp.where(inside, u[i] * u[:, j], 0))
    value = jnp.where(t[i, j] == s, 0.0, (t[i, j] - s) / (diag[i] + diag[j]))
    return u.at[i, j].set(value)
  u = jnp.diag(diag)
  return control_flow.fori_loop(0, len(is_), entry, u) if len(is_) else u


def _sqrtm_2d(a):
  t, z = schur(a, output="complex")
  root = _sqrtm_triu(t)
  return jnp.matmul(jnp.matmul(z, root, precision=Precision.HIGHEST), jnp.conj(z.T),
                    precision=Precision.HIGHEST)


def sqrtm(A, blocksize=1):
  """Matrix square root by the complex Schur method (``scipy.linalg.sqrtm``).

  Parameters
  ----------
  A : array of shape (..., N, N)
  blocksize : int
    Only 1 (no recursive blocking), as in JAX.

  Returns
  -------
  Array
    ``X`` with ``X @ X == A``, in a complex dtype.
  """
  if blocksize > 1:
    raise NotImplementedError("Blocked version is not implemented yet.")
  a = jnp.asarray(A)
  if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
    raise ValueError(f"sqrtm expects square matrices (..., N, N), got shape {a.shape}.")
  return jnp.vectorize(_sqrtm_2d, signature="(n,n)->(n,n)")(a)


def _parlett(f, t):
  """Parlett's recurrence (Golub and Van Loan, algorithm 11.1.1): the strictly upper part
  of ``func(t)`` from its diagonal ``f``, and the smallest eigenvalue gap it divided by."""
  n = t.shape[0]
  is_, js = _upper_pairs(n, by_diagonal=True)
  ks = jnp.arange(n)

  def entry(step, state):
    f, minden = state
    i, j = jnp.asarray(is_)[step], jnp.asarray(js)[step]
    s = t[i, j] * (f[j, j] - f[i, i])
    inside = (ks > i) & (ks < j)
    s = s + (jnp.where(inside, t[i], 0) @ jnp.where(inside, f[:, j], 0)
             - jnp.where(inside, f[i], 0) @ jnp.where(inside, t[:, j], 0))
    den = t[j, j] - t[i, i]
    s = jnp.where(den != 0, s / den, s)
    return f.at[i, j].set(s), jnp.minimum(minden, jnp.abs(den))
  state = (f, jnp.abs(t[0, 0]))
  return control_flow.fori_loop(0, len(is_), entry, state) if len(is_) else state


def funm(A, func, disp=True):
  """A matrix function by Schur-Parlett (``scipy.linalg.funm``): ``func`` evaluated on
  the eigenvalues of ``A``.

  Parameters
  ----------
  A : array of shape (N, N)
  func : callable
    Maps an array of (complex) eigenvalues to an array of the same shape.
  disp : bool
    If False, also return an estimate of the relative error (nothing is printed).

  Returns
  -------
  Array or tuple of Array
    ``func(A)`` in a complex dtype, and the error estimate when ``disp`` is False.
  """
  a = jnp.asarray(A)
  if a.ndim != 2 or a.shape[0] != a.shape[1]:
    raise ValueError("expected square array_like input")
  t, z = schur(a)
  t, z = rsf2csf(t, z)
  f = jnp.diag(func(jnp.diag(t))).astype(t.dtype)
  f, minden = _parlett(f, t)
  f = z @ f @ z.conj().T
  if disp:
    return f
  tol = dtypes.finfo(np.float32 if f.dtype == np.complex64 else np.float64).eps
  minden = jnp.where(minden == 0.0, tol, minden)
  err = jnp.where(jnp.any(jnp.isinf(f)), np.inf, jnp.minimum(1, jnp.maximum(
      tol, (tol / minden) * jnp.linalg.norm(jnp.triu(t, 1), 1))))
  return f, err
