"""How an argument leaf enters a jitted call: its signature (what of it the cache key
holds) and the value each tier's executable receives. ``jit`` and the compiled stage
(``stages.Compiled``) share them.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src import core
from jaxlite._src import dtypes
from jaxlite._src.array import Array, Unfetched
from jaxlite._src.config import config
from jaxlite._src.core import Tracer

_SCALAR_AVALS = {}


def scalar_aval(t):
  aval = _SCALAR_AVALS.get((t, config.jax_enable_x64))
  if aval is None:
    aval = _SCALAR_AVALS[(t, config.jax_enable_x64)] = core.ShapedArray(
        (), dtypes.python_scalar_dtype(t()), t is not bool)
  return aval


def leaf_signature(x):
  """What of an argument leaf enters the cache key: shape, dtype, weak type."""
  t = type(x)
  if t is Array or t is Unfetched:
    return (x.shape, x.dtype, x.weak_type)   # no transfer for a device-backed array
  if t is np.ndarray or isinstance(x, np.generic):
    return (x.shape, dtypes.canonicalize_dtype(x.dtype), False)
  if t in (float, int, bool, complex):
    return t
  if isinstance(x, Tracer):
    a = x.aval
    return (a.shape, a.dtype, a.weak_type)
  if isinstance(x, (Array, np.ndarray)):
    return leaf_signature(np.asarray(x))
  return None


def signature_aval(sig):
  if isinstance(sig, tuple):
    return core.ShapedArray(*sig)
  return scalar_aval(sig)


def leaf_value(x):
  """The NumPy value a tier-0 executable receives for an argument leaf."""
  t = type(x)
  if t is Array or t is Unfetched:
    return x._value
  if t in (float, int, bool, complex):
    return np.asarray(x, dtypes.python_scalar_dtype(x))[()]
  # a copy: an output may alias this input, and the caller may mutate their NumPy array
  value = np.asarray(x)
  return np.array(value, dtypes.canonicalize_dtype(value.dtype))


def leaf_device_value(x):
  """What the XLA tier receives for an argument leaf: an Array's device buffer (made
  once and kept by the Array: no transfer on later calls), else the NumPy value."""
  t = type(x)
  if t is Array or t is Unfetched:
    buf = x._buf
    return x._to_device() if buf is None else buf
  return leaf_value(x)
