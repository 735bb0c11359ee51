"""``jit(f, in_shardings=..., out_shardings=...)``: one global program, partitioned by XLA.

The function is traced on the *global* shapes, as any jit. The XLA tier lowers it with a
Shardy (``sdy``) sharding on every parameter and result (``with_sharding_constraint``
adds more inside) and compiles it with ``num_partitions`` = the mesh's device count,
``use_spmd_partitioning`` and the mesh's devices as the device assignment; XLA's SPMD
partitioner splits the program and inserts the collectives. Each argument is fed as one
PJRT buffer per device (its shard) and each result comes back the same way. Tier 0 runs
the function unsharded (same answers) and lays the results out as asked.

Arguments without a sharding keep the NamedSharding they carry on the program's mesh,
else they are replicated; results without one are replicated.

A ``Format`` in place of a sharding also asks for a device memory layout, as in JAX:
the program's parameters and results are compiled with it (``mhlo.layout_mode``), the
arguments are relaid out to it, and the results keep it (``relayout``). Such a program
always runs on XLA, on one device too. A result computed by a layout constraint keeps
that constraint's layout.
"""
from __future__ import annotations

import functools
import weakref

import numpy as np

from jaxlite._src.core import core
from jaxlite._src import jit as jit_mod
from jaxlite._src.core import extended
from jaxlite._src import tiers
from jaxlite._src import backends
from jaxlite._src import relayout
from jaxlite._src.base import layout as layout_mod
from jaxlite._src.base import mesh_context
from jaxlite._src.base import tree
from jaxlite._src.core.array import as_operand, check_donated_once, delete_donated
from jaxlite._src.lax import sharding_constraint
from jaxlite._src.lax.sharding_constraint import constrained_results
from jaxlite._src.passes import physicalize
from jaxlite._src.sharding import (NamedSharding, PartitionSpec, Sharding, refuse_unreduced,
                                   SingleDeviceSharding, _no_mesh_for, broadcast_to_leaves,
                                   context_sharding, from_pieces, propagated,
                                   spelled)
from jaxlite._src.sharding_map import _host_placed, _pieces

__all__ = ["ShardedJitted"]


def _used_inputs(jaxpr) -> list:
  """Per input of ``jaxpr``, whether an equation or an output reads it."""
  read = {v for eqn in jaxpr.eqns for v in eqn.invars if type(v) is core.Var}
  read.update(v for v in jaxpr.outvars if type(v) is core.Var)
  return [v in read for v in jaxpr.invars]


def _flatten_shardings(what, treedef, shardings) -> list:
  """One Sharding (or None) per leaf of ``treedef`` from a prefix tree of them; a
  PartitionSpec names axes of the mesh in context (``jax.set_mesh``) at the call."""
  is_leaf = lambda s: s is None or isinstance(s, (Sharding, PartitionSpec))
  out = broadcast_to_leaves(shardings, treedef, is_leaf, lambda: (
      f"jit {what} must be a Sharding or a tree prefix of the corresponding values: "
      f"{shardings!r} does not match {treedef}."))
  for s in tree.tree_leaves(shardings, is_leaf=is_leaf):
    if s is not None and not isinstance(s, (Sharding, PartitionSpec)):
      raise TypeError(f"jit {what}: expected Sharding or PartitionSpec instances, got "
                      f"{s!r}.")
    refuse_unreduced(s, f"jit's {what}")
  missing = _no_mesh_for("jit", what)
  return [context_sharding(s, missing) for s in out]


def _split_formats(shardings):
  """The shardings and the layouts of a tree of shardings that may hold ``Format``s: each
  Format's sharding and layout; layouts None when no Format is there."""
  is_leaf = lambda s: s is None or isinstance(s, (Sharding, PartitionSpec, layout_mod.Format))
  if not any(isinstance(s, layout_mod.Format)
             for s in tree.tree_leaves(shardings, is_leaf=is_leaf)):
    return shardings, None
  part = lambda field: lambda s: (getattr(s, field) if isinstance(s, layout_mod.Format)
                                  else None if field == "layout" else s)
  return (tree.tree_map(part("sharding"), shardings, is_leaf=is_leaf),
          tree.tree_map(part("layout"), shardings, is_leaf=is_leaf))


def _flatten_layouts(what, treedef, layouts) -> list:
  """One layout (Layout, Layout.AUTO or None) per leaf of ``treedef`` from a prefix tree
  of them."""
  if layouts is None:
    return [None] * treedef.num_leaves
  is_leaf = lambda l: l is None or isinstance(l, (layout_mod.Layout,
                                                   layout_mod.AutoLayoutSingleton))
  return broadcast_to_leaves(layouts, treedef, is_leaf, lambda: (
      f"jit {what}: the Formats' layouts must be a tree prefix of the corresponding "
      f"values: {layouts!r} does not match {treedef}."))


def _checked_layout(layout, aval, what, device):
  """``layout`` for a value of ``aval`` as the program is compiled with it for
  ``device``: None (the default), Layout.AUTO, or a Layout of another order (see
  ``layout.canonical``)."""
  if isinstance(layout, layout_mod.Layout):
    layout.check_shape(aval.shape, f"One of jit {what} is incompatible with its layout "
                                   f"annotation {layout}")
  if layout is None:
    return None
  return relayout.canonical(layout, device, aval.shape, aval.dtype)


def _first_device(mesh, shardings):
  """The device a program over ``mesh`` (None: one device) starts on: the mesh's first,
  else the device a sharding names, else the default device."""
  if mesh is not None:
    return mesh.devices.flat[0]
  return next((s._device_list[0] for s in shardings if isinstance(s, Sharding)),
              None) or backends.default_device()


def _common_mesh(shardings):
  meshes = {s.mesh for s in shardings if isinstance(s, NamedSharding)}
  if len(meshes) > 1:
    raise ValueError("jit in_shardings/out_shardings use several different meshes; all "
                     "NamedShardings of one jit must share one mesh.")
  for s in shardings:
    if isinstance(s, Sharding) and not isinstance(s, (NamedSharding, SingleDeviceSharding)):
      raise TypeError(f"jit shardings must be NamedSharding or SingleDeviceSharding, got "
                      f"{type(s).__name__}.")
  return meshes.pop() if meshes else None


def _typed(aval, mesh):
  """The layout over ``mesh`` that ``aval``'s split over Explicit axes says, or None."""
  spec = getattr(aval, "spec", None)
  if spec is None or mesh is None:
    return None
  return NamedSharding(mesh, PartitionSpec(*spec))


def _placed_sharding(x):
  """How argument ``x`` is laid out, over its own dimensions; None if on one device."""
  data = extended.physical(x)
  if getattr(data, "_placed", None) is None:
    return None
  return x.sharding   # (an extended array's: its data's, less the element's dimensions)


class ShardedJitted:
  """A jitted function whose arguments and results have shardings."""

  def __init__(self, jitted, in_shardings, out_shardings):
    self.jitted = jitted
    self.in_shardings, self.in_layouts = _split_formats(in_shardings)
    self.out_shardings, self.out_layouts = _split_formats(out_shardings)
    self._exes: dict = {}
    functools.update_wrapper(self, jitted.fun, updated=())

  @classmethod
  def following(cls, jitted) -> "ShardedJitted":
    """The partitioned form of a plain ``jit`` whose arguments or constraints lay values
    out over several devices (made once per jitted function)."""
    own = _following.get(jitted)
    if own is None:
      own = _following[jitted] = cls(jitted, None, None)
    return own

  def __call__(self, *args, **kwargs):
    jitted = self.jitted
    traced = jitted.trace(*args, **kwargs)
    entry = traced._entry
    if entry.refs is not None:
      return self._call_with_refs(entry, args, kwargs)
    dyn_args, dyn_kwargs = args, kwargs
    if jitted._static_argnums or jitted._static_argnames:
      dyn_args, dyn_kwargs, _ = jitted._split_static(args, kwargs)
    leaves, in_tree = tree.tree_flatten((dyn_args, dyn_kwargs))
    if any(isinstance(x, core.Tracer) for x in leaves):
      return self._staged(entry, args, kwargs)
    leaves = [as_operand(x) for x in leaves]
    closed = entry.jaxpr
    in_sh = self._in_shardings(in_tree, leaves)
    out_sh = _flatten_shardings("out_shardings", entry.traced_out_tree, self.out_shardings)
    if None in out_sh:   # left to the partitioner: the layouts it keeps, as in JAX
      out_sh = [s if s is not None else p
                for s, p in zip(out_sh, propagated(closed.jaxpr, in_sh))]
    # (a program whose values come from nowhere, an iota asked to be split, runs over
    # the mesh in context)
    mesh = _common_mesh(in_sh + out_sh) or mesh_context.context.concrete
    # a result whose type is split over Explicit axes is laid out so (sharding in types);
    # what the partitioner chose is written as JAX writes it
    given = _flatten_shardings("out_shardings", entry.traced_out_tree, self.out_shardings)
    used = _used_inputs(closed.jaxpr)
    chosen = spelled([_typed(a, mesh) or s for a, s in zip(closed.out_avals, out_sh)],
                     closed.out_avals, [s for s, u in zip(in_sh, used) if u],
                     [a for a, u in zip(closed.in_avals, used) if u])
    out_sh = [c if g is None else g for c, g in zip(chosen, given)]
    for x, s in zip(leaves, in_sh):
      if isinstance(s, NamedSharding):
        s.check_shape(core.get_aval(x).shape)
    device = _first_device(mesh, in_sh + out_sh)
    in_l = self._resolved_in_layouts(in_tree, leaves, closed.in_avals, device)
    out_l = self._resolved_out_layouts(entry, closed, device)
    laid_out = any(l is not None for l in in_l + out_l)
    policy = jitted._policy or tiers.default_policy()
    if not laid_out and (mesh is None or mesh.size == 1 or policy == "numpy"
                         or not tiers.xla_available()):
      outs = self._run_unsharded(args, kwargs, mesh, out_sh)
      return tree.tree_unflatten(entry.traced_out_tree, outs)
    if laid_out:
      relayout.check_available(next(l for l in in_l + out_l if l is not None), device)
    if entry.donate is not None:
      check_donated_once(leaves, entry.donate)
    # XLA computes on the data of extended arrays (passes.physicalize): the executable
    # takes and gives their data, which entry.out_tree wraps again
    data = list(map(extended.physical, leaves))
    outs = self._run_spmd(entry, physicalize.run(closed), data, mesh, in_sh, out_sh, in_l,
                          out_l)
    if entry.donate is not None:   # deleted as on one device (XLA reuses nothing here)
      delete_donated(leaves, entry.donate)
    return tree.tree_unflatten(entry.out_tree, outs)

  def _staged(self, entry, args, kwargs):
    # inside an outer trace (make_jaxpr, grad, an enclosing jit): staged as a plain jit,
    # its results constrained to the layouts asked, which the outer program then keeps
    outs = tree.tree_leaves(self.jitted._call(args, kwargs, follow_shardings=False))
    out_sh = _flatten_shardings("out_shardings", entry.traced_out_tree, self.out_shardings)
    out_l = _flatten_layouts("out_shardings", entry.traced_out_tree, self.out_layouts)
    outs = [o if s is None else sharding_constraint.constrain(o, s)
            for o, s in zip(outs, out_sh)]
    outs = [o if not isinstance(l, layout_mod.Layout)
            else sharding_constraint.with_layout_constraint(o, l)
            for o, l in zip(outs, out_l)]
    return tree.tree_unflatten(entry.traced_out_tree, outs)

  def _call_with_refs(self, entry, args, kwargs):
    # a function using mutable array references runs as one unpartitioned program (jit
    # carries the refs' values), its results laid out as asked
    out_tree = entry.traced_out_tree.children()[0]   # (not the written refs' values)
    out_sh = _flatten_shardings("out_shardings", out_tree, self.out_shardings)
    outs = self._run_unsharded(args, kwargs, _common_mesh(out_sh), out_sh)
    return tree.tree_unflatten(out_tree, outs)

  def _in_shardings(self, in_tree, leaves):
    args_tree = in_tree.children()[0]
    given = _flatten_shardings("in_shardings", args_tree, self.in_shardings)
    # keyword arguments take the sharding they carry
    given += [None] * (len(leaves) - len(given))
    for x, s in zip(leaves, given):
      have = _placed_sharding(x)   # (a committed argument is not moved, as in JAX)
      if s is not None and have is not None and not s.is_equivalent_to(have, x.ndim):
        raise ValueError(
            "Sharding passed to jit does not match the sharding on the respective arg. "
            f"Got jit sharding: {s},\narg sharding: {have} for arg type: "
            f"{core.get_aval(x)}")
    return [s if s is not None else _placed_sharding(x) for x, s in zip(leaves, given)]

  def _resolved_in_layouts(self, in_tree, leaves, in_avals, device) -> list:
    """Per argument leaf, the layout the program reads it in, by JAX's rules: the one
    given, which a committed argument laid out otherwise must match where its sharding
    was given too; else a committed argument's own where its sharding was given; else
    the default. (``Layout.AUTO`` reads the default layout: jaxlite compiles parameters
    for the layout the arguments come in.)"""
    args_tree = in_tree.children()[0]
    given = _flatten_layouts("in_shardings", args_tree, self.in_layouts)
    given += [None] * (len(leaves) - len(given))
    sharded = _flatten_shardings("in_shardings", args_tree, self.in_shardings)
    sharded += [None] * (len(leaves) - len(sharded))
    out = []
    for x, l, s, aval in zip(leaves, given, sharded, in_avals):
      placed = getattr(x, "_placed", None)   # (committed: placed somewhere)
      own = None if placed is None else placed.layout
      if l is None:
        out.append(own if s is not None else None)
        continue
      l = _checked_layout(l, aval, "inputs", device)
      if isinstance(l, layout_mod.AutoLayoutSingleton):
        l = None
      if placed is not None and s is not None and own != l:
        raise ValueError(
            "Layout passed to jit does not match the layout on the respective arg. Got "
            f"jit layout: {given[len(out)]},\narg layout: {x.format.layout} for arg type: "
            f"{aval}.")
      out.append(l)
    return out

  def _resolved_out_layouts(self, entry, closed, device) -> list:
    """Per result, the layout asked for it: given, else that of a layout constraint
    computing it (see ``constrained_results``)."""
    given = _flatten_layouts("out_shardings", entry.traced_out_tree, self.out_layouts)
    given = [g if g is not None else c
             for g, c in zip(given, constrained_results(closed.jaxpr))]
    return [_checked_layout(l, a, "outputs", device) for l, a in zip(given, closed.out_avals)]

  def _run_unsharded(self, args, kwargs, mesh, out_sh):
    outs = tree.tree_leaves(self.jitted._call(args, kwargs, follow_shardings=False))
    placed = []
    for o, s in zip(outs, out_sh):
      if s is None and mesh is not None:
        s = NamedSharding(mesh, PartitionSpec())
      if isinstance(s, NamedSharding) and isinstance(o, extended.ExtendedArray):   # data
        o = extended.wrap(o.aval, _host_placed(s, np.asarray(o._physical._value), False))
      elif isinstance(s, NamedSharding):
        o = _host_placed(s, np.asarray(o._value), o.weak_type)
      placed.append(o)
    return placed

  def _run_spmd(self, entry, closed, leaves, mesh, in_sh, out_sh, in_l, out_l):
    if mesh is None:   # (laid out in memory on one device: the one named, else the default)
      device = _first_device(None, in_sh + out_sh)
      devices = [device]
      rep = SingleDeviceSharding(device)
      in_sh, out_sh = [rep] * len(in_sh), [rep] * len(out_sh)
    else:
      devices = list(mesh.devices.flat)
      rep = NamedSharding(mesh, PartitionSpec())
      in_sh = [s if isinstance(s, NamedSharding) and s.mesh == mesh else rep for s in in_sh]
      out_sh = [s if isinstance(s, NamedSharding) else rep for s in out_sh]
    key = (entry.key, tuple(in_sh), tuple(out_sh), tuple(in_l), tuple(out_l))
    exe = self._exes.get(key)
    if exe is None:
      from jaxlite._src.backends import xla
      in_avals, out_avals = closed.in_avals, closed.out_avals
      backend, several = devices[0].client, len(devices) > 1
      exe = self._exes[key] = xla.compile_on_devices(
          closed, f"jit_{self.__name__}", [backend.devices().index(d) for d in devices],
          replicas=False,
          arg_shardings=in_sh if several else None,
          out_shardings=out_sh if several else None,
          in_specs=[(s.shard_shape(a.shape), a.dtype) for s, a in zip(in_sh, in_avals)],
          out_specs=[(s.shard_shape(a.shape), a.dtype) for s, a in zip(out_sh, out_avals)],
          arg_layouts=in_l, out_layouts=out_l, on=backend.pjrt_client())
    per_arg = [_pieces(x, s, l) for x, s, l in zip(leaves, in_sh, in_l)]
    outs = exe.execute_sharded([[p[i] for p in per_arg] for i in range(len(devices))])
    results = []
    for j, (s, a, l) in enumerate(zip(out_sh, closed.out_avals, out_l)):
      pieces = [o[j] for o in outs]
      if isinstance(l, layout_mod.AutoLayoutSingleton):   # XLA's choice: as it says
        l = relayout.canonical_of_buffer(pieces[0], devices[0])
      results.append(from_pieces(s, pieces, a.shape, a.dtype, a.weak_type, layout=l))
    return results

  def lower(self, *args, **kwargs):
    return self.trace(*args, **kwargs).lower()

  def trace(self, *args, **kwargs):
    """The ``Traced`` stage of the function, knowing the layouts asked for; calls of its
    compiled stage run through this jit."""
    traced = self.jitted.trace(*args, **kwargs)
    jitted, entry = self.jitted, traced._entry
    dyn_args, dyn_kwargs = args, kwargs
    if jitted._static_argnums or jitted._static_argnames:
      dyn_args, dyn_kwargs, _ = jitted._split_static(args, kwargs)
    leaves, in_tree = tree.tree_flatten((dyn_args, dyn_kwargs))
    given_in = _flatten_layouts("in_shardings", in_tree.children()[0], self.in_layouts)
    given_in += [None] * (len(leaves) - len(given_in))
    given_out = _flatten_layouts("out_shardings", entry.traced_out_tree, self.out_layouts)
    traced._layouts = jit_mod.staged_layouts(entry.jaxpr, leaves, given_in, given_out)
    traced._sharded = self
    return traced


_following = weakref.WeakKeyDictionary()   # jitted function -> its ShardedJitted.following


jit_mod.sharded_jit.append(ShardedJitted)
