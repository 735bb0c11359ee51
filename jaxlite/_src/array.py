"""``Array``: the immutable value users hold, backed by a NumPy buffer.

Arithmetic operators and most methods are installed by ``jaxlite.numpy`` (they are the
same functions users call), so this module holds storage, conversion and printing.
"""
from __future__ import annotations

import abc
import math

import numpy as np

from jaxlite._src import core
from jaxlite._src import dtypes
from jaxlite._src import transfer_guard
from jaxlite._src.core import ShapedArray


# Devices are the backends' business: they sit beside the layers and install these when
# imported (``device_put`` of a NumPy value to an XLA buffer, the default device).
placement: dict = {}


class Array:
  """An immutable n-dimensional array (``jax.Array``).

  Unlike ``numpy.ndarray`` it cannot be changed in place: use ``x.at[idx].set(y)`` for
  a functional update that returns a new array.

  Storage: ``_value`` is a NumPy array or scalar. An array computed by the XLA tier holds
  a device buffer (``_buf``) instead and leaves ``_value`` unset until something reads
  it: such an array is an ``Unfetched`` (see there), which reads, converts and stores the
  value once, then becomes a plain ``Array``, so every code path that reads ``x._value``
  works unchanged. Shape and dtype come from the buffer without a transfer. An array
  split over several devices (``device_put`` with a sharding, pmap, shard_map) keeps its
  pieces in ``_placed`` (``sharding.Placed``) and assembles ``_value`` from them when
  read. A deleted array (``delete``, or donated to a jitted call) holds a ``_Deleted`` in
  ``_buf``: it keeps the shape and dtype, and every read of the value raises.

  Test for an Array with ``isinstance``, or ``type(x) in ARRAY_TYPES`` on hot paths.
  """
  __slots__ = ("_value", "weak_type", "_buf", "_placed", "__weakref__")
  __array_priority__ = 100

  def __init__(self, value, weak_type: bool = False):
    self._value = value          # np.ndarray or np.generic, never written to
    self.weak_type = weak_type
    self._buf = None             # a device buffer (pjrt.DeviceBuffer) or None
    self._placed = None

  @property
  def aval(self) -> ShapedArray:
    return ShapedArray(self.shape, self.dtype, self.weak_type)

  @property
  def shape(self):
    buf = self._buf
    if buf is not None:
      return buf.spec[0]
    placed = self._placed
    return self._value.shape if placed is None else placed.shape

  @property
  def dtype(self):
    buf = self._buf
    if buf is not None:
      return buf.spec[1]
    placed = self._placed
    return self._value.dtype if placed is None else placed.dtype

  ndim = property(lambda self: len(self.shape))
  size = property(lambda self: math.prod(self.shape))

  def _to_device(self, client=None):
    """The buffer of PJRT ``client`` (None: the CPU's) the XLA tier reads this array from:
    made from ``_value`` on first use and kept, since an Array never changes (JAX's arrays
    live on the device too); later calls pass it without a transfer. When the buffer
    shares host memory (CPU, large arrays), ``_value`` becomes that memory, so the value
    is held once."""
    value = self._value
    buf = placement["device_put"](value, client)
    host = buf.host
    if host is not None and host is not value:
      self._value = host   # an aligned copy of the same contents
    self._buf = buf
    return buf

  @property
  def _on_device(self) -> bool:
    """Whether the value lives only on the device so far (not fetched yet)."""
    if self._buf is None or type(self) is not Unfetched:
      return False
    try:
      _value_slot.__get__(self)
      return False
    except AttributeError:
      return True

  # -- conversion to Python and NumPy
  def __array__(self, dtype=None, copy=None):
    if copy:
      return np.array(self._value, dtype=dtype)
    view = np.asarray(self._value, dtype=dtype)
    if view is self._value or view.base is self._value:
      view = view.view()
      view.flags.writeable = False  # the buffer is shared; NumPy must not change it
    return view

  def __bool__(self):
    return bool(self._value)

  def __int__(self):
    value = self._value
    if value.dtype.kind == "c":   # NumPy's complex scalars would drop the imaginary part
      raise TypeError("int() argument must be a string, a bytes-like object or a real "
                      "number, not 'complex'")
    return int(value)

  def __float__(self):
    value = self._value
    if value.dtype.kind == "c":
      raise TypeError("float() argument must be a string or a real number, not 'complex'")
    return float(value)

  def __complex__(self):
    return complex(self._value)

  def __index__(self):
    if not dtypes.is_integer(self.dtype) and self.dtype != np.bool_:
      raise TypeError(f"Only integer scalar arrays can be converted to a scalar index, "
                      f"got an array of dtype {self.dtype}.")
    return self._value.__index__()

  def tolist(self):
    return self._value.tolist()

  def __len__(self):
    shape = self.shape
    if not shape:
      raise TypeError("len() of unsized object")
    return shape[0]

  def __iter__(self):
    if not self._value.shape:
      raise TypeError("iteration over a 0-d array")
    return (Array(row, self.weak_type) for row in self._value)

  def __hash__(self):
    raise TypeError("unhashable type: 'Array'. Arrays cannot be dictionary keys, set "
                    "members or static arguments; convert with x.item() or tuple(x.tolist()).")

  def __setitem__(self, index, value):
    raise TypeError(core._IMMUTABLE_MESSAGE)

  def __reduce__(self):
    return (_reconstruct, (np.asarray(self._value), self.weak_type))

  # -- devices and asynchrony: XLA-tier results are computed asynchronously
  def block_until_ready(self):
    """Wait until the value is computed (without copying it to the host); returns self."""
    buf = self._buf
    if buf is not None and buf._flight is not None:   # None: computed (no call needed)
      buf.block_until_ready()
    placed = self._placed
    if placed is not None:
      for piece in placed.pieces:
        if not isinstance(piece, np.ndarray):
          piece.block_until_ready()
    return self

  def copy_to_host_async(self):
    return None

  def delete(self, _donated=False):
    """Free this array's memory now; any later use of its value raises ``RuntimeError``
    (its shape and dtype stay readable). What a donated argument becomes after the call."""
    if self._buf.__class__ is _Deleted:
      return
    deleted = _Deleted((self.shape, self.dtype), _donated)
    try:
      del self._value
    except AttributeError:
      pass
    self._placed = None
    self._buf = deleted
    self.__class__ = Unfetched   # reading the value now asks _Deleted, which raises

  def is_deleted(self) -> bool:
    """Whether ``delete`` was called, or the array was donated to a jitted call."""
    return self._buf.__class__ is _Deleted

  def is_ready(self):
    buf = self._buf
    return buf is None or buf.is_ready()

  @property
  def device(self):
    placed = self._placed
    if placed is not None:
      if len(placed.sharding.device_set) > 1:
        raise ValueError("Length of devices is greater than 1. Please use `.devices()`.")
      return next(iter(placed.sharding.device_set))
    buf = self._buf
    if buf is not None and buf.__class__ is not _Deleted:
      return placement["device_of"](buf)
    return placement["default_device"]()

  def devices(self):
    placed = self._placed
    return {self.device} if placed is None else set(placed.sharding.device_set)

  @property
  def sharding(self):
    """How the array is laid out over devices (``jax.sharding.Sharding``)."""
    return placement["sharding"](self)

  @property
  def addressable_shards(self):
    """One ``Shard`` (device, index, replica_id, data) per device holding a piece."""
    return placement["shards"](self)

  @property
  def is_fully_replicated(self):
    placed = self._placed
    return placed is None or placed.sharding.is_fully_replicated

  is_fully_addressable = True

  @property
  def committed(self):
    return self._placed is not None

  # -- printing, as JAX prints
  def __repr__(self):
    return format_array_repr(np.asarray(self._value), self.weak_type)

  def __str__(self):
    return str(np.asarray(self._value))

  def __format__(self, spec):
    if not self._value.shape:
      return format(self._value.item(), spec)
    return format(str(self), spec)


class _Deleted:
  """Stands in for the buffer of a deleted Array. Keeps (shape, dtype) in ``spec`` as a
  device buffer does, so shape queries still answer and the jit paths that read buffers or
  values reach ``to_numpy`` / ``__array__``, which raise JAX's error."""
  __slots__ = ("spec", "donated")
  host = None
  client = None
  _flight = "deleted"   # not None, as for a buffer still computing: waiting raises

  def __init__(self, spec, donated=False):
    self.spec = spec
    self.donated = donated   # consumed by a call it was donated to (not ``delete()``)

  def _error(self):
    shape, dtype = self.spec
    return RuntimeError(f"Array has been deleted with shape="
                        f"{ShapedArray(shape, dtype).str_short()}.")

  def to_numpy(self):
    raise self._error()

  def __array__(self, dtype=None, copy=None):
    raise self._error()

  def block_until_ready(self):
    raise RuntimeError("INVALID_ARGUMENT: BlockHostUntilReady() called on deleted or "
                       "donated buffer")

  def is_ready(self):
    raise RuntimeError("INVALID_ARGUMENT: Array has been deleted.")

  def donatable(self, value_read):
    return False   # nothing to give XLA: the call fails reading it


def check_donated_once(leaves, donate):
  """A donated Array must not also be another argument of the same call (its buffer
  would be gone while read): XLA's error, raised before anything runs on any tier."""
  first = {}
  for i, x in enumerate(leaves):
    if type(x) in ARRAY_TYPES:
      j = first.setdefault(id(x), i)
      if j != i and (j in donate or i in donate):
        if i in donate and j in donate:
          what = "Attempt to donate the same buffer twice in Execute()"
          toy = "f(donate(a), donate(a))"
        elif j in donate:
          what = ("Attempt to use a buffer that was previously donated in the same call to "
                  "Execute()")
          toy = "f(donate(a), a)"
        else:
          what = "Attempt to donate a buffer which is also used by the same call to Execute()"
          toy = "f(a, donate(a))"
        raise DonationError(f"INVALID_ARGUMENT: {what} (flattened argument "
                            f"{i}, replica 0, partition 0, first use: {j}). Toy example "
                            f"for this bug: `{toy}`.")


class DonationError(RuntimeError):
  """A donated buffer used twice by one call (JAX raises ``JaxRuntimeError``)."""


def delete_donated(leaves, donate):
  """Delete the Arrays among ``leaves`` at the positions ``donate``: after the call they
  were donated to, they are gone on every tier, as in JAX (other values are untouched)."""
  for i in donate:
    x = leaves[i]
    if type(x) in ARRAY_TYPES:
      x.delete(_donated=True)


def check_not_donated(leaves):
  """After a cached call failed reading an argument: JAX's error when that argument was
  consumed by an earlier donating call (its executable rejects the donated buffer; a
  call that traces first, or an Array deleted by hand, gets the ``RuntimeError``)."""
  for i, x in enumerate(leaves):
    if type(x) in ARRAY_TYPES and x._buf.__class__ is _Deleted and x._buf.donated:
      raise ValueError(f"INVALID_ARGUMENT: Invalid buffer passed to Execute() as argument "
                       f"{i} to replica 0: INVALID_ARGUMENT: Buffer has been deleted or "
                       "donated.")


_value_slot = Array.__dict__["_value"]   # the slot's own descriptor


class Unfetched(Array):
  """An Array whose value is not on the host yet: it lives in a device buffer (``_buf``)
  or in pieces on several devices (``_placed``), or the array was deleted.

  ``_value`` is a property here: the first read fetches the value (waiting for the
  computation), stores it in the slot and turns the object into a plain ``Array``, whose
  reads of ``_value`` are plain slot reads again. Not ``__getattr__``: on a class with
  one, CPython reads every attribute the slow way (about twice the work, never
  specialised), and an Array's attributes are read on every operation.
  """
  __slots__ = ()

  @property
  def _value(self):
    try:
      return _value_slot.__get__(self)   # read before, and kept on a device (below)
    except AttributeError:
      pass
    buf = self._buf
    resident = buf is not None and placement["resident"](buf.client)
    if buf is not None:
      if resident and transfer_guard.active:
        transfer_guard.check("device_to_host", lambda: f"aval={self.aval!r}")
      value = buf.to_numpy()     # raises for a deleted array
      if not value.shape:
        value = value[()]        # 0-d results are NumPy scalars, as tier 0 makes them
    else:
      value = placement["assemble"](self._placed)
    _value_slot.__set__(self, value)
    if not resident:   # an array on a device stays one: its eager ops run there
      self.__class__ = Array
    return value

  @_value.setter
  def _value(self, value):
    _value_slot.__set__(self, value)
    self.__class__ = Array


# One name for users whichever state an array is in (``type(x)`` prints ``Array``).
Unfetched.__name__ = Unfetched.__qualname__ = "Array"
ARRAY_TYPES = (Array, Unfetched)
_new_array = object.__new__


def from_device(buf, weak_type: bool = False) -> Array:
  """An Array backed by device buffer ``buf`` (a ``pjrt.DeviceBuffer``), not yet read."""
  a = _new_array(Unfetched)
  a.weak_type = weak_type
  a._buf = buf
  a._placed = None
  return a


def in_device_memory(x) -> bool:
  """Whether ``x`` is an Array held in a device's memory (an accelerator's, or the CPU's
  PJRT device under jaxlite_cpu_backend='pjrt'): reading its value is a transfer."""
  if type(x) is not Unfetched:
    return False
  buf = x._buf
  return buf is not None and buf.__class__ is not _Deleted and placement["resident"](buf.client)


def _reconstruct(value, weak_type):
  return Array(value, weak_type)


def format_array_repr(value: np.ndarray, weak_type: bool) -> str:
  prefix = "Array("
  dtype_str = f"dtype={value.dtype.name}" + (", weak_type=True)" if weak_type else ")")
  if value.size == 0:
    return f"{prefix}[], shape={value.shape}, {dtype_str}"
  body = np.array2string(value, prefix=prefix, suffix=",", separator=", ")
  last_line = len(body) - body.rfind("\n") + 1
  width = np.get_printoptions()["linewidth"]
  sep = " " * len(prefix) if last_line + len(dtype_str) + 1 > width else " "
  return f"{prefix}{body},{sep}{dtype_str}"


def to_numpy(x):
  """The NumPy value of an eager operand (Array, NumPy value or Python scalar)."""
  if type(x) in ARRAY_TYPES:
    return x._value
  if isinstance(x, (np.ndarray, np.generic)):
    return x
  return np.asarray(x, dtypes.python_scalar_dtype(x))


def _wrap(value, aval: ShapedArray) -> Array:
  return Array(value, aval.weak_type)


core.EvalTrace.to_value = staticmethod(to_numpy)
core.EvalTrace.wrap = staticmethod(_wrap)
core.EvalTrace.array_type = Array


def as_operand(x):
  """``x`` as something ``bind`` accepts: Arrays and tracers pass, others become Arrays."""
  if isinstance(x, (Array, core.Tracer)):
    return x
  if isinstance(x, (np.ndarray, np.generic)):  # before the scalars: np.float64 is a float
    if x.dtype.kind in "OUSMm" or (x.dtype.kind == "V" and not dtypes.is_jax_dtype(x.dtype)):
      raise TypeError(f"JAX only supports number and bool dtypes, got dtype {x.dtype} in "
                      "array. Convert the values to numbers first.")
    return Array(np.array(x, dtypes.canonicalize_dtype(x.dtype)))
  if isinstance(x, (bool, int, float, complex)):
    return Array(np.asarray(x, dtypes.python_scalar_dtype(x)), type(x) is not bool)
  if hasattr(x, "__jax_array__"):
    return as_operand(x.__jax_array__())
  raise TypeError(f"Value {x!r} of type {type(x).__name__} is not a valid JAX array.")


class PublicArray(abc.ABC):
  """``jax.Array``: the type ``isinstance`` accepts for arrays and tracers alike.

  JAX code writes ``isinstance(x, jax.Array)`` to mean "a JAX value", inside
  transformations too, so the public name is an abstract base with both the concrete
  ``Array`` class and every tracer registered under it. jaxlite's own code checks the
  concrete class when it means a computed value.
  """
  __slots__ = ()


PublicArray.__name__ = PublicArray.__qualname__ = "Array"
PublicArray.__module__ = "jaxlite"
PublicArray.register(Array)
PublicArray.register(core.Tracer)
