"""The few lax operations the transformations and the lowest lax families build values
with: broadcasts, transposes, expand_dims (zeros for autodiff, batch axes for vmap), and
the sums that reduce a cotangent to its operand's shape.

Transformations sit below lax in the layers, so they cannot import it; ``lax/shapes.py``
and ``lax/reductions.py`` register their functions here when imported, which happens
before any transformation runs (every primitive comes from lax). ``lax/elementwise.py``,
the lowest lax family, reaches the broadcasts and ``unbroadcast`` here too, and
``lax/shapes.py`` ``reduce_sum``, for the same reason.
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


def unbroadcast(aval, ct):
  return ops["unbroadcast"](aval, ct)


def reduce_sum(operand, axes):
  return ops["reduce_sum"](operand, axes)
