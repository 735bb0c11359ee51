"""``check_grads``: compare JVPs and VJPs with finite differences (``jax.test_util``).

The algorithm is JAX's, step for step, so that a library's test passes or fails here as it
does there: one random direction from ``np.random.RandomState(0)``, a central difference
with step ``EPS``, and tolerances by dtype that grow with the number of elements compared.
"""
from __future__ import annotations

import functools
import operator

import ml_dtypes
import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.base import tree
from jaxlite._src.base.config import config

EPS = 1e-4

_NARROW_FLOATS = {np.dtype(t): tol for t, tol in [
    (ml_dtypes.float4_e2m1fn, 1.0), (ml_dtypes.float8_e8m0fnu, 1.0),
    (ml_dtypes.float8_e3m4, 1e-1), (ml_dtypes.float8_e4m3, 1e-1),
    (ml_dtypes.float8_e4m3b11fnuz, 1e-1), (ml_dtypes.float8_e4m3fn, 1e-1),
    (ml_dtypes.float8_e4m3fnuz, 1e-1), (ml_dtypes.float8_e5m2, 1e-1),
    (ml_dtypes.float8_e5m2fnuz, 1e-1)]}

# JAX's tables: the tolerance of a comparison of values of a dtype, and of a gradient check
default_tolerance = {
    **{np.dtype(t): 0 for t in (dtypes.float0, np.bool_, np.int8, np.int16, np.int32,
                                np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                                ml_dtypes.int2, ml_dtypes.int4, ml_dtypes.uint2,
                                ml_dtypes.uint4)},
    **_NARROW_FLOATS,
    np.dtype(dtypes.bfloat16): 1e-2, np.dtype(np.float16): 1e-3,
    np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-15,
    np.dtype(np.complex64): 1e-6, np.dtype(np.complex128): 1e-15,
}
default_gradient_tolerance = {
    **_NARROW_FLOATS,
    np.dtype(dtypes.bfloat16): 1e-1, np.dtype(np.float16): 1e-2,
    np.dtype(np.float32): 2e-3, np.dtype(np.float64): 1e-5,
    np.dtype(np.complex64): 1e-3, np.dtype(np.complex128): 1e-5,
}
_UPCAST = set(_NARROW_FLOATS) | {np.dtype(dtypes.bfloat16)}


def _dtype(x) -> np.dtype:
  if hasattr(x, "dtype"):
    return np.dtype(x.dtype)
  python = {bool: np.bool_, int: np.int64, float: np.float64, complex: np.complex128}
  return np.dtype(python[type(x)]) if type(x) in python else np.asarray(x).dtype


def _is_python_scalar(x) -> bool:
  return not isinstance(x, np.generic) and isinstance(x, (bool, int, float, complex))


def tolerance(dtype, tol=None):
  """``tol`` itself, or its entry for ``dtype`` (canonical) when it is a dict, falling
  back on ``default_tolerance``."""
  tol = {} if tol is None else tol
  if not isinstance(tol, dict):
    return tol
  tol = {np.dtype(k): v for k, v in tol.items()}
  dtype = dtypes.canonicalize_dtype(np.dtype(dtype))
  return tol.get(dtype, default_tolerance[dtype])


def _merge_tolerance(tol, default):
  if tol is None:
    return default
  if not isinstance(tol, dict):
    return tol
  return {**default, **{np.dtype(k): v for k, v in tol.items()}}


def _assert_close(a, b, atol=None, rtol=None, err_msg=""):
  a, b = np.asarray(a), np.asarray(b)
  assert a.shape == b.shape, (a.shape, b.shape)
  atol = max(tolerance(a.dtype, atol), tolerance(b.dtype, atol))
  rtol = max(tolerance(a.dtype, rtol), tolerance(b.dtype, rtol))
  if a.dtype == b.dtype == dtypes.float0:
    np.testing.assert_array_equal(a, b, err_msg=err_msg)
    return
  a, b = (x.astype(np.float32) if x.dtype in _UPCAST else x for x in (a, b))
  # (JAX scales both tolerances by the number of elements)
  kw = {k: v for k, v in (("atol", atol * a.size), ("rtol", rtol * b.size)) if v}
  with np.errstate(invalid="ignore"):
    np.testing.assert_allclose(a, b, **kw, err_msg=err_msg)


def check_close(xs, ys, atol=None, rtol=None, err_msg=""):
  """Assert that the leaves of ``xs`` and ``ys`` are close (tolerances by dtype)."""
  tree.tree_map(functools.partial(_assert_close, atol=atol, rtol=rtol, err_msg=err_msg),
                xs, ys)


def _check_dtypes_match(xs, ys):
  def check(x, y):
    dx, dy = _dtype(x), _dtype(y)
    if not config.jax_enable_x64:
      dx, dy = dtypes.canonicalize_dtype(dx), dtypes.canonicalize_dtype(dy)
    assert dx == dy, (dx, dy)
  tree.tree_map(check, xs, ys)


def _keeping_type(f):
  """``f`` whose result has its first argument's dtype (a Python scalar if all were)."""
  def wrapped(*args):
    result = np.array(f(*args), dtype=_dtype(args[0]))
    return result.item() if all(map(_is_python_scalar, args)) else result
  return wrapped


_add = functools.partial(tree.tree_map, _keeping_type(operator.add))
_sub = functools.partial(tree.tree_map, _keeping_type(operator.sub))
_conj = functools.partial(tree.tree_map, _keeping_type(np.conj))


def _safe_sub(xs, ys):
  def sub(x, y):   # inf - inf is 0
    dtype = _dtype(x)
    with np.errstate(invalid="ignore"):
      return np.where(np.equal(x, y), np.array(0, dtype), np.subtract(x, y, dtype=dtype))
  return tree.tree_map(sub, xs, ys)


def _scalar_mul(xs, a):
  def mul(x):
    dtype = _dtype(x)
    result = np.multiply(x, np.array(a, dtype=dtype), dtype=dtype)
    return result.item() if _is_python_scalar(x) else result
  return tree.tree_map(mul, xs)


def _rand_like(rng, x):
  shape, dtype = np.shape(x), _dtype(x)
  randn = lambda: np.asarray(rng.randn(*shape), dtype=dtype)
  result = randn() + dtype.type(1j) * randn() if dtypes.is_complex(dtype) else randn()
  return result.item() if _is_python_scalar(x) else result


def _inner_prod(xs, ys):
  def contract(x, y):
    return np.real(np.dot(np.conj(x).reshape(-1), y.reshape(-1)))
  return tree.tree_reduce(np.add, tree.tree_map(contract, xs, ys))


def numerical_jvp(f, primals, tangents, eps=EPS):
  """Central difference ``(f(x + eps t) - f(x - eps t)) / 2 eps``, in the inputs' dtypes."""
  delta = _scalar_mul(tangents, eps)
  f_pos = f(*_add(primals, delta))
  f_neg = f(*_sub(primals, delta))
  return _scalar_mul(_safe_sub(f_pos, f_neg), 0.5 / eps)


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
  """Check ``f_jvp(args, tangents)`` against finite differences of ``f`` in one random
  direction (``np.random.RandomState(0)``), as ``jax.test_util.check_jvp``.

  Raises
  ------
  AssertionError
    If the JVP's primal or tangent output is not close to ``f``'s or to the finite
    difference.
  """
  atol = _merge_tolerance(atol, default_gradient_tolerance)
  rtol = _merge_tolerance(rtol, default_gradient_tolerance)
  rng = np.random.RandomState(0)
  tangent = tree.tree_map(functools.partial(_rand_like, rng), args)
  v_out, t_out = f_jvp(args, tangent)
  _check_dtypes_match(v_out, t_out)
  v_out_expected = f(*args)
  _check_dtypes_match(v_out, v_out_expected)
  t_out_expected = numerical_jvp(f, args, tangent, eps=eps)
  check_close(v_out, v_out_expected, atol=atol, rtol=rtol,
              err_msg=f"{err_msg} primal" if err_msg else "primal")
  check_close(t_out, t_out_expected, atol=atol, rtol=rtol,
              err_msg=f"{err_msg} tangent" if err_msg else "tangent")


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
  """Check ``f_vjp`` through ``<J^T ct, t> == <ct, J t>`` with ``J t`` a finite
  difference, as ``jax.test_util.check_vjp``.

  Raises
  ------
  AssertionError
    If the primal output or the projected cotangent is not close.
  """
  atol = _merge_tolerance(atol, default_gradient_tolerance)
  rtol = _merge_tolerance(rtol, default_gradient_tolerance)
  rand_like = functools.partial(_rand_like, np.random.RandomState(0))
  v_out, vjpfun = f_vjp(*args)
  v_out_expected = f(*args)
  check_close(v_out, v_out_expected, atol=atol, rtol=rtol,
              err_msg=f"{err_msg} primal" if err_msg else "primal")
  tangent = tree.tree_map(rand_like, args)
  tangent_out = numerical_jvp(f, args, tangent, eps=eps)
  cotangent = tree.tree_map(rand_like, v_out)
  cotangent_out = _conj(vjpfun(_conj(cotangent)))
  ip = _inner_prod(tangent, cotangent_out)
  ip_expected = _inner_prod(tangent_out, cotangent)
  check_close(ip, ip_expected, atol=atol, rtol=rtol,
              err_msg=f"{err_msg} cotangent projection" if err_msg
              else "cotangent projection")


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
  """Check derivatives of ``f`` at ``args`` up to ``order`` against finite differences,
  each in one random direction, as ``jax.test_util.check_grads``.

  Parameters
  ----------
  f : callable
    Function of positional array arguments.
  args : tuple
    Point at which to check.
  order : int
    Highest order of derivatives to check (1 checks first derivatives).
  modes : sequence of {"fwd", "rev", "lin"}
    Check forward mode (jvp), reverse mode (vjp) and/or ``linearize``.
  atol, rtol : float or dict, optional
    Tolerances (per dtype when a dict); by default JAX's per dtype, multiplied by the
    number of elements compared.
  eps : float, optional
    Step of the finite differences (default ``EPS``, 1e-4).

  Raises
  ------
  AssertionError
    If a derivative is not close to its finite difference.
  """
  from jaxlite._src.autodiff_api import jvp, linearize, vjp
  args = tuple(args)
  eps = eps or EPS
  check_jvp_ = functools.partial(check_jvp, atol=atol, rtol=rtol, eps=eps)
  check_vjp_ = functools.partial(check_vjp, atol=atol, rtol=rtol, eps=eps)

  def jvp_from_lin(f, primals, tangents):
    out, f_lin = linearize(f, *primals)
    return out, f_lin(*tangents)

  def check(f, args, order, err_msg=""):
    if "fwd" in modes:
      msg = f"JVP of {err_msg}" if err_msg else "JVP"
      check_jvp_(f, functools.partial(jvp, f), args, err_msg=msg)
      if order > 1:
        check(functools.partial(jvp, f), (args, args), order - 1, msg)
    if "rev" in modes:
      msg = f"VJP of {err_msg}" if err_msg else "VJP"
      check_vjp_(f, functools.partial(vjp, f), args, err_msg=msg)
      if order > 1:
        def f_vjp(*args):
          out, vjp_fun = vjp(f, *args)
          return vjp_fun(out)
        check(f_vjp, args, order - 1, msg)
    if "lin" in modes:
      msg = f"LIN of {err_msg}" if err_msg else "LIN"
      check_jvp_(f, functools.partial(jvp_from_lin, f), args, err_msg=msg)
      if order > 1:
        check(functools.partial(jvp_from_lin, f), (args, args), order - 1, msg)

  check(f, args, order)
