"""``check_grads``: compare JVPs and VJPs with finite differences (``jax.test_util``)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.base import tree
from jaxlite._src.core.array import Array

_DEFAULT_EPS = {np.dtype(np.float16): 1e-1, np.dtype(dtypes.bfloat16): 1e-1,
                np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-6,
                np.dtype(np.complex64): 1e-3, np.dtype(np.complex128): 1e-6}
_DEFAULT_TOL = {np.dtype(np.float16): 1e-1, np.dtype(dtypes.bfloat16): 1e-1,
                np.dtype(np.float32): 2e-2, np.dtype(np.float64): 1e-5,
                np.dtype(np.complex64): 2e-2, np.dtype(np.complex128): 1e-5}


def _leaves_dtype(xs):
  found = [np.dtype(x.dtype) for x in tree.tree_leaves(xs) if hasattr(x, "dtype")]
  inexact = [d for d in found if d in _DEFAULT_TOL]
  return min(inexact, key=lambda d: d.itemsize) if inexact else np.dtype(np.float32)


def _add(xs, ys, scale=1.0):
  return tree.tree_map(lambda x, y: np.asarray(x) + scale * np.asarray(y).astype(
      np.asarray(x).dtype), xs, ys)


def _random_like(rng, xs):
  def one(x):
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.inexact) and x.dtype != dtypes.bfloat16:
      return np.zeros(x.shape, dtypes.float0)
    return rng.standard_normal(x.shape).astype(x.dtype)
  return tree.tree_map(one, xs)


def _inner(xs, ys):
  total = 0.0
  for x, y in zip(tree.tree_leaves(xs), tree.tree_leaves(ys)):
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype == dtypes.float0 or y.dtype == dtypes.float0:
      continue
    total += np.vdot(x.astype(np.float64), y.astype(np.float64)).real
  return total


def numerical_jvp(f, primals, tangents, eps):
  """Central difference ``(f(x + eps t) - f(x - eps t)) / 2 eps``."""
  plus = f(*_add(primals, tangents, eps))
  minus = f(*_add(primals, tangents, -eps))
  return tree.tree_map(lambda a, b: (np.asarray(a, np.float64) - np.asarray(b, np.float64))
                       / (2 * eps), plus, minus)


def _assert_close(actual, expected, atol, rtol, what):
  for a, e in zip(tree.tree_leaves(actual), tree.tree_leaves(expected)):
    a, e = np.asarray(a), np.asarray(e)
    if a.dtype == dtypes.float0:
      continue
    np.testing.assert_allclose(a.astype(np.complex128 if np.iscomplexobj(a) else np.float64),
                               e, atol=atol, rtol=rtol, err_msg=what)


def _tolerances(args, atol, rtol, eps):
  """Defaults for the narrowest inexact dtype among ``args``."""
  dtype = _leaves_dtype(args)
  return atol or _DEFAULT_TOL[dtype], rtol or _DEFAULT_TOL[dtype], eps or _DEFAULT_EPS[dtype]


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=None, rng=None):
  """Check ``f_jvp(args, tangents)`` against finite differences of ``f``."""
  rng = rng or np.random.default_rng(0)
  atol, rtol, eps = _tolerances(args, atol, rtol, eps)
  tangents = _random_like(rng, args)
  out, t_out = f_jvp(args, tangents)
  _assert_close(out, tree.tree_map(np.asarray, f(*args)), atol, rtol, "jvp primal output")
  t_expected = numerical_jvp(f, args, tangents, eps)
  _assert_close(t_out, t_expected, atol, rtol, "jvp tangent vs finite differences")


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=None, rng=None):
  """Check ``f_vjp`` through ``<ct, J t> == <J^T ct, t>`` with ``J t`` numerical."""
  rng = rng or np.random.default_rng(1)
  atol, rtol, eps = _tolerances(args, atol, rtol, eps)
  out, vjp_fun = f_vjp(*args)
  tangents = _random_like(rng, args)
  t_out = numerical_jvp(f, args, tangents, eps)
  cotangent = tree.tree_map(lambda o: rng.standard_normal(np.shape(o)).astype(
      np.asarray(o).dtype), out)
  ct_in = vjp_fun(cotangent)
  ip = _inner(tangents, ct_in)
  ip_expected = _inner(t_out, cotangent)
  np.testing.assert_allclose(ip, ip_expected, atol=atol * 10, rtol=rtol * 10,
                             err_msg="vjp inner product vs finite differences")


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
  """Check derivatives of ``f`` at ``args`` up to ``order`` against finite differences.

  Parameters
  ----------
  f : callable
    Function of positional array arguments.
  args : tuple
    Point at which to check.
  order : int
    Highest order of derivatives to check (1 checks first derivatives).
  modes : sequence of {"fwd", "rev"}
    Check forward mode (jvp), reverse mode (vjp), or both.
  """
  from jaxlite._src.autodiff_api import jvp, vjp
  args = tuple(tree.tree_map(lambda x: np.asarray(x) if isinstance(x, Array) else x, args))

  def _check(f, args, order):
    if "fwd" in modes:
      f_jvp = lambda primals, tangents: jvp(f, primals, tangents)
      check_jvp(f, f_jvp, args, atol, rtol, eps)
      if order > 1:
        tangents = _random_like(np.random.default_rng(2), args)
        _check(lambda *p: jvp(f, p, tangents)[1], args, order - 1)
    if "rev" in modes:
      check_vjp(f, lambda *a: vjp(f, *a), args, atol, rtol, eps)
      if order > 1:
        out = f(*args)
        cotangent = tree.tree_map(lambda o: np.random.default_rng(3).standard_normal(
            np.shape(o)).astype(np.asarray(o).dtype), out)
        _check(lambda *p: vjp(f, *p)[1](cotangent), args, order - 1)

  _check(f, args, order)
