"""Tier 0's table of NumPy implementations, one row per primitive.

Each implementation takes NumPy values and the primitive's params and returns NumPy
values of exactly the dtype the primitive's shape rule says (a test checks every row).
"""
import functools
import math

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.lax import indexing as ix
from jaxlite._src.lax import reductions as red
from jaxlite._src.lax import shapes as sh
from jaxlite._src.backends import background
from jaxlite._src.lax.kernels import signed_zeros

# the eager trace's table itself (core.EvalTrace.impls), so that what is registered here
# later is what eager evaluation finds
impl_rules = core.EvalTrace.impls

# primitive -> its implementation writing into its first operand instead of a copy, which
# the code generator calls where that operand's buffer dies unseen (a loop's carry updated
# by a scatter or dynamic_update_slice: O(update) a step, not O(operand)); both forms
# return a buffer that the output alone owns (the operand's, or a copy of it)
inplace_rules: dict = {}


def writable(operand):
  """``operand`` itself where an in-place rule can write into it, else a C-ordered copy."""
  if isinstance(operand, np.ndarray) and operand.flags.c_contiguous and \
      operand.flags.writeable:
    return operand
  return np.array(operand, order="C", copy=True)

def _same_dtype(f):
  """Wrap a NumPy function whose result dtype may drift (e.g. float16 math). It takes the
  transcendental functions' ``accuracy`` too (see ``_any_accuracy``)."""
  def impl(x, *rest, accuracy=None):
    out = f(x, *rest)
    return out if out.dtype == x.dtype else np.asarray(out).astype(x.dtype)
  return impl


def _any_accuracy(f):
  """A kernel of a primitive with JAX's ``accuracy`` param: tier 0 has one implementation
  of each function, so the requested accuracy changes nothing (as on XLA's CPU backend)."""
  def impl(x, accuracy=None):
    return f(x)
  return impl


def _by_kind(real, complex_):
  """``real`` on real operands, ``complex_`` (XLA's special values) on complex ones."""
  return lambda x, *rest: (complex_ if x.dtype.kind == "c" else real)(x, *rest)


def _clamp(lo, x, hi):
  if x.dtype.kind == "c":
    # XLA orders complex bounds by their real parts alone, ties going to the bound
    # (measured on JAX 0.10.2's CPU backend)
    low = np.where(x.real <= lo.real, lo, x)
    return np.where(low.real <= hi.real, low, hi)
  low = signed_zeros(np.maximum(x, lo), x, lo, True)
  return signed_zeros(np.minimum(low, hi), low, hi, False).astype(x.dtype, copy=False)


def _elementwise_impl(spec):
  """The implementation of an elementwise primitive, from its spec: its kernel, by
  operand kind if it has a complex variant, then cast to the operand's dtype unless the
  kernel keeps it (a call less on eager's hot path)."""
  kernel = spec.kernel if spec.complex_kernel is None else _by_kind(spec.kernel,
                                                                    spec.complex_kernel)
  if not spec.keeps_dtype:
    return _same_dtype(kernel)   # (which takes ``accuracy`` too)
  return _any_accuracy(kernel) if spec.accuracy else kernel


for _prim, _spec in ew.specs.items():
  impl_rules[_prim] = _elementwise_impl(_spec)


def _select_n(which, *cases):
  if len(cases) == 1:
    return cases[0]
  if which.dtype == np.bool_:
    return np.where(which, cases[1], cases[0])
  return np.choose(which, cases, mode="clip")


impl_rules[ew.select_n_p] = _select_n
impl_rules[ew.clamp_p] = _clamp


def _convert_element_type(x, *, new_dtype, weak_type, sharding):
  x = np.asarray(x)
  if x.dtype.kind == "c" and new_dtype.kind != "c":
    x = x.real
  if dtypes._kind(x.dtype) == "f" and new_dtype.kind in "iu":
    # XLA saturates out-of-range floats and maps NaN to 0 instead of wrapping around.
    info = np.iinfo(new_dtype)
    with np.errstate(invalid="ignore", over="ignore"):
      out = np.nan_to_num(x, nan=0).astype(new_dtype)
    wide = x.astype(np.float64)
    return np.where(wide >= info.max, info.max, np.where(wide <= info.min, info.min, out)
                    ).astype(new_dtype)
  with np.errstate(invalid="ignore", over="ignore"):
    return x.astype(new_dtype)


impl_rules[ew.convert_element_type_p] = _convert_element_type


# -- reductions
def _reduce(np_fn):
  return lambda x, *, axes, **_: np.asarray(np_fn(x, axis=axes)).astype(x.dtype, copy=False)


# ufunc.reduce directly (not np.sum): NumPy's floating-point warnings are then raised
# from this module, where core.QUIET_FILTER silences them as XLA would.
impl_rules[red.reduce_sum_p] = _reduce(np.add.reduce)
impl_rules[red.reduce_prod_p] = _reduce(np.multiply.reduce)


def complex_choose(better):
  """XLA's complex max (``better=np.greater``) or min of an accumulator and an element:
  the accumulator where it compares ``better`` (lexicographically on real, then imaginary
  part), else the element. A NaN never compares better, so a NaN element replaces the
  accumulator and is itself replaced by the element after it."""
  def choose(acc, item):
    keep = np.where(acc.real == item.real, better(acc.imag, item.imag),
                    better(acc.real, item.real))
    return np.where(keep, acc, item)
  return choose


def _complex_fold(x, axes, identity, better):
  """XLA's complex ``reduce_max``/``reduce_min``: a left fold from ``identity``."""
  kept = [d for d in range(x.ndim) if d not in axes]
  n = int(np.prod([x.shape[d] for d in axes], dtype=np.int64))
  rows = np.transpose(x, kept + list(axes)).reshape([x.shape[d] for d in kept] + [n])
  acc, choose = np.full(rows.shape[:-1], identity, x.dtype), complex_choose(better)
  for k in range(n):
    acc = choose(acc, rows[..., k])
  return acc


def _extremum(ufunc, identity, better):
  is_max = ufunc is np.maximum

  def impl(x, *, axes):
    if x.dtype.kind == "c":
      return _complex_fold(x, axes, identity(x.dtype), better)
    out = ufunc.reduce(x, axis=axes, initial=identity(x.dtype))
    if x.dtype.kind in "biu":
      return out
    # a zero result is signed as XLA's max/min sign zeros (see signed_zeros): -0 for a max
    # without a +0, and for a min with a -0
    zero = np.equal(out, 0)
    if not zero.any():
      return out
    sign = np.signbit(x)
    zeros = np.equal(x, 0)
    if is_max:
      neg = ~np.logical_or.reduce(zeros & ~sign, axis=axes)
    else:
      neg = np.logical_or.reduce(zeros & sign, axis=axes)
    fixed = np.where(zero, np.where(neg, -0.0, 0.0), out).astype(out.dtype, copy=False)
    return fixed if isinstance(out, np.ndarray) else fixed[()]
  return impl


impl_rules[red.reduce_max_p] = _extremum(np.maximum, dtypes.lowest, np.greater)
impl_rules[red.reduce_min_p] = _extremum(np.minimum, dtypes.highest, np.less)
impl_rules[red.reduce_and_p] = lambda x, *, axes: (
    np.all(x, axis=axes) if x.dtype == np.bool_ else np.bitwise_and.reduce(x, axis=axes))
impl_rules[red.reduce_or_p] = lambda x, *, axes: (
    np.any(x, axis=axes) if x.dtype == np.bool_ else np.bitwise_or.reduce(x, axis=axes))
impl_rules[red.reduce_xor_p] = lambda x, *, axes: (
    np.logical_xor.reduce(x, axis=axes) if x.dtype == np.bool_
    else np.bitwise_xor.reduce(x, axis=axes))




def _arg_reduce(np_fn):
  def impl(x, *, axes, index_dtype):
    (axis,) = axes
    return np_fn(x, axis=axis).astype(index_dtype)
  return impl


impl_rules[red.argmax_p] = _arg_reduce(np.argmax)
impl_rules[red.argmin_p] = _arg_reduce(np.argmin)


def _dot_general(lhs, rhs, *, dimension_numbers, precision, preferred_element_type,
                 out_sharding):
  # XLA's canonical form: (batch, free, contracted) @ (batch, contracted, free), one
  # matmul (one BLAS call when there is no batch); a contraction of size 1 (an outer
  # product, as per-example gradients make) is a broadcast multiply. NumPy's einsum
  # would plan some of these as a BLAS call per row (W7 in benchmarks/README.md).
  (lc, rc), (lb, rb) = dimension_numbers
  lf = [d for d in range(lhs.ndim) if d not in lc and d not in lb]
  rf = [d for d in range(rhs.ndim) if d not in rc and d not in rb]
  batch = [lhs.shape[d] for d in lb]
  m, n = [lhs.shape[d] for d in lf], [rhs.shape[d] for d in rf]
  k = math.prod(lhs.shape[d] for d in lc)
  operand_dtype = red.dot_operand_dtype(lhs.dtype, rhs.dtype)
  dtype = np.dtype(preferred_element_type or operand_dtype)
  acc = red.dot_accumulation_dtype(operand_dtype, dtype)
  lhs, rhs = lhs.astype(acc, copy=False), rhs.astype(acc, copy=False)
  if not lb and lhs.ndim <= 2 and rhs.ndim <= 2 and tuple(lc) == (lhs.ndim - 1,) and tuple(
      rc) == (0,):
    res = _blas(np.dot, lhs, rhs, math.prod(m + n) * k)   # (no reshapes needed)
  else:
    a = lhs.transpose([*lb, *lf, *lc]).reshape(math.prod(batch), math.prod(m), k)
    b = rhs.transpose([*rb, *rc, *rf]).reshape(math.prod(batch), k, math.prod(n))
    res = (a * b if k == 1 else _blas(np.matmul, a, b, a.size * b.shape[2])).reshape(
        batch + m + n)
  if res.dtype == dtype:
    return res
  # XLA's conversion: the real part of complex operands, floats saturating into integers
  return _convert_element_type(res, new_dtype=dtype, weak_type=False, sharding=None)


def _blas(product, a, b, size):
  """``product(a, b)`` of ``size`` multiply-adds; one that OpenBLAS may thread is watched
  for a loaded machine's CPUs (``background.host_blas``)."""
  if size < background.HostBlas.THREADED_FROM:
    return product(a, b)
  return background.host_blas().product(product, a, b, size=size)


impl_rules[red.dot_general_p] = _dot_general


# -- shapes
def expanded_shape(operand_shape, shape, broadcast_dimensions) -> tuple:
  """The operand's shape with size-1 axes inserted where ``broadcast_in_dim`` adds axes:
  the reshape that NumPy's broadcasting then takes to ``shape``."""
  expanded = [1] * len(shape)
  for i, d in enumerate(broadcast_dimensions):
    expanded[d] = operand_shape[i]
  return tuple(expanded)


def _broadcast_in_dim(x, *, shape, broadcast_dimensions, sharding):
  expanded = expanded_shape(np.shape(x), shape, broadcast_dimensions)
  x = np.reshape(x, expanded)
  # np.broadcast_to costs ~3 us; a broadcast that only inserts size-1 axes is the reshape
  return x if expanded == tuple(shape) else np.broadcast_to(x, shape)


def _slice(x, *, start_indices, limit_indices, strides):
  strides = strides or (1,) * x.ndim
  return x[tuple(slice(a, b, s) for a, b, s in zip(start_indices, limit_indices, strides))]


def _pad(x, value, *, padding_config):
  lows = [lo for lo, _, _ in padding_config]
  highs = [hi for _, hi, _ in padding_config]
  interior_shape = [s + max(s - 1, 0) * i for s, (_, _, i) in zip(x.shape, padding_config)]
  full = [max(l, 0) + n + max(h, 0) for l, n, h in zip(lows, interior_shape, highs)]
  out = np.full(full, value, dtype=x.dtype)
  out[tuple(slice(max(l, 0), max(l, 0) + n, i + 1)
            for l, n, (_, _, i) in zip(lows, interior_shape, padding_config))] = x
  crop = tuple(slice(-min(l, 0), f - (-min(h, 0))) for l, h, f in zip(lows, highs, full))
  return out[crop]


def _clamped_starts(shape, starts, sizes):
  return [int(np.clip(s, 0, d - n)) for s, d, n in zip(starts, shape, sizes)]


def _dynamic_slice(x, *starts, slice_sizes):
  starts = _clamped_starts(x.shape, starts, slice_sizes)
  return x[tuple(slice(s, s + n) for s, n in zip(starts, slice_sizes))]


def _dynamic_update_slice(x, update, *starts, in_place=False):
  starts = _clamped_starts(x.shape, starts, update.shape)
  out = writable(x) if in_place else np.array(x, copy=True)
  out[tuple(slice(s, s + n) for s, n in zip(starts, update.shape))] = update
  return out


def _iota(*, dtype, shape, dimension, sharding):
  index_shape = [1] * len(shape)
  index_shape[dimension] = shape[dimension]
  return np.broadcast_to(np.arange(shape[dimension], dtype=dtype).reshape(index_shape), shape)


impl_rules.update({
    sh.broadcast_in_dim_p: _broadcast_in_dim,
    sh.reshape_p: lambda x, *, new_sizes, dimensions, sharding: np.reshape(x, new_sizes),
    sh.transpose_p: lambda x, *, permutation: np.transpose(x, permutation),
    sh.squeeze_p: lambda x, *, dimensions: np.squeeze(x, dimensions),
    sh.concatenate_p: lambda *xs, dimension: np.concatenate(xs, axis=dimension),
    sh.slice_p: _slice,
    sh.rev_p: lambda x, *, dimensions: np.flip(x, dimensions),
    sh.iota_p: _iota,
    sh.pad_p: _pad,
    ix.dynamic_slice_p: _dynamic_slice,
    ix.dynamic_update_slice_p: _dynamic_update_slice,
})
inplace_rules[ix.dynamic_update_slice_p] = functools.partial(_dynamic_update_slice,
                                                             in_place=True)

from jaxlite._src.transforms import ad  # noqa: E402

impl_rules[ad.add_any_p] = np.add

from jaxlite._src.lax import ad_checkpoint  # noqa: E402
from jaxlite._src.lax import custom_derivatives as cd  # noqa: E402
from jaxlite._src.lax import custom_batching  # noqa: E402

impl_rules[cd.custom_jvp_call_p] = cd._custom_jvp_call_impl
impl_rules[cd.custom_vjp_call_p] = cd._custom_jvp_call_impl
impl_rules[cd.custom_lin_p] = cd._custom_lin_impl
impl_rules[cd.stop_gradient_p] = lambda x: x
impl_rules[ad_checkpoint.name_p] = lambda x, *, name: x
impl_rules[cd.remat_p] = cd._remat_impl
impl_rules[cd.linear_call_p] = cd._linear_call_impl
impl_rules[custom_batching.custom_vmap_call_p] = custom_batching.custom_vmap_call_impl
