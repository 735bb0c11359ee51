"""Shape primitives: broadcast, reshape, transpose, squeeze, concatenate, slicing, iota.

Every param is a static tuple of Python ints, so it can sit in a cache key and print in
a jaxpr exactly as JAX prints it.
"""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.core.literals import literal_value
from jaxlite._src.base import dtypes
from jaxlite._src.core.array import Array, PublicArray
from jaxlite._src.core.core import Primitive, ShapedArray
from jaxlite._src.lax import elementwise as lax_ew
from jaxlite._src.lax.base import operand as _operand
from jaxlite._src.lax.sharding_constraint import (canonicalize_out_sharding, like_sharding,
                                                  constrain)
from jaxlite._src.passes import algebraic
from jaxlite._src.transforms import lax_ops


def _ints(name, values) -> tuple:
  try:
    return tuple(operator.index(v) for v in values)
  except TypeError:
    raise TypeError(f"{name} requires static integer arguments, got {values!r}. Shapes and "
                    "axes must be Python ints, not traced values.") from None


def _hide_none(*names):
  return lambda k, v, params: k in names and v is None


# -- broadcast_in_dim
broadcast_in_dim_p = Primitive("broadcast_in_dim")


@broadcast_in_dim_p.def_abstract_eval
def _broadcast_in_dim_rule(operand, *, shape, broadcast_dimensions, sharding):
  if len(broadcast_dimensions) != operand.ndim:
    raise TypeError(f"broadcast_in_dim broadcast_dimensions must have length equal to "
                    f"operand ndim; got broadcast_dimensions {broadcast_dimensions} for "
                    f"operand ndim {operand.ndim}.")
  for i, d in enumerate(broadcast_dimensions):
    if not 0 <= d < len(shape) or operand.shape[i] not in (1, shape[d]):
      raise TypeError(f"broadcast_in_dim operand dimension sizes must either be 1, or be "
                      f"equal to their corresponding dimensions in the target broadcast "
                      f"shape; got operand of shape {operand.shape}, target broadcast shape "
                      f"{shape}, broadcast_dimensions {broadcast_dimensions}")
  if list(broadcast_dimensions) != sorted(set(broadcast_dimensions)):
    raise TypeError("broadcast_in_dim broadcast_dimensions must be strictly increasing; "
                    f"got broadcast_dimensions {broadcast_dimensions}")
  return ShapedArray(shape, operand.dtype, operand.weak_type)


core.hidden_params[broadcast_in_dim_p] = (
    lambda k, v, params: k in ("shape", "sharding") or (k == "broadcast_dimensions" and not v))


def broadcast_in_dim(operand, shape, broadcast_dimensions, *, out_sharding=None):
  """Broadcast ``operand`` to ``shape``; operand axis i becomes axis broadcast_dimensions[i].
  ``out_sharding`` (a NamedSharding, or a PartitionSpec of the mesh in context) lays the
  result out so."""
  shape = _ints("broadcast_in_dim", shape)
  dims = _ints("broadcast_in_dim", broadcast_dimensions)
  sharding = canonicalize_out_sharding(out_sharding, "broadcast_in_dim")
  if (sharding is None and core.get_aval(operand).shape == shape
      and dims == tuple(range(len(shape))) and isinstance(operand, PublicArray)):
    return operand
  return broadcast_in_dim_p.bind(operand, shape=shape, broadcast_dimensions=dims,
                                 sharding=sharding)


def broadcast(operand, sizes, *, out_sharding=None):
  """Add leading dimensions of ``sizes`` to ``operand``; ``out_sharding`` as in
  ``broadcast_in_dim``."""
  ndim = core.get_aval(operand).ndim
  sizes = _ints("broadcast", sizes)
  shape = sizes + core.get_aval(operand).shape
  return broadcast_in_dim(operand, shape, range(len(sizes), len(sizes) + ndim),
                          out_sharding=out_sharding)


def expand_dims(array, dimensions):
  """Insert size-1 axes at ``dimensions`` (a broadcast_in_dim, as in JAX)."""
  shape = list(core.get_aval(array).shape)
  ndim_out = len(shape) + len(dimensions)
  dims = sorted(_canonical_axis(d, ndim_out) for d in dimensions)
  for d in dims:
    shape.insert(d, 1)
  kept = [i for i in range(ndim_out) if i not in dims]
  return broadcast_in_dim(array, shape, kept)


def _canonical_axis(axis, ndim):
  axis = operator.index(axis)
  if not -ndim <= axis < ndim:
    raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
  return axis % ndim


# -- reshape
reshape_p = Primitive("reshape")


@reshape_p.def_abstract_eval
def _reshape_rule(operand, *, new_sizes, dimensions, sharding):
  if int(np.prod(new_sizes, dtype=np.int64)) != operand.size:
    raise TypeError(f"reshape total size must be unchanged, got new_sizes {new_sizes} for "
                    f"shape {operand.shape}.")
  return ShapedArray(new_sizes, operand.dtype, operand.weak_type)


def reshape(operand, new_sizes, dimensions=None, *, out_sharding=None):
  """Reshape ``operand`` to ``new_sizes`` (after transposing by ``dimensions``, if given).
  ``out_sharding`` (a NamedSharding, or a PartitionSpec of the mesh in context) lays the
  result out so."""
  new_sizes = _ints("reshape", new_sizes)
  dims = None if dimensions is None else _ints("reshape", dimensions)
  sharding = canonicalize_out_sharding(out_sharding, "reshape")
  if dims is not None and dims != tuple(range(len(dims))):
    operand = transpose(operand, dims)
  if (sharding is None and core.get_aval(operand).shape == new_sizes
      and isinstance(operand, PublicArray)):
    return operand
  out = reshape_p.bind(operand, new_sizes=new_sizes, dimensions=None, sharding=sharding)
  return out if sharding is None else constrain(out, sharding)


# -- transpose
transpose_p = Primitive("transpose")


@transpose_p.def_abstract_eval
def _transpose_rule(operand, *, permutation):
  if sorted(permutation) != list(range(operand.ndim)):
    raise TypeError(f"transpose permutation isn't a permutation of operand dimensions, got "
                    f"permutation {permutation} for operand shape {operand.shape}.")
  return ShapedArray(tuple(operand.shape[p] for p in permutation), operand.dtype,
                     operand.weak_type)


def transpose(operand, permutation):
  """Permute the axes of ``operand``."""
  permutation = _ints("transpose", permutation)
  # as JAX: only a JAX value comes back as it is; a NumPy one becomes an Array (of its
  # canonical dtype)
  if permutation == tuple(range(len(permutation))) and \
      len(permutation) == core.get_aval(operand).ndim and isinstance(operand, PublicArray):
    return operand
  return transpose_p.bind(operand, permutation=permutation)


def _reshape_chain(eqn, invars, producer, uses):
  # a reshape of reshapes and squeezes reads the first operand; to its own shape, is it
  (x,) = invars
  if eqn.params["dimensions"] is not None:
    return None
  while (source := producer.get(x)) is not None and (
      source.primitive is squeeze_p
      or source.primitive is reshape_p and source.params["dimensions"] is None):
    x = source.invars[0]
  if algebraic.same_type(x.aval, eqn.outvars[0].aval):
    return x
  return eqn._replace(invars=[x]) if x is not invars[0] else None


def _identity_transpose(eqn, invars, producer, uses):
  perm = eqn.params["permutation"]
  return invars[0] if tuple(perm) == tuple(range(len(perm))) else None


def _filled(value, aval, eqn):
  """A broadcast_in_dim equation filling a new variable of ``aval`` with atom ``value``
  (rank 0, or of ``aval``'s rank with size-1 axes as lax's implicit broadcasting allows)
  and that variable; no equation when ``value`` has ``aval``'s shape already."""
  if type(value) is not core.Literal and value.aval.shape == aval.shape:
    return [], value
  out = core.Var(aval)
  dims = tuple(range(value.aval.ndim))
  return [core.JaxprEqn([value], [out], broadcast_in_dim_p,
                        dict(shape=aval.shape, broadcast_dimensions=dims, sharding=None),
                        eqn.source_info)], out


def _times_converted_bool(eqn, invars, producer, uses):
  """``x * convert(p)`` for a bool ``p`` of the output's shape is ``select(p, x, 0)``, as
  XLA's simplifier rewrites it (registered on mul): jitted, JAX gives ``inf * False == 0``
  on every backend, and numpyro's ``binary_cross_entropy_with_logits`` relies on it."""
  out = eqn.outvars[0].aval
  for x, c in (invars, invars[::-1]):
    convert = producer.get(c) if type(c) is core.Var else None
    if (convert is not None and convert.primitive is lax_ew.convert_element_type_p
        and convert.invars[0].aval.dtype == np.bool_ and c.aval.shape == out.shape):
      zero_aval = ShapedArray((), out.dtype)
      zero = core.Literal(literal_value(np.zeros((), out.dtype), zero_aval), zero_aval)
      fill_zero, zeros = _filled(zero, out, eqn)
      fill_x, x = _filled(x, out, eqn)
      return [*fill_zero, *fill_x,
              core.JaxprEqn([convert.invars[0], zeros, x], eqn.outvars, lax_ew.select_n_p, {},
                            eqn.source_info)]
  return None


algebraic.register(reshape_p, _reshape_chain)
algebraic.register(transpose_p, _identity_transpose)
algebraic.register(lax_ew.mul_p, _times_converted_bool)


# -- squeeze
squeeze_p = Primitive("squeeze")


@squeeze_p.def_abstract_eval
def _squeeze_rule(operand, *, dimensions):
  for d in dimensions:
    if not 0 <= d < operand.ndim or operand.shape[d] != 1:
      raise ValueError(f"cannot select an axis to squeeze out which has size not equal to "
                       f"one, got shape={operand.shape} and dimensions={dimensions}")
  shape = tuple(s for i, s in enumerate(operand.shape) if i not in dimensions)
  return ShapedArray(shape, operand.dtype, operand.weak_type)


def squeeze(array, dimensions):
  """Remove the size-1 axes ``dimensions``."""
  ndim = core.get_aval(array).ndim
  dims = tuple(sorted(_canonical_axis(d, ndim) for d in dimensions))
  if not dims:
    return array
  return squeeze_p.bind(array, dimensions=dims)


# -- concatenate
concatenate_p = Primitive("concatenate")


@concatenate_p.def_abstract_eval
def _concatenate_rule(*operands, dimension):
  if not operands:
    raise TypeError("concatenate requires at least one operand")
  first = operands[0]
  if any(o.dtype != first.dtype for o in operands):
    raise TypeError("Cannot concatenate arrays with different dtypes, got "
                    + ", ".join(o.dtype.name for o in operands))
  if not 0 <= dimension < first.ndim:
    raise ValueError(f"concatenate dimension out of bounds: dimension {dimension} for "
                     f"shapes {', '.join(str(o.shape) for o in operands)}.")
  for o in operands:
    if o.ndim != first.ndim or any(a != b for i, (a, b) in enumerate(zip(o.shape, first.shape))
                                   if i != dimension):
      raise TypeError("Cannot concatenate arrays with shapes that differ in dimensions other "
                      f"than the one being concatenated: concatenating along dimension "
                      f"{dimension} for shapes {', '.join(str(o.shape) for o in operands)}.")
  shape = list(first.shape)
  shape[dimension] = sum(o.shape[dimension] for o in operands)
  return ShapedArray(shape, first.dtype, all(o.weak_type for o in operands))


def concatenate(operands, dimension):
  """Join ``operands`` (one dtype) along ``dimension``."""
  operands = list(operands)
  if len(operands) == 1:
    return operands[0]
  return concatenate_p.bind(*operands, dimension=operator.index(dimension))


# -- slice
slice_p = Primitive("slice")


@slice_p.def_abstract_eval
def _slice_rule(operand, *, start_indices, limit_indices, strides):
  n = operand.ndim
  if len(start_indices) != n or len(limit_indices) != n:
    raise TypeError(f"slice start_indices and limit_indices must have length equal to the "
                    f"number of dimensions of the operand, got {start_indices}, "
                    f"{limit_indices} for shape {operand.shape}.")
  strides = strides or (1,) * n
  shape = []
  for size, lo, hi, st in zip(operand.shape, start_indices, limit_indices, strides):
    if not 0 <= lo <= hi <= size or st < 1:
      raise TypeError(f"slice indices out of range: start_indices={start_indices}, "
                      f"limit_indices={limit_indices}, strides={strides} for operand shape "
                      f"{operand.shape}.")
    shape.append(0 if hi <= lo else (hi - lo + st - 1) // st)
  return ShapedArray(shape, operand.dtype, operand.weak_type)


def slice(operand, start_indices, limit_indices, strides=None):
  """The static slice ``operand[start:limit:stride]`` along every axis."""
  start = _ints("slice", start_indices)
  limit = _ints("slice", limit_indices)
  strides = None if strides is None else _ints("slice", strides)
  return slice_p.bind(operand, start_indices=start, limit_indices=limit, strides=strides)


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
  """``slice`` along one axis."""
  shape = core.get_aval(operand).shape
  axis = _canonical_axis(axis, len(shape))
  start, limit, step = builtins.slice(start_index, limit_index, stride).indices(shape[axis])
  starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
  starts[axis], limits[axis], strides[axis] = start, max(limit, start), step
  return slice(operand, starts, limits, strides)



# -- rev
rev_p = Primitive("rev")


@rev_p.def_abstract_eval
def _rev_rule(operand, *, dimensions):
  if any(not 0 <= d < operand.ndim for d in dimensions) or len(set(dimensions)) != len(dimensions):
    raise ValueError(f"rev dimensions {dimensions} are invalid for shape {operand.shape}")
  return operand


def rev(operand, dimensions):
  """Reverse ``operand`` along ``dimensions``."""
  return rev_p.bind(operand, dimensions=_ints("rev", dimensions))


# -- iota
iota_p = Primitive("iota")


@iota_p.def_abstract_eval
def _iota_rule(*, dtype, shape, dimension, sharding):
  if not (dtypes.is_integer(dtype) or dtypes.is_inexact(dtype)):
    raise TypeError(f"iota does not accept dtype {np.dtype(dtype).name}. Accepted dtypes are "
                    "subtypes of integer, floating, complexfloating.")
  if not 0 <= dimension < len(shape):
    raise ValueError(f"iota dimension must be between 0 and len(shape), got {dimension} "
                     f"for shape {shape}")
  return ShapedArray(shape, dtype)


def iota(dtype, size: int):
  """``[0, 1, ..., size - 1]`` as a 1-d array of ``dtype``."""
  return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype, shape, dimension: int, *, out_sharding=None):
  """An array of ``shape`` whose values count along ``dimension``, laid out as
  ``out_sharding`` (a NamedSharding, or a PartitionSpec of the mesh in context) says."""
  sharding = canonicalize_out_sharding(out_sharding, "broadcasted_iota")
  return iota_p.bind(dtype=dtypes.canonicalize_dtype(dtype), shape=_ints("iota", shape),
                     dimension=operator.index(dimension), sharding=sharding)


# -- pad
pad_p = Primitive("pad")


@pad_p.def_abstract_eval
def _pad_rule(operand, padding_value, *, padding_config):
  if operand.dtype != padding_value.dtype or padding_value.shape:
    raise TypeError("pad requires a scalar padding value of the operand's dtype, got "
                    f"{padding_value.str_short()} for {operand.str_short()}.")
  if len(padding_config) != operand.ndim:
    raise ValueError(f"len(padding_config) must equal operand.ndim, got {padding_config} "
                     f"for shape {operand.shape}")
  shape = []
  for size, (lo, hi, interior) in zip(operand.shape, padding_config):
    if interior < 0:
      raise ValueError(f"interior padding must be non-negative, got {padding_config}")
    out = lo + hi + size + max(size - 1, 0) * interior
    if out < 0:
      raise ValueError(f"Dimension size after padding is negative for {padding_config}")
    shape.append(out)
  return ShapedArray(shape, operand.dtype, operand.weak_type)


def pad(operand, padding_value, padding_config):
  """Pad with ``(low, high, interior)`` per axis; negative low/high crop."""
  config = tuple(_ints("pad", c) for c in padding_config)
  return pad_p.bind(operand, padding_value, padding_config=config)


def broadcast_to_shape(x, shape):
  """Broadcast ``x`` to ``shape`` where x is rank 0 or has size-1 axes (lax's implicit
  broadcasting, made explicit)."""
  aval = core.get_aval(x)
  shape = tuple(shape)
  if aval.shape == shape:
    return x
  if not aval.shape:
    return broadcast_in_dim(x, shape, ())
  keep = [i for i, d in enumerate(aval.shape) if d == shape[i]]
  squeezed = squeeze(x, [i for i in range(aval.ndim) if i not in keep])
  return broadcast_in_dim(squeezed, shape, keep)


def unbroadcast(aval, ct):
  """Sum ``ct`` down to ``aval``'s shape: the transpose of ``broadcast_to_shape``."""
  ct_shape = core.get_aval(ct).shape
  if ct_shape == aval.shape:
    return ct
  if not aval.shape:
    return lax_ops.reduce_sum(ct, range(len(ct_shape)))
  dims = [i for i, (a, c) in enumerate(zip(aval.shape, ct_shape)) if a != c]
  return reshape(lax_ops.reduce_sum(ct, dims), aval.shape)


# -- arrays built from the shape primitives: jax.lax's helpers (full, tile, split, ...).
# They add no primitive, so jaxprs show what they are made of (``tile`` appears as
# ``broadcast_in_dim`` + ``reshape``, not JAX's ``tile``).
def full(shape, fill_value, dtype=None, *, sharding=None):
  """An array of ``shape`` filled with the scalar ``fill_value`` (weakly typed when
  ``dtype`` is None and ``fill_value`` is a Python scalar or weak array, as in JAX)."""
  shape = _ints("full", (shape,) if isinstance(shape, int) else shape)
  if np.ndim(fill_value) != 0:
    raise TypeError(f"full must be called with scalar fill_value, got fill_value.shape "
                    f"{np.shape(fill_value)}.")
  if dtypes.is_extended(dtype):   # filled as its rules say (JAX's)
    return dtype._rules.full(shape, fill_value, dtype)
  value = _operand(fill_value)
  weak = dtype is None and core.get_aval(value).weak_type
  want = dtypes.canonicalize_dtype(core.get_aval(value).dtype if dtype is None else dtype)
  value = lax_ew._convert_element_type(value, want, weak_type=weak)
  return broadcast_in_dim(value, shape, (), out_sharding=sharding)


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
  """An array like ``x`` (its shape and dtype unless given) filled with ``fill_value``;
  weakly typed when ``x`` is and ``dtype`` is None."""
  aval = core.get_aval(_operand(x))
  want = aval.dtype if dtype is None else dtypes.canonicalize_dtype(dtype, True)
  if dtypes.is_extended(want):   # filled as its rules say (JAX's)
    return want._rules.full(aval.shape if shape is None else tuple(shape), fill_value, want)
  want = dtypes.canonicalize_dtype(want)
  weak = dtype is None and aval.weak_type
  value = lax_ew._convert_element_type(_operand(fill_value), want, weak_type=weak)
  shape = aval.shape if shape is None else tuple(shape)
  out = broadcast_in_dim(value, shape, ())
  sharding = sharding or like_sharding(x, shape, weak)
  return out if sharding is None else constrain(out, sharding)


def empty(shape, dtype, *, out_sharding=None):
  """An array of ``shape`` and ``dtype`` whose contents are unspecified (zeros here)."""
  return full(shape, 0, dtype)


def _fill(like, value):
  """A constant of ``like``'s shape and dtype (not computed from ``like``'s values, so
  NaNs in it cannot leak in)."""
  aval = core.get_aval(like)
  return broadcast_in_dim(Array(np.array(value, aval.dtype)), aval.shape, ())


def broadcast_shapes(*shapes):
  """The shape NumPy-style broadcasting gives ``shapes`` (ValueError if incompatible)."""
  shapes = [tuple(s) for s in shapes]
  if not shapes:
    return ()
  ndim = max(len(s) for s in shapes)
  padded = [(1,) * (ndim - len(s)) + s for s in shapes]
  out = []
  for sizes in zip(*padded):
    big = {d for d in sizes if d != 1}
    if len(big) > 1:
      raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}")
    out.append(big.pop() if big else 1)
  return tuple(out)


def broadcast_to_rank(x, rank):
  """``x`` with leading unit axes added until it has ``rank`` axes."""
  x = _operand(x)
  ndim = core.get_aval(x).ndim
  if ndim == rank:
    return x
  return broadcast(x, (1,) * (rank - ndim))


def broadcast_like(arr, like_arr):
  """``arr`` broadcast (NumPy-style) to the shape of ``like_arr``."""
  return _broadcast_to(_operand(arr), core.get_aval(_operand(like_arr)).shape)


def _broadcast_to(x, shape):
  # NumPy-style: align trailing axes, then broadcast_in_dim
  ndim = core.get_aval(x).ndim
  if core.get_aval(x).shape == tuple(shape):
    return x
  return broadcast_in_dim(x, tuple(shape), tuple(range(len(shape) - ndim, len(shape))))


def collapse(operand, start_dimension, stop_dimension=None):
  """``operand`` with axes ``start_dimension:stop_dimension`` merged into one."""
  operand = _operand(operand)
  shape = core.get_aval(operand).shape
  lo, hi, _ = builtins.slice(start_dimension, stop_dimension).indices(len(shape))
  size = math.prod(shape[lo:hi])
  return reshape(operand, shape[:lo] + (size,) + shape[hi:])


def split(operand, sizes, axis=0):
  """Pieces of ``operand`` along ``axis`` with the given ``sizes`` (which must sum to
  that axis' length)."""
  operand = _operand(operand)
  shape = core.get_aval(operand).shape
  axis = _canonical_axis(axis, len(shape))
  sizes = tuple(int(s) for s in sizes)
  if any(s < 0 for s in sizes) or sum(sizes) != shape[axis]:
    raise ValueError(f"Sum of sizes {sum(sizes)} must be equal to dimension {axis} of the "
                     f"operand shape {shape}")
  out, start = [], 0
  for s in sizes:
    out.append(slice_in_dim(operand, start, start + s, axis=axis))
    start += s
  return out


def stack(operands, axis=0):
  """Stack arrays of one shape along a new axis ``axis``."""
  operands = [_operand(x) for x in operands]
  if not operands:
    raise ValueError("stack requires at least one operand")
  ndim = core.get_aval(operands[0]).ndim
  axis = _canonical_axis(axis, ndim + 1)
  return concatenate([expand_dims(x, (axis,)) for x in operands], axis)


def tile(operand, reps):
  """``operand`` repeated ``reps[i]`` times along each axis ``i`` (one rep per axis)."""
  operand = _operand(operand)
  shape = core.get_aval(operand).shape
  reps = tuple(int(r) for r in reps)
  if len(reps) != len(shape):
    raise ValueError(f"len(reps) must equal operand.ndim; got {reps=} and "
                     f"shape={shape}")
  big = tuple(d for pair in zip(reps, shape) for d in pair)
  out = broadcast_in_dim(operand, big, tuple(range(1, 2 * len(shape), 2)))
  return reshape(out, tuple(r * d for r, d in zip(reps, shape)))


# -- differentiation: every shape primitive is linear; these are the transposes
from jaxlite._src.transforms import ad  # noqa: E402


def _broadcast_in_dim_transpose_rule(ct, operand, *, shape, broadcast_dimensions, sharding):
  aval = operand.aval
  new_dims = [d for d in range(len(shape)) if d not in broadcast_dimensions]
  expanded = [d for i, d in enumerate(broadcast_dimensions)
              if aval.shape[i] == 1 and shape[d] != 1]
  summed = lax_ops.reduce_sum(ct, new_dims + expanded) if new_dims or expanded else ct
  return [reshape(summed, aval.shape)]


def _linear(prim, transpose_rule):
  """Register the JVP of a primitive linear in its (first) operand and its transpose."""
  def jvp(primals, tangents, **params):
    out = prim.bind(*primals, **params)
    t = tangents[0]
    if type(t) is ad.Zero:
      return out, ad.Zero(ad.tangent_aval(core.get_aval(out)))
    return out, prim.bind(t, *primals[1:], **params)
  ad.jvp_rules[prim] = jvp
  ad.transpose_rules[prim] = transpose_rule


_linear(broadcast_in_dim_p, _broadcast_in_dim_transpose_rule)
ad.defzero(iota_p)
_linear(reshape_p, lambda ct, x, **p: [reshape(ct, x.aval.shape)])
_linear(transpose_p, lambda ct, x, *, permutation: [
    transpose(ct, tuple(int(i) for i in np.argsort(permutation)))])
_linear(squeeze_p, lambda ct, x, *, dimensions: [reshape(ct, x.aval.shape)])
_linear(rev_p, lambda ct, x, *, dimensions: [rev(ct, dimensions)])


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
  aval = x.aval
  strides = strides or (1,) * aval.ndim
  ct_shape = core.get_aval(ct).shape
  config = []
  for size, lo, st, n in zip(aval.shape, start_indices, strides, ct_shape):
    used = lo + (n - 1) * st + 1 if n else lo
    config.append((lo, size - used, st - 1) if n else (0, size, 0))
  if any(n == 0 for n in ct_shape):
    return [ad.zeros_like_aval(aval)]
  return [pad(ct, Array(np.zeros((), aval.dtype)), config)]


_linear(slice_p, _slice_transpose)


def _concatenate_jvp(primals, tangents, *, dimension):
  out = concatenate_p.bind(*primals, dimension=dimension)
  if all(type(t) is ad.Zero for t in tangents):
    return out, ad.Zero(ad.tangent_aval(core.get_aval(out)))
  ts = [ad.instantiate(t) for t in tangents]
  return out, concatenate_p.bind(*ts, dimension=dimension)


def _concatenate_transpose(ct, *operands, dimension):
  out, offset = [], 0
  for o in operands:
    size = (o.aval if ad.is_undefined(o) else core.get_aval(o)).shape[dimension]
    if ad.is_undefined(o):
      out.append(slice_in_dim(ct, offset, offset + size, axis=dimension))
    else:
      out.append(None)
    offset += size
  return out


ad.jvp_rules[concatenate_p] = _concatenate_jvp
ad.transpose_rules[concatenate_p] = _concatenate_transpose


def _pad_jvp(primals, tangents, *, padding_config):
  out = pad_p.bind(*primals, padding_config=padding_config)
  if all(type(t) is ad.Zero for t in tangents):
    return out, ad.Zero(ad.tangent_aval(core.get_aval(out)))
  t_op, t_val = (ad.instantiate(t) for t in tangents)
  return out, pad_p.bind(t_op, t_val, padding_config=padding_config)


def _pad_transpose(ct, operand, padding_value, *, padding_config):
  zero = Array(np.zeros((), core.get_aval(ct).dtype))
  # undo negative low/high padding first, then take every (interior + 1)-th element
  unpadded = pad(ct, zero, [(-min(lo, 0), -min(hi, 0), 0) for lo, hi, _ in padding_config])
  shape = core.get_aval(unpadded).shape
  starts = [max(lo, 0) for lo, _, _ in padding_config]
  limits = [s - max(hi, 0) for s, (_, hi, _) in zip(shape, padding_config)]
  op_ct = slice(unpadded, starts, limits, [i + 1 for _, _, i in padding_config])
  result = [op_ct if ad.is_undefined(operand) else None]
  if ad.is_undefined(padding_value):
    all_axes = range(len(shape))
    result.append(lax_ew.sub(lax_ops.reduce_sum(ct, all_axes),
                             lax_ops.reduce_sum(op_ct, all_axes)))
  else:
    result.append(None)
  return result


ad.jvp_rules[pad_p] = _pad_jvp
ad.transpose_rules[pad_p] = _pad_transpose


# -- batching (vmap): the batch axis rides along as one more axis of the operand
from jaxlite._src.transforms import batching  # noqa: E402


def _broadcast_in_dim_batcher(vals, dims, *, shape, broadcast_dimensions, sharding):
  # The batch axis goes right after the output axis of the operand axis before it, so
  # broadcast_dimensions stay increasing and no transpose is needed.
  (x,), (d,) = vals, dims
  size = core.get_aval(x).shape[d]
  at = broadcast_dimensions[d - 1] + 1 if d else 0
  bdims = broadcast_dimensions[:d] + (at,) + tuple(b + 1 for b in broadcast_dimensions[d:])
  out = broadcast_in_dim_p.bind(x, shape=shape[:at] + (size,) + shape[at:],
                                broadcast_dimensions=bdims, sharding=sharding)
  return out, at


def _reshape_batcher(vals, dims, *, new_sizes, dimensions, sharding):
  (x,), (d,) = vals, dims
  x = batching.moveaxis(x, d, 0)
  new_sizes = (core.get_aval(x).shape[0],) + tuple(new_sizes)
  return reshape_p.bind(x, new_sizes=new_sizes, dimensions=dimensions, sharding=sharding), 0


def _transpose_batcher(vals, dims, *, permutation):
  (x,), (d,) = vals, dims
  return transpose_p.bind(x, permutation=(d,) + batching.shift_axes(permutation, d)), 0


def _squeeze_batcher(vals, dims, *, dimensions):
  (x,), (d,) = vals, dims
  out_dim = d - sum(1 for a in dimensions if a < d)
  return squeeze_p.bind(x, dimensions=batching.shift_axes(dimensions, d)), out_dim


def _concatenate_batcher(vals, dims, *, dimension):
  size = batching.batch_size(vals, dims)
  operands = [batching.bdim_at_front(x, d, size) for x, d in zip(vals, dims)]
  return concatenate_p.bind(*operands, dimension=dimension + 1), 0


def _slice_batcher(vals, dims, *, start_indices, limit_indices, strides):
  (x,), (d,) = vals, dims
  size = core.get_aval(x).shape[d]
  insert = lambda t, v: t[:d] + (v,) + t[d:]
  out = slice_p.bind(x, start_indices=insert(start_indices, 0),
                     limit_indices=insert(limit_indices, size),
                     strides=None if strides is None else insert(strides, 1))
  return out, d


def _rev_batcher(vals, dims, *, dimensions):
  (x,), (d,) = vals, dims
  return rev_p.bind(x, dimensions=batching.shift_axes(dimensions, d)), d


def _pad_batcher(vals, dims, *, padding_config):
  (x, value), (xd, vd) = vals, dims
  if vd is None:
    config = padding_config[:xd] + ((0, 0, 0),) + padding_config[xd:]
    return pad_p.bind(x, value, padding_config=config), xd
  # A padding value per example: pad with zeros, then select it where nothing was.
  size = batching.batch_size(vals, dims)
  x = batching.bdim_at_front(x, xd, size)
  config = ((0, 0, 0),) + padding_config
  aval = core.get_aval(x)
  padded = pad_p.bind(x, Array(np.zeros((), aval.dtype)), padding_config=config)
  inside = pad_p.bind(broadcast_in_dim(Array(np.array(True)), aval.shape, ()),
                      Array(np.array(False)), padding_config=config)
  out_shape = core.get_aval(padded).shape
  values = broadcast_in_dim(batching.moveaxis(value, vd, 0), out_shape, (0,))
  return lax_ew.select(inside, padded, values), 0


batching.batching_rules.update({
    broadcast_in_dim_p: _broadcast_in_dim_batcher,
    reshape_p: _reshape_batcher,
    transpose_p: _transpose_batcher,
    squeeze_p: _squeeze_batcher,
    concatenate_p: _concatenate_batcher,
    slice_p: _slice_batcher,
    rev_p: _rev_batcher,
    pad_p: _pad_batcher,
})

# the transformations (below lax) build zeros and batch axes with these
lax_ops.ops.update(broadcast_in_dim=broadcast_in_dim, broadcast_to_shape=broadcast_to_shape,
                   transpose=transpose, expand_dims=expand_dims, unbroadcast=unbroadcast)
