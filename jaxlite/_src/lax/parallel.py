"""Collectives over named axes: psum, pmean, pmax, pmin, all_gather, axis_index, ppermute,
all_to_all, and those composed from them (psum_scatter, pshuffle, pbroadcast, pswapaxes,
axis_size). (The sharding constraint is in sharding_constraint.py.)

``vmap(f, axis_name='i')`` binds the name ``'i'`` while ``f`` runs; a collective over
``'i'`` combines the values of every example of that vmap. The batching rules below turn
each collective into an ordinary reduction, broadcast or iota over the batch axis (tier 0
runs pmap and shard_map this way too). Under pmap and shard_map on the XLA tier the
collectives stay in the per-device jaxpr and lower to StableHLO collectives
(``backends/xla/stablehlo.py``). Outside a map that binds the name they raise NameError,
as JAX does. ``axis_index_groups`` (run the collective within each group of indices
separately) works under pmap and shard_map; vmap rejects it, as JAX's does.
"""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.base import tree
from jaxlite._src.core.array import Array
from jaxlite._src.core.core import Primitive, ShapedArray
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.lax.base import operand as _operand
from jaxlite._src.lax import indexing
from jaxlite._src.lax import reductions
from jaxlite._src.lax import shapes
from jaxlite._src.transforms import ad
from jaxlite._src.transforms import batching


def _names(axis_name) -> tuple:
  return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _check_bound(prim_name, names):
  for name in names:
    batching.axis_size(name, prim_name)


def _scalar_like(x, value):
  return Array(np.array(value, core.get_aval(x).dtype), True)


# -- axis_index_groups: the collective runs within each group of indices of the named
# axis (of the combined index, first name major, for several names) separately.
def _canonical_groups(groups):
  """The groups as a tuple of tuples of ints, checked as JAX's API checks them."""
  if groups is None:
    return None
  groups = tuple(tuple(int(i) for i in g) for g in groups)
  indices = [i for g in groups for i in g]
  if set(indices) != set(range(len(indices))):   # JAX's check (so repeats fail too)
    raise ValueError("axis_index_groups must cover all indices exactly once")
  return groups


_VMAP_GROUPS = {
    "psum": "axis_index_groups not supported in vmap collectives. Please open a feature "
            "request!",
    "all_gather": "axis_index_groups not supported in vmap",
    "reduce_scatter": "axis_index_groups not supported in vmap",
    "all_to_all": "Please open a feature request!",
}


def _no_groups_under_vmap(kind, names, groups):
  # JAX's vmap batching rules reject groups; pmap and shard_map (and make_jaxpr with
  # axis_env) accept them, and tier 0 then runs them under vmap through the rules below.
  if groups is not None and any(batching.bound_by_vmap(n) for n in names):
    raise NotImplementedError(_VMAP_GROUPS[kind])


def _one_axis(kind, axis_name, axis_index_groups, hint=""):
  """The names, canonical groups and participant count of a collective over one axis
  (all_gather, all_to_all): the axis size, or the group size with groups."""
  names = _names(axis_name)
  groups = _canonical_groups(axis_index_groups)
  if len(names) != 1:
    raise NotImplementedError(f"{kind} over several axis names {names} is not "
                              f"supported{hint}.")
  size = batching.axis_size(names[0], kind)
  _no_groups_under_vmap(kind, names, groups)
  # with groups, the gathered axis / the chunks go to the members of one group
  return names, groups, size if groups is None else len(groups[0])


def _check_groups_fit(prim_name, groups, names, equal):
  """The groups must index exactly the named axis (XLA rejects other replica groups);
  ``equal``: collectives whose result size is the group size need equal groups."""
  if groups is None:
    return
  size = int(np.prod([batching.axis_size(n, prim_name) for n in names]))
  count = sum(len(g) for g in groups)
  if count > size:
    raise IndexError(f"{prim_name}: axis_index_groups {groups} index {count} positions, "
                     f"but axis {_name_str(names)} has size {size}.")
  if count < size:
    raise ValueError(f"{prim_name}: axis_index_groups {groups} cover {count} of the "
                     f"{size} positions of axis {_name_str(names)}; they must cover all.")
  if equal and len({len(g) for g in groups}) > 1:
    raise ValueError(f"Replica groups must be equally sized: {prim_name} got "
                     f"axis_index_groups {groups}.")


def _name_str(names):
  return repr(names[0]) if len(names) == 1 else repr(tuple(names))


def _group_tables(groups, size):
  """``members[p]``: the group of position p, in group order (shorter groups padded with
  ``size``, the index of a fill row); ``position[p]``: p's place in its group."""
  width = max(len(g) for g in groups)
  members = np.full((size, width), size, np.int32)
  position = np.zeros(size, np.int32)
  for g in groups:
    for k, p in enumerate(g):
      members[p, :len(g)] = g
      position[p] = k
  return members, position


def _combined_index(names):
  """This example's index along the named axes together (the first name major)."""
  index, stride = None, 1
  for name in reversed(names):
    term = axis_index_p.bind(axis_name=name)
    if stride != 1:
      term = ew.mul(term, Array(np.array(stride, np.int32)))
    index = term if index is None else ew.add(index, term)
    stride *= batching.axis_size(name)
  return index


def _group_position(names, groups):
  """This example's place in its group (its index along the axis if no groups)."""
  index = _combined_index(names)
  if groups is None:
    return index
  size = int(np.prod([batching.axis_size(n) for n in names]))
  _, position = _group_tables(groups, size)
  return indexing.dynamic_index_in_dim(Array(position), index, keepdims=False)


# -- psum, pmax, pmin (multiple_results, as in JAX, though the API binds leaf by leaf)
def _allreduce_primitive(name) -> Primitive:
  prim = Primitive(name)
  prim.multiple_results = True

  @prim.def_abstract_eval
  def _abstract_eval(*avals, axes, axis_index_groups):
    _check_bound(name, axes)
    _check_groups_fit(name, axis_index_groups, axes, equal=False)
    return list(avals)

  batching.collective_axis_names[prim] = lambda params: params["axes"]
  return prim


psum_p = _allreduce_primitive("psum")
pmax_p = _allreduce_primitive("pmax")
pmin_p = _allreduce_primitive("pmin")


def _allreduce(prim, x, axis_name, axis_index_groups):
  names = _names(axis_name)
  groups = _canonical_groups(axis_index_groups)
  _check_bound(prim.name, names)
  leaves, treedef = tree.tree_flatten(x)
  if groups is not None and prim is psum_p and not any(
      isinstance(leaf, core.Tracer) for leaf in leaves):
    # as in JAX: a constant's sum over a group is the constant times the group size
    size = len(groups[0])
    return tree.tree_unflatten(treedef, [ew.mul(_scalar_like(_operand(leaf), size),
                                                _operand(leaf)) for leaf in leaves])
  _no_groups_under_vmap("psum", names, groups)
  # one bind per leaf, so jaxprs show one equation per value as JAX's do
  outs = [prim.bind(_operand(leaf), axes=names, axis_index_groups=groups)[0]
          for leaf in leaves]
  return tree.tree_unflatten(treedef, outs)


def psum(x, axis_name, *, axis_index_groups=None):
  """Sum ``x`` (a pytree of arrays) over the examples of the named vmap axis.

  Parameters
  ----------
  x : pytree of arrays
    The values of this example.
  axis_name : hashable or tuple of hashables
    The ``axis_name`` of an enclosing ``vmap`` (a tuple sums over several).
  axis_index_groups : list of lists of int, optional
    Sum within each group of indices of the axis separately (each example gets its
    group's sum). The groups must cover every index once. Under ``pmap`` and
    ``shard_map`` only: ``vmap`` raises NotImplementedError, as in JAX.

  Returns
  -------
  pytree of arrays
    The sum over the axis, the same in every example.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> jax.vmap(lambda x: x / jax.lax.psum(x, 'i'), axis_name='i')(jnp.arange(4.))
  Array([0.        , 0.16666667, 0.33333334, 0.5       ], dtype=float32)
  """
  return _allreduce(psum_p, x, axis_name, axis_index_groups)


def pmax(x, axis_name, *, axis_index_groups=None):
  """The maximum of ``x`` (a pytree of arrays) over the examples of a named vmap axis."""
  return _allreduce(pmax_p, x, axis_name, axis_index_groups)


def pmin(x, axis_name, *, axis_index_groups=None):
  """The minimum of ``x`` (a pytree of arrays) over the examples of a named vmap axis."""
  return _allreduce(pmin_p, x, axis_name, axis_index_groups)


def pmean(x, axis_name, *, axis_index_groups=None):
  """The mean of ``x`` (a pytree of arrays) over the examples of a named vmap axis.

  Integer values give floating-point means, as in JAX. With ``axis_index_groups`` the
  sum over each group is divided by the size of the first group, as in JAX.
  """
  names = _names(axis_name)
  _check_bound("pmean", names)
  groups = _canonical_groups(axis_index_groups)
  # as in JAX, the divisor is the size of the first group
  count = (len(groups[0]) if groups is not None else
           int(np.prod([batching.axis_size(n) for n in names])))

  def mean(total):
    aval = core.get_aval(total)
    dtype = dtypes.to_inexact_dtype(aval.dtype)   # int32 -> float32 also with x64 on
    total = ew._convert_element_type(total, dtype, aval.weak_type)
    return ew.div(total, Array(np.array(count, dtype), True))
  return tree.tree_map(mean, psum(x, axis_name, axis_index_groups=axis_index_groups))


# -- all_gather
all_gather_p = Primitive("all_gather")
batching.collective_axis_names[all_gather_p] = lambda params: params["axis_name"]


@all_gather_p.def_abstract_eval
def _all_gather_abstract_eval(x, *, all_gather_dimension, axis_name, axis_index_groups,
                              axis_size, tiled):
  _check_bound("all_gather", axis_name)
  _check_groups_fit("all_gather", axis_index_groups, axis_name, equal=True)
  shape = list(x.shape)
  if tiled:
    shape[all_gather_dimension] *= axis_size
  else:
    shape.insert(all_gather_dimension, axis_size)
  return x.update(shape=shape)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False, to="varying"):
  """Every example's ``x``, stacked along a new axis ``axis`` (joined along it if tiled).

  Parameters
  ----------
  x : pytree of arrays
    The values of this example.
  axis_name : hashable
    The ``axis_name`` of an enclosing ``vmap``.
  axis : int
    Where the new axis goes (with ``tiled``, the existing axis to join along).
  tiled : bool
    Join along ``axis`` instead of stacking along a new one.
  axis_index_groups : list of lists of int, optional
    Gather within each group of indices separately, in the group's order (groups of
    equal size, covering every index once). Under ``pmap`` and ``shard_map`` only, as
    in JAX.
  to : 'varying', 'invarying' or 'reduced'
    The type of the result over the named axis in JAX; jaxlite has no such types (see
    ``pcast``), so all three give the same values.

  Returns
  -------
  pytree of arrays
    The same in every example (of a group).

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> jax.vmap(lambda x: jax.lax.all_gather(x, 'i') - x, axis_name='i')(jnp.arange(3))
  Array([[ 0,  1,  2],
         [-1,  0,  1],
         [-2, -1,  0]], dtype=int32)
  """
  if to not in ("varying", "reduced", "invarying"):
    raise ValueError("Got unexpected `to` value for `jax.lax.all_gather`. Allowed `to` "
                     "values are: {'varying', 'reduced', 'invarying'}")
  if to != "varying" and axis_index_groups is not None:
    raise NotImplementedError(f"jax.lax.all_gather with to={to!r} does not take "
                              "axis_index_groups, as in JAX.")
  names, groups, size = _one_axis("all_gather", axis_name, axis_index_groups,
                                   "; nest one all_gather per name")

  def gather_leaf(leaf):
    leaf = _operand(leaf)
    ndim = core.get_aval(leaf).ndim
    dim = shapes._canonical_axis(axis, ndim if tiled else ndim + 1)
    return all_gather_p.bind(leaf, all_gather_dimension=dim, axis_name=names,
                             axis_index_groups=groups, axis_size=size, tiled=bool(tiled))
  return tree.tree_map(gather_leaf, x)


# -- axis_index
axis_index_p = Primitive("axis_index")
batching.collective_axis_names[axis_index_p] = lambda params: (params["axis_name"],)


@axis_index_p.def_abstract_eval
def _axis_index_abstract_eval(*, axis_name):
  _check_bound("axis_index", (axis_name,))
  return ShapedArray((), np.int32)


def axis_index(axis_name):
  """The index of this example along the named vmap axis (an int32 scalar).

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> jax.vmap(lambda x: x * jax.lax.axis_index('i'), axis_name='i')(jnp.ones(3))
  Array([0., 1., 2.], dtype=float32)
  """
  batching.axis_size(axis_name, "axis_index")
  return axis_index_p.bind(axis_name=axis_name)


# -- batching: a collective over this vmap's axis reduces over the batch axis, and its
# result is the same for every example (unbatched); over another vmap's axis, it is
# passed to the parent trace with this batch axis riding along.
def _allreduce_batcher(prim, reduce, of_unbatched, fill):
  def rule(axis_data, vals, dims, *, axes, axis_index_groups):
    if axis_data.name not in axes:
      return prim.bind(*vals, axes=axes, axis_index_groups=axis_index_groups), list(dims)
    if axis_index_groups is not None:
      def group_reduce(members, index):    # [group member, ...] -> their reduction
        return reduce(members, (0,))
      outs = [_within_groups(axis_data, v, d, axes, axis_index_groups, group_reduce,
                             fill(core.get_aval(v).dtype)) for v, d in zip(vals, dims)]
      return [o for o, _ in outs], [d for _, d in outs]
    outs = [of_unbatched(v, axis_data.size) if d is None else reduce(v, (d,))
            for v, d in zip(vals, dims)]
    rest = tuple(a for a in axes if a != axis_data.name)
    if rest:
      outs = prim.bind(*outs, axes=rest, axis_index_groups=axis_index_groups)
    return outs, [None] * len(outs)
  batching.axis_batching_rules[prim] = rule


_allreduce_batcher(psum_p, reductions.reduce_sum,
                   lambda v, size: ew.mul(v, _scalar_like(v, size)), lambda dtype: 0)
_allreduce_batcher(pmax_p, reductions.reduce_max, lambda v, size: v, dtypes.lowest)
_allreduce_batcher(pmin_p, reductions.reduce_min, lambda v, size: v, dtypes.highest)


# With axis_index_groups (reached on tier 0, where pmap and shard_map run under vmap):
# every example of this vmap looks up the members of its group in the stack of all the
# examples of the named axes, and combines their values.
def _within_groups(axis_data, x, d, names, groups, combine, fill=None):
  """``combine([members' values], index) -> result`` for each example of this vmap
  (``index``: the example's combined index along ``names``).

  The other names in ``names`` are bound by enclosing vmaps: their examples are gathered
  with ``all_gather`` first. ``fill`` (a scalar) stands in for the missing members of
  groups shorter than the longest. Returns ``(out, out_dim)``.
  """
  n = axis_data.size
  full = batching.broadcast(x, n, 0) if d is None else batching.moveaxis(x, d, 0)
  others = [name for name in names if name != axis_data.name]
  for name in reversed(others):    # leading axes become [*others, this axis]
    full = all_gather_p.bind(full, all_gather_dimension=0, axis_name=(name,),
                             axis_index_groups=None, axis_size=batching.axis_size(name),
                             tiled=False)
  order = others + [axis_data.name]
  rank = len(core.get_aval(full).shape)
  full = shapes.transpose(full, [order.index(name) for name in names]
                          + list(range(len(names), rank)))
  example_shape = list(core.get_aval(full).shape[len(names):])
  sizes = [n if name == axis_data.name else batching.axis_size(name) for name in names]
  size = int(np.prod(sizes))
  full = shapes.reshape(full, [size] + example_shape)
  if fill is not None:   # row ``size``: what padded group entries read
    row = shapes.broadcast_in_dim(_scalar_like(full, fill), [1] + example_shape, ())
    full = shapes.concatenate([full, row], 0)
  # the combined index of each example of this vmap (others: the enclosing examples')
  at = names.index(axis_data.name)
  index = ew.mul(shapes.iota(np.int32, n),
                 Array(np.array(int(np.prod(sizes[at + 1:])), np.int32)))
  if others:
    index = ew.add(index, _others_offset(names, sizes, at))
  members, _ = _group_tables(groups, size)
  table = Array(members)

  def one(i):
    group = indexing.dynamic_index_in_dim(table, i, keepdims=False)
    picked = [indexing.dynamic_index_in_dim(full, indexing.index_in_dim(group, k, 0, False))
              for k in range(members.shape[1])]
    return [combine(shapes.concatenate(picked, 0), i)]
  outs, out_dims = batching.vmap_flat(one, [index], [0], n)
  return outs[0], out_dims[0]


def _others_offset(names, sizes, at):
  """The part of the combined index that the enclosing vmaps' names contribute."""
  offset = None
  for k, name in enumerate(names):
    if k == at:
      continue
    term = ew.mul(axis_index_p.bind(axis_name=name),
                  Array(np.array(int(np.prod(sizes[k + 1:])), np.int32)))
    offset = term if offset is None else ew.add(offset, term)
  return offset


def _all_gather_batcher(axis_data, vals, dims, *, all_gather_dimension, axis_name,
                        axis_index_groups, axis_size, tiled):
  (x,), (d,) = vals, dims
  g = all_gather_dimension
  if axis_data.name not in axis_name:
    out = all_gather_p.bind(batching.moveaxis(x, d, 0), all_gather_dimension=g + 1,
                            axis_name=axis_name, axis_index_groups=axis_index_groups,
                            axis_size=axis_size, tiled=tiled)
    return out, 0
  if axis_index_groups is not None:
    def gather_group(members, index):    # [group member, ...] -> this example's result
      out = batching.moveaxis(members, 0, g)
      if tiled:
        shape = list(core.get_aval(out).shape)
        shape[g:g + 2] = [shape[g] * shape[g + 1]]
        out = shapes.reshape(out, shape)
      return out
    return _within_groups(axis_data, x, d, axis_name, axis_index_groups, gather_group)
  if axis_size != axis_data.size:
    raise ValueError(f"all_gather was traced for axis {axis_data.name!r} of size {axis_size} "
                     f"but runs in a vmap of size {axis_data.size}; trace it again inside "
                     "this vmap.")
  # The batch itself, with its axis where the gathered axis goes, is the result.
  out = batching.broadcast(x, axis_size, g) if d is None else batching.moveaxis(x, d, g)
  if tiled:
    shape = list(core.get_aval(out).shape)
    shape[g:g + 2] = [shape[g] * shape[g + 1]]
    out = shapes.reshape(out, shape)
  return out, None


def _axis_index_batcher(axis_data, vals, dims, *, axis_name):
  return shapes.iota(np.int32, axis_data.size), 0


batching.axis_batching_rules[all_gather_p] = _all_gather_batcher
batching.axis_batching_rules[axis_index_p] = _axis_index_batcher


# -- differentiation: psum and all_gather are linear. In vmap's semantics the transpose
# of a sum over examples hands every example the sum of all cotangents (psum again), and
# the transpose of a gather hands each example its own slice of that sum.
def _psum_nonzero(values, axes, axis_index_groups):
  """psum of the entries of ``values`` that are not None or Zero; the rest are kept."""
  live = [i for i, v in enumerate(values) if v is not None and type(v) is not ad.Zero]
  out = list(values)
  if live:
    summed = psum_p.bind(*[values[i] for i in live], axes=axes,
                         axis_index_groups=axis_index_groups)
    for i, s in zip(live, summed):
      out[i] = s
  return out


def _psum_jvp(primals, tangents, *, axes, axis_index_groups):
  outs = psum_p.bind(*primals, axes=axes, axis_index_groups=axis_index_groups)
  return outs, _psum_nonzero(list(tangents), axes, axis_index_groups)


def _psum_transpose(cts, *args, axes, axis_index_groups):
  wanted = [ct if ad.is_undefined(x) else None for ct, x in zip(cts, args)]
  return [None if type(c) is ad.Zero else c
          for c in _psum_nonzero(wanted, axes, axis_index_groups)]


def _all_gather_transpose(ct, x, *, all_gather_dimension, axis_name, axis_index_groups,
                          axis_size, tiled):
  g = all_gather_dimension
  (summed,) = psum_p.bind(ct, axes=axis_name, axis_index_groups=axis_index_groups)
  width = x.aval.shape[g] if tiled else 1
  index = _group_position(axis_name, axis_index_groups)
  starts = [Array(np.zeros((), np.int32))] * len(core.get_aval(ct).shape)
  starts[g] = ew.mul(index, Array(np.array(width, np.int32)))
  sizes = list(core.get_aval(ct).shape)
  sizes[g] = width
  piece = indexing.dynamic_slice(summed, starts, sizes)
  return [piece if tiled else shapes.squeeze(piece, (g,))]


def _pminmax_jvp(prim):
  # As for reduce_max: the tangent of the winning example, averaged over ties.
  def jvp(primals, tangents, *, axes, axis_index_groups):
    outs = prim.bind(*primals, axes=axes, axis_index_groups=axis_index_groups)
    tangents_out = []
    for x, ans, t in zip(primals, outs, tangents):
      if type(t) is ad.Zero:
        tangents_out.append(ad.Zero(ad.tangent_aval(core.get_aval(ans))))
        continue
      wins = ew.convert_element_type(ew.eq(x, ans), core.get_aval(x).dtype)
      # two binds: the count is known, the weighted tangent linear, for linearize
      (picked,) = psum_p.bind(ew.mul(t, wins), axes=axes, axis_index_groups=axis_index_groups)
      (count,) = psum_p.bind(wins, axes=axes, axis_index_groups=axis_index_groups)
      tangents_out.append(ew.div(picked, count))
    return outs, tangents_out
  ad.jvp_rules[prim] = jvp


_pminmax_jvp(pmax_p)
_pminmax_jvp(pmin_p)
ad.jvp_rules[psum_p] = _psum_jvp
ad.transpose_rules[psum_p] = _psum_transpose
ad.deflinear2(all_gather_p, _all_gather_transpose)
ad.defzero(axis_index_p)


# -- ppermute: example ``src`` sends its value to example ``dst`` for each (src, dst)
# pair; examples no pair sends to get zeros.
ppermute_p = Primitive("ppermute")
batching.collective_axis_names[ppermute_p] = lambda params: params["axis_name"]


@ppermute_p.def_abstract_eval
def _ppermute_abstract_eval(x, *, axis_name, perm):
  _check_bound("ppermute", axis_name)
  return x


def ppermute(x, axis_name, perm):
  """Send each example's ``x`` to another example of the named axis.

  Parameters
  ----------
  x : pytree of arrays
  axis_name : hashable
    A bound axis name (of ``vmap``, ``pmap`` or ``shard_map``).
  perm : sequence of (int, int)
    ``(source, destination)`` index pairs; no index may appear twice as a source or
    twice as a destination. Destinations that receive nothing get zeros.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> jax.vmap(lambda x: jax.lax.ppermute(x, 'i', [(0, 1), (1, 2), (2, 0)]),
  ...          axis_name='i')(jnp.arange(3.))
  Array([2., 0., 1.], dtype=float32)
  """
  names = _names(axis_name)
  size = int(np.prod([batching.axis_size(n, "ppermute") for n in names]))
  perm = tuple((int(s), int(d)) for s, d in perm)
  sources, dests = [s for s, _ in perm], [d for _, d in perm]
  if len(set(sources)) != len(sources) or len(set(dests)) != len(dests):
    raise ValueError(f"ppermute sources and destinations must be unique, got {perm}.")
  if any(not 0 <= i < size for i in sources + dests):
    raise ValueError(f"ppermute indices must lie in [0, {size}) for axis {axis_name!r}, "
                     f"got {perm}.")
  return tree.tree_map(lambda leaf: ppermute_p.bind(_operand(leaf), axis_name=names,
                                                    perm=perm), x)


def _ppermute_batcher(axis_data, vals, dims, *, axis_name, perm):
  (x,), (d,) = vals, dims
  if axis_data.name not in axis_name:
    return ppermute_p.bind(x, axis_name=axis_name, perm=perm), d
  if len(axis_name) != 1:
    raise NotImplementedError("ppermute over several axis names under vmap is not "
                              "supported; permute over one name at a time.")
  if d is None:
    x, d = batching.broadcast(x, axis_data.size, 0), 0
  x = batching.moveaxis(x, d, 0)
  # destination i takes source src_of[i], or a zero row (index ``size``) when none sends
  src_of = [axis_data.size] * axis_data.size
  for s, t in perm:
    src_of[t] = s
  shape = list(core.get_aval(x).shape)
  zero = shapes.broadcast_in_dim(_scalar_like(x, 0), [1] + shape[1:], ())
  padded = shapes.concatenate([x, zero], 0)
  rows = [shapes.slice_in_dim(padded, i, i + 1, axis=0) for i in src_of]
  return shapes.concatenate(rows, 0), 0


def _ppermute_transpose(ct, x, *, axis_name, perm):
  inverse = tuple((d, s) for s, d in perm)
  return [ppermute_p.bind(ct, axis_name=axis_name, perm=inverse)]


batching.axis_batching_rules[ppermute_p] = _ppermute_batcher
ad.deflinear2(ppermute_p, _ppermute_transpose)


# -- all_to_all: example i's ``split_axis`` is cut into n chunks; chunk j goes to
# example j, which concatenates what it receives along ``concat_axis`` in source order.
all_to_all_p = Primitive("all_to_all")
batching.collective_axis_names[all_to_all_p] = lambda params: params["axis_name"]


@all_to_all_p.def_abstract_eval
def _all_to_all_abstract_eval(x, *, axis_name, split_axis, concat_axis, axis_index_groups,
                              axis_size, tiled):
  _check_bound("all_to_all", axis_name)
  _check_groups_fit("all_to_all", axis_index_groups, axis_name, equal=True)
  shape = list(x.shape)
  shape[split_axis] //= axis_size
  shape[concat_axis] *= axis_size
  return x.update(shape=shape)


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None,
               tiled=False):
  """Exchange chunks between the examples of a named axis (a distributed transpose).

  Parameters
  ----------
  x : pytree of arrays
  axis_name : hashable
  split_axis : int
    The axis cut into as many chunks as the named axis has examples (with ``tiled=False``
    its size must equal that count, and it is removed).
  concat_axis : int
    The axis along which the received chunks are joined (with ``tiled=False`` a new axis
    of that size is inserted there).
  axis_index_groups : list of lists of int, optional
    Exchange within each group of indices separately: the chunks are as many as a
    group's members, and chunk j goes to the group's j-th member (groups of equal size,
    covering every index once). Under ``pmap`` and ``shard_map`` only, as in JAX.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> jax.vmap(lambda x: jax.lax.all_to_all(x, 'i', 0, 0), axis_name='i')(
  ...     jnp.arange(4).reshape(2, 2))
  Array([[0, 2],
         [1, 3]], dtype=int32)
  """
  names, groups, size = _one_axis("all_to_all", axis_name, axis_index_groups)

  def leaf_fn(leaf):
    leaf = _operand(leaf)
    ndim = core.get_aval(leaf).ndim
    s, c = (shapes._canonical_axis(split_axis, ndim),
            shapes._canonical_axis(concat_axis, ndim))
    if not tiled:
      if core.get_aval(leaf).shape[s] != size:
        where = "each group of axis" if groups is not None else "axis"
        raise ValueError(f"all_to_all: split_axis {split_axis} has size "
                         f"{core.get_aval(leaf).shape[s]}, but {where} {names[0]!r} has "
                         f"{size} examples; they must be equal (or use tiled=True).")
      if s == c:   # the chunks (of one entry) are exchanged in place
        return all_to_all_p.bind(leaf, axis_name=names, split_axis=s, concat_axis=c,
                                 axis_index_groups=groups, axis_size=size, tiled=True)
      # as in JAX: concat_axis is a position of the result, which lacks the split axis;
      # insert it (size 1), exchange along it, drop the split axis
      if s < c:
        c += 1
      else:
        s += 1
      leaf = shapes.expand_dims(leaf, (c,))
      out = all_to_all_p.bind(leaf, axis_name=names, split_axis=s, concat_axis=c,
                              axis_index_groups=groups, axis_size=size, tiled=True)
      return shapes.squeeze(out, (s,))
    if core.get_aval(leaf).shape[s] % size:
      raise ValueError(f"all_to_all: split_axis {split_axis} of size "
                       f"{core.get_aval(leaf).shape[s]} does not divide into {size} chunks.")
    return all_to_all_p.bind(leaf, axis_name=names, split_axis=s, concat_axis=c,
                             axis_index_groups=groups, axis_size=size, tiled=True)
  return tree.tree_map(leaf_fn, x)


def _all_to_all_batcher(axis_data, vals, dims, *, axis_name, split_axis, concat_axis,
                        axis_index_groups, axis_size, tiled):
  (x,), (d,) = vals, dims
  if axis_data.name not in axis_name:
    x = batching.moveaxis(x, d, 0)
    return all_to_all_p.bind(x, axis_name=axis_name, split_axis=split_axis + 1,
                             concat_axis=concat_axis + 1,
                             axis_index_groups=axis_index_groups, axis_size=axis_size,
                             tiled=tiled), 0
  if axis_index_groups is not None:
    return _all_to_all_in_groups(axis_data, x, d, axis_name, split_axis, concat_axis,
                                 axis_index_groups, axis_size)
  n = axis_data.size
  if d is None:
    x, d = batching.broadcast(x, n, 0), 0
  x = batching.moveaxis(x, d, 0)            # [source j, ...example dims]
  shape = list(core.get_aval(x).shape)
  s, c = split_axis + 1, concat_axis + 1
  k = shape[s] // n
  x = shapes.reshape(x, shape[:s] + [n, k] + shape[s + 1:])   # [j, .., chunk i, k, ..]
  perm = list(range(len(shape) + 1))
  perm[0], perm[s] = perm[s], perm[0]
  x = shapes.transpose(x, perm)             # [i, .., j, k, ..]: j sits where i was
  # move j next to (before) the concat axis of the example and merge the two
  ex_shape = list(core.get_aval(x).shape)
  j_pos = s
  c_pos = c if c < s else c + 1             # index of the concat axis in x's dims
  order = [a for a in range(len(ex_shape)) if a != j_pos]
  order.insert(order.index(c_pos), j_pos)
  x = shapes.transpose(x, order)
  new = [ex_shape[a] for a in order]
  at = order.index(j_pos)
  return shapes.reshape(x, new[:at] + [new[at] * new[at + 1]] + new[at + 2:]), 0


def _all_to_all_in_groups(axis_data, x, d, names, split_axis, concat_axis, groups, k):
  """Tier 0's all_to_all within groups of ``k`` members: the example at place r of its
  group joins chunk r of every member's value, in group order."""
  shape = core.get_aval(x).shape
  chunk = shape[split_axis + (1 if d is not None and d <= split_axis else 0)] // k
  size = sum(len(g) for g in groups)
  position = Array(_group_tables(groups, size)[1])

  def exchange(members, index):     # members: [k, ...], the group's values in order
    start = ew.mul(indexing.dynamic_index_in_dim(position, index, keepdims=False),
                   Array(np.array(chunk, np.int32)))
    pieces = [indexing.dynamic_slice_in_dim(indexing.index_in_dim(members, j, 0, False),
                                            start, chunk, split_axis) for j in range(k)]
    return shapes.concatenate(pieces, concat_axis)
  return _within_groups(axis_data, x, d, names, groups, exchange)


def _all_to_all_transpose(ct, x, *, axis_name, split_axis, concat_axis, axis_index_groups,
                          axis_size, tiled):
  return [all_to_all_p.bind(ct, axis_name=axis_name, split_axis=concat_axis,
                            concat_axis=split_axis, axis_index_groups=axis_index_groups,
                            axis_size=axis_size, tiled=tiled)]


batching.axis_batching_rules[all_to_all_p] = _all_to_all_batcher
ad.deflinear2(all_to_all_p, _all_to_all_transpose)


# -- collectives composed from the primitives above
def axis_size(axis_name):
  """The size of the named vmap axis (a product over a tuple of names)."""
  return math.prod(batching.axis_size(n, "axis_size") for n in _names(axis_name))


def pshuffle(x, axis_name, perm):
  """Example ``i`` receives the value of example ``perm[i]`` along the named axis."""
  return ppermute(x, axis_name, [(p, i) for i, p in enumerate(perm)])


def pbroadcast(x, axis_name, source):
  """Every example receives the value of example ``source`` along the named axis."""
  return tree.tree_map(
      lambda v: indexing.index_in_dim(all_gather(_operand(v), axis_name), source,
                                      0, keepdims=False), x)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None,
                 tiled=False):
  """``psum`` then give example ``i`` only block ``i`` of ``scatter_dimension`` (one
  index, or with ``tiled=True`` a block of ``size / axis_size`` entries).

  With ``axis_index_groups`` (equal groups covering every index once; under ``pmap``
  and ``shard_map`` only, as in JAX) the sum is over the example's group and the block
  is the one of its place in the group.
  """
  names = _names(axis_name)
  groups = _canonical_groups(axis_index_groups)
  n = axis_size(axis_name)
  if groups is not None:
    _no_groups_under_vmap("reduce_scatter", names, groups)
    _check_groups_fit("psum_scatter", groups, names, equal=True)
    n = len(groups[0])

  def one(v):
    total = psum(_operand(v), axis_name, axis_index_groups=groups)
    me = _group_position(names, groups)
    size = core.get_aval(total).shape[scatter_dimension]
    if not tiled:
      if size != n:
        raise ValueError(f"psum_scatter: dimension {scatter_dimension} has size {size}, "
                         f"must equal the axis size {n}")
      return indexing.dynamic_index_in_dim(total, me, scatter_dimension, keepdims=False)
    if size % n:
      raise ValueError(f"psum_scatter: dimension size {size} is not divisible by the "
                       f"axis size {n}")
    block = size // n
    return indexing.dynamic_slice_in_dim(total, ew.mul(me, ew._const(me, block)), block,
                                         scatter_dimension)
  return tree.tree_map(one, x)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
  """Swap the named (vmapped) axis with positional ``axis`` (``all_to_all`` with equal
  split and concat axes)."""
  return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


def pcast(x, axis_name, *, to):
  """The identity: jaxlite has no varying/invariant type distinction over named axes."""
  return tree.tree_map(_operand, x)

