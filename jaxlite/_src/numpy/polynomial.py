"""Polynomials as 1-D coefficient arrays, highest power first (``numpy.polyval`` etc.)."""
from __future__ import annotations

import numpy as np

from jaxlite._src import core
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.numpy import ufuncs
from jaxlite._src.numpy.statistics import convolve
from jaxlite._src.numpy.util import (as_operand, check_arraylike, promote_dtypes,
                                     promote_dtypes_inexact)

__all__ = ["poly", "polyval", "polyadd", "polysub", "polymul", "polyder", "polyint"]


def _coeffs(name, p):
  check_arraylike(name, p)
  p = as_operand(p)
  if p.ndim != 1:
    raise ValueError(f"jnp.{name}: the coefficients must be a 1-D array, got shape {p.shape}")
  return p


def polyval(p, x, *, unroll=16):
  """``p[0] * x**(n-1) + ... + p[n-1]`` by Horner's rule (``unroll`` is accepted for
  JAX compatibility; the loop is always unrolled). The running value starts as a strong
  zero of the promoted type, so booleans stay boolean and the result is strongly typed."""
  p = _coeffs("polyval", p)
  check_arraylike("polyval", x)
  p, x = promote_dtypes(p, x)
  shape = np.broadcast_shapes(p.shape[1:], x.shape)
  y = lax_shapes.broadcast_in_dim(as_operand(np.zeros((), x.dtype)), shape, ())
  for i in range(p.shape[0]):
    y = ufuncs.add(ufuncs.multiply(y, x), p[i])
  return y


def _pad_front(p, n):
  return lax_shapes.pad(p, lax._const(p, 0), [(n - p.shape[0], 0, 0)]) if p.shape[0] < n \
      else p


def _aligned(name, a1, a2):
  """The promoted coefficients of ``a1`` and ``a2``, zero-padded in front to one length."""
  a1, a2 = promote_dtypes(_coeffs(name, a1), _coeffs(name, a2))
  n = max(a1.shape[0], a2.shape[0])
  return _pad_front(a1, n), _pad_front(a2, n)


def polyadd(a1, a2):
  """The sum of two polynomials (lax's sum, as JAX: booleans are refused)."""
  return lax.add(*_aligned("polyadd", a1, a2))


def polysub(a1, a2):
  """The difference of two polynomials (booleans are refused, as JAX negates them)."""
  return lax.sub(*_aligned("polysub", a1, a2))


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
