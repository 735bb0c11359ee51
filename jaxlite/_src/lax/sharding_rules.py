"""Sharding in types: how each primitive splits its outputs over Explicit mesh axes when
an operand's type is split (``core.sharding_rules``; JAX's sharding rules).

A type's spec has one entry per dimension: None, a mesh axis name, or a tuple of names.
Elementwise operations merge their operands' specs, shape operations move them with the
dimensions, reductions drop the reduced dimensions, ``dot_general`` and convolutions keep
the batch and free dimensions', and ``sharding_constraint`` (``reshard``, ``out_sharding=``)
sets the spec it is given. A primitive without a rule gives what its shape rule gives:
the jaxpr's types for calls and loops, an unsplit result otherwise.
"""
from __future__ import annotations

from jaxlite._src.base import errors
from jaxlite._src.core import core
from jaxlite._src.lax import bits  # noqa: F401 (its elementwise primitives)
from jaxlite._src.lax import convolution
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.lax import indexing
from jaxlite._src.lax import reductions
from jaxlite._src.lax import shapes
from jaxlite._src.lax import sharding_constraint as sc
from jaxlite._src.lax import sorting
from jaxlite._src.lax import special  # noqa: F401 (its elementwise primitives)
from jaxlite._src.transforms import ad


def _spec(aval) -> tuple:
  return getattr(aval, "spec", None) or (None,) * len(aval.shape)


def _axes(entry) -> tuple:
  return () if entry is None else entry if isinstance(entry, tuple) else (entry,)


def _checked(prim_name, avals_in, aval_out, spec):
  """``spec``, after JAX's check that no mesh axis splits two dimensions."""
  seen = [a for e in spec for a in _axes(e)]
  if len(seen) != len(set(seen)):
    ins = ", ".join(a.str_short(short_dtypes=True) for a in avals_in)
    out = core.ShapedArray(aval_out.shape, aval_out.dtype, spec=spec).str_short(True)
    raise errors.ShardingTypeError(
        f"{prim_name} operation with inputs: {ins} produces an illegally sharded result: "
        f"{out}")
  return spec


def _merged(name, avals_in, aval_out):
  """The spec of an elementwise result: per dimension the one split its operands of the
  result's rank name (JAX's broadcasting rule; scalars take no part)."""
  ndim = len(aval_out.shape)
  ranked = [a for a in avals_in if len(a.shape) == ndim]
  out = [None] * ndim
  for a in ranked:
    for d, e in enumerate(_spec(a)):
      if e is None:
        continue
      if out[d] is not None and out[d] != e:
        raise errors.ShardingTypeError(
            f"{name} got incompatible shardings for broadcasting: "
            f"{', '.join(str(tuple(_spec(x))) for x in ranked)}.")
      out[d] = e
  return _checked(name, avals_in, aval_out, tuple(out))


def elementwise(prim):
  return lambda avals_in, avals_out, **_: [_merged(prim.name, avals_in, o) for o in avals_out]


def _same(avals_in, avals_out, **_):
  return [_spec(avals_in[0]) if o.shape == avals_in[0].shape else None for o in avals_out]


def _reduction(avals_in, avals_out, *, axes, **_):
  return [tuple(e for d, e in enumerate(_spec(avals_in[0])) if d not in axes)]


def _broadcast_in_dim(avals_in, avals_out, *, shape, broadcast_dimensions, sharding):
  if sharding is not None:
    return [core.aval_rules["explicit_spec"](sharding, len(shape))]
  x = avals_in[0]
  out = [None] * len(shape)
  for i, d in enumerate(broadcast_dimensions):
    if x.shape[i] == shape[d]:   # (a size-1 dimension broadcast is not split)
      out[d] = _spec(x)[i]
  return [tuple(out)]


def _transpose(avals_in, avals_out, *, permutation):
  spec = _spec(avals_in[0])
  return [tuple(spec[p] for p in permutation)]


def _squeeze(avals_in, avals_out, *, dimensions):
  return [tuple(e for d, e in enumerate(_spec(avals_in[0])) if d not in dimensions)]


def _reshape(avals_in, avals_out, *, new_sizes, dimensions, sharding):
  """A split stays on the first dimension of the group of dimensions it becomes or comes
  from (``(2@X,4) -> (8@X)``, ``(2@X,4) -> (2@X,2,2)``), as JAX's rule keeps it; a split of
  a minor dimension of a merged group has no such place: ShardingTypeError."""
  if sharding is not None:
    return [core.aval_rules["explicit_spec"](sharding, len(new_sizes))]
  x = avals_in[0]
  spec, old, new = _spec(x), list(x.shape), list(new_sizes)
  out = [None] * len(new)
  i = j = 0
  while i < len(old) and j < len(new):
    gi, gj = [i], [j]
    a, b = old[i], new[j]
    while a != b:
      if a < b:
        i += 1
        gi.append(i)
        a *= old[i]
      else:
        j += 1
        gj.append(j)
        b *= new[j]
    split = [d for d in gi if spec[d] is not None]
    if split:
      if split != [gi[0]]:
        raise errors.ShardingTypeError(
            f"reshape of {x.str_short(short_dtypes=True)} to {tuple(new_sizes)}: the split "
            "of a dimension merged into a major one has no place in the result. Pass "
            "out_sharding= to reshape, or reshard first.")
      out[gj[0]] = spec[gi[0]]
    i, j = i + 1, j + 1
  return [tuple(out)]


def _concatenate(avals_in, avals_out, *, dimension):
  return [_merged("concatenate", avals_in, avals_out[0])]


def _sliced(avals_in, avals_out, **_):
  """A slice keeps the split of the dimensions it keeps whole."""
  x, o = avals_in[0], avals_out[0]
  return [tuple(e if x.shape[d] == o.shape[d] else None
                for d, e in enumerate(_spec(x)))]


def _dot_general(avals_in, avals_out, *, dimension_numbers, out_sharding, **_):
  if out_sharding is not None:   # asked for: the operands' splits need not agree
    return [core.aval_rules["explicit_spec"](out_sharding, len(avals_out[0].shape))]
  (lc, rc), (lb, rb) = dimension_numbers
  lhs, rhs = avals_in
  ls, rs = _spec(lhs), _spec(rhs)
  batch = [ls[a] if ls[a] is not None else rs[b] for a, b in zip(lb, rb)]
  lfree = [ls[d] for d in range(len(lhs.shape)) if d not in lc and d not in lb]
  rfree = [rs[d] for d in range(len(rhs.shape)) if d not in rc and d not in rb]
  return [_checked("dot_general", avals_in, avals_out[0], tuple(batch + lfree + rfree))]


def _conv(avals_in, avals_out, *, dimension_numbers, **_):
  lhs, rhs = avals_in
  dn = convolution.conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
  out = [None] * len(avals_out[0].shape)
  out[dn.out_spec[0]] = _spec(lhs)[dn.lhs_spec[0]]
  out[dn.out_spec[1]] = _spec(rhs)[dn.rhs_spec[0]]
  return [_checked("conv_general_dilated", avals_in, avals_out[0], tuple(out))]


def _gather(avals_in, avals_out, *, dimension_numbers, slice_sizes, **_):
  """JAX's gather rule: the operand's unsliced dimensions and the indices' batch
  dimensions keep their splits; a split sliced dimension, or split index vectors, have no
  unambiguous result (ShardingTypeError, JAX's message)."""
  operand, indices = avals_in
  dn = dimension_numbers
  op_spec, ix_spec = _spec(operand), list(_spec(indices))
  rank = len(dn.offset_dims) + len(indices.shape) - 1
  full_or_whole = all(slice_sizes[i] == operand.shape[i] or op_spec[i] is None
                      for i in dn.start_index_map)
  batches = list(zip(dn.operand_batching_dims, dn.start_indices_batching_dims))
  agree = all(ix_spec[j] == op_spec[i] or op_spec[i] is None or ix_spec[j] is None
              for i, j in batches)
  others_whole = all(e is None for j, e in enumerate(ix_spec)
                     if j not in dn.start_indices_batching_dims)
  if not (full_or_whole and agree and others_whole):
    raise errors.ShardingTypeError(
        "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather "
        "indexing as out sharding could not be resolved unambiguously (or would require "
        f"collectives on inputs). Got operand={operand!r}, indices={indices!r}")
  for i, j in batches:
    ix_spec[j] = ix_spec[j] or op_spec[i]
  offsets = iter(i for i in range(len(slice_sizes))
                 if i not in dn.collapsed_slice_dims and i not in dn.operand_batching_dims)
  from_indices = iter(ix_spec)
  return [tuple(op_spec[next(offsets)] if d in dn.offset_dims else next(from_indices)
                for d in range(rank))]


def _cumulative(avals_in, avals_out, *, axis, reverse):
  x = avals_in[0]
  if _spec(x)[axis] is not None:
    raise errors.ShardingTypeError(
        "Input should be unsharded over the axis being reduced. Got input "
        f"type={x.str_short()} and axis={axis}")
  return [_spec(x)]


def _constraint(avals_in, avals_out, *, sharding):
  return [core.aval_rules["explicit_spec"](sharding, len(avals_in[0].shape))]


core.sharding_rules.update({p: elementwise(p) for p in [*ew.specs, *ew.family_primitives]})
for _p in (sorting.cumsum_p, sorting.cumprod_p, sorting.cummax_p, sorting.cummin_p,
           sorting.cumlogsumexp_p):
  core.sharding_rules[_p] = _cumulative
for _p in (ew.convert_element_type_p, ew.select_n_p, ew.clamp_p, ad.add_any_p):
  core.sharding_rules[_p] = elementwise(_p)
for _p in (reductions.reduce_sum_p, reductions.reduce_prod_p, reductions.reduce_max_p,
           reductions.reduce_min_p, reductions.reduce_and_p, reductions.reduce_or_p,
           reductions.reduce_xor_p, reductions.argmax_p, reductions.argmin_p):
  core.sharding_rules[_p] = _reduction
for _p in (shapes.rev_p, indexing.dynamic_update_slice_p, ew.to_edtype_p,
           ew.from_edtype_p):
  core.sharding_rules[_p] = _same
core.sharding_rules.update({
    shapes.broadcast_in_dim_p: _broadcast_in_dim,
    shapes.transpose_p: _transpose,
    shapes.squeeze_p: _squeeze,
    shapes.reshape_p: _reshape,
    shapes.concatenate_p: _concatenate,
    shapes.slice_p: _sliced,
    shapes.pad_p: _sliced,
    indexing.dynamic_slice_p: _sliced,
    indexing.gather_p: _gather,
    reductions.dot_general_p: _dot_general,
    convolution.conv_general_dilated_p: _conv,
    sc.sharding_constraint_p: _constraint,
})
