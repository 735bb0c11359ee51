"""``shard_map``, and the engine it shares with ``pmap``: one program per mesh device.

The user's function is traced once on the *shard* shapes, with every mesh axis name
bound, into a per-device jaxpr whose collectives name mesh axes. Then:

- XLA tier: the jaxpr is lowered as a module with one replica per mesh device (devices
  in the mesh's row-major order); each collective becomes a StableHLO collective whose
  replica groups are the devices that differ only along its axes. The shards of each
  argument are fed as one PJRT buffer per device, and the outputs stay on the devices,
  as Arrays laid out by ``NamedSharding(mesh, out_spec)``.
- Tier 0 (NumPy): each argument is reshaped so that every mesh axis splitting it is a
  leading axis, and the jaxpr runs under one ``vmap`` per mesh axis, named as the axis:
  vmap's collectives are exactly the mesh's. Same answers, on one host.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from jaxlite._src.base import api_util
from jaxlite._src.base import mesh_context
from jaxlite._src.core import core
from jaxlite._src.core import extended
from jaxlite._src import donation
from jaxlite._src import tiers
from jaxlite._src.base import tree
from jaxlite._src.core.array import Array, as_operand
from jaxlite._src.core.core import ShapedArray
from jaxlite._src.sharding import (Mesh, NamedSharding, PartitionSpec, _entry_axes,
                                   broadcast_to_leaves, from_pieces, place, put_split,
                                   relayout)
from jaxlite._src.lax import sharding_constraint
from jaxlite._src.passes import physicalize
from jaxlite._src.transforms import batching, staging

__all__ = ["shard_map", "MeshProgram"]


def flatten_specs(what, treedef, spec_tree, avals=None) -> list:
  """One PartitionSpec per leaf of ``treedef``, from the prefix tree ``spec_tree``. None
  is P(): an input closed over, passed whole to every device (given the arguments'
  ``avals``, one split over Explicit axes is refused, as JAX does)."""
  is_spec = lambda x: x is None or isinstance(x, PartitionSpec)
  specs = broadcast_to_leaves(spec_tree, treedef, is_spec, lambda: (
      f"shard_map {what} must be a tree prefix of the corresponding arguments or outputs: "
      f"{spec_tree!r} does not match {treedef}."))
  for spec, aval in zip(specs, avals or ()):
    if spec is None and aval.spec is not None:
      raise NotImplementedError(
          "Closing over inputs to shard_map where the input is sharded on `Explicit` axes "
          "is not implemented. As a workaround, please pass those inputs as an argument to "
          f"shard_map. Got input with shape {aval.str_short(short_dtypes=True)}")
  return [PartitionSpec() if spec is None else spec for spec in specs]


def _parts(mesh, spec, ndim) -> list:
  """Per dimension, the mesh axes that split it."""
  if len(spec) > ndim:
    raise ValueError(f"PartitionSpec {spec!r} has {len(spec)} entries, but the value has "
                     f"only {ndim} dimensions.")
  dims = [_entry_axes(e) for e in spec] + [()] * (ndim - len(spec))
  for axes in dims:
    for a in axes:
      if a not in mesh.shape:
        raise ValueError(f"Resource axis: {a} of {spec!r} is not found in mesh: "
                         f"{mesh.axis_names}.")
  return dims


def shard_aval(mesh, spec, aval, what="argument"):
  shape = list(aval.shape)
  for d, axes in enumerate(_parts(mesh, spec, len(shape))):
    n = math.prod(mesh.shape[a] for a in axes)
    if shape[d] % n:
      raise ValueError(f"shard_map {what} of shape {tuple(aval.shape)} with spec {spec!r}: "
                       f"dimension {d} (size {shape[d]}) does not divide evenly into the "
                       f"{n} shards of mesh axes {axes}.")
    shape[d] //= n
  return ShapedArray(tuple(shape), aval.dtype, aval.weak_type)


def global_shape(mesh, spec, shape) -> tuple:
  shape = list(shape)
  for d, axes in enumerate(_parts(mesh, spec, len(shape))):
    shape[d] *= math.prod(mesh.shape[a] for a in axes)
  return tuple(shape)


class MeshProgram:
  """``local_fun`` (pytrees of shards in and out) run once per device of ``mesh``.

  ``in_specs`` gives one PartitionSpec per argument leaf (a callable of the argument
  treedef and the leaves' avals); ``out_specs`` one per output leaf (a callable of the
  output treedef).
  Compiled programs are cached per argument signature.
  """

  # pmap's donate_argnums: per argument leaf, whether it is donated (see donation.py)
  donated = None

  def __init__(self, local_fun, mesh: Mesh, in_specs, out_specs, name, policy=None):
    self.local_fun, self.mesh, self.name, self.policy = local_fun, mesh, name, policy
    self.in_specs, self.out_specs = in_specs, out_specs
    self._cache: dict = {}

  def _use_xla(self) -> bool:
    policy = self.policy or tiers.default_policy()
    return policy != "numpy" and tiers.xla_available()

  def _trace(self, treedef, avals):
    key = (treedef, tuple(avals))
    hit = self._cache.get(key)
    if hit is not None:
      return hit
    if _manual_meshes and _manual_meshes[-1] != self.mesh:
      # JAX 0.10 refuses this too: pmap is a shard_map, and one inside another's body
      # would need the outer mesh's devices split further
      raise ValueError(f"The context mesh {_manual_meshes[-1]._short_repr()} should match "
                       f"the mesh passed to {self.name.split('_')[0]} "
                       f"{self.mesh._short_repr()}: a pmap or shard_map inside another "
                       "over a different mesh is not supported. Use one shard_map over a "
                       "mesh with both axes, or vmap with axis_name for the inner map.")
    specs = self.in_specs(treedef, avals)
    local = [shard_aval(self.mesh, s, a) for s, a in zip(specs, avals)]
    flat_fun, out_tree = api_util.flatten_fun(self.local_fun, treedef, with_kwargs=False)
    with _bound_axes(self.mesh):
      closed = staging.trace_to_jaxpr(flat_fun, local)
    out_specs = self.out_specs(out_tree())
    for spec, aval in zip(out_specs, closed.out_avals):
      _parts(self.mesh, spec, aval.ndim)
    entry = self._cache[key] = [closed, specs, out_specs, out_tree(), None]
    return entry

  def signature(self, args):
    """``(entry, leaves)`` of a call on ``args``: the program traced for their signature
    (``[closed, in specs, out specs, out treedef, XLA executable or None]``) and the
    argument leaves as operands."""
    leaves, treedef = tree.tree_flatten(args)
    leaves = [as_operand(x) for x in leaves]
    return self._trace(treedef, [core.get_aval(x) for x in leaves]), leaves

  def __call__(self, *args):
    return self.run(*self.signature(args))

  def run(self, entry, leaves):
    """The outputs (their pytree) of ``entry``'s program on ``leaves``."""
    closed, specs, out_specs, out_tree, _ = entry
    if core.current_trace() is not core.eval_trace or any(
        isinstance(x, core.Tracer) for x in leaves):
      # under an outer jit, grad, vmap or checkify (even on constants, which are staged
      # as in JAX): the per-device program becomes named vmaps over the shards, which
      # every transformation traces through (donation has no effect there, as in JAX)
      outs = self._run_vmapped(closed, specs, out_specs, leaves)
    elif self.donated is not None:
      return tree.tree_unflatten(out_tree, donation.run_mesh(self, entry, leaves))
    elif self._use_xla():
      outs = self._run_xla(entry, leaves)
    else:
      outs = self._run_numpy(closed, specs, out_specs, leaves)
    return tree.tree_unflatten(out_tree, outs)

  # -- XLA: one replica per mesh device
  def compile_xla(self, entry, aliases=None, options=None):
    """The executable of ``entry``'s program, one replica per mesh device; ``aliases``
    the donation plan, ``options`` XLA compiler options (see ``xla.compile``)."""
    from jaxlite._src.backends import xla
    devices = list(self.mesh.devices.flat)
    # (XLA computes on the data of extended arrays: passes.physicalize)
    return xla.compile_on_devices(physicalize.run(entry[0]), self.name,
                                  [d.id for d in devices],
                                  replicas=True, mesh_axes=tuple(self.mesh.shape.items()),
                                  donation=aliases, options=options)

  def as_text(self, entry, dialect=None) -> str:
    """``entry``'s program: the StableHLO module XLA compiles (``dialect`` 'stablehlo',
    the default where the XLA tier serves it) or, where tier 0 does ('numpy'), the
    per-device jaxpr it runs under named vmaps."""
    if dialect is None:
      dialect = "stablehlo" if self._use_xla() else "numpy"
    if dialect in ("stablehlo", "mhlo"):
      from jaxlite._src.backends import xla
      aliases = donation.mesh_plan(self, entry) if self.donated is not None else None
      return xla.lower_on_devices(physicalize.run(entry[0]), self.name,
                                  self.mesh.devices.size,
                                  replicas=True, mesh_axes=tuple(self.mesh.shape.items()),
                                  donation=aliases)
    if dialect in ("numpy", "python"):
      return str(entry[0])
    raise ValueError(f"unknown dialect: {dialect}. Use 'stablehlo' or 'numpy'.")

  def _run_xla(self, entry, leaves, aliases=None, donate=()):
    closed, specs, out_specs = entry[0], entry[1], entry[2]
    mesh = self.mesh
    devices = list(mesh.devices.flat)
    if entry[4] is None:
      entry[4] = self.compile_xla(entry, aliases)
    exe = entry[4]
    per_arg = [_pieces(_key_data(x), NamedSharding(mesh, s)) for x, s in zip(leaves, specs)]
    consumed = [i for i in donate if donation.consumable_pieces(leaves[i], per_arg[i])]
    outs = exe.execute_sharded([[p[i] for p in per_arg] for i in range(len(devices))],
                               consumed)
    result = []
    for j, (spec, aval) in enumerate(zip(out_specs, map(extended.physical_aval,
                                                        closed.out_avals))):
      shape = global_shape(mesh, spec, aval.shape)
      result.append(from_pieces(NamedSharding(mesh, spec), [o[j] for o in outs], shape,
                                aval.dtype, aval.weak_type))
    return extended.wrap_outputs(result, closed.out_avals)

  # -- tier 0: the jaxpr under one named vmap per mesh axis
  def _run_numpy(self, closed, specs, out_specs, leaves):
    outs = self._run_vmapped(closed, specs, out_specs, leaves)
    placed = [_host_placed(NamedSharding(self.mesh, spec), np.asarray(_key_data(o)._value),
                           o.weak_type) for spec, o in zip(out_specs, outs)]
    return extended.wrap_outputs(placed, closed.out_avals)

  def _run_vmapped(self, closed, specs, out_specs, leaves):
    """The global outputs of the per-device jaxpr run under one named ``vmap`` per mesh
    axis (vmap's collectives are exactly the mesh's), on Arrays or tracers."""
    from jaxlite._src.vmap_api import vmap
    mesh = self.mesh
    names = mesh.axis_names
    stacked = [_stack_mesh_axes(mesh, spec, x) for x, spec in zip(leaves, specs)]
    used = [axes for _, axes in stacked]
    fun = functools.partial(core.eval_jaxpr, closed.jaxpr, closed.consts)
    for k in reversed(range(len(names))):
      fun = vmap(fun, in_axes=[0 if names[k] in u else None for u in used], out_axes=0,
                 axis_name=names[k], axis_size=mesh.devices.shape[k])
    outs = fun(*[value for value, _ in stacked])
    return [_unstack_mesh_axes(mesh, spec, o) for spec, o in zip(out_specs, outs)]


# the meshes whose per-device functions are being traced, innermost last
_manual_meshes: list = []


class _bound_axes:
  """Binds every mesh axis name (with its size) while the local function is traced."""

  def __init__(self, mesh):
    self.mesh = mesh
    self.envs = [batching.extend_axis_env(n, s) for n, s in mesh.shape.items()]

  def __enter__(self):
    _manual_meshes.append(self.mesh)
    for e in self.envs:
      e.__enter__()

  def __exit__(self, *exc):
    for e in reversed(self.envs):
      e.__exit__(*exc)
    _manual_meshes.pop()


def _key_data(x: Array) -> Array:
  """``x``, or the data of an array of an extended dtype (what programs compute on)."""
  return extended.physical(x)


def _pieces(x: Array, sharding: NamedSharding, layout=None) -> list:
  """The PJRT buffers of ``x``'s shards under ``sharding`` in the device memory layout
  ``layout`` (canonical: None for the default), reused when ``x`` is already laid out
  so (e.g. the output of the previous step)."""
  placed = x._placed
  if placed is not None and placed.sharding == sharding and not any(
      isinstance(p, np.ndarray) for p in placed.pieces):
    if placed.layout == layout:
      return placed.pieces
    return relayout(x, layout)._placed.pieces
  if layout is not None:
    return relayout(place(x, sharding), layout)._placed.pieces
  return put_split(np.asarray(x._value), sharding)


def _host_placed(sharding, value, weak_type) -> Array:
  """A tier-0 result laid out by ``sharding``: its pieces are NumPy views of ``value``."""
  indices = sharding.devices_indices_map(value.shape)
  return from_pieces(sharding, [np.asarray(value[indices[d]]) for d in sharding._device_list],
                     value.shape, value.dtype, weak_type, value if value.shape else value[()])


def _stack_mesh_axes(mesh, spec, value):
  """``value`` (an Array or tracer) with a leading axis per mesh axis that splits it (in
  mesh order), the rest shard-shaped; and those mesh axes' names."""
  if getattr(core.get_aval(value), "spec", None) is not None:   # (split in its type)
    value = _untyped(value, mesh)
  dims = _parts(mesh, spec, value.ndim)
  shape, labels = [], []
  for d, axes in enumerate(dims):
    shape += [mesh.shape[a] for a in axes] + [value.shape[d] // math.prod(
        mesh.shape[a] for a in axes)]
    labels += list(axes) + [None]
  value = value.reshape(shape)
  used = [a for a in mesh.axis_names if a in labels]
  order = [labels.index(a) for a in used] + [i for i, l in enumerate(labels) if l is None]
  return value.transpose(order), used


def _untyped(value, mesh):
  """``value`` without its split over Explicit axes in its type: the whole array, which
  the stacking below cuts into the map's pieces."""
  if isinstance(value, Array):
    return Array(np.asarray(value._value), value.weak_type)
  return sharding_constraint.constrain(value, NamedSharding(mesh, PartitionSpec()))


def _unstack_mesh_axes(mesh, spec, value):
  """The global value from an output with one leading axis per mesh axis: axes the
  spec does not name are replicated (their first entry is kept)."""
  names = mesh.axis_names
  dims = _parts(mesh, spec, value.ndim - len(names))
  named = {a for axes in dims for a in axes}
  value = value[tuple(slice(None) if a in named else 0 for a in names)]
  kept = [a for a in names if a in named]
  order, shape = [], []
  local = value.shape[len(kept):]
  for d, axes in enumerate(dims):
    order += [kept.index(a) for a in axes] + [len(kept) + d]
    shape.append(local[d] * math.prod(mesh.shape[a] for a in axes))
  return value.transpose(order).reshape(shape)


def _spec_in_type(aval, names) -> PartitionSpec:
  """How an argument is split over the mesh axes ``names``, as its type says (JAX's
  ``Infer``): its split over Explicit axes, less the axes that are not mapped."""
  if aval.spec is None:
    return PartitionSpec()
  # (PartitionSpec makes an empty tuple None and a tuple of one name the name)
  return PartitionSpec(*[tuple(a for a in _entry_axes(e) if a in names) for e in aval.spec])


def _manual_only(what, specs, names) -> list:
  """``specs``, which may name only the mapped (manual) mesh axes ``names``."""
  for spec in specs:
    for axis in (a for e in spec.partitions for a in _entry_axes(e)):
      if axis not in names:
        raise ValueError(f"shard_map {what} argument must refer to an axis marked as manual "
                         f"({names}), but:\n\n  {what} refers to {axis!r}\n\nCheck the "
                         f"{what} values passed to shard_map.")
  return specs


class _InferFromArgs:
  """The default ``in_specs`` of ``shard_map`` (``in_axes`` of ``smap``): read the mapped
  axes from the arguments' types."""

  def __repr__(self):
    return "jax.sharding.Infer"


Infer = _InferFromArgs()


def shard_map(f=None, /, *, out_specs, in_specs=Infer, mesh=None, axis_names=frozenset(),
              check_vma=True):
  """Map ``f`` over the shards of its arguments, one call per device of ``mesh``.

  Parameters
  ----------
  f : callable
    Takes and returns pytrees of shards; collectives (``psum``, ``all_gather``,
    ``ppermute``, ``axis_index``, ...) name mesh axes.
  mesh : Mesh
  in_specs : pytree of PartitionSpec
    A prefix of the arguments: how each argument is split (P() or None: replicated).
    Left out (``Infer``), each is read from the argument's type: its split over the
    Explicit mesh axes mapped (the default for a mesh whose axes are all Explicit).
  out_specs : pytree of PartitionSpec
    A prefix of the outputs: how the shards are put together. An output whose spec
    leaves out a mesh axis must be equal along it (it is taken from the first device).

  Returns
  -------
  callable
    Runs on XLA with one replica per mesh device (tier 0: under named vmaps).

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> from jaxlite.sharding import PartitionSpec as P
  >>> mesh = jax.make_mesh((1,), ('x',))
  >>> f = jax.shard_map(lambda a: jax.lax.psum(a.sum(), 'x'), mesh=mesh,
  ...                   in_specs=P('x'), out_specs=P())
  >>> f(jnp.arange(4.))
  Array(6., dtype=float32)
  """
  if f is None:
    return functools.partial(shard_map, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                             axis_names=axis_names, check_vma=check_vma)
  if mesh is None:   # the mesh set by jax.set_mesh, else by `with mesh:`
    from jaxlite._src.sharding import _mesh_stack
    mesh = mesh_context.context.concrete or (_mesh_stack[-1] if _mesh_stack else None)
    if mesh is None:
      raise ValueError("The context mesh cannot be empty. Use `jax.set_mesh(mesh)` to "
                       "enter into a mesh context")
  if not isinstance(mesh, Mesh):
    raise TypeError(f"shard_map requires a Mesh for mesh=, got {type(mesh).__name__}.")
  if not frozenset(axis_names) <= frozenset(mesh.axis_names):
    raise ValueError(f"jax.shard_map requires axis_names={frozenset(axis_names)} to be a "
                     f"subset of mesh.axis_names={frozenset(mesh.axis_names)}")
  names = frozenset(axis_names) or frozenset(mesh.axis_names)
  kinds = dict(zip(mesh.axis_names, mesh.axis_types))
  if in_specs is Infer:
    if not all(kinds[a].name == "Explicit" for a in names):
      raise TypeError("shard_map in_specs argument must be a pytree of "
                      "`jax.sharding.PartitionSpec` instances, but it was `None` when "
                      f"axis_names={frozenset(names)} are of type "
                      f"{', '.join(str(kinds[a]) for a in names)}")
    read_specs = lambda treedef, avals: [_spec_in_type(a, names) for a in avals]
  else:
    # over a mesh all of whose axes are Explicit and mapped, the specs must say what the
    # arguments' types say, as in JAX
    typed = (names == frozenset(mesh.axis_names)
             and all(kinds[a].name == "Explicit" for a in names))

    def read_specs(treedef, avals):
      specs = _manual_only("in_specs", flatten_specs("in_specs", treedef, in_specs, avals),
                           names)
      for spec, aval in zip(specs if typed else (), avals):
        given = spec._normalized_spec_for_aval(aval.ndim)
        have = _spec_in_type(aval, names)._normalized_spec_for_aval(aval.ndim)
        if given != have:
          raise ValueError(
              f"in_specs passed to shard_map: {given} does not match the specs of the "
              f"input: {have} for arg: {aval.str_short()}. `in_specs` is an optional "
              "argument so you can omit specifying it and shard_map will infer the "
              "in_specs from the arguments. If you want to reshard your inputs, you can use "
              "`jax.reshard` on the arguments and then pass those args to shard_map.")
      return specs
  program = MeshProgram(f, mesh, read_specs, lambda treedef: _manual_only(
      "out_specs", flatten_specs("out_specs", treedef, out_specs), names),
                        f"shmap_{api_util.fun_name(f)}")

  @functools.wraps(f)
  def mapped(*args):
    return program(*args)
  return mapped


def smap(f=None, /, *, in_axes=Infer, out_axes, axis_name):
  """Map ``f`` over the mesh axis ``axis_name``, each instance taking one shard of the
  mapped arguments (``jax.smap``): ``shard_map`` over that one axis, with ``in_axes`` and
  ``out_axes`` saying which array axis is split, as in ``vmap``.

  Parameters
  ----------
  f : callable, optional
    Without it, a decorator.
  in_axes : int, None or tuple
    The axis of every argument (None: not mapped), or one entry per positional argument.
    Left out, each argument's is the axis its type splits over ``axis_name`` (an Explicit
    axis).
  out_axes : int, None or pytree of them
    Where the mapped axis goes in each output.
  axis_name : hashable
    A mesh axis of the mesh in context (``jax.set_mesh``).
  """
  if f is None:
    return lambda g: smap(g, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)
  if isinstance(axis_name, (list, tuple)):
    raise TypeError(f"smap axis_name should be a `str` or a `Hashable`, but got {axis_name}")
  if in_axes is not None and in_axes is not Infer and not isinstance(in_axes, (int, tuple)):
    raise TypeError("smap in_axes must be an int, None, jax.sharding.Infer, or a tuple of "
                    "entries corresponding to the positional arguments passed to the "
                    f"function, but got {in_axes}.")
  is_none = lambda x: x is None
  if in_axes is not Infer and not all(isinstance(a, int) for a in tree.tree_leaves(in_axes)):
    raise TypeError("smap in_axes must be an int, None, jax.sharding.Infer, or (nested) "
                    f"container with those types as leaves, but got {in_axes}.")
  if not all(isinstance(a, int) for a in tree.tree_leaves(out_axes)):
    raise TypeError("smap out_axes must be an int, None, or (nested) container with those "
                    f"types as leaves, but got {out_axes}.")
  spec = lambda axis: PartitionSpec() if axis is None else PartitionSpec(
      *[None] * axis, axis_name)
  out_specs = tree.tree_map(spec, out_axes, is_leaf=is_none)

  @functools.wraps(f)
  def mapped(*args):
    if in_axes is Infer:
      mesh = mesh_context.context.concrete
      kind = None if mesh is None else dict(zip(mesh.axis_names, mesh.axis_types)).get(
          axis_name)
      if kind is not None and kind.name != "Explicit":
        raise TypeError(f"in_axes was not specified when axis_name={frozenset({axis_name})} "
                        f"was of type AxisType.{kind.name}")
      in_specs = Infer   # the axis each argument's type splits over axis_name
    else:
      in_specs = tree.tree_map(spec, in_axes, is_leaf=is_none)
      if not isinstance(in_axes, tuple):   # one axis for every argument
        in_specs = (in_specs,) * len(args)
    return shard_map(f, in_specs=in_specs, out_specs=out_specs,
                     axis_names=frozenset({axis_name}))(*args)
  return mapped
