"""The few lax operations the transformations build values with: broadcasts, transposes,
expand_dims (zeros for autodiff, batch axes for vmap).

Transformations sit below lax in the layers, so they cannot import it; ``lax/shapes.py``
registers its functions here when it is imported, which happens before any
transformation runs (every primitive comes from lax).
"""
from __future__ import annotations

from typing import Callable

ops: dict[str, Callable] = {}


def broadcast_in_dim(operand, shape, broadcast_dimensions):
  return ops["broadcast_in_dim"](operand, shape, broadcast_dimensions)


def broadcast_to_shape(x, shape):
  return ops["broadcast_to_shape"](x, shape)


def transpose(operand, permutation):
  return ops["transpose"](operand, permutation)


def expand_dims(x, dimensions):
  return ops["expand_dims"](x, dimensions)
