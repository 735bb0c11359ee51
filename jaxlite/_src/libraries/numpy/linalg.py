"""``jaxlite.numpy.linalg``: NumPy's linear algebra on top of ``lax.linalg``.

Matrices are the trailing two axes; every function maps over leading axes. Solves go
through LU with partial pivoting and two triangular solves, so their gradients come
from the primitives' rules (JAX uses ``custom_linear_solve`` for the same effect).
"""
from __future__ import annotations

import builtins
import operator
from typing import NamedTuple

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.core.array import Array
from jaxlite._src.lax import elementwise as lax_ew
from jaxlite._src.lax import linalg as lax_linalg
from jaxlite._src.lax.call import staged
from jaxlite._src.lax import reductions as lax_red
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.libraries.numpy import array_ops
from jaxlite._src.libraries.numpy import creation
from jaxlite._src.libraries.numpy import lax_numpy as lnp
from jaxlite._src.libraries.numpy import math as _math
from jaxlite._src.libraries.numpy import reductions as red
from jaxlite._src.libraries.numpy import sorting
from jaxlite._src.libraries.numpy import ufuncs
from jaxlite._src.libraries.numpy.util import (as_operand, canonicalize_axis, check_arraylike,
                                     promote_dtypes_inexact)

__all__ = [
    "norm", "vector_norm", "matrix_norm", "inv", "solve", "det", "slogdet", "cholesky",
    "qr", "svd", "svdvals", "eigh", "eigvalsh", "eig", "eigvals", "lstsq", "pinv",
    "matrix_power", "matrix_rank", "multi_dot", "tensorsolve", "tensorinv", "cross",
    "outer", "trace", "diagonal", "matmul", "matrix_transpose", "vecdot", "tensordot",
    "cond", "LinAlgError",
]

LinAlgError = np.linalg.LinAlgError


# The decompositions return these named tuples, as JAX's do (the Array API names the
# fields): they unpack like plain tuples and are pytrees.
class SVDResult(NamedTuple):
  U: Array
  S: Array
  Vh: Array


class QRResult(NamedTuple):
  Q: Array
  R: Array


class EighResult(NamedTuple):
  eigenvalues: Array
  eigenvectors: Array


class EigResult(NamedTuple):
  eigenvalues: Array
  eigenvectors: Array


class SlogdetResult(NamedTuple):
  sign: Array
  logabsdet: Array


def _inexact(name, *args):
  check_arraylike(name, *args)
  return promote_dtypes_inexact(*args)


def _square(name, a):
  if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
    raise ValueError(f"Argument to {name}() must have shape [..., n, n], got {a.shape}.")


def _T(x):
  return lnp.swapaxes(x, -1, -2)


def _H(x):
  return ufuncs_conj(_T(x)) if dtypes.is_complex(x.dtype) else _T(x)


def ufuncs_conj(x):
  return _math.conj(x)


# ----------------------------------------------------------------------------- decompositions

@staged(static_argnames=('upper', 'symmetrize_input'))
def cholesky(a, *, upper=False, symmetrize_input=True):
  """Cholesky factor of a Hermitian positive-definite matrix (lower, or upper if asked)."""
  (a,) = _inexact("jnp.linalg.cholesky", a)
  _square("cholesky", a)
  L = lax_linalg.cholesky(a, symmetrize_input=symmetrize_input)
  return _H(L) if upper else L


@staged(static_argnames=('mode',))
def qr(a, mode="reduced"):
  """QR decomposition; ``mode`` is 'reduced', 'complete', 'r' or 'raw'.

  Parameters
  ----------
  a : array_like
    The (..., M, N) matrices.
  mode : str
    'reduced' (and its alias 'full'): ``(q, r)`` with ``K = min(M, N)`` columns of ``q``;
    'complete': ``q`` is (..., M, M); 'r': ``r`` alone; 'raw': LAPACK's packed form
    ``(h, tau)``, ``h`` of shape (..., N, M) (transposed, as NumPy's) and ``tau`` (..., K).

  Returns
  -------
  QRResult or Array
  """
  (a,) = _inexact("jnp.linalg.qr", a)
  if mode == "raw":
    h, taus = lax_linalg.geqrf(a)
    return QRResult(_T(h), taus)
  if mode == "full":
    mode = "reduced"
  if mode not in ("reduced", "complete", "r"):
    raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
  q, r = lax_linalg.qr(a, full_matrices=mode == "complete")
  return r if mode == "r" else QRResult(q, r)


@staged(static_argnames=("full_matrices", "compute_uv", "hermitian", "subset_by_index"))
def svd(a, full_matrices=True, compute_uv=True, hermitian=False, subset_by_index=None):
  """Singular value decomposition ``a = u @ diag(s) @ vh``; ``s`` descends."""
  (a,) = _inexact("jnp.linalg.svd", a)
  out = lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv,
                       subset_by_index=subset_by_index)
  return SVDResult(*out) if compute_uv else out


def svdvals(x, /):
  """Singular values, descending."""
  return svd(x, compute_uv=False)


@staged(static_argnames=('UPLO', 'symmetrize_input'))
def eigh(a, UPLO=None, symmetrize_input=True):
  """Eigenvalues (ascending) and eigenvectors of a Hermitian matrix: ``(w, v)``."""
  (a,) = _inexact("jnp.linalg.eigh", a)
  _square("eigh", a)
  lower = UPLO in (None, "L")
  if UPLO not in (None, "L", "U"):
    raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")
  v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
  return EighResult(w, v)


@staged(static_argnames=('UPLO', 'symmetrize_input'))
def eigvalsh(a, UPLO="L", *, symmetrize_input=True):
  """Eigenvalues of a Hermitian matrix, ascending."""
  return eigh(a, UPLO, symmetrize_input)[0]


def eig(a):
  """Eigenvalues and right eigenvectors of a general matrix (complex; not
  differentiable in jaxlite)."""
  (a,) = _inexact("jnp.linalg.eig", a)
  _square("eig", a)
  w, v = lax_linalg.eig(a, compute_left_eigenvectors=False)
  return EigResult(w, v)


@staged
def eigvals(a):
  """Eigenvalues of a general matrix (complex)."""
  (a,) = _inexact("jnp.linalg.eigvals", a)
  _square("eigvals", a)
  return lax_linalg.eig(a, compute_left_eigenvectors=False,
                        compute_right_eigenvectors=False)[0]


# ----------------------------------------------------------------------------- solves

def _lu_solve(lu, perm, b):
  """Solve ``a x = b`` for ``b`` of shape (..., n, k) given ``lu(a)``."""
  n = lu.shape[-1]
  batch = lu.shape[:-2]
  # b's rows in the pivoted order: a one-hot product, so b may be traced and batched
  onehot = ufuncs.equal(lnp.expand_dims(perm, -1),
                        lax_shapes.broadcasted_iota(perm.dtype, batch + (n, n), len(batch) + 1))
  pb = lnp.matmul(lnp.astype(onehot, b.dtype), b)
  x = lax_linalg.triangular_solve(lu, pb, left_side=True, lower=True, unit_diagonal=True)
  return lax_linalg.triangular_solve(lu, x, left_side=True, lower=False)


@staged
def solve(a, b):
  """Solve ``a @ x = b`` (``b`` of shape (..., n) or (..., n, k))."""
  a, b = _inexact("jnp.linalg.solve", a, b)
  _square("solve", a)
  if b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape[-1] == a.shape[-1] and b.ndim >= 1
                     and b.shape[:-1] == a.shape[:-2]):
    vector = True
    b = lnp.expand_dims(b, -1)
  else:
    vector = False
  if b.shape[-2] != a.shape[-1]:
    raise ValueError(f"inconsistent size for core dimension 'm': {b.shape[-2]} vs "
                     f"{a.shape[-1]} in jnp.linalg.solve of a {a.shape} by b "
                     f"{b.shape[:-1] if vector else b.shape}.")
  batch = lnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
  a = lnp.broadcast_to(a, batch + a.shape[-2:])
  b = lnp.broadcast_to(b, batch + b.shape[-2:])
  lu, _, perm = lax_linalg.lu(a)
  x = _lu_solve(lu, perm, b)
  return lax_shapes.squeeze(x, (x.ndim - 1,)) if vector else x


@staged
def inv(a):
  """Inverse of a square matrix."""
  (a,) = _inexact("jnp.linalg.inv", a)
  _square("inv", a)
  eye = lnp.broadcast_to(creation.eye(a.shape[-1], dtype=a.dtype), a.shape)
  return solve(a, eye)


@staged
def det(a):
  """Determinant, through LU: the product of U's diagonal with the permutation's sign."""
  (a,) = _inexact("jnp.linalg.det", a)
  _square("det", a)
  sign, logdet = _lu_sign_and_diag(a)
  return ufuncs.multiply(sign, red.prod(logdet, axis=-1))


def _lu_sign_and_diag(a):
  lu, pivots, _ = lax_linalg.lu(a)
  diag = array_ops.diagonal(lu, 0, -2, -1)
  swaps = red.sum(ufuncs.not_equal(pivots, lax_shapes.broadcasted_iota(
      pivots.dtype, pivots.shape, pivots.ndim - 1)), axis=-1)
  parity = ufuncs.remainder(swaps, 2)
  sign = lnp.astype(ufuncs.subtract(1, ufuncs.multiply(2, parity)), a.dtype)
  return sign, diag


@staged(static_argnames=('method',))
def slogdet(a, *, method=None):
  """Sign and natural log of the absolute determinant: ``(sign, logabsdet)``."""
  (a,) = _inexact("jnp.linalg.slogdet", a)
  _square("slogdet", a)
  sign, diag = _lu_sign_and_diag(a)
  absdiag = ufuncs.abs(diag)
  logdet = red.sum(ufuncs.log(absdiag), axis=-1)
  if dtypes.is_complex(a.dtype):
    sign = ufuncs.multiply(sign, red.prod(ufuncs.true_divide(diag, absdiag), axis=-1))
  else:
    sign = ufuncs.multiply(sign, red.prod(ufuncs.sign(diag), axis=-1))
  zero = red.any(ufuncs.equal(diag, 0), axis=-1)
  sign = lnp.where(zero, lnp.astype(0, sign.dtype), sign)
  logdet = lnp.where(zero, lnp.astype(-np.inf, logdet.dtype), logdet)
  return SlogdetResult(sign, logdet)


def lstsq(a, b, rcond=None, *, numpy_resid=False):
  """Least-squares solution of ``a @ x = b`` via the SVD.

  Returns ``(x, residuals, rank, s)``; like JAX, ``residuals`` is computed for every
  case unless ``numpy_resid`` asks for NumPy's empty array when rank-deficient.
  """
  a, b = _inexact("jnp.linalg.lstsq", a, b)
  if a.ndim != 2:
    raise TypeError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
  b_vec = b.ndim == 1
  if b_vec:
    b = lnp.expand_dims(b, 1)
  m, n = a.shape
  dtype = a.dtype
  u, s, vt = svd(a, full_matrices=False)
  if rcond is None:
    eps = float(np.finfo(dtype).eps)
    rcond = eps * builtins.max(m, n)
  smax = red.max(s, initial=0.0) if s.shape[0] else Array(np.zeros((), s.dtype))
  mask = ufuncs.greater_equal(s, ufuncs.multiply(rcond, smax)) if s.shape[0] else s
  rank = lnp.astype(red.sum(mask), dtypes.default_int_dtype())
  safe_s = lnp.where(mask, s, lnp.astype(1, s.dtype))
  s_inv = lnp.where(mask, ufuncs.true_divide(1, safe_s), lnp.astype(0, s.dtype))
  uTb = lnp.matmul(_H(u), b)
  x = lnp.matmul(_H(vt), ufuncs.multiply(lnp.expand_dims(lnp.astype(s_inv, dtype), 1), uTb))
  resid = red.sum(ufuncs.square(ufuncs.abs(ufuncs.subtract(b, lnp.matmul(a, x)))), axis=0)
  if numpy_resid and (int(rank) < n or m <= n):
    resid = Array(np.zeros((0,), resid.dtype))
  if b_vec:
    x = lax_shapes.squeeze(x, (1,))
    if resid.shape != (0,):
      resid = lnp.reshape(resid, (1,)) if resid.ndim else resid
  return x, resid, rank, s


def pinv(a, rtol=None, hermitian=False, *, rcond=None):
  """Moore-Penrose pseudo-inverse via the SVD; singular values below ``rtol * max(s)``
  are treated as zero."""
  (a,) = _inexact("jnp.linalg.pinv", a)
  if rcond is not None:
    rtol = rcond
  m, n = a.shape[-2:]
  if m == 0 or n == 0:
    return creation.zeros(a.shape[:-2] + (n, m), a.dtype)
  u, s, vh = svd(a, full_matrices=False)
  if rtol is None:
    rtol = 10.0 * builtins.max(m, n) * float(np.finfo(a.dtype).eps)
  cutoff = ufuncs.multiply(rtol, red.max(s, axis=-1, keepdims=True))
  keep = ufuncs.greater(s, cutoff)
  s_inv = lnp.where(keep, ufuncs.true_divide(1, lnp.where(keep, s, lnp.astype(1, s.dtype))),
                    lnp.astype(0, s.dtype))
  return lnp.matmul(_H(vh), ufuncs.multiply(lnp.expand_dims(lnp.astype(s_inv, a.dtype), -1),
                                            _H(u)))


@staged(static_argnames=('n',))
def matrix_power(a, n):
  """``a`` raised to the static integer power ``n`` (by repeated squaring)."""
  a = as_operand(a)
  _square("matrix_power", a)
  n = core.concrete_or_error(operator.index, n, "matrix_power requires a static exponent.")
  if n == 0:
    return lnp.broadcast_to(creation.eye(a.shape[-1], dtype=a.dtype), a.shape)
  if n < 0:
    a, n = inv(a), -n
  result, z = None, a
  while True:
    if n % 2:
      result = z if result is None else lnp.matmul(result, z)
    n //= 2
    if not n:
      return result
    z = lnp.matmul(z, z)


@staged(static_argnames=('hermitian',))
def matrix_rank(M, rtol=None, *, hermitian=False, tol=None):
  """Number of singular values above ``rtol * max(s)``; for a ``hermitian`` matrix the
  singular values are the eigenvalues' magnitudes, found with ``eigvalsh``."""
  (M,) = _inexact("jnp.linalg.matrix_rank", M)
  if tol is not None:
    rtol = tol
  if M.ndim < 2:
    return lnp.astype(red.any(ufuncs.not_equal(M, 0)), dtypes.default_int_dtype())
  s = _hermitian_singular_values(M) if hermitian else svdvals(M)
  if rtol is None:
    rtol = float(np.finfo(s.dtype).eps) * builtins.max(M.shape[-2:])
  cutoff = ufuncs.multiply(red.max(s, axis=-1, keepdims=True), rtol)
  return red.sum(ufuncs.greater(s, cutoff), axis=-1)


def _hermitian_singular_values(a):
  """Singular values of Hermitian ``a``, descending: ``|eigenvalues|``, sorted."""
  s = ufuncs.abs(eigvalsh(a))
  return sorting.sort(s, axis=-1, descending=True)


def multi_dot(arrays, *, precision=None):
  """Chain of matrix products in the cheapest order (dynamic programming on shapes)."""
  arrays = [as_operand(a) for a in arrays]
  if len(arrays) < 2:
    raise ValueError("multi_dot requires at least two arrays")
  first_vec, last_vec = arrays[0].ndim == 1, arrays[-1].ndim == 1
  if first_vec:
    arrays[0] = lnp.expand_dims(arrays[0], 0)
  if last_vec:
    arrays[-1] = lnp.expand_dims(arrays[-1], 1)
  dims = [a.shape[0] for a in arrays] + [arrays[-1].shape[1]]
  k = len(arrays)
  cost = [[0] * k for _ in range(k)]
  split = [[0] * k for _ in range(k)]
  for length in range(1, k):
    for i in range(k - length):
      j = i + length
      cost[i][j] = None
      for s in range(i, j):
        c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
        if cost[i][j] is None or c < cost[i][j]:
          cost[i][j], split[i][j] = c, s

  def build(i, j):
    if i == j:
      return arrays[i]
    s = split[i][j]
    return lnp.matmul(build(i, s), build(s + 1, j), precision=precision)
  out = build(0, k - 1)
  if first_vec:
    out = lax_shapes.squeeze(out, (0,))
  if last_vec:
    out = lax_shapes.squeeze(out, (out.ndim - 1,))
  return out


def tensorsolve(a, b, axes=None):
  """Solve ``tensordot(a, x, x.ndim) = b`` for ``x``."""
  a, b = _inexact("jnp.linalg.tensorsolve", a, b)
  if axes is not None:
    axes = [canonicalize_axis(i, a.ndim) for i in axes]
    a = lnp.moveaxis(a, axes, [a.ndim - len(axes) + i for i in range(len(axes))])
  out_shape = a.shape[b.ndim:]
  n = int(np.prod(out_shape, dtype=np.int64))
  x = solve(lnp.reshape(a, (-1, n)), lnp.ravel(b))
  return lnp.reshape(x, out_shape)


def tensorinv(a, ind=2):
  """Inverse of ``a`` seen as a linear map of its first ``ind`` axes."""
  (a,) = _inexact("jnp.linalg.tensorinv", a)
  out_shape = a.shape[ind:] + a.shape[:ind]
  n = int(np.prod(a.shape[:ind], dtype=np.int64))
  return lnp.reshape(inv(lnp.reshape(a, (n, -1))), out_shape)


# ----------------------------------------------------------------------------- norms

def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
  """Vector p-norm over ``axis`` (all axes if None), as JAX computes it."""
  (x,) = _inexact("jnp.linalg.vector_norm", x)
  if ord is None or ord == 2:
    return _sum_of_squares_root(x, axis, keepdims)
  if ord == np.inf:
    return red.max(ufuncs.abs(x), axis=axis, keepdims=keepdims, initial=0)
  if ord == -np.inf:
    return red.min(ufuncs.abs(x), axis=axis, keepdims=keepdims)
  if ord == 0:
    return red.sum(ufuncs.not_equal(x, 0), dtype=dtypes.finfo(x.dtype).dtype, axis=axis,
                   keepdims=keepdims)
  if ord == 1:
    return red.sum(ufuncs.abs(x), axis=axis, keepdims=keepdims)
  if isinstance(ord, str):
    hint = {"inf": "Use 'jax.numpy.inf' instead.", "-inf": "Use '-jax.numpy.inf' instead."}
    raise ValueError(f"Invalid order '{ord}' for vector norm.{hint.get(ord, '')}")
  absx = ufuncs.abs(x)
  p = np.array(ord, absx.dtype)
  return ufuncs.power(red.sum(absx ** p, axis=axis, keepdims=keepdims),
                      np.array(1. / p, absx.dtype))


def _sum_of_squares_root(x, axis, keepdims):
  """``sqrt(sum(real(x * conj(x))))``: JAX's 2-norm and Frobenius norm."""
  return ufuncs.sqrt(red.sum(_math.real(x * _math.conj(x)), axis=axis, keepdims=keepdims))


def matrix_norm(x, /, *, keepdims=False, ord="fro"):
  """Matrix norm over the trailing two axes."""
  return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


@staged(static_argnames=('ord', 'axis', 'keepdims'))
def norm(x, ord=None, axis=None, keepdims=False):
  """Matrix or vector norm (``numpy.linalg.norm``).

  Parameters
  ----------
  x : array_like
  ord : {None, 'fro', 'nuc', inf, -inf, int, float}
  axis : None, int or pair of ints
    None: the 2-norm of the flattened array if ``ord`` is None, else ``x`` must be 1-d
    or 2-d; an int: vector norms; a pair: matrix norms.
  keepdims : bool
  """
  (x,) = _inexact("jnp.linalg.norm", x)
  if axis is None:
    if ord is None:   # (any rank, as NumPy admits)
      return _sum_of_squares_root(x, None, keepdims)
    axis = tuple(range(x.ndim))
  elif isinstance(axis, tuple):
    axis = tuple(canonicalize_axis(a, x.ndim) for a in axis)
  else:
    axis = (canonicalize_axis(axis, x.ndim),)
  if len(axis) == 1:
    return vector_norm(x, ord=2 if ord is None else ord, axis=axis, keepdims=keepdims)
  if len(axis) != 2:
    raise ValueError(f"Improper number of axes for norm: axis={axis!r}. Pass one axis to "
                     "compute a vector-norm, or two axes to compute a matrix-norm.")
  row, col = axis
  if ord is None or ord in ("f", "fro"):
    return _sum_of_squares_root(x, axis, keepdims)
  if ord in (1, -1):   # the largest (smallest) column sum
    if not keepdims and col > row:
      col -= 1
    sums = red.sum(ufuncs.abs(x), axis=row, keepdims=keepdims)
    return (red.max(sums, axis=col, keepdims=keepdims, initial=0) if ord == 1
            else red.min(sums, axis=col, keepdims=keepdims))
  if ord in (np.inf, -np.inf):   # the largest (smallest) row sum
    if not keepdims and row > col:
      row -= 1
    sums = red.sum(ufuncs.abs(x), axis=col, keepdims=keepdims)
    return (red.max(sums, axis=row, keepdims=keepdims, initial=0) if ord == np.inf
            else red.min(sums, axis=row, keepdims=keepdims))
  if ord in ("nuc", 2, -2):
    s = svd(lnp.moveaxis(x, axis, (-2, -1)), compute_uv=False)
    out = (red.max(s, axis=-1, initial=0) if ord == 2 else red.min(s, axis=-1) if ord == -2
           else red.sum(s, axis=-1))
    return lnp.expand_dims(out, axis) if keepdims else out
  raise ValueError(f"Invalid order '{ord}' for matrix norm.")


@staged(static_argnames=('p',))
def cond(x, p=None):
  """Condition number of ``x`` in norm ``p`` (2-norm via singular values by default)."""
  (x,) = _inexact("jnp.linalg.cond", x)
  if p in (None, 2, -2):
    s = svdvals(x)
    big, small = red.max(s, axis=-1), red.min(s, axis=-1)
    return ufuncs.true_divide(big, small) if p != -2 else ufuncs.true_divide(small, big)
  return ufuncs.multiply(norm(x, p, axis=(-2, -1)), norm(inv(x), p, axis=(-2, -1)))


# ----------------------------------------------------------------------------- array API aliases

def cross(x1, x2, /, *, axis=-1):
  """Cross product of 3-vectors along ``axis``."""
  x1, x2 = as_operand(x1), as_operand(x2)
  if x1.shape[axis] != 3 or x2.shape[axis] != 3:
    raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but they "
                     f"have shape {x1.shape} and {x2.shape} along axis {axis}.")
  return array_ops.cross(x1, x2, axis=axis)


def outer(x1, x2, /):
  """Outer product of two 1-d arrays."""
  x1, x2 = as_operand(x1), as_operand(x2)
  if x1.ndim != 1 or x2.ndim != 1:
    raise ValueError(f"Input arrays must be one-dimensional, but they are x1.ndim={x1.ndim} "
                     f"and x2.ndim={x2.ndim}.")
  return _math.outer(x1, x2)


def trace(x, /, *, offset=0, dtype=None):
  """Trace of the trailing two axes."""
  return array_ops.trace(x, offset, -2, -1, dtype)


def diagonal(x, /, *, offset=0):
  """Diagonal of the trailing two axes."""
  return array_ops.diagonal(x, offset, -2, -1)


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
  return lnp.matmul(x1, x2, precision=precision, preferred_element_type=preferred_element_type)


def matrix_transpose(x, /):
  return lnp.matrix_transpose(x)


def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
  """Dot product along ``axis`` with broadcasting (conjugating ``x1``)."""
  x1, x2 = as_operand(x1), as_operand(x2)
  if dtypes.is_complex(x1.dtype):
    x1 = ufuncs_conj(x1)
  return red.sum(ufuncs.multiply(x1, x2), axis=axis)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None,
              out_sharding=None):
  """``jnp.tensordot`` with the Array API's signature (``numpy.linalg.tensordot``)."""
  return array_ops.tensordot(x1, x2, axes, precision=precision,
                             preferred_element_type=preferred_element_type,
                             out_sharding=out_sharding)
