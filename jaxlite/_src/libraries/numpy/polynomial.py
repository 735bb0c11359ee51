"""Polynomials as 1-D coefficient arrays, highest power first (``numpy.polyval`` etc.)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import errors
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.libraries.numpy import array_ops
from jaxlite._src.libraries.numpy import creation
from jaxlite._src.libraries.numpy import lax_numpy
from jaxlite._src.libraries.numpy import linalg
from jaxlite._src.libraries.numpy import math
from jaxlite._src.libraries.numpy import reductions
from jaxlite._src.libraries.numpy import ufuncs
from jaxlite._src.libraries.numpy.statistics import convolve
from jaxlite._src.libraries.numpy.util import (as_operand, check_arraylike, ensure_arraylike,
                                     promote_dtypes, promote_dtypes_inexact)

__all__ = ["poly", "polyval", "polyadd", "polysub", "polymul", "polyder", "polyint",
           "polydiv", "polyfit", "roots", "trim_zeros"]


def _coeffs(name, p, batched=False):
  """``p`` as an array of coefficients along axis 0; ``batched`` functions (as JAX's
  ``polyval`` and ``polyadd``) take further axes as a batch of polynomials."""
  check_arraylike(name, p)
  p = as_operand(p)
  if p.ndim != 1 and not (batched and p.ndim > 1):
    want = "an array of at least one dimension" if batched else "a 1-D array"
    raise ValueError(f"jnp.{name}: the coefficients must be {want}, got shape {p.shape}")
  return p


def polyval(p, x, *, unroll=16):
  """``p[0] * x**(n-1) + ... + p[n-1]`` by Horner's rule (``unroll`` is accepted for
  JAX compatibility; the loop is always unrolled). The running value starts as a strong
  zero of the promoted type, so booleans stay boolean and the result is strongly typed.
  Axes of ``p`` after the first hold a batch of polynomials, broadcast against ``x``."""
  p = _coeffs("polyval", p, batched=True)
  check_arraylike("polyval", x)
  p, x = promote_dtypes(p, x)
  shape = np.broadcast_shapes(p.shape[1:], x.shape)
  y = lax_shapes.broadcast_in_dim(as_operand(np.zeros((), x.dtype)), shape, ())
  for i in range(p.shape[0]):
    y = ufuncs.add(ufuncs.multiply(y, x), p[i])
  return y


def _broadcasts_to(shape, target):
  try:
    return len(shape) <= len(target) and np.broadcast_shapes(shape, target) == target
  except ValueError:
    return False


def _poly_sum(name, a1, a2):
  """``a1 + a2`` with coefficients aligned at the end: as JAX, the shorter (``a2`` when as
  long) is added into the last rows of the longer, so its further axes broadcast to the
  longer's, whose shape (and leading coefficients, bit for bit) the result has."""
  a1, a2 = promote_dtypes(_coeffs(name, a1, True), _coeffs(name, a2, True))
  first = a2.shape[0] <= a1.shape[0]
  longer, shorter = (a1, a2) if first else (a2, a1)
  rows = (shorter.shape[0],) + longer.shape[1:]
  if shorter.shape != rows:
    if not _broadcasts_to(shorter.shape, rows):
      raise ValueError(f"jnp.{name}: the coefficients of shape {shorter.shape} do not "
                       f"broadcast to the last rows, of shape {rows}, of the longer "
                       f"polynomial of shape {longer.shape}; give both the same trailing "
                       "axes.")
    shorter = lax_numpy.broadcast_to(shorter, rows)
  k = longer.shape[0] - shorter.shape[0]
  tail = lax_shapes.slice_in_dim(longer, k, longer.shape[0])
  tail = lax.add(tail, shorter) if first else lax.add(shorter, tail)
  return tail if k == 0 else lax_shapes.concatenate(
      [lax_shapes.slice_in_dim(longer, 0, k), tail], 0)


def polyadd(a1, a2):
  """The sum of two polynomials (lax's sum, as JAX: booleans are refused). Axes after the
  first hold a batch of polynomials, as in JAX."""
  return _poly_sum("polyadd", a1, a2)


def polysub(a1, a2):
  """The difference of two polynomials: as JAX, ``a1`` plus the negated ``a2`` (so
  booleans are refused, and a zero's sign is JAX's)."""
  return _poly_sum("polysub", a1, lax.neg(_coeffs("polysub", a2, True)))


def polymul(a1, a2, *, trim_leading_zeros=False):
  """The product of two polynomials (a convolution of their coefficients)."""
  a1, a2 = promote_dtypes_inexact(_coeffs("polymul", a1), _coeffs("polymul", a2))
  if a1.shape[0] == 0 or a2.shape[0] == 0:
    return ufuncs.multiply(a1[:0], 0)
  return convolve(a1, a2)


def polyder(p, m=1):
  """The ``m``-th derivative of a polynomial."""
  p = _coeffs("polyder", p)
  m = core.concrete_or_error(int, m, "The order of jnp.polyder must be static.")
  if m < 0:
    raise ValueError("Order of derivative must be positive")
  p, = promote_dtypes_inexact(p)
  for _ in range(m):
    n = p.shape[0]
    if n <= 1:
      return p[:0]
    powers = as_operand(np.arange(n - 1, 0, -1).astype(p.dtype))
    p = ufuncs.multiply(p[:-1], powers)
  return p


def polyint(p, m=1, k=None):
  """The ``m``-th antiderivative of a polynomial, with integration constants ``k``
  (a scalar or ``m`` values; zeros by default)."""
  p = _coeffs("polyint", p)
  m = core.concrete_or_error(int, m, "The order of jnp.polyint must be static.")
  if m < 0:
    raise ValueError("Order of integral must be positive (see polyder)")
  check_arraylike("polyint", 0 if k is None else k)
  # as JAX: the constants take part in the promotion (a bool p with the default k = 0 is
  # an integer polynomial, float64 with x64 on)
  p, k = promote_dtypes_inexact(p, 0 if k is None else k)
  k = k if k.ndim else lax_shapes.reshape(k, (1,))
  if k.shape == (1,):
    k = lax_shapes.broadcast_in_dim(lax_shapes.reshape(k, ()), (m,), ())
  if k.shape != (m,):
    raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
  for i in range(m):
    n = p.shape[0]
    powers = as_operand(np.arange(n, 0, -1).astype(p.dtype))
    p = lax_shapes.concatenate([ufuncs.true_divide(p, powers), k[i:i + 1]], 0)
  return p


def poly(seq_of_zeros):
  """The coefficients of the monic polynomial with the given roots (a 1-D array)."""
  r = _coeffs("poly", seq_of_zeros)
  r, = promote_dtypes_inexact(r)
  out = as_operand(np.ones((1,), r.dtype))
  for i in range(r.shape[0]):
    out = convolve(out, lax_shapes.concatenate([as_operand(np.ones((1,), r.dtype)),
                                                ufuncs.negative(r[i:i + 1])], 0))
  return out


def polydiv(u, v, *, trim_leading_zeros=False):
  """Quotient and remainder of polynomial division ``u / v`` (highest power first)."""
  u, v = ensure_arraylike("polydiv", u, v)
  dtype = lax_numpy.result_type(u, v, 1.0)
  u, v = u.astype(dtype), v.astype(dtype)
  m, n = u.shape[0] - 1, v.shape[0] - 1
  scale = 1.0 / v[0]
  q = creation.zeros((max(m - n + 1, 1),), dtype)
  r = u
  for k in range(0, m - n + 1):
    d = scale * r[k]
    q = q.at[k].set(d)
    r = r.at[k:k + n + 1].add(-d * v)
  if trim_leading_zeros:
    r = trim_zeros(r, trim="f")
  return q, r


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
  """Least-squares polynomial fit of degree ``deg`` (coefficients highest power first)."""
  x, y = ensure_arraylike("polyfit", x, y)
  deg = core.concrete_or_error(int, deg, "deg must be int")
  if deg < 0:
    raise ValueError("expected deg >= 0")
  dtype = lax_numpy.result_type(x, y, 1.0)
  x, y = x.astype(dtype), y.astype(dtype)
  order = deg + 1
  rcond = x.shape[0] * float(np.finfo(dtype).eps) if rcond is None else rcond
  lhs = array_ops.vander(x, order)
  rhs = y
  if w is not None:
    w = creation.asarray(w, dtype)
    if w.ndim != 1:
      raise TypeError("expected a 1-d array for weights")
    if w.shape[0] != y.shape[0]:
      raise TypeError("expected w and y to have the same length")
    lhs = lhs * w[:, None]
    rhs = rhs * (w if rhs.ndim == 1 else w[:, None])
  # every broadcast below is explicit, as in JAX, so rank_promotion='raise' passes
  scale = ufuncs.sqrt(reductions.sum(lhs * lhs, axis=0))
  lhs = lhs / scale[None, :]
  c, resids, rank, s = linalg.lstsq(lhs, rhs, rcond)
  c = (c.T / scale[None, :]).T if c.ndim > 1 else c / scale
  if full:
    return c, resids, rank, s, creation.asarray(rcond)
  if cov:
    vbase = linalg.inv(lax_numpy.dot(lhs.T, lhs)) / math.outer(scale, scale)
    if cov == "unscaled":
      fac = creation.asarray(1.0)
    elif x.shape[0] <= order:
      raise ValueError("the number of data points must exceed order to scale the "
                       "covariance matrix")
    else:
      fac = resids / (x.shape[0] - order)
    fac = lax_numpy.atleast_1d(fac)
    if y.ndim == 1:
      return c, vbase * fac[None]
    return c, vbase[:, :, None] * fac[None, None, :]
  return c


def roots(p, *, strip_zeros=True):
  """Roots of the polynomial with coefficients ``p`` (highest power first), as the
  eigenvalues of its companion matrix; always complex. ``strip_zeros`` needs a concrete
  ``p``; under ``jit`` pass ``strip_zeros=False`` (leading zeros then give NaN roots)."""
  (p,) = ensure_arraylike("roots", p)
  if p.ndim != 1:
    raise ValueError("Input must be a rank-1 array.")
  if strip_zeros:
    p = trim_zeros(p, trim="f")
  if p.shape[0] < 2:
    return creation.zeros((0,), lax_numpy.result_type(p, 1.0, 1j))
  n_trailing = 0
  if strip_zeros:
    pn = np.asarray(p)
    n_trailing = len(pn) - len(np.trim_zeros(pn, "b"))
    p = p[:len(pn) - n_trailing]
  dtype = lax_numpy.result_type(p, 1.0)
  p = p.astype(dtype)
  n = p.shape[0] - 1
  if n == 0:
    out = creation.zeros((0,), dtype)
  else:
    comp = creation.zeros((n, n), dtype)
    comp = comp.at[0, :].set(-p[1:] / p[0])
    if n > 1:
      comp = comp.at[np.arange(1, n), np.arange(n - 1)].set(1)
    out = linalg.eigvals(comp)
  if n_trailing:
    out = lax_numpy.concatenate([out, creation.zeros((n_trailing,), out.dtype)])
  return out


def trim_zeros(filt, trim="fb", axis=None):
  """``filt`` without its leading (``'f'``) and/or trailing (``'b'``) zeros. The output
  shape depends on the values, so ``filt`` must be concrete (not usable under ``jit``)."""
  (filt,) = ensure_arraylike("trim_zeros", filt)
  if isinstance(filt, core.Tracer):
    raise errors.ConcretizationTypeError(
        filt, "jnp.trim_zeros: the output shape depends on the values of filt.\n")
  arr = np.asarray(filt)
  if arr.ndim == 0:
    raise TypeError("Cannot trim zeros of a 0-dimensional array.")
  if arr.ndim == 1 and axis is None:
    nz = np.flatnonzero(arr)
    if nz.size == 0:
      return filt[:0]
    start = nz[0] if "f" in trim.lower() else 0
    stop = nz[-1] + 1 if "b" in trim.lower() else arr.shape[0]
    return filt[start:stop]
  out = np.trim_zeros(arr, trim, axis=axis)
  index = tuple(slice(None) for _ in range(arr.ndim))
  nz = np.argwhere(arr)
  if nz.size == 0:
    return creation.asarray(out)
  axes = range(arr.ndim) if axis is None else ([axis] if isinstance(axis, int) else axis)
  index = list(index)
  for ax in axes:
    lo = nz[:, ax].min() if "f" in trim.lower() else 0
    hi = nz[:, ax].max() + 1 if "b" in trim.lower() else arr.shape[ax]
    index[ax] = slice(int(lo), int(hi))
  return filt[tuple(index)]
