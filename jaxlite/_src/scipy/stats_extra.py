"""Distribution functions missing from ``stats.py``: the normal inverse survival
function."""
from __future__ import annotations

from jaxlite._src.lax import special as lax_special
from jaxlite._src.numpy.util import promote_args_inexact

__all__ = ["norm_isf"]


def norm_isf(q, loc=0, scale=1):
  """Inverse survival function of the normal distribution: ``loc - scale * ndtri(q)``
  (``scipy.stats.norm.isf``)."""
  q, loc, scale = promote_args_inexact("norm.isf", q, loc, scale)
  # ndtri(q) = sqrt(2) * erfinv(2q - 1); the symmetry keeps precision for small q
  return loc - scale * (2 ** 0.5) * lax_special.erf_inv(2 * q - 1)
