"""A focused ctypes binding of the PJRT C API (``pjrt_c_api.h``, version 0.x).

Only what tier 1 needs: load a plugin, create one client, compile StableHLO text,
move arrays between host and device, execute, serialize. Every ``*_Args`` struct carries
``struct_size`` = offsetof(last field) + sizeof(last field) (the header's
``PJRT_DEFINE_STRUCT_TRAITS``), not ``sizeof``. Some malformed inputs make a plugin
abort the process instead of returning an error, so everything is validated here before
it is handed over: argument shapes and dtypes (PJRT checks only byte counts), and the
compile options are always the known-good serialized proto.
"""
from __future__ import annotations

import atexit
import collections
import ctypes
import itertools
import os
import struct
import threading
import time
import weakref
from ctypes import POINTER, c_char_p, c_int, c_int64, c_size_t, c_void_p

import numpy as np

from jaxlite._src.backends import background
from jaxlite._src.base import transfer_guard
from jaxlite._src.base.protobuf import varint as _varint
from jaxlite._src.base.errors import JaxRuntimeError

__all__ = ["XlaRuntimeError", "Api", "Client", "LoadedExecutable", "DeviceBuffer", "load_api",
           "live_buffers"]


# An error reported by XLA through PJRT: the message is XLA's, prefixed by its code.
XlaRuntimeError = JaxRuntimeError


# ----------------------------------------------------------------------------- structs

def _args(name, fields):
  fields = [("struct_size", c_size_t), ("extension_start", c_void_p)] + fields
  cls = type(name, (ctypes.Structure,), {"_fields_": fields})
  last = getattr(cls, fields[-1][0])
  cls.SIZE = last.offset + last.size
  return cls


def _new(cls, **kw):
  s = cls(**kw)
  s.struct_size = cls.SIZE
  return s


_P = c_void_p
ErrorArgs = _args("PJRT_Error_Destroy_Args", [("error", _P)])
ErrorMessageArgs = _args("PJRT_Error_Message_Args",
                         [("error", _P), ("message", _P), ("message_size", c_size_t)])
ErrorCodeArgs = _args("PJRT_Error_GetCode_Args", [("error", _P), ("code", c_int)])
PluginInitArgs = _args("PJRT_Plugin_Initialize_Args", [])


class _Union(ctypes.Union):
  _fields_ = [("string_value", _P), ("int64_value", c_int64), ("float_value", ctypes.c_float),
              ("bool_value", ctypes.c_bool)]


NamedValue = _args("PJRT_NamedValue", [("name", _P), ("name_size", c_size_t), ("type", c_int),
                                       ("value", _Union), ("value_size", c_size_t)])
PluginAttributesArgs = _args("PJRT_Plugin_Attributes_Args",
                             [("attributes", _P), ("num_attributes", c_size_t)])
EventArgs = _args("PJRT_Event_Args", [("event", _P)])  # Destroy, Await, Error: same layout
IsReadyArgs = _args("PJRT_Event_IsReady_Args", [("event", _P), ("is_ready", ctypes.c_bool)])
ClientCreateArgs = _args("PJRT_Client_Create_Args", [
    ("create_options", _P), ("num_options", c_size_t), ("kv_get_callback", _P),
    ("kv_get_user_arg", _P), ("kv_put_callback", _P), ("kv_put_user_arg", _P),
    ("client", _P), ("kv_try_get_callback", _P), ("kv_try_get_user_arg", _P)])
ClientArgs = _args("PJRT_Client_Destroy_Args", [("client", _P)])
ClientStringArgs = _args("PJRT_Client_PlatformName_Args",
                         [("client", _P), ("value", _P), ("value_size", c_size_t)])
ClientDevicesArgs = _args("PJRT_Client_Devices_Args",
                          [("client", _P), ("devices", _P), ("num_devices", c_size_t)])
Program = _args("PJRT_Program", [("code", _P), ("code_size", c_size_t), ("format", _P),
                                 ("format_size", c_size_t)])
CompileArgs = _args("PJRT_Client_Compile_Args", [
    ("client", _P), ("program", _P), ("compile_options", _P),
    ("compile_options_size", c_size_t), ("executable", _P)])
FromHostArgs = _args("PJRT_Client_BufferFromHostBuffer_Args", [
    ("client", _P), ("data", _P), ("type", c_int), ("dims", _P), ("num_dims", c_size_t),
    ("byte_strides", _P), ("num_byte_strides", c_size_t), ("host_buffer_semantics", c_int),
    ("device", _P), ("memory", _P), ("device_layout", _P), ("done_with_host_buffer", _P),
    ("buffer", _P)])
DeviceDescriptionArgs = _args("PJRT_Device_GetDescription_Args",
                              [("device", _P), ("device_description", _P)])
DescriptionStringArgs = _args("PJRT_DeviceDescription_Kind_Args",
                              [("device_description", _P), ("value", _P),
                               ("value_size", c_size_t)])
DescriptionIdArgs = _args("PJRT_DeviceDescription_Id_Args",
                          [("device_description", _P), ("id", c_int)])
ExecutableArgs = _args("PJRT_Executable_Destroy_Args", [("executable", _P)])
GetExecutableArgs = _args("PJRT_LoadedExecutable_GetExecutable_Args",
                          [("loaded_executable", _P), ("executable", _P)])
NumOutputsArgs = _args("PJRT_Executable_NumOutputs_Args",
                       [("executable", _P), ("num_outputs", c_size_t)])
ExecuteOptions = _args("PJRT_ExecuteOptions", [
    ("send_callbacks", _P), ("recv_callbacks", _P), ("num_send_ops", c_size_t),
    ("num_recv_ops", c_size_t), ("launch_id", c_int), ("non_donatable_input_indices", _P),
    ("num_non_donatable_input_indices", c_size_t), ("context", _P), ("call_location", _P),
    ("num_tasks", c_size_t), ("task_ids", _P), ("incarnation_ids", _P)])
ExecuteArgs = _args("PJRT_LoadedExecutable_Execute_Args", [
    ("executable", _P), ("options", _P), ("argument_lists", _P), ("num_devices", c_size_t),
    ("num_args", c_size_t), ("output_lists", _P), ("device_complete_events", _P),
    ("execute_device", _P)])
CostAnalysisArgs = _args("PJRT_Executable_GetCostAnalysis_Args", [
    ("executable", _P), ("num_properties", c_size_t), ("properties", _P)])
SerializeArgs = _args("PJRT_Executable_Serialize_Args", [
    ("executable", _P), ("serialized_bytes", _P), ("serialized_bytes_size", c_size_t),
    ("serialized_executable", _P), ("serialized_executable_deleter", _P)])
DeserializeArgs = _args("PJRT_Executable_DeserializeAndLoad_Args", [
    ("client", _P), ("serialized_executable", _P), ("serialized_executable_size", c_size_t),
    ("loaded_executable", _P), ("overridden_serialized_compile_options", _P),
    ("overridden_serialized_compile_options_size", c_size_t)])
BufferArgs = _args("PJRT_Buffer_Destroy_Args", [("buffer", _P)])
ReadyEventArgs = _args("PJRT_Buffer_ReadyEvent_Args", [("buffer", _P), ("event", _P)])
UnsafePointerArgs = _args("PJRT_Buffer_UnsafePointer_Args",
                          [("buffer", _P), ("buffer_pointer", ctypes.c_uint64)])
ToHostArgs = _args("PJRT_Buffer_ToHostBuffer_Args", [
    ("src", _P), ("host_layout", _P), ("dst", _P), ("dst_size", c_size_t), ("event", _P)])
TiledLayout = _args("PJRT_Buffer_MemoryLayout_Tiled", [
    ("minor_to_major", _P), ("minor_to_major_size", c_size_t), ("tile_dims", _P),
    ("tile_dim_sizes", _P), ("num_tiles", c_size_t)])
StridesLayout = _args("PJRT_Buffer_MemoryLayout_Strides",
                      [("byte_strides", _P), ("num_byte_strides", c_size_t)])


class _LayoutUnion(ctypes.Union):
  _fields_ = [("tiled", TiledLayout), ("strides", StridesLayout)]


MemoryLayout = _args("PJRT_Buffer_MemoryLayout", [("layout", _LayoutUnion), ("type", c_int)])
GetMemoryLayoutArgs = _args("PJRT_Buffer_GetMemoryLayout_Args",
                            [("buffer", _P), ("layout", MemoryLayout)])
DescriptionAttributesArgs = _args("PJRT_DeviceDescription_Attributes_Args", [
    ("device_description", _P), ("num_attributes", c_size_t), ("attributes", _P)])
LocalHardwareIdArgs = _args("PJRT_Device_LocalHardwareId_Args",
                            [("device", _P), ("local_hardware_id", c_int)])
BufferDeviceArgs = _args("PJRT_Buffer_Device_Args", [("buffer", _P), ("device", _P)])
CopyToDeviceArgs = _args("PJRT_Buffer_CopyToDevice_Args",
                         [("buffer", _P), ("dst_device", _P), ("dst_buffer", _P)])
# PJRT_Device_MemoryStats_Args: bytes_in_use, then (value, is_set) pairs, in this order
MEMORY_STATS = ("peak_bytes_in_use", "num_allocs", "largest_alloc_size", "bytes_limit",
                "bytes_reserved", "peak_bytes_reserved", "bytes_reservable_limit",
                "largest_free_block_bytes", "pool_bytes", "peak_pool_bytes")
MemoryStatsArgs = _args("PJRT_Device_MemoryStats_Args", [
    ("device", _P), ("bytes_in_use", c_int64)] + [
    field for name in MEMORY_STATS for field in ((name, c_int64),
                                                  (name + "_is_set", ctypes.c_bool))])

# The PJRT_Api function table, in the header's order (_PJRT_API_STRUCT_FIELD list).
_API_SLOTS = """
Error_Destroy Error_Message Error_GetCode Plugin_Initialize Plugin_Attributes
Event_Destroy Event_IsReady Event_Error Event_Await Event_OnReady
Client_Create Client_Destroy Client_PlatformName Client_ProcessIndex Client_PlatformVersion
Client_Devices Client_AddressableDevices Client_LookupDevice Client_LookupAddressableDevice
Client_AddressableMemories Client_Compile Client_DefaultDeviceAssignment
Client_BufferFromHostBuffer DeviceDescription_Id DeviceDescription_ProcessIndex
DeviceDescription_Attributes DeviceDescription_Kind DeviceDescription_DebugString
DeviceDescription_ToString Device_GetDescription Device_IsAddressable
Device_LocalHardwareId Device_AddressableMemories Device_DefaultMemory Device_MemoryStats
Memory_Id Memory_Kind Memory_DebugString Memory_ToString Memory_AddressableByDevices
Executable_Destroy Executable_Name Executable_NumReplicas Executable_NumPartitions
Executable_NumOutputs Executable_SizeOfGeneratedCodeInBytes Executable_GetCostAnalysis
Executable_OutputMemoryKinds Executable_OptimizedProgram Executable_Serialize
LoadedExecutable_Destroy LoadedExecutable_GetExecutable LoadedExecutable_AddressableDevices
LoadedExecutable_Delete LoadedExecutable_IsDeleted LoadedExecutable_Execute
Executable_DeserializeAndLoad LoadedExecutable_Fingerprint Buffer_Destroy
Buffer_ElementType Buffer_Dimensions Buffer_UnpaddedDimensions
Buffer_DynamicDimensionIndices Buffer_GetMemoryLayout Buffer_OnDeviceSizeInBytes
Buffer_Device Buffer_Memory Buffer_Delete Buffer_IsDeleted Buffer_CopyToDevice
Buffer_ToHostBuffer Buffer_IsOnCpu Buffer_ReadyEvent Buffer_UnsafePointer
""".split()
_API_HEADER = 40  # struct_size, extension_start, PJRT_Api_Version (24 bytes)

# PJRT_Buffer_Type enum values, by dtype name: naming bfloat16 needs no ml_dtypes import,
# whose extension holds the GIL for about 0.5 s while it loads (a stall for a caller
# running while the backend loads on the compile thread)
_BUFFER_TYPES = {
    "bool": 1, "int8": 2, "int16": 3, "int32": 4, "int64": 5, "uint8": 6, "uint16": 7,
    "uint32": 8, "uint64": 9, "float16": 10, "float32": 11, "float64": 12, "bfloat16": 13,
    "complex64": 14, "complex128": 15, "float8_e5m2": 16, "float8_e4m3fn": 17,
    "float8_e4m3b11fnuz": 18, "float8_e5m2fnuz": 19, "float8_e4m3fnuz": 20,
    "float8_e4m3": 26, "float8_e3m4": 27}

_ERROR_CODES = ["CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
                "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
                "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL",
                "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"]

# xla.CompileOptionsProto{executable_build_options{num_replicas: 1, num_partitions: 1}}:
# the smallest options that compile; leaving either field out aborts the process.
COMPILE_OPTIONS = bytes([0x1A, 0x04, 0x20, 0x01, 0x28, 0x01])


def _field(number: int, value) -> bytes:
  """One protobuf field: an int (varint, wire type 0) or bytes (length-delimited, 2)."""
  if isinstance(value, (bytes, bytearray)):
    return _varint(number << 3 | 2) + _varint(len(value)) + bytes(value)
  return _varint(number << 3) + _varint(int(value) & (1 << 64) - 1)


def _float_field(number: int, value: float, fmt: str) -> bytes:
  """A ``float`` (fmt '<f', wire type 5) or ``double`` (fmt '<d', wire type 1) field."""
  return _varint(number << 3 | (5 if fmt == "<f" else 1)) + struct.pack(fmt, value)


# The compiler options that JAX sets on ExecutableBuildOptionsProto instead of passing them
# as environment overrides: name -> (field number, encoder).
_BUILD_OPTION_FIELDS = {
    "exec_time_optimization_effort": lambda v: _float_field(20, float(v), "<f"),
    "memory_fitting_effort": lambda v: _float_field(21, float(v), "<f"),
    "optimization_level": lambda v: _field(24, int(v)),
    "memory_fitting_level": lambda v: _field(25, int(v)),
}


def _option_override(name: str, value) -> bytes:
  """One ``env_option_overrides`` map entry: {key, OptionOverrideProto}, the value as a
  string, bool, int or double field as jaxlib's CompileOptions encodes it."""
  if isinstance(value, str):
    encoded = _field(1, value.encode())
  elif isinstance(value, (bool, np.bool_)):
    encoded = _field(2, bool(value))
  elif isinstance(value, (int, np.integer)):
    encoded = _field(3, int(value))
  elif isinstance(value, (float, np.floating)):
    encoded = _float_field(4, float(value), "<d")
  else:
    raise TypeError(f"compiler option {name!r}: value {value!r} of type "
                    f"{type(value).__name__} is not a str, bool, int or float, the types "
                    "XLA's options take.")
  return _field(1, name.encode()) + _field(2, encoded)


def compile_options(num_replicas: int = 1, num_partitions: int = 1,
                    device_ids=None, overrides=None) -> bytes:
  """A serialized ``xla.CompileOptionsProto`` for a program over several devices.

  ``device_ids[r][p]`` is the device of replica ``r``, partition ``p`` (the
  ``DeviceAssignmentProto``: one ``ComputationDevice`` per partition listing its replicas'
  devices). More than one partition turns on XLA's SPMD partitioner. ``overrides``, a
  dict of XLA option names to values (``Lowered.compile(compiler_options=...)``), go
  where JAX puts them: a few on the build options, the rest in ``env_option_overrides``,
  which XLA parses when it compiles (an unknown name is its error). One replica, one
  partition and no overrides give exactly ``COMPILE_OPTIONS``.
  """
  overrides = dict(overrides or {})
  build = _field(4, num_replicas) + _field(5, num_partitions)
  if num_partitions > 1:   # use_spmd_partitioning, with Shardy (the sdy attributes)
    build += _field(6, 1) + _field(19, 1)
  if device_ids is not None:
    assignment = _field(1, num_replicas) + _field(2, num_partitions)
    for p in range(num_partitions):
      ids = b"".join(_field(1, device_ids[r][p]) for r in range(num_replicas))
      assignment += _field(3, ids)
    build += _field(9, assignment)
  for name, encode in _BUILD_OPTION_FIELDS.items():
    if name in overrides:
      build += encode(overrides.pop(name))
  env = b"".join(_field(7, _option_override(k, v)) for k, v in overrides.items())
  return _field(3, build) + env

_HOST_ONLY_DURING_CALL = 0
_HOST_ZERO_COPY = 2


def buffer_type(dtype) -> int:
  """PJRT's buffer type of ``dtype`` (TypeError where it has none)."""
  t = _buffer_types.get(dtype)
  if t is None:
    t = _BUFFER_TYPES.get(np.dtype(dtype).name)
    if t is None:
      raise TypeError(f"XLA backend: dtype {np.dtype(dtype).name} is not supported.")
    _buffer_types[dtype] = t
  return t


# dtype (as given) -> PJRT buffer type: NumPy works out a dtype's name in Python, and
# setting up an executable asks for each argument's and output's type twice.
_buffer_types: dict = {}


# ----------------------------------------------------------------------------- the API

# Slots that only read or free an event, an error or an executable's description: they
# never wait and never call back. A background thread that releases the GIL for such a
# call must take it back from the callers: setting up a race's winner made three, each
# taken back from a caller's call.
_HOLDING_THE_GIL = frozenset(["Event_IsReady", "Event_Error", "Event_Destroy", "Error_Destroy",
                              "Error_Message", "Error_GetCode", "LoadedExecutable_GetExecutable",
                              "Executable_NumOutputs", "Executable_Destroy"])


class Api:
  """A loaded plugin's function table. Plugins are never unloaded (PJRT forbids it)."""

  def __init__(self, path: str):
    self.path = path
    _dlopen_releasing_the_gil(path)
    lib = ctypes.CDLL(path, mode=getattr(ctypes, "RTLD_LOCAL", 0))
    get_api = lib.GetPjrtApi
    get_api.restype, get_api.argtypes = c_void_p, []
    base = get_api()
    if not base:
      raise XlaRuntimeError(f"GetPjrtApi returned NULL in {path}.")
    self._lib, self._base = lib, base
    size = ctypes.c_size_t.from_address(base).value
    self.version = (c_int.from_address(base + 32).value, c_int.from_address(base + 36).value)
    if self.version[0] != 0 or self.version[1] < 40:
      raise XlaRuntimeError(f"The PJRT plugin {path} has C API version "
                            f"{self.version[0]}.{self.version[1]}; jaxlite needs 0.40 or "
                            "newer with major version 0.")
    # Every slot takes one pointer to its args struct, and every caller passes a
    # ctypes.byref(...): declaring no argument types skips ctypes' per-call conversion
    # (about 90 ns of the 220 ns a call costs). Never pass a plain int address here: without
    # argtypes ctypes would truncate it to a C int.
    # Calls that can neither block nor run a host callback keep the GIL: releasing and
    # taking it back is a fifth of what a call costs, and a dispatch makes three of them.
    releasing, holding = ctypes.CFUNCTYPE(c_void_p), ctypes.PYFUNCTYPE(c_void_p)
    for i, name in enumerate(_API_SLOTS):
      offset = _API_HEADER + 8 * i
      addr = c_void_p.from_address(base + offset).value if offset + 8 <= size else None
      proto = holding if name in _HOLDING_THE_GIL else releasing
      setattr(self, name, proto(addr) if addr else None)
    for name in ("Error_Destroy", "Error_Message", "Error_GetCode", "Client_Create",
                 "Client_Compile", "Client_BufferFromHostBuffer",
                 "LoadedExecutable_Execute", "Buffer_Destroy", "Event_Await",
                 "Event_Destroy", "Buffer_ToHostBuffer"):
      if getattr(self, name) is None:
        raise XlaRuntimeError(f"The PJRT plugin {path} lacks {name}.")
    if self.Plugin_Initialize is not None:
      self.check(self.Plugin_Initialize(ctypes.byref(_new(PluginInitArgs))))

  def check(self, err):
    """Raise ``XlaRuntimeError`` for a non-NULL ``PJRT_Error*`` (and destroy it)."""
    if err:
      raise self.error(err)

  def error(self, err) -> XlaRuntimeError:
    m = _new(ErrorMessageArgs, error=err)
    self.Error_Message(ctypes.byref(m))
    message = ctypes.string_at(m.message, m.message_size).decode("utf-8", "replace")
    c = _new(ErrorCodeArgs, error=err)
    code = None
    if not self.Error_GetCode(ctypes.byref(c)):
      code = _ERROR_CODES[c.code - 1] if 1 <= c.code <= len(_ERROR_CODES) else None
    self.Error_Destroy(ctypes.byref(_new(ErrorArgs, error=err)))
    return XlaRuntimeError(f"{code}: {message}" if code else message)

  def attributes(self) -> dict:
    if self.Plugin_Attributes is None:
      return {}
    a = _new(PluginAttributesArgs)
    self.check(self.Plugin_Attributes(ctypes.byref(a)))
    return _named_values(a.attributes, a.num_attributes)

  def await_event(self, event):
    """Wait for ``event``, destroy it, and raise if it carried an error."""
    args = _new(EventArgs, event=event)
    err = self.Event_Await(ctypes.byref(args))
    self.Event_Destroy(ctypes.byref(args))
    self.check(err)

  def destroy_event(self, event):
    self.Event_Destroy(ctypes.byref(_new(EventArgs, event=event)))


def _named_values(address, count) -> dict:
  """``count`` PJRT_NamedValues from ``address`` as a dict (int lists as tuples)."""
  out = {}
  for i in range(count):
    nv = NamedValue.from_address(address + i * ctypes.sizeof(NamedValue))
    name = ctypes.string_at(nv.name, nv.name_size).decode()
    if nv.type == 0:
      out[name] = ctypes.string_at(nv.value.string_value, nv.value_size).decode()
    elif nv.type == 1:
      out[name] = nv.value.int64_value
    elif nv.type == 2:
      out[name] = tuple((c_int64 * nv.value_size).from_address(nv.value.string_value))
    elif nv.type == 3:
      out[name] = nv.value.float_value
    elif nv.type == 4:
      out[name] = nv.value.bool_value
  return out


def row_major_layout(ndim: int):
  """The address of a PJRT host layout for a dense C-order array of ``ndim`` dimensions,
  to pass as ``host_layout``. Without one, ToHostBuffer writes the buffer in the device's
  own layout: a TPU's for rank 3 and up is not C order, and read as C order its axes come
  out permuted."""
  return host_layout(tuple(range(ndim)))


def host_layout(major_to_minor: tuple):
  """The address of a PJRT host layout for a dense array whose dimensions lie in memory
  in the order ``major_to_minor`` (slowest varying first), untiled."""
  made = _host_layouts.get(major_to_minor)
  if made is None:
    ndim = len(major_to_minor)
    order = (c_int64 * max(ndim, 1))(*reversed(major_to_minor))
    layout = _new(MemoryLayout, type=0)   # PJRT_Buffer_MemoryLayout_Type_Tiled, no tiles
    layout.layout.tiled.struct_size = TiledLayout.SIZE
    layout.layout.tiled.minor_to_major = ctypes.addressof(order)
    layout.layout.tiled.minor_to_major_size = ndim
    made = _host_layouts.setdefault(major_to_minor, (ctypes.addressof(layout), layout, order))
  return made[0]


_host_layouts: dict = {}


def _int64s(address, count) -> list:
  return list((c_int64 * count).from_address(address)) if count else []


_apis: dict = {}
_apis_lock = threading.Lock()


def _dlopen_releasing_the_gil(path: str):
  """Load the plugin through libc's ``dlopen`` called as a foreign function, which runs
  without the GIL, so that the other threads keep running meanwhile: the plugin is large
  (about 20 ms to load) and ``ctypes.CDLL`` holds the GIL while it loads a library. The
  ``CDLL`` that follows then finds it loaded. Plugins are never unloaded."""
  try:
    libc_dlopen = ctypes.CDLL(None).dlopen
    mode = os.RTLD_NOW | os.RTLD_LOCAL
  except (OSError, AttributeError, TypeError):   # no POSIX dlopen: CDLL loads it alone
    return
  libc_dlopen.restype, libc_dlopen.argtypes = c_void_p, [c_char_p, c_int]
  libc_dlopen(os.fsencode(path), mode)


def load_api(path: str) -> Api:
  """The function table of the plugin at ``path``, loaded once per process."""
  with _apis_lock:
    api = _apis.get(path)
    if api is None:
      api = _apis[path] = Api(path)
    return api


def extension(api: Api, ext_type: int):
  """The address of the plugin's extension struct whose ``PJRT_Extension_Type`` is
  ``ext_type`` (e.g. 5, FFI), or None: the chain starts at ``PJRT_Api.extension_start``
  and each ``PJRT_Extension_Base`` is {size_t struct_size; int type; next*}."""
  ext = c_void_p.from_address(api._base + 8).value
  while ext:
    if c_int.from_address(ext + 8).value == ext_type:
      return ext
    ext = c_void_p.from_address(ext + 16).value
  return None


# ----------------------------------------------------------------------------- client

def _string(api, fn, cls, **kw) -> str:
  a = _new(cls, **kw)
  api.check(fn(ctypes.byref(a)))
  return ctypes.string_at(a.value, a.value_size).decode()


class Device:
  """A PJRT device of a client: its id, kind, hardware id and description attributes
  (a TPU's ``coords`` and ``core_on_chip``), and its allocator's statistics."""

  def __init__(self, client, handle):
    api = client.api
    self.api = api
    d = _new(DeviceDescriptionArgs, device=handle)
    api.check(api.Device_GetDescription(ctypes.byref(d)))
    i = _new(DescriptionIdArgs, device_description=d.device_description)
    api.check(api.DeviceDescription_Id(ctypes.byref(i)))
    self.handle, self.id, self.platform = handle, i.id, client.platform
    self.device_kind = _string(api, api.DeviceDescription_Kind, DescriptionStringArgs,
                               device_description=d.device_description)
    self.attributes = {}
    if api.DeviceDescription_Attributes is not None:
      a = _new(DescriptionAttributesArgs, device_description=d.device_description)
      api.check(api.DeviceDescription_Attributes(ctypes.byref(a)))
      self.attributes = _named_values(a.attributes, a.num_attributes)
    self.local_hardware_id = None
    if api.Device_LocalHardwareId is not None:
      h = _new(LocalHardwareIdArgs, device=handle)
      api.check(api.Device_LocalHardwareId(ctypes.byref(h)))
      self.local_hardware_id = h.local_hardware_id if h.local_hardware_id >= 0 else None

  def memory_stats(self) -> dict | None:
    """The allocator's statistics (``jax.Device.memory_stats``), or None where the plugin
    keeps none (the CPU plugin)."""
    if self.api.Device_MemoryStats is None:
      return None
    m = _new(MemoryStatsArgs, device=self.handle)
    try:
      self.api.check(self.api.Device_MemoryStats(ctypes.byref(m)))
    except XlaRuntimeError as e:
      if str(e).startswith("UNIMPLEMENTED"):
        return None
      raise
    stats = {"bytes_in_use": m.bytes_in_use}
    stats.update((name, getattr(m, name)) for name in MEMORY_STATS
                 if getattr(m, name + "_is_set"))
    return stats

  def __repr__(self):
    return f"{type(self).__name__}(id={self.id}, platform={self.platform!r})"


class Client:
  """A PJRT client; its buffers and executables are destroyed before it is.
  ``synchronous``: every single-device dispatch finishes before it returns (JAX's
  ``jax_cpu_enable_async_dispatch=False``; the CPU plugin has no option for it)."""

  def __init__(self, api: Api, options: dict | None = None, synchronous: bool = False):
    self.api = api
    self.synchronous = synchronous
    keep, values = [], []
    for name, value in (options or {}).items():
      raw = name.encode()
      keep.append(raw)
      nv = _new(NamedValue, name=ctypes.cast(c_char_p(raw), c_void_p), name_size=len(raw))
      if isinstance(value, bool):
        nv.type, nv.value.bool_value, nv.value_size = 4, value, 1
      elif isinstance(value, int):
        nv.type, nv.value.int64_value, nv.value_size = 1, value, 1
      else:
        sval = str(value).encode()
        keep.append(sval)
        nv.type, nv.value_size = 0, len(sval)
        nv.value.string_value = ctypes.cast(c_char_p(sval), c_void_p)
      values.append(nv)
    array = (NamedValue * len(values))(*values)
    a = _new(ClientCreateArgs, create_options=ctypes.addressof(array),
             num_options=len(values))
    api.check(background.adopt_threads_started_by(api.Client_Create, ctypes.byref(a)))
    self.handle = a.client
    self.platform = _string(api, api.Client_PlatformName, ClientStringArgs, client=a.client)
    self.platform_version = _string(api, api.Client_PlatformVersion, ClientStringArgs,
                                    client=a.client)
    d = _new(ClientDevicesArgs, client=a.client)
    api.check(api.Client_AddressableDevices(ctypes.byref(d)))
    handles = (c_void_p * d.num_devices).from_address(d.devices)
    self.devices = [Device(self, h) for h in handles]
    # On CPU a ready buffer's memory is host memory: read it directly (no copy thread).
    self.direct_read = self.platform == "cpu" and api.Buffer_UnsafePointer is not None
    self._finalizer = weakref.finalize(self, _destroy_client, api, a.client)
    # Not at interpreter exit: a background compile may still be using the client then,
    # and the process's teardown releases it anyway.
    self._finalizer.atexit = False

  def compile(self, text: str, options: bytes = COMPILE_OPTIONS) -> LoadedExecutable:
    """Compile StableHLO ``text`` (an MLIR module); ``options`` a serialized
    CompileOptionsProto (default: one replica, one partition, on device 0)."""
    code = text.encode()
    fmt = b"mlir"
    program = _new(Program, code=ctypes.cast(c_char_p(code), c_void_p), code_size=len(code),
                   format=ctypes.cast(c_char_p(fmt), c_void_p), format_size=len(fmt))
    raw = ctypes.create_string_buffer(options, len(options))
    a = _new(CompileArgs, client=self.handle, program=ctypes.addressof(program),
             compile_options=ctypes.addressof(raw), compile_options_size=len(options))
    self.api.check(self.api.Client_Compile(ctypes.byref(a)))
    return LoadedExecutable(self, a.executable)

  def put(self, value, device: int = 0) -> "DeviceBuffer":
    """A buffer on device ``device`` (an index into ``devices``) holding NumPy ``value``
    (ready when this returns on CPU).

    On CPU an array of ``ALIAS_MIN_BYTES`` or more is shared, not copied: the buffer
    aliases a 64-byte aligned C-contiguous array (``value`` itself when it is one, else an
    aligned copy), its ``host``, kept alive until PJRT is done with the buffer; callers
    holding the value can swap theirs for it so that it is in memory once. Smaller values,
    and every value on other platforms, are copied during the call (``host`` is None).
    """
    value = np.asarray(value)
    spec = _spec(value.shape, value.dtype)
    host = None
    if self.direct_read and value.nbytes >= ALIAS_MIN_BYTES:
      if value.ctypes.data % 64 or not value.flags.c_contiguous:
        value = _aligned_copy(value)
      host = value
    elif not value.flags.c_contiguous:
      value = np.ascontiguousarray(value)
    shape = spec[0]
    dims = (c_int64 * max(len(shape), 1))(*shape)
    a = _new(FromHostArgs, client=self.handle, data=value.ctypes.data,
             type=buffer_type(spec[1]), dims=ctypes.addressof(dims), num_dims=len(shape),
             host_buffer_semantics=_HOST_ZERO_COPY if host is not None
             else _HOST_ONLY_DURING_CALL, device=self.devices[device].handle)
    self.api.check(self.api.Client_BufferFromHostBuffer(ctypes.byref(a)))
    alias = None
    if host is not None:
      # With zero copy the done event fires once the buffer is destroyed and no execution
      # reads it any more: the buffer's finalizer waits for it before letting go of host.
      alias = (host, a.done_with_host_buffer)
    elif a.done_with_host_buffer:
      self.api.destroy_event(a.done_with_host_buffer)  # copied during the call: done
    b = _new_object(DeviceBuffer)
    b.handle, b.api, b.client, b.spec, b._flight, b._alias = (a.buffer, self.api, self, spec,
                                                              None, alias)
    next(_created)
    return b

  def deserialize(self, data: bytes) -> LoadedExecutable:
    """Load an executable written by ``LoadedExecutable.serialize`` (same plugin only)."""
    if self.api.Executable_DeserializeAndLoad is None:
      raise XlaRuntimeError("This PJRT plugin cannot deserialize executables.")
    a = _new(DeserializeArgs, client=self.handle,
             serialized_executable=ctypes.cast(c_char_p(data), c_void_p),
             serialized_executable_size=len(data))
    self.api.check(self.api.Executable_DeserializeAndLoad(ctypes.byref(a)))
    loaded = LoadedExecutable(self, a.loaded_executable)
    loaded.serialized = data
    return loaded


def _destroy_client(api, handle):
  api.check(api.Client_Destroy(ctypes.byref(_new(ClientArgs, client=handle))))


# ----------------------------------------------------------------------------- executables

class LoadedExecutable:
  """A compiled program on device 0 of a client.

  ``execute`` takes and returns host NumPy arrays. The argument structs are built once
  and reused, so a call costs a few C calls per argument and output; a second thread
  calling the same executable concurrently gets fresh structs instead of waiting.
  """

  def __init__(self, client: Client, handle):
    self.client, self.api, self.handle = client, client.api, handle
    # Holding the client keeps it alive; the finalizer destroys this executable first.
    self._finalizer = weakref.finalize(self, _destroy_loaded, client, handle)
    self._finalizer.atexit = False
    self.in_specs = self.out_specs = None
    self.donors = ()
    self._lock = threading.Lock()
    # The bytes a deserialized executable was loaded from. XLA's CPU plugin serializes
    # such an executable without its compiled kernels: loaded again, it fails at its
    # first run ("Function ..._fusion not found"), so these are what serialize returns.
    self.serialized = None

  def _executable(self):
    api = self.api
    g = _new(GetExecutableArgs, loaded_executable=self.handle)
    api.check(api.LoadedExecutable_GetExecutable(ctypes.byref(g)))
    return g.executable

  def num_outputs(self) -> int:
    api, exe = self.api, self._executable()
    try:
      n = _new(NumOutputsArgs, executable=exe)
      api.check(api.Executable_NumOutputs(ctypes.byref(n)))
      return n.num_outputs
    finally:
      api.Executable_Destroy(ctypes.byref(_new(ExecutableArgs, executable=exe)))

  def cost_analysis(self) -> dict:
    """XLA's cost analysis of the compiled program: ``{"flops": ..., "bytes accessed":
    ..., ...}``, the properties the plugin reports, as floats."""
    api, exe = self.api, self._executable()
    try:
      c = _new(CostAnalysisArgs, executable=exe)
      api.check(api.Executable_GetCostAnalysis(ctypes.byref(c)))
      # the properties belong to the executable: read them before it is destroyed
      return _named_values(c.properties, c.num_properties) if c.num_properties else {}
    finally:
      api.Executable_Destroy(ctypes.byref(_new(ExecutableArgs, executable=exe)))

  def serialize(self) -> bytes:
    if self.serialized is not None:
      return self.serialized
    api, exe = self.api, self._executable()
    try:
      s = _new(SerializeArgs, executable=exe)
      api.check(api.Executable_Serialize(ctypes.byref(s)))
      data = ctypes.string_at(s.serialized_bytes, s.serialized_bytes_size)
      ctypes.CFUNCTYPE(None, c_void_p)(s.serialized_executable_deleter)(
          s.serialized_executable)
      return data
    finally:
      api.Executable_Destroy(ctypes.byref(_new(ExecutableArgs, executable=exe)))

  def set_signature(self, in_specs, out_specs, donors=()):
    """Declare the (shape, dtype) of every argument and output; builds the call structs.

    ``donors``: the arguments the program lets XLA write its outputs into (lowered with
    ``tf.aliasing_output`` / ``jax.buffer_donor``). PJRT would invalidate their buffers at
    every execution, so every call keeps them (PJRT copies instead) except through
    ``execute_donating``, which names the buffers it may consume."""
    self.donors = tuple(donors)
    self._donating = {}   # the donors kept by a donating call -> its prebuilt structs
    self._streak = [0]   # dispatches found finished at once, in a row (``_flight``)
    self.in_specs = [_spec(s, d) for s, d in in_specs]
    self.out_specs = [_spec(s, d) for s, d in out_specs]
    n = self.num_outputs()
    if n != len(self.out_specs):
      raise XlaRuntimeError(f"The executable has {n} outputs, expected "
                            f"{len(self.out_specs)}.")
    for _, d in self.in_specs + self.out_specs:
      buffer_type(d)
    self._cpu = self.client.platform == "cpu" and self.api.Buffer_UnsafePointer is not None
    self._structs = self._build_structs()

  def _build_structs(self, keep_donors=None):
    """The argument structs of a call; ``keep_donors``: the donor arguments PJRT must not
    consume (default: all of them)."""
    api, client = self.api, self.client
    device = client.devices[0].handle
    h2d = []
    for shape, dtype in self.in_specs:
      dims = (c_int64 * max(len(shape), 1))(*shape)
      a = _new(FromHostArgs, client=client.handle, type=buffer_type(dtype),
               dims=ctypes.addressof(dims), num_dims=len(shape),
               host_buffer_semantics=_HOST_ZERO_COPY, device=device)
      h2d.append((a, ctypes.byref(a), dims))
    nin, nout = len(self.in_specs), len(self.out_specs)
    arg_list = (c_void_p * max(nin, 1))()
    arg_lists = (c_void_p * 1)(ctypes.addressof(arg_list))
    out_list = (c_void_p * max(nout, 1))()
    out_lists = (c_void_p * 1)(ctypes.addressof(out_list))
    events = (c_void_p * 1)()
    options, kept = self._options(self.donors if keep_donors is None else keep_donors)
    ex = _new(ExecuteArgs, executable=self.handle, options=ctypes.addressof(options),
              argument_lists=ctypes.addressof(arg_lists), num_devices=1, num_args=nin,
              output_lists=ctypes.addressof(out_lists),
              device_complete_events=ctypes.addressof(events))
    event_args = _new(EventArgs)
    buf_args = _new(BufferArgs)
    ptr_args = _new(UnsafePointerArgs)
    host_args = _new(ToHostArgs)
    ready_args = _new(IsReadyArgs)
    keep = (arg_lists, out_lists, options, kept)
    return (h2d, arg_list, out_list, events, ex, ctypes.byref(ex), event_args,
            ctypes.byref(event_args), buf_args, ctypes.byref(buf_args), ptr_args,
            ctypes.byref(ptr_args), host_args, ctypes.byref(host_args), keep, ready_args,
            ctypes.byref(ready_args))

  @staticmethod
  def _options(keep_donors):
    """ExecuteOptions listing ``keep_donors`` as non-donatable, and the index array the
    options point to (keep it alive as long as the options)."""
    options = _new(ExecuteOptions)
    kept = None
    if keep_donors:
      kept = (c_int64 * len(keep_donors))(*keep_donors)
      options.non_donatable_input_indices = ctypes.addressof(kept)
      options.num_non_donatable_input_indices = len(keep_donors)
    return options, kept

  def execute_donating(self, args, donate):
    """``execute_device`` that lets XLA reuse the buffers of the arguments at the indices
    ``donate`` (donors, see ``set_signature``): those DeviceBuffers are invalid afterwards
    and must be dropped. The caller guarantees nothing else reads their memory; every
    other argument is left intact."""
    keep = tuple(i for i in self.donors if i not in donate)
    args = self._check_device_args(args)
    on_device = all(x.__class__ is DeviceBuffer for x in args)
    if self._lock.acquire(False):
      try:
        structs = self._donating.get(keep)
        if structs is None:
          structs = self._donating[keep] = self._build_structs(keep)
        return self._outputs(*self._execute_with(args, structs, on_device))
      finally:
        self._lock.release()
    return self._outputs(*self._execute_with(args, self._build_structs(keep), on_device))

  def execute_device(self, args):
    """Dispatch on device 0 without waiting: each argument a ``DeviceBuffer`` of this
    client (used in place) or a NumPy value (transferred); returns one ``DeviceBuffer``
    per output, ready later (``DeviceBuffer.block_until_ready``).

    NumPy arguments may be aliased by the device (zero copy) until the computation is
    done with them: they are kept alive by the outputs and must not be mutated.

    ``cached_call`` makes a faster function for the common case, which comes back here
    for anything else.
    """
    specs = self.in_specs
    if len(args) != len(specs):
      raise TypeError(f"The compiled function takes {len(specs)} arguments, got "
                      f"{len(args)}.")
    args = self._check_device_args(args)
    return self._dispatch(args, all(x.__class__ is DeviceBuffer for x in args))

  def cached_call(self):
    """``execute_device`` made for this signature's common case: this client's buffers of
    the declared specs, the prebuilt structs free (see ``_CACHED_CALL``). It holds this
    executable; keep it where the executable does not hold it (no reference cycle)."""
    if len(self.in_specs) + len(self.out_specs) > CACHED_CALL_MAX_ARITY:
      return self.execute_device
    return _cached_call(self)

  def execute_sharded(self, arg_lists, donate=()):
    """Dispatch a program compiled for several devices (replicas or partitions) without
    waiting: ``arg_lists[i]`` holds the DeviceBuffers of the i-th device of its device
    assignment, each already on that device. Returns one list of output DeviceBuffers
    per device, ready later. ``donate``: the donor arguments whose buffers XLA may
    consume (on every device; see ``execute_donating``)."""
    api, n = self.api, len(arg_lists)
    nin, nout = len(self.in_specs), len(self.out_specs)
    keep = []
    for args in arg_lists:
      self._check_device_args(args)
      if any(x.__class__ is not DeviceBuffer for x in args):
        raise TypeError("execute_sharded takes device buffers only; put each shard on its "
                        "device first.")
      keep.append((c_void_p * max(nin, 1))(*[x.handle for x in args]))
    outs = [(c_void_p * max(nout, 1))() for _ in range(n)]
    arg_ptrs = (c_void_p * n)(*[ctypes.addressof(a) for a in keep])
    out_ptrs = (c_void_p * n)(*[ctypes.addressof(o) for o in outs])
    events = (c_void_p * n)()
    options, kept = self._options(tuple(i for i in self.donors if i not in donate))
    ex = _new(ExecuteArgs, executable=self.handle, options=ctypes.addressof(options),
              argument_lists=ctypes.addressof(arg_ptrs), num_devices=n, num_args=nin,
              output_lists=ctypes.addressof(out_ptrs),
              device_complete_events=ctypes.addressof(events))
    api.check(api.LoadedExecutable_Execute(ctypes.byref(ex)))
    return [self._outputs(out[:nout], _Flight(api, events[i]), parallel=True)
            for i, out in enumerate(outs)]

  def _check_device_args(self, args):
    """``args`` with NumPy values checked and made C-contiguous; buffers checked."""
    args = list(args)
    for i, spec in enumerate(self.in_specs):
      x = args[i]
      if x.__class__ is DeviceBuffer:
        if x.spec is not spec and x.spec != spec:
          shape, dtype = spec
          raise TypeError(f"Argument {i} of the compiled function must be "
                          f"{dtype.name}{list(shape)}, got {x.dtype.name}{list(x.shape)}.")
        if x.client is not self.client:   # another platform's: through the host
          if transfer_guard.active:
            transfer_guard.check("device_to_device", lambda: f"{x!r} to {self.client.platform}")
          args[i] = _host_arg(i, x.to_numpy(), spec)
      else:
        args[i] = _host_arg(i, x, spec)
    return args

  def _dispatch(self, args, on_device):
    """Execute with the prebuilt structs, or fresh ones while another thread uses them."""
    if self._lock.acquire(False):
      try:
        structs = self._structs
        return self._outputs(*self._execute_with(args, structs, on_device))
      finally:
        self._lock.release()
    return self._outputs(*self._execute_with(args, self._build_structs(), on_device))

  def _execute_with(self, args, structs, on_device):
    """Execute with ``structs``: the output handles and the dispatch's flight."""
    api = self.api
    arg_list, out_list, events, ex_ref = structs[1], structs[2], structs[3], structs[5]
    if on_device:
      for i, x in enumerate(args):
        arg_list[i] = x.handle
      events[0] = None
      err = api.LoadedExecutable_Execute(ex_ref)
      if err:
        raise api.error(err)
      flight = self._flight(structs)
    else:
      flight = self._dispatch_with_host(args, structs)
    events[0] = None
    return out_list[:len(self.out_specs)], flight

  def _flight(self, structs, inputs_ready=False):
    """The flight of the dispatch just made with ``structs`` (it takes the completion
    event), or None when the dispatch has finished already: the CPU client runs a small
    program inside Execute when its inputs are ready, and a finished dispatch needs no
    flight object, no tracking and no wait later.

    One C call asks whether it has finished. Dispatches on inputs known to be ready
    (``inputs_ready``) found finished count towards the executable's streak (``_streak``);
    a run found unfinished ends it. From ``INLINE_AFTER`` in a row on, the cached call
    skips the question on ready inputs and waits for the event at once, which returns at
    once (it would only wait for a run that, against the record, went to another
    thread); every ``INLINE_RECHECK``-th of those asks here again."""
    events = structs[3]
    event = events[0]
    events[0] = None
    api = self.api
    if event is None or api.Event_IsReady is None:
      return _Flight(api, event)
    ready = structs[15]
    ready.event = event
    err = api.Event_IsReady(structs[16])
    if err or not ready.is_ready:
      if err:
        api.error(err)   # destroys it: waiting later reports what went wrong
      self._streak[0] = 0
      return _Flight(api, event)
    if inputs_ready:
      self._streak[0] += 1
    # the event is ready: reading its error does not wait (Await would be the same
    # answer, with the GIL released around the call)
    ev, ev_ref = structs[6], structs[7]
    ev.event = event
    err = (api.Event_Error or api.Event_Await)(ev_ref)
    api.Event_Destroy(ev_ref)
    return _failed_flight(api, err) if err else None

  def _dispatch_with_host(self, args, structs):
    """Transfer the NumPy arguments, execute; the flight that keeps them alive."""
    api = self.api
    h2d, arg_list, events, ex_ref = structs[0], structs[1], structs[3], structs[5]
    from_host = api.Client_BufferFromHostBuffer
    transferred, host, host_events = [], [], []
    ok = False
    try:
      for i, x in enumerate(args):
        if x.__class__ is DeviceBuffer:
          arg_list[i] = x.handle
          continue
        a, a_ref, _ = h2d[i]
        a.data = x.ctypes.data
        a.done_with_host_buffer = None
        err = from_host(a_ref)
        if err:
          raise api.error(err)
        arg_list[i] = a.buffer
        transferred.append(a.buffer)
        host.append(x)
        if a.done_with_host_buffer:
          host_events.append(a.done_with_host_buffer)
      events[0] = None
      err = api.LoadedExecutable_Execute(ex_ref)
      if err:
        raise api.error(err)
      ok = True
    finally:
      # PJRT keeps an argument's memory until the computation is done with it; the
      # host arrays it may alias are released once their done events fire.
      for b in transferred:
        _destroy_buffer(api, b)
      if not ok:
        _HostFlight(api, None, host, host_events).wait()
    return _HostFlight(api, events[0], host, host_events)

  def _outputs(self, handles, flight, parallel=False):
    """One ``DeviceBuffer`` per output handle of the dispatch ``flight`` (None: finished,
    see ``_flight``); ``parallel``: one device's share of a multi-device dispatch."""
    api, client = self.api, self.client
    outs = []
    for handle, spec in zip(handles, self.out_specs):
      b = _new_object(DeviceBuffer)
      b.handle, b.api, b.client, b.spec, b._flight, b._alias = (handle, api, client, spec,
                                                                flight, None)
      next(_created)
      outs.append(b)
    if flight is None:
      return outs
    if flight.event is not None and client.synchronous and not parallel:
      with flight.lock:   # finished before returning; an error is raised when read
        flight._finish()
      if flight.error is None:
        for b in outs:
          b._flight = None
      return outs
    if flight.event is not None:   # tracked until finished (see ``_flights``)
      _flights.append(flight)
      if len(_flights) > _PRUNE_AT:
        _prune()
    elif flight.error is None:   # no completion event from this plugin: synchronous
      for b in outs:
        b._await_ready_event()
      flight.wait()
    return outs

  def check_args(self, args):
    """The arguments as C-contiguous arrays of the declared shapes and dtypes."""
    specs = self.in_specs
    if len(args) != len(specs):
      raise TypeError(f"The compiled function takes {len(specs)} arguments, got "
                      f"{len(args)}.")
    return [_host_arg(i, x, spec) for i, (x, spec) in enumerate(zip(args, specs))]

  def execute(self, args):
    """Run on device 0: NumPy arrays in, NumPy arrays (declared shapes/dtypes) out."""
    args = self.check_args(args)
    if self._lock.acquire(False):
      try:
        return self._run(args, self._structs)
      finally:
        self._lock.release()
    return self._run(args, self._build_structs())

  def _run(self, args, structs):
    api = self.api
    (h2d, arg_list, out_list, events, ex, ex_ref, ev, ev_ref, ba, ba_ref, pa, pa_ref,
     ha, ha_ref) = structs[:14]
    from_host, destroy_event, destroy_buffer = (
        api.Client_BufferFromHostBuffer, api.Event_Destroy, api.Buffer_Destroy)
    n = 0
    try:
      for (a, a_ref, _), x in zip(h2d, args):
        a.data = x.ctypes.data
        err = from_host(a_ref)
        if err:
          raise api.error(err)
        arg_list[n] = a.buffer
        n += 1
        if a.done_with_host_buffer:
          ev.event = a.done_with_host_buffer
          destroy_event(ev_ref)
      err = api.LoadedExecutable_Execute(ex_ref)
      if err:
        raise api.error(err)
    finally:
      # The arrays stay referenced (zero-copy) until their buffers are gone.
      for i in range(n):
        ba.buffer = arg_list[i]
        destroy_buffer(ba_ref)
    outs = []
    try:
      if events[0]:
        event, events[0] = events[0], None
        err = _await_event(api, event)
        if err:
          raise api.error(err)
      for i, (shape, dtype) in enumerate(self.out_specs):
        out = np.empty(shape, dtype)
        if out.nbytes:
          if self._cpu:
            pa.buffer = out_list[i]
            api.check(api.Buffer_UnsafePointer(pa_ref))
            ctypes.memmove(out.ctypes.data, pa.buffer_pointer, out.nbytes)
          else:
            self._to_host(out_list[i], out, ha, ha_ref)
        outs.append(out)
    finally:
      for i in range(len(self.out_specs)):
        ba.buffer = out_list[i]
        destroy_buffer(ba_ref)
    return outs

  def _to_host(self, buffer, out, ha, ha_ref):
    api = self.api
    ha.src, ha.dst, ha.dst_size, ha.event = buffer, out.ctypes.data, out.nbytes, None
    ha.host_layout = row_major_layout(out.ndim)
    api.check(api.Buffer_ToHostBuffer(ha_ref))
    api.await_event(ha.event)


def _destroy_loaded(client, handle):
  api = client.api
  api.check(api.LoadedExecutable_Destroy(ctypes.byref(_new(ExecutableArgs,
                                                           executable=handle))))


_specs: dict = {}


def _spec(shape, dtype):
  """The one (shape, dtype) tuple of this value: an output buffer fed to another
  executable then passes the argument check by identity."""
  spec = (tuple(shape), np.dtype(dtype))
  return _specs.setdefault(spec, spec)


def _aligned_copy(value):
  """A C-contiguous copy of ``value`` whose data is 64-byte aligned (what XLA's CPU
  client needs to alias host memory instead of copying it)."""
  raw = np.empty(value.nbytes + 64, np.uint8)
  start = -raw.ctypes.data % 64
  out = raw[start:start + value.nbytes].view(value.dtype).reshape(value.shape)
  out[...] = value
  return out


def _host_arg(i, x, spec):
  """A host argument as a C-contiguous array of the declared shape and dtype."""
  shape, dtype = spec
  if x.__class__ is not np.ndarray:
    if isinstance(x, (bool, int, float, complex)) and not shape:
      x = np.asarray(x, dtype)
    else:
      x = np.asarray(x)
  if x.dtype != dtype or x.shape != shape:
    raise TypeError(f"Argument {i} of the compiled function must be "
                    f"{dtype.name}{list(shape)}, got {x.dtype.name}{list(x.shape)}. Cast or "
                    "reshape it (the XLA executable would reinterpret the bytes otherwise).")
  if not x.flags.c_contiguous:
    x = np.ascontiguousarray(x)
  return x


# ----------------------------------------------------------------------------- buffers

_new_object = object.__new__
_created = itertools.count()
_destroyed = itertools.count()
_state = {"exiting": False}
# A dispatch runs inline once this many in a row were found finished at once; each this
# many-th of those asks again (see ``LoadedExecutable._flight``).
INLINE_AFTER = 8
INLINE_RECHECK = 32
# Reading a ready CPU buffer aliases its memory from this size on (copies below it).
ALIAS_MIN_BYTES = 1 << 16


# The cached call of ``LoadedExecutable.execute_device``, as Python source with one line
# per argument and per output: unrolled, the loops, zips and slices of the general path go,
# and the prebuilt structs are closure variables instead of attributes, which saves a
# good share of a cached jit call's instructions (benchmarks/README.md, fifth pass).
# Made once per (arguments, outputs) count.
_CACHED_CALL = """
def make(general, flight_of, outputs, lock, api, client, structs, in_specs, out_specs,
         streak, DeviceBuffer, new, created, failed_flight, INLINE_AFTER, INLINE_RECHECK):
  [{specs}] = in_specs
  [{outs}] = out_specs
  acquire, release = lock.acquire, lock.release
  arg_list, out_list, events, ex_ref = structs[1], structs[2], structs[3], structs[5]
  ev, ev_ref = structs[6], structs[7]
  execute = api.LoadedExecutable_Execute
  await_event, destroy_event = api.Event_Await, api.Event_Destroy

  def execute_device(args):
    try:
      [{xs}] = args
    except (TypeError, ValueError):   # the wrong number: the general path says so
      return general(args)
    if {not_ours}:
      return general(args)
    inputs_ready = {ready}
    if not acquire(False):   # another thread's call holds the structs
      return general(args)
    try:
{stores}
      err = execute(ex_ref)
      if err:
        raise api.error(err)
{handles}
      run = streak[0]
      event = events[0]
      if (inputs_ready and run >= INLINE_AFTER and run % INLINE_RECHECK
          and event is not None):
        # this executable runs inline on ready inputs (``LoadedExecutable._flight``)
        streak[0] = run + 1
        ev.event = event
        events[0] = None
        err = await_event(ev_ref)
        destroy_event(ev_ref)
        flight = failed_flight(api, err) if err else None
      else:
        flight = flight_of(structs, inputs_ready)
    finally:
      release()
    if flight is not None:
      return outputs([{hs}], flight)
{buffers}
    return [{bs}]
  return execute_device
"""
_cached_call_code: dict = {}   # (arguments, outputs) -> the module's code object
_cached_call_makers: dict = {}   # (arguments, outputs) -> its make
# Above this many arguments and outputs together, the general path serves. Compiling the
# source holds the GIL (under ``auto``, on the compile thread while callers run): about
# 1 ms at 64, 6 ms at 256; and the more arguments, the less of a call the unrolling saves.
CACHED_CALL_MAX_ARITY = 64


def cached_call_code(nin: int, nout: int):
  """The compiled module that defines ``_CACHED_CALL``'s ``make`` for ``nin`` arguments
  and ``nout`` outputs, compiled on first use (None above ``CACHED_CALL_MAX_ARITY``)."""
  if nin + nout > CACHED_CALL_MAX_ARITY:
    return None
  code = _cached_call_code.get((nin, nout))
  if code is None:
    xs = [f"x{i}" for i in range(nin)]
    checks = [f"{x}.__class__ is not DeviceBuffer or {x}.spec is not spec{i} "
              f"or {x}.client is not client" for i, x in enumerate(xs)]
    indent = "\n" + " " * 6
    text = _CACHED_CALL.format(
        specs=", ".join(f"spec{i}" for i in range(nin)),
        outs=", ".join(f"out{j}" for j in range(nout)),
        xs=", ".join(xs),
        not_ours=" or ".join(f"({c})" for c in checks) or "False",
        ready=" and ".join(f"{x}._flight is None" for x in xs) or "True",
        stores=indent[1:] + indent.join(f"arg_list[{i}] = {x}.handle"
                                        for i, x in enumerate(xs)) if xs else "      pass",
        handles=indent[1:] + indent.join(f"h{j} = out_list[{j}]" for j in range(nout))
        if nout else "      pass",
        hs=", ".join(f"h{j}" for j in range(nout)),
        buffers="\n".join(
            f"    b{j} = new(DeviceBuffer)\n"
            f"    b{j}.handle, b{j}.api, b{j}.client, b{j}.spec, b{j}._flight, b{j}._alias = "
            f"h{j}, api, client, out{j}, None, None\n"
            f"    next(created)" for j in range(nout)),
        bs=", ".join(f"b{j}" for j in range(nout)))
    code = compile(text, f"<jaxlite cached call: {nin} arguments, {nout} outputs>", "exec")
    _cached_call_code.setdefault((nin, nout), code)
  return code


def adopt_cached_call_code(nin: int, nout: int, code):
  """Use ``code``, ``cached_call_code(nin, nout)`` as another process of this Python
  compiled it (the compile server sends it with an executable), instead of compiling
  it here: compiling holds the GIL 0.5-0.9 ms for 10 arguments and outputs, taken from
  the callers' calls while a race's winner loads."""
  _cached_call_code.setdefault((nin, nout), code)


def _cached_call(loaded):
  """``LoadedExecutable.cached_call``: the function made from ``_CACHED_CALL``."""
  nin, nout = len(loaded.in_specs), len(loaded.out_specs)
  make = _cached_call_makers.get((nin, nout))
  if make is None:
    namespace: dict = {}
    exec(cached_call_code(nin, nout), namespace)
    make = _cached_call_makers.setdefault((nin, nout), namespace["make"])
  return make(loaded.execute_device, loaded._flight, loaded._outputs, loaded._lock,
              loaded.api, loaded.client, loaded._structs, loaded.in_specs, loaded.out_specs,
              loaded._streak, DeviceBuffer, _new_object, _created, _failed_flight,
              INLINE_AFTER, INLINE_RECHECK)


def _peek(counter) -> int:
  return int(repr(counter)[6:-1])


def live_buffers() -> int:
  """How many ``DeviceBuffer`` objects exist (created and not yet destroyed)."""
  return _peek(_created) - _peek(_destroyed)


@atexit.register
def _at_exit():
  # Wait for work in flight, then stop destroying buffers: the process's teardown releases
  # device memory, and destroying buffers while modules are torn down could crash.
  wait_all()
  _state["exiting"] = True


# Reused args structs for the calls every dispatch makes (await and destroy an event,
# destroy a buffer): building one costs ~300 ns, reusing one ~60. list.pop and list.append
# are atomic under the GIL, so threads, and finalizers that a garbage collection runs in
# the middle of such a call, each take a struct of their own.
_event_args: list = []
_buffer_args: list = []


def _borrow(pool, cls):
  """An (args struct, byref) pair from ``pool``, or a new one; give it back when done."""
  try:
    return pool.pop()
  except IndexError:
    a = _new(cls)
    return a, ctypes.byref(a)


def _destroy_buffer(api, handle):
  try:   # _borrow, inline: this runs for every output buffer
    a, ref = _buffer_args.pop()
  except IndexError:
    a, ref = _borrow(_buffer_args, BufferArgs)
  a.buffer = handle
  api.Buffer_Destroy(ref)
  _buffer_args.append((a, ref))


def _failed_flight(api, err):
  """A finished dispatch's flight carrying its error (``PJRT_Error*`` ``err``, destroyed
  here), raised when its outputs are waited for."""
  failed = _Flight(api, None)
  failed.error = str(api.error(err))
  return failed


# Seconds a caller's thread polls a computation still running before it sleeps on its
# event, since a thread woken from sleep waits longer for a short computation (its CPU
# had gone idle; a VM's virtual CPU halts); in some processes polling does not pay, as
# the run there is handed to XLA's threads on the other CPU (benchmarks/README, eleventh
# and twelfth passes, ``xla_wait.py --placement``). Between questions the poller yields
# its CPU, to an XLA thread placed on it. The callers' background threads sleep: their
# poll would take the GIL back from a caller's call after every question. With one CPU a
# poll only delays the computation it waits for.
POLL_FOR = 200e-6
_yield_cpu = getattr(os, "sched_yield", lambda: None)
_MANY_CPUS = len(background.process_cpus()) > 1


def _poll(api, event):
  """On a caller's thread with a CPU to spare, ask whether ``event`` is ready until it is
  or ``POLL_FOR`` seconds have passed: waiting for it then does not sleep."""
  if not _MANY_CPUS or not background.may_poll() or api.Event_IsReady is None:
    return
  a = _new(IsReadyArgs, event=event)
  ref, is_ready, clock = ctypes.byref(a), api.Event_IsReady, time.perf_counter
  end = clock() + POLL_FOR
  while True:
    err = is_ready(ref)
    if err:
      api.error(err)   # destroyed; the wait reports what went wrong
      return
    if a.is_ready or clock() >= end:
      return
    _yield_cpu()


def _await_event(api, event):
  """Wait for ``event`` and destroy it; returns its ``PJRT_Error*`` (None: no error)."""
  a, ref = _borrow(_event_args, EventArgs)
  a.event = event
  _poll(api, event)
  err = api.Event_Await(ref)
  api.Event_Destroy(ref)
  _event_args.append((a, ref))
  return err


class _Flight:
  """One asynchronous dispatch: its completion event, shared by its outputs.

  Every flight sits in the tracking deque (``_flights``) until its event has been waited
  for and destroyed (by ``wait``, by ``_prune`` once ready, or at exit), so it needs no
  finalizer: a Python ``__del__`` on every dispatch would cost ~0.15 us. Only a
  ``_HostFlight``, which holds host memory, has one.
  """
  __slots__ = ("api", "event", "lock", "error")
  host = None   # the host arrays a ``_HostFlight`` keeps alive

  def __init__(self, api, event):
    self.api, self.event, self.lock, self.error = api, event, threading.Lock(), None

  def is_ready(self) -> bool:
    if self.event is None:
      return True
    with self.lock:
      event = self.event
      if event is None:
        return True
      a = _new(IsReadyArgs, event=event)
      self.api.check(self.api.Event_IsReady(ctypes.byref(a)))
      return a.is_ready

  def wait(self):
    """Wait for the computation; release the host arrays; raise its error if any."""
    if self.event is not None or self.host is not None:
      with self.lock:
        self._finish()
    if self.error is not None:
      raise XlaRuntimeError(self.error)

  def _finish(self):
    """Wait for and destroy the event (the caller holds ``lock``)."""
    event = self.event
    if event is not None:
      err = _await_event(self.api, event)
      self.event = None
      if err:
        self.error = str(self.api.error(err))


class _HostFlight(_Flight):
  """A dispatch that transferred host arrays, which the device may alias (zero copy):
  they stay alive until the computation and their done events let go of them."""
  __slots__ = ("host", "host_events")

  def __init__(self, api, event, host, host_events):
    super().__init__(api, event)
    self.host, self.host_events = host, host_events

  def _finish(self):
    super()._finish()
    if self.host is not None:
      api = self.api
      for event in self.host_events:
        err = _await_event(api, event)
        if err:
          api.error(err)  # destroys it; the computation's own error is what matters
      self.host_events, self.host = (), None

  def __del__(self):
    # Its outputs may all be gone before anyone waited, and before the deque let go of
    # it: release the host memory now rather than at some later dispatch.
    try:
      if (self.event is not None or self.host is not None) and not _state["exiting"]:
        self._finish()
    except Exception:  # never raise from a finalizer
      pass


# Dispatches not known to be finished, oldest first. Once more than _PRUNE_AT are held, a
# dispatch finishes and forgets the oldest ones that are done, down to _KEEP_FLIGHTS
# (amortised: one pass per _PRUNE_AT - _KEEP_FLIGHTS dispatches). At exit every one is
# waited for: the process must not tear the plugin down under a running computation
# (that crashes), whoever still holds its outputs.
_flights = collections.deque()
_prune_lock = threading.Lock()
_KEEP_FLIGHTS = 8
_PRUNE_AT = 16


_ready_args = _new(IsReadyArgs)
_ready_ref = ctypes.byref(_ready_args)


def _prune():
  """Finish and forget the oldest dispatches that are done (one C call to ask each; a
  ready event's wait does not block), down to ``_KEEP_FLIGHTS``."""
  if not _prune_lock.acquire(False):
    return
  try:
    while len(_flights) > _KEEP_FLIGHTS:
      oldest = _flights[0]
      if oldest.event is not None or oldest.host is not None:
        if not oldest.lock.acquire(False):
          break       # someone is waiting for it
        try:
          event = oldest.event
          if event is not None:
            _ready_args.event = event
            err = oldest.api.Event_IsReady(_ready_ref)
            if err:
              oldest.api.error(err)   # destroyed; whoever waits sees the real error
              break
            if not _ready_args.is_ready:
              break
          oldest._finish()
        finally:
          oldest.lock.release()
      _flights.popleft()
  finally:
    _prune_lock.release()


def pending_dispatches() -> int:
  """How many dispatches are tracked as possibly still running."""
  return len(_flights)


def wait_all():
  """Wait for every computation dispatched so far (errors are left to their outputs)."""
  while _flights:
    try:
      flight = _flights.popleft()
    except IndexError:
      break
    try:
      flight.wait()
    except XlaRuntimeError:
      pass


class _HostView:
  """Exposes a ready CPU buffer's memory to NumPy; keeps the buffer alive."""
  __slots__ = ("__array_interface__", "owner")

  def __init__(self, owner, pointer, nbytes):
    self.owner = owner
    self.__array_interface__ = {"version": 3, "shape": (nbytes,), "typestr": "|u1",
                                "data": (pointer, True)}


class DeviceBuffer:
  """A PJRT buffer on device 0 owned by Python: destroyed when collected.

  ``shape`` and ``dtype`` are known without touching the device; ``to_numpy`` waits for
  the computation that produces it and reads it (on CPU large buffers are aliased: the
  NumPy array keeps this buffer alive).
  """
  # _alias: None, or (host array, its done event) for a buffer that ``Client.put`` made
  # sharing host memory
  __slots__ = ("handle", "api", "client", "spec", "_flight", "_alias", "__weakref__")

  shape = property(lambda self: self.spec[0])
  dtype = property(lambda self: self.spec[1])

  @property
  def host(self):
    """The NumPy array whose memory this buffer shares (None: it has its own)."""
    alias = self._alias
    return None if alias is None else alias[0]

  def donatable(self, value_read: bool) -> bool:
    """Whether XLA may write into this buffer's memory without changing any other value:
    not sharing a NumPy array's memory (zero-copy ``put``), and not exposed to NumPy by a
    read that aliased it (``value_read``: the holder has read the value)."""
    return self._alias is None and not (value_read and self.client.direct_read
                                        and self.nbytes >= ALIAS_MIN_BYTES)

  def unsafe_pointer(self) -> int:
    """The address of this buffer's memory on its device (waits for it to be computed):
    ``PJRT_Buffer_UnsafePointer``."""
    self.block_until_ready()
    api = self.api
    if api.Buffer_UnsafePointer is None:
      raise XlaRuntimeError("UNIMPLEMENTED: this PJRT plugin gives no buffer addresses.")
    pa = _new(UnsafePointerArgs, buffer=self.handle)
    api.check(api.Buffer_UnsafePointer(ctypes.byref(pa)))
    return pa.buffer_pointer

  @property
  def nbytes(self) -> int:
    shape, dtype = self.spec
    n = dtype.itemsize
    for d in shape:
      n *= d
    return n

  @property
  def ready(self) -> bool:
    """Whether the buffer is known to be computed (no C call; see ``is_ready``)."""
    f = self._flight
    return f is None or f.event is None and f.error is None

  def is_ready(self) -> bool:
    """Whether the computation producing this buffer has finished (does not wait)."""
    f = self._flight
    return f is None or f.is_ready()

  def block_until_ready(self):
    """Wait for the computation producing this buffer; raise its error, if any."""
    f = self._flight
    if f is not None:
      f.wait()
      self._flight = None
    return self

  def _await_ready_event(self):
    api = self.api
    if api.Buffer_ReadyEvent is None:
      raise XlaRuntimeError("This PJRT plugin has no completion events.")
    r = _new(ReadyEventArgs, buffer=self.handle)
    api.check(api.Buffer_ReadyEvent(ctypes.byref(r)))
    api.await_event(r.event)

  def to_numpy(self, major_to_minor=None) -> np.ndarray:
    """The value as a NumPy array (waits for it; do not write to the result).

    ``major_to_minor``: the order of the dimensions in the buffer's memory, for a buffer
    computed to a layout other than the row-major default (PJRT does not record which
    layout a caller expects, and reading one as the other permutes the elements)."""
    if major_to_minor is not None:
      return self._to_numpy_in(major_to_minor)
    self.block_until_ready()
    shape, dtype = self.spec
    nbytes = self.nbytes
    if not nbytes:
      return np.empty(shape, dtype)
    api = self.api
    if self.client.direct_read:
      pa = _new(UnsafePointerArgs, buffer=self.handle)
      api.check(api.Buffer_UnsafePointer(ctypes.byref(pa)))
      if nbytes >= ALIAS_MIN_BYTES:
        view = np.asarray(_HostView(self, pa.buffer_pointer, nbytes))
        return view.view(dtype).reshape(shape)
      return np.frombuffer(ctypes.string_at(pa.buffer_pointer, nbytes), dtype).reshape(shape)
    out = np.empty(shape, dtype)
    ha = _new(ToHostArgs, src=self.handle, host_layout=row_major_layout(len(shape)),
              dst=out.ctypes.data, dst_size=nbytes)
    api.check(api.Buffer_ToHostBuffer(ctypes.byref(ha)))
    api.await_event(ha.event)
    return out

  def _to_numpy_in(self, major_to_minor):
    # the elements in memory order, untiled by PJRT where the device tiles them (a CPU
    # buffer is that already: the CPU plugin ignores the host layout asked for)
    self.block_until_ready()
    shape, dtype = self.spec
    physical = tuple(shape[d] for d in major_to_minor)
    out = np.empty(physical, dtype)
    if out.nbytes:
      ha = _new(ToHostArgs, src=self.handle, host_layout=host_layout(major_to_minor),
                dst=out.ctypes.data, dst_size=out.nbytes)
      self.api.check(self.api.Buffer_ToHostBuffer(ctypes.byref(ha)))
      self.api.await_event(ha.event)
    return np.ascontiguousarray(out.transpose(np.argsort(major_to_minor)))

  def memory_layout(self) -> tuple:
    """The buffer's layout as PJRT reports it: ``(major_to_minor, tiling)``, the tiles
    outermost first (an empty tuple when untiled)."""
    a = _new(GetMemoryLayoutArgs, buffer=self.handle)
    self.api.check(self.api.Buffer_GetMemoryLayout(ctypes.byref(a)))
    tiled = a.layout.layout.tiled
    if a.layout.type != 0:
      raise XlaRuntimeError("PJRT reported a strided layout; jaxlite reads tiled ones.")
    minor_to_major = _int64s(tiled.minor_to_major, tiled.minor_to_major_size)
    sizes = ([] if not tiled.num_tiles else
             list((c_size_t * tiled.num_tiles).from_address(tiled.tile_dim_sizes)))
    dims = _int64s(tiled.tile_dims, sum(sizes))
    tiles, at = [], 0
    for n in sizes:
      tiles.append(tuple(dims[at:at + n]))
      at += n
    return tuple(reversed(minor_to_major)), tuple(tiles)

  def __array__(self, dtype=None, copy=None):
    value = self.to_numpy()
    return value if dtype is None else value.astype(dtype)

  def device_index(self) -> int:
    """The position in its client's ``devices`` of the device holding this buffer."""
    api = self.api
    if api.Buffer_Device is None:
      return 0
    a = _new(BufferDeviceArgs, buffer=self.handle)
    api.check(api.Buffer_Device(ctypes.byref(a)))
    for i, device in enumerate(self.client.devices):
      if device.handle == a.device:
        return i
    return 0

  def copy_to_device(self, index: int = 0) -> "DeviceBuffer":
    """A new buffer of this client's device ``index`` holding this buffer's value, copied
    on the devices (no round trip through the host where the plugin supports it)."""
    api, client = self.api, self.client
    if api.Buffer_CopyToDevice is None:
      return client.put(self.to_numpy(), index)
    a = _new(CopyToDeviceArgs, buffer=self.handle, dst_device=client.devices[index].handle)
    api.check(api.Buffer_CopyToDevice(ctypes.byref(a)))
    b = _new_object(DeviceBuffer)
    b.handle, b.api, b.client, b.spec, b._flight, b._alias = (a.dst_buffer, api, client,
                                                              self.spec, None, None)
    next(_created)
    b._await_ready_event()   # the copy reads this buffer: done before it can be freed
    return b

  def __repr__(self):
    shape, dtype = self.spec
    return f"DeviceBuffer({dtype.name}{list(shape)}, {'ready' if self.ready else 'pending'})"

  def __del__(self):
    try:
      handle = self.handle
    except AttributeError:   # construction failed
      return
    try:
      if handle and not _state["exiting"]:
        self.handle = None
        _destroy_buffer(self.api, handle)
        alias = self._alias
        if alias is not None and alias[1]:
          # the host memory must outlive every execution still reading the buffer
          err = _await_event(self.api, alias[1])
          if err:
            self.api.error(err)   # destroys it
      next(_destroyed)
    except Exception:  # interpreter teardown: the process releases the memory
      pass
