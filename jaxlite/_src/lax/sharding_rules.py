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

import math
import threading

from jaxlite._src.base import errors
from jaxlite._src.core import core
from jaxlite._src.lax import ad_checkpoint
from jaxlite._src.lax import bits
from jaxlite._src.lax import call
from jaxlite._src.lax import callbacks
from jaxlite._src.lax import convolution
from jaxlite._src.lax import custom_derivatives
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.lax import fft
from jaxlite._src.lax import indexing
from jaxlite._src.lax import linalg
from jaxlite._src.lax import parallel
from jaxlite._src.lax import prng
from jaxlite._src.lax import reductions
from jaxlite._src.lax import rng
from jaxlite._src.lax import shapes
from jaxlite._src.lax import sharding_constraint as sc
from jaxlite._src.lax import sorting
from jaxlite._src.lax import special
from jaxlite._src.lax import windowed
from jaxlite._src.transforms import ad


# While ``auto_layouts`` runs a rule (in this thread): conflicts are resolved as XLA's
# partitioner resolves them over Auto axes, instead of raising.
_partitioner = threading.local()


def _resolving() -> bool:
  return getattr(_partitioner, "on", False)


def auto_layouts(prim, avals_in, avals_out, params) -> list:
  """Per output of ``prim``, where XLA's partitioner puts its split over Auto mesh axes,
  given operands split as ``avals_in``'s specs say (one entry per dimension, as in a
  type): the primitive's rule of sharding in types, with a split named twice kept where
  it comes first, the first of two conflicting operand splits kept, a contraction split
  on both sides reduced, and an operation along a split dimension keeping the split. A
  result the rule has no place for is unsplit (all None); None for a primitive without a
  rule.
  """
  rule = core.sharding_rules.get(prim)
  if rule is None or rule is _shape_rules:
    return [None] * len(avals_out)
  _partitioner.on = True
  try:
    return [(None,) * len(o.shape) if spec is None else spec
            for o, spec in zip(avals_out, rule(avals_in, avals_out, **params))]
  except errors.ShardingTypeError:
    return [(None,) * len(o.shape) for o in avals_out]
  finally:
    _partitioner.on = False


def _spec(aval) -> tuple:
  return getattr(aval, "spec", None) or (None,) * len(aval.shape)


def _axes(entry) -> tuple:
  return () if entry is None else entry if isinstance(entry, tuple) else (entry,)


def _checked(prim_name, avals_in, aval_out, spec):
  """``spec``, after JAX's check that no mesh axis splits two dimensions."""
  seen = [a for e in spec for a in _axes(e)]
  if len(seen) != len(set(seen)) and _resolving():   # (the first split of an axis kept)
    kept, out = set(), []
    for e in spec:
      out.append(None if e is None or set(_axes(e)) & kept else e)
      kept.update(_axes(e))
    return tuple(out)
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
        if _resolving():
          continue
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
  """JAX's rule: dimensions of length 1 come and go unsplit; a dimension split into
  several hands its mesh axes, major first, to the new dimensions they divide; several
  dimensions merged into one take their axes in order (an unsplit one may only follow
  them). Anything else, or a split axis that does not divide, has no place:
  ShardingTypeError, JAX's message."""
  if sharding is not None:
    return [core.aval_rules["explicit_spec"](sharding, len(new_sizes))]
  x = avals_in[0]
  spec, old, new = _spec(x), tuple(x.shape), tuple(new_sizes)
  if all(e is None for e in spec):
    return [None]
  try:
    return [_reshaped(x, spec, old, new, dimensions)]
  except _Unsupported:
    if _resolving():   # (XLA's partitioner places what it can)
      return [_regrouped(spec, old, new)]
    raise errors.ShardingTypeError(
        "This reshape is not supported. Please specify the sharding of the output via the "
        "`out_sharding` argument of jax.lax.reshape. Got operand type: "
        f"{x.str_short()}, new sizes: {new}") from None


def _reshaped(x, spec, old, new, dimensions) -> tuple:
  """_reshape's layout, or _Unsupported."""

  sizes = dict(zip(x.mesh.axis_names, x.mesh.axis_sizes)) if x.mesh is not None else {}

  def handed_out(axes, lengths):   # the axes, in order, to the lengths they divide
    axes, out = iter(axes), []
    for n in lengths:
      mine = []
      while n > 1 and (axis := next(axes, None)) is not None:
        n, rest = divmod(n, sizes.get(axis, 1))
        if rest:
          raise _Unsupported
        mine.append(axis)
      out.append(None if not mine else mine[0] if len(mine) == 1 else tuple(mine))
    if next(axes, None) is not None:
      raise _Unsupported
    return out

  if [n for n in old if n != 1] == [n for n in new if n != 1]:
    kept = iter(e for n, e in zip(old, spec) if n != 1)
    return tuple(None if n == 1 else next(kept) for n in new)
  split, merged = _one_axis_groups(old, new), _one_axis_groups(new, old)
  out = []
  if split is not None:
    for group, e in zip(split, spec):
      if not isinstance(group, list):
        out.append(e)
      elif e is None:
        out += [None] * len(group)
      elif dimensions is not None:
        raise _Unsupported
      else:
        out += handed_out(_axes(e), group)
    return tuple(out)
  if merged is not None:
    entries = iter(spec)
    for n, group in zip(new, merged):
      if not isinstance(group, list):
        out.append(next(entries))
        continue
      axes = [a for e in [next(entries) for _ in group] for a in (_axes(e) or (None,))]
      while axes and axes[-1] is None:
        axes.pop()
      if not axes:
        out.append(None)
      elif dimensions is not None or None in axes:
        raise _Unsupported
      else:
        out += handed_out(axes, [n])
    return tuple(out)
  raise _Unsupported


def _regrouped(spec, old, new) -> tuple:
  """Over Auto axes, where the partitioner keeps splits through any reshape: per group of
  dimensions that becomes a group of the result, the split of its major dimension goes to
  the result's first dimension longer than 1 (``(8@x,4@y) -> (2@x,4,2@y,2)``); a minor
  dimension's split is dropped."""
  out = [None] * len(new)
  i = j = 0
  while i < len(old) and j < len(new):
    gi, gj, a, b = [i], [j], old[i], new[j]
    while a != b:
      if a < b:
        i += 1
        gi.append(i)
        a *= old[i]
      else:
        j += 1
        gj.append(j)
        b *= new[j]
    major = next((d for d in gi if old[d] != 1), gi[0])
    out[next((d for d in gj if new[d] != 1), gj[0])] = spec[major]
    i, j = i + 1, j + 1
  return tuple(out)


class _Unsupported(Exception):
  """A reshape JAX's rule has no layout for."""


def _one_axis_groups(shape, sizes):
  """If ``sizes`` splits one dimension of ``shape`` into several and keeps the others:
  per dimension of ``shape``, its length, or the list of lengths it becomes (trailing
  length-1 dimensions of both kept apart). None if it is no such split; _Unsupported if
  it splits two."""
  if len(sizes) <= len(shape):
    return None
  ones = 0
  while shape and shape[-1] == 1 and sizes[-1] == 1:
    ones, shape, sizes = ones + 1, shape[:-1], sizes[:-1]
  out, i, j, splits = [], 0, 0, 0
  while j < len(sizes):
    if i >= len(shape):
      return None
    if shape[i] == sizes[j]:
      out.append(shape[i])
    else:
      splits += 1
      if splits > 1:
        raise _Unsupported
      group = [sizes[j]]
      # (a group also takes the length-1 dimensions after it, unless the next one of
      # ``shape`` starts there)
      while math.prod(group) != shape[i] or (j + 1 < len(sizes) and sizes[j + 1] == 1):
        if math.prod(group) > shape[i]:
          return None
        if (math.prod(group) == shape[i] and i + 1 < len(shape) and j + 1 < len(sizes)
            and sizes[j + 1] == shape[i + 1]):
          break
        j += 1
        if j >= len(sizes):
          return None
        group.append(sizes[j])
      out.append(group)
    i, j = i + 1, j + 1
  out += [1] * ones
  return out if len(out) == len(shape) + ones else None


def _concatenate(avals_in, avals_out, *, dimension):
  """JAX's rule: every split operand split alike, the result so."""
  if _resolving():
    return [_merged("concatenate", avals_in, avals_out[0])]
  return [_alike(avals_in, avals_in, "All operands should have the same sharding. Got "
                 "shardings {}")]


def _select_n(avals_in, avals_out, **_):
  """JAX's rule: the split cases split alike, and a ``which`` that is no scalar split as
  they are; the result as they are."""
  if _resolving():
    return [_merged("select_n", avals_in, avals_out[0])]
  which, cases = avals_in[0], avals_in[1:]
  spec = _alike(cases, cases, "select cases must have the same shardings, got [{}].")
  if which.shape and getattr(which, "spec", None) is not None and _spec(which) != _spec(
      _first_split(cases) or which):
    raise errors.ShardingTypeError(
        "select `which` must be scalar or have the same sharding as cases, got `which` "
        f"sharding {_sharding_of(which)} but case sharding {_sharding_of(cases[0])}.")
  return [spec]


def _first_split(avals):
  return next((a for a in avals if getattr(a, "spec", None) is not None), None)


def _alike(avals, shown, message):
  """The spec the split ``avals`` share (None if none is split); ShardingTypeError with
  ``message`` naming ``shown``'s shardings if two differ."""
  first = _first_split(avals)
  if first is None:
    return None
  if any(getattr(a, "spec", None) is not None and a.spec != first.spec for a in avals):
    raise errors.ShardingTypeError(message.format(", ".join(map(_sharding_of, shown))))
  return first.spec


def _sharding_of(aval) -> str:
  return str(core.aval_rules["sharding"](aval))


def _parts(mesh, entry) -> int:
  """How many pieces a dimension split over ``entry``'s mesh axes is cut into."""
  sizes = dict(zip(mesh.axis_names, mesh.axis_sizes)) if mesh is not None else {}
  parts = 1
  for axis in _axes(entry):
    parts *= sizes.get(axis, 1)
  return parts


def _varying(name):
  """JAX's rule of an operation whose result may be shorter or longer than its operand
  (slices, pads, windows): every output keeps the operand's split, which must still cut
  each changed dimension evenly."""
  def rule(avals_in, avals_out, **_):
    x = avals_in[0]
    spec = _spec(x)
    for d, (n, m, e) in enumerate(zip(x.shape, avals_out[0].shape, spec)):
      if n != m and e is not None and m % _parts(x.mesh, e):
        raise errors.ShardingTypeError(
            f"{name} on sharded dims where out dim ({m}) is not divisible by mesh axes "
            f"({_parts(x.mesh, e)}) with spec ({e}) is not implemented. Got input "
            f"type={x.str_short(True)} and output shape={avals_out[0].shape}")
    return [spec] * len(avals_out)
  return rule


def _dot_general(avals_in, avals_out, *, dimension_numbers, out_sharding, **_):
  """JAX's rule: batch dimensions and contracting dimensions split alike where both are
  split; a contraction split on both sides has no unambiguous result unless
  ``out_sharding`` names one; the result takes the lhs's batch splits, then each
  operand's free dimensions'."""
  lhs, rhs = avals_in
  resolving = _resolving()
  if not resolving and lhs.mesh is not None and rhs.mesh is not None and lhs.mesh != rhs.mesh:
    raise errors.ShardingTypeError(
        f"Mesh of both lhs and rhs should match. Got lhs: {lhs.mesh} and rhs: {rhs.mesh}")
  if out_sharding is not None:   # asked for: the operands' splits need not agree
    return [core.aval_rules["explicit_spec"](out_sharding, len(avals_out[0].shape))]
  (lc, rc), (lb, rb) = dimension_numbers
  ls, rs = _spec(lhs), _spec(rhs)
  lbs, rbs = tuple(ls[d] for d in lb), tuple(rs[d] for d in rb)
  lcs, rcs = tuple(ls[d] for d in lc), tuple(rs[d] for d in rc)
  if resolving:   # (a split contraction is reduced; the lhs's batch splits kept)
    lbs = tuple(l if l is not None else r for l, r in zip(lbs, rbs))
  _check_specs_match(lbs, rbs, "dot_general requires lhs batch dimensions and rhs batch "
                     f"dimensions to have the consistent sharding, got {lbs} and {rbs}.")
  _check_specs_match(lcs, rcs, "dot_general requires contracting dimensions to have "
                     f"consistent sharding, got {lcs} and {rcs}.")
  if not resolving and any(l is not None and r is not None for l, r in zip(lcs, rcs)):
    raise errors.ShardingTypeError(
        "Contracting dimensions are sharded and it is ambiguous how the output should be "
        "sharded. Please specify the output sharding via the `out_sharding` parameter. "
        f"Got lhs_contracting_spec={lcs} and rhs_contracting_spec={rcs}")
  lfree = [ls[d] for d in range(len(lhs.shape)) if d not in lc and d not in lb]
  rfree = [rs[d] for d in range(len(rhs.shape)) if d not in rc and d not in rb]
  return [_checked("dot_general", avals_in, avals_out[0], lbs + tuple(lfree + rfree))]


def _check_specs_match(lhs_spec, rhs_spec, message):
  if not _resolving() and any(l is not None and r is not None and l != r
                              for l, r in zip(lhs_spec, rhs_spec)):
    raise errors.ShardingTypeError(message)


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
  if _spec(x)[axis] is not None and not _resolving():
    raise errors.ShardingTypeError(
        "Input should be unsharded over the axis being reduced. Got input "
        f"type={x.str_short()} and axis={axis}")
  return [_spec(x)]


def _constraint(avals_in, avals_out, *, sharding):
  return [core.aval_rules["explicit_spec"](sharding, len(avals_in[0].shape))]


def _given(avals_in, avals_out, *, sharding, **_):
  """A result laid out as its ``sharding`` param says (iota), unsplit without one."""
  return [None if sharding is None else
          core.aval_rules["explicit_spec"](sharding, len(avals_out[0].shape))]


def _operand(avals_in, avals_out, **_):
  """The operand's split, whatever lengths change (JAX's fft keeps its operand's)."""
  return [_spec(avals_in[0])]


def _identity(avals_in, avals_out, **_):
  return [_spec(a) for a in avals_in]


def _shape_rules(avals_in, avals_out, **_):
  """The types the primitive's shape rule gives (their results are typed by the caller:
  callbacks' result shapes, collectives inside shard_map)."""
  return [getattr(o, "spec", None) for o in avals_out]


def _linalg(name, ranks):
  """JAX's rule of the linear algebra primitives: operands split on their batch
  dimensions alone, all alike; every output split as they are, on its leading ones."""
  def rule(avals_in, avals_out, **_):
    batches = []
    for i, (rank, a) in enumerate(zip(ranks, avals_in)):
      spec = _spec(a)
      batch, rest = spec[:len(spec) - rank], spec[len(spec) - rank:]
      if any(e is not None for e in rest):
        raise errors.ShardingTypeError(
            f"Input {i} to {name} must be unsharded on non-batch dimensions, but got "
            f"{_pspec(spec)}.")
      batches.append(batch)
    if any(b != batches[0] for b in batches[1:]):
      raise errors.ShardingTypeError(
          f"All inputs to {name} must have the same batch sharding, but got "
          f"{batches}.")
    return [batches[0] + (None,) * (len(o.shape) - len(batches[0])) for o in avals_out]
  return rule


def _pspec(spec) -> str:
  """A spec as JAX prints a PartitionSpec."""
  return "P(" + ", ".join(map(repr, spec)) + ("," if len(spec) == 1 else "") + ")"


def _triangular_solve(avals_in, avals_out, *, left_side, transpose_a, **_):
  a, b = avals_in
  sa, sb = _spec(a), _spec(b)
  if sa[:-2] != sb[:-2]:
    raise errors.ShardingTypeError(
        "All inputs to triangular_solve must have the same batch sharding, but got "
        f"{sa[:-2]} and {sb[:-2]}.")
  if sa[-2:][left_side ^ transpose_a] is not None:
    raise errors.ShardingTypeError(
        "triangular solve input `a` must be unsharded on the contracting axis, but got "
        f"{_pspec(sa)} with left_side={left_side} and transpose_a={transpose_a}.")
  if sb[-2:][not left_side] is not None:
    raise errors.ShardingTypeError(
        "triangular solve input `b` must be unsharded on the contracting axis, but got "
        f"{_pspec(sb)} with left_side={left_side} and transpose_a={transpose_a}.")
  out = ([sa[-2:][transpose_a], sb[-2:][1]] if left_side
         else [sb[-2:][0], sa[-2:][not transpose_a]])
  return [sa[:-2] + tuple(out)]


def _bitcast(avals_in, avals_out, *, new_dtype):
  """A narrower dtype adds a minor unsplit dimension, a wider one drops it."""
  spec, old, new = _spec(avals_in[0]), avals_in[0].dtype.itemsize, avals_out[0].dtype.itemsize
  return [spec if old == new else spec + (None,) if old > new else spec[:-1]]


def _along(what):
  """Sort's and top_k's rule: no operand split along the dimension worked on, all
  operands split alike (JAX's messages); the results as the operands."""
  def rule(avals_in, avals_out, **params):
    axis = params["dimension" if what == "sort" else "axis"]
    specs = [_spec(a) for a in avals_in if getattr(a, "spec", None) is not None]
    if _resolving():
      return [_spec(avals_in[0])] * len(avals_out)
    for spec in specs:
      if spec[axis] is not None:
        raise errors.ShardingTypeError(
            "Arguments to sort must be unsharded over the sorting dimension. Got arg "
            f"sharding={_sharding(spec, avals_in)} and sorting dimension={axis}"
            if what == "sort" else
            "The input should be unsharded over the axis along which to compute the top_k "
            f"values. Got input type={avals_in[0].str_short()} and axis={axis}")
      if spec != specs[0]:
        raise errors.ShardingTypeError(
            "Arguments to sort must have equal shardings, got: "
            + " ".join(_sharding(s, avals_in) for s in specs))
    return [_spec(avals_in[0])] * len(avals_out)
  return rule


def _sharding(spec, avals) -> str:
  """How JAX prints the sharding of a type split as ``spec`` (over its abstract mesh)."""
  mesh = next(a.mesh for a in avals if getattr(a, "spec", None) is not None)
  return repr(core.aval_rules["sharding"](core.ShapedArray((1,) * len(spec), "float32",
                                                           spec=spec, mesh=mesh)))


def _reduce(avals_in, avals_out, *, dimensions, **_):
  operands = avals_in[:len(avals_in) // 2]
  return [tuple(e for d, e in enumerate(_spec(a)) if d not in dimensions) for a in operands]


def _extended(avals_in, avals_out, **_):
  """The first operand's split, then unsplit trailing dimensions (random_bits and
  random_split append their shape; unwrapping a key appends its data's)."""
  spec = _spec(avals_in[0])
  return [spec + (None,) * (len(o.shape) - len(spec)) for o in avals_out]


def _truncated(avals_in, avals_out, **_):
  """Wrapping key data: its split less the key's trailing dimensions."""
  return [_spec(avals_in[0])[:len(avals_out[0].shape)]]


def _rng_bit_generator(avals_in, avals_out, *, out_sharding, **_):
  bits = (None if out_sharding is None else
          core.aval_rules["explicit_spec"](out_sharding, len(avals_out[1].shape)))
  return [_spec(avals_in[0]), bits]


def _scatter(avals_in, avals_out, *, dimension_numbers, **_):
  """JAX's scatter rule (a gather read backwards): batch dimensions and the operand's
  window dimensions present in the updates resolve to one split; the dimensions where
  updates overlap, and the index vectors, must be unsplit."""
  operand, indices, updates = avals_in[:3]
  dn = dimension_numbers
  os_, is_, us = list(_spec(operand)), _spec(indices), _spec(updates)
  index_vector_dim = len(indices.shape) - 1
  in_updates = list(range(index_vector_dim))
  for i in dn.update_window_dims:
    in_updates.insert(i, None)
  updates_batch = [in_updates.index(i) for i in dn.scatter_indices_batching_dims]
  window = [i for i in range(len(operand.shape))
            if i not in dn.inserted_window_dims and i not in dn.operand_batching_dims]
  ok = (all(len({a for a in (os_[o], is_[i], us[u]) if a is not None}) <= 1
            for o, i, u in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims,
                               updates_batch))
        and all((updates.shape[u] == operand.shape[o] and us[u] == os_[o])
                or (us[u] is None and os_[o] is None)
                for u, o in zip(dn.update_window_dims, window))
        and all(os_[i] is None for i in dn.inserted_window_dims)
        and all(e is None for d, e in enumerate(us)
                if d not in updates_batch and d not in dn.update_window_dims)
        and all(e is None for d, e in enumerate(is_[:index_vector_dim])
                if d not in dn.scatter_indices_batching_dims)
        and is_[index_vector_dim] is None)
  if not ok:
    raise errors.ShardingTypeError(
        "Use `.at[...].set/add/mul/...(out_sharding=)` to provide output PartitionSpec "
        "for the scatter update as out sharding could not be resolved unambiguously (or "
        f"would require collectives on inputs). Got operand={operand!r}, "
        f"indices={indices!r}, updates={updates!r}")
  for o, i, u in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims,
                     updates_batch):
    os_[o] = os_[o] or is_[i] or us[u]
  for u, o in zip(dn.update_window_dims, window):
    os_[o] = os_[o] or us[u]
  return [tuple(os_)]


def _primitives_of(module) -> list:
  """The primitives ``module`` defines (so that a new one gets its family's rule)."""
  return [v for v in vars(module).values() if isinstance(v, core.Primitive)]


core.sharding_rules.update({p: elementwise(p) for p in [*ew.specs, *ew.family_primitives]})
for _p in (sorting.cumsum_p, sorting.cumprod_p, sorting.cummax_p, sorting.cummin_p,
           sorting.cumlogsumexp_p):
  core.sharding_rules[_p] = _cumulative
for _p in (ew.convert_element_type_p, ew.clamp_p, ad.add_any_p):
  core.sharding_rules[_p] = elementwise(_p)
for _p in (reductions.reduce_sum_p, reductions.reduce_prod_p, reductions.reduce_max_p,
           reductions.reduce_min_p, reductions.reduce_and_p, reductions.reduce_or_p,
           reductions.reduce_xor_p, reductions.argmax_p, reductions.argmin_p):
  core.sharding_rules[_p] = _reduction
for _p in (shapes.rev_p, indexing.dynamic_update_slice_p, ew.to_edtype_p,
           ew.from_edtype_p):
  core.sharding_rules[_p] = _same
for _p, _name in ((shapes.slice_p, "slicing"), (shapes.pad_p, "padding"),
                  (indexing.dynamic_slice_p, "dynamic_slice"),
                  *((_w, "reduce_window") for _w in (
                      windowed.reduce_window_p, windowed.reduce_window_sum_p,
                      windowed.reduce_window_max_p, windowed.reduce_window_min_p))):
  core.sharding_rules[_p] = _varying(_name)
for _p in _primitives_of(indexing):
  if _p.name.startswith("scatter"):
    core.sharding_rules[_p] = _scatter
for _p in _primitives_of(linalg):   # (each takes one stack of matrices)
  core.sharding_rules[_p] = _linalg(_p.name, (2,))
# (the callbacks' result types are given them; collectives run inside shard_map, on
# manual axes)
for _p in (*_primitives_of(callbacks), *_primitives_of(parallel), custom_derivatives.custom_lin_p):
  core.sharding_rules[_p] = _shape_rules
for _p in (call.optimization_barrier_p, custom_derivatives.stop_gradient_p,
           prng.random_clone_p, ad_checkpoint.name_p):
  core.sharding_rules[_p] = _identity
for _p in (prng.random_fold_in_p, rng.threefry2x32_p):
  core.sharding_rules[_p] = elementwise(_p)
for _p in (prng.random_bits_p, prng.random_split_p, prng.random_unwrap_p,
           prng.random_seed_p):
  core.sharding_rules[_p] = _extended
core.sharding_rules.update({
    shapes.broadcast_in_dim_p: _broadcast_in_dim,
    shapes.transpose_p: _transpose,
    shapes.squeeze_p: _squeeze,
    shapes.reshape_p: _reshape,
    shapes.concatenate_p: _concatenate,
    ew.select_n_p: _select_n,
    shapes.iota_p: _given,
    indexing.gather_p: _gather,
    reductions.dot_general_p: _dot_general,
    reductions.reduce_p: _reduce,
    convolution.conv_general_dilated_p: _conv,
    sc.sharding_constraint_p: _constraint,
    sc.layout_constraint_p: _same,   # (a layout in memory: the split is unchanged)
    linalg.triangular_solve_p: _triangular_solve,
    bits.bitcast_convert_type_p: _bitcast,
    ew.conj_p: elementwise(ew.conj_p),
    sorting.sort_p: _along("sort"),
    sorting.top_k_p: _along("top_k"),
    prng.random_wrap_p: _truncated,
    rng.rng_bit_generator_p: _rng_bit_generator,
    special.random_gamma_p: lambda avals_in, avals_out, **_: [_spec(avals_in[1])],
    fft.fft_p: _operand,
})
