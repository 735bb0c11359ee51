"""Matrix products composed from ``dot_general``: ``batch_matmul``, the grouped
``ragged_dot`` / ``ragged_dot_general`` and the block-scaled ``scaled_dot``.

None adds a primitive (JAX's ``ragged_dot_general`` is one), so jaxprs show the
``dot_general`` and the masks they are made of.
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.lax.base import operand as _operand
from jaxlite._src.lax import reductions as red
from jaxlite._src.lax import shapes
from jaxlite._src.lax.shapes import _fill
from jaxlite._src.lax import sorting


def batch_matmul(lhs, rhs, precision=None):
  """Batched matrix product over all leading axes: ``(..., m, k) @ (..., k, n)``."""
  lhs, rhs = _operand(lhs), _operand(rhs)
  la, ra = core.get_aval(lhs), core.get_aval(rhs)
  if la.ndim < 2 or la.ndim != ra.ndim:
    raise ValueError(f"batch_matmul requires arrays of equal rank >= 2, got {la.ndim} and "
                     f"{ra.ndim}")
  if la.shape[:-2] != ra.shape[:-2]:
    raise ValueError("batch_matmul requires equal batch dimensions, got "
                     f"{la.shape[:-2]} and {ra.shape[:-2]}")
  batch = tuple(range(la.ndim - 2))
  return red.dot_general(lhs, rhs, (((la.ndim - 1,), (la.ndim - 2,)), (batch, batch)),
                         precision=precision)


# -- ragged (grouped) dots
class RaggedDotDimensionNumbers(NamedTuple):
  """Dimension numbers of ``ragged_dot_general``: the dot's ``((lhs_contract,
  rhs_contract), (lhs_batch, rhs_batch))``, the lhs ragged dimensions and the rhs group
  dimensions."""
  dot_dimension_numbers: tuple
  lhs_ragged_dimensions: Sequence[int]
  rhs_group_dimensions: Sequence[int]


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None, out_sharding=None):
  """Grouped matmul: rows of ``lhs`` ``[m, k]`` are split into consecutive groups of
  ``group_sizes`` ``[g]``, and group ``i`` is multiplied by ``rhs[i]`` (``rhs`` is
  ``[g, k, n]``). Rows past ``sum(group_sizes)`` give zeros."""
  if group_offset is not None:
    raise NotImplementedError("ragged_dot: group_offset is not supported")
  lhs, rhs, group_sizes = _operand(lhs), _operand(rhs), _operand(group_sizes)
  la, ra = core.get_aval(lhs), core.get_aval(rhs)
  if la.ndim != 2 or ra.ndim != 3 or core.get_aval(group_sizes).shape != (ra.shape[0],):
    raise TypeError(f"ragged_dot expects lhs [m, k], rhs [g, k, n], group_sizes [g]; got "
                    f"{la.shape}, {ra.shape}, {core.get_aval(group_sizes).shape}")
  m, g = la.shape[0], ra.shape[0]
  ends = sorting.cumsum(ew.convert_element_type(group_sizes, np.int32), axis=0)
  starts = ew.sub(ends, ew.convert_element_type(group_sizes, np.int32))
  rows = shapes.broadcasted_iota(np.int32, (m, g), 0)
  mask = ew.bitwise_and(ew.ge(rows, shapes.broadcast_in_dim(starts, (m, g), (1,))),
                        ew.lt(rows, shapes.broadcast_in_dim(ends, (m, g), (1,))))
  # per-group products [g, m, n], then keep each row's own group
  prod = red.dot_general(lhs, rhs, (((1,), (1,)), ((), ())), precision=precision,
                         preferred_element_type=preferred_element_type)  # [m, g, n]
  prod = ew.select(shapes.broadcast_in_dim(mask, core.get_aval(prod).shape, (0, 1)), prod,
                   _fill(prod, 0))
  return red.reduce_sum(prod, (1,))


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None, out_sharding=None):
  """``ragged_dot`` with explicit dimension numbers. Only the ``ragged_dot`` case is
  supported: no batch dimensions, one lhs ragged non-contracting dimension and one rhs
  group dimension."""
  dn = ragged_dot_dimension_numbers
  (lc, rc), (lb, rb) = dn.dot_dimension_numbers
  lhs, rhs = _operand(lhs), _operand(rhs)
  if lb or rb or len(dn.lhs_ragged_dimensions) != 1 or len(dn.rhs_group_dimensions) != 1 \
      or len(lc) != 1 or core.get_aval(lhs).ndim != 2 or core.get_aval(rhs).ndim != 3 \
      or dn.lhs_ragged_dimensions[0] in lc:
    raise NotImplementedError("ragged_dot_general: only the ragged_dot form (2-D lhs "
                              "ragged in its non-contracting dimension, 3-D rhs with one "
                              "group dimension, no batch dimensions) is supported")
  lhs = shapes.transpose(lhs, (dn.lhs_ragged_dimensions[0], lc[0]))
  gdim = dn.rhs_group_dimensions[0]
  free = [d for d in range(3) if d not in (gdim, rc[0])]
  rhs = shapes.transpose(rhs, (gdim, rc[0], free[0]))
  return ragged_dot(lhs, rhs, group_sizes, precision, preferred_element_type, group_offset)


# -- block-scaled dots
def _expand_scale(scale, shape):
  sa = core.get_aval(scale)
  for axis, (s, d) in enumerate(zip(sa.shape, shape)):
    if s != d:
      if d % s:
        raise ValueError(f"scaled_dot: scale dimension {s} does not divide operand "
                         f"dimension {d}")
      cur = core.get_aval(scale).shape
      big = cur[:axis] + (s, d // s) + cur[axis + 1:]
      scale = shapes.broadcast_in_dim(scale, big, tuple(i for i in range(len(big))
                                                        if i != axis + 1))
      scale = shapes.reshape(scale, cur[:axis] + (d,) + cur[axis + 1:])
  return scale


def scaled_dot(lhs, rhs, *, lhs_scale=None, rhs_scale=None, dimension_numbers=None,
               preferred_element_type=None):
  """``dot_general(lhs * lhs_scale, rhs * rhs_scale)``, each scale repeated along the
  contracting dimension in blocks ("subchannels"), computed in
  ``preferred_element_type`` (default bfloat16)."""
  lhs, rhs = _operand(lhs), _operand(rhs)
  n = core.get_aval(lhs).ndim
  if dimension_numbers is None:
    if n < 2:
      raise TypeError("scaled_dot does not support 0-rank and 1-rank operands.")
    dimension_numbers = (((n - 1,), (n - 2,)), (tuple(range(n - 2)), tuple(range(n - 2))))
  out_dtype = dtypes.canonicalize_dtype(preferred_element_type or dtypes.bfloat16)
  acc = np.dtype(np.float32)

  def scaled(x, scale):
    x = ew.convert_element_type(x, acc)
    if scale is None:
      return x
    return ew.mul(x, _expand_scale(ew.convert_element_type(_operand(scale), acc),
                                   core.get_aval(x).shape))

  out = red.dot_general(scaled(lhs, lhs_scale), scaled(rhs, rhs_scale), dimension_numbers)
  return ew.convert_element_type(out, out_dtype)
