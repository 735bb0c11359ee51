"""NumPy implementations of the special-function, bit, sorting and scan primitives.

Special functions come from ``scipy.special`` (a dependency of this backend): NumPy has
no erf, lgamma or incomplete gamma. Half-precision inputs are computed in float32 and
rounded back, as XLA does.
"""
import numpy as np
import scipy.special as sps

from jaxlite._src import dtypes
from jaxlite._src.backends.numpy.impls import impl_rules
from jaxlite._src.lax import bits
from jaxlite._src.lax import extra
from jaxlite._src.lax import sorting
from jaxlite._src.lax import special


def _in_float32(f):
  """Run ``f`` at float32 or wider and return the input's dtype."""
  def impl(*args):
    dtype = args[0].dtype
    wide = [np.asarray(a, np.float32) if a.dtype.itemsize < 4 else a for a in args]
    with np.errstate(all="ignore"):
      return np.asarray(f(*wide)).astype(dtype, copy=False)
  return impl


def _digamma(x):
  # XLA gives NaN at the poles (0, -1, ...); scipy gives -inf at 0
  return np.where((x <= 0) & (x == np.floor(x)), np.nan, sps.digamma(x))


def _polygamma(m, x):
  return np.where(m == 0, _digamma(x), sps.polygamma(np.maximum(m, 0).astype(np.int64)
                                                     if m.size else m, x))


def _igamma_grad_a(a, x):
  # d/da P(a, x) by a fourth-order central difference in float64; the step scales
  # with a so that relative accuracy holds across magnitudes.
  a64, x64 = a.astype(np.float64), x.astype(np.float64)
  h = 1e-4 * np.maximum(1.0, np.abs(a64))
  f = lambda d: sps.gammainc(a64 + d, x64)
  return (8 * (f(h) - f(-h)) - (f(2 * h) - f(-2 * h))) / (12 * h)


impl_rules.update({
    special.erf_p: _in_float32(sps.erf),
    special.erfc_p: _in_float32(sps.erfc),
    special.erf_inv_p: _in_float32(sps.erfinv),
    special.lgamma_p: _in_float32(sps.gammaln),
    special.digamma_p: _in_float32(_digamma),
    special.polygamma_p: _in_float32(_polygamma),
    special.igamma_p: _in_float32(sps.gammainc),
    special.igammac_p: _in_float32(sps.gammaincc),
    special.igamma_grad_a_p: _in_float32(_igamma_grad_a),
    special.bessel_i0e_p: _in_float32(sps.i0e),
    special.bessel_i1e_p: _in_float32(sps.i1e),
})


# -- bits
def _unsigned(dtype):
  return np.dtype(f"u{dtype.itemsize}")


def _logical_shift(np_shift):
  """``np_shift`` on the bits as unsigned, with shifts of the bit width or more (negative
  ones are huge unsigned shifts, as in XLA) giving 0."""
  def impl(x, y):
    nbits = 8 * x.dtype.itemsize
    amount = y.astype(_unsigned(y.dtype))
    big = amount >= nbits
    out = np_shift(x.view(_unsigned(x.dtype)), np.where(big, 0, amount).astype(
        _unsigned(x.dtype))).view(x.dtype)
    return np.where(big, 0, out).astype(x.dtype)
  return impl


_shift_left = _logical_shift(np.left_shift)
_shift_right_logical = _logical_shift(np.right_shift)


def _shift_right_arithmetic(x, y):
  nbits = 8 * x.dtype.itemsize
  amount = np.minimum(y.astype(_unsigned(y.dtype)), nbits - 1)
  signed = x.view(np.dtype(f"i{x.dtype.itemsize}"))
  return np.right_shift(signed, amount.astype(signed.dtype)).view(x.dtype)


def _population_count(x):
  u = x.view(_unsigned(x.dtype)).astype(np.uint64)
  count = np.zeros(x.shape, np.uint64)
  for _ in range(8 * x.dtype.itemsize):
    count += u & np.uint64(1)
    u = u >> np.uint64(1)
  return count.astype(x.dtype)


def _clz(x):
  nbits = 8 * x.dtype.itemsize
  u = x.view(_unsigned(x.dtype)).astype(np.uint64)
  width = np.zeros(x.shape, np.int64)
  for bit in range(nbits):
    width = np.where((u >> np.uint64(bit)) & np.uint64(1), bit + 1, width)
  return (nbits - width).astype(x.dtype)


def _round_away(x):
  # floor(|x| + 0.5) is wrong just below 0.5 (0.49999997 + 0.5 rounds up to 1)
  r = np.trunc(x)
  frac = np.abs(x - r)
  return np.where(frac >= 0.5, r + np.sign(x), r).astype(x.dtype)


def _round_impl(x, *, rounding_method):
  if rounding_method == bits.RoundingMethod.TO_NEAREST_EVEN:
    return np.rint(x).astype(x.dtype)
  return _round_away(x)


def _reduce_precision(x, *, exponent_bits, mantissa_bits):
  info = dtypes.finfo(x.dtype)
  nmant, nexp = int(info.nmant), int(info.nexp)
  nbits = 8 * x.dtype.itemsize
  u = _unsigned(x.dtype).type
  b = np.array(x).view(_unsigned(x.dtype))
  if mantissa_bits < nmant:
    # round to nearest even at the new last mantissa bit
    shift = nmant - mantissa_bits
    last = u(1 << shift)
    bias = (b & last) >> u(shift)
    bias = bias + u((1 << (shift - 1)) - 1)
    b = (b + bias) & ~u((1 << shift) - 1)
  if exponent_bits < nexp:
    sign_mask = u(1 << (nbits - 1))
    exp_mask = u(((1 << nexp) - 1) << nmant)
    exp_bias = (1 << (nexp - 1)) - 1
    reduced_bias = (1 << (exponent_bits - 1)) - 1
    exponent = b & exp_mask
    overflow = exponent > u((exp_bias + reduced_bias) << nmant)
    underflow = exponent <= u((exp_bias - reduced_bias) << nmant)
    signed_zero = b & sign_mask
    b = np.where(overflow, signed_zero | exp_mask, np.where(underflow, signed_zero, b))
  out = np.asarray(b).view(x.dtype)
  return np.where(np.isnan(x), x, out).astype(x.dtype) if mantissa_bits > 0 else out


def _bitcast_convert_type(x, *, new_dtype):
  x = np.asarray(x)
  if not x.flags.c_contiguous:   # (np.ascontiguousarray would make a 0-d array 1-d)
    x = x.copy()
  new_dtype = np.dtype(new_dtype)
  if x.dtype.itemsize >= new_dtype.itemsize:
    out = x.reshape(x.shape + (1,)).view(new_dtype)
    return out.reshape(x.shape) if x.dtype.itemsize == new_dtype.itemsize else out
  return x.view(new_dtype).reshape(x.shape[:-1])


def _complex(x, y):
  out_dtype = np.complex64 if x.dtype == np.float32 else np.complex128
  return (x + np.asarray(1j, out_dtype) * y).astype(out_dtype)


def _conj(x, *, input_dtype):
  if x.dtype.kind == "c":
    return np.conj(x)
  return x.astype(np.complex128 if x.dtype == np.float64 else np.complex64)


impl_rules.update({
    extra.optimization_barrier_p: lambda *operands: list(operands),
    bits.shift_left_p: _shift_left,
    bits.shift_right_logical_p: _shift_right_logical,
    bits.shift_right_arithmetic_p: _shift_right_arithmetic,
    bits.population_count_p: _population_count,
    bits.clz_p: _clz,
    bits.round_p: _round_impl,
    bits.reduce_precision_p: _reduce_precision,
    bits.bitcast_convert_type_p: _bitcast_convert_type,
    bits.real_p: lambda x: np.real(x).copy(),
    bits.imag_p: lambda x: np.imag(x).copy(),
    bits.complex_p: _complex,
    bits.conj_p: _conj,
})


# -- sorting and scans
def _sort(*operands, dimension, is_stable, num_keys):
  keys = [np.moveaxis(k, dimension, -1) for k in operands[:num_keys]]
  if num_keys == 1:
    perm = np.argsort(keys[0], axis=-1, kind="stable")
  else:
    # lexsort's last key is the primary one; its float keys treat -0.0 == 0.0 and put
    # NaNs last, as XLA's comparator does after canonicalizing them.
    perm = np.lexsort(keys[::-1], axis=-1)
  return [np.moveaxis(np.take_along_axis(np.moveaxis(o, dimension, -1), perm, -1), -1,
                      dimension) for o in operands]


def _total_order_key(x):
  """Integers ordered as XLA's total order of the floats ``x``: -NaN < -inf < ... < -0.0 <
  0.0 < ... < inf < NaN (the sign bit decides; a negative float's other bits count down)."""
  signed = x.view(np.dtype(f"int{8 * x.dtype.itemsize}"))
  return np.where(signed < 0, signed ^ np.iinfo(signed.dtype).max, signed)


def _top_k(x, *, k, axis):
  moved = np.moveaxis(x, axis, -1)
  n = moved.shape[-1]
  key = _total_order_key(moved) if dtypes.is_floating(moved.dtype) else moved
  # a stable ascending sort of the reversed keys, reversed again: descending order in
  # which ties keep the lower index first
  perm = np.argsort(key[..., ::-1], axis=-1, kind="stable")[..., ::-1][..., :k]
  indices = (n - 1 - perm).astype(np.int32)
  values = np.take_along_axis(moved, indices, -1)
  return [np.moveaxis(values, -1, axis), np.moveaxis(indices, -1, axis)]


def _scan(ufunc, wide=False):
  def impl(x, *, axis, reverse):
    if x.ndim == 0:
      return x
    dtype = x.dtype
    y = np.flip(x, axis) if reverse else x
    if wide and dtype.itemsize < 4:
      y = y.astype(np.float32)
    with np.errstate(all="ignore"):
      out = ufunc.accumulate(y, axis=axis, dtype=y.dtype)
    out = np.flip(out, axis) if reverse else out
    return out.astype(dtype, copy=False)
  return impl


impl_rules.update({
    sorting.sort_p: _sort,
    sorting.top_k_p: _top_k,
    sorting.cumsum_p: _scan(np.add),
    sorting.cumprod_p: _scan(np.multiply),
    sorting.cummax_p: _scan(np.maximum),
    sorting.cummin_p: _scan(np.minimum),
    sorting.cumlogsumexp_p: _scan(np.logaddexp, wide=True),
})
