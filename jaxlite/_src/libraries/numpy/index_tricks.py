"""NumPy's index tricks: ``mgrid`` and ``ogrid`` (coordinate grids from slices), ``r_``
and ``c_`` (concatenation from slices, scalars and arrays), and ``s_`` / ``index_exp``
(NumPy's own, which build index tuples).
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.libraries.numpy import array_ops
from jaxlite._src.libraries.numpy import creation
from jaxlite._src.libraries.numpy import lax_numpy

__all__ = ["mgrid", "ogrid", "r_", "c_", "s_", "index_exp"]

s_, index_exp = np.s_, np.index_exp


def _grid_slices(key, sparse):
  key = key if isinstance(key, tuple) else (key,)
  axes = []
  for s in key:
    if not isinstance(s, slice):
      raise IndexError(f"mgrid/ogrid take slices, got {s!r}")
    step = s.step if s.step is not None else 1
    if isinstance(step, complex):
      axes.append(creation.linspace(s.start or 0, s.stop, int(abs(step))))
    else:
      axes.append(creation.arange(s.start or 0, s.stop, step))
  if len(key) == 1 and not isinstance(key, tuple):
    return axes[0]
  grids = array_ops.meshgrid(*axes, indexing="ij", sparse=sparse)
  return list(grids) if sparse else lax_numpy.stack(grids, 0)


class _Mgrid:
  """``mgrid[0:3, 0:2]``: a dense grid of coordinates, stacked along axis 0."""

  def __getitem__(self, key):
    if isinstance(key, slice):
      return _grid_slices((key,), False)[0]
    return _grid_slices(key, False)


class _Ogrid:
  """``ogrid[0:3, 0:2]``: an open (broadcastable) grid of coordinates, one per axis."""

  def __getitem__(self, key):
    if isinstance(key, slice):
      return _grid_slices((key,), True)[0]
    return _grid_slices(key, True)


mgrid, ogrid = _Mgrid(), _Ogrid()


class _AxisConcat:
  """``r_`` and ``c_``: concatenate slices, scalars and arrays along an axis."""

  def __init__(self, axis, ndmin, trans1d):
    self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

  def __getitem__(self, key):
    key = key if isinstance(key, tuple) else (key,)
    axis, ndmin, trans1d, matrix = self.axis, self.ndmin, self.trans1d, None
    items = []
    for i, item in enumerate(key):
      if isinstance(item, str):
        if i != 0:
          raise ValueError("string directive must be placed at the beginning")
        if item in ("r", "c"):
          matrix = item
          continue
        parts = [int(p) for p in item.split(",")]
        axis = parts[0]
        ndmin = parts[1] if len(parts) > 1 else ndmin
        trans1d = parts[2] if len(parts) > 2 else trans1d
        continue
      if isinstance(item, slice):
        arr = _grid_slices((item,), False)[0]
      else:
        arr = creation.asarray(item)
      if arr.ndim < ndmin:
        # NumPy's rule: new axes go first, then the array's own axes start at trans1d.
        shape = (1,) * (ndmin - arr.ndim) + arr.shape
        arr = lax_numpy.reshape(arr, shape)
        if trans1d != -1 and item is not None and np.ndim(item) < ndmin:
          k = np.ndim(item) if not isinstance(item, slice) else 1
          order = list(range(ndmin - k, ndmin))
          rest = list(range(ndmin - k))
          t = trans1d % ndmin
          perm = rest[:t] + order + rest[t:]
          arr = lax_numpy.transpose(arr, np.argsort(perm))
      items.append(arr)
    out = lax_numpy.concatenate([lax_numpy.atleast_1d(a) for a in items], axis=axis)
    if matrix is not None:
      out = lax_numpy.atleast_2d(out)
      out = out.T if matrix == "c" else out
    return out

  def __len__(self):
    return 0


r_ = _AxisConcat(0, 1, -1)
c_ = _AxisConcat(-1, 2, 0)
