"""NumPy's bit packing: ``packbits`` puts the truth values of an array into the bits of
uint8 values, ``unpackbits`` takes them out again."""
from __future__ import annotations

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.libraries.numpy import array_ops
from jaxlite._src.libraries.numpy import creation
from jaxlite._src.libraries.numpy import indexing
from jaxlite._src.libraries.numpy import lax_numpy
from jaxlite._src.libraries.numpy import math
from jaxlite._src.libraries.numpy import reductions
from jaxlite._src.libraries.numpy import ufuncs
from jaxlite._src.libraries.numpy.util import canonicalize_axis, ensure_arraylike

__all__ = ["packbits", "unpackbits"]


def packbits(a, axis=None, bitorder="big"):
  """Pack the truth values of ``a`` into the bits of uint8 values along ``axis``."""
  (a,) = ensure_arraylike("packbits", a)
  if not (dtypes.issubdtype(a.dtype, np.integer) or a.dtype == np.dtype(bool)):
    raise TypeError('Expected an input array of integer or boolean data type')
  if bitorder not in ("little", "big"):
    raise ValueError("'order' must be either 'little' or 'big'")
  a = (a > 0).astype(np.uint8)
  if axis is None:
    a, axis = lax_numpy.ravel(a), 0
  axis = canonicalize_axis(axis, a.ndim)
  a = lax_numpy.moveaxis(a, axis, -1)
  n = a.shape[-1]
  pad = -n % 8
  a = lax_numpy.concatenate([a, creation.zeros(a.shape[:-1] + (pad,), np.uint8)], axis=-1)
  a = lax_numpy.reshape(a, a.shape[:-1] + (a.shape[-1] // 8, 8))
  shifts = np.arange(8, dtype=np.uint8)
  shifts = shifts[::-1] if bitorder == "big" else shifts
  packed = reductions.sum(math.left_shift(a, creation.asarray(shifts)), axis=-1,
                          dtype=np.uint8)
  return lax_numpy.moveaxis(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder="big"):
  """Unpack the bits of uint8 values into an array of 0/1 uint8 values along ``axis``."""
  (a,) = ensure_arraylike("unpackbits", a)
  if a.dtype != np.dtype(np.uint8):
    raise TypeError("Expected an input array of unsigned byte data type")
  if bitorder not in ("little", "big"):
    raise ValueError("'order' must be either 'little' or 'big'")
  shifts = np.arange(8, dtype=np.uint8)
  shifts = shifts[::-1] if bitorder == "big" else shifts
  bits = ufuncs.bitwise_and(math.right_shift(a[..., None], creation.asarray(shifts)), 1)
  bits = bits.astype(np.uint8)
  if axis is None:
    bits, axis = lax_numpy.ravel(bits), 0
  else:
    axis = canonicalize_axis(axis, a.ndim)
    bits = lax_numpy.moveaxis(bits, -1, axis + 1)
    bits = lax_numpy.reshape(bits, a.shape[:axis] + (a.shape[axis] * 8,) + a.shape[axis + 1:])
  if count is not None:
    n = bits.shape[axis]
    if count > n:
      pad = [(0, 0)] * bits.ndim
      pad[axis] = (0, count - n)
      bits = array_ops.pad(bits, pad)
    else:
      bits = indexing.take(bits, creation.arange(count), axis=axis)
  return bits
