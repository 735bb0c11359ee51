"""``jaxlite.scipy.optimize`` (``jax.scipy.optimize``): ``minimize`` with BFGS.

As in JAX 0.10.2: ``minimize(fun, x0, args=(), *, method, tol=None, options=None)`` with
``method='BFGS'`` (any case) only, returning ``OptimizeResults`` (x, success, status, fun,
jac, hess_inv, nfev, njev, nit). BFGS is Algorithm 6.1 of Nocedal and Wright, "Numerical
Optimization" (1999), with their line search for the strong Wolfe conditions (Algorithms
3.5 and 3.6: doubling steps, then zooming with cubic, quadratic or bisection steps).
Every decision is JAX's, so the iterates and counts are JAX's up to rounding. The whole
search is one ``lax.while_loop``: it jits and vmaps. ``tol`` is accepted and, as in JAX,
unused: ``options={'gtol': ...}`` sets the gradient tolerance.

This module sits with the API layer because it differentiates ``fun`` (``value_and_grad``).
"""
from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.autodiff_api import value_and_grad
from jaxlite._src.lax import control_flow
from jaxlite._src.lax.precision import Precision
from jaxlite._src.libraries.numpy import namespace as jnp
from jaxlite._src.libraries.numpy.util import promote_dtypes_inexact

__all__ = ["minimize", "OptimizeResults"]

_dot = functools.partial(jnp.dot, precision=Precision.HIGHEST)


class OptimizeResults(NamedTuple):
  """What ``minimize`` returns.

  x: the solution. success: whether it converged without a failed line search.
  status: 0 converged, 1 maximum BFGS iterations, 3 zoom failed, 4 saddle point,
  5 maximum line search iterations, -1 undefined. fun, jac: the value and gradient at x.
  hess_inv: the final inverse Hessian estimate. nfev, njev: function and gradient
  evaluations. nit: BFGS iterations.
  """
  x: Any
  success: Any
  status: Any
  fun: Any
  jac: Any
  hess_inv: Any
  nfev: Any
  njev: Any
  nit: Any


def _select(pred, new, old, keys=None):
  """``old`` with ``keys`` (default: all of ``new``'s) replaced by ``new``'s where
  ``pred``."""
  keys = new.keys() if keys is None else keys
  return {k: jnp.where(pred, new[k], old[k]) for k in keys}


# -- the line search ------------------------------------------------------------------------

def _cubic_min(a, fa, fpa, b, fb, c, fc):
  """The minimizer of the cubic through (a, fa), (b, fb), (c, fc) with slope fpa at a."""
  dtype = jnp.result_type(a, fa, fpa, b, fb, c, fc)
  C = fpa
  db, dc = b - a, c - a
  denom = (db * dc) ** 2 * (db - dc)
  d1 = jnp.array([[dc ** 2, -db ** 2], [-dc ** 3, db ** 3]], dtype=dtype)
  d2 = jnp.array([fb - fa - C * db, fc - fa - C * dc], dtype=dtype)
  A, B = _dot(d1, d2) / denom
  return a + (-B + jnp.sqrt(B * B - 3.0 * A * C)) / (3.0 * A)


def _quad_min(a, fa, fpa, b, fb):
  """The minimizer of the parabola through (a, fa), (b, fb) with slope fpa at a."""
  db = b - a
  B = (fb - fa - fpa * db) / (db ** 2)
  return a - fpa / (2.0 * B)


class _Zoom(NamedTuple):
  done: Any
  failed: Any
  j: Any
  a_lo: Any
  phi_lo: Any
  dphi_lo: Any
  a_hi: Any
  phi_hi: Any
  dphi_hi: Any
  a_rec: Any
  phi_rec: Any
  a_star: Any
  phi_star: Any
  dphi_star: Any
  g_star: Any
  nfev: Any
  ngev: Any


def _zoom(phi_and_grad, wolfe_one, wolfe_two, a_lo, phi_lo, dphi_lo, a_hi, phi_hi, dphi_hi,
          g_0, skip):
  """Algorithm 3.6: shrink [a_lo, a_hi] (a_lo has the lower value) until a step
  satisfies the strong Wolfe conditions; gives up when the interval is tiny or after 30
  steps. Does nothing where ``skip``."""
  delta1, delta2 = 0.2, 0.1   # how far inside the interval cubic and quadratic steps must be
  state = _Zoom(done=False, failed=False, j=0, a_lo=a_lo, phi_lo=phi_lo, dphi_lo=dphi_lo,
                a_hi=a_hi, phi_hi=phi_hi, dphi_hi=dphi_hi, a_rec=(a_lo + a_hi) / 2.0,
                phi_rec=(phi_lo + phi_hi) / 2.0, a_star=1.0, phi_star=phi_lo,
                dphi_star=dphi_lo, g_star=g_0, nfev=0, ngev=0)

  def body(s):
    width = s.a_hi - s.a_lo
    lo, hi = jnp.minimum(s.a_hi, s.a_lo), jnp.maximum(s.a_hi, s.a_lo)
    cubic_margin, quad_margin = delta1 * width, delta2 * width
    threshold = jnp.where(dtypes.finfo(width.dtype).bits < 64, 1e-5, 1e-10)
    s = s._replace(failed=s.failed | (width <= threshold))

    a_cubic = _cubic_min(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi, s.a_rec, s.phi_rec)
    use_cubic = (s.j > 0) & (a_cubic > lo + cubic_margin) & (a_cubic < hi - cubic_margin)
    a_quad = _quad_min(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi)
    use_quad = ~use_cubic & (a_quad > lo + quad_margin) & (a_quad < hi - quad_margin)
    use_bisection = ~use_cubic & ~use_quad
    a_j = jnp.where(use_cubic, a_cubic, s.a_rec)
    a_j = jnp.where(use_quad, a_quad, a_j)
    a_j = jnp.where(use_bisection, (s.a_lo + s.a_hi) / 2.0, a_j)

    phi_j, dphi_j, g_j = phi_and_grad(a_j)
    phi_j = phi_j.astype(s.phi_lo.dtype)
    dphi_j = dphi_j.astype(s.dphi_lo.dtype)
    g_j = g_j.astype(s.g_star.dtype)
    s = s._replace(nfev=s.nfev + 1, ngev=s.ngev + 1)

    hi_to_j = wolfe_one(a_j, phi_j) | (phi_j >= s.phi_lo)
    star_to_j = wolfe_two(dphi_j) & ~hi_to_j
    hi_to_lo = (dphi_j * (s.a_hi - s.a_lo) >= 0.0) & ~hi_to_j & ~star_to_j
    lo_to_j = ~hi_to_j & ~star_to_j

    fields = s._asdict()
    s = s._replace(**_select(hi_to_j, dict(a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j,
                                           a_rec=s.a_hi, phi_rec=s.phi_hi), fields))
    s = s._replace(done=star_to_j | s.done,
                   **_select(star_to_j, dict(a_star=a_j, phi_star=phi_j, dphi_star=dphi_j,
                                             g_star=g_j), s._asdict()))
    s = s._replace(**_select(hi_to_lo, dict(a_hi=s.a_lo, phi_hi=s.phi_lo, dphi_hi=s.dphi_lo,
                                            a_rec=s.a_hi, phi_rec=s.phi_hi), s._asdict()))
    s = s._replace(**_select(lo_to_j & ~hi_to_lo, dict(a_rec=s.a_lo, phi_rec=s.phi_lo),
                             s._asdict()))
    s = s._replace(**_select(lo_to_j, dict(a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j),
                             s._asdict()))
    s = s._replace(j=s.j + 1)
    return s._replace(failed=s.failed | (s.j >= 30))

  return control_flow.while_loop(lambda s: ~s.done & ~skip & ~s.failed, body, state)


class _Search(NamedTuple):
  done: Any
  failed: Any
  i: Any
  a_i1: Any
  phi_i1: Any
  dphi_i1: Any
  nfev: Any
  ngev: Any
  a_star: Any
  phi_star: Any
  dphi_star: Any
  g_star: Any


class _LineSearchResults(NamedTuple):
  failed: Any
  nit: Any
  nfev: Any
  ngev: Any
  k: Any
  a_k: Any
  f_k: Any
  g_k: Any
  status: Any


def _line_search(f, xk, pk, old_fval, old_old_fval, gfk, c1=1e-4, c2=0.9, maxiter=20):
  """Algorithm 3.5: a step along ``pk`` satisfying the strong Wolfe conditions."""
  xk, pk = promote_dtypes_inexact(xk, pk)

  def phi_and_grad(t):
    t = jnp.array(t, dtype=pk.dtype)
    phi, g = value_and_grad(f)(xk + t * pk)
    return phi, jnp.real(_dot(g, pk)), g

  phi_0 = old_fval
  dphi_0 = jnp.real(_dot(gfk, pk))
  start = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
  start = jnp.where(start > 1, 1.0, start)

  def wolfe_one(a_i, phi_i):   # sufficient decrease
    return phi_i > phi_0 + c1 * a_i * dphi_0

  def wolfe_two(dphi_i):       # curvature
    return jnp.abs(dphi_i) <= -c2 * dphi_0

  state = _Search(done=jnp.array(False), failed=jnp.array(False), i=1, a_i1=0.0,
                  phi_i1=phi_0, dphi_i1=dphi_0, nfev=0, ngev=0, a_star=0.0, phi_star=phi_0,
                  dphi_star=dphi_0, g_star=gfk)

  def body(s):
    a_i = jnp.where(s.i == 1, start, s.a_i1 * 2.0)
    phi_i, dphi_i, g_i = phi_and_grad(a_i)
    s = s._replace(nfev=s.nfev + 1, ngev=s.ngev + 1)

    zoom_between_prev_and_i = wolfe_one(a_i, phi_i) | ((phi_i >= s.phi_i1) & (s.i > 1))
    take_i = wolfe_two(dphi_i) & ~zoom_between_prev_and_i
    zoom_between_i_and_prev = (dphi_i >= 0.0) & ~zoom_between_prev_and_i & ~take_i

    zoom1 = _zoom(phi_and_grad, wolfe_one, wolfe_two, s.a_i1, s.phi_i1, s.dphi_i1, a_i,
                  phi_i, dphi_i, gfk, ~zoom_between_prev_and_i)
    s = s._replace(nfev=s.nfev + zoom1.nfev, ngev=s.ngev + zoom1.ngev)
    zoom2 = _zoom(phi_and_grad, wolfe_one, wolfe_two, a_i, phi_i, dphi_i, s.a_i1, s.phi_i1,
                  s.dphi_i1, gfk, ~zoom_between_i_and_prev)
    s = s._replace(nfev=s.nfev + zoom2.nfev, ngev=s.ngev + zoom2.ngev)

    star = ["a_star", "phi_star", "dphi_star", "g_star"]
    s = s._replace(done=zoom_between_prev_and_i | s.done,
                   failed=(zoom_between_prev_and_i & zoom1.failed) | s.failed,
                   **_select(zoom_between_prev_and_i, zoom1._asdict(), s._asdict(), star))
    s = s._replace(done=take_i | s.done,
                   **_select(take_i, dict(a_star=a_i, phi_star=phi_i, dphi_star=dphi_i,
                                          g_star=g_i), s._asdict()))
    s = s._replace(done=zoom_between_i_and_prev | s.done,
                   failed=(zoom_between_i_and_prev & zoom2.failed) | s.failed,
                   **_select(zoom_between_i_and_prev, zoom2._asdict(), s._asdict(), star))
    return s._replace(i=s.i + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i)

  s = control_flow.while_loop(lambda s: ~s.done & (s.i <= maxiter) & ~s.failed, body, state)
  status = jnp.where(s.failed, jnp.array(1), jnp.where(s.i > maxiter, jnp.array(3),
                                                       jnp.array(0)))
  alpha = jnp.asarray(s.a_star)
  # keep a vanishing step from stalling at lower precisions
  alpha = jnp.where((dtypes.finfo(alpha.dtype).bits != 64) & (jnp.abs(alpha) < 1e-8),
                    jnp.sign(alpha) * 1e-8, alpha)
  return _LineSearchResults(failed=s.failed | ~s.done, nit=s.i - 1, nfev=s.nfev,
                            ngev=s.ngev, k=s.i, a_k=alpha, f_k=s.phi_star, g_k=s.g_star,
                            status=status)


# -- BFGS -----------------------------------------------------------------------------------

class _BFGS(NamedTuple):
  converged: Any
  failed: Any
  k: Any
  nfev: Any
  ngev: Any
  x_k: Any
  f_k: Any
  g_k: Any
  H_k: Any
  old_old_fval: Any
  line_search_status: Any


def _minimize_bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
  if maxiter is None:
    maxiter = np.size(x0) * 200
  d = x0.shape[0]
  f_0, g_0 = value_and_grad(fun)(x0)
  state = _BFGS(converged=jnp.linalg.norm(g_0, ord=norm) < gtol, failed=False, k=0, nfev=1,
                ngev=1, x_k=x0, f_k=f_0, g_k=g_0, H_k=jnp.eye(d, dtype=x0.dtype),
                old_old_fval=f_0 + jnp.linalg.norm(g_0) / 2, line_search_status=0)

  def cond(s):
    return ~s.converged & ~s.failed & (s.k < maxiter)

  def body(s):
    p_k = -_dot(s.H_k, s.g_k)
    ls = _line_search(fun, s.x_k, p_k, old_fval=s.f_k, old_old_fval=s.old_old_fval,
                      gfk=s.g_k, maxiter=line_search_maxiter)
    s = s._replace(nfev=s.nfev + ls.nfev, ngev=s.ngev + ls.ngev, failed=ls.failed,
                   line_search_status=ls.status)
    s_k = ls.a_k * p_k
    y_k = ls.g_k - s.g_k
    rho_k = jnp.reciprocal(_dot(y_k, s_k))
    w = jnp.eye(d, dtype=rho_k.dtype) - rho_k * (s_k[:, None] * y_k[None, :])
    H_next = (jnp.einsum("ij,jk,lk", w, s.H_k, w, precision=Precision.HIGHEST)
              + rho_k * s_k[:, None] * s_k[None, :])
    H_next = jnp.where(jnp.isfinite(rho_k), H_next, s.H_k)
    return s._replace(converged=jnp.linalg.norm(ls.g_k, ord=norm) < gtol, k=s.k + 1,
                      x_k=s.x_k + s_k, f_k=ls.f_k, g_k=ls.g_k, H_k=H_next,
                      old_old_fval=s.f_k)

  s = control_flow.while_loop(cond, body, state)
  status = jnp.where(s.converged, 0,
                     jnp.where(s.k == maxiter, 1,
                               jnp.where(s.failed, 2 + s.line_search_status, -1)))
  return s, status


def minimize(fun, x0, args=(), *, method, tol=None, options=None):
  """Minimize the scalar function ``fun(x, *args)`` of a 1-D array ``x`` from ``x0``
  (``scipy.optimize.minimize``).

  ``method`` must be ``'BFGS'``; gradients come from ``jax.grad``. ``options``: ``maxiter``
  (default ``200 * size(x0)``), ``gtol`` (1e-5: stop when the ``norm`` of the gradient is
  below it), ``norm`` (``np.inf``), ``line_search_maxiter`` (10). ``tol`` is accepted and
  unused, as in JAX. Returns ``OptimizeResults``.
  """
  del tol
  if options is None:
    options = {}
  if not isinstance(args, tuple):
    raise TypeError("args argument to jax.scipy.optimize.minimize must be a tuple, got "
                    f"{args}")
  if method.lower() == "bfgs":
    s, status = _minimize_bfgs(lambda x: fun(x, *args), x0, **options)
    return OptimizeResults(x=s.x_k, success=s.converged & jnp.logical_not(s.failed),
                           status=status, fun=s.f_k, jac=s.g_k, hess_inv=s.H_k,
                           nfev=s.nfev, njev=s.ngev, nit=s.k)
  raise ValueError(f"Method {method} not recognized")
