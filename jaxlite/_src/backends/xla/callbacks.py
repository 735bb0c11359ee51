"""Host callbacks on the XLA tier: ``pure_callback``, ``io_callback``, ``debug_callback``,
``debug_print``.

Each call site lowers to a ``stablehlo.custom_call`` (``api_version = 4``, XLA's typed
FFI) to one handler, ``jaxlite_host_callback``, registered once per process through the
plugin's PJRT FFI extension (``PJRT_FFI_Register_Handler``). The handler is a ctypes
function: XLA calls it with an ``XLA_FFI_CallFrame``; it reads the call site's
``callback_id`` attribute, copies the argument buffers into ``Array``s, runs the same
implementation tier 0 runs (``backends/numpy/callback_impls.py``), checks the results
and copies them into the result buffers. Ordered effects also pass along a scalar that orders them
(``_lowering``). A Python exception becomes an ``INTERNAL`` ``XLA_FFI_Error``
carrying its traceback, which PJRT reports to the caller as a ``JaxRuntimeError`` (the
message JAX's CPU client gives, as tier 0 raises it too).

The structs below follow ``xla/ffi/api/c_api.h`` (XLA FFI API 0.x) and
``xla/pjrt/c/pjrt_c_api_ffi_extension.h``. Only the CPU plugin is driven: there the
buffers are host memory. ``io_callback`` and the debug callbacks are marked
``has_side_effect`` so that XLA keeps them even when nothing reads their results.
"""
from __future__ import annotations

import ctypes
import itertools
import threading
from ctypes import POINTER, Structure, c_char_p, c_int, c_int64, c_size_t, c_uint32, c_void_p

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.backends.numpy import callback_impls
from jaxlite._src.backends.xla import stablehlo
from jaxlite._src.lax import callbacks as lax_callbacks

TARGET = "jaxlite_host_callback"
_FFI_EXTENSION = 5          # PJRT_Extension_Type_FFI
_PLATFORM = b"Host"         # XLA's name of the CPU platform (canonically "host")


# ----------------------------------------------------------------------------- structs

class _ByteSpan(Structure):
  _fields_ = [("ptr", c_void_p), ("len", c_size_t)]


class _Buffer(Structure):       # XLA_FFI_Buffer
  _fields_ = [("struct_size", c_size_t), ("extension_start", c_void_p), ("dtype", c_int),
              ("data", c_void_p), ("rank", c_int64), ("dims", POINTER(c_int64))]


class _Operands(Structure):     # XLA_FFI_Args and XLA_FFI_Rets share this layout
  _fields_ = [("struct_size", c_size_t), ("extension_start", c_void_p), ("size", c_int64),
              ("types", POINTER(c_int)), ("items", POINTER(c_void_p))]


class _Attrs(Structure):        # XLA_FFI_Attrs
  _fields_ = [("struct_size", c_size_t), ("extension_start", c_void_p), ("size", c_int64),
              ("types", POINTER(c_int)), ("names", POINTER(POINTER(_ByteSpan))),
              ("attrs", POINTER(c_void_p))]


class _Scalar(Structure):       # XLA_FFI_Scalar
  _fields_ = [("dtype", c_int), ("value", c_void_p)]


class _CallFrame(Structure):    # XLA_FFI_CallFrame
  _fields_ = [("struct_size", c_size_t), ("extension_start", c_void_p), ("api", c_void_p),
              ("ctx", c_void_p), ("stage", c_int), ("args", _Operands),
              ("rets", _Operands), ("attrs", _Attrs)]


class _ExtensionBase(Structure):  # XLA_FFI_Extension_Base
  _fields_ = [("struct_size", c_size_t), ("type", c_int), ("next", c_void_p)]


class _ApiVersion(Structure):   # XLA_FFI_Api_Version
  _fields_ = [("struct_size", c_size_t), ("extension_start", c_void_p),
              ("major_version", c_int), ("minor_version", c_int)]


class _Metadata(Structure):     # XLA_FFI_Metadata, up to its traits
  _fields_ = [("struct_size", c_size_t), ("api_version", _ApiVersion),
              ("traits", c_uint32)]


class _MetadataExtension(Structure):
  _fields_ = [("extension_base", _ExtensionBase), ("metadata", POINTER(_Metadata))]


class _ErrorCreateArgs(Structure):  # XLA_FFI_Error_Create_Args
  _fields_ = [("struct_size", c_size_t), ("extension_start", c_void_p),
              ("message", c_char_p), ("errc", c_int)]


class _XlaFfiApi(Structure):    # XLA_FFI_Api, up to XLA_FFI_Error_Create
  _fields_ = [("struct_size", c_size_t), ("extension_start", c_void_p),
              ("api_version", _ApiVersion), ("internal_api", c_void_p),
              ("error_create", c_void_p)]


class _RegisterArgs(Structure):
  """PJRT_FFI_Register_Handler_Args as the installed plugin reads it (no extension_start,
  no api_version: only typed FFI handlers; checked against its disassembly: struct_size
  >= 52, handler at offset 24, traits at 48)."""
  _fields_ = [("struct_size", c_size_t), ("target_name", c_char_p),
              ("target_name_size", c_size_t), ("handler", c_void_p),
              ("platform_name", c_char_p), ("platform_name_size", c_size_t),
              ("traits", c_int)]


class _RegisterArgsV1(Structure):
  """The older layout, with ``int api_version`` (1: typed) before the handler. A plugin
  that reads it wants struct_size >= 56 and so cleanly rejects the newer 52-byte struct,
  which is therefore tried first."""
  _fields_ = [("struct_size", c_size_t), ("target_name", c_char_p),
              ("target_name_size", c_size_t), ("api_version", c_int), ("handler", c_void_p),
              ("platform_name", c_char_p), ("platform_name_size", c_size_t),
              ("traits", c_int)]


def _struct_size(cls) -> int:
  """offsetof(last field) + sizeof(last field), as the headers' STRUCT_SIZE macros."""
  last = getattr(cls, cls._fields_[-1][0])
  return last.offset + last.size


_METADATA_EXTENSION = 1        # XLA_FFI_Extension_Metadata
_EXECUTE = 3                   # XLA_FFI_ExecutionStage_EXECUTE
_BUFFER = 1                    # XLA_FFI_ArgType_BUFFER / XLA_FFI_RetType_BUFFER
_SCALAR = 3                    # XLA_FFI_AttrType_SCALAR
_S64 = 5
_TOKEN = 17
_INTERNAL = 13                 # XLA_FFI_Error_Code_INTERNAL (what failed is the host code)
# The handler declares the oldest FFI version with metadata; the runtime accepts any
# version between 0.1 and its own, and the call frame it passes is its own layout.
_HANDLER_FFI_VERSION = (0, 1)

# XLA FFI element types, as dtype names (bfloat16 without importing ml_dtypes: an operand
# of that type exists only once jaxlite's dtypes have loaded it)
_DTYPE_NAMES = {
    1: "bool", 2: "int8", 3: "int16", 4: "int32", 5: "int64", 6: "uint8", 7: "uint16",
    8: "uint32", 9: "uint64", 10: "float16", 11: "float32", 12: "float64", 16: "bfloat16",
    15: "complex64", 18: "complex128"}
_DTYPES: dict = {}   # element type -> np.dtype, filled as met


# ----------------------------------------------------------------------------- registry

class _Site:
  """What one custom call runs: a tier-0 implementation and the equation's params;
  an ``ordered`` one also takes and returns the ``_ORDER`` value (see ``_lowering``)."""
  __slots__ = ("impl", "params", "name", "ordered")

  def __init__(self, impl, params, name):
    self.impl, self.params, self.name = impl, params, name
    self.ordered = _ORDERED[name](params)


_IMPLS = {"pure_callback": callback_impls._pure_callback_impl,
          "io_callback": callback_impls._io_callback_impl,
          "debug_callback": callback_impls._debug_callback_impl,
          "debug_print": callback_impls._debug_print_impl}
# primitive name -> params -> whether the call is an ordered effect
_ORDERED = {"pure_callback": lambda params: False,
            "io_callback": lambda params: params["ordered"],
            "debug_callback": lambda params: isinstance(params["effect"],
                                                        lax_callbacks.OrderedDebugEffect),
            "debug_print": lambda params: params["ordered"]}
_ORDER = np.dtype(np.int8)     # the dtype of the value chaining ordered callbacks
_sites: dict[int, _Site] = {}
_site_ids: dict = {}           # (name, params) -> id, so a re-lowering emits the same text
_ids = itertools.count()
_lock = threading.Lock()


def _site_key(name, params):
  try:
    key = (name, tuple(sorted(params.items())))
    hash(key)
    return key
  except TypeError:   # unhashable params: a fresh id each time
    return None


# False in the compile server: a callback must run in the process that calls it, so a
# program with one is compiled there, not in the server (``xla/server.py``).
sites_allowed = True


def register_site(name: str, params: dict) -> int:
  """The ``callback_id`` of a call site; the site is kept for the process's lifetime.

  Parameters
  ----------
  name : str
    The primitive's name: ``pure_callback``, ``io_callback``, ``debug_callback`` or
    ``debug_print``.
  params : dict
    The equation's params (the callback and its result types or format).

  Returns
  -------
  int
    The id the custom call passes back to the handler as its ``callback_id`` attribute.
  """
  if not sites_allowed:
    raise NotImplementedError(f"{name} calls back into Python: compiled in the caller's "
                              "process, not in the compile server")
  key = _site_key(name, params)
  with _lock:
    cid = _site_ids.get(key) if key is not None else None
    if cid is None:
      cid = next(_ids)
      # The site holds the callback: its id() cannot be reused while the key lives.
      _sites[cid] = _Site(_IMPLS[name], dict(params), name)
      if key is not None:
        _site_ids[key] = cid
    return cid


# ----------------------------------------------------------------------------- handler

def _error(api_ptr, message: str):
  """A new ``XLA_FFI_Error*`` (owned by XLA once returned) carrying ``message``."""
  api = _XlaFfiApi.from_address(api_ptr)
  create = ctypes.CFUNCTYPE(c_void_p, c_void_p)(api.error_create)
  text = message.encode("utf-8", "replace")
  args = _ErrorCreateArgs(struct_size=_struct_size(_ErrorCreateArgs), message=text,
                          errc=_INTERNAL)
  return create(ctypes.addressof(args))   # XLA copies the message


def _write_metadata(extension_ptr):
  # XLA asks once, at registration, which FFI version the handler was written against.
  ext = _MetadataExtension.from_address(extension_ptr)
  if not ext.metadata or ext.metadata.contents.struct_size < _struct_size(_Metadata):
    return   # no room to answer: XLA then rejects the registration, it does not crash
  meta = ext.metadata.contents
  meta.api_version = _ApiVersion(_struct_size(_ApiVersion), None, *_HANDLER_FFI_VERSION)
  meta.traits = 0


def _callback_id(attrs: _Attrs) -> int:
  for i in range(attrs.size):
    span = attrs.names[i].contents
    if ctypes.string_at(span.ptr, span.len) != b"callback_id":
      continue
    if attrs.types[i] != _SCALAR:
      break
    scalar = _Scalar.from_address(attrs.attrs[i])
    if scalar.dtype != _S64:
      break
    return c_int64.from_address(scalar.value).value
  raise RuntimeError(f"{TARGET}: the custom call has no i64 'callback_id' attribute.")


def _buffer_spec(ptr):
  buf = _Buffer.from_address(ptr)
  dtype = _DTYPES.get(buf.dtype)
  if dtype is None:
    name = _DTYPE_NAMES.get(buf.dtype)
    if name is None:
      raise TypeError(f"{TARGET}: unsupported XLA FFI element type {buf.dtype}.")
    dtype = _DTYPES[buf.dtype] = dtypes.np_dtype(name)
  return buf, tuple(buf.dims[i] for i in range(buf.rank)), dtype


def _read_args(args: _Operands) -> list:
  """The argument buffers as ``Array``s (what the callbacks receive) of fresh copies."""
  from jaxlite._src.core.array import Array
  values = []
  for i in range(args.size):
    if args.types[i] != _BUFFER or _Buffer.from_address(args.items[i]).dtype == _TOKEN:
      continue
    buf, shape, dtype = _buffer_spec(args.items[i])
    value = np.empty(shape, dtype)
    if value.nbytes:   # a copy: XLA reuses the buffer once the handler returns
      ctypes.memmove(value.ctypes.data, buf.data, value.nbytes)
    values.append(Array(value))
  return values


def _write_results(site: _Site, rets: _Operands, results):
  if len(results) != rets.size:
    raise TypeError(f"{site.name}: the callback produced {len(results)} results, the "
                    f"computation expects {rets.size}.")
  for i, value in enumerate(results):
    buf, shape, dtype = _buffer_spec(rets.items[i])
    value = np.asarray(value)
    if not value.flags.c_contiguous:   # (np.ascontiguousarray would make a 0-d array 1-d)
      value = value.copy(order="C")
    if value.shape != shape or value.dtype != dtype:
      raise TypeError(f"{site.name}: result {i} is {value.dtype.name}{list(value.shape)}, "
                      f"the computation expects {dtype.name}{list(shape)}.")
    if value.nbytes:
      ctypes.memmove(buf.data, value.ctypes.data, value.nbytes)


def _execute(frame: _CallFrame) -> str | None:
  """Run the call site's callback; None, or the message of the exception it raised."""
  if frame.stage != _EXECUTE:   # only an execute handler is registered
    return None
  site = _sites[_callback_id(frame.attrs)]
  try:
    args = _read_args(frame.args)
    if site.ordered:
      args = args[1:]
    results = site.impl(*args, **site.params)
    if site.ordered:
      results = [np.zeros((), _ORDER), *results]
    _write_results(site, frame.rets, results)
  except Exception:   # XLA prefixes "INTERNAL: ", as for JAX's CPU callbacks
    return callback_impls.failure_message()
  except BaseException as e:  # noqa: BLE001  (KeyboardInterrupt too: report, not crash)
    return f"{site.name} on the host raised {type(e).__name__}: {e}"
  return None


def _handler(frame_ptr):
  # Nothing may escape: ctypes would print the exception and hand XLA a NULL (success)
  # with the results unwritten.
  try:
    frame = _CallFrame.from_address(frame_ptr)
    ext = frame.extension_start
    if ext and _ExtensionBase.from_address(ext).type == _METADATA_EXTENSION:
      _write_metadata(ext)
      return None
    message = _execute(frame)
    return None if message is None else _error(frame.api, message)
  except BaseException as e:  # noqa: BLE001
    try:
      return _error(_CallFrame.from_address(frame_ptr).api,
                    f"{TARGET}: internal error: {type(e).__name__}: {e}")
    except BaseException:  # noqa: BLE001
      return None


_HANDLER_TYPE = ctypes.CFUNCTYPE(c_void_p, c_void_p)
# Referenced for the process's lifetime: XLA keeps the raw pointer in its registry.
_HANDLER = _HANDLER_TYPE(_handler)
_registered: dict = {}         # Api -> None once registered (or the reason it failed)


def ensure_registered(api) -> str | None:
  """Register the handler with ``api``'s plugin once; None, or why it cannot be.

  Parameters
  ----------
  api : pjrt.Api
    The loaded plugin (the CPU one; buffers must be host memory).

  Returns
  -------
  str or None
    None when host callbacks can run, else a reason for the user.
  """
  from jaxlite._src.backends.xla import pjrt
  with _lock:
    if api in _registered:
      return _registered[api]
    reason = None
    ext = pjrt.extension(api, _FFI_EXTENSION)
    if ext is None:
      reason = "the PJRT plugin has no FFI extension to register the handler with"
    elif ctypes.c_size_t.from_address(ext).value < 48:
      reason = "the PJRT plugin's FFI extension has no PJRT_FFI_Register_Handler"
    else:
      reason = _register(api, c_void_p.from_address(ext + 40).value)
    _registered[api] = reason
    return reason


def _register(api, register_fn) -> str | None:
  register = ctypes.CFUNCTYPE(c_void_p, c_void_p)(register_fn)
  name = TARGET.encode()
  errors = []
  for cls, extra in ((_RegisterArgs, {}), (_RegisterArgsV1, {"api_version": 1})):
    args = cls(struct_size=_struct_size(cls), target_name=name, target_name_size=len(name),
               handler=ctypes.cast(_HANDLER, c_void_p), platform_name=_PLATFORM,
               platform_name_size=len(_PLATFORM), **extra)
    err = register(ctypes.addressof(args))
    if not err:
      return None
    errors.append(str(api.error(err)))
  return "PJRT_FFI_Register_Handler failed: " + "; ".join(errors)


# ----------------------------------------------------------------------------- lowering

# the process's PJRT client, ``backends.xla.client`` (which sets it: that package imports
# this module)
client = None


def _unavailable() -> str | None:
  c = client()
  if c.platform != "cpu":
    return (f"host callbacks run on the CPU plugin only, this client's platform is "
            f"'{c.platform}'")
  return ensure_registered(c.api)


def _layout(rank: int) -> str:
  # row-major, as the handler reads and writes the buffers
  dims = ", ".join(str(d) for d in reversed(range(rank)))
  return f"dense<[{dims}]> : tensor<{rank}xindex>" if rank else "dense<> : tensor<0xindex>"


def _order_value(b):
  """The value that orders the next ordered callback in ``b``'s current block."""
  if b.effect_order is None:
    b.effect_order = b.op1("stablehlo.constant", [], (), _ORDER,
                           "value = dense<0> : tensor<i8>")
  return b.effect_order


def _lowering(name: str, side_effect: bool):
  # XLA may run independent side-effecting calls in any order (JAX's unordered effects);
  # an ordered call takes the value the previous one returned, a data dependency that
  # keeps them in program order within a block (not across control-flow regions).
  def rule(b, eqn, *args, **params):
    reason = _unavailable()
    if reason is not None:
      raise NotImplementedError(f"The XLA backend cannot lower '{name}': {reason}.")
    cid = register_site(name, params)
    outs = [(v.aval.shape, v.aval.dtype) for v in eqn.outvars]
    ordered = _ORDERED[name](params)
    if ordered:
      args, outs = (_order_value(b), *args), [((), _ORDER), *outs]
    attrs = (f'api_version = 4 : i32, backend_config = {{callback_id = {cid} : i64}}, '
             f'call_target_name = "{TARGET}", '
             f'has_side_effect = {"true" if side_effect else "false"}, '
             f'operand_layouts = [{", ".join(_layout(len(a.shape)) for a in args)}], '
             f'result_layouts = [{", ".join(_layout(len(s)) for s, _ in outs)}]')
    results = b.op("stablehlo.custom_call", list(args), outs, attrs)
    if ordered:
      b.effect_order, *results = results
    return results
  return rule


stablehlo.lowering_rules.update({
    lax_callbacks.pure_callback_p: _lowering("pure_callback", side_effect=False),
    lax_callbacks.io_callback_p: _lowering("io_callback", side_effect=True),
    lax_callbacks.debug_callback_p: _lowering("debug_callback", side_effect=True),
    lax_callbacks.debug_print_p: _lowering("debug_print", side_effect=True)})


def _check_lowering(b, eqn, *args, err_tree, debug):
  lax_callbacks.staged_check(debug)
  return []


stablehlo.lowering_rules[lax_callbacks.check_p] = _check_lowering
