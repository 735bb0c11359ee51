"""``jaxlite.scipy.interpolate`` (``jax.scipy.interpolate``): ``RegularGridInterpolator``.

As in JAX 0.10.2 (after SciPy's implementation): linear or nearest interpolation on a
rectilinear grid whose axes are strictly increasing, ``fill_value`` outside it (no
``bounds_error``, which would need the values under ``jit``). The interpolator is a
pytree (its leaves are the grid, the values and the fill value), so it passes through
``jit`` and ``vmap``.
"""
from __future__ import annotations

import itertools

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.base import tree
from jaxlite._src.libraries.numpy import namespace as jnp
from jaxlite._src.libraries.numpy.util import check_arraylike, promote_dtypes_inexact

__all__ = ["RegularGridInterpolator"]

_METHODS = ("linear", "nearest")


def _check_method(method):
  if method not in _METHODS:
    raise ValueError(f"method {method!r} is not defined")


def _ndim_coords_from_arrays(points, ndim):
  """Sample points as one ``(..., ndim)`` array: from a tuple of coordinate arrays
  (broadcast together), or an array whose last axis holds the coordinates."""
  if isinstance(points, tuple) and len(points) == 1:
    points = points[0]   # an argument tuple
  if isinstance(points, tuple):
    coords = jnp.broadcast_arrays(*points)
    return jnp.stack([c.astype(dtypes.canonicalize_dtype(np.float64)) for c in coords], -1)
  check_arraylike("_ndim_coords_from_arrays", points)
  points = jnp.asarray(points)
  return points.reshape(-1, ndim) if points.ndim == 1 else points


@tree.register_pytree_node_class
class RegularGridInterpolator:
  """Interpolation on a regular (rectilinear) grid
  (``scipy.interpolate.RegularGridInterpolator``).

  Parameters
  ----------
  points : sequence of array_like
    The grid coordinates of each of the first ``len(points)`` axes of ``values``, each
    strictly increasing (a decreasing axis is not supported, as in JAX).
  values : array_like
    The values on the grid; trailing axes beyond the grid's are carried along.
  method : {'linear', 'nearest'}
    The default interpolation.
  bounds_error : bool
    Must be False: an out-of-bounds error cannot be raised under ``jit``.
  fill_value : scalar or None
    The value outside the grid (default NaN); None extrapolates.

  Examples
  --------
  >>> interp = RegularGridInterpolator((jnp.array([0., 1.]),), jnp.array([0., 10.]))
  >>> interp(jnp.array([[0.25]]))
  Array([2.5], dtype=float32)
  """

  def __init__(self, points, values, method="linear", bounds_error=False,
               fill_value=np.nan):
    _check_method(method)
    self.method = method
    self.bounds_error = bounds_error
    if bounds_error:
      raise NotImplementedError("`bounds_error` takes no effect under JIT")
    check_arraylike("RegularGridInterpolator", values)
    if len(points) > np.ndim(values):
      raise ValueError(f"there are {len(points)} point arrays, but values has "
                       f"{np.ndim(values)} dimensions")
    values, = promote_dtypes_inexact(values)
    if fill_value is not None:
      check_arraylike("RegularGridInterpolator", fill_value)
      fill_value = jnp.asarray(fill_value)
      if not jnp.can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
        raise ValueError("fill_value must be either 'None' or of a type compatible with "
                         "values")
    self.fill_value = fill_value
    check_arraylike("RegularGridInterpolator", *points)
    self.grid = tuple(jnp.asarray(p) for p in points)
    self.values = values

  def tree_flatten(self):
    return (self.grid, self.values, self.fill_value), (self.method, self.bounds_error)

  @classmethod
  def tree_unflatten(cls, aux, children):
    grid, values, fill_value = children
    return cls(grid, values, *aux, fill_value)

  def __call__(self, xi, method=None):
    """The interpolated values at ``xi``: an ``(..., ndim)`` array or a tuple of
    coordinate arrays; ``method`` overrides the interpolator's."""
    method = self.method if method is None else method
    _check_method(method)
    ndim = len(self.grid)
    xi = _ndim_coords_from_arrays(xi, ndim)
    if xi.shape[-1] != ndim:
      raise ValueError(f"the requested sample points xi have dimension {xi.shape[1]}, but "
                       f"this RegularGridInterpolator has dimension {ndim}")
    xi_shape = xi.shape
    xi = xi.reshape(-1, xi_shape[-1])
    indices, norm_distances, out_of_bounds = self._find_indices(xi.T)
    if method == "linear":
      result = self._evaluate_linear(indices, norm_distances)
    else:
      result = self._evaluate_nearest(indices, norm_distances)
    if self.fill_value is not None:
      outside = out_of_bounds.reshape(result.shape[:1] + (1,) * (result.ndim - 1))
      result = jnp.where(outside, self.fill_value, result)
    return result.reshape(xi_shape[:-1] + self.values.shape[ndim:])

  def _evaluate_linear(self, indices, norm_distances):
    """The sum over the cell's corners of each corner's value times its weight (the
    product of the distances to the opposite faces)."""
    trailing = (slice(None),) + (None,) * (self.values.ndim - len(indices))
    total = jnp.asarray(0.0)
    for upper in itertools.product((False, True), repeat=len(indices)):
      weight = jnp.asarray(1.0)
      corner = []
      for up, i, y in zip(upper, indices, norm_distances):
        weight = weight * (y if up else 1 - y)
        corner.append(i + 1 if up else i)
      total = total + self.values[tuple(corner)] * weight[trailing]
    return total

  def _evaluate_nearest(self, indices, norm_distances):
    nearest = [jnp.where(y <= 0.5, i, i + 1) for i, y in zip(indices, norm_distances)]
    return self.values[tuple(nearest)]

  def _find_indices(self, xi):
    """Each point's cell (the lower grid index, clamped to the grid's cells), its
    normalized distance from the cell's lower edge, and whether it is outside the grid."""
    indices, norm_distances = [], []
    out_of_bounds = jnp.zeros((xi.shape[1],), dtype=bool)
    for x, g in zip(xi, self.grid):
      i = jnp.clip(jnp.searchsorted(g, x) - 1, 0, g.size - 2)
      indices.append(i)
      norm_distances.append((x - g[i]) / (g[i + 1] - g[i]))
      out_of_bounds = out_of_bounds | (x < g[0]) | (x > g[-1])
    return indices, norm_distances, out_of_bounds
