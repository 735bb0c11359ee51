"""Window functions of ``jaxlite.numpy`` (``numpy.hanning`` and friends)."""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.lax import special as lax_special

__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser"]


def _grid(name, M):
  """``(n, M)``: the float sample index ``0 .. M-1`` and the static length."""
  M = core.concrete_or_error(int, M, f"M argument of jnp.{name}")
  dtype = dtypes.default_float_dtype()
  return lax.convert_element_type(lax_shapes.iota(np.int32, max(M, 0)), dtype), M


def _cosine_window(name, M, coeffs):
  n, M = _grid(name, M)
  if M <= 1:
    return lax.add(lax.mul(n, lax._const(n, 0)), lax._const(n, 1))
  out = None
  for k, c in enumerate(coeffs):
    term = lax.mul(lax._const(n, c), lax.cos(lax.mul(n, lax._const(n, 2 * np.pi * k
                                                                    / (M - 1)))))
    out = term if out is None else lax.add(out, term)
  return out


def hanning(M):
  """The Hann window of ``M`` points, ``0.5 - 0.5 cos(2 pi n / (M - 1))``."""
  return _cosine_window("hanning", M, (0.5, -0.5))


def hamming(M):
  """The Hamming window of ``M`` points, ``0.54 - 0.46 cos(2 pi n / (M - 1))``."""
  return _cosine_window("hamming", M, (0.54, -0.46))


def blackman(M):
  """The Blackman window of ``M`` points."""
  return _cosine_window("blackman", M, (0.42, -0.5, 0.08))


def bartlett(M):
  """The triangular (Bartlett) window of ``M`` points."""
  n, M = _grid("bartlett", M)
  if M <= 1:
    return lax.add(lax.mul(n, lax._const(n, 0)), lax._const(n, 1))
  half = lax._const(n, (M - 1) / 2)
  return lax.sub(lax._const(n, 1), lax.abs(lax.div(lax.sub(n, half), half)))


def kaiser(M, beta):
  """The Kaiser window of ``M`` points with shape parameter ``beta``."""
  n, M = _grid("kaiser", M)
  if M <= 1:
    return lax.add(lax.mul(n, lax._const(n, 0)), lax._const(n, 1))
  from jaxlite._src.libraries.numpy.util import promote_dtypes
  beta = lax.convert_element_type(promote_dtypes(beta)[0], n.dtype)
  alpha = (M - 1) / 2
  r = lax.div(lax.sub(n, lax._const(n, alpha)), lax._const(n, alpha))
  arg = lax.mul(lax.broadcast_like(beta, n),
                lax.sqrt(lax.max(lax.sub(lax._const(n, 1), lax.mul(r, r)), lax._const(n, 0))))
  i0 = lambda v: lax.mul(lax_special.bessel_i0e(v), lax.exp(lax.abs(v)))
  return lax.div(i0(arg), lax.broadcast_like(i0(beta), n))
