"""Collectives over named axes: psum, pmean, pmax, pmin, all_gather, axis_index.

``vmap(f, axis_name='i')`` binds the name ``'i'`` while ``f`` runs; a collective over
``'i'`` combines the values of every example of that vmap. The batching rules below turn
each collective into an ordinary reduction, broadcast or iota over the batch axis, so no
collective ever reaches a backend. Outside a vmap that binds the name, they raise
NameError as JAX does.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src import core
from jaxlite._src import dtypes
from jaxlite._src import tree
from jaxlite._src.array import Array
from jaxlite._src.core import Primitive, ShapedArray
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


# -- psum, pmax, pmin (multiple_results, as in JAX, though the API binds leaf by leaf)
def _allreduce_primitive(name) -> Primitive:
  prim = Primitive(name)
  prim.multiple_results = True

  @prim.def_abstract_eval
  def _abstract_eval(*avals, axes, axis_index_groups):
    _check_bound(name, axes)
    return list(avals)

  batching.collective_axis_names[prim] = lambda params: params["axes"]
  return prim


psum_p = _allreduce_primitive("psum")
pmax_p = _allreduce_primitive("pmax")
pmin_p = _allreduce_primitive("pmin")


def _allreduce(prim, x, axis_name, axis_index_groups):
  if axis_index_groups is not None:
    raise NotImplementedError(f"{prim.name}: axis_index_groups is not supported; reduce "
                              "over the whole named axis instead.")
  names = _names(axis_name)
  _check_bound(prim.name, names)
  leaves, treedef = tree.tree_flatten(x)
  # one bind per leaf, so jaxprs show one equation per value as JAX's do
  outs = [prim.bind(_operand(leaf), axes=names, axis_index_groups=None)[0]
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
  axis_index_groups : None
    Not supported (JAX uses it to reduce over subgroups of devices).

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

  Integer values give floating-point means, as in JAX.
  """
  names = _names(axis_name)
  _check_bound("pmean", names)
  count = int(np.prod([batching.axis_size(n) for n in names]))

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
  shape = list(x.shape)
  if tiled:
    shape[all_gather_dimension] *= axis_size
  else:
    shape.insert(all_gather_dimension, axis_size)
  return x.update(shape=shape)


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
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

  Returns
  -------
  pytree of arrays
    The same in every example.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> jax.vmap(lambda x: jax.lax.all_gather(x, 'i') - x, axis_name='i')(jnp.arange(3))
  Array([[ 0,  1,  2],
         [-1,  0,  1],
         [-2, -1,  0]], dtype=int32)
  """
  if axis_index_groups is not None:
    raise NotImplementedError("all_gather: axis_index_groups is not supported; gather "
                              "over the whole named axis instead.")
  names = _names(axis_name)
  if len(names) != 1:
    raise NotImplementedError(f"all_gather over several axis names {names} is not "
                              "supported; nest one all_gather per name.")
  size = batching.axis_size(names[0], "all_gather")

  def gather_leaf(leaf):
    leaf = _operand(leaf)
    ndim = core.get_aval(leaf).ndim
    dim = shapes._canonical_axis(axis, ndim if tiled else ndim + 1)
    return all_gather_p.bind(leaf, all_gather_dimension=dim, axis_name=names,
                             axis_index_groups=None, axis_size=size, tiled=bool(tiled))
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
def _allreduce_batcher(prim, reduce, of_unbatched):
  def rule(axis_data, vals, dims, *, axes, axis_index_groups):
    if axis_data.name not in axes:
      return prim.bind(*vals, axes=axes, axis_index_groups=axis_index_groups), list(dims)
    outs = [of_unbatched(v, axis_data.size) if d is None else reduce(v, (d,))
            for v, d in zip(vals, dims)]
    rest = tuple(a for a in axes if a != axis_data.name)
    if rest:
      outs = prim.bind(*outs, axes=rest, axis_index_groups=axis_index_groups)
    return outs, [None] * len(outs)
  batching.axis_batching_rules[prim] = rule


_allreduce_batcher(psum_p, reductions.reduce_sum,
                   lambda v, size: ew.mul(v, _scalar_like(v, size)))
_allreduce_batcher(pmax_p, reductions.reduce_max, lambda v, size: v)
_allreduce_batcher(pmin_p, reductions.reduce_min, lambda v, size: v)


def _all_gather_batcher(axis_data, vals, dims, *, all_gather_dimension, axis_name,
                        axis_index_groups, axis_size, tiled):
  (x,), (d,) = vals, dims
  g = all_gather_dimension
  if axis_data.name not in axis_name:
    out = all_gather_p.bind(batching.moveaxis(x, d, 0), all_gather_dimension=g + 1,
                            axis_name=axis_name, axis_index_groups=axis_index_groups,
                            axis_size=axis_size, tiled=tiled)
    return out, 0
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
  index = axis_index_p.bind(axis_name=axis_name[0])
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
ad.deflinear(all_gather_p, _all_gather_transpose)
ad.defzero(axis_index_p)
