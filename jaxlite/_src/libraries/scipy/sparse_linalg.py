"""``jaxlite.scipy.sparse.linalg`` (``jax.scipy.sparse.linalg``): Krylov solvers.

``cg``, ``gmres`` and ``bicgstab`` solve ``A x = b`` with ``A`` given as a function (or a
square matrix, or anything with ``@``), and ``b`` an array or a pytree of arrays; ``x`` has
``b``'s structure. Their signatures, defaults and stopping rules are JAX 0.10.2's (which
follow SciPy's numerics without its "legacy" tolerance: the iteration stops when
``norm(residual) <= max(tol * norm(b), atol)``). Each runs in ``lax.while_loop`` and is
wrapped in ``lax.custom_linear_solve``, so derivatives come from another solve, not from
differentiating the iterations. They return ``(x, info)``: ``info`` is None for ``cg``
and ``bicgstab`` (as in JAX), and for ``gmres`` 0, or -1 when ``x`` holds a NaN.
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.base import tree
from jaxlite._src.core.array import Array
from jaxlite._src.core.core import Tracer
from jaxlite._src.lax import control_flow
from jaxlite._src.lax import elementwise as lax_ew
from jaxlite._src.lax import solves
from jaxlite._src.lax.precision import Precision
from jaxlite._src.libraries.numpy import namespace as jnp
from jaxlite._src.libraries.scipy import linalg as sp_linalg

__all__ = ["cg", "gmres", "bicgstab"]

_HIGHEST = Precision.HIGHEST
_dot = functools.partial(jnp.dot, precision=_HIGHEST)


# -- vector algebra on pytrees --------------------------------------------------------------

def _vdot(x, y):
  return jnp.vdot(x, y, precision=_HIGHEST)


def _vdot_real(x, y):
  """The real part of ``vdot(x, y)``, leaving out the cross terms of complex inputs."""
  out = _vdot(jnp.real(x), jnp.real(y))
  if jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
    out = out + _vdot(jnp.imag(x), jnp.imag(y))
  return out


def _vdot_real_tree(x, y):
  return sum(tree.tree_leaves(tree.tree_map(_vdot_real, x, y)))


def _vdot_tree(x, y):
  return sum(tree.tree_leaves(tree.tree_map(_vdot, x, y)))


def _norm(x):
  leaves = tree.tree_leaves(x)
  return jnp.sqrt(sum(_vdot_real(leaf, leaf) for leaf in leaves))


def _scale(scalar, x):
  return tree.tree_map(lambda leaf: scalar * leaf, x)


def _add(x, y):
  return tree.tree_map(operator.add, x, y)


def _sub(x, y):
  return tree.tree_map(operator.sub, x, y)


def _dtype_of(x):
  return dtypes.result_type(*tree.tree_leaves(x))


def _identity(x):
  return x


def _as_operator(f):
  """A matrix-vector product from a function, a square matrix or a ``@``-able object."""
  if callable(f):
    return f
  if isinstance(f, (np.ndarray, Array, Tracer)):
    if f.ndim != 2 or f.shape[0] != f.shape[1]:
      raise ValueError(f"linear operator must be a square matrix, but has shape: {f.shape}")
    return functools.partial(_dot, f)
  if hasattr(f, "__matmul__"):
    if hasattr(f, "shape") and (len(f.shape) != 2 or f.shape[0] != f.shape[1]):
      raise ValueError(f"linear operator must be a square matrix, but has shape: {f.shape}")
    return functools.partial(operator.matmul, f)
  raise TypeError(f"linear operator must be either a function or ndarray: {f}")


def _shapes(x):
  return [np.shape(leaf) for leaf in tree.tree_leaves(x)]


def _check_x0(x0, b, check_shapes=True):
  if tree.tree_structure(x0) != tree.tree_structure(b):
    raise ValueError("x0 and b must have matching tree structure: "
                     f"{tree.tree_structure(x0)} vs {tree.tree_structure(b)}")
  if check_shapes and _shapes(x0) != _shapes(b):
    raise ValueError(f"arrays in x0 and b must have matching shapes: {_shapes(x0)} vs "
                     f"{_shapes(b)}")


def _prepare(A, b, x0, M):
  b = tree.tree_map(jnp.asarray, b)
  x0 = tree.tree_map(jnp.zeros_like, b) if x0 is None else tree.tree_map(jnp.asarray, x0)
  return _as_operator(A), b, x0, _identity if M is None else _as_operator(M)


# -- conjugate gradient -----------------------------------------------------------------------

def _cg_solve(A, b, x0, *, maxiter, tol, atol, M):
  atol2 = jnp.maximum(jnp.square(tol) * _vdot_real_tree(b, b), jnp.square(atol))
  r0 = _sub(b, A(x0))
  p0 = z0 = M(r0)
  dtype = _dtype_of(p0)
  gamma0 = _vdot_real_tree(r0, z0).astype(dtype)

  def cond(state):
    _, r, gamma, _, k = state
    # without a preconditioner gamma is |r|^2 already
    rs = jnp.real(gamma) if M is _identity else _vdot_real_tree(r, r)
    return (rs > atol2) & (k < maxiter)

  def body(state):
    x, r, gamma, p, k = state
    Ap = A(p)
    alpha = gamma / _vdot_real_tree(p, Ap).astype(dtype)
    x = _add(x, _scale(alpha, p))
    r = _sub(r, _scale(alpha, Ap))
    z = M(r)
    gamma_next = _vdot_real_tree(r, z).astype(dtype)
    p = _add(z, _scale(gamma_next / gamma, p))
    return x, r, gamma_next, p, k + 1

  return control_flow.while_loop(cond, body, (x0, r0, gamma0, p0, 0))[0]


# -- BiCGSTAB -------------------------------------------------------------------------------

def _bicgstab_solve(A, b, x0, *, maxiter, tol, atol, M):
  atol2 = jnp.maximum(jnp.square(tol) * _vdot_real_tree(b, b), jnp.square(atol))
  r0 = _sub(b, A(x0))
  dtype, weak = dtypes.lattice_result_type(*tree.tree_leaves(b))
  one = lax_ew._convert_element_type(1, dtype, weak)

  def cond(state):
    _, r, *_, k = state
    # k < 0 marks a breakdown: -10 when rho vanished, -11 when omega or alpha did
    return (_vdot_real_tree(r, r) > atol2) & (k < maxiter) & (k >= 0)

  def body(state):
    x, r, rhat, alpha, omega, rho, p, q, k = state
    rho_next = _vdot_tree(rhat, r)
    beta = rho_next / rho * alpha / omega
    p = _add(r, _scale(beta, _sub(p, _scale(omega, q))))
    phat = M(p)
    q = A(phat)
    alpha = rho_next / _vdot_tree(rhat, q)
    s = _sub(r, _scale(alpha, q))
    done_early = _vdot_real_tree(s, s) < atol2
    shat = M(s)
    t = A(shat)
    omega = _vdot_tree(t, s) / _vdot_tree(t, t)
    x_half = _add(x, _scale(alpha, phat))
    x = tree.tree_map(functools.partial(jnp.where, done_early), x_half,
                      _add(x_half, _scale(omega, shat)))
    r = tree.tree_map(functools.partial(jnp.where, done_early), s, _sub(s, _scale(omega, t)))
    k = jnp.where((omega == 0) | (alpha == 0), -11, k + 1)
    k = jnp.where(rho_next == 0, -10, k)
    return x, r, rhat, alpha, omega, rho_next, p, q, k

  state = (x0, r0, r0, one, one, one, r0, r0, 0)
  return control_flow.while_loop(cond, body, state)[0]


def _isolve(solve, A, b, x0, *, tol, atol, maxiter, M, check_symmetric):
  A, b, x0, M = _prepare(A, b, x0, M)
  if maxiter is None:
    maxiter = 10 * sum(leaf.size for leaf in tree.tree_leaves(b))   # as SciPy
  _check_x0(x0, b)
  run = functools.partial(solve, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
  symmetric = check_symmetric and all(
      not dtypes.issubdtype(leaf.dtype, np.complexfloating) for leaf in tree.tree_leaves(b))
  x = solves.custom_linear_solve(A, b, solve=run, transpose_solve=run,
                                    symmetric=symmetric)
  return x, None


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
  """Solve ``A x = b`` by the conjugate gradient method (``scipy.sparse.linalg.cg``).

  ``A`` must be Hermitian positive definite: a function ``x -> A x`` (``x`` of ``b``'s
  structure), a square matrix or an object with ``@``. ``M`` is a preconditioner given
  the same way, approximating the inverse of ``A``. Stops when ``norm(residual) <=
  max(tol * norm(b), atol)`` or after ``maxiter`` steps (default ``10 * size(b)``).
  Returns ``(x, None)``.
  """
  return _isolve(_cg_solve, A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M,
                 check_symmetric=True)


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
  """Solve ``A x = b`` by BiCGSTAB (``scipy.sparse.linalg.bicgstab``) for any
  nonsingular ``A``; arguments as for ``cg``. Returns ``(x, None)``."""
  return _isolve(_bicgstab_solve, A, b, x0, tol=tol, atol=atol, maxiter=maxiter, M=M,
                 check_symmetric=False)


# -- GMRES ----------------------------------------------------------------------------------

def _safe_normalize(x, thresh=None):
  """``(x / norm(x), norm(x))``, or zeros and 0 when the norm is at most ``thresh``
  (default: the machine epsilon of the norm's dtype)."""
  norm = _norm(x)
  dtype, weak = dtypes.lattice_result_type(*tree.tree_leaves(x))
  if thresh is None:
    thresh = jnp.asarray(dtypes.finfo(norm.dtype).eps)
  thresh = jnp.real(jnp.asarray(thresh).astype(dtype))
  use = norm > thresh
  norm_x = lax_ew._convert_element_type(norm, dtype, weak)
  normalized = tree.tree_map(lambda y: jnp.where(use, y / norm_x, 0.0), x)
  return normalized, jnp.where(use, norm, 0.0)


def _project_on_columns(Q, v):
  """``Q^H v`` for Krylov bases stored with the basis index last."""
  parts = tree.tree_map(
      lambda X, y: jnp.einsum("...n,...->n", jnp.conj(X), y, precision=_HIGHEST), Q, v)
  return tree.tree_reduce(operator.add, parts)


def _gram_schmidt(Q, x, xnorm, max_iterations=2):
  """Orthogonalize ``x`` against the columns of ``Q`` (classical Gram-Schmidt, repeated
  while the result lost more than 1/sqrt(2) of its norm, at most ``max_iterations``
  times). Returns ``(q, r)``: the orthogonalized vector and its overlaps with ``Q``."""
  Q0 = tree.tree_leaves(Q)[0]
  r = jnp.zeros(Q0.shape[-1], dtype=Q0.dtype)

  def body(carry):
    k, q, r, qnorm_scaled = carry
    h = _project_on_columns(Q, q)
    q = _sub(q, tree.tree_map(lambda X: _dot(X, h), Q))
    r = _add(r, h)

    def norm_cond(c):
      k, not_done, _, _ = c
      return jnp.logical_and(not_done, k < max_iterations - 1)

    def norm_body(c):
      k, _, q, _ = c
      _, qnorm = _safe_normalize(q)
      return k, False, q, qnorm / jnp.sqrt(2.0)

    _, _, q, qnorm_scaled = control_flow.while_loop(norm_cond, norm_body,
                                                    (k, True, q, qnorm_scaled))
    return k + 1, q, r, qnorm_scaled

  def cond(carry):
    k, _, r, qnorm_scaled = carry
    _, rnorm = _safe_normalize(r)
    return jnp.logical_and(k < max_iterations - 1, rnorm < qnorm_scaled)

  carry = body((0, x, r, xnorm / jnp.sqrt(2.0)))
  _, q, r, _ = control_flow.while_loop(cond, body, carry)
  return q, r


def _arnoldi_step(k, A, M, V, H):
  """Add the k-th Krylov vector ``M(A(V[:, k]))``, orthonormalized, as ``V[:, k+1]``
  and its overlaps as ``H[k, :]``; a vector whose norm falls under ``eps * its norm
  before`` is an invariant subspace found (breakdown) and is taken as zero."""
  dtype, _ = dtypes.lattice_result_type(*tree.tree_leaves(V))
  eps = dtypes.finfo(dtype).eps
  v = M(A(tree.tree_map(lambda X: X[..., k], V)))
  _, v_norm0 = _safe_normalize(v)
  v, h = _gram_schmidt(V, v, v_norm0, max_iterations=2)
  unit_v, v_norm1 = _safe_normalize(v, thresh=eps * v_norm0)
  V = tree.tree_map(lambda X, y: X.at[..., k + 1].set(y), V, unit_v)
  h = h.at[k + 1].set(v_norm1.astype(dtype))
  H = H.at[k, :].set(h)
  return V, H, v_norm1 == 0.0


def _rotate(H, i, cs, sn):
  x1, y1 = H[i], H[i + 1]
  H = H.at[i].set(jnp.conj(cs) * x1 - jnp.conj(sn) * y1)
  return H.at[i + 1].set(sn * x1 + cs * y1)


def _givens(a, b):
  b_zero = abs(b) == 0
  a_lt_b = abs(a) < abs(b)
  t = -jnp.where(a_lt_b, a, b) / jnp.where(a_lt_b, b, a)
  r = lax_ew.rsqrt(1 + abs(t) ** 2).astype(t.dtype)
  cs = jnp.where(b_zero, 1, jnp.where(a_lt_b, r * t, r))
  sn = jnp.where(b_zero, 0, jnp.where(a_lt_b, r, r * t))
  return cs, sn


def _apply_givens(H_row, givens, k):
  """Apply the stored rotations to a new row of H, then the new one that zeroes its k-th
  subdiagonal element."""
  R_row = control_flow.fori_loop(0, k, lambda i, row: _rotate(row, i, *givens[i, :]),
                                 H_row)
  factors = _givens(R_row[k], R_row[k + 1])
  givens = givens.at[k, :].set(factors)
  return _rotate(R_row, k, *factors), givens


def _initial_basis(unit_residual, restart):
  return tree.tree_map(
      lambda x: jnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)), unit_residual)


def _gmres_incremental(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
  """One restart, building the QR factorization of H with Givens rotations as the
  Krylov basis grows; stops early once the estimated residual is at most ``ptol``."""
  V = _initial_basis(unit_residual, restart)
  dtype = _dtype_of(b)
  R = jnp.eye(restart, restart + 1, dtype=dtype)
  givens = jnp.zeros((restart, 2), dtype=dtype)
  beta = jnp.zeros(restart + 1, dtype=dtype).at[0].set(residual_norm.astype(dtype))

  def cond(carry):
    k, err, *_ = carry
    return jnp.logical_and(k < restart, err > ptol)

  def body(carry):
    k, _, V, R, beta, givens = carry
    V, H, _ = _arnoldi_step(k, A, M, V, R)
    R_row, givens = _apply_givens(H[k, :], givens, k)
    R = R.at[k, :].set(R_row)
    beta = _rotate(beta, k, *givens[k, :])
    return k + 1, abs(beta[k + 1]), V, R, beta, givens

  _, _, V, R, beta, _ = control_flow.while_loop(
      cond, body, (0, residual_norm, V, R, beta, givens))
  y = sp_linalg.solve_triangular(R[:, :-1].T, beta[:-1])
  x = _add(x0, tree.tree_map(lambda X: _dot(X[..., :-1], y), V))
  unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x))))
  return x, unit_residual, residual_norm


def _gmres_batched(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
  """One restart, building the whole Krylov basis (unless it breaks down) and then
  solving the small least-squares problem."""
  del ptol
  V = _initial_basis(unit_residual, restart)
  dtype, weak = dtypes.lattice_result_type(*tree.tree_leaves(b))
  H = lax_ew._convert_element_type(jnp.eye(restart, restart + 1, dtype=dtype), dtype, weak)

  def cond(carry):
    _, _, breakdown, k = carry
    return jnp.logical_and(k < restart, jnp.logical_not(breakdown))

  def body(carry):
    V, H, _, k = carry
    V, H, breakdown = _arnoldi_step(k, A, M, V, H)
    return V, H, breakdown, k + 1

  V, H, _, _ = control_flow.while_loop(cond, body, (V, H, False, 0))
  beta = jnp.zeros_like(H, shape=(restart + 1,)).at[0].set(residual_norm.astype(dtype))
  Ht = H.T
  y = sp_linalg.solve(_dot(jnp.conj(Ht.T), Ht), _dot(jnp.conj(Ht.T), beta), assume_a="pos")
  x = _add(x0, tree.tree_map(lambda X: _dot(X[..., :-1], y), V))
  unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x))))
  return x, unit_residual, residual_norm


def _gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, one_restart):
  unit_residual, residual_norm = _safe_normalize(M(_sub(b, A(x0))))

  def cond(state):
    _, k, _, residual_norm = state
    return jnp.logical_and(k < maxiter, residual_norm > atol)

  def body(state):
    x, k, unit_residual, residual_norm = state
    x, unit_residual, residual_norm = one_restart(A, b, x, unit_residual, residual_norm,
                                                  ptol, restart, M)
    return x, k + 1, unit_residual, residual_norm

  return control_flow.while_loop(cond, body, (x0, 0, unit_residual, residual_norm))[0]


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None,
          solve_method="batched"):
  """Solve ``A x = b`` by restarted GMRES (``scipy.sparse.linalg.gmres``) for any
  nonsingular ``A``.

  ``restart`` is the dimension of the Krylov space built between restarts (at most the
  size of ``b``), ``maxiter`` the number of restarts (default ``10 * size(b)``).
  ``solve_method='incremental'`` builds the QR factorization with Givens rotations as it
  goes and can stop within a restart; ``'batched'`` (the default) solves the least-squares
  problem once per restart. Returns ``(x, info)``: ``info`` is 0, or -1 when ``x`` holds
  a NaN.
  """
  A, b, x0, M = _prepare(A, b, x0, M)
  size = sum(leaf.size for leaf in tree.tree_leaves(b))
  if maxiter is None:
    maxiter = 10 * size   # as SciPy
  restart = min(restart, size)
  _check_x0(x0, b, check_shapes=False)
  b_norm = _norm(b)
  atol = jnp.maximum(tol * b_norm, atol)
  ptol = _norm(M(b)) * jnp.minimum(1.0, atol / b_norm)
  if solve_method == "incremental":
    one_restart = _gmres_incremental
  elif solve_method == "batched":
    one_restart = _gmres_batched
  else:
    raise ValueError(f"invalid solve_method {solve_method}, must be either "
                     "'incremental' or 'batched'")

  def run(A, b):
    return _gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, one_restart)
  x = solves.custom_linear_solve(A, b, solve=run, transpose_solve=run)
  info = jnp.where(jnp.isnan(_norm(x)), -1, 0)
  return x, info
