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
import contextlib
import enum
import functools
import math
import operator
import weakref

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.base.config import config
from jaxlite._src.core import array as array_mod
from jaxlite._src import backends
from jaxlite._src.core import core
from jaxlite._src.core import extended
from jaxlite._src import tiers
from jaxlite._src.base import layout as layout_mod
from jaxlite._src import relayout as relayout_mod
from jaxlite._src.base import mesh_context
from jaxlite._src.lax import sharding_constraint
from jaxlite._src.lax import sharding_rules  # noqa: F401 (sharding in types)
from jaxlite._src.base import tree
from jaxlite._src.core.array import Array
from jaxlite._src.base.partition_spec import PartitionSpec

__all__ = ["Sharding", "Mesh", "AbstractMesh", "AbstractDevice", "AxisType", "set_mesh",
           "get_mesh", "get_abstract_mesh", "use_abstract_mesh", "reshard", "make_mesh",
           "PartitionSpec", "NamedSharding", "SingleDeviceSharding", "Shard", "place",
           "visualize_array_sharding", "visualize_sharding", "inspect_array_sharding", "make_single_device_sharding",
           "ManualAxisType", "explicit_axes"]


def _entry_axes(entry) -> tuple:
  if entry is None or entry is PartitionSpec.UNCONSTRAINED:
    return ()
  return tuple(entry) if isinstance(entry, (tuple, list)) else (entry,)


class AxisType(enum.Enum):
  """How a mesh axis is partitioned (``jax.sharding.AxisType``)."""
  Auto = enum.auto()
  Explicit = enum.auto()
  Manual = enum.auto()

  def __repr__(self):
    return self.name


def _axis_types(axis_names, axis_types, name) -> tuple:
  """One AxisType per axis name (Auto for each when None), checked as JAX checks them."""
  axis_types = (AxisType.Auto,) * len(axis_names) if axis_types is None else axis_types
  if not isinstance(axis_types, tuple):
    axis_types = (axis_types,)
  if not all(isinstance(a, AxisType) for a in axis_types):
    raise TypeError(f"axis_types passed to {name} must be of type "
                    f"`jax.sharding.AxisType`. Got {axis_types} of type "
                    f"{tuple(type(a) for a in axis_types)}")
  if len(axis_types) != len(axis_names):
    raise ValueError(f"Number of axis names should match the number of axis_types. Got "
                     f"axis_names={axis_names} and axis_types={axis_types}")
  return axis_types


class _MeshAxes:
  """The axis-type queries that Mesh and AbstractMesh share (JAX's ``BaseMesh``); an
  empty mesh's axes are none of the three kinds, as in JAX."""

  def _axes_of(self, kind) -> tuple:
    return tuple(n for n, t in zip(self.axis_names, self.axis_types) if t == kind)

  explicit_axes = property(lambda self: self._axes_of(AxisType.Explicit))
  auto_axes = property(lambda self: self._axes_of(AxisType.Auto))
  manual_axes = property(lambda self: self._axes_of(AxisType.Manual))
  are_all_axes_explicit = property(
      lambda self: not self.empty and len(self.explicit_axes) == len(self.axis_names))
  are_all_axes_auto = property(
      lambda self: not self.empty and len(self.auto_axes) == len(self.axis_names))
  are_all_axes_manual = property(
      lambda self: not self.empty and len(self.manual_axes) == len(self.axis_names))
  _any_axis_manual = property(lambda self: bool(self.manual_axes))
  _any_axis_explicit = property(lambda self: bool(self.explicit_axes))
  _any_axis_auto = property(lambda self: bool(self.auto_axes))

  @property
  def _name_to_type(self) -> dict:
    return dict(zip(self.axis_names, self.axis_types))

  def _types_repr(self) -> str:
    return "(" + ", ".join(t.name for t in self.axis_types) + ("," if len(
        self.axis_types) == 1 else "") + ")"


class Mesh(_MeshAxes):
  """An n-dimensional array of devices with named axes (``jax.sharding.Mesh``).

  Parameters
  ----------
  devices : array_like of Device
    The devices, shaped as the mesh.
  axis_names : sequence of str
    One name per axis of ``devices``.
  axis_types : AxisType or tuple of AxisType, optional
    One per axis; Auto for each when None. A split over Explicit axes is part of an
    array's type (``float32[8@X,4]``; ``lax/sharding_rules.py``), as in JAX; Auto axes
    are laid out as XLA's partitioner decides.
  """

  def __init__(self, devices, axis_names, axis_types=None):
    devs = np.array(devices, dtype=object)
    axis_names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
    if len(axis_names) != devs.ndim:
      raise ValueError(f"Mesh requires the ndim of its first argument (`devices`) to equal "
                       f"the length of its second argument (`axis_names`), but got "
                       f"devices.ndim == {devs.ndim} and len(axis_names) == "
                       f"{len(axis_names)}.")
    if len(set(axis_names)) != len(axis_names):
      raise ValueError(f"Mesh axis names must be unique, got {axis_names}.")
    flat = list(devs.flat) if devs.ndim else []
    if len(set(flat)) != len(flat):
      raise ValueError(f"Mesh devices must be distinct, got {flat}.")
    self.devices, self.axis_names = devs, axis_names
    self.axis_types = _axis_types(axis_names, axis_types, "Mesh")
    if devs.size > 1:
      mesh_context.several_devices = True

  def __setstate__(self, state):   # (an unpickled mesh is made too)
    self.__dict__.update(state)
    if self.devices.size > 1:
      mesh_context.several_devices = True

  @property
  def shape(self):
    return collections.OrderedDict(zip(self.axis_names, self.devices.shape))

  @property
  def shape_tuple(self) -> tuple:
    return tuple(self.shape.items())

  @property
  def axis_sizes(self) -> tuple:
    return self.devices.shape

  @property
  def empty(self) -> bool:
    """Whether this is the mesh of no axes (``get_mesh()`` outside ``set_mesh``)."""
    return self.devices.ndim == 0

  @property
  def size(self) -> int:
    return 0 if self.empty else self.devices.size

  @property
  def device_ids(self):
    return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

  @property
  def abstract_mesh(self) -> "AbstractMesh":
    """The axis names, sizes and types, and the devices' kind (``Mesh.abstract_mesh``)."""
    if self.empty:
      return _EMPTY_MESH
    d = self.devices.flat[0]
    return AbstractMesh(self.axis_sizes, self.axis_names, self.axis_types,
                        abstract_device=AbstractDevice(d.device_kind, None, d.platform))

  def __eq__(self, other):
    return (isinstance(other, Mesh) and self.axis_names == other.axis_names
            and self.devices.shape == other.devices.shape
            and self.axis_types == other.axis_types
            and list(self.devices.flat) == list(other.devices.flat))

  def __hash__(self):
    return hash((self.axis_names, self.devices.shape, tuple(self.devices.flat),
                 self.axis_types))

  def __repr__(self):
    if self.empty:
      return "Mesh(axis_sizes=(), axis_names=())"
    return (f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names}, "
            f"axis_types={self._types_repr()})")

  def __str__(self):
    return "Mesh()" if self.empty else self._short_repr()

  def _short_repr(self):
    return ("Mesh(" + ", ".join(f"{n!r}: {s}" for n, s in self.shape.items())
            + f", axis_types={self._types_repr()})")

  def __enter__(self):
    _mesh_stack.append(self)
    return self

  def __exit__(self, *exc):
    _mesh_stack.pop()


_mesh_stack: list = []


class AbstractDevice:
  """The kind of a mesh's devices, which its abstract mesh keeps
  (``jax.sharding.AbstractDevice``)."""

  def __init__(self, device_kind, num_cores, platform):
    self.device_kind, self.num_cores, self.platform = device_kind, num_cores, platform

  def _key(self):
    return (self.device_kind, self.num_cores, self.platform)

  def __eq__(self, other):
    return isinstance(other, AbstractDevice) and self._key() == other._key()

  def __hash__(self):
    return hash(self._key())

  def _repr(self):
    return (f"device_kind={self.device_kind}, num_cores={self.num_cores}, "
            f"platform={self.platform}")

  def __repr__(self):
    return f"AbstractDevice({self._repr()})"


class AbstractMesh(_MeshAxes):
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
  abstract_device : AbstractDevice, optional
    The kind of the devices (a concrete mesh's abstract mesh names it).
  """

  def __init__(self, axis_sizes, axis_names, axis_types=None, *, abstract_device=None):
    axis_sizes, axis_names = tuple(axis_sizes), tuple(axis_names)
    if len(axis_sizes) != len(axis_names):
      raise ValueError(f"AbstractMesh needs one size per axis name, got "
                       f"axis_sizes={axis_sizes}, axis_names={axis_names}.")
    self.axis_sizes, self.axis_names = axis_sizes, axis_names
    self.axis_types = _axis_types(axis_names, axis_types, "AbstractMesh")
    self.abstract_device = abstract_device

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

  @property
  def abstract_mesh(self) -> "AbstractMesh":
    return self

  @property
  def devices(self):
    raise ValueError("AbstractMesh does not implement devices")

  def update(self, axis_sizes=None, axis_names=None, axis_types=None, **kwargs):
    """A copy with the given fields replaced (``AbstractMesh.update``)."""
    return AbstractMesh(self.axis_sizes if axis_sizes is None else axis_sizes,
                        self.axis_names if axis_names is None else axis_names,
                        self.axis_types if axis_types is None else axis_types,
                        abstract_device=kwargs.get("abstract_device", self.abstract_device))

  def _key(self):
    return (self.shape_tuple, self.axis_types, self.abstract_device)

  def __eq__(self, other):
    return isinstance(other, AbstractMesh) and self._key() == other._key()

  def __hash__(self):
    return hash(self._key())

  def _short_repr(self):
    axes = ", ".join(f"{n!r}: {s}" for n, s in self.shape_tuple) or "()"
    types = "()" if self.empty else self._types_repr()
    device = "" if self.abstract_device is None else f", {self.abstract_device._repr()}"
    return f"AbstractMesh({axes}, axis_types={types}{device})"

  __repr__ = _short_repr


_EMPTY_MESH = AbstractMesh((), ())


# ----------------------------------------------------------------------------- the mesh in context

def _outside_traces(what: str, hint: str = ""):
  if core.current_trace() is not core.eval_trace:
    raise ValueError(f"`{what}` can only be used outside of `jax.jit`.{hint}")


class set_mesh:
  """Put ``mesh`` in context, for this thread (``jax.set_mesh``): a global setter, or a
  context manager that restores the previous mesh on exit.

  In context, APIs that take a sharding take a bare ``PartitionSpec`` (it names axes of
  this mesh: ``jax.device_put``, ``jit``'s ``in_shardings``/``out_shardings``,
  ``lax.with_sharding_constraint``, ``jax.sharding.reshard``), ``shard_map`` needs no
  ``mesh=``, and ``jax.sharding.get_abstract_mesh()`` (also inside ``jit``) and
  ``get_mesh()`` return it. As in JAX, what eager operations compute in context is laid out
  over the mesh (``MeshPlacedBackend``): split as its type says, replicated elsewhere.

  Parameters
  ----------
  mesh : Mesh or None
    None takes the mesh out of context.
  """
  __slots__ = ("prev",)

  def __init__(self, mesh):
    if mesh is not None and not isinstance(mesh, Mesh):
      raise ValueError(f"Expected mesh of type `jax.sharding.Mesh`. Got {type(mesh)}")
    _outside_traces("set_mesh")
    if mesh is not None and mesh._any_axis_manual:
      raise ValueError(f"mesh {mesh} contains manual axes which is not allowed when using "
                       "`jax.set_mesh`. Please use `jax.shard_map` to enter into `Manual` "
                       "mode instead.")
    empty = mesh is None or mesh.empty
    self.prev = mesh_context.swap(None if empty else mesh,
                                  None if empty else mesh.abstract_mesh)

  def __enter__(self):
    return None

  def __exit__(self, *exc):
    mesh_context.swap(*self.prev)


_EMPTY_CONCRETE_MESH = Mesh(np.empty((), dtype=object), ())


def get_mesh() -> Mesh:
  """The mesh that ``jax.set_mesh`` put in context (``jax.sharding.get_mesh``), or the
  empty ``Mesh()``; outside ``jit`` only, as in JAX."""
  _outside_traces("get_mesh", " Maybe you want `jax.sharding.get_abstract_mesh()`?")
  mesh = mesh_context.context.concrete
  return _EMPTY_CONCRETE_MESH if mesh is None else mesh


def get_abstract_mesh() -> AbstractMesh:
  """The abstract mesh in context (``jax.sharding.get_abstract_mesh``): that of the mesh
  ``jax.set_mesh`` set, or of ``use_abstract_mesh``, else the empty
  ``AbstractMesh((), axis_types=())``."""
  mesh = mesh_context.context.abstract
  return _EMPTY_MESH if mesh is None else mesh


@contextlib.contextmanager
def use_abstract_mesh(mesh: AbstractMesh):
  """Put only an abstract mesh in context (``jax.sharding.use_abstract_mesh``): tracing
  sees its axes, and no concrete mesh is in context."""
  if not isinstance(mesh, AbstractMesh):
    raise ValueError(f"Expected mesh of type `jax.sharding.AbstractMesh`. Got {type(mesh)}")
  prev = mesh_context.swap(None, None if mesh.empty else mesh)
  try:
    yield
  finally:
    mesh_context.swap(*prev)


def context_sharding(sharding, missing):
  """``sharding`` as the mesh in context completes it: a PartitionSpec names axes of
  that mesh, and a NamedSharding over its abstract mesh is laid out over its devices.
  ``missing()`` is the exception to raise for a PartitionSpec with no mesh in context
  (each API raises JAX's own). Anything else is returned as it is."""
  if isinstance(sharding, PartitionSpec):
    mesh = mesh_context.context.concrete or mesh_context.context.abstract
    if mesh is None:
      raise missing()
    return NamedSharding(mesh, sharding)
  concrete = mesh_context.context.concrete
  if (isinstance(sharding, NamedSharding) and sharding._is_abstract and concrete is not None
      and concrete.abstract_mesh.shape_tuple == sharding.mesh.shape_tuple):
    return NamedSharding(concrete, sharding.spec, memory_kind=sharding.memory_kind)
  return sharding


def _no_mesh_for(api: str, argument: str):
  return lambda: RuntimeError(
      f"{api} requires a non-empty mesh in context if you are passing `PartitionSpec`s to "
      f"{argument}. You can define a context mesh via `jax.set_mesh(mesh)`. Alternatively, "
      f"provide `Sharding`s to {argument} and then the mesh context manager is not "
      "required.")


def _spec_needs_mesh(spec):
  return lambda: ValueError(
      "Using PartitionSpec when you are not under a mesh context is not allowed. Please "
      "pass a NamedSharding instance or enter into a mesh context via `jax.set_mesh`. "
      f"Got {spec}")


def check_explicit(sharding, api: str):
  """Raise JAX's ValueError where ``sharding``'s spec names a mesh axis that is not
  Explicit (what ``reshard`` and the ``out_sharding`` arguments lay out)."""
  refuse_unreduced(sharding, api)
  types = sharding.mesh._name_to_type
  for entry in sharding.spec.partitions:
    for axis in _entry_axes(entry):
      if types[axis] != AxisType.Explicit:
        raise ValueError(f"PartitionSpec passed to {api} cannot contain axis names that "
                         f"are of type Auto or Manual. Got PartitionSpec: {sharding.spec} "
                         f"with axis name: {axis} of type: AxisType.{types[axis].name}.")


def _asserted_by_type(x, sharding) -> bool:
  """JAX's checks of a user's ``with_sharding_constraint``: under a mesh in context whose
  axes are all Explicit it asserts that ``x``'s type is split as ``sharding`` says (True:
  nothing is left to lay out); elsewhere ``sharding`` may name Auto axes only."""
  if not isinstance(sharding, NamedSharding):
    return False
  context = mesh_context.context.abstract
  if context is not None and context.axis_names and context.are_all_axes_explicit:
    ndim = core.get_aval(x).ndim
    have = PartitionSpec(*(getattr(core.get_aval(x), "spec", None) or (None,) * ndim))
    asked = PartitionSpec(*explicit_layout(sharding, ndim))
    if any(a != b and b is not PartitionSpec.UNCONSTRAINED for a, b in zip(have, asked)):
      raise AssertionError(
          "`with_sharding_constraint` acts as an assert when all axes of mesh are of type "
          f"`Explicit`. The array sharding: {have} did not match the sharding provided: "
          f"{asked}. Please use `jax.sharding.reshard` to shard your input to the sharding "
          "you want.")
    return True
  types = sharding.mesh._name_to_type
  if any(types[a] != AxisType.Auto for e in sharding.spec.partitions for a in _entry_axes(e)):
    raise ValueError(
        "The spec of NamedSharding passed to with_sharding_constraint can only refer to "
        f"Auto axes of the mesh. Got spec={sharding.spec} and "
        f"mesh={sharding.mesh.abstract_mesh}. You probably meant to use `reshard` API?")
  return False


def explicit_layout(sharding, ndim: int) -> tuple:
  """``sharding``'s spec as a type has it: one entry per dimension, None where unsplit."""
  return explicit_spec(sharding, ndim) or (None,) * ndim


def reshard(xs, out_shardings):
  """``xs`` (a pytree of arrays) laid out as ``out_shardings`` says, over Explicit mesh
  axes (``jax.sharding.reshard``): concrete arrays are placed so (``jax.device_put``),
  traced ones get the layout asked of XLA's partitioner.

  Parameters
  ----------
  xs : pytree of arrays
  out_shardings : NamedSharding, PartitionSpec or a pytree prefix of ``xs`` of them
    A PartitionSpec names axes of the mesh in context (``jax.set_mesh``).
  """
  leaves, treedef = tree.tree_flatten(xs)
  is_leaf = lambda s: isinstance(s, (Sharding, PartitionSpec))
  shardings = broadcast_to_leaves(out_shardings, treedef, is_leaf, lambda: (
      f"reshard out_shardings must be a sharding or a tree prefix of the arrays: "
      f"{out_shardings!r} does not match {treedef}."))
  outs = []
  for x, sharding in zip(leaves, shardings):
    sharding = context_sharding(sharding, _spec_needs_mesh(sharding))
    if not isinstance(sharding, NamedSharding):
      raise TypeError(f"reshard only accepts `NamedSharding` or `PartitionSpec`. Got "
                      f"{sharding!r} of type {type(sharding)}")
    check_explicit(sharding, "reshard")
    outs.append(sharding_constraint.constrain(x, sharding))
  return tree.tree_unflatten(treedef, outs)


def auto_axes(f=None, /, *, axes=None, out_sharding=None):
  """``f`` run with the mesh axes ``axes`` (all the mesh's when None) made Auto: its
  arguments' types drop their splits over them, and its result is laid out as
  ``out_sharding`` says (``jax.sharding.auto_axes``), over the mesh in context.

  Parameters
  ----------
  f : callable, optional
    Without it, a decorator.
  axes : str or tuple of str, optional
  out_sharding : NamedSharding, PartitionSpec or pytree of them
    Given here or as the ``out_sharding`` keyword argument of each call.
  """
  if f is None:
    return lambda g: auto_axes(g, axes=axes, out_sharding=out_sharding)

  @functools.wraps(f)
  def wrapped(*args, **kwargs):
    given = _given_or_keyword(out_sharding, kwargs, "out_sharding")
    mesh = mesh_context.context.concrete
    if mesh is None and isinstance(given, NamedSharding) and isinstance(given.mesh, Mesh):
      mesh = given.mesh
    if mesh is None or set(_axis_names(mesh, axes)) <= set(mesh.auto_axes):
      return f(*args, **kwargs)
    with _axes_of_type(mesh, axes, AxisType.Auto) as auto:
      args, kwargs = tree.tree_map(lambda x: _laid_out_on(x, auto), (args, kwargs))
      out = f(*args, **kwargs)
    return reshard(out, given)
  return wrapped


def _given_or_keyword(given, kwargs, name):
  """``given``, else the call's keyword argument ``name`` (taken out of ``kwargs``), which
  is then required."""
  if given is not None:
    return given
  if name not in kwargs:
    raise TypeError(f"Missing required keyword argument: '{name}'")
  return kwargs.pop(name)


def _axis_names(mesh, axes) -> tuple:
  """The mesh axes ``axes`` names: one name, several, or all of ``mesh``'s (None)."""
  return mesh.axis_names if axes is None else (axes,) if isinstance(axes, str) else axes


@contextlib.contextmanager
def _axes_of_type(mesh, axes, kind):
  """In context for the block: ``mesh`` with the axes ``axes`` names made of type
  ``kind`` (an AxisType); yields that mesh."""
  names = _axis_names(mesh, axes)
  retyped = Mesh(mesh.devices, mesh.axis_names, axis_types=tuple(
      kind if n in names else t for n, t in zip(mesh.axis_names, mesh.axis_types)))
  prev = mesh_context.swap(retyped, retyped.abstract_mesh)
  try:
    yield retyped
  finally:
    mesh_context.swap(*prev)


def explicit_axes(f=None, /, *, axes=None, in_sharding=None):
  """``f`` run with the mesh axes ``axes`` (all the mesh's when None) made Explicit: its
  arguments are first laid out as ``in_sharding`` says, and its results leave with their
  splits over those axes dropped from their types (``jax.sharding.explicit_axes``, the
  inverse of ``auto_axes``).

  Parameters
  ----------
  f : callable, optional
    Without it, a decorator.
  axes : str or tuple of str, optional
  in_sharding : NamedSharding, PartitionSpec or pytree of them
    Given here or as the ``in_sharding`` keyword argument of each call.
  """
  if f is None:
    return lambda g: explicit_axes(g, axes=axes, in_sharding=in_sharding)

  @functools.wraps(f)
  def wrapped(*args, **kwargs):
    given = _given_or_keyword(in_sharding, kwargs, "in_sharding")
    mesh = mesh_context.context.concrete
    if mesh is None:
      raise ValueError("Context mesh cannot be empty. Please use `jax.set_mesh` API to enter "
                       "into a mesh context when using `explicit_axes` API.")
    with _axes_of_type(mesh, axes, AxisType.Explicit):
      out = f(*reshard(args, given), **kwargs)
    return tree.tree_map(lambda x: _laid_out_on(x, mesh), out)
  return wrapped


def _laid_out_on(x, mesh):
  """``x`` laid out over ``mesh`` as its type's split says (which names no Auto axis)."""
  if not isinstance(x, (Array, core.Tracer)):
    return x
  kept = set(mesh.explicit_axes)   # (splits over other axes are not part of a type)
  spec = [_only_axes(e, kept) for e in core.get_aval(x).spec or ()]
  return sharding_constraint.constrain(
      x, NamedSharding(mesh, PartitionSpec(*spec)))


def _only_axes(entry, kept):
  """A spec entry with the mesh axes not in ``kept`` left out."""
  names = tuple(n for n in ((entry,) if isinstance(entry, str) else entry or ()) if n in kept)
  return None if not names else names[0] if len(names) == 1 else names


def broadcast_to_leaves(prefix, treedef, is_leaf, message) -> list:
  """One entry of the prefix tree ``prefix`` per leaf of ``treedef`` (shardings or specs
  given for whole subtrees); ``ValueError(message())`` when it is not a prefix (made only
  then: a repr of the user's tree may be costly, or raise)."""
  dummy = tree.tree_unflatten(treedef, [0] * treedef.num_leaves)
  try:
    return tree.broadcast_prefix(prefix, dummy, is_leaf)
  except ValueError:
    raise ValueError(message()) from None


def make_mesh(axis_shapes, axis_names, axis_types=None, *, devices=None) -> Mesh:
  """A mesh of ``axis_shapes`` over the first ``prod(axis_shapes)`` devices.

  Parameters
  ----------
  axis_shapes : sequence of int
  axis_names : sequence of str
  axis_types : tuple of AxisType, optional
    Explicit for each axis when None, as in JAX 0.10.2: an array laid out over the mesh
    carries its split in its type (``Mesh(...)`` itself defaults to Auto, as JAX's).
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
  if axis_types is None:
    axis_types = (AxisType.Explicit,) * len(axis_names)
  return Mesh(np.array(devices[:n], dtype=object).reshape(axis_shapes), axis_names,
              axis_types)


class Sharding:
  """How an array's elements are laid out over devices (``jax.sharding.Sharding``)."""
  memory_kind = "device"

  def is_equivalent_to(self, other, ndim: int) -> bool:
    """Whether ``other`` places the same pieces of a rank-``ndim`` array on the same
    devices (``Sharding.is_equivalent_to``); two shardings over abstract meshes are
    compared by layout alone, as in JAX."""
    abstract = getattr(self, "_is_abstract", False) and getattr(other, "_is_abstract", False)
    return (self.hlo_sharding(ndim) == other.hlo_sharding(ndim)
            and self.memory_kind == other.memory_kind
            and (abstract or self._device_list == other._device_list))

  @property
  def num_devices(self) -> int:
    return len(self.device_set)

  @property
  def addressable_devices(self) -> set:
    return self.device_set

  is_fully_addressable = True

  @property
  def _internal_device_list(self) -> DeviceList:
    return DeviceList(self._device_list)

  @property
  def _addressable_device_assignment(self) -> tuple:
    return tuple(self._device_list)   # (one process: every device is addressable)

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

  def hlo_sharding(self, ndim) -> str:
    return "{replicated}"

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
    _check_unreduced(mesh, spec)
    used = []
    for entry in spec.partitions:
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

  def update(self, **kwargs) -> "NamedSharding":
    """A copy with ``mesh``, ``spec`` or ``memory_kind`` replaced (``NamedSharding.update``)."""
    spec = kwargs.pop("spec", self.spec)
    return NamedSharding(kwargs.pop("mesh", self.mesh),
                         spec if isinstance(spec, PartitionSpec) else PartitionSpec(*spec),
                         memory_kind=kwargs.pop("memory_kind", self.memory_kind))

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
    return all(self.mesh.shape[a] == 1 for e in self.spec.partitions for a in _entry_axes(e))

  def _dim_axes(self, ndim) -> list:
    if len(self.spec) > ndim:
      raise ValueError(f"One of device_put args was given the sharding of {self!r}, which "
                       f"implies that the global size of its dimension {len(self.spec) - 1} "
                       f"should be divisible by its mesh axes, but the array has only "
                       f"{ndim} dimensions.")
    refuse_unreduced(self, "An array's layout")
    return [_entry_axes(e) for e in self.spec] + [()] * (ndim - len(self.spec))

  def check_shape(self, global_shape):
    """Raise ValueError unless every split dimension divides evenly."""
    for d, axes in enumerate(self._dim_axes(len(global_shape))):
      parts = math.prod(self.mesh.shape[a] for a in axes)
      if global_shape[d] % parts:
        raise ValueError(f"Sharding spec {tuple(axes)} implies that array axis {d} is "
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
    sizes = self.mesh.axis_sizes   # (an abstract mesh's too: devices are numbered in order)
    ids = np.arange(self.mesh.size).reshape(sizes).transpose(order + rest)
    replicate = math.prod(sizes[i] for i in rest)
    dims = tiles + ([replicate] if replicate > 1 else [])
    suffix = " last_tile_dim_replicate" if replicate > 1 else ""
    return (f"{{devices=[{','.join(map(str, dims))}]"
            f"{','.join(map(str, ids.reshape(-1)))}{suffix}}}")

  def __eq__(self, other):
    return (isinstance(other, NamedSharding) and self.mesh == other.mesh
            and self.spec == other.spec)   # as JAX: P('x') and P('x', None) differ

  def __hash__(self):
    return hash((self.mesh, self.spec))

  def __repr__(self):
    memory = "" if self.memory_kind is None else f", memory_kind={self.memory_kind}"
    return f"NamedSharding(mesh={self.mesh._short_repr()}, spec={self.spec!r}{memory})"


def _check_unreduced(mesh, spec):
  """JAX's checks of a spec's unreduced and reduced axes: Explicit axes of the mesh."""
  types = mesh._name_to_type
  for what, axes in (("Unreduced", spec.unreduced), ("Reduced", spec.reduced)):
    if any(a in types and types[a] != AxisType.Explicit for a in axes):
      raise ValueError(f"{what} axes can only refer to mesh axes that is of type `Explicit`. "
                       f"Got {what.lower()} axes: {axes} and mesh: {mesh._short_repr()}")
    missing = [a for a in axes if a not in types]
    if missing:
      raise ValueError(f"{what} axes {', '.join(map(str, missing))} is not found in "
                       f"mesh.axis_names={mesh.axis_names}. Got pspec={spec}")


def refuse_unreduced(sharding, api: str):
  """jaxlite does not model arrays that hold partial sums (unreduced axes) or whose
  cotangents will (reduced axes): a sharding or spec that names them raises rather than
  be silently treated as replicated."""
  spec = sharding if isinstance(sharding, PartitionSpec) else getattr(sharding, "spec", None)
  if isinstance(spec, PartitionSpec) and (spec.unreduced or spec.reduced):
    raise NotImplementedError(
        f"{api} was given {spec}: jaxlite does not lay out arrays over unreduced or "
        "reduced mesh axes (values held as partial sums). Leave out unreduced=/reduced=: "
        "jaxlite's results are reduced already, as after JAX's reshard.")


class Shard:
  """One device's piece of an array (``Array.addressable_shards``): which part of the
  array of ``global_shape`` laid out by ``sharding`` the ``device`` holds, as ``data``."""

  def __init__(self, device, sharding, global_shape, data=None):
    self.device, self.sharding, self.global_shape = device, sharding, tuple(global_shape)
    self.data = data

  @property
  def index(self) -> tuple:
    return self.sharding.devices_indices_map(self.global_shape)[self.device]

  @property
  def replica_id(self) -> int:
    """How many devices before this one in the sharding hold the same piece."""
    indices = self.sharding.devices_indices_map(self.global_shape)
    key = lambda d: tuple((s.start, s.stop, s.step) for s in indices[d])
    mine = key(self.device)
    before = self.sharding._device_list[:self.sharding._device_list.index(self.device)]
    return sum(key(d) == mine for d in before)

  def __repr__(self):
    return (f"Shard(device={self.device!r}, index={self.index}, "
            f"replica_id={self.replica_id}, data={self.data})")


# ----------------------------------------------------------------------------- placement

class Placed:
  """The pieces of a placed array, one per device of ``sharding._device_list``: PJRT
  buffers on those devices (XLA tier) or NumPy arrays (tier 0). ``layout``: the device
  memory layout of the buffers, a ``Layout`` of another order than row-major, or None
  for the default one (see ``relayout``)."""
  __slots__ = ("sharding", "pieces", "shape", "dtype", "layout")

  def __init__(self, sharding, pieces, shape, dtype, layout=None):
    self.sharding, self.pieces = sharding, list(pieces)
    self.shape, self.dtype = tuple(shape), np.dtype(dtype)
    self.layout = layout

  def piece_value(self, i) -> np.ndarray:
    p = self.pieces[i]
    if isinstance(p, np.ndarray):
      return p
    return p.to_numpy() if self.layout is None else p.to_numpy(self.layout.major_to_minor)

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


def put_split(value, sharding) -> list:
  """Host ``value`` split as ``sharding`` says, each piece put on its device
  (``put_pieces``)."""
  indices = sharding.devices_indices_map(value.shape)
  devices = sharding._device_list
  return put_pieces([value[indices[d]] for d in devices], devices)


def from_pieces(sharding, pieces, shape, dtype, weak_type=False, value=None,
                layout=None) -> Array:
  """An Array made of ``pieces`` laid out by ``sharding``, in the device memory layout
  ``layout`` (canonical: None for the default); ``value``: the whole value, when known
  already (else assembled from the pieces when first read). One piece on a device in
  the default layout is also the Array's buffer, which its eager ops and jitted calls
  use there (executables read buffers in the default layout only)."""
  a = object.__new__(Array)
  a._host = None   # committed or split: not a plain host array (see Array)
  if value is not None:
    a._fetched = value
  a.weak_type = weak_type
  a._buf = None
  a._placed = Placed(sharding, pieces, shape, dtype, layout)
  if layout is not None:
    relayout_mod.note_tiles(pieces[0], sharding._device_list[0], layout)
  elif len(pieces) == 1 and not isinstance(pieces[0], np.ndarray) and (
      sharding._device_list[0].client.resident):
    a._buf = pieces[0]
  return a


def place(x, sharding) -> Array:
  """``x`` (an Array, NumPy value or scalar) split into the shards ``sharding`` says; a
  ``Format`` also lays them out in its device memory layout (None: the default)."""
  x = array_mod.as_operand(x)
  if isinstance(x, extended.ExtendedArray):   # its data is placed (the sharding names
    return extended.wrap(x.aval, place(x._physical, sharding))   # the array's axes)
  if isinstance(x, core.Tracer):   # (traced, as JAX stages it: laid out so once computed)
    if isinstance(sharding, (NamedSharding, layout_mod.Format)):
      return sharding_constraint.constrain(x, sharding)
    return x
  if not isinstance(x, Array):
    raise TypeError(f"device_put with a sharding takes concrete arrays, got {x!r}.")
  if isinstance(sharding, layout_mod.Format):
    layout = sharding.layout
    if sharding.sharding is not None:
      x = place(x, sharding.sharding)
    return relayout(x, None if isinstance(layout, layout_mod.AutoLayoutSingleton)
                    else layout)
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
  return from_pieces(sharding, put_split(value, sharding), value.shape, value.dtype,
                     x.weak_type)


def relayout(x, layout) -> Array:
  """Concrete ``x`` in the device memory layout ``layout`` (a Layout, or None for the
  default), where it is placed (committed to the default device if it is not), as
  ``with_layout_constraint`` and ``jax.device_put`` with a ``Format`` lay arrays out.
  ``x`` itself where it has that layout already."""
  if isinstance(x, extended.ExtendedArray):
    if not layout_mod.is_default(layout, (tuple(range(x.ndim)), ())):
      raise NotImplementedError(f"jaxlite keeps key arrays in the default layout; "
                                f"{layout} asks for another one.")
    return x
  if layout is not None:
    layout.check_shape(x.shape)
  placed = x._placed
  sharding = (placed.sharding if placed is not None
              else SingleDeviceSharding(backends.default_device()))
  target = relayout_mod.canonical(layout, sharding._device_list[0],
                                  sharding.shard_shape(x.shape), x.dtype)
  source = None if placed is None else placed.layout
  if source == target and (placed is not None or target is None):
    return x
  relayout_mod.check_available(target, sharding._device_list[0])
  if placed is not None and not any(isinstance(p, np.ndarray) for p in placed.pieces):
    pieces = placed.pieces
  else:   # (from the host: in the default layout)
    pieces, source = put_split(np.asarray(x._value), sharding), None
    if target is None:
      return from_pieces(sharding, pieces, x.shape, x.dtype, x.weak_type)
  pieces = relayout_mod.relaid_out(pieces, sharding, x.shape, x.dtype, source, target)
  return from_pieces(sharding, pieces, x.shape, x.dtype, x.weak_type, layout=target)


def format_of(x: Array) -> layout_mod.Format:
  """``x.format``: the device memory layout its buffers have and its sharding."""
  placed = x._placed
  buf = x._buf if placed is None else placed.pieces[0]
  if buf is None or isinstance(buf, np.ndarray) or buf.__class__ is array_mod._Deleted:
    layout = layout_mod.Layout(tuple(range(x.ndim)), ())   # a host array: row-major
  else:
    layout = relayout_mod.buffer_layout(buf, x.ndim)
  return layout_mod.Format(layout, x.sharding)


def shards_of(x: Array) -> list:
  """``x.addressable_shards``."""
  placed = x._placed
  if placed is None:
    device = backends.default_device()
    return [Shard(device, SingleDeviceSharding(device), x.shape, x)]
  return [Shard(device, placed.sharding, placed.shape,
                Array(value if (value := placed.piece_value(i)).shape else value[()],
                      x.weak_type))
          for i, device in enumerate(placed.sharding._device_list)]


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
                           format=format_of,
                           commit=commit, in_context=lambda out: in_context(out),
                           spread=lambda *a: _spread_results(*a))
sharding_constraint.mesh_rules.update(context_sharding=context_sharding, place=place,
                                      check_explicit=check_explicit, auto_axes=auto_axes,
                                      asserted_by_type=_asserted_by_type,
                                      relayout=relayout)


def aval_sharding(aval) -> NamedSharding:
  """``jax.typeof(x).sharding``: the dimensions split over Explicit mesh axes (the type's
  spec), over the abstract mesh in context.

  Auto axes are left out of types, as in JAX (JAX names the mesh of an array made under
  another mesh, where jaxlite names the one in context).
  """
  if aval.spec is None:
    return NamedSharding(get_abstract_mesh(), PartitionSpec(*[None] * aval.ndim))
  return NamedSharding(aval.mesh or get_abstract_mesh(), PartitionSpec(*aval.spec))


def explicit_spec(sharding, ndim: int):
  """The part of ``sharding`` that enters an array's type: per dimension, the Explicit
  mesh axes its spec names (one name, a tuple of names, or None); None when it names
  none, or is no NamedSharding."""
  spec = getattr(sharding, "spec", None)
  mesh = getattr(sharding, "mesh", None)
  if spec is None or mesh is None or not mesh._any_axis_explicit:
    return None
  refuse_unreduced(sharding, "An array's type")
  types = mesh._name_to_type
  if config.jax_remove_size_one_mesh_axis_from_type:   # (as JAX's flag says)
    types = {n: t for n, t in types.items() if mesh.shape[n] != 1}
  out = []
  for entry in tuple(spec)[:ndim]:
    names = tuple(n for n in _entry_axes(entry) if types.get(n) == AxisType.Explicit)
    out.append(None if not names else names[0] if len(names) == 1 else names)
  out += [None] * (ndim - len(out))
  return tuple(out) if any(e is not None for e in out) else None


core.aval_rules.update(sharding=aval_sharding, explicit_spec=explicit_spec)


class MeshPlacedBackend:
  """An eager backend that runs primitives on ``inner`` and, in a thread with a mesh in
  context (``jax.set_mesh``), lays each result out over that mesh: split as its type
  says, replicated elsewhere, as JAX places what it computes in context."""

  def __init__(self, inner):
    self.inner = inner

  def apply_primitive(self, prim, args, params):
    out = self.inner.apply_primitive(prim, args, params)
    mesh = mesh_context.context.concrete
    if mesh is None:   # (another thread's mesh)
      return out
    outs = out if prim.multiple_results else [out]
    avals = [core.get_aval(x) for x in args]
    typed = any(getattr(a, "spec", None) is not None for a in avals) or (
        params.get("sharding") is not None)   # (a result asked to be split: iota, full)
    specs = ([getattr(a, "spec", None) for a in core.abstract_eval(prim, avals, params)]
             if typed else [None] * len(outs))
    placed = [_on_mesh(o, mesh, spec) for o, spec in zip(outs, specs)]
    return placed if prim.multiple_results else placed[0]


def partitioned(prim, avals_in, shardings_in, avals_out, params) -> list:
  """Per result of ``prim``, the NamedSharding XLA's partitioner gives it when its operands
  are laid out as ``shardings_in`` say (None for an operand on one device), or None where
  it has no split to follow (``sharding_rules.auto_layouts``: over Explicit axes the
  result's type, over Auto ones the partitioner's choice). Its spec names every
  dimension; ``spelled`` writes it as JAX does at a call's boundary.
  """
  named = [s for s in shardings_in if isinstance(s, NamedSharding)]
  if not named:
    return [None] * len(avals_out)
  through = _through_body(prim, params, shardings_in, avals_in, avals_out)
  if through is not None:
    return through
  mesh = named[0].mesh
  typed = [core.ShapedArray(a.shape, a.dtype, a.weak_type, spec=_layout(s, a.ndim),
                            mesh=mesh.abstract_mesh)
           if isinstance(s, NamedSharding) and s.mesh == mesh else a
           for a, s in zip(avals_in, shardings_in)]
  layouts = sharding_rules.auto_layouts(prim, typed, avals_out, params)
  return [None if layout is None or not isinstance(aval, core.ShapedArray)
          else NamedSharding(mesh, PartitionSpec(*layout))
          for aval, layout in zip(avals_out, layouts)]


def spelled(shardings, out_avals, in_shardings, in_avals) -> list:
  """The results' ``shardings`` of a call (a jit, an eager operation) on arguments laid
  out as ``in_shardings``, written as JAX writes them: where the arguments' or the
  result's type is split (Explicit axes), as the type, one entry per dimension; else the
  first argument's sharding where a result of its rank is laid out alike, or a spec less
  its trailing unsplit dimensions. The arguments are those the call uses (JAX drops the
  others before it compiles)."""
  typed = any(getattr(a, "spec", None) is not None for a in in_avals)
  first = next(((s, a.ndim) for s, a in zip(in_shardings, in_avals)
                if isinstance(s, NamedSharding)), (None, None))
  out = []
  for s, aval in zip(shardings, out_avals):
    if not isinstance(s, NamedSharding) or not isinstance(aval, core.ShapedArray):
      out.append(s)
      continue
    layout = _layout(s, aval.ndim)
    if typed or getattr(aval, "spec", None) is not None:
      out.append(NamedSharding(s.mesh, PartitionSpec(*layout)))
    elif (first[1] == aval.ndim and first[0].mesh == s.mesh
          and _layout(first[0], aval.ndim) == layout):
      out.append(first[0])
    else:
      while layout and layout[-1] is None:
        layout = layout[:-1]
      out.append(NamedSharding(s.mesh, PartitionSpec(*layout)))
  return out


def propagated(jaxpr, in_shardings) -> list:
  """Per output of ``jaxpr``, the NamedSharding that XLA's partitioner keeps for it, as
  far as a forward walk tells (None: replicated): a constraint's, else what each
  equation's sharding rule gives (``sharding.partitioned``), else, for an equation without
  a rule (a call, a loop), that of its first operand of the same shape. Any choice gives
  the same values: it only says where the pieces of a result live."""
  env = {v: s for v, s in zip(jaxpr.invars, in_shardings) if isinstance(s, NamedSharding)}
  for eqn in jaxpr.eqns:
    if eqn.primitive is sharding_constraint.sharding_constraint_p:
      sharding = eqn.params["sharding"]
      if isinstance(sharding, NamedSharding) and not sharding._is_abstract:
        env[eqn.outvars[0]] = sharding
      continue
    ins = [env.get(v) if type(v) is core.Var else None for v in eqn.invars]
    outs = _through_body(eqn.primitive, eqn.params, ins, eqn.invars, eqn.outvars)
    if outs is None:   # (a body may hold a constraint that splits unsplit operands)
      if not any(ins):
        continue
      outs = partitioned(eqn.primitive, [v.aval for v in eqn.invars], ins,
                         [v.aval for v in eqn.outvars], eqn.params)
    for out, found in zip(eqn.outvars, outs):
      if found is None:
        found = next((s for v, s in zip(eqn.invars, ins)
                      if s is not None and v.aval.shape == out.aval.shape), None)
      if found is not None:
        env[out] = found
  return [env.get(v) if type(v) is core.Var else None for v in jaxpr.outvars]


def _through_body(prim, params, ins, invars, outvars):
  """The layouts a call (a nested jit, a custom derivative's function, a checkpoint), a
  ``cond`` (each branch's, the first split found kept) or a ``scan`` (its body once, over
  one slice of ``xs``; its ``ys`` stacked unsplit) gives its results; None for others."""
  if "branches" in params:
    found = [propagated(b.jaxpr, ins[1:]) for b in params["branches"]]
    return [next((s for s in per_branch if s is not None), None) for per_branch in zip(*found)]
  if prim.name == "scan":
    n = params["num_consts"] + params["num_carry"]
    xs = [None if s is None else _dropped_major(s) for s in ins[n:]]
    outs = propagated(params["jaxpr"].jaxpr, ins[:n] + xs)
    meshes = [s.mesh for s in outs + ins if s is not None]
    stacked = NamedSharding(meshes[0], PartitionSpec()) if meshes else None
    return outs[:params["num_carry"]] + [stacked] * (len(outs) - params["num_carry"])
  for value in params.values():
    jaxpr = getattr(value, "jaxpr", value)
    if (isinstance(jaxpr, core.Jaxpr) and not jaxpr.constvars
        and _shapes(jaxpr.invars) == _shapes(invars)
        and _shapes(jaxpr.outvars) == _shapes(outvars)):
      return propagated(jaxpr, ins)
  return None


def _dropped_major(sharding):
  """``sharding`` over one slice along its first dimension."""
  spec = tuple(sharding.spec)[1:]
  return NamedSharding(sharding.mesh, PartitionSpec(*spec)) if any(spec) else None


def _shapes(atoms) -> list:   # (jaxpr atoms, or avals)
  return [getattr(getattr(a, "aval", a), "shape", None) for a in atoms]


def _layout(sharding, ndim: int) -> tuple:
  """``sharding``'s spec with one entry per dimension: None, an axis name or a tuple."""
  out = [None if not (axes := _entry_axes(e)) else axes[0] if len(axes) == 1 else axes
         for e in tuple(sharding.spec)[:ndim]]
  return tuple(out + [None] * (ndim - len(out)))


def _spread_results(prim, args, params, outs, out_avals):
  """Eager results of ``prim`` whose operands include one split over several devices,
  laid out as JAX's jitted primitive lays them out: as their types (``out_avals``) say
  over Explicit axes, else as ``partitioned`` finds, else replicated."""
  shardings = [x._placed.sharding if type(x) is Array and x._placed is not None else None
               for x in args]
  mesh = next(s.mesh for s in shardings if isinstance(s, NamedSharding))
  avals_in = [core.get_aval(x) for x in args]
  found = [NamedSharding(mesh, PartitionSpec(*aval.spec))
           if getattr(aval, "spec", None) is not None else s or NamedSharding(mesh, PartitionSpec())
           for aval, s in zip(out_avals, partitioned(prim, avals_in, shardings, out_avals,
                                                     params))]
  return [place(o, s) if isinstance(o, Array) else o
          for o, s in zip(outs, spelled(found, out_avals, shardings, avals_in))]


def _on_mesh(x, mesh, spec):
  if not isinstance(x, Array) or isinstance(x, extended.ExtendedArray):
    return x   # (float0 zeros; extended arrays stay over their data's layout)
  # (JAX spells an unsplit layout P() over Auto axes, one None per dimension otherwise)
  spec = spec or ((None,) * x.ndim if mesh._any_axis_explicit else ())
  return place(x, NamedSharding(mesh, PartitionSpec(*spec)))


def in_context(out):
  """``out`` (a jit's results) with each Array computed on one device laid out over the
  mesh in context, as its type says (results the partitioner laid out stay so)."""
  mesh = mesh_context.context.concrete
  if mesh is None:
    return out
  return tree.tree_map(lambda x: _laid_out(x, mesh), out)


def _laid_out(x, mesh):
  if type(x) is Array:
    return _on_mesh(x, mesh, x.aval.spec) if x._placed is None else x
  if isinstance(x, extended.ExtendedArray) and type(x._physical) is Array:
    data = _laid_out(x._physical, mesh)   # (a key array is laid out as its data is)
    return x if data is x._physical else extended.wrap(x.aval, data)
  return x


def _mesh_in_context(active: bool):
  # every eager primitive then reaches the placing backend: lax's direct kernels are off
  core.eval_trace.install(placer=MeshPlacedBackend if active else None)
  core.block_direct_kernels("set_mesh", active)


mesh_context.on_change.append(_mesh_in_context)


def visualize_array_sharding(arr, **kwargs):
  """Print which devices hold which block of the 1-D or 2-D array ``arr``
  (``jax.debug.visualize_array_sharding``); ``kwargs`` are ``visualize_sharding``'s."""
  visualize_sharding(tuple(arr.shape), sharding_of(arr), **kwargs)


def inspect_array_sharding(value, *, callback):
  """Call ``callback`` with the sharding of each array of the pytree ``value``
  (``jax.debug.inspect_array_sharding``): at once for arrays; for a traced value, while
  it is traced, with the sharding its type gives (a NamedSharding over the mesh in
  context, else the default device's SingleDeviceSharding), where JAX calls back when it
  compiles with XLA's choice."""
  for leaf in tree.tree_leaves(value):
    if isinstance(leaf, core.Tracer):
      mesh = mesh_context.context.concrete
      spec = core.get_aval(leaf).spec
      callback(SingleDeviceSharding(backends.default_device()) if mesh is None else
               NamedSharding(mesh, PartitionSpec(*(spec or ()))))
    else:
      callback(sharding_of(leaf))


def _chunk_index(size, s) -> int:
  """Which block of an axis of ``size`` the slice ``s`` of a device's piece is."""
  start, stop, _ = s.indices(size)
  return 0 if stop - start == size else start // (stop - start)


def _color_iter(color_map, count):
  """``count`` colors from ``color_map``, stepping half way round each time so that
  neighbouring blocks differ (JAX's order)."""
  values, i = np.linspace(0, 1, count), 0
  for _ in range(count):
    yield color_map(values[i])
    i = (i + count // 2 + bool(count % 2 == 0)) % count


def visualize_sharding(shape, sharding, *, use_color: bool = True, scale: float = 1.,
                       min_width: int = 9, max_width: int = 80, color_map=None):
  """Print which devices hold which block of an array of ``shape`` laid out by ``sharding``,
  as a table drawn by ``rich`` (``jax.debug.visualize_sharding``).

  Parameters
  ----------
  shape : sequence of int
    One or two dimensions.
  sharding : Sharding
  use_color : bool
    Colored blocks (with a color terminal and matplotlib's ``tab20b``, or ``color_map``);
    otherwise lines between the blocks.
  scale : float
    The table's height is ``10 * scale`` lines for a 2-D shape.
  min_width, max_width : int
    Bounds on a block's width in characters; ``max_width`` is the console's width too.
  color_map : callable, optional
    A float in [0, 1] -> an (r, g, b, a) color.
  """
  import importlib.util
  if not importlib.util.find_spec("rich"):
    raise ValueError("`visualize_sharding` requires `rich` to be installed.")
  import rich.align
  import rich.box
  import rich.console
  import rich.padding
  import rich.style
  import rich.table

  if len(shape) > 2 or len(shape) < 1:
    raise ValueError("`visualize_sharding` only works for shapes with 1 and 2 dimensions.")
  console = rich.console.Console(width=max_width)
  use_color = use_color and console.color_system is not None
  if use_color and not color_map:
    try:
      import matplotlib as mpl
      color_map = mpl.colormaps["tab20b"]
    except ModuleNotFoundError:
      use_color = False
  base_height = int(10 * scale)
  base_width = int(base_height * (shape[1] if len(shape) == 2 else 1) / shape[0])
  platform = next(iter(sharding.device_set)).platform.upper()
  # block (row, column) -> the devices holding it, its height and width as fractions
  holders, heights, widths = {}, {}, {}
  for device, index in sharding.devices_indices_map(tuple(shape)).items():
    index = tuple(slice(i, i + 1) if isinstance(i, int) else i for i in index)
    block = tuple(map(_chunk_index, shape, index))
    sizes = [len(range(*s.indices(n))) / n for s, n in zip(index, shape)]
    if len(shape) == 1:
      block = (0, *block)
      heights[block] = None
    else:
      heights[block] = sizes[0]
    widths[block] = sizes[-1]
    holders.setdefault(block, set()).add(device.id)
  rows = max(b[0] for b in holders) + 1
  cols = max(b[1] for b in holders) + 1
  colors = _color_iter(color_map, rows * cols) if use_color else None
  table = rich.table.Table(show_header=False, show_lines=not use_color, padding=0,
                           highlight=not use_color, pad_edge=False,
                           box=None if use_color else rich.box.SQUARE)
  for i in range(rows):
    cells = []
    for j in range(cols):
      entry = f"{platform} " + ",".join(map(str, sorted(holders[i, j])))
      width = min(max(int(widths[i, j] * base_width * 2.5), min_width), max_width)
      height = 1 if heights[i, j] is None else int(heights[i, j] * base_height)
      left, extra = divmod(width - len(entry) - 2, 2)
      top, extra_rows = divmod(height - 2, 2)
      right, bottom = left + extra, top + extra_rows
      color = text_color = None
      if use_color:
        r, g, b = (int(c * 255) for c in next(colors)[:3])
        color = f"#{r:02X}{g:02X}{b:02X}"
        text_color = "#000000" if r * 0.299 + g * 0.587 + b * 0.114 > 186 else "#ffffff"
        top, right, bottom, left = top + 1, right + 1, bottom + 1, left + 1
      cells.append(rich.padding.Padding(
          rich.align.Align(entry, "center", vertical="middle"),
          (max(top, 0), max(right, 0), max(bottom, 0), max(left, 0)),
          style=rich.style.Style(bgcolor=color, color=text_color)))
    table.add_row(*cells)
  console.print(table, end="\n\n")


def make_single_device_sharding(device, *, memory_kind=None) -> SingleDeviceSharding:
  """The sharding that puts a whole array on ``device``
  (``jax.sharding.make_single_device_sharding``)."""
  return SingleDeviceSharding(device, memory_kind=memory_kind)


class ManualAxisType:
  """Which manual mesh axes a value varies over, and which hold unreduced or reduced
  partial values (``jax.sharding.ManualAxisType``). Equal ones are the same object."""
  __slots__ = ("varying", "unreduced", "reduced", "__weakref__")
  _interned = weakref.WeakValueDictionary()

  def __new__(cls, *, varying=frozenset(), unreduced=frozenset(), reduced=frozenset()):
    if varying & unreduced:
      raise ValueError("varying and unreduced cannot have common mesh axes. Got "
                       f"varying={varying} and unreduced={unreduced}")
    if varying & reduced:
      raise ValueError("varying and reduced cannot have common mesh axes. Got "
                       f"varying={varying} and reduced={reduced}")
    key = (frozenset(varying), frozenset(unreduced), frozenset(reduced))
    obj = cls._interned.get(key)
    if obj is None:
      obj = object.__new__(cls)
      for name, value in zip(cls.__slots__, key):
        object.__setattr__(obj, name, value)
      cls._interned[key] = obj
    return obj

  def __setattr__(self, name, value):
    raise AttributeError(f"ManualAxisType is immutable: cannot set {name!r}")

  def __repr__(self):
    return (f"ManualAxisType(varying={self.varying}, unreduced={self.unreduced}, "
            f"reduced={self.reduced})")

  def __getnewargs_ex__(self):
    return (), {"varying": self.varying, "unreduced": self.unreduced,
                "reduced": self.reduced}

  def update(self, **kwargs):
    """This type with the given fields replaced."""
    fields = {"varying": self.varying, "unreduced": self.unreduced, "reduced": self.reduced}
    return ManualAxisType(**{**fields, **kwargs})

  def to_ct_mat(self):
    """The type of a cotangent: unreduced and reduced swap."""
    return self.update(unreduced=self.reduced, reduced=self.unreduced)


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


def make_array_from_process_local_data(sharding, local_data, global_shape=None) -> Array:
  """An Array laid out by ``sharding`` from this process's data: in one process, all of
  it, so ``global_shape`` is None or ``local_data``'s shape."""
  data = np.asarray(local_data)
  if global_shape is not None and tuple(global_shape) != data.shape:
    raise ValueError("When calling `make_array_from_process_local_data` on a single "
                     "process, global_shape should be None or equal to local_data.shape."
                     f"Got global_shape={tuple(global_shape)} and local_data.shape="
                     f"{data.shape}.")
  data = data.astype(dtypes.canonicalize_dtype(data.dtype), copy=False)
  return make_array_from_callback(data.shape, sharding, lambda index: data[index])


class DeviceList(tuple):
  """An ordered, hashable list of devices (jaxlib's ``DeviceList``, what a sharding's
  ``_internal_device_list`` gives and colocated Python keys its work by)."""
  __slots__ = ()

  def __repr__(self):
    return tuple.__repr__(self)

  @property
  def device_kind(self) -> str:
    kinds = {d.device_kind for d in self}
    if len(kinds) != 1:
      raise ValueError(f"a DeviceList of several device kinds has none: {sorted(kinds)}")
    return kinds.pop()

  @property
  def process_indices(self) -> set:
    return {d.process_index for d in self}

  @property
  def addressable_device_list(self) -> DeviceList:
    return self   # (one process: every device is addressable)

  is_fully_addressable = True
  default_memory_kind = "device"
  memory_kinds = ("device",)

