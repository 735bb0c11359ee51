"""Reduction primitives over static axes, and ``dot_general``."""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.base.config import config
from jaxlite._src.core.array import Array
from jaxlite._src.core.core import Primitive, ShapedArray
from jaxlite._src.lax import precision as precision_lib
from jaxlite._src.lax.base import operand, trace_flat
from jaxlite._src.lax.shapes import _ints
from jaxlite._src.lax.sharding_constraint import (canonicalize_out_sharding,
                                                  constrain)


def _reduced_shape(name, operand, axes):
  if any(not 0 <= a < operand.ndim for a in axes) or len(set(axes)) != len(axes):
    raise ValueError(f"reduction axes {axes} contains out-of-bounds indices for "
                     f"{operand}.")
  return tuple(s for i, s in enumerate(operand.shape) if i not in axes)


def _reduction(name, accepted, out_dtype=None, keeps_weak_type=True,
               check=None) -> Primitive:
  prim = Primitive(name)

  def rule(operand, *, axes, **params):
    if not any(dtypes.issubdtype(operand.dtype, c) for c in accepted):
      kinds = ", ".join(c.__name__ for c in accepted)
      raise TypeError(f"{name} does not accept dtype {operand.dtype.name}. Accepted dtypes "
                      f"are subtypes of {kinds}.")
    if check is not None:
      check(operand, axes)
    shape = _reduced_shape(name, operand, axes)
    if out_dtype is not None:
      return ShapedArray(shape, out_dtype(operand, axes=axes, **params))
    return ShapedArray(shape, operand.dtype, operand.weak_type and keeps_weak_type)

  prim.def_abstract_eval(rule)
  return prim


def _index_dtype(operand, *, axes, index_dtype):
  """argmax/argmin: the index dtype (an integer type); the operand's axis must be
  non-empty, since an empty one has no first extremum."""
  if not dtypes.issubdtype(index_dtype, np.integer):
    raise TypeError(f"index_dtype must be an integer type, but got "
                    f"{np.dtype(index_dtype).name}")
  (axis,) = axes
  if operand.shape[axis] < 1:
    raise ValueError("argmin and argmax require non-empty reduced dimension. "
                     f"operand.shape={operand.shape} axis={axis}")
  return index_dtype


def _half_sum_allowed(operand, axes):
  """A sum of float16 or bfloat16 values over an axis longer than one is refused while
  ``jax_allow_f16_reductions`` is False, as in JAX (jnp.sum accumulates in float32)."""
  if (not config.jax_allow_f16_reductions
      and dtypes.is_half_float(operand.dtype)
      and not all(operand.shape[a] == 1 for a in axes)):
    raise ValueError(f"reduce_sum on operand {operand.str_short(True)} is not allowed when "
                     "jax_allow_f16_reductions=False.")


# Sums and products take numbers only (booleans reduce with reduce_or / reduce_and);
# comparisons order real numbers and booleans, so argmax and argmin reject complex
# numbers; the logical reductions, like their elementwise ops, drop weak types.
_number = (np.number,)
_ordered = (np.integer, np.floating, np.bool_)
reduce_sum_p = _reduction("reduce_sum", _number, check=_half_sum_allowed)
reduce_prod_p = _reduction("reduce_prod", _number)
reduce_max_p = _reduction("reduce_max", _number + (np.bool_,))
reduce_min_p = _reduction("reduce_min", _number + (np.bool_,))
reduce_and_p = _reduction("reduce_and", (np.bool_, np.integer), keeps_weak_type=False)
reduce_or_p = _reduction("reduce_or", (np.bool_, np.integer), keeps_weak_type=False)
reduce_xor_p = _reduction("reduce_xor", (np.bool_, np.integer), keeps_weak_type=False)
argmax_p = _reduction("argmax", _ordered, _index_dtype)
argmin_p = _reduction("argmin", _ordered, _index_dtype)


def _axes(operand, axes):
  return tuple(sorted(_ints("reduce", axes)))


def reduce_sum(operand, axes, *, out_sharding=None):
  """Sum over ``axes``; ``out_sharding`` (a NamedSharding, or a PartitionSpec of the mesh in
  context) lays the result out so."""
  sharding = canonicalize_out_sharding(out_sharding, "reduce_sum")
  out = reduce_sum_p.bind(operand, axes=_axes(operand, axes), out_sharding=sharding)
  return out if sharding is None else constrain(out, sharding)


def reduce_prod(operand, axes):
  """Product over ``axes``."""
  return reduce_prod_p.bind(operand, axes=_axes(operand, axes))


def reduce_max(operand, axes):
  """Maximum over ``axes``."""
  return reduce_max_p.bind(operand, axes=_axes(operand, axes))


def reduce_min(operand, axes):
  """Minimum over ``axes``."""
  return reduce_min_p.bind(operand, axes=_axes(operand, axes))


def reduce_and(operand, axes):
  """Logical / bitwise AND over ``axes``."""
  return reduce_and_p.bind(operand, axes=_axes(operand, axes))


def reduce_or(operand, axes):
  """Logical / bitwise OR over ``axes``."""
  return reduce_or_p.bind(operand, axes=_axes(operand, axes))


def reduce_xor(operand, axes):
  """Logical / bitwise XOR over ``axes``."""
  return reduce_xor_p.bind(operand, axes=_axes(operand, axes))


def argmax(operand, axis: int, index_dtype):
  """Index of the first maximum along ``axis``."""
  return argmax_p.bind(operand, axes=(int(axis),),
                       index_dtype=dtypes.canonicalize_dtype(index_dtype))


def argmin(operand, axis: int, index_dtype):
  """Index of the first minimum along ``axis``."""
  return argmin_p.bind(operand, axes=(int(axis),),
                       index_dtype=dtypes.canonicalize_dtype(index_dtype))


# -- dot_general
dot_general_p = Primitive("dot_general")
# the type of dot_general's dimension_numbers: ((lhs_contract, rhs_contract),
# (lhs_batch, rhs_batch))
DotDimensionNumbers = tuple


@dot_general_p.def_abstract_eval
def _dot_general_rule(lhs, rhs, *, dimension_numbers, precision, preferred_element_type,
                      out_sharding):
  (lc, rc), (lb, rb) = dimension_numbers
  if len(lc) != len(rc) or len(lb) != len(rb):
    raise TypeError("dot_general requires equal numbers of lhs and rhs contracting and "
                    f"batch dimensions, got dimension_numbers {dimension_numbers}.")
  for dims, aval in ((lc + lb, lhs), (rc + rb, rhs)):
    if any(not 0 <= d < aval.ndim for d in dims) or len(set(dims)) != len(dims):
      raise TypeError(f"dot_general dimension_numbers {dimension_numbers} out of range or "
                      f"repeated for shapes {lhs.shape} and {rhs.shape}.")
  for a, b in list(zip(lc, rc)) + list(zip(lb, rb)):
    if lhs.shape[a] != rhs.shape[b]:
      raise TypeError(f"dot_general requires contracting and batch dimensions to have the "
                      f"same shape, got {lhs.shape} and {rhs.shape} with dimension_numbers "
                      f"{dimension_numbers}.")
  operand_dtype = dot_operand_dtype(lhs.dtype, rhs.dtype)
  if preferred_element_type is not None and not isinstance(
      precision, (precision_lib.DotAlgorithm, precision_lib.DotAlgorithmPreset)):
    _check_not_narrower(operand_dtype, preferred_element_type)
  batch = tuple(lhs.shape[d] for d in lb)
  lfree = tuple(s for i, s in enumerate(lhs.shape) if i not in lc + lb)
  rfree = tuple(s for i, s in enumerate(rhs.shape) if i not in rc + rb)
  dtype = preferred_element_type or operand_dtype
  return ShapedArray(batch + lfree + rfree, dtype,
                     lhs.weak_type and rhs.weak_type and preferred_element_type is None)


def dot_operand_dtype(lhs, rhs):
  """The dtype a dot of ``lhs`` and ``rhs`` operands gives, as JAX's (XLA's higher
  precision type): of two dtypes, the complex one, then the one with the larger exponent
  range, mantissa, width, sign; a tie of two dtypes is refused."""
  def rank(dtype):
    real = np.finfo(dtype).dtype if dtypes.is_complex(dtype) else dtype
    floating = dtypes.is_floating(real)
    return (dtypes.is_complex(dtype), dtypes.finfo(real).maxexp if floating else -1,
            dtypes.finfo(real).nmant if floating else -1,
            1 if real == np.bool_ else dtypes.itemsize_bits(real),
            real.kind != "u" and dtypes._kind(real) != "u")
  if lhs == rhs:
    return lhs
  lhs_rank, rhs_rank = rank(lhs), rank(rhs)
  if lhs_rank == rhs_rank:
    raise TypeError(f"lax.dot_general argument type error: {lhs.name}, {rhs.name}")
  return lhs if lhs_rank > rhs_rank else rhs


def dot_accumulation_dtype(operand, result):
  """The dtype to multiply and sum in to get what XLA gets for ``operand``-typed operands
  and a ``result`` dtype: the wider of the two, booleans counted as int32 and floats
  narrower than 32 bits summed in float32."""
  dtype = np.promote_types(operand, result)
  if dtype == np.bool_:
    return np.dtype(np.int32)
  if dtypes.is_floating(dtype) and dtype.itemsize < 4:
    return np.dtype(np.float32)
  return dtype


def _bit_width(dtype):
  # a complex type counts as its parts, as JAX counts it
  if dtype == np.bool_:
    return 1
  bits = 8 * np.dtype(dtype).itemsize
  return bits // 2 if dtypes.is_complex(dtype) else bits


def _check_not_narrower(result_dtype, preferred_element_type):
  """JAX's (and XLA's shape inference's) one rule for a dot's preferred type: an integer,
  boolean or complex result may not narrow (a float result may become anything)."""
  if result_dtype != preferred_element_type and not dtypes.is_floating(result_dtype) and \
      _bit_width(preferred_element_type) < _bit_width(result_dtype):
    raise TypeError("`preferred_element_type` must not be narrower than the original type, "
                    f"got preferred_element_type of {preferred_element_type} for result "
                    f"type of {result_dtype}.")


def _format_dimension_numbers(dn):
  (lc, rc), (lb, rb) = dn
  return f"(({list(lc)}, {list(rc)}), ({list(lb)}, {list(rb)}))"


core.param_printers[(dot_general_p, "dimension_numbers")] = _format_dimension_numbers
# JAX leaves out the params that are None, and the sharding the binder's type implies
core.hidden_params[dot_general_p] = lambda k, v, params: v is None or k == "out_sharding"


def _dot_axes(axes):
  """A tuple of axes, where a single int stands for a tuple of one, as in JAX."""
  return _ints("dot_general", (axes,) if isinstance(axes, (int, np.integer)) else axes)


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None, *,
                out_sharding=None):
  """General dot product (``jax.lax.dot_general``).

  Parameters
  ----------
  lhs, rhs : arrays of one dtype
  dimension_numbers : ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))
    The axes contracted and the batch axes, each a sequence of ints.
  precision : None, str, Precision, a pair of them, DotAlgorithm or DotAlgorithmPreset
    On accelerators, how float32 operands are multiplied: ``'default'`` (one bfloat16
    pass on a TPU, TensorFloat-32 on a GPU), ``'high'`` (three bfloat16 passes) or
    ``'highest'`` (full float32); None takes ``jax.default_matmul_precision``. The CPU
    and tier 0 compute in full precision whatever it says.
  preferred_element_type : dtype, optional
    The accumulation and result type; it may not narrow an integer, boolean or complex
    type.
  out_sharding : NamedSharding, optional
    How to lay out the result over the devices of its mesh
    (``lax.with_sharding_constraint``); None, the default, leaves it to the compiler. It
    changes no value.

  Returns
  -------
  array whose axes are the batch axes, then lhs's free axes, then rhs's.
  """
  sharding = canonicalize_out_sharding(out_sharding, "dot_general")   # first, as JAX
  (lc, rc), (lb, rb) = dimension_numbers
  dn = ((_dot_axes(lc), _dot_axes(rc)), (_dot_axes(lb), _dot_axes(rb)))
  pref = None if preferred_element_type is None else dtypes.canonicalize_dtype(
      preferred_element_type)
  # (the param types the result as asked, where the operands' splits would not)
  out = dot_general_p.bind(lhs, rhs, dimension_numbers=dn,
                           precision=precision_lib.canonicalize_precision(precision),
                           preferred_element_type=pref, out_sharding=sharding)
  return out if sharding is None else constrain(out, sharding)


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None,
        out_sharding=None):
  """Dot product (``jax.lax.dot``): ``dot_general`` whose ``dimension_numbers`` default,
  for operands of rank 1 or 2, to contracting the last axis of ``lhs`` with the first of
  ``rhs``. The other arguments are those of ``dot_general``.

  Raises
  ------
  ValueError
    Without ``dimension_numbers``, for operands other than vectors and matrices or whose
    contracted axes differ in size, as JAX does.
  """
  lhs_shape, rhs_shape = np.shape(lhs), np.shape(rhs)
  if dimension_numbers is None:
    if not (1 <= len(lhs_shape) <= 2 and 1 <= len(rhs_shape) <= 2
            and lhs_shape[-1] == rhs_shape[0]):
      raise ValueError(
          "jax.lax.dot: dimension_numbers must be specified when not performing simple "
          "un-batched matrix-matrix, matrix-vector, or vector-vector products; got "
          f"lhs_shape={lhs_shape} rhs_shape={rhs_shape}")
    dimension_numbers = (((len(lhs_shape) - 1,), (0,)), ((), ()))
  return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type,
                     out_sharding=out_sharding)


def _transposed_dot(eqn, invars, producer, uses):
  """A transpose that swaps a dot_general's lhs and rhs free dimensions is the dot_general
  of the swapped operands (registered on transpose): per-example gradients then come out
  in their final layout, not as a strided view of another, which costs tier 0 and XLA
  alike (benchmarks' W7)."""
  (x,) = invars
  dot = producer.get(x)
  if dot is None or dot.primitive is not dot_general_p or uses[x] != 1 or \
      dot.params["out_sharding"] is not None:
    return None
  (lc, rc), (lb, rb) = dot.params["dimension_numbers"]
  lhs, rhs = dot.invars
  nb = len(lb)
  nl, nr = lhs.aval.ndim - len(lc) - nb, rhs.aval.ndim - len(rc) - nb
  if list(eqn.params["permutation"]) != [*range(nb), *range(nb + nl, nb + nl + nr),
                                         *range(nb, nb + nl)]:
    return None
  precision = dot.params["precision"]
  if type(precision) is tuple:   # (lhs, rhs), not an algorithm
    precision = precision[::-1]
  params = dict(dot.params, dimension_numbers=((rc, lc), (rb, lb)), precision=precision)
  return core.JaxprEqn([rhs, lhs], eqn.outvars, dot_general_p, params, eqn.source_info)


# -- differentiation
from jaxlite._src.transforms import ad  # noqa: E402
from jaxlite._src.transforms import lax_ops  # noqa: E402
from jaxlite._src.lax import elementwise as ew  # noqa: E402
from jaxlite._src.lax import shapes  # noqa: E402
from jaxlite._src.passes import algebraic  # noqa: E402

algebraic.register(shapes.transpose_p, _transposed_dot)

# autodiff and the shape primitives' transposes sum cotangents with it
lax_ops.ops["reduce_sum"] = reduce_sum


def _kept_dims(ndim, axes):
  return [d for d in range(ndim) if d not in axes]


def _reduce_sum_transpose(ct, operand, *, axes, out_sharding):
  shape = operand.aval.shape
  return [shapes.broadcast_in_dim(ct, shape, _kept_dims(len(shape), axes))]


ad.deflinear2(reduce_sum_p, _reduce_sum_transpose)


def _reduce_chooser_jvp(prim):
  # The tangent is averaged over the positions that attain the max (or min).
  def jvp(primals, tangents, *, axes):
    (x,), (t,) = primals, tangents
    ans = prim.bind(x, axes=axes)
    if type(t) is ad.Zero:
      return ans, ad.Zero(ad.tangent_aval(core.get_aval(ans)))
    shape = core.get_aval(x).shape
    kept = _kept_dims(len(shape), axes)
    location = ew.convert_element_type(
        ew.eq(x, shapes.broadcast_in_dim(ans, shape, kept)), core.get_aval(x).dtype)
    counts = reduce_sum_p.bind(location, axes=axes, out_sharding=None)
    picked = reduce_sum_p.bind(ew.mul(t, location), axes=axes, out_sharding=None)
    return ans, ew.div(picked, counts)
  ad.jvp_rules[prim] = jvp


_reduce_chooser_jvp(reduce_max_p)
_reduce_chooser_jvp(reduce_min_p)
for _p in (argmax_p, argmin_p, reduce_and_p, reduce_or_p, reduce_xor_p):
  ad.defzero(_p)


def _dot_general_transpose_lhs(ct, x_aval, y, dimension_numbers, swap_ans=False, **params):
  # Contract ct with y over y's free dims (and batch dims as batch); permute to x's order.
  (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
  x_ndim = len(x_aval.shape)
  y_ndim = core.get_aval(y).ndim
  x_kept = [d for d in range(x_ndim) if d not in x_contract + x_batch]
  y_kept = [d for d in range(y_ndim) if d not in y_contract + y_batch]
  nb = len(x_batch)
  # ct's axes are (batch, lhs free, rhs free); y's free axes sit first when y is the lhs
  start = nb if swap_ans else nb + len(x_kept)
  ans_y = tuple(range(start, start + len(y_kept)))
  dims = ((ans_y, tuple(y_kept)), (tuple(range(nb)), tuple(y_batch)))
  out = dot_general_p.bind(ct, y, dimension_numbers=dims, precision=params["precision"],
                           preferred_element_type=params["preferred_element_type"],
                           out_sharding=None)
  # out's axes: batch, x's kept dims (in order), then y's contracted dims (in y_contract order)
  sorted_contract = [x_contract[i] for i in np.argsort(y_contract)]
  produced = list(x_batch) + x_kept + sorted_contract
  perm = tuple(int(i) for i in np.argsort(produced))
  out = shapes.transpose(out, perm)
  return ew._convert_element_type(out, x_aval.dtype, x_aval.weak_type)


def _dot_general_transpose(ct, x, y, *, dimension_numbers, precision, preferred_element_type,
                           out_sharding):
  (xc, yc), (xb, yb) = dimension_numbers
  if ad.is_undefined(x):
    return [_dot_general_transpose_lhs(ct, x.aval, y, dimension_numbers, precision=precision,
                                       preferred_element_type=preferred_element_type), None]
  swapped = ((yc, xc), (yb, xb))
  return [None, _dot_general_transpose_lhs(ct, y.aval, x, swapped, swap_ans=True,
                                           precision=precision,
                                           preferred_element_type=preferred_element_type)]


ad.defbilinear(dot_general_p)
ad.transpose_rules[dot_general_p] = _dot_general_transpose


def _exclusive_products(x, axis):
  """Product of all other elements along ``axis``, without dividing (zeros are fine):
  exclusive prefix and suffix products by doubling (log2(n) steps)."""
  n = core.get_aval(x).shape[axis]
  ndim = core.get_aval(x).ndim
  one = Array(np.ones((), core.get_aval(x).dtype))

  def shifted(v, k):  # v moved k places toward higher indices, ones shifted in
    config = [(0, 0, 0)] * ndim
    config[axis] = (k, -k, 0)
    return shapes.pad(v, one, config)

  def inclusive_prefix(v):
    k = 1
    while k < n:
      v = ew.mul(v, shifted(v, k))
      k *= 2
    return v
  left = shifted(inclusive_prefix(x), 1)
  right = shapes.rev(shifted(inclusive_prefix(shapes.rev(x, (axis,))), 1), (axis,))
  return ew.mul(left, right)


def _reduce_prod_jvp(primals, tangents, *, axes):
  (x,), (t,) = primals, tangents
  ans = reduce_prod_p.bind(x, axes=axes)
  if type(t) is ad.Zero:
    return ans, ad.Zero(ad.tangent_aval(core.get_aval(ans)))
  shape = core.get_aval(x).shape
  # flatten the reduced axes into one trailing axis, then use the exclusive products
  kept = _kept_dims(len(shape), axes)
  perm = kept + list(axes)
  flat_shape = tuple(shape[d] for d in kept) + (int(np.prod([shape[a] for a in axes])),)
  xf = shapes.reshape(shapes.transpose(x, perm), flat_shape)
  tf = shapes.reshape(shapes.transpose(t, perm), flat_shape)
  others = _exclusive_products(xf, len(flat_shape) - 1)
  return ans, reduce_sum_p.bind(ew.mul(tf, others), axes=(len(flat_shape) - 1,),
                                out_sharding=None)


ad.jvp_rules[reduce_prod_p] = _reduce_prod_jvp


# -- batching (vmap)
from jaxlite._src.transforms import batching  # noqa: E402


def _reduction_batcher(prim):
  # Reduce the same axes of every example; the batch axis shifts left past reduced ones.
  def rule(vals, dims, *, axes, **params):
    (x,), (d,) = vals, dims
    out = prim.bind(x, axes=batching.shift_axes(axes, d), **params)
    return out, d - sum(1 for a in axes if a < d)
  batching.batching_rules[prim] = rule


for _p in (reduce_sum_p, reduce_prod_p, reduce_max_p, reduce_min_p, reduce_and_p,
           reduce_or_p, reduce_xor_p, argmax_p, argmin_p):
  _reduction_batcher(_p)


def _dot_general_batcher(vals, dims, *, dimension_numbers, **params):
  params["out_sharding"] = None   # (its type's split names the unbatched dimensions)
  (lhs, rhs), (ld, rd) = vals, dims
  (lc, rc), (lb, rb) = dimension_numbers
  shift = batching.shift_axes
  if ld is not None and rd is not None:
    # Both batched: the batch axis becomes the leading dot_general batch dimension.
    lhs, rhs = batching.moveaxis(lhs, ld, 0), batching.moveaxis(rhs, rd, 0)
    dn = ((shift(lc, 0), shift(rc, 0)), ((0,) + shift(lb, 0), (0,) + shift(rb, 0)))
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dn, **params), 0
  # One side batched: its batch axis is a free axis of that side, left where it is.
  if ld is not None:
    lc, lb = shift(lc, ld), shift(lb, ld)
    free = [a for a in range(core.get_aval(lhs).ndim) if a not in lc + lb]
    out_dim = len(lb) + free.index(ld)
  else:
    rc, rb = shift(rc, rd), shift(rb, rd)
    lhs_free = core.get_aval(lhs).ndim - len(lc) - len(lb)
    free = [a for a in range(core.get_aval(rhs).ndim) if a not in rc + rb]
    out_dim = len(lb) + lhs_free + free.index(rd)
  out = dot_general_p.bind(lhs, rhs, dimension_numbers=((lc, rc), (lb, rb)), **params)
  return out, out_dim


batching.batching_rules[dot_general_p] = _dot_general_batcher


# -- reduce with a computation (``lax.reduce``)
#
# A computation that is exactly lax.add / mul / max / min / bitwise_and / or / xor with its
# identity as init_value becomes the dedicated reduction primitive (as JAX's
# _get_monoid_reducer). Any other becomes ``reduce``, which holds the computation traced
# on scalars. XLA lowers it to stablehlo.reduce with that jaxpr as its region; tier 0 and
# the JVP evaluate it as a balanced tree of adjacent pairs, each level one vectorised
# application of the computation (valid for associative computations, as XLA assumes).
import functools  # noqa: E402
import re  # noqa: E402
import weakref  # noqa: E402

from jaxlite._src.base import tree  # noqa: E402
from jaxlite._src.lax import arithmetic  # noqa: E402  (lax.mul, the public form of ew.mul)
from jaxlite._src.transforms import staging  # noqa: E402

reduce_p = Primitive("reduce")
reduce_p.multiple_results = True


def _split_half(seq):
  n = len(seq) // 2
  return list(seq[:n]), list(seq[n:])


@reduce_p.def_abstract_eval
def _reduce_abstract_eval(*avals, computation, jaxpr, dimensions):
  operands, inits = _split_half(avals)
  if any(a.shape != () for a in inits):
    raise ValueError(f"reduce found non-scalar initial value: {[a.shape for a in inits]}")
  if [a.dtype for a in operands] != [a.dtype for a in inits]:
    raise TypeError("reduce operand dtypes should match corresponding initial value dtypes, "
                    f"got operands={list(operands)} and initial_values={list(inits)}")
  if len({a.shape for a in operands}) > 1:
    raise ValueError(f"reduce operands must all have the same shape, got "
                     f"{[a.shape for a in operands]}.")
  shape = _reduced_shape("reduce", operands[0], dimensions)
  return [ShapedArray(shape, x.dtype, x.weak_type and i.weak_type)
          for x, i in zip(operands, inits)]


def _function_repr(fun):
  # JAX prints the computation with its address masked, so jaxprs compare as text
  return re.sub(r" at 0x[0-9a-fA-F]+>", " at 0xXXXXXXXXXXXX>", repr(fun))


core.param_printers[(reduce_p, "computation")] = _function_repr


def _identity_reducers(dtype):
  """``{computation: (identity, reducer)}`` that JAX turns into reduction primitives."""
  table = {ew.add: (0, reduce_sum), ew.mul: (1, reduce_prod),
           arithmetic.mul: (1, reduce_prod), ew.max: (dtypes.lowest(dtype), reduce_max),
           ew.min: (dtypes.highest(dtype), reduce_min)}
  if dtype == np.bool_ or dtypes.issubdtype(dtype, np.integer):
    table.update({ew.bitwise_or: (0, reduce_or), ew.bitwise_xor: (0, reduce_xor),
                  ew.bitwise_and: (np.array(-1).astype(dtype), reduce_and)})
  return table


def _concrete_scalar(x):
  """The NumPy value of a scalar known at trace time, else None."""
  value = x.to_concrete_value() if isinstance(x, core.Tracer) else np.asarray(x)
  return None if value is None or np.shape(value) != () else value


def monoid_reducer(table, computation, init):
  """The reducer ``table(dtype)`` gives ``computation`` when ``init`` is known at trace
  time and is its identity, else None (JAX then stages the general primitive)."""
  value = _concrete_scalar(init)
  if value is None:
    return None
  dtype = core.get_aval(init).dtype
  try:
    identity, reducer = table(dtype)[computation]
  except (KeyError, TypeError):   # TypeError: an unhashable callable
    return None
  return reducer if np.equal(value, np.asarray(identity, dtype)) else None


@functools.lru_cache(maxsize=512)
def _computation_jaxpr(computation, avals, in_tree):
  """``computation(xs, ys)`` traced on two copies of the scalar ``avals`` (flat leaves of
  ``in_tree``): a ClosedJaxpr and the output tree."""
  flat_tree = tree.tree_structure((tree.tree_unflatten(in_tree, avals),) * 2)
  closed, out_tree = trace_flat(computation, flat_tree, list(avals) * 2,
                                "the reduction computation")
  if any(isinstance(c, core.Tracer) for c in closed.consts):
    raise NotImplementedError("Reduction computations can't close over Tracers: pass the "
                              "traced value as an operand instead.")
  return closed, out_tree


def reduction_jaxpr(computation, flat_inits, init_tree, what):
  """The computation of ``lax.reduce`` / ``reduce_window`` as a ClosedJaxpr on scalars,
  checked to return values of the init values' structure and types."""
  avals = tuple(core.get_aval(x) for x in flat_inits)
  try:
    closed, out_tree = _computation_jaxpr(computation, avals, init_tree)
  except TypeError as e:   # an unhashable callable: trace it without the cache
    if "unhashable" not in str(e):
      raise
    closed, out_tree = _computation_jaxpr.__wrapped__(computation, avals, init_tree)
  if out_tree != init_tree:
    raise ValueError(f"{what} output must have the same tree structure as the operands "
                     f"{init_tree} vs. {out_tree}")
  for a, b in zip(avals, closed.out_avals):
    if a.shape != b.shape or a.dtype != b.dtype:
      raise TypeError(f"{what}: the computation must return values of the init values' "
                      f"types {[x.str_short() for x in avals]}, got "
                      f"{[x.str_short() for x in closed.out_avals]}.")
  return closed


def reduce(operands, init_values, computation, dimensions, out_sharding=None):
  """Reduce ``operands`` over ``dimensions`` with ``computation`` (``jax.lax.reduce``).

  Parameters
  ----------
  operands : array or pytree of arrays of one shape
  init_values : scalar or pytree of scalars with the structure of ``operands``
    Together with ``computation`` it must form a monoid: ``init_values`` an identity of
    an associative ``computation``. XLA may exploit both (and tier 0 reduces as a
    balanced tree), so the result of anything else is undefined.
  computation : callable ``(xs, ys) -> zs`` on pytrees of scalars
    ``lax.add``, ``mul``, ``max``, ``min``, ``bitwise_and``, ``bitwise_or`` or
    ``bitwise_xor`` with its identity as init value becomes that reduction primitive.
  dimensions : sequence of int

  Returns
  -------
  The reduced arrays, in the structure of ``operands``.

  Examples
  --------
  >>> import jaxlite.numpy as jnp
  >>> from jaxlite import lax
  >>> lax.reduce(jnp.arange(6.).reshape(2, 3), 0., lax.add, (1,))
  Array([ 3., 12.], dtype=float32)
  """
  flat_ops, op_tree = tree.tree_flatten(operands)
  flat_inits, init_tree = tree.tree_flatten(init_values)
  if op_tree != init_tree:
    raise ValueError("Operands must have the same tree structure as init_values: "
                     f"{op_tree} vs. {init_tree}")
  if not flat_ops:
    raise ValueError("reduce must have at least one operand.")
  flat_ops = [operand(x) for x in flat_ops]
  flat_inits = [operand(x) for x in flat_inits]
  ndim = core.get_aval(flat_ops[0]).ndim
  dims = tuple(sorted(shapes._canonical_axis(d, ndim) for d in dimensions))
  if len(flat_ops) == 1:
    reducer = monoid_reducer(_identity_reducers, computation, flat_inits[0])
    if reducer is not None:
      x = flat_ops[0]
      out = reducer(x, dims)
      weak = core.get_aval(x).weak_type and core.get_aval(flat_inits[0]).weak_type
      return tree.tree_unflatten(op_tree, [ew._convert_element_type(
          out, core.get_aval(out).dtype, weak)])
  closed = reduction_jaxpr(computation, flat_inits, init_tree, "reduce")
  outs = reduce_p.bind(*flat_ops, *flat_inits, computation=computation, jaxpr=closed,
                       dimensions=dims)
  return tree.tree_unflatten(op_tree, outs)


def apply_elementwise(closed, args):
  """The scalar computation ``closed`` applied to each position of the equal-length 1-D
  arrays ``args`` (the computation vectorised by batching its jaxpr)."""
  size = core.get_aval(args[0]).shape[0]
  n_out = len(closed.out_avals)
  batched, _ = batching.batch_jaxpr(closed, batching.AxisData(None, size),
                                    (0,) * len(args), (0,) * n_out)
  return core.eval_jaxpr(batched.jaxpr, batched.consts, *args)


def _pair_rows(x, half, m):
  """Rows 0, 2, 4, ... and rows 1, 3, 5, ... of the first ``2 * half`` rows of ``x``."""
  return (shapes.slice(x, (0, 0), (2 * half - 1, m), (2, 1)),
          shapes.slice(x, (1, 0), (2 * half, m), (2, 1)))


def _with_odd_row(combined, x, n, m):
  """``combined`` with the last row of ``x`` appended when ``n`` is odd: the row left
  out of the pairs joins the next level at the end, which keeps the order."""
  if n % 2 == 0:
    return combined
  return shapes.concatenate([combined, shapes.slice(x, (n - 1, 0), (n, m))], 0)


def tree_reduce_rows(closed, rows, valid=None):
  """Reduce 2-D arrays ``rows`` (n, m) over their first axis with the scalar
  computation ``closed``: adjacent rows are combined pairwise, level by level, so the
  order of the operands is kept and the depth is log2(n). Where the boolean (n, m)
  ``valid`` is false an element is skipped (padding in reduce_window, which XLA skips);
  the first row must be valid. Returns arrays of shape (m,)."""
  n, m = core.get_aval(rows[0]).shape
  while n > 1:
    half = n // 2
    pairs = [_pair_rows(r, half, m) for r in rows]
    flat = [shapes.reshape(v, (half * m,)) for v in [p[0] for p in pairs] +
            [p[1] for p in pairs]]
    combined = [shapes.reshape(v, (half, m)) for v in apply_elementwise(closed, flat)]
    if valid is not None:
      first, second = _pair_rows(valid, half, m)
      both = ew.bitwise_and(first, second)
      combined = [ew.select_n(both, ew.select_n(first, b, a), c)
                  for (a, b), c in zip(pairs, combined)]
      valid = _with_odd_row(ew.bitwise_or(first, second), valid, n, m)
    rows = [_with_odd_row(c, r, n, m) for c, r in zip(combined, rows)]
    n = half + n % 2
  return [shapes.reshape(r, (m,)) for r in rows]


def _as_rows(x, dimensions, kept, n, m):
  return shapes.reshape(shapes.transpose(x, tuple(dimensions) + kept), (n, m))


def _reduce_by_tree(closed, dimensions, masked, *args):
  """``reduce`` written with other primitives: the reduced elements of each operand as
  rows (after one row of its init value, which XLA also applies once), then a tree. With
  ``masked``, a last boolean argument of the operands' shape marks the elements to use."""
  if masked:
    *args, mask = args
  operands, inits = _split_half(args)
  shape = core.get_aval(operands[0]).shape
  kept = tuple(d for d in range(len(shape)) if d not in dimensions)
  out_shape = tuple(shape[d] for d in kept)
  n = int(np.prod([shape[d] for d in dimensions], dtype=np.int64))
  m = int(np.prod(out_shape, dtype=np.int64))
  if m == 0:
    return [shapes.broadcast_in_dim(i, out_shape, ()) for i in inits]
  rows = [shapes.concatenate([shapes.broadcast_in_dim(i, (1, m), ()),
                              _as_rows(x, dimensions, kept, n, m)], 0)
          for x, i in zip(operands, inits)]
  valid = None
  if masked:
    first = shapes.broadcast_in_dim(Array(np.bool_(True)), (1, m), ())
    valid = shapes.concatenate([first, _as_rows(mask, dimensions, kept, n, m)], 0)
  return [shapes.reshape(r, out_shape) for r in tree_reduce_rows(closed, rows, valid)]


# computation jaxpr -> {(avals, dimensions, masked): the tree as a jaxpr}
_tree_jaxprs: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def reduce_as_tree_jaxpr(avals, jaxpr: core.Jaxpr, consts, dimensions, masked=False):
  """``reduce`` with the computation ``jaxpr`` (and its ``consts``) over operands and
  inits of ``avals`` (and, if ``masked``, a boolean mask of the elements to use), as a
  jaxpr of other primitives for tier 0 to compile; cached per computation."""
  cache = _tree_jaxprs.setdefault(jaxpr, {})
  key = (tuple(avals), tuple(dimensions), masked)
  if key not in cache:
    closed = core.ClosedJaxpr(jaxpr, consts)
    cache[key] = staging.trace_to_jaxpr(
        functools.partial(_reduce_by_tree, closed, dimensions, masked), list(avals))
  return cache[key]


def _differentiable(aval):
  return dtypes.is_inexact(aval.dtype)


def _reduce_jvp(primals, tangents, *, computation, jaxpr, dimensions):
  outs, out_tangents = ad.jvp_flat(
      functools.partial(_reduce_by_tree, jaxpr, dimensions, False), list(primals),
      list(tangents))
  return outs, [t if _differentiable(core.get_aval(o)) else
                ad.Zero(ad.tangent_aval(core.get_aval(o)))
                for o, t in zip(outs, out_tangents)]


ad.jvp_rules[reduce_p] = _reduce_jvp


def _reduce_batcher(vals, dims, *, computation, jaxpr, dimensions):
  operands, inits = _split_half(vals)
  op_dims, init_dims = _split_half(dims)
  if any(d is not None for d in init_dims):
    raise NotImplementedError("vmap of lax.reduce over batched init_values is not "
                              "supported (nor in JAX): close over one init value.")
  size = batching.batch_size(vals, dims)
  operands = [batching.bdim_at_front(x, d, size) for x, d in zip(operands, op_dims)]
  outs = reduce_p.bind(*operands, *inits, computation=computation, jaxpr=jaxpr,
                       dimensions=tuple(d + 1 for d in dimensions))
  return outs, [0] * len(outs)


batching.batching_rules[reduce_p] = _reduce_batcher
