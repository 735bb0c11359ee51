"""The rest of ``jax.lax``, composed from existing primitives: array builders (``full``,
``tile``, ``split``...), the general ``reduce``, convolution helpers, ragged and scaled
dots, ``betainc``, ``custom_root`` / ``custom_linear_solve``, collectives built on
``all_gather`` and ``axis_index``, and the enums JAX's signatures mention (``zeta`` is
re-exported from ``special``, where its primitive lives).

None of these adds a primitive, so jaxprs show the primitives they are made of (``tile``
appears as ``broadcast_in_dim`` + ``reshape``, not JAX's ``tile``).
"""
from __future__ import annotations

import builtins
import functools
import math
import operator
from typing import Any, NamedTuple, Sequence

import numpy as np

from jaxlite._src import core
from jaxlite._src import dtypes
from jaxlite._src import tree
from jaxlite._src.array import Array
from jaxlite._src.lax import bits as lax_bits
from jaxlite._src.lax import control_flow as cf
from jaxlite._src.lax import convolution as conv_mod
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.lax import indexing
from jaxlite._src.lax import parallel
from jaxlite._src.lax import reductions as red
from jaxlite._src.lax.rng import RandomAlgorithm, rng_bit_generator  # noqa: F401 (re-exported)
from jaxlite._src.lax import shapes
from jaxlite._src.lax import sorting
from jaxlite._src.lax import special
from jaxlite._src.lax.convolution import ConvDimensionNumbers
from jaxlite._src.lax import custom_derivatives as cd
from jaxlite._src.lax.custom_derivatives import stop_gradient
from jaxlite._src.lax.precision import (  # noqa: F401 (re-exported)
    AccuracyMode, DotAlgorithm, DotAlgorithmPreset, Precision, Tolerance, canonicalize_precision)
from jaxlite._src.transforms import ad
from jaxlite._src.transforms import batching

__all__ = [
    "AccuracyMode", "ConvGeneralDilatedDimensionNumbers", "DotAlgorithm",
    "DotAlgorithmPreset", "DotDimensionNumbers", "Precision", "PrecisionLike",
    "RaggedDotDimensionNumbers", "RandomAlgorithm", "Tolerance", "full", "full_like",
    "empty", "reciprocal", "broadcast_like", "broadcast_shapes", "broadcast_to_rank",
    "collapse", "batch_matmul", "index_take", "split", "stack", "unstack", "tile",
    "approx_max_k", "approx_min_k", "reduce", "optimization_barrier",
    "composite", "stage", "shape_as_value", "dtype", "mulhi",
    "zeta", "betainc", "random_gamma_grad", "rng_bit_generator", "conv_general_permutations",
    "conv_general_shape_tuple", "conv_shape_tuple", "conv_transpose_shape_tuple",
    "reduce_window_shape_tuple", "conv_transpose", "conv_general_dilated_patches",
    "conv_general_dilated_local", "ragged_dot", "ragged_dot_general", "scaled_dot",
    "custom_linear_solve", "axis_size", "pshuffle",
    "pswapaxes", "psum_scatter", "pbroadcast", "pcast"]


# -- enums and type names from JAX's signatures -------------------------------------------
class RaggedDotDimensionNumbers(NamedTuple):
  """Dimension numbers of ``ragged_dot_general``: the dot's ``((lhs_contract,
  rhs_contract), (lhs_batch, rhs_batch))``, the lhs ragged dimensions and the rhs group
  dimensions."""
  dot_dimension_numbers: tuple
  lhs_ragged_dimensions: Sequence[int]
  rhs_group_dimensions: Sequence[int]


ConvGeneralDilatedDimensionNumbers = Any
DotDimensionNumbers = tuple
PrecisionLike = Any


# -- helpers ------------------------------------------------------------------------------
def _operand(x):
  return parallel._operand(x)


def _aval(x):
  return core.get_aval(x)


def dtype(x, *, canonicalize=False):
  """The dtype of ``x`` (an array, a Python scalar or a dtype-like), canonicalized."""
  return dtypes.canonicalize_dtype(dtypes.dtype(x, canonicalize=True))


# -- building arrays ----------------------------------------------------------------------
def full(shape, fill_value, dtype=None, *, sharding=None):
  """An array of ``shape`` filled with the scalar ``fill_value`` (weakly typed when
  ``dtype`` is None and ``fill_value`` is a Python scalar or weak array, as in JAX)."""
  shape = shapes._ints("full", (shape,) if isinstance(shape, int) else shape)
  if np.ndim(fill_value) != 0:
    raise TypeError(f"full must be called with scalar fill_value, got fill_value.shape "
                    f"{np.shape(fill_value)}.")
  value = _operand(fill_value)
  weak = dtype is None and _aval(value).weak_type
  want = dtypes.canonicalize_dtype(_aval(value).dtype if dtype is None else dtype)
  value = ew._convert_element_type(value, want, weak_type=weak)
  return shapes.broadcast_in_dim(value, shape, ())


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
  """An array like ``x`` (its shape and dtype unless given) filled with ``fill_value``;
  weakly typed when ``x`` is and ``dtype`` is None."""
  aval = _aval(_operand(x))
  want = dtypes.canonicalize_dtype(aval.dtype if dtype is None else dtype)
  value = ew._convert_element_type(_operand(fill_value), want,
                                   weak_type=dtype is None and aval.weak_type)
  return shapes.broadcast_in_dim(value, aval.shape if shape is None else tuple(shape), ())


def empty(shape, dtype, *, out_sharding=None):
  """An array of ``shape`` and ``dtype`` whose contents are unspecified (zeros here)."""
  return full(shape, 0, dtype)


def reciprocal(x):
  """``1 / x`` elementwise."""
  return ew.integer_pow(_operand(x), -1)


def broadcast_shapes(*shapes_):
  """The shape NumPy-style broadcasting gives ``shapes_`` (ValueError if incompatible)."""
  shapes_ = [tuple(s) for s in shapes_]
  if not shapes_:
    return ()
  ndim = max(len(s) for s in shapes_)
  padded = [(1,) * (ndim - len(s)) + s for s in shapes_]
  out = []
  for sizes in zip(*padded):
    big = {d for d in sizes if d != 1}
    if len(big) > 1:
      raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes_}")
    out.append(big.pop() if big else 1)
  return tuple(out)


def broadcast_to_rank(x, rank):
  """``x`` with leading unit axes added until it has ``rank`` axes."""
  x = _operand(x)
  ndim = _aval(x).ndim
  if ndim == rank:
    return x
  return shapes.broadcast(x, (1,) * (rank - ndim))


def broadcast_like(arr, like_arr):
  """``arr`` broadcast (NumPy-style) to the shape of ``like_arr``."""
  return _broadcast_to(_operand(arr), _aval(_operand(like_arr)).shape)


def _broadcast_to(x, shape):
  # NumPy-style: align trailing axes, then broadcast_in_dim
  ndim = _aval(x).ndim
  if _aval(x).shape == tuple(shape):
    return x
  return shapes.broadcast_in_dim(x, tuple(shape), tuple(range(len(shape) - ndim, len(shape))))


def collapse(operand, start_dimension, stop_dimension=None):
  """``operand`` with axes ``start_dimension:stop_dimension`` merged into one."""
  operand = _operand(operand)
  shape = _aval(operand).shape
  lo, hi, _ = builtins.slice(start_dimension, stop_dimension).indices(len(shape))
  size = math.prod(shape[lo:hi])
  return shapes.reshape(operand, shape[:lo] + (size,) + shape[hi:])


def batch_matmul(lhs, rhs, precision=None):
  """Batched matrix product over all leading axes: ``(..., m, k) @ (..., k, n)``."""
  lhs, rhs = _operand(lhs), _operand(rhs)
  la, ra = _aval(lhs), _aval(rhs)
  if la.ndim < 2 or la.ndim != ra.ndim:
    raise ValueError(f"batch_matmul requires arrays of equal rank >= 2, got {la.ndim} and "
                     f"{ra.ndim}")
  if la.shape[:-2] != ra.shape[:-2]:
    raise ValueError("batch_matmul requires equal batch dimensions, got "
                     f"{la.shape[:-2]} and {ra.shape[:-2]}")
  batch = tuple(range(la.ndim - 2))
  return red.dot_general(lhs, rhs, (((la.ndim - 1,), (la.ndim - 2,)), (batch, batch)),
                         precision=precision)


def index_take(src, idxs, axes):
  """``src[idxs[0], idxs[1], ...]`` along ``axes``: ``idxs`` holds one 1-D index array per
  axis (indices wrap around, as Python's); the other axes are kept whole."""
  src = _operand(src)
  axes = tuple(int(a) for a in axes)
  shape = _aval(src).shape
  indices = shapes.concatenate([shapes.expand_dims(_operand(i), (1,)) for i in idxs], 1)
  size = shapes.broadcast_in_dim(
      Array(np.array([shape[a] for a in axes], _aval(indices).dtype)), _aval(indices).shape,
      (1,))
  wrapped = ew.rem(indices, size)
  wrapped = ew.select(ew.lt(wrapped, ew._const(wrapped, 0)), ew.add(wrapped, size), wrapped)
  dnums = indexing.GatherDimensionNumbers(
      offset_dims=tuple(range(1, len(shape) - len(axes) + 1)), collapsed_slice_dims=axes,
      start_index_map=axes)
  sizes = tuple(1 if i in axes else d for i, d in enumerate(shape))
  return indexing.gather(src, wrapped, dnums, sizes, mode="fill")


def split(operand, sizes, axis=0):
  """Pieces of ``operand`` along ``axis`` with the given ``sizes`` (which must sum to
  that axis' length)."""
  operand = _operand(operand)
  shape = _aval(operand).shape
  axis = shapes._canonical_axis(axis, len(shape))
  sizes = tuple(int(s) for s in sizes)
  if any(s < 0 for s in sizes) or sum(sizes) != shape[axis]:
    raise ValueError(f"Sum of sizes {sum(sizes)} must be equal to dimension {axis} of the "
                     f"operand shape {shape}")
  out, start = [], 0
  for s in sizes:
    out.append(shapes.slice_in_dim(operand, start, start + s, axis=axis))
    start += s
  return out


def stack(operands, axis=0):
  """Stack arrays of one shape along a new axis ``axis``."""
  operands = [_operand(x) for x in operands]
  if not operands:
    raise ValueError("stack requires at least one operand")
  ndim = _aval(operands[0]).ndim
  axis = shapes._canonical_axis(axis, ndim + 1)
  return shapes.concatenate([shapes.expand_dims(x, (axis,)) for x in operands], axis)


def unstack(x, axis=0):
  """``x`` split along ``axis`` into a tuple of arrays with that axis removed."""
  x = _operand(x)
  ndim = _aval(x).ndim
  axis = shapes._canonical_axis(axis, ndim)
  return tuple(indexing.index_in_dim(x, i, axis, keepdims=False)
               for i in range(_aval(x).shape[axis]))


def tile(operand, reps):
  """``operand`` repeated ``reps[i]`` times along each axis ``i`` (one rep per axis)."""
  operand = _operand(operand)
  shape = _aval(operand).shape
  reps = tuple(int(r) for r in reps)
  if len(reps) != len(shape):
    raise ValueError(f"len(reps) must equal operand.ndim; got {reps=} and "
                     f"shape={shape}")
  big = tuple(d for pair in zip(reps, shape) for d in pair)
  out = shapes.broadcast_in_dim(operand, big, tuple(range(1, 2 * len(shape), 2)))
  return shapes.reshape(out, tuple(r * d for r, d in zip(reps, shape)))


def _approx_k(operand, k, reduction_dimension, largest):
  operand = _operand(operand)
  ndim = _aval(operand).ndim
  axis = shapes._canonical_axis(reduction_dimension, ndim)
  x = operand if largest else ew.neg(operand)
  values, idx = sorting.top_k(x, k, axis=axis)
  return [values if largest else ew.neg(values), idx]


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
  """The ``k`` largest values along ``reduction_dimension`` and their indices. Exact
  here (``recall_target`` is met with recall 1)."""
  return _approx_k(operand, k, reduction_dimension, True)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True):
  """The ``k`` smallest values along ``reduction_dimension`` and their indices (exact)."""
  return _approx_k(operand, k, reduction_dimension, False)


# -- reduce with a Python computation: defined beside the reduction primitives
reduce = red.reduce


# -- identities and staging ---------------------------------------------------------------
optimization_barrier_p = core.Primitive("optimization_barrier")
optimization_barrier_p.multiple_results = True
optimization_barrier_p.def_abstract_eval(lambda *avals: list(avals))
ad.deflinear2(optimization_barrier_p, lambda cts, *_: optimization_barrier_p.bind(
    *[ad.instantiate(ct) for ct in cts]))
batching.batching_rules[optimization_barrier_p] = lambda vals, dims: (
    optimization_barrier_p.bind(*vals), list(dims))


def optimization_barrier(operand, /):
  """The identity on a pytree of arrays, staged as one ``optimization_barrier`` equation.

  As in JAX, it keeps XLA from moving computation across it (what ``checkpoint`` relies
  on to stop common-subexpression elimination from undoing rematerialisation). XLA's CPU
  compiler turns it into scheduling constraints before fusion, so it does not stop, e.g.,
  ``a * b`` and ``+ c`` from contracting into one FMA. Tier 0 returns the operands.
  """
  leaves, treedef = tree.tree_flatten(operand)
  return tree.tree_unflatten(treedef, optimization_barrier_p.bind(*map(_operand, leaves)))


def pcast(x, axis_name, *, to):
  """The identity: jaxlite has no varying/invariant type distinction over named axes."""
  return tree.tree_map(_operand, x)


def stage(x, /):
  """Lift ``x`` (a Python scalar or NumPy array) into an Array; the identity otherwise."""
  return _operand(x)


def shape_as_value(shape):
  """``shape`` as a 1-D int32 Array."""
  return Array(np.asarray(tuple(shape), dtype=np.int32).reshape(len(tuple(shape))))


def composite(decomposition, name, version=0):
  """Decorator marking ``decomposition`` as a named composite op. XLA may swap in a
  fused kernel for it; jaxlite always runs the decomposition."""

  @functools.wraps(decomposition)
  def wrapped(*args, **kwargs):
    return decomposition(*args, **kwargs)

  wrapped.composite_name, wrapped.composite_version = name, version
  return wrapped


# -- integer and special arithmetic ------------------------------------------------------
def mulhi(x, y, /):
  """The high half of the double-width product ``x * y`` of two integers of one dtype."""
  x, y = _operand(x), _operand(y)
  dt = np.dtype(_aval(x).dtype)
  if dt.kind not in "iu" or _aval(y).dtype != dt:
    raise TypeError(f"mulhi requires two integer operands of one dtype, got {dt} and "
                    f"{_aval(y).dtype}")
  bits = dt.itemsize * 8
  udt = np.dtype(f"uint{bits}")
  ux = lax_bits.bitcast_convert_type(x, udt) if dt.kind == "i" else x
  uy = lax_bits.bitcast_convert_type(y, udt) if dt.kind == "i" else y
  half = bits // 2
  mask = Array(np.array((1 << half) - 1, udt), True)
  sh = Array(np.array(half, udt), True)
  lo = lambda v: ew.bitwise_and(v, mask)
  hi = lambda v: lax_bits.shift_right_logical(v, sh)
  x0, x1, y0, y1 = lo(ux), hi(ux), lo(uy), hi(uy)
  t = ew.add(ew.mul(x1, y0), hi(ew.mul(x0, y0)))
  w1 = ew.add(lo(t), ew.mul(x0, y1))
  out = ew.add(ew.add(ew.mul(x1, y1), hi(t)), hi(w1))
  if dt.kind == "u":
    return out
  # signed: subtract y where x < 0 and x where y < 0 (modulo 2**bits)
  out = ew.sub(out, ew.select(ew.lt(x, ew._const(x, 0)), uy, _fill(uy, 0)))
  out = ew.sub(out, ew.select(ew.lt(y, ew._const(y, 0)), ux, _fill(ux, 0)))
  return lax_bits.bitcast_convert_type(out, dt)


zeta = special.zeta


def _fill(like, value):
  """A constant of ``like``'s shape and dtype (not computed from ``like``'s values, so
  NaNs in it cannot leak in)."""
  aval = _aval(like)
  return shapes.broadcast_in_dim(Array(np.array(value, aval.dtype)), aval.shape, ())


def _same_float(*xs):
  xs = [_operand(x) for x in xs]
  avals = [_aval(x) for x in xs]
  strong = [a.dtype for a in avals if not getattr(a, "weak_type", False)]
  want = dtypes.result_type(*[a.dtype for a in avals]) if not strong else \
      dtypes.result_type(*strong)
  if not dtypes.issubdtype(want, np.floating):
    want = dtypes.canonicalize_dtype(np.float64)
  want = dtypes.canonicalize_dtype(want)
  shape = broadcast_shapes(*[a.shape for a in avals])
  return [_broadcast_to(ew.convert_element_type(x, want), shape) for x in xs]


def _betainc_cf(a, b, x, iters):
  # Lentz's method for the continued fraction of I_x(a, b) (Numerical Recipes' betacf).
  c = lambda v: ew._const(x, v)
  tiny = c(np.finfo(_aval(x).dtype).tiny * 1e3)

  def clamp_tiny(v):
    return ew.select(ew.lt(ew.abs(v), tiny), _fill(v, np.finfo(_aval(v).dtype).tiny * 1e3), v)

  qab, qap, qam = ew.add(a, b), ew.add(a, c(1.0)), ew.sub(a, c(1.0))
  cc = _fill(x, 1.0)
  d = clamp_tiny(ew.sub(c(1.0), ew.div(ew.mul(qab, x), qap)))
  d = ew.div(c(1.0), d)
  h = d

  def body(m, carry):
    cc, d, h = carry
    m = ew.convert_element_type(m, _aval(x).dtype)
    m2 = ew.mul(c(2.0), m)
    aa = ew.div(ew.mul(ew.mul(m, ew.sub(b, m)), x),
                ew.mul(ew.add(qam, m2), ew.add(a, m2)))
    d = ew.div(c(1.0), clamp_tiny(ew.add(c(1.0), ew.mul(aa, d))))
    cc = clamp_tiny(ew.add(c(1.0), ew.div(aa, cc)))
    h = ew.mul(h, ew.mul(d, cc))
    aa = ew.neg(ew.div(ew.mul(ew.mul(ew.add(a, m), ew.add(qab, m)), x),
                       ew.mul(ew.add(a, m2), ew.add(qap, m2))))
    d = ew.div(c(1.0), clamp_tiny(ew.add(c(1.0), ew.mul(aa, d))))
    cc = clamp_tiny(ew.add(c(1.0), ew.div(aa, cc)))
    return cc, d, ew.mul(h, ew.mul(d, cc))

  _, _, h = cf.fori_loop(1, iters + 1, body, (cc, d, h))
  return h


def betainc(a, b, x):
  """The regularized incomplete beta function ``I_x(a, b)``, by its continued fraction
  (Lentz's method, a fixed number of terms) on whichever of ``x`` and ``1 - x`` makes it
  converge fast. NaN outside ``a, b > 0``, ``0 <= x <= 1``."""
  a, b, x = _same_float(a, b, x)
  c = lambda v: ew._const(x, v)
  iters = 300 if _aval(x).dtype == np.float64 else 120
  swap = ew.gt(x, ew.div(ew.add(a, c(1.0)), ew.add(ew.add(a, b), c(2.0))))
  aa, bb = ew.select(swap, b, a), ew.select(swap, a, b)
  xx = ew.select(swap, ew.sub(c(1.0), x), x)
  # keep the unused branch's arguments harmless, so its NaNs cannot leak into gradients
  safe_x = ew.clamp(c(0.0), xx, c(1.0))
  log_front = ew.sub(ew.add(ew.mul(aa, ew.log(safe_x)), ew.mul(bb, ew.log1p(ew.neg(safe_x)))),
                     ew.add(ew.sub(ew.add(special.lgamma(aa), special.lgamma(bb)),
                                   special.lgamma(ew.add(aa, bb))), ew.log(aa)))
  val = ew.mul(ew.exp(log_front), _betainc_cf(aa, bb, safe_x, iters))
  out = ew.select(swap, ew.sub(c(1.0), val), val)
  out = ew.select(ew.eq(x, c(0.0)), _fill(out, 0.0), out)
  out = ew.select(ew.eq(x, c(1.0)), _fill(out, 1.0), out)
  bad = ew.bitwise_or(ew.bitwise_or(ew.le(a, c(0.0)), ew.le(b, c(0.0))),
                      ew.bitwise_or(ew.lt(x, c(0.0)), ew.gt(x, c(1.0))))
  return ew.select(bad, _fill(out, np.nan), out)


def random_gamma_grad(a, x):
  """``d x / d a`` for a Gamma(``a``, 1) sample ``x`` (implicit reparameterization:
  ``-(dP(a, x)/da) / p(x)`` with ``P`` the regularized lower incomplete gamma)."""
  a, x = _same_float(a, x)
  log_pdf = ew.sub(ew.sub(ew.mul(ew.sub(a, ew._const(a, 1.0)), ew.log(x)), x),
                   special.lgamma(a))
  return ew.neg(ew.div(special.igamma_grad_a(a, x), ew.exp(log_pdf)))


# As in JAX, gamma sampling is one primitive: one equation in a jaxpr, batched by moving
# the batch axes in front, differentiable in ``a`` by implicit reparameterization. Every
# tier runs jax.random's rejection sampler (``random._gamma_impl``) vectorised over the
# elements (a masked while loop), which gives the same numbers as sampling them one at a
# time; the backends register it.
random_gamma_p = core.Primitive("random_gamma")


@random_gamma_p.def_abstract_eval
def _random_gamma_abstract_eval(key, a, *, log_space):
  if key.dtype != np.uint32 or key.shape[-1:] != (2,) or \
      a.shape[:key.ndim - 1] != key.shape[:-1]:
    raise TypeError(f"random_gamma takes uint32 keys (*batch, 2) and alphas (*batch, ...), "
                    f"got {key.str_short()} and {a.str_short()}.")
  return a.strip_weak_type()


def _random_gamma_grad(sample, a, *, log_space):
  """d sample / d a, by implicit reparameterization (``random_gamma_grad``)."""
  if not log_space:
    return random_gamma_grad(a, sample)
  # d log(x) = dx / x; exp(log x) may round to 0, which is replaced by the smallest normal
  x = ew.exp(sample)
  x = ew.select(ew.eq(x, ew._const(x, 0)), _fill(x, dtypes.finfo(_aval(x).dtype).tiny), x)
  return ew.div(random_gamma_grad(a, x), x)


def _random_gamma_batcher(vals, dims, *, log_space):
  size = batching.batch_size(vals, dims)
  key, a = (batching.bdim_at_front(v, d, size) for v, d in zip(vals, dims))
  return random_gamma_p.bind(key, a, log_space=log_space), 0


ad.defjvp2(random_gamma_p, None, lambda g, ans, key, a, *, log_space: ew.mul(
    g, _random_gamma_grad(ans, a, log_space=log_space)))
batching.batching_rules[random_gamma_p] = _random_gamma_batcher


# -- convolution helpers ------------------------------------------------------------------
def conv_general_permutations(dimension_numbers):
  """The axis permutations ``(lhs_perm, rhs_perm, out_perm)`` that bring operands laid
  out as the ``(lhs, rhs, out)`` spec strings into NC.../OI.../NC... order."""
  specs = tuple(dimension_numbers)
  if len(specs) != 3 or not all(isinstance(s, str) for s in specs):
    raise TypeError("dimension_numbers must be a tuple of three strings, got "
                    f"{dimension_numbers!r}")
  return conv_mod._conv_general_permutations(specs)


def _stride_shape(in_shape, window, strides):
  return tuple((int(i) - int(w)) // int(s) + 1 for i, w, s in zip(in_shape, window, strides))


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
  """Output shape of a convolution with NC.../OI... layouts and explicit or named
  padding."""
  if isinstance(pads, str):
    pads = conv_mod.padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
  if len(pads) != len(lhs_shape) - 2:
    raise ValueError(f"Wrong number of explicit pads for convolution: expected "
                     f"{len(lhs_shape) - 2}, got {len(pads)}.")
  padded = [d + lo + hi for d, (lo, hi) in zip(lhs_shape[2:], pads)]
  if any(p < 0 for p in padded):
    raise ValueError("Negative padding is larger than the size of the corresponding "
                     f"dimension: got padding={pads}.")
  space = tuple(builtins.max(0, d) for d in _stride_shape(padded, rhs_shape[2:], strides))
  batch = lhs_shape[0] // batch_group_count if batch_group_count > 1 else lhs_shape[0]
  return (int(batch), int(rhs_shape[0])) + space


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                             dimension_numbers):
  """Output shape of ``conv_general_dilated`` (no dilation) in the output layout."""
  lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
  lhs_t, rhs_t = np.take(lhs_shape, lhs_perm), np.take(rhs_shape, rhs_perm)
  out_t = conv_shape_tuple(tuple(lhs_t), tuple(rhs_t), window_strides, padding)
  return tuple(int(d) for d in np.take(out_t, np.argsort(out_perm)))


def _conv_transpose_padding(k, s, padding):
  if padding == "SAME":
    pad_len = k + s - 2
    pad_a = k - 1 if s > k - 1 else int(np.ceil(pad_len / 2))
  elif padding == "VALID":
    pad_len = k + s - 2 + builtins.max(k - s, 0)
    pad_a = k - 1
  elif isinstance(padding, tuple):
    pads = tuple(k - p - 1 for p in padding)
    pad_a, pad_len = pads[0], sum(pads)
  else:
    raise ValueError(f"Invalid padding mode: {padding}")
  return pad_a, pad_len - pad_a


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers):
  """Output shape of ``conv_transpose`` in the output layout."""
  lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
  lhs_t, rhs_t = np.take(lhs_shape, lhs_perm), np.take(rhs_shape, rhs_perm)
  if isinstance(padding, str):
    padding = [_conv_transpose_padding(int(k), int(s), padding)
               for k, s in zip(rhs_t[2:], window_strides)]
  pad_sums = [int(np.sum(p)) for p in padding]
  space = [(int(i) - 1) * int(s) - int(k) + 2 + p
           for i, k, s, p in zip(lhs_t[2:], rhs_t[2:], window_strides, pad_sums)]
  out_t = (int(lhs_t[0]), int(rhs_t[0])) + tuple(space)
  return tuple(int(d) for d in np.take(out_t, np.argsort(out_perm)))


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None):
  """Output shape of ``reduce_window`` with explicit ``(low, high)`` padding."""
  if base_dilation is not None:
    operand_shape = conv_mod.dilate_shape(operand_shape, base_dilation)
  if window_dilation is not None:
    window_dimensions = conv_mod.dilate_shape(window_dimensions, window_dilation)
  padded = [d + lo + hi for d, (lo, hi) in zip(operand_shape, padding)]
  return _stride_shape(padded, window_dimensions, window_strides)


_TRANSPOSE_DEFAULT_DNUMS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                            4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
  """Transposed ("deconvolution") convolution, computed as a convolution with the
  input dilated by ``strides`` (``jax.lax.conv_transpose``; layouts default to
  NHWC/HWIO/NHWC)."""
  lhs, rhs = _operand(lhs), _operand(rhs)
  la, ra = _aval(lhs), _aval(rhs)
  ndims = la.ndim
  if ndims != ra.ndim or ndims < 2:
    raise ValueError("conv_transpose requires lhs and rhs of equal rank >= 2")
  if dimension_numbers is None:
    if ndims not in _TRANSPOSE_DEFAULT_DNUMS:
      raise ValueError("No 4+ dimensional dimension_number defaults.")
    dimension_numbers = _TRANSPOSE_DEFAULT_DNUMS[ndims]
  dn = conv_mod.conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
  k_sdims = [ra.shape[i] for i in dn.rhs_spec[2:]]
  rhs_dilation = (1,) * (ndims - 2) if rhs_dilation is None else tuple(rhs_dilation)
  if use_consistent_padding or (isinstance(padding, str) and padding in {"SAME", "VALID"}):
    eff = [(k - 1) * r + 1 for k, r in zip(k_sdims, rhs_dilation)]
    rep = [padding] * len(strides) if isinstance(padding, str) else padding
    pads = tuple(_conv_transpose_padding(k, s, p) for k, s, p in zip(eff, strides, rep))
  else:
    pads = padding
  if transpose_kernel:
    rhs = shapes.rev(rhs, tuple(dn.rhs_spec[2:]))
    perm = list(range(ndims))
    perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = dn.rhs_spec[1], dn.rhs_spec[0]
    rhs = shapes.transpose(rhs, tuple(perm))
  return conv_mod.conv_general_dilated(lhs, rhs, (1,) * (ndims - 2), pads, strides,
                                       rhs_dilation, dn, precision=precision,
                                       preferred_element_type=preferred_element_type)


def conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                 lhs_dilation=None, rhs_dilation=None,
                                 dimension_numbers=None, precision=None,
                                 preferred_element_type=None):
  """The patches a convolution with a kernel of ``filter_shape`` would see, flattened
  into the feature axis (feature-major: channel ``c``, then the window position)."""
  lhs = _operand(lhs)
  la = _aval(lhs)
  filter_shape = tuple(int(d) for d in filter_shape)
  dn = conv_mod.conv_dimension_numbers(la.shape, (1, 1) + filter_shape, dimension_numbers)
  spatial = math.prod(filter_shape)
  n_channels = la.shape[dn.lhs_spec[1]]
  eye = Array(np.eye(spatial, dtype=la.dtype))
  rhs = shapes.broadcast_in_dim(eye, (n_channels, spatial, spatial), (1, 2))
  rhs = shapes.reshape(rhs, (n_channels * spatial, 1) + filter_shape)
  # lay the kernel out as dn.rhs_spec says: axis rhs_spec[i] holds logical axis i
  perm = [0] * len(dn.rhs_spec)
  for logical, physical in enumerate(dn.rhs_spec):
    perm[physical] = logical
  rhs = shapes.transpose(rhs, tuple(perm))
  # the kernel is exact (ones and zeros): the precision is the input's alone
  return conv_mod.conv_general_dilated(
      lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation, dn,
      feature_group_count=n_channels,
      precision=None if precision is None else (precision, Precision.DEFAULT),
      preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape,
                               lhs_dilation=None, rhs_dilation=None,
                               dimension_numbers=None, precision=None):
  """Locally connected ("unshared") convolution: a different kernel at every output
  position. ``rhs`` holds, at each output position, a ``(C * prod(filter_shape), O)``
  kernel laid out as ``dimension_numbers``' rhs spec."""
  lhs, rhs = _operand(lhs), _operand(rhs)
  c_precision = canonicalize_precision(precision)
  if c_precision is not None and type(c_precision) is not tuple:
    raise ValueError(f"Unsupported precision for conv_general_dilated_local: {precision}")
  patches = conv_general_dilated_patches(lhs, filter_shape, window_strides, padding,
                                         lhs_dilation, rhs_dilation, dimension_numbers,
                                         precision=c_precision and c_precision[0])
  _, rhs_spec, out_spec = conv_mod.conv_dimension_numbers(
      _aval(lhs).shape, (1, 1) + tuple(filter_shape), dimension_numbers)
  lhs_b, rhs_b = list(out_spec[2:]), list(rhs_spec[2:])
  rhs_b = [rhs_b[i] for i in sorted(range(len(rhs_b)), key=lambda k: lhs_b[k])]
  lhs_b = sorted(lhs_b)
  out = red.dot_general(patches, rhs, (((out_spec[1],), (rhs_spec[1],)),
                                       (tuple(lhs_b), tuple(rhs_b))), precision=precision)
  # dot_general gives (batch dims..., lhs free (N), rhs free (O)): move N, O into place
  nd = _aval(out).ndim
  order = [None] * nd
  order[out_spec[0]], order[out_spec[1]] = nd - 2, nd - 1
  rest = iter(range(nd - 2))
  order = [next(rest) if o is None else o for o in order]
  return shapes.transpose(out, tuple(order))


# -- ragged and scaled dots ---------------------------------------------------------------
def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None, out_sharding=None):
  """Grouped matmul: rows of ``lhs`` ``[m, k]`` are split into consecutive groups of
  ``group_sizes`` ``[g]``, and group ``i`` is multiplied by ``rhs[i]`` (``rhs`` is
  ``[g, k, n]``). Rows past ``sum(group_sizes)`` give zeros."""
  if group_offset is not None:
    raise NotImplementedError("ragged_dot: group_offset is not supported")
  lhs, rhs, group_sizes = _operand(lhs), _operand(rhs), _operand(group_sizes)
  la, ra = _aval(lhs), _aval(rhs)
  if la.ndim != 2 or ra.ndim != 3 or _aval(group_sizes).shape != (ra.shape[0],):
    raise TypeError(f"ragged_dot expects lhs [m, k], rhs [g, k, n], group_sizes [g]; got "
                    f"{la.shape}, {ra.shape}, {_aval(group_sizes).shape}")
  m, g = la.shape[0], ra.shape[0]
  ends = sorting.cumsum(ew.convert_element_type(group_sizes, np.int32), axis=0)
  starts = ew.sub(ends, ew.convert_element_type(group_sizes, np.int32))
  rows = shapes.broadcasted_iota(np.int32, (m, g), 0)
  mask = ew.bitwise_and(ew.ge(rows, shapes.broadcast_in_dim(starts, (m, g), (1,))),
                        ew.lt(rows, shapes.broadcast_in_dim(ends, (m, g), (1,))))
  # per-group products [g, m, n], then keep each row's own group
  prod = red.dot_general(lhs, rhs, (((1,), (1,)), ((), ())), precision=precision,
                         preferred_element_type=preferred_element_type)  # [m, g, n]
  prod = ew.select(shapes.broadcast_in_dim(mask, _aval(prod).shape, (0, 1)), prod,
                   _fill(prod, 0))
  return red.reduce_sum(prod, (1,))


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None, out_sharding=None):
  """``ragged_dot`` with explicit dimension numbers. Only the ``ragged_dot`` case is
  supported: no batch dimensions, one lhs ragged non-contracting dimension and one rhs
  group dimension."""
  dn = ragged_dot_dimension_numbers
  (lc, rc), (lb, rb) = dn.dot_dimension_numbers
  lhs, rhs = _operand(lhs), _operand(rhs)
  if lb or rb or len(dn.lhs_ragged_dimensions) != 1 or len(dn.rhs_group_dimensions) != 1 \
      or len(lc) != 1 or _aval(lhs).ndim != 2 or _aval(rhs).ndim != 3 \
      or dn.lhs_ragged_dimensions[0] in lc:
    raise NotImplementedError("ragged_dot_general: only the ragged_dot form (2-D lhs "
                              "ragged in its non-contracting dimension, 3-D rhs with one "
                              "group dimension, no batch dimensions) is supported")
  lhs = shapes.transpose(lhs, (dn.lhs_ragged_dimensions[0], lc[0]))
  gdim = dn.rhs_group_dimensions[0]
  free = [d for d in range(3) if d not in (gdim, rc[0])]
  rhs = shapes.transpose(rhs, (gdim, rc[0], free[0]))
  return ragged_dot(lhs, rhs, group_sizes, precision, preferred_element_type, group_offset)


def _expand_scale(scale, shape):
  sa = _aval(scale)
  for axis, (s, d) in enumerate(zip(sa.shape, shape)):
    if s != d:
      if d % s:
        raise ValueError(f"scaled_dot: scale dimension {s} does not divide operand "
                         f"dimension {d}")
      cur = _aval(scale).shape
      big = cur[:axis] + (s, d // s) + cur[axis + 1:]
      scale = shapes.broadcast_in_dim(scale, big, tuple(i for i in range(len(big))
                                                        if i != axis + 1))
      scale = shapes.reshape(scale, cur[:axis] + (d,) + cur[axis + 1:])
  return scale


def scaled_dot(lhs, rhs, *, lhs_scale=None, rhs_scale=None, dimension_numbers=None,
               preferred_element_type=None):
  """``dot_general(lhs * lhs_scale, rhs * rhs_scale)``, each scale repeated along the
  contracting dimension in blocks ("subchannels"), computed in
  ``preferred_element_type`` (default bfloat16)."""
  lhs, rhs = _operand(lhs), _operand(rhs)
  n = _aval(lhs).ndim
  if dimension_numbers is None:
    if n < 2:
      raise TypeError("scaled_dot does not support 0-rank and 1-rank operands.")
    dimension_numbers = (((n - 1,), (n - 2,)), (tuple(range(n - 2)), tuple(range(n - 2))))
  out_dtype = dtypes.canonicalize_dtype(preferred_element_type or dtypes.bfloat16)
  acc = np.dtype(np.float32)

  def scaled(x, scale):
    x = ew.convert_element_type(x, acc)
    if scale is None:
      return x
    return ew.mul(x, _expand_scale(ew.convert_element_type(_operand(scale), acc),
                                   _aval(x).shape))

  out = red.dot_general(scaled(lhs, lhs_scale), scaled(rhs, rhs_scale), dimension_numbers)
  return ew.convert_element_type(out, out_dtype)


# -- implicit differentiation -------------------------------------------------------------
def _tree_sub(a, b):
  return tree.tree_map(ew.sub, a, b)


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False,
                        has_aux=False):
  """``x = solve(matvec, b)`` for a linear ``matvec``, differentiated implicitly rather
  than through ``solve`` (``jax.lax.custom_linear_solve``).

  The tangent of ``x`` is ``solve(matvec, db - dmatvec(x))``: one more solve, on the
  tangent (forward mode), declared linear with ``linear_call``, whose transpose (reverse
  mode) is ``transpose_solve`` with the transposed ``matvec`` (``matvec`` itself when
  ``symmetric``). Derivatives flow to ``b`` and to the arrays ``matvec`` closes over; what
  ``solve`` closes over is not differentiated. Reverse mode needs ``transpose_solve``
  (``solve`` by default when ``symmetric``).
  """
  if transpose_solve is None and symmetric:
    transpose_solve = solve
  b_leaves, b_tree = tree.tree_flatten(b)
  b_leaves = [_operand(x) for x in b_leaves]
  b_avals = [_aval(x) for x in b_leaves]
  trees = {}

  def run_solve(fn, mv, rhs_leaves, rhs_tree):
    found = fn(mv, tree.tree_unflatten(rhs_tree, rhs_leaves))
    x, aux = found if has_aux else (found, None)
    x_leaves, trees["x"] = tree.tree_flatten(x)
    aux_leaves, trees["aux"] = tree.tree_flatten(aux)
    return [_operand(v) for v in x_leaves], [_operand(v) for v in aux_leaves]

  # the solution's types (solve may change b's: an integer b, a float matvec)
  x_avals = cd._trace_closed(lambda *r: run_solve(solve, matvec, r, b_tree)[0],
                             b_avals)[0].out_avals
  x_tree = trees["x"]

  # matvec with the arrays it closes over as explicit, differentiable inputs
  def flat_matvec(*v):
    return [_operand(y) for y in tree.tree_leaves(matvec(tree.tree_unflatten(x_tree, v)))]
  mv_jaxpr, mv_consts = cd._trace_closed(flat_matvec, x_avals)
  mv_avals = [_aval(c) for c in mv_consts]
  n_c = len(mv_consts)

  def mv_with(consts):
    return lambda v: tree.tree_unflatten(x_tree, core.eval_jaxpr(
        mv_jaxpr.jaxpr, [], *consts, *tree.tree_leaves(v)))

  def vecmat_with(consts):
    if symmetric:
      return mv_with(consts)

    def vecmat(ct):
      undefined = [ad.UndefinedPrimal(a) for a in x_avals]
      cts = ad.backward_pass(mv_jaxpr.jaxpr, [], list(consts) + undefined,
                             [_operand(c) for c in tree.tree_leaves(ct)])[n_c:]
      return tree.tree_unflatten(x_tree, [ad.instantiate(c) if type(c) is ad.Zero else c
                                          for c in cts])
    return vecmat

  # solve (and transpose_solve) with what they close over as explicit inputs, so that the
  # differentiation rule below works on the values it is given
  def flat_solve(*args):
    x_leaves, aux_leaves = run_solve(solve, mv_with(args[:n_c]), args[n_c:], b_tree)
    return x_leaves + aux_leaves
  solve_jaxpr, solve_consts = cd._trace_closed(flat_solve, mv_avals + b_avals)
  n_x, aux_tree = len(x_avals), trees["aux"]
  if transpose_solve is None:
    tsolve_jaxpr, tsolve_consts = None, []
  else:
    tsolve_jaxpr, tsolve_consts = cd._trace_closed(
        lambda *args: run_solve(transpose_solve, vecmat_with(args[:n_c]), args[n_c:],
                                x_tree)[0], mv_avals + list(x_avals))
  n_s = len(solve_consts)

  def eval_solve(sc, consts, rhs):
    return core.eval_jaxpr(solve_jaxpr.jaxpr, [], *sc, *consts, *rhs)

  def primal(sc, tc, consts, rhs_leaves):
    return eval_solve(sc, consts, rhs_leaves)

  solve_all = cd.custom_jvp(primal)

  @solve_all.defjvp
  def _solve_jvp(primals, tangents):
    sc, tc, consts, rhs_leaves = primals
    dconsts, drhs = tangents[2], tangents[3]
    outs = eval_solve(sc, consts, rhs_leaves)
    x_leaves = outs[:n_x]
    _, dAx = ad.jvp_flat(lambda *c: tree.tree_leaves(mv_with(c)(
        tree.tree_unflatten(x_tree, x_leaves))), list(consts), list(dconsts))
    rhs = []
    for db, dax, a in zip(drhs, dAx, x_avals):
      if dtypes.is_inexact(_aval(db).dtype):
        rhs.append(ew.sub(ew.convert_element_type(db, a.dtype), dax))
      else:   # an integer b has a float0 (no) tangent
        rhs.append(ew.neg(dax))

    def tangent_solve(res, r):
      return eval_solve(res[0], res[1], r)[:n_x]

    def transposed_solve(res, ct):
      return core.eval_jaxpr(tsolve_jaxpr.jaxpr, [], *res[2], *res[1], *ct)
    dx = cd.linear_call(tangent_solve, None if tsolve_jaxpr is None else transposed_solve,
                        (list(sc), list(consts), list(tc)), rhs)
    aux_tangents = [ad.zeros_like_aval(ad.tangent_aval(_aval(v))) for v in outs[n_x:]]
    return outs, list(dx) + aux_tangents

  outs = solve_all(list(solve_consts), list(tsolve_consts), list(mv_consts), b_leaves)
  x = tree.tree_unflatten(x_tree, outs[:n_x])
  return (x, tree.tree_unflatten(aux_tree, outs[n_x:])) if has_aux else x


# -- collectives over named axes, built on the primitives of lax.parallel ----------------
def axis_size(axis_name):
  """The size of the named vmap axis (a product over a tuple of names)."""
  return math.prod(batching.axis_size(n, "axis_size") for n in parallel._names(axis_name))


def pshuffle(x, axis_name, perm):
  """Example ``i`` receives the value of example ``perm[i]`` along the named axis."""
  return parallel.ppermute(x, axis_name, [(p, i) for i, p in enumerate(perm)])


def pbroadcast(x, axis_name, source):
  """Every example receives the value of example ``source`` along the named axis."""
  return tree.tree_map(
      lambda v: indexing.index_in_dim(parallel.all_gather(_operand(v), axis_name), source,
                                      0, keepdims=False), x)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None,
                 tiled=False):
  """``psum`` then give example ``i`` only block ``i`` of ``scatter_dimension`` (one
  index, or with ``tiled=True`` a block of ``size / axis_size`` entries).

  With ``axis_index_groups`` (equal groups covering every index once; under ``pmap``
  and ``shard_map`` only, as in JAX) the sum is over the example's group and the block
  is the one of its place in the group.
  """
  names = parallel._names(axis_name)
  groups = parallel._canonical_groups(axis_index_groups)
  n = axis_size(axis_name)
  if groups is not None:
    parallel._no_groups_under_vmap("reduce_scatter", names, groups)
    parallel._check_groups_fit("psum_scatter", groups, names, equal=True)
    n = len(groups[0])

  def one(v):
    total = parallel.psum(_operand(v), axis_name, axis_index_groups=groups)
    me = parallel._group_position(names, groups)
    size = _aval(total).shape[scatter_dimension]
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
  return parallel.all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)
