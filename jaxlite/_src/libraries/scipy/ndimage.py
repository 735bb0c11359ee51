"""``jaxlite.scipy.ndimage`` (``jax.scipy.ndimage``): ``map_coordinates``.

As in JAX 0.10.2, interpolation is of order 0 (nearest) or 1 (linear), and the boundary
modes are SciPy's as documented: ``'constant'`` and ``'wrap'`` behave as SciPy's
``'grid-constant'`` and ``'grid-wrap'`` (jax-ml/jax#11097). Each output is a weighted
sum of gathers at the corner points of each coordinate's cell, so it jits,
differentiates with respect to the input and coordinates, and vectorizes.
"""
from __future__ import annotations

import functools
import itertools
import operator

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.lax import bits as lax_bits
from jaxlite._src.libraries.numpy import namespace as jnp

__all__ = ["map_coordinates"]


def _mirror_index(index, size):
  """Indices reflected about the edge samples (``d c b | a b c d | c b a``)."""
  s = size - 1   # half the period of the triangular wave |x - round(x)|, scaled
  return jnp.abs((index + s) % (2 * s) - s) if s else jnp.zeros_like(index)


def _reflect_index(index, size):
  """Indices reflected about the edges (``d c b a | a b c d | d c b a``)."""
  return jnp.floor_divide(_mirror_index(2 * index + 1, 2 * size + 1) - 1, 2)


# where an index outside [0, size) reads, by mode
_INDEX_FIXERS = {
    "constant": lambda index, size: jnp.clip(index, 0, size - 1),   # masked by cval
    "nearest": lambda index, size: jnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror_index,
    "reflect": _reflect_index,
}


def _round_half_away(x):
  return x if dtypes.issubdtype(x.dtype, np.integer) else lax_bits.round(x)


def _nearest_nodes(coordinate):
  """The nearest sample, weight 1 (ties away from zero, as JAX rounds)."""
  return [(_round_half_away(coordinate).astype(np.int32), coordinate.dtype.type(1))]


def _linear_nodes(coordinate):
  """The two samples around each coordinate, weighted by nearness."""
  lower = jnp.floor(coordinate)
  upper_weight = coordinate - lower
  index = lower.astype(np.int32)
  return [(index, 1 - upper_weight), (index + 1, upper_weight)]


_INTERPOLATIONS = {0: _nearest_nodes, 1: _linear_nodes}


def map_coordinates(input, coordinates, order, mode="constant", cval=0.0):
  """Interpolate ``input`` at ``coordinates`` (``scipy.ndimage.map_coordinates``).

  Parameters
  ----------
  input : array_like
    The N-dimensional array of samples.
  coordinates : sequence of array_like
    ``input.ndim`` arrays of one shape: the (fractional) index along each axis of each
    output point.
  order : int
    0 (nearest sample) or 1 (linear).
  mode : {'constant', 'nearest', 'wrap', 'mirror', 'reflect'}
    How points outside the input read: ``cval``, the nearest edge sample, periodically
    (SciPy's ``'grid-wrap'``), reflected about the edge samples, or about the edges.
  cval : scalar
    The value outside the input for ``mode='constant'``.

  Returns
  -------
  Array
    The interpolated values, of ``input``'s dtype (rounded for integer inputs).
  """
  input_arr = jnp.asarray(input)
  coords = [jnp.asarray(c) for c in coordinates]
  cval = jnp.asarray(cval, input_arr.dtype)
  if len(coords) != input_arr.ndim:
    raise ValueError("coordinates must be a sequence of length input.ndim, but "
                     f"{len(coords)} != {input_arr.ndim}")
  fixer = _INDEX_FIXERS.get(mode)
  if fixer is None:
    raise NotImplementedError(
        f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. "
        f"Currently supported modes are {set(_INDEX_FIXERS)}.")
  interpolation = _INTERPOLATIONS.get(order)
  if interpolation is None:
    raise NotImplementedError("jax.scipy.ndimage.map_coordinates currently requires order<=1")
  per_axis = []
  for coordinate, size in zip(coords, input_arr.shape):
    nodes = []
    for index, weight in interpolation(coordinate):
      valid = (index >= 0) & (index < size) if mode == "constant" else None
      nodes.append((fixer(index, size), valid, weight))
    per_axis.append(nodes)
  terms = []
  for corner in itertools.product(*per_axis):
    indices, valids, weights = zip(*corner)
    value = input_arr[indices]
    valids = [v for v in valids if v is not None]
    if valids:
      value = jnp.where(functools.reduce(operator.and_, valids), value, cval)
    terms.append(functools.reduce(operator.mul, weights) * value)
  result = functools.reduce(operator.add, terms)
  if dtypes.issubdtype(input_arr.dtype, np.integer):
    result = _round_half_away(result)
  return result.astype(input_arr.dtype)
