"""``jax.sharding``: meshes, partition specs, shardings, and arrays placed in shards.

A ``NamedSharding(mesh, spec)`` says which mesh axes split which array dimension. The
mesh's devices, in row-major order, are the *logical* devices 0..n-1 of a compiled
program: the HLO sharding strings and device assignments below number them so.

An Array placed by ``device_put(x, sharding)`` (or returned by pmap, shard_map or a
sharded jit) keeps one piece per device of its sharding (a PJRT buffer on that device
when the XLA tier runs, else the NumPy piece) in ``Array._placed``; its global value is
assembled from the pieces when something reads it.
"""
from __future__ import annotations

import collections
import enum
import math
import operator

import numpy as np

from jaxlite._src.core import array as array_mod
from jaxlite._src import backends
from jaxlite._src.core import core
from jaxlite._src.core import prng
from jaxlite._src import tiers
from jaxlite._src.base import tree
from jaxlite._src.core.array import Array
from jaxlite._src.base.partition_spec import PartitionSpec

__all__ = ["Sharding", "Mesh", "AbstractMesh", "AxisType", "get_abstract_mesh", "make_mesh",
           "PartitionSpec", "NamedSharding", "SingleDeviceSharding", "Shard", "place",
           "visualize_array_sharding"]


def _entry_axes(entry) -> tuple:
  if entry is None:
    return ()
  return tuple(entry) if isinstance(entry, (tuple, list)) else (entry,)


class Mesh:
  """An n-dimensional array of devices with named axes (``jax.sharding.Mesh``).

  Parameters
  ----------
  devices : array_like of Device
    The devices, shaped as the mesh.
  axis_names : sequence of str
    One name per axis of ``devices``.
  """

  def __init__(self, devices, axis_names, *, axis_types=None):
    devs = np.array(devices, dtype=object)
    axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
    if len(axis_names) != devs.ndim:
      raise ValueError(f"Mesh requires the ndim of its first argument (`devices`) to equal "
                       f"the length of its second argument (`axis_names`), but got "
                       f"devices.ndim == {devs.ndim} and len(axis_names) == "
                       f"{len(axis_names)}.")
    if len(set(axis_names)) != len(axis_names):
      raise ValueError(f"Mesh axis names must be unique, got {axis_names}.")
    flat = list(devs.flat)
    if len(set(flat)) != len(flat):
      raise ValueError(f"Mesh devices must be distinct, got {flat}.")
    self.devices, self.axis_names = devs, axis_names

  @property
  def shape(self):
    return collections.OrderedDict(zip(self.axis_names, self.devices.shape))

  @property
  def axis_sizes(self) -> tuple:
    return self.devices.shape

  @property
  def size(self) -> int:
    return self.devices.size

  @property
  def device_ids(self):
    return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

  def __eq__(self, other):
    return (isinstance(other, Mesh) and self.axis_names == other.axis_names
            and self.devices.shape == other.devices.shape
            and list(self.devices.flat) == list(other.devices.flat))

  def __hash__(self):
    return hash((self.axis_names, self.devices.shape, tuple(self.devices.flat)))

  # Every axis is an Auto axis (XLA's partitioner decides the layouts in between); JAX's
  # Explicit axes (shardings in the types) are not modelled.
  @property
  def _types(self) -> str:
    return "(" + ", ".join(["Auto"] * len(self.axis_names)) + ("," if len(
        self.axis_names) == 1 else "") + ")"

  def __repr__(self):
    return (f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names}, "
            f"axis_types={self._types})")

  def _short_repr(self):
    return ("Mesh(" + ", ".join(f"{n!r}: {s}" for n, s in self.shape.items())
            + f", axis_types={self._types})")

  def __enter__(self):
    _mesh_stack.append(self)
    return self

  def __exit__(self, *exc):
    _mesh_stack.pop()


_mesh_stack: list = []


class AxisType(enum.Enum):
  """How a mesh axis is partitioned (``jax.sharding.AxisType``)."""
  Auto = enum.auto()
  Explicit = enum.auto()
  Manual = enum.auto()

  def __repr__(self):
    return self.name


class AbstractMesh:
  """A mesh's axis names, sizes and types, without devices (``jax.sharding.AbstractMesh``).

  It is the mesh of the shardings in types: ``jax.typeof(x).sharding.mesh``. The empty
  one, ``AbstractMesh((), ())``, is the mesh of every array outside ``set_mesh``.

  Parameters
  ----------
  axis_sizes : tuple of int
  axis_names : tuple of str
    One name per size.
  axis_types : tuple of AxisType, optional
    One type per axis; Auto for each when None.
  """

  def __init__(self, axis_sizes, axis_names, axis_types=None):
    axis_sizes, axis_names = tuple(axis_sizes), tuple(axis_names)
    axis_types = (AxisType.Auto,) * len(axis_names) if axis_types is None else tuple(
        (axis_types,) if isinstance(axis_types, AxisType) else axis_types)
    if not len(axis_sizes) == len(axis_names) == len(axis_types):
      raise ValueError(f"AbstractMesh needs one size and one type per axis name, got "
                       f"axis_sizes={axis_sizes}, axis_names={axis_names}, "
                       f"axis_types={axis_types}.")
    self.axis_sizes, self.axis_names, self.axis_types = axis_sizes, axis_names, axis_types

  @property
  def shape(self):
    return collections.OrderedDict(zip(self.axis_names, self.axis_sizes))

  @property
  def shape_tuple(self) -> tuple:
    return tuple(zip(self.axis_names, self.axis_sizes))

  @property
  def empty(self) -> bool:
    return not self.axis_names

  @property
  def size(self) -> int:
    return 0 if self.empty else math.prod(self.axis_sizes)   # JAX's: 0 for the empty mesh

  def _axes_of(self, kind) -> tuple:
    return tuple(n for n, t in zip(self.axis_names, self.axis_types) if t == kind)

  # JAX's: an empty mesh's axes are none of the three kinds.
  explicit_axes = property(lambda self: self._axes_of(AxisType.Explicit))
  auto_axes = property(lambda self: self._axes_of(AxisType.Auto))
  manual_axes = property(lambda self: self._axes_of(AxisType.Manual))
  are_all_axes_explicit = property(
      lambda self: not self.empty and len(self.explicit_axes) == len(self.axis_names))
  are_all_axes_auto = property(
      lambda self: not self.empty and len(self.auto_axes) == len(self.axis_names))
  are_all_axes_manual = property(
      lambda self: not self.empty and len(self.manual_axes) == len(self.axis_names))

  @property
  def devices(self):
    raise ValueError("AbstractMesh does not implement devices")

  def __eq__(self, other):
    return isinstance(other, AbstractMesh) and self.shape_tuple == other.shape_tuple and (
        self.axis_types == other.axis_types)

  def __hash__(self):
    return hash((self.shape_tuple, self.axis_types))

  def _short_repr(self):
    if self.empty:
      return "AbstractMesh((), axis_types=())"
    axes = ", ".join(f"{n!r}: {s}" for n, s in self.shape_tuple)
    types = "(" + ", ".join(t.name for t in self.axis_types) + ("," if len(
        self.axis_types) == 1 else "") + ")"
    return f"AbstractMesh({axes}, axis_types={types})"

  __repr__ = _short_repr


_EMPTY_MESH = AbstractMesh((), ())


def get_abstract_mesh() -> AbstractMesh:
  """The abstract mesh in context (``jax.sharding.get_abstract_mesh``): the empty
  ``AbstractMesh((), axis_types=())``, since jaxlite has no ``jax.set_mesh`` (its meshes'
  Auto axes are left out of types, as JAX leaves them)."""
  return _EMPTY_MESH


def broadcast_to_leaves(prefix, treedef, is_leaf, message) -> list:
  """One entry of the prefix tree ``prefix`` per leaf of ``treedef`` (shardings or specs
  given for whole subtrees); ``ValueError(message)`` when it is not a prefix."""
  dummy = tree.tree_unflatten(treedef, [0] * treedef.num_leaves)
  try:
    return tree.broadcast_prefix(prefix, dummy, is_leaf)
  except ValueError:
    raise ValueError(message) from None


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None) -> Mesh:
  """A mesh of ``axis_shapes`` over the first ``prod(axis_shapes)`` devices.

  Parameters
  ----------
  axis_shapes : sequence of int
  axis_names : sequence of str
  axis_types : tuple of AxisType, optional
    Accepted for compatibility; every jaxlite mesh axis behaves as an Auto axis.
  devices : sequence of Device, optional
    Default: ``jax.devices()``; the first ``prod(axis_shapes)`` of them are used.
  """
  try:
    axis_shapes = tuple(operator.index(s) for s in axis_shapes)
  except TypeError:
    raise ValueError("`axis_shapes` passed to `make_mesh` should be a sequence of ints. "
                     f"Got {axis_shapes}") from None
  axis_names = tuple(axis_names)
  devices = list(backends.devices() if devices is None else devices)
  n = math.prod(axis_shapes)
  if n > len(devices):
    raise ValueError(f"Number of devices {len(devices)} must be >= the product of mesh_shape "
                     f"{axis_shapes}. Set jax_num_cpu_devices (or XLA_FLAGS="
                     f"--xla_force_host_platform_device_count={n}) before the first "
                     "computation, or pass devices=.")
  return Mesh(np.array(devices[:n], dtype=object).reshape(axis_shapes), axis_names)


class Sharding:
  """How an array's elements are laid out over devices (``jax.sharding.Sharding``)."""
  memory_kind = "device"

  @property
  def num_devices(self) -> int:
    return len(self.device_set)

  @property
  def addressable_devices(self) -> set:
    return self.device_set

  is_fully_addressable = True

  def shard_shape(self, global_shape) -> tuple:
    index = next(iter(self.devices_indices_map(global_shape).values()))
    return tuple(len(range(*s.indices(d))) for s, d in zip(index, global_shape))

  def addressable_devices_indices_map(self, global_shape):
    return self.devices_indices_map(global_shape)


class SingleDeviceSharding(Sharding):
  """The whole array on one device."""

  def __init__(self, device, *, memory_kind=None):
    self._device = device

  @property
  def device_set(self) -> set:
    return {self._device}

  @property
  def _device_list(self) -> list:
    return [self._device]

  is_fully_replicated = True

  def devices_indices_map(self, global_shape):
    return {self._device: (slice(None),) * len(global_shape)}

  def __eq__(self, other):
    return isinstance(other, SingleDeviceSharding) and other._device == self._device

  def __hash__(self):
    return hash(self._device)

  def __repr__(self):
    return f"SingleDeviceSharding(device={self._device!r}, memory_kind=device)"


class NamedSharding(Sharding):
  """Array dimensions split over the named axes of a mesh (``spec`` says which).

  Parameters
  ----------
  mesh : Mesh
  spec : PartitionSpec
    One entry per leading array dimension: None, a mesh axis name or a tuple of names.
  """

  def __init__(self, mesh, spec=PartitionSpec(), *, memory_kind=None):
    if not isinstance(mesh, (Mesh, AbstractMesh)):
      raise TypeError(f"NamedSharding needs a Mesh or an AbstractMesh, got "
                      f"{type(mesh).__name__}.")
    spec = spec if isinstance(spec, PartitionSpec) else PartitionSpec(*spec)
    used = []
    for entry in spec:
      for axis in _entry_axes(entry):
        if axis not in mesh.shape:
          raise ValueError(f"Resource axis: {axis} of {spec!r} is not found in mesh: "
                           f"{mesh.axis_names}.")
        if axis in used:
          raise ValueError(f"A mesh axis may split one array dimension only: {axis!r} "
                           f"appears twice in {spec!r}.")
        used.append(axis)
    self.mesh, self.spec = mesh, spec

  @property
  def _is_abstract(self) -> bool:
    return isinstance(self.mesh, AbstractMesh)

  @property
  def device_set(self) -> set:
    if self._is_abstract:
      raise ValueError("device_set is not implemented for `jax.sharding.AbstractMesh`.")
    return set(self.mesh.devices.flat)

  @property
  def num_devices(self) -> int:
    return self.mesh.size

  @property
  def memory_kind(self):
    return None if self._is_abstract else "device"

  @property
  def _device_list(self) -> list:
    return list(self.mesh.devices.flat)

  @property
  def is_fully_replicated(self) -> bool:
    return all(self.mesh.shape[a] == 1 for e in self.spec for a in _entry_axes(e))

  def _dim_axes(self, ndim) -> list:
    if len(self.spec) > ndim:
      raise ValueError(f"One of device_put args was given the sharding of {self!r}, which "
                       f"implies that the global size of its dimension {len(self.spec) - 1} "
                       f"should be divisible by its mesh axes, but the array has only "
                       f"{ndim} dimensions.")
    return [_entry_axes(e) for e in self.spec] + [()] * (ndim - len(self.spec))

  def check_shape(self, global_shape):
    """Raise ValueError unless every split dimension divides evenly."""
    for d, axes in enumerate(self._dim_axes(len(global_shape))):
      parts = math.prod(self.mesh.shape[a] for a in axes)
      if global_shape[d] % parts:
        raise ValueError(f"Sharding spec {tuple(self.spec)} implies that array axis {d} is "
                         f"partitioned {parts} times, but does not evenly divide the "
                         f"dimension size {global_shape[d]}. Got shape: "
                         f"{tuple(global_shape)} and sharding {self!r}")

  def shard_shape(self, global_shape) -> tuple:
    """Each device's piece's shape; from the mesh's axis sizes, so abstract meshes too."""
    self.check_shape(global_shape)
    return tuple(n // math.prod(self.mesh.shape[a] for a in axes)
                 for n, axes in zip(global_shape, self._dim_axes(len(global_shape))))

  def devices_indices_map(self, global_shape):
    global_shape = tuple(global_shape)
    self.check_shape(global_shape)
    dim_axes = self._dim_axes(len(global_shape))
    mesh_shape = self.mesh.shape
    out = {}
    for pos in np.ndindex(self.mesh.devices.shape):
      coords = dict(zip(self.mesh.axis_names, pos))
      index = []
      for d, axes in enumerate(dim_axes):
        if not axes:
          index.append(slice(None))
          continue
        k = 0
        for a in axes:   # the first axis named is the major one
          k = k * mesh_shape[a] + coords[a]
        chunk = global_shape[d] // math.prod(mesh_shape[a] for a in axes)
        index.append(slice(k * chunk, (k + 1) * chunk))
      out[self.mesh.devices[pos]] = tuple(index)
    return out

  def hlo_sharding(self, ndim) -> str:
    """The ``mhlo.sharding`` string, logical devices numbered in mesh order."""
    dim_axes = self._dim_axes(ndim)
    names = self.mesh.axis_names
    tiles = [math.prod(self.mesh.shape[a] for a in axes) for axes in dim_axes]
    if all(t == 1 for t in tiles):
      return "{replicated}"
    order = [names.index(a) for axes in dim_axes for a in axes]
    rest = [i for i in range(len(names)) if i not in order]
    ids = np.arange(self.mesh.size).reshape(self.mesh.devices.shape).transpose(order + rest)
    replicate = math.prod(self.mesh.devices.shape[i] for i in rest)
    dims = tiles + ([replicate] if replicate > 1 else [])
    suffix = " last_tile_dim_replicate" if replicate > 1 else ""
    return (f"{{devices=[{','.join(map(str, dims))}]"
            f"{','.join(map(str, ids.reshape(-1)))}{suffix}}}")

  def __eq__(self, other):
    return (isinstance(other, NamedSharding) and self.mesh == other.mesh
            and _normalized(self.spec) == _normalized(other.spec))

  def __hash__(self):
    return hash((self.mesh, _normalized(self.spec)))

  def __repr__(self):
    memory = "" if self.memory_kind is None else f", memory_kind={self.memory_kind}"
    return f"NamedSharding(mesh={self.mesh._short_repr()}, spec={self.spec!r}{memory})"


def _normalized(spec) -> tuple:
  parts = [_entry_axes(e) for e in spec]
  while parts and not parts[-1]:
    parts.pop()
  return tuple(parts)


class Shard:
  """One device's piece of an array (``Array.addressable_shards``)."""

  def __init__(self, device, index, replica_id, data):
    self.device, self.index, self.replica_id, self.data = device, index, replica_id, data

  def __repr__(self):
    return (f"Shard(device={self.device!r}, index={self.index}, "
            f"replica_id={self.replica_id}, data={self.data})")


# ----------------------------------------------------------------------------- placement

class Placed:
  """The pieces of a placed array, one per device of ``sharding._device_list``: PJRT
  buffers on those devices (XLA tier) or NumPy arrays (tier 0)."""
  __slots__ = ("sharding", "pieces", "shape", "dtype")

  def __init__(self, sharding, pieces, shape, dtype):
    self.sharding, self.pieces = sharding, list(pieces)
    self.shape, self.dtype = tuple(shape), np.dtype(dtype)

  def piece_value(self, i) -> np.ndarray:
    p = self.pieces[i]
    return p if isinstance(p, np.ndarray) else p.to_numpy()

  def assemble(self) -> np.ndarray:
    out = np.empty(self.shape, self.dtype)
    indices = self.sharding.devices_indices_map(self.shape)
    done = set()
    for i, device in enumerate(self.sharding._device_list):
      index = indices[device]
      key = tuple((s.start, s.stop) for s in index)
      if key not in done:
        done.add(key)
        out[index] = self.piece_value(i)
    return out if out.shape else out[()]


def _device_index(device) -> int:
  """The position of ``device`` in the XLA client's device list (its id on CPU)."""
  return device.id


def put_pieces(values, devices) -> list:
  """``values[i]`` on ``devices[i]``: PJRT buffers of a device's platform (on the host,
  when the XLA tier runs), else NumPy."""
  # np.asarray(order="C"), not np.ascontiguousarray, which makes a rank-0 piece rank 1
  if all(d.client.resident for d in devices):
    return [d.client.put(np.asarray(v, order="C"), d) for v, d in zip(values, devices)]
  if not tiers.xla_available():
    return [np.asarray(v, order="C") for v in values]
  from jaxlite._src.backends import xla
  client = xla.client()
  return [client.put(np.asarray(v, order="C"), _device_index(d))
          for v, d in zip(values, devices)]


def from_pieces(sharding, pieces, shape, dtype, weak_type=False, value=None) -> Array:
  """An Array made of ``pieces`` laid out by ``sharding``; ``value``: the whole value,
  when known already (else assembled from the pieces when first read). One piece on a
  device is also the Array's buffer, which its eager ops and jitted calls use there."""
  a = object.__new__(Array)
  a._host = None   # committed or split: not a plain host array (see Array)
  if value is not None:
    a._fetched = value
  a.weak_type = weak_type
  a._buf = None
  a._placed = Placed(sharding, pieces, shape, dtype)
  if len(pieces) == 1 and not isinstance(pieces[0], np.ndarray) and (
      sharding._device_list[0].client.resident):
    a._buf = pieces[0]
  return a


def place(x, sharding) -> Array:
  """``x`` (an Array, NumPy value or scalar) split into the shards ``sharding`` says."""
  x = array_mod.as_operand(x)
  if type(x) is prng.PRNGKeyArray:   # its data is placed (the sharding names the keys' axes)
    return prng.PRNGKeyArray(x._impl, place(x._base_array, sharding))
  if not isinstance(x, Array):
    raise TypeError(f"device_put with a sharding takes concrete arrays, got {x!r}.")
  if x._placed is not None and x._placed.sharding == sharding:
    return x
  if isinstance(sharding, backends.Device):
    sharding = SingleDeviceSharding(sharding)
  if not isinstance(sharding, Sharding):
    raise TypeError(f"device_put: expected a Device or a Sharding, got {sharding!r}.")
  devices = sharding._device_list
  buf = x._buf
  if (len(devices) == 1 and buf is not None and devices[0].client.resident
      and buf.__class__ is not array_mod._Deleted
      and buf.client is devices[0].client.pjrt_client()):   # copied on the device
    pieces = [buf.copy_to_device(devices[0].client.devices().index(devices[0]))]
    return from_pieces(sharding, pieces, x.shape, x.dtype, x.weak_type)
  value = np.asarray(x._value)
  indices = sharding.devices_indices_map(value.shape)
  pieces = put_pieces([value[indices[d]] for d in devices], devices)
  return from_pieces(sharding, pieces, value.shape, value.dtype, x.weak_type)


def shards_of(x: Array) -> list:
  """``x.addressable_shards``."""
  placed = x._placed
  if placed is None:
    device = backends.default_device()
    return [Shard(device, (slice(None),) * x.ndim, 0, x)]
  indices = placed.sharding.devices_indices_map(placed.shape)
  seen = collections.Counter()
  out = []
  for i, device in enumerate(placed.sharding._device_list):
    index = indices[device]
    key = tuple((s.start, s.stop) for s in index)
    value = placed.piece_value(i)
    out.append(Shard(device, index, seen[key], Array(value if value.shape else value[()],
                                                     x.weak_type)))
    seen[key] += 1
  return out


def sharding_of(x: Array) -> Sharding:
  placed = x._placed
  return SingleDeviceSharding(backends.default_device()) if placed is None else placed.sharding


def commit(x: Array, device) -> Array:
  """``x``, computed on ``device``, as an Array committed to it."""
  buf = x._buf
  if buf is not None and (device.client.resident or x._host is None):
    return from_pieces(SingleDeviceSharding(device), [buf], x.shape, x.dtype, x.weak_type)
  value = x._value
  return from_pieces(SingleDeviceSharding(device), [value], x.shape, x.dtype, x.weak_type,
                     value)


array_mod.placement.update(assemble=Placed.assemble, sharding=sharding_of, shards=shards_of,
                           commit=commit)


def aval_sharding(aval) -> NamedSharding:
  """``jax.typeof(x).sharding``: no dimension split, over the empty abstract mesh.

  jaxlite's meshes have Auto axes only, which JAX leaves out of types, so every aval's
  sharding is this one (JAX names the array's own mesh when it lives on one).
  """
  return NamedSharding(_EMPTY_MESH, PartitionSpec(*[None] * aval.ndim))


core.aval_rules["sharding"] = aval_sharding


def visualize_array_sharding(arr, *, use_color=False, scale=1.0, min_width=9, max_width=80):
  """Print which devices hold which block of a 1-D or 2-D array, as a text grid."""
  shape = tuple(arr.shape)
  if len(shape) not in (1, 2):
    raise ValueError(f"visualize_array_sharding can only visualize 1-D or 2-D arrays, got "
                     f"an array of shape {shape}.")
  sharding = sharding_of(arr)
  shape2 = shape if len(shape) == 2 else (1,) + shape
  blocks: dict = {}
  for device, index in sharding.devices_indices_map(shape).items():
    index = index if len(shape) == 2 else (slice(None),) + tuple(index)
    key = tuple(s.indices(n)[:2] for s, n in zip(index, shape2))
    blocks.setdefault(key, []).append(device.id)
  rows = sorted({k[0] for k in blocks})
  cols = sorted({k[1] for k in blocks})
  platform = next(iter(sharding.device_set)).platform.upper()
  labels = {k: f"{platform} {','.join(map(str, sorted(v)))}" for k, v in blocks.items()}
  width = max(min_width, max(len(s) for s in labels.values()) + 2)
  line = "+" + "+".join("-" * width for _ in cols) + "+"
  out = [line]
  for r in rows:
    out.append("|" + "|".join(labels[(r, c)].center(width) for c in cols) + "|")
    out.append(line)
  print("\n".join(out))


def _from_device_values(what, shape, sharding, values) -> Array:
  """An Array of ``shape`` whose piece on the i-th device of ``sharding`` is values[i]."""
  devices = sharding._device_list
  if len(values) != len(devices):
    raise ValueError(f"{what}: got {len(values)} arrays for {len(devices)} devices.")
  want = sharding.shard_shape(shape)
  for d, v in zip(devices, values):
    if v.shape != want:
      raise ValueError(f"{what}: got shape {v.shape} for {d}, expected the shard shape "
                       f"{want} of {shape} under {sharding!r}.")
  return from_pieces(sharding, put_pieces(values, devices), shape, values[0].dtype)


def make_array_from_callback(shape, sharding, data_callback, dtype=None) -> Array:
  """An Array of ``shape`` laid out by ``sharding`` whose piece on each device is
  ``data_callback(index)`` (``index``: a tuple of slices into the global array)."""
  shape = tuple(shape)
  indices = sharding.devices_indices_map(shape)
  values = [np.asarray(data_callback(indices[d]), dtype) for d in sharding._device_list]
  return _from_device_values("make_array_from_callback", shape, sharding, values)


def make_array_from_single_device_arrays(shape, sharding, arrays, *, dtype=None) -> Array:
  """An Array of ``shape`` laid out by ``sharding`` from one array per device (in the
  order of the sharding's devices)."""
  values = [np.asarray(a, dtype) for a in arrays]
  return _from_device_values("make_array_from_single_device_arrays", tuple(shape),
                             sharding, values)
