"""Segment reductions (``jax.ops.segment_sum`` / ``_prod`` / ``_max`` / ``_min``).

Each is one scatter of ``data`` into an array of the reduction's identity, indexed by the
segment ids along the leading axis, so it traces, batches and differentiates like
``x.at[ids].add(data)`` and its relatives. Segments no id names keep the identity: 0 for
sums, 1 for products, -inf / +inf (floats), the integer minimum / maximum and False /
True (booleans) for max / min, as in JAX.
"""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.lax import indexing as lax_ix
from jaxlite._src.lax import sharding_constraint
from jaxlite._src.libraries.numpy import creation, reductions
from jaxlite._src.libraries.numpy.indexing import _scatter_update
from jaxlite._src.libraries.numpy.util import check_arraylike

__all__ = ["segment_sum", "segment_prod", "segment_max", "segment_min"]


def _identity(scatter_op, dtype):
  if scatter_op is lax_ix.scatter_add:
    return 0
  if scatter_op is lax_ix.scatter_mul:
    return 1
  if dtype == np.bool_:
    return scatter_op is lax_ix.scatter_min
  if dtypes.issubdtype(dtype, np.integer):
    info = dtypes.iinfo(dtype)
    return info.max if scatter_op is lax_ix.scatter_min else info.min
  return np.inf if scatter_op is lax_ix.scatter_min else -np.inf


def _num_segments(name, segment_ids, num_segments):
  if num_segments is None:
    num_segments = reductions.max(segment_ids) + 1
  num_segments = core.concrete_or_error(
      int, num_segments, f"{name}() `num_segments` argument.")
  if num_segments < 0:
    raise ValueError("num_segments must be non-negative.")
  return num_segments


def _segment_update(name, scatter_op, reducer, data, segment_ids, num_segments,
                    indices_are_sorted, unique_indices, bucket_size, mode):
  check_arraylike(name, data, segment_ids)
  mode = lax_ix.GatherScatterMode.FILL_OR_DROP if mode is None else mode
  data = creation.asarray(data)
  segment_ids = creation.asarray(segment_ids)
  dtype = data.dtype
  num_segments = _num_segments(name, segment_ids, num_segments)
  identity = _identity(scatter_op, dtype)
  if bucket_size is None:
    out = creation.full((num_segments,) + data.shape[1:], identity, dtype)
    return _scatter_update(out, segment_ids, data, scatter_op, indices_are_sorted,
                           unique_indices, mode, normalize_indices=False)
  # Reduce each bucket of ``bucket_size`` consecutive ids into its own row, then the
  # rows: shorter chains of additions (or products) round less.
  num_buckets = math.ceil(segment_ids.size / bucket_size)
  out = creation.full((num_buckets, num_segments) + data.shape[1:], identity, dtype)
  bucket = creation.arange(segment_ids.shape[0]) // bucket_size
  out = _scatter_update(out, (bucket, segment_ids[None, :]), data, scatter_op,
                        indices_are_sorted, unique_indices, mode, normalize_indices=False)
  return reducer(out, axis=0).astype(dtype)


def _segment_function(name, scatter_op, reducer, what, example):
  def fun(data, segment_ids, num_segments=None, indices_are_sorted=False,
          unique_indices=False, bucket_size=None, mode=None, out_sharding=None):
    sharding = sharding_constraint.canonicalize_out_sharding(out_sharding, name)
    out = _segment_update(name, scatter_op, reducer, data, segment_ids, num_segments,
                          indices_are_sorted, unique_indices, bucket_size, mode)
    return out if sharding is None else sharding_constraint.constrain(
        out, sharding)
  fun.__name__ = fun.__qualname__ = name
  fun.__doc__ = f"""The {what} within segments of ``data`` (``jax.ops.{name}``).

  Parameters
  ----------
  data : array
    The values; segments run along its leading axis.
  segment_ids : integer array of shape ``(data.shape[0],)``
    The segment of each row of ``data``; ids may repeat and need not be sorted.
  num_segments : int, optional
    The number of segments, static (so needed under ``jit``); default
    ``max(segment_ids) + 1``.
  indices_are_sorted, unique_indices : bool
    Promises about ``segment_ids`` that the compiler may exploit (not checked).
  bucket_size : int, optional
    Reduce each run of ``bucket_size`` ids separately, then the runs.
  mode : lax.GatherScatterMode or str, optional
    Ids outside ``[0, num_segments)`` are dropped by default; ``'clip'`` clamps them.
  out_sharding : NamedSharding or PartitionSpec, optional
    How to lay the result out over the devices of its mesh.

  Returns
  -------
  array of shape ``(num_segments,) + data.shape[1:]``; segments without data hold the
  {what}'s identity.

  Examples
  --------
  >>> import jaxlite.numpy as jnp
  >>> from jaxlite import ops
  >>> ops.{name}(jnp.arange(5), jnp.array([0, 0, 1, 1, 2]), 4)
  {example}
  """
  return fun


segment_sum = _segment_function("segment_sum", lax_ix.scatter_add, reductions.sum, "sum",
                                "Array([1, 5, 4, 0], dtype=int32)")
segment_prod = _segment_function("segment_prod", lax_ix.scatter_mul, reductions.prod,
                                 "product", "Array([0, 6, 4, 1], dtype=int32)")
segment_max = _segment_function("segment_max", lax_ix.scatter_max, reductions.max,
                                "maximum", "Array([          1,           3,           4, "
                                "-2147483648], dtype=int32)")
segment_min = _segment_function("segment_min", lax_ix.scatter_min, reductions.min,
                                "minimum", "Array([         0,          2,          4, "
                                "2147483647], dtype=int32)")
