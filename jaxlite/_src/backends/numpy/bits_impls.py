"""NumPy implementations of the bit-level primitives: shifts, population count and
leading zeros, rounding and reduced precision, bitcasts, and the complex-number parts."""
import numpy as np

from jaxlite._src.backends.numpy.impls import impl_rules
from jaxlite._src.base import dtypes
from jaxlite._src.lax import bits
from jaxlite._src.lax import call as lax_call


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
  # the parts are stored as given: x + 1j * y would make 0 * inf = NaN real parts
  out = np.empty(np.broadcast_shapes(x.shape, y.shape),
                 np.complex64 if x.dtype == np.float32 else np.complex128)
  out.real, out.imag = x, y
  return out


def _conj(x, *, input_dtype):
  if x.dtype.kind == "c":
    return np.conj(x)
  return x.astype(np.complex128 if x.dtype == np.float64 else np.complex64)


impl_rules.update({
    lax_call.optimization_barrier_p: lambda *operands: list(operands),
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
