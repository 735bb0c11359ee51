"""``Array``: the immutable value users hold, backed by a NumPy buffer.

Arithmetic operators and most methods are installed by ``jaxlite.numpy`` (they are the
same functions users call), so this module holds storage, conversion and printing.
"""
from __future__ import annotations

import abc
import math
import warnings

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.base import errors
from jaxlite._src.base import transfer_guard
from jaxlite._src.core.core import ShapedArray
from jaxlite._src.core.core import QUIET_FILTER
from jaxlite._src.core.literals import TypedNdArray


# Devices are the backends' business: they sit beside the layers and install these when
# imported (``device_put`` of a NumPy value to an XLA buffer, the default device).
placement: dict = {}

# Array subclasses that hold no numbers of their own, and run a primitive eagerly their own
# way: class -> rule(prim, args, params). Typed PRNG keys (prng.py) run it on their data.
operand_rules: dict = {}

# The number of jaxpr traces begun so far: each Array made on the host records it, so a
# trace can tell the constants made while it runs (written inline as literals, like JAX's
# literal tracers) from the arrays that existed before it (constvars, as JAX's Arrays).
trace_epoch = 0


def begin_trace_epoch() -> int:
  """Start a new epoch for a trace being begun; Arrays made from now on carry it."""
  global trace_epoch
  trace_epoch += 1
  return trace_epoch


def made_since(x, epoch: int) -> bool:
  """Whether the Array ``x`` was made on the host during the trace of ``epoch`` or one
  begun inside it (an Array from a device buffer never was)."""
  return getattr(x, "_born", 0) >= epoch


def mark_computed(x):
  """Count the Array ``x``, computed eagerly while a trace runs, as made before every
  trace (JAX's ``ensure_compile_time_eval`` results are Arrays, staged as constvars)."""
  if type(x) is Array:
    x._born = 0


class Array(core.ArrayMethods):
  """An immutable n-dimensional array (``jax.Array``).

  Unlike ``numpy.ndarray`` it cannot be changed in place: use ``x.at[idx].set(y)`` for
  a functional update that returns a new array.

  Storage: ``_host`` is the value in host memory, a NumPy array or scalar, or None while
  the value is elsewhere: in a device buffer (``_buf``; an array computed by the XLA tier
  or living on an accelerator) or in pieces on several devices (``_placed``,
  ``sharding.Placed``). ``_value`` reads the value whatever its state: the first read of
  an array held by the CPU fetches it into ``_host``, after which the array is a host
  array like any other; an array on an accelerator, split over devices or committed to
  one keeps its placement (its operations run there), and the copy read is kept in
  ``_fetched``. Hot paths read ``_host`` and take
  their fast route only when it is not None. Shape and dtype come from the buffer without
  a transfer. A deleted array (``delete``, or donated to a jitted call) holds a
  ``_Deleted`` in ``_buf``: it keeps the shape and dtype, and every read of the value raises.

  Test for an Array with ``isinstance``, or ``type(x) is Array`` on hot paths.
  """
  # _fetched is left unset until an accelerator's value is read (no cost to make one);
  # _born, unset on arrays from device buffers, is the trace_epoch the array was made in
  __slots__ = ("_host", "weak_type", "_buf", "_placed", "_fetched", "_born", "__weakref__")
  __array_priority__ = 100

  def __init__(self, value, weak_type: bool = False):
    self._host = value           # np.ndarray or np.generic, never written to
    self.weak_type = weak_type
    self._buf = None             # a device buffer (pjrt.DeviceBuffer) or None
    self._placed = None
    # (see trace_epoch; eager work, also beside an open trace such as linearize's tangent
    # trace, made an Array every trace closes over: 0)
    self._born = (0 if core.eager_everywhere or core._context.trace is core.eval_trace
                  else trace_epoch)

  @property
  def _value(self):
    """The value on the host: fetched from the device on first read (see the class)."""
    value = self._host
    if value is None:
      value = self._fetch()
    return value

  @_value.setter
  def _value(self, value):
    self._host = value

  def _fetch(self):
    try:
      return self._fetched   # an accelerator's value, read before
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
    if resident or self._placed is not None:
      self._fetched = value   # it stays where it is: _host is for plain host arrays
    else:
      self._host = value
    return value

  @property
  def aval(self) -> ShapedArray:
    if self._placed is None:
      return ShapedArray(self.shape, self.dtype, self.weak_type)
    # laid out over a mesh: its split over Explicit axes is in its type, as in JAX
    return ShapedArray(self.shape, self.dtype, self.weak_type,
                       sharding=self._placed.sharding)

  @property
  def shape(self):
    buf = self._buf
    if buf is not None:
      return buf.spec[0]
    placed = self._placed
    return self._host.shape if placed is None else placed.shape

  @property
  def dtype(self):
    buf = self._buf
    if buf is not None:
      return buf.spec[1]
    placed = self._placed
    return self._host.dtype if placed is None else placed.dtype

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
    if host is not None and host is not value and self._host is not None:
      self._host = host   # an aligned copy of the same contents
    self._buf = buf
    return buf

  @property
  def _on_device(self) -> bool:
    """Whether the value lives only on the device so far (not fetched yet)."""
    return (self._host is None and self._buf is not None
            and getattr(self, "_fetched", None) is None)

  # -- conversion to Python and NumPy
  def __array__(self, dtype=None, copy=None):
    value = self._value
    if copy:
      return np.array(value, dtype=dtype)
    view = np.asarray(value, dtype=dtype)
    if view is value or view.base is value:
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
    if not dtypes.is_integer(self.dtype):   # (booleans included, as in JAX)
      raise TypeError(f"Only integer scalar arrays can be converted to a scalar index. "
                      f"Got an array of dtype {self.dtype}.")
    return self._value.__index__()

  def tolist(self):
    return self._value.tolist()

  def tobytes(self, order="C"):
    return self._value.tobytes(order)

  def __len__(self):
    shape = self.shape
    if not shape:
      raise TypeError("len() of unsized object")
    return shape[0]

  def __iter__(self):
    if not self._value.shape:
      raise TypeError("iteration over a 0-d array")
    return (Array(row, self.weak_type) for row in self._value)

  # None, as JAX's: hash() raises TypeError, and isinstance(x, collections.abc.Hashable)
  # is False (funsor and other libraries key their caches by id() for unhashable values)
  __hash__ = None

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
    self._host = None   # reading the value now asks _Deleted, which raises
    try:
      del self._fetched
    except AttributeError:
      pass
    self._placed = None
    self._buf = deleted

  def is_deleted(self) -> bool:
    """Whether ``delete`` was called, or the array was donated to a jitted call."""
    return self._buf.__class__ is _Deleted

  def is_ready(self):
    buf = self._buf
    return buf is None or buf.is_ready()

  def unsafe_buffer_pointer(self) -> int:
    """The address of the memory holding this array's data (``jax.Array.
    unsafe_buffer_pointer``): its device buffer's where it has one (an XLA-tier result),
    else its NumPy data's. An array whose host value is not a dense buffer of its own (a
    broadcast view, a NumPy scalar) is given one first, as every JAX array has.

    Raises
    ------
    JaxRuntimeError
      The array was deleted or donated.
    ValueError
      The array is split over several devices.
    """
    buf = self._buf
    if buf.__class__ is _Deleted:
      raise errors.JaxRuntimeError("INVALID_ARGUMENT: Buffer has been deleted or donated.")
    placed = self._placed
    if placed is not None:
      if len(placed.pieces) != 1:
        raise ValueError("unsafe_buffer_pointer() is supported only for unsharded arrays.")
      piece = placed.pieces[0]
      return (piece.ctypes.data if isinstance(piece, np.ndarray)
              else piece.unsafe_pointer())
    if buf is not None:
      return buf.unsafe_pointer()
    host = self._host
    if not owns_buffer(host):
      host = np.array(host, order="C")
      host.flags.writeable = False   # an Array's value is never written to
      self._host = host
    return host.ctypes.data

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
  def format(self):
    """Its device memory layout and sharding (``jax.experimental.layout.Format``)."""
    return placement["format"](self)

  @property
  def addressable_shards(self):
    """One ``Shard`` (device, index, replica_id, data) per device holding a piece."""
    return placement["shards"](self)

  def addressable_data(self, index: int):
    """The data of addressable shard ``index`` (the whole array where it is replicated)."""
    return self.addressable_shards[0 if self.is_fully_replicated else index].data

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
    if type(x) is Array:
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
    if type(x) is Array:
      x.delete(_donated=True)


def owns_buffer(value) -> bool:
  """Whether ``value`` is a NumPy array holding its data in a dense buffer of its own
  (not a view, not a scalar)."""
  return (type(value) is np.ndarray and value.base is None
          and value.flags.c_contiguous and value.flags.owndata)


def check_not_donated(leaves):
  """After a cached call failed reading an argument: JAX's error when that argument was
  consumed by an earlier donating call (its executable rejects the donated buffer; a
  call that traces first, or an Array deleted by hand, gets the ``RuntimeError``)."""
  for i, x in enumerate(leaves):
    if type(x) is Array and x._buf.__class__ is _Deleted and x._buf.donated:
      raise ValueError(f"INVALID_ARGUMENT: Invalid buffer passed to Execute() as argument "
                       f"{i} to replica 0: INVALID_ARGUMENT: Buffer has been deleted or "
                       "donated.")


_new_array = object.__new__


def from_device(buf, weak_type: bool = False) -> Array:
  """An Array backed by device buffer ``buf`` (a ``pjrt.DeviceBuffer``), not yet read."""
  a = _new_array(Array)
  a._host = None
  a.weak_type = weak_type
  a._buf = buf
  a._placed = None
  return a


def in_device_memory(x) -> bool:
  """Whether ``x`` is an Array held in a device's memory (an accelerator's, or the CPU's
  PJRT device under jaxlite_cpu_backend='pjrt'): reading its value is a transfer."""
  if type(x) is not Array or x._host is not None:
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
  if type(x) is Array:
    return x._value
  if isinstance(x, (np.ndarray, np.generic)):
    value = x if type(x) is not TypedNdArray else x.view(np.ndarray)
    # its aval's dtype, as JAX's transfer gives it: without x64, int64 computes as int32
    dtype = dtypes.canonicalize_dtype(value.dtype, allow_extended_dtype=True)
    return value if dtype == value.dtype else value.astype(dtype)
  dtype = getattr(x, "dtype", None)   # a literal's TypedFloat carries its own
  return np.asarray(x, dtype if dtype is not None else dtypes.python_scalar_dtype(x))


def committed_device(values, what, names=None, spread=None):
  """The device the committed Arrays among ``values`` live on (None when none is
  committed to one device), for a computation ``what`` that must run there, as JAX's
  do; JAX's ValueError when two are committed to different devices. ``names``: a
  function giving the arguments' names for the message (default ``args[i]``).
  ``spread``: what to return instead of None when an Array is laid out over several
  devices."""
  found = None
  for i, x in enumerate(values):
    if type(x) is Array and (placed := x._placed) is not None:
      devices = placed.sharding.device_set
      if len(devices) != 1:
        found = found or spread   # (laid out over several: assembled where it is used)
        continue
      device = next(iter(devices))
      if found is None or found is spread:
        found = (i, device)
      elif device != found[1]:
        labels = names() if names is not None else [f"args[{j}]" for j in range(len(values))]
        raise ValueError(
            "Received incompatible devices for jitted computation. Got "
            + " and ".join(f"argument {labels[j]} of {what} with shape "
                           f"{values[j].aval.str_short()} and with device ids [{d.id}] on "
                           f"platform {d.platform.upper()}"
                           for j, d in (found, (i, device))))
  return found if found is None or found is spread else found[1]


# What ``committed_device`` returns to an eager backend for operands laid out over several
# devices: their results are laid out as JAX's partitioner lays them out.
SPREAD = "spread"


class HostBackend:
  """Runs primitives eagerly on the host with their NumPy kernels (``EvalTrace.impls``):
  the eager trace's backend unless a resident device takes its place."""
  impls = core.EvalTrace.impls
  to_value = staticmethod(to_numpy)   # an operand's NumPy value

  @staticmethod
  def wrap(value, weak_type=False):
    return Array(value, weak_type)

  def apply_primitive(self, prim, args, params):
    accepted = prim.elementwise_dtypes
    if accepted is not None:
      out = self._elementwise(prim, accepted, args, params)
      if out is not None:
        return out
    for x in args:
      if type(x) is not Array:   # (no slower than the one isinstance test it replaces)
        if isinstance(x, core.Tracer):
          raise errors.UnexpectedTracerError(x)
        rule = operand_rules.get(type(x))
        if rule is not None:
          return rule(prim, args, params)
    impl = self.impls.get(prim)
    if impl is None:
      raise TypeError(f"Primitive '{prim.name}' cannot run eagerly: the backend has no "
                      "implementation for it. Wrap the computation in jax.jit.")
    out_avals = core.abstract_eval(prim, [core.get_aval(x) for x in args], params)
    device = committed_device(args, prim.name, spread=SPREAD)
    values = list(map(to_numpy, args))
    try:   # (NumPy's nan/inf warnings: see core.QUIET_FILTER)
      if warnings.filters[0] is not QUIET_FILTER:
        core.keep_kernels_quiet()
    except IndexError:
      core.keep_kernels_quiet()
    outs = impl(*values, **params)
    if not prim.multiple_results:
      outs, out_avals = [outs], out_avals[:1]
    outs = [Array(_owned(_as_aval_dtype(v, a), args), a.weak_type)
            for v, a in zip(outs, out_avals)]
    if device is SPREAD:
      outs = placement["spread"](prim, args, params, outs, out_avals)
    elif device is not None:   # computed where an operand is committed, and committed there
      outs = [placement["commit"](out, device) for out in outs]
    return outs if prim.multiple_results else outs[0]

  def _elementwise(self, prim, accepted, args, params):
    """The hot path of eager elementwise ops: host Arrays of one dtype and compatible
    shapes need no shape rule. Anything unusual returns None and takes the general path."""
    x = args[0]
    if type(x) is not Array or (value := x._host) is None:
      return None
    dtype = value.dtype
    if dtype not in accepted:
      return None
    weak = x.weak_type
    values = [value]
    for y in args[1:]:
      if type(y) is not Array or (other := y._host) is None:
        return None
      if other.dtype != dtype or (other.shape != value.shape and other.ndim and value.ndim):
        return None
      values.append(other)
      weak = weak and y.weak_type
    try:   # (NumPy's nan/inf warnings: see core.QUIET_FILTER)
      if warnings.filters[0] is not QUIET_FILTER:
        core.keep_kernels_quiet()
    except IndexError:
      core.keep_kernels_quiet()
    # the implementation returns the dtype the shape rule gives (a test checks every row)
    return Array(self.impls[prim](*values, **params), weak)


def _as_aval_dtype(value, aval):
  """``value`` in ``aval``'s narrow dtype where the kernel gave a wider one: ml_dtypes'
  loops compute int4, float8... in wider types (``-int4`` comes back int8)."""
  if not dtypes.is_narrow(aval.dtype) or getattr(value, "dtype", aval.dtype) == aval.dtype:
    return value
  return np.asarray(value).astype(aval.dtype)


def _owned(value, args):
  """``value``, copied if it may be a view of a caller's NumPy array among ``args`` (a
  reshape, transpose, broadcast or slice of it): an Array must not change when the caller
  writes to that array afterwards."""
  for x in args:
    if isinstance(x, np.ndarray) and np.may_share_memory(value, x):   # (a TypedNdArray too)
      return np.array(value, copy=True)
  return value


core.eval_trace.install(host=HostBackend())


def as_operand(x):
  """``x`` as something ``bind`` accepts: Arrays and tracers pass, others become Arrays."""
  if isinstance(x, (Array, core.Tracer)):
    return x
  if isinstance(x, (np.ndarray, np.generic)):  # before the scalars: np.float64 is a float
    if x.dtype.kind in "OUSMm" or (x.dtype.kind == "V" and not dtypes.is_jax_dtype(x.dtype)):
      raise TypeError(f"JAX only supports number and bool dtypes, got dtype {x.dtype} in "
                      "array. Convert the values to numbers first.")
    return Array(np.array(x, dtypes.canonicalize_dtype(x.dtype)),
                 type(x) is TypedNdArray and x.weak_type)   # (a literal's value)
  if isinstance(x, (bool, int, float, complex)):
    return Array(to_numpy(x), type(x) is not bool)
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
