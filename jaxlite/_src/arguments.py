"""How an argument leaf enters a jitted call: its signature (what of it the cache key
holds) and the value each tier's executable receives. ``jit`` and the compiled stage
(``stages.Compiled``) share them.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.core import extended
from jaxlite._src.core.state import types as state_types
from jaxlite._src.core.state.types import Ref
from jaxlite._src.base import transfer_guard
from jaxlite._src.base import tree
from jaxlite._src.core.array import Array, placement
from jaxlite._src.base.config import config
from jaxlite._src.core.core import Tracer

_SCALAR_SIGNATURES = {}


def scalar_signature(t):
  """A Python scalar type's signature: that of the weakly typed Array it becomes, so
  that ``f(1.0)`` and ``f(f(1.0))`` share one trace, as in JAX."""
  sig = _SCALAR_SIGNATURES.get((t, config.jax_enable_x64))
  if sig is None:
    sig = _SCALAR_SIGNATURES[(t, config.jax_enable_x64)] = (
        (), dtypes.python_scalar_dtype(t()), t is not bool)
  return sig


def leaf_signature(x):
  """What of an argument leaf enters the cache key: shape, dtype, weak type, and the
  split over Explicit mesh axes of its type where it has one (with that mesh)."""
  t = type(x)
  if t is Array:
    if x._placed is not None:   # laid out over a mesh: its type may be split
      return _typed_signature(x.aval)
    return (x.shape, x.dtype, x.weak_type)   # no transfer for a device-backed array
  if t is np.ndarray or isinstance(x, np.generic):
    return (x.shape, dtypes.canonicalize_dtype(x.dtype), False)
  if t in (float, int, bool, complex):
    return scalar_signature(t)
  if isinstance(x, Tracer):
    return _typed_signature(x.aval)
  if isinstance(x, extended.ExtendedArray):
    return (x.shape, x.dtype, False)
  if t is Ref:   # the executable takes the value it holds (state.types.RefPlan)
    a = x._aval.inner_aval
    return (_REF, a.shape, a.dtype, a.weak_type)
  if isinstance(x, (Array, np.ndarray)):
    return leaf_signature(np.asarray(x))
  if state_types.is_hi(x):   # its type and quasi-dynamic data (RefPlan: its arrays)
    aval = core.get_aval(x)
    return (_HI, aval, x.cur_qdd() if aval.has_qdd else None)
  return None


def stage_signature(x):
  """``leaf_signature``, also of a ``ShapeDtypeStruct``: the stages (``trace``, ``lower``,
  ``eval_shape``) take one in place of an array, as JAX's do; a call does not."""
  sig = leaf_signature(x)
  if sig is None and type(x) is core.ShapeDtypeStruct:
    return _typed_signature(x.aval)
  return sig


def nested_key(args, leaves, key) -> bool:
  """Append to ``key`` the fast cache key of ``args`` and to ``leaves`` their Arrays (of a
  typed key, its data), in the order ``tree_flatten`` visits them; False, at once, for
  anything but Arrays nested in tuples, lists, dicts, named tuples and Nones. Containers
  enter the key as (type, length) or (dict, keys), Nones as None and Arrays as their
  (shape, dtype) and weak type, so equal keys mean equal argument trees and leaf
  signatures: what ``jit``'s cache key holds of them."""
  for x in args:
    t = type(x)
    if t is Array:
      placed = x._placed
      if placed is not None:   # committed: the key names its device
        devices = placed.sharding.device_set
        if len(devices) != 1:
          return False
        key.append(((placed.shape, placed.dtype), x.weak_type, next(iter(devices))))
      elif (buf := x._buf) is not None:   # shape and dtype come from the buffer
        key.append((buf.spec, x.weak_type))
      else:
        value = x._host
        key.append(((value.shape, value.dtype), x.weak_type))
      leaves.append(x)
    elif x is None:
      key.append(None)
    elif t is tuple or t is list:
      key.append((t, len(x)))
      if not nested_key(x, leaves, key):
        return False
    elif t is dict:
      names = tree.dict_keys_in_order(x)
      key.append((dict, names))
      if not nested_key(map(x.__getitem__, names), leaves, key):
        return False
    elif issubclass(t, tuple) and hasattr(t, "_fields") and not tree.is_registered(t):
      key.append((t, len(x)))   # a named tuple
      if not nested_key(x, leaves, key):
        return False
    elif issubclass(t, extended.ExtendedArray) and x._physical._placed is None:
      # an extended array enters the key as itself, and the leaves as its data: what
      # the executable takes (passes.physicalize)
      key.append(((x.shape, x.dtype), False))
      leaves.append(x._physical)
    else:
      return False
  return True


_REF = "Ref"   # first element of a ref argument's signature
_HI = "HiType"   # first element of a mutable high-level value's


def is_ref_signature(sig) -> bool:
  """Whether an argument of signature ``sig`` holds state (a ref, or a mutable
  high-level value) that the call reads and writes back (``state.types.RefPlan``)."""
  return type(sig) is tuple and (sig[0] is _REF or sig[0] is _HI)


def _typed_signature(a):
  if getattr(a, "spec", None) is None:
    return (a.shape, a.dtype, a.weak_type)
  return (a.shape, a.dtype, a.weak_type, a.spec, a.mesh)


def signature_avals(sig) -> list:
  """The types of the jaxpr inputs an argument of signature ``sig`` becomes: one, or the
  arrays a mutable high-level value's state lowers to."""
  if type(sig) is tuple and sig[0] is _HI:
    return list(sig[1].lo_ty_qdd(sig[2]) if sig[1].has_qdd else sig[1].lo_ty())
  return [signature_aval(sig)]


def signature_aval(sig):
  """The type of an argument of signature ``sig`` (a ref's: of the value it holds)."""
  if type(sig) is tuple and sig[0] is _HI:
    return sig[1]
  if is_ref_signature(sig):
    return core.ShapedArray(*sig[1:])
  if len(sig) == 5:
    return core.ShapedArray(*sig[:3], spec=sig[3], mesh=sig[4])
  return core.ShapedArray(*sig)


def leaf_value(x):
  """The NumPy value a tier-0 executable receives for an argument leaf."""
  t = type(x)
  if t is Array:
    return x._value
  if t in (float, int, bool, complex):
    return np.asarray(x, dtypes.python_scalar_dtype(x))[()]
  if isinstance(x, extended.ExtendedArray):   # the executable takes the data
    return leaf_value(x._physical)   # (passes.physicalize)
  # a copy: an output may alias this input, and the caller may mutate their NumPy array
  value = np.asarray(x)
  return np.array(value, dtypes.canonicalize_dtype(value.dtype))


def leaf_device_value(x, client=None):
  """What an XLA executable of PJRT ``client`` (None: the CPU's) receives for an argument
  leaf: an Array's device buffer (made once and kept by the Array: no transfer on later
  calls), else the NumPy value (transferred by the call: a guarded host-to-device
  transfer where the client is a device's)."""
  t = type(x)
  if t is Array:
    buf = x._buf
    return x._to_device(client) if buf is None else buf
  if isinstance(x, extended.ExtendedArray):
    return leaf_device_value(x._physical, client)
  if getattr(x, "dtype", None) == dtypes.float0:   # held as bool (xla.buffer_spec)
    return np.zeros(np.shape(x), np.bool_)
  if transfer_guard.active and client is not None and placement["resident"](client):
    transfer_guard.check("host_to_device", lambda: f"aval={core.get_aval(x)!r}")
  return leaf_value(x)
