"""More of ``jax.lax.linalg``, composed from the decomposition primitives and
``jaxlite.numpy``: Householder reductions to Hessenberg and tridiagonal form with
LAPACK's packed outputs, Householder products, ``ormqr``, rank-one Cholesky updates,
pivot conversion, a polar decomposition under ``qdwh``'s name, and tridiagonal solves.

The Householder reductions loop in Python over the (static) columns, so they suit small
matrices; they take one matrix (``vmap`` them for batches). Being built on
``jaxlite.numpy``, the module sits in the library layer, not in ``lax``.
"""
from __future__ import annotations

import enum

import numpy as np

from jaxlite._src import dtypes
from jaxlite._src.lax import control_flow
from jaxlite._src.lax import linalg as lax_linalg
from jaxlite._src.numpy import extras
from jaxlite._src.numpy import namespace as jnp

__all__ = ["EigImplementation", "EighImplementation", "SvdAlgorithm", "cholesky_update",
           "hessenberg", "householder_product", "lu_pivots_to_permutation", "ormqr", "qdwh",
           "symmetric_product", "tridiagonal", "tridiagonal_solve"]


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


def _mT(x):
  return jnp.swapaxes(x, -1, -2)


def _matrix(name, a):
  a = jnp.asarray(a)
  if a.ndim != 2 or a.shape[0] != a.shape[1]:
    raise ValueError(f"{name} takes one square matrix (vmap it for batches), got shape "
                     f"{a.shape}")
  return a if jnp.issubdtype(a.dtype, jnp.inexact) else a.astype(jnp.result_type(a, 1.0))


def _householder(x):
  """LAPACK's dlarfg on ``x = [alpha, rest]``: ``(beta, tau, v)`` with
  ``(I - tau [1; v][1; v]^H) x = [beta, 0...]``."""
  alpha, rest = x[0], x[1:]
  xnorm = jnp.sqrt(jnp.sum(jnp.abs(rest) ** 2))
  norm = jnp.sqrt(jnp.abs(alpha) ** 2 + xnorm ** 2)
  sign = jnp.where(jnp.real(alpha) >= 0, 1.0, -1.0).astype(norm.dtype)
  beta = -sign * norm
  trivial = xnorm == 0
  safe_beta = jnp.where(trivial, 1.0, beta)
  tau = jnp.where(trivial, 0.0, (beta - alpha) / safe_beta)
  v = jnp.where(trivial, 0.0, rest / jnp.where(trivial, 1.0, alpha - beta))
  return jnp.where(trivial, alpha, beta).astype(x.dtype), tau.astype(x.dtype), v


def _reduce(a, symmetric):
  n = a.shape[0]
  taus = []
  for k in range(n - 2):
    beta, tau, v = _householder(a[k + 1:, k])
    u = jnp.concatenate([jnp.ones((1,), a.dtype), v])
    # H = I - tau u u^H, applied from the left to rows k+1: and from the right to
    # columns k+1: (a similarity transform)
    block = a[k + 1:, :]
    block = block - tau * jnp.outer(u, jnp.conj(u) @ block)
    a = a.at[k + 1:, :].set(block)
    cols = a[:, k + 1:]
    cols = cols - jnp.conj(tau) * jnp.outer(cols @ u, jnp.conj(u))
    a = a.at[:, k + 1:].set(cols)
    a = a.at[k + 1, k].set(beta).at[k + 2:, k].set(v)
    taus.append(tau)
  taus.append(jnp.zeros((), a.dtype))
  return a, jnp.stack(taus) if n > 1 else jnp.zeros((0,), a.dtype)


def hessenberg(a):
  """Reduce a square matrix to upper Hessenberg form by Householder similarity
  transforms: ``(a, taus)`` packed as LAPACK's ``gehrd`` (the reflectors' vectors below
  the first subdiagonal)."""
  return _reduce(_matrix("hessenberg", a), False)


def tridiagonal(a, *, lower=True):
  """Reduce a Hermitian matrix to real symmetric tridiagonal form: ``(arr, d, e,
  taus)`` packed as LAPACK's ``sytrd`` with ``uplo='L'`` (only ``lower=True``)."""
  if not lower:
    raise NotImplementedError("tridiagonal: only lower=True is implemented")
  a = _matrix("tridiagonal", a)
  reduced, taus = _reduce(a, True)
  n = a.shape[0]
  d = jnp.real(jnp.diagonal(reduced))
  e = jnp.real(jnp.diagonal(reduced, -1))
  arr = jnp.triu(a, 1) + jnp.tril(reduced)
  return arr, d, e, taus[:max(n - 1, 0)]


def householder_product(a, taus):
  """The first ``n`` columns of ``H_0 H_1 ... H_{k-1}``, ``H_i = I - taus[i] v_i
  v_i^H``, with ``v_i`` stored below the diagonal of column ``i`` of ``a`` (``m x n``),
  as LAPACK's ``orgqr``."""
  a, taus = jnp.asarray(a), jnp.asarray(taus)
  m, n = a.shape[-2:]
  q = jnp.eye(m, n, dtype=a.dtype)
  for i in range(taus.shape[-1] - 1, -1, -1):
    v = jnp.concatenate([jnp.zeros((i,), a.dtype), jnp.ones((1,), a.dtype), a[i + 1:, i]])
    q = q - taus[i] * jnp.outer(v, jnp.conj(v) @ q)
  return q


def ormqr(a, taus, c, *, left=True, transpose=False):
  """Multiply ``c`` by the ``Q`` of a packed QR factorization (``a``, ``taus``):
  ``Q c``, ``Q^H c``, ``c Q`` or ``c Q^H``."""
  a, c = jnp.asarray(a), jnp.asarray(c)
  m = a.shape[-2]
  full = jnp.pad(a, ((0, 0), (0, max(m - a.shape[-1], 0))))[:, :m]
  taus = jnp.pad(jnp.asarray(taus), (0, m - jnp.asarray(taus).shape[-1]))
  q = householder_product(full, taus)
  q = jnp.conj(_mT(q)) if transpose else q
  return q @ c if left else c @ q


def lu_pivots_to_permutation(pivots, permutation_size):
  """The permutation that LAPACK-style row-swap ``pivots`` (row ``i`` swapped with
  ``pivots[i]`` in turn) apply to ``range(permutation_size)``."""
  pivots = jnp.asarray(pivots)
  batch = pivots.shape[:-1]

  def body(i, perm):
    j = pivots[..., i]
    pi = jnp.take_along_axis(perm, jnp.full(batch + (1,), i), -1)
    pj = jnp.take_along_axis(perm, j[..., None], -1)
    perm = extras.put_along_axis(perm, jnp.full(batch + (1,), i), pj, -1, inplace=False)
    return extras.put_along_axis(perm, j[..., None], pi, -1, inplace=False)

  init = jnp.broadcast_to(jnp.arange(permutation_size, dtype=pivots.dtype),
                          batch + (permutation_size,))
  return control_flow.fori_loop(0, pivots.shape[-1], body, init)


def cholesky_update(r_matrix, w_vector):
  """The upper Cholesky factor of ``R^H R + w w^H`` given the upper factor ``R``
  (recomputed with a fresh Cholesky decomposition)."""
  r, w = jnp.asarray(r_matrix), jnp.asarray(w_vector)
  a = jnp.conj(_mT(r)) @ r + jnp.outer(w, jnp.conj(w))
  return jnp.conj(_mT(lax_linalg.cholesky(a)))


def symmetric_product(a_matrix, c_matrix, *, alpha=1.0, beta=0.0,
                      symmetrize_output=False):
  """``alpha * a @ a^T + beta * c`` (symmetrized exactly when ``symmetrize_output``)."""
  a, c = jnp.asarray(a_matrix), jnp.asarray(c_matrix)
  out = alpha * (a @ _mT(a)) + beta * c
  return (out + _mT(out)) / 2 if symmetrize_output else out


def tridiagonal_solve(dl, d, du, b, *, perturb_singular=False):
  """Solve ``T x = b`` for the tridiagonal ``T`` with sub-, main and super-diagonals
  ``dl``, ``d``, ``du`` (``dl[0]`` and ``du[-1]`` ignored), by the Thomas algorithm
  (no pivoting) as a scan down and back up the rows."""
  dl, d, du, b = (jnp.asarray(v) for v in (dl, d, du, b))
  m = d.shape[-1]
  dl = dl.at[..., 0].set(0)
  du = du.at[..., m - 1].set(0)
  rows = lambda v: jnp.moveaxis(v, -1, 0)

  def forward(carry, xs):
    cp, dp = carry
    a_i, b_i, c_i, d_i = xs
    denom = b_i - a_i * cp
    if perturb_singular:
      denom = jnp.where(denom == 0, dtypes.finfo(denom.dtype).eps, denom)
    cp = c_i / denom
    dp = (d_i - a_i[..., None] * dp) / denom[..., None]
    return (cp, dp), (cp, dp)

  zero_c = jnp.zeros(d.shape[:-1], d.dtype)
  zero_d = jnp.zeros(b.shape[:-2] + b.shape[-1:], b.dtype)
  _, (cps, dps) = control_flow.scan(forward, (zero_c, zero_d),
                                    (rows(dl), rows(d), rows(du), jnp.moveaxis(b, -2, 0)))

  def backward(x_next, xs):
    cp, dp = xs
    x = dp - cp[..., None] * x_next
    return x, x

  _, xs = control_flow.scan(backward, jnp.zeros_like(zero_d), (cps, dps), reverse=True)
  return jnp.moveaxis(xs, 0, -2)


def qdwh(x, *, is_hermitian=False, max_iterations=None, eps=None, dynamic_shape=None):
  """Polar decomposition ``x = u h``: ``(u, h, num_iters, is_converged)``. Computed from
  the SVD here (so ``num_iters`` is 0 and ``is_converged`` True), not by QDWH
  iterations."""
  x = jnp.asarray(x)
  w, s, vh = jnp.linalg.svd(x, full_matrices=False)
  u = w @ vh
  h = (jnp.conj(_mT(vh)) * s[..., None, :]) @ vh
  return u, h, 0, True
