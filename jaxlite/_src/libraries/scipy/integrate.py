"""``jaxlite.scipy.integrate`` (``jax.scipy.integrate``): the trapezoidal rule."""
from __future__ import annotations

from jaxlite._src.libraries.numpy import statistics

__all__ = ["trapezoid"]


def trapezoid(y, x=None, dx=1.0, axis=-1):
  """Integrate along an axis by the composite trapezoidal rule
  (``scipy.integrate.trapezoid``).

  Parameters
  ----------
  y : array_like
    The samples.
  x : array_like, optional
    The sample points (default: spaced ``dx`` apart).
  dx : scalar
    The sample spacing when ``x`` is None.
  axis : int
    The axis to integrate along.

  Returns
  -------
  Array
    The integral, ``y`` less ``axis``.
  """
  return statistics.trapezoid(y, x, dx, axis)
