"""The Array API standard's namespace-level pieces: ``__array_api_version__``,
``__array_namespace_info__``, its dtype functions ``isdtype`` and ``can_cast``, and DLPack
(``Array.__dlpack__``, ``__dlpack_device__``, ``from_dlpack``).

An eager ``Array`` keeps its value in a NumPy buffer on the host, so DLPack exchange with
NumPy (and with anything else that reads host memory) shares that buffer both ways.
"""
from __future__ import annotations

import enum

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.core.array import Array, placement
from jaxlite._src.libraries.numpy import util

__array_api_version__ = "2024.12"

# The standard's dtypes, in the order it lists them; which are available follows
# jax_enable_x64, as JAX's namespace info does (bfloat16/float16 are not in the standard).
_STANDARD_DTYPES = tuple(np.dtype(d) for d in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "complex64", "complex128"))

_ISDTYPE_KINDS = {
    "bool": lambda d: d == np.dtype(bool),
    "signed integer": lambda d: dtypes.issubdtype(d, np.signedinteger),
    "unsigned integer": lambda d: dtypes.issubdtype(d, np.unsignedinteger),
    "integral": lambda d: dtypes.issubdtype(d, np.integer),
    "real floating": lambda d: dtypes.issubdtype(d, np.floating),
    "complex floating": lambda d: dtypes.issubdtype(d, np.complexfloating),
    "numeric": lambda d: dtypes.issubdtype(d, np.number) and d != np.dtype(bool),
}


def isdtype(dtype, kind):
  """Whether ``dtype`` is of ``kind``: a dtype, one of the array-API kind names
  (``'bool'``, ``'signed integer'``, ``'unsigned integer'``, ``'integral'``,
  ``'real floating'``, ``'complex floating'``, ``'numeric'``) or a tuple of them."""
  d = dtypes.np_dtype(getattr(dtype, "dtype", dtype))
  kinds = kind if isinstance(kind, tuple) else (kind,)
  for k in kinds:
    if isinstance(k, str):
      if k not in _ISDTYPE_KINDS:
        raise ValueError(f"Unrecognized {k=!r}")
      if _ISDTYPE_KINDS[k](d):
        return True
    elif d == dtypes.np_dtype(getattr(k, "dtype", k)):
      return True
  return False


def can_cast(from_, to, casting="safe"):
  """Whether NumPy's casting rules allow ``from_`` to become ``to`` (``numpy.can_cast``)."""
  if not isinstance(from_, (np.dtype, type, str)):
    from_ = dtypes.dtype(from_)
  return np.can_cast(dtypes.np_dtype(getattr(from_, "dtype", from_)),
                     dtypes.np_dtype(getattr(to, "dtype", to)), casting)


class ArrayNamespaceInfo:
  """What ``jaxlite.numpy`` offers, as the Array API standard's inspection API asks.

  Returned by ``jnp.__array_namespace_info__()``.
  """

  _capabilities = {"boolean indexing": False, "data-dependent shapes": False,
                   "max dimensions": 64}

  def capabilities(self):
    """Optional features: JAX's arrays have static shapes, so neither boolean indexing nor
    data-dependent output shapes are supported; arrays have at most 64 dimensions."""
    return dict(self._capabilities)

  def default_device(self):
    """``None``: arrays go where ``jax.default_device`` and placement put them."""
    return None

  def devices(self):
    """``None`` (the default placement) followed by every device."""
    return [None, *placement["devices"]()]

  def default_dtypes(self, *, device=None):
    """The default dtype of each kind; 64-bit when ``jax_enable_x64`` is set."""
    return {"real floating": dtypes.default_float_dtype(),
            "complex floating": dtypes.default_complex_dtype(),
            "integral": dtypes.default_int_dtype(),
            "indexing": dtypes.default_int_dtype()}

  def dtypes(self, *, device=None, kind=None):
    """The standard's dtypes available now, by name, restricted to ``kind``: one of
    ``'bool'``, ``'signed integer'``, ``'unsigned integer'``, ``'integral'``, ``'real
    floating'``, ``'complex floating'``, ``'numeric'``, or a tuple of them.

    Raises ``KeyError`` for an unknown kind, as JAX's does.
    """
    kinds = (None,) if kind is None else kind if isinstance(kind, tuple) else (kind,)
    tests = [(lambda d: True) if k is None else _ISDTYPE_KINDS[k] for k in kinds]
    return {d.name: d for d in _STANDARD_DTYPES
            if dtypes.canonicalize_dtype(d) == d and any(test(d) for test in tests)}


def __array_namespace_info__() -> ArrayNamespaceInfo:
  """The Array API inspection object of ``jaxlite.numpy``."""
  return ArrayNamespaceInfo()


# -- DLPack ------------------------------------------------------------------------------

class DLDeviceType(enum.IntEnum):
  """DLPack's device codes (``DLDeviceType`` in dlpack.h) for the devices JAX names."""
  kDLCPU = 1
  kDLCUDA = 2
  kDLROCM = 10


# DLPack 1.0 can mark a tensor read-only; older consumers get the buffer as it is
_READONLY_DLPACK = (1, 0)


def __dlpack_device__(self):
  """``(DLDeviceType.kDLCPU, 0)``: the buffer DLPack exports is the host NumPy value."""
  return (DLDeviceType.kDLCPU, 0)


def _check_dlpack_target(stream, dl_device):
  if stream is not None:
    raise RuntimeError(f"UNIMPLEMENTED: __dlpack__(stream={stream!r}): a stream names a "
                       "GPU queue to synchronize with; CPU buffers take stream=None.")
  if dl_device is None:
    return
  kind, index = dl_device
  if kind != DLDeviceType.kDLCPU:
    name = DLDeviceType(kind).name if kind in DLDeviceType._value2member_map_ else kind
    raise RuntimeError(f"Cannot export to DLPack device {name}: jaxlite arrays are on the "
                       f"CPU; pass dl_device=None or (kDLCPU, 0).")
  if index != 0:
    raise RuntimeError(f"INVALID_ARGUMENT: No matching device found for local_device_id "
                       f"{index}.")


def _host_buffer(x):
  """The NumPy buffer of ``x`` itself (``np.asarray(Array)`` would give a read-only view),
  a 0-d array for a scalar."""
  return np.asarray(x._value if isinstance(x, Array) else x)


def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
  """Export the array as a DLPack capsule (the Array API's ``__dlpack__``).

  The capsule points at the array's own NumPy buffer unless ``copy=True``. A consumer that
  speaks DLPack 1.0 (``max_version >= (1, 0)``, as ``numpy.from_dlpack`` does) gets it
  marked read-only, since an Array never changes; an older one gets a copy when the
  buffer is read-only, as it cannot be told.
  """
  value = core.concrete_or_error(
      _host_buffer, self, f"The __dlpack__() method was called on traced array with shape "
      f"{self.aval.str_short()}.")
  _check_dlpack_target(stream, dl_device)
  signals_readonly = max_version is not None and tuple(max_version) >= _READONLY_DLPACK
  if not copy and not signals_readonly and not value.flags.writeable:
    if copy is False:
      raise BufferError("This array's buffer is read-only, which a DLPack consumer older "
                        "than version 1.0 cannot be told, so exporting it needs a copy; "
                        "pass copy=None or True, or max_version=(1, 0).")
    copy = True
  if copy:
    value = np.array(value)
  elif signals_readonly:
    value = value.view()
    value.flags.writeable = False
  return value.__dlpack__(max_version=max_version, copy=False)


def to_device(self, device, *, stream=None):
  """The array placed on ``device`` (a ``Device``, a ``Sharding`` or None), the Array API's
  ``to_device``; as ``jax.device_put`` here, placement never moves an array's values."""
  if stream is not None:
    raise NotImplementedError("stream argument of array.to_device()")
  if device is not None and device not in placement["devices"]() and not hasattr(
      device, "device_set"):
    raise ValueError("`jax.device_put` only accepts `None`, `jax.sharding.Sharding`, "
                     "`jax.Device`, `Format`, `jax.memory.Space` or a pytree of these "
                     f"values. Received invalid value: {device}")
  return self


def from_dlpack(x, /, *, device=None, copy=None):
  """An array holding the data of ``x``, any object with ``__dlpack__`` and
  ``__dlpack_device__`` (a NumPy array, a jaxlite or JAX array, a torch CPU tensor, ...).

  With ``copy=None`` or ``False`` the result shares ``x``'s host buffer (no copy), so
  later writes to ``x`` show through, as DLPack means; ``copy=True`` copies. A 64-bit
  input without ``jax_enable_x64`` is converted to 32 bits (a copy), as JAX does.
  """
  if not (hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__")):
    raise TypeError("The array passed to from_dlpack must have __dlpack__ and "
                    "__dlpack_device__ methods.")
  value = np.from_dlpack(x, copy=copy)
  want = dtypes.canonicalize_dtype(value.dtype)
  if value.dtype != want:
    value = value.astype(want)
  return util.place_on(Array(value), device)
