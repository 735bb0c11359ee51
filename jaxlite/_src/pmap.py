"""``pmap``: one replica of a function per device, its collectives across the replicas.

``pmap(f, axis_name='i')(x)`` is a shard_map over a one-axis mesh ``('i': n)`` of the
first n devices: the mapped axis of each argument is split one slice per device (a
``PartitionSpec`` naming ``'i'`` at the argument's ``in_axes``), ``f`` sees the slice
without that axis, and the outputs are stacked along ``out_axes``. The XLA tier compiles
it as one program with ``num_replicas = n`` (see ``sharding_map.MeshProgram``); tier 0
runs it under ``vmap(..., axis_name='i')``.
"""
from __future__ import annotations

import functools

import numpy as np

from jaxlite._src.base import api_util
from jaxlite._src import backends
from jaxlite._src.core import core
from jaxlite._src import donation
from jaxlite._src import stages
from jaxlite._src import tiers
from jaxlite._src.base import tree
from jaxlite._src.core.array import as_operand
from jaxlite._src.lax import shapes
from jaxlite._src.sharding import Mesh, PartitionSpec
from jaxlite._src.sharding_map import MeshProgram
from jaxlite._src.vmap_api import _flatten_axes

__all__ = ["pmap"]

# the mesh axis of a pmap without axis_name (collectives cannot name it)
_ANONYMOUS_AXIS = "_internal_pmap_axis_name"


def _spec_at(axis, name) -> PartitionSpec:
  """The spec splitting dimension ``axis`` (None: replicated)."""
  if axis is None:
    return PartitionSpec()
  return PartitionSpec(*([None] * axis + [name]))


def _canonical_in_axis(axis, ndim):
  if axis is None:
    return None
  if not -ndim <= axis < ndim:
    raise ValueError(f"pmap was requested to map its argument along axis {axis}, which "
                     f"implies that its rank should be at least "
                     f"{axis + 1 if axis >= 0 else -axis}, but is only {ndim}.")
  return axis % ndim


def _mapped_size(fun, leaves, axes, axis_size):
  sizes = {x.shape[a] for x, a in zip(leaves, axes) if a is not None}
  if len(sizes) > 1:
    detail = ", ".join(f"{tuple(x.shape)} mapped at axis {a}"
                       for x, a in zip(leaves, axes) if a is not None)
    raise ValueError(f"pmap got inconsistent sizes for array axes to be mapped: {detail}.")
  if not sizes:
    if axis_size is None:
      raise ValueError("pmap requires at least one argument with a mapped axis (in_axes "
                       "not None), or axis_size.")
    return axis_size
  return sizes.pop()


def _devices_for(n, devices):
  if devices is not None:
    devices = list(devices)
    if len(devices) != n:
      raise ValueError(f"pmap was given {len(devices)} devices, but the mapped axis has "
                       f"size {n}; they must be equal.")
    return devices
  available = backends.devices()
  if n > len(available):
    raise ValueError(f"compiling computation that requires {n} logical devices, but only "
                     f"{len(available)} XLA devices are available (num_replicas={n}). "
                     f"The mapped axis size ({n}) must not exceed the device count "
                     f"({len(available)}): set jax_num_cpu_devices (or XLA_FLAGS="
                     f"--xla_force_host_platform_device_count={n}) before the first "
                     "computation.")
  return available[:n]


class _Pmapped:
  """The callable ``pmap`` returns; one MeshProgram per (static arguments, size,
  in_axes layout)."""

  def __init__(self, fun, axis_name, in_axes, out_axes, static_argnums, devices, backend,
               axis_size, donate_argnums=()):
    self.donate_argnums = donate_argnums
    self.fun, self.axis_name, self.in_axes, self.out_axes = fun, axis_name, in_axes, out_axes
    self.static_argnums, self.devices, self.axis_size = static_argnums, devices, axis_size
    self.policy = tiers.resolve_policy(backend)
    self._programs: dict = {}
    functools.update_wrapper(self, fun, updated=())  # not fun.__dict__: it may be a pmap

  def _resolve(self, args, kwargs):
    """The MeshProgram serving a call on ``args`` and ``kwargs``, and its argument leaves."""
    static = tuple(a % len(args) for a in self.static_argnums if -len(args) <= a < len(args))
    dyn = tuple(a for i, a in enumerate(args) if i not in static)
    static_vals = tuple((i, args[i]) for i in sorted(static))
    pos_leaves, pos_tree = tree.tree_flatten(dyn)
    in_axes = self.in_axes
    if isinstance(in_axes, list):
      in_axes = tuple(in_axes)
    if not (in_axes is None or type(in_axes) is int) and static:
      in_axes = tuple(a for i, a in enumerate(in_axes) if i not in static)
    # in_axes covers the positional arguments; keyword arguments are mapped over their
    # leading axis, as in JAX
    kw_leaves = tree.tree_leaves(kwargs)
    axes = _flatten_axes("pmap in_axes", pos_tree, in_axes) + [0] * len(kw_leaves)
    leaves, treedef = tree.tree_flatten((dyn, kwargs))
    leaves = [as_operand(x) for x in leaves]
    axes = [_canonical_in_axis(a, core.get_aval(x).ndim) for x, a in zip(leaves, axes)]
    n = _mapped_size(self.fun, leaves, axes, self.axis_size)
    key = (static_vals, treedef, tuple(axes), n)
    program = self._programs.get(key)
    if program is None:
      program = self._programs[key] = self._program(static_vals, treedef, axes, n, leaves)
      if self.donate_argnums:   # positions among the dynamic arguments (see donation.py)
        dynamic = [i for i in range(len(args)) if i not in static]
        program.donated = donation.donated_positional(
            treedef, {k for k, i in enumerate(dynamic) if i in self.donate_argnums})
    return program, leaves

  def __call__(self, *args, **kwargs):
    program, leaves = self._resolve(args, kwargs)
    return program(*leaves)

  def lower(self, *args, **kwargs):
    """The program for these arguments' signature, lowered (``jax.stages.Lowered``):
    ``as_text()``, ``compile()``."""
    return stages.MeshLowered(self._resolve, args, kwargs)

  def _program(self, static_vals, treedef, axes, n, leaves):
    name = _ANONYMOUS_AXIS if self.axis_name is None else self.axis_name
    devices = _devices_for(n, self.devices)
    mesh = Mesh(np.array(devices, dtype=object), (name,))
    in_specs = [_spec_at(a, name) for a in axes]
    out_axes, fun = self.out_axes, self.fun
    resolved = []   # the output axes, known once the function is traced

    def local(*shards):
      # each mapped argument arrives as its slice with the mapped axis of size 1
      shards = [x if a is None else shapes.squeeze(x, (a,)) for x, a in zip(shards, axes)]
      dyn, kwargs = tree.tree_unflatten(treedef, shards)
      statics = dict(static_vals)
      dyn = iter(dyn)
      nargs = len(treedef.children()[0].children()) + len(statics)
      full = [statics[i] if i in statics else next(dyn) for i in range(nargs)]
      out_leaves, out_tree = tree.tree_flatten(fun(*full, **kwargs))
      out_leaves = [as_operand(o) for o in out_leaves]
      resolved[:] = [None if a is None else a % (core.get_aval(o).ndim + 1) for o, a in
                     zip(out_leaves, _flatten_axes("pmap out_axes", out_tree, out_axes))]
      expanded = [o if a is None else shapes.expand_dims(o, (a,))
                  for o, a in zip(out_leaves, resolved)]
      return tree.tree_unflatten(out_tree, expanded)

    return MeshProgram(local, mesh, lambda *_: in_specs,
                       lambda _: [_spec_at(a, name) for a in resolved],
                       f"pmap_{api_util.fun_name(fun)}", self.policy)


def pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(),
         devices=None, backend=None, axis_size=None, donate_argnums=()):
  """Run ``fun`` once per device, in parallel, over the leading (``in_axes``) axis.

  Parameters
  ----------
  fun : callable
  axis_name : hashable, optional
    Names the mapped axis for collectives (``psum``, ``all_gather``, ``ppermute``, ...).
  in_axes, out_axes : int, None or pytree of them
    Which axis of each argument is split over the devices, and where the stacked
    outputs put it (None: replicated argument / output taken from the first device).
  static_broadcasted_argnums : int or sequence of int
    Positional arguments passed as Python values (hashable; one program per value).
  devices : sequence of Device, optional
    The devices to run on (as many as the mapped axis is long); default the first n.
  backend : str, optional
    'numpy' runs tier 0 (under a named vmap); 'xla'/'cpu'/'gpu' or None (default
    policy) compile one XLA program with ``num_replicas = n``.
  donate_argnums : int or sequence of int
    Positional arguments whose buffers the program may reuse for its outputs. As JAX, a
    donated Array already laid out over the devices as pmap takes it (the output of a
    previous pmap) is consumed and deleted (``is_deleted()``), on both tiers; one that
    must be resharded first is copied and stays alive. A donation no output fits warns.

  Returns
  -------
  callable
    Returns Arrays whose shards live on the n devices (``NamedSharding`` over a one-axis
    mesh named ``axis_name``).

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> jax.pmap(lambda x: x / jax.lax.psum(x, 'i'), axis_name='i')(jnp.ones(1))
  Array([1.], dtype=float32)
  """
  api_util.check_callable(fun)
  if isinstance(static_broadcasted_argnums, int):
    static_broadcasted_argnums = (static_broadcasted_argnums,)
  donate_argnums = ((donate_argnums,) if isinstance(donate_argnums, int)
                    else tuple(donate_argnums))
  if set(static_broadcasted_argnums) & set(donate_argnums):
    raise ValueError(f"`static_argnums` {sorted(set(static_broadcasted_argnums))} and "
                     f"`donate_argnums` {sorted(set(donate_argnums))} cannot intersect.")
  return _Pmapped(fun, axis_name, in_axes, out_axes, tuple(static_broadcasted_argnums),
                  devices, backend, axis_size, donate_argnums)
