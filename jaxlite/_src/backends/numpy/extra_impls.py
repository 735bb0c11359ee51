"""NumPy implementations of the special-function, bit, sorting and scan primitives.

Special functions come from ``scipy.special`` (a dependency of this backend): NumPy has
no erf, lgamma or incomplete gamma. Half-precision inputs are computed in float32 and
rounded back, as XLA does.
"""
import functools

import numpy as np

from jaxlite._src import core
from jaxlite._src.backends.numpy import codegen
from jaxlite._src.transforms import staging

from jaxlite._src import dtypes
from jaxlite._src.backends.numpy.impls import complex_choose, impl_rules
from jaxlite._src.lax import bits
from jaxlite._src.lax import call as lax_call
from jaxlite._src.lax import sorting
from jaxlite._src.lax import special


def _scipy_special(name):
  """``scipy.special.<name>``, imported on the first call: SciPy would otherwise be a
  third of ``import jaxlite``, for primitives most programs never run."""
  def call(*args):
    import scipy.special
    return getattr(scipy.special, name)(*args)
  call.__name__ = name
  return call


_sp_digamma, _sp_gammaln, _sp_gammainc = map(_scipy_special, ("digamma", "gammaln", "gammainc"))

def _in_float32(f):
  """Run ``f`` at float32 or wider and return the input's dtype."""
  def impl(*args):
    dtype = args[0].dtype
    wide = [np.asarray(a, np.float32) if a.dtype.itemsize < 4 else a for a in args]
    with np.errstate(all="ignore"):
      return np.asarray(f(*wide)).astype(dtype, copy=False)
  return impl


def _composed(fn):
  """The implementation of a primitive that ``fn`` composes of other primitives (the
  algorithm XLA runs too): ``fn`` traced once per operand types, run by tier 0."""
  @functools.lru_cache(maxsize=64)
  def compiled(types):
    avals = [core.ShapedArray(shape, dtype) for shape, dtype in types]
    return codegen.compiled(staging.trace_to_jaxpr(lambda *xs: [fn(*xs)], avals))

  def impl(*args):
    return compiled(tuple((np.shape(a), np.asarray(a).dtype) for a in args))(*args)[0]
  return impl


def _digamma(x):
  # XLA gives NaN at the poles (0, -1, ...); scipy gives -inf at 0
  return np.where((x <= 0) & (x == np.floor(x)), np.nan, _sp_digamma(x))


# B_{2j} / (2j)! reciprocals for the Euler-Maclaurin tail of the Hurwitz zeta function
_ZETA_COEFFS = [-7.1661652561756670113e18, 1.8152105401943546773e17,
                -4.5979787224074726105e15, 1.1646782814350067249e14,
                -2.950130727918164224e12, 7.47242496e10, -1.8924375803183791606e9,
                47900160.0, -1209600.0, 30240.0, -720.0, 12.0]


def _zeta(x, q):
  """XLA's Hurwitz zeta (CHLO's): ten terms of the series, then a 12-term Euler-Maclaurin
  tail by Horner's rule; then its rules at the edges, in this order: NaN for ``x < 1``,
  NaN for ``q <= 0`` with ``x`` not an integer, at the poles ``q = 0, -1, ...`` ``inf`` for
  even integer ``x`` and NaN otherwise, and ``inf`` at ``x == 1``."""
  c = lambda v: np.asarray(v, x.dtype)
  a, total = q, np.power(q, -x)
  for _ in range(9):
    a = a + c(1)
    total = total + np.power(a, -x)
  a = a + c(1)
  term = np.power(a, -x)
  s = total + term * a / (x - c(1))
  inv_a2 = c(1) / (a * a)
  horner = c(0)
  for i in range(11):
    factor = (x + c(22 - 2 * i)) * (x + c(21 - 2 * i))
    horner = factor * (inv_a2 * (horner + c(1 / _ZETA_COEFFS[i])))
  # (CHLO would keep the bare series where the tail is below |series| times the lowest
  # float, which never happens: the tail is always added, NaNs of 0 * inf included)
  out = s + term * (c(0.5) + x / a * (c(1 / _ZETA_COEFFS[11]) + horner))
  x_int = x == np.floor(x)
  q_nonpositive = q <= 0
  out = np.where(x < 1, np.nan, out)
  out = np.where(q_nonpositive & ~x_int, np.nan, out)
  pole = q_nonpositive & (q == np.floor(q))
  out = np.where(pole, np.where(x_int & (np.fmod(x, c(2)) == 0), np.inf, np.nan), out)
  return np.where(x == 1, np.inf, out)


def _polygamma(m, x):
  """XLA's polygamma (CHLO's): ``(-1)**(m+1) m! zeta(m + 1, x)``, digamma for ``m = 0``,
  NaN unless ``m`` is a natural number."""
  c = lambda v: np.asarray(v, x.dtype)
  sign = c(2) * np.fmod(m, c(2)) - c(1)
  out = sign * np.exp(_sp_gammaln(m + c(1))).astype(x.dtype) * _zeta(m + c(1), x)
  out = np.where(m == 0, _digamma(x), out)
  return np.where((m != np.floor(m)) | (m < 0), np.nan, out)


def _lgamma(x):
  # as XLA: lgamma(-inf) is inf (SciPy gives -inf)
  return np.where(np.isneginf(x), np.inf, _sp_gammaln(x))


def _igamma_grad_a(a, x):
  # d/da P(a, x) by a fourth-order central difference in float64; the step scales
  # with a so that relative accuracy holds across magnitudes.
  a64, x64 = a.astype(np.float64), x.astype(np.float64)
  h = 1e-4 * np.maximum(1.0, np.abs(a64))
  f = lambda d: _sp_gammainc(a64 + d, x64)
  return (8 * (f(h) - f(-h)) - (f(2 * h) - f(-2 * h))) / (12 * h)


impl_rules.update({
    special.erf_p: _in_float32(_scipy_special("erf")),
    special.erfc_p: _in_float32(_scipy_special("erfc")),
    special.erf_inv_p: _in_float32(_scipy_special("erfinv")),
    special.lgamma_p: _in_float32(_lgamma),
    special.digamma_p: _in_float32(_digamma),
    special.polygamma_p: _in_float32(_polygamma),
    special.zeta_p: _in_float32(_zeta),
    special.igamma_p: _composed(special.igamma_value),
    special.igammac_p: _composed(special.igammac_value),
    special.igamma_grad_a_p: _in_float32(_igamma_grad_a),
    special.bessel_i0e_p: _in_float32(_scipy_special("i0e")),
    special.bessel_i1e_p: _in_float32(_scipy_special("i1e")),
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


def _scan(prim, accumulate, complex_combine=None, wide=False):
  def impl(x, *, axis, reverse):
    if x.shape[axis] == 0:
      return x
    dtype = x.dtype
    identity = sorting.scan_identity(prim, dtype)   # raises where XLA's init value would
    if complex_combine is not None and dtype.kind == "c":
      return _windowed_fold(x, axis, reverse, complex_combine, identity)
    y = np.flip(x, axis) if reverse else x
    if wide and dtype.itemsize < 4:
      y = y.astype(np.float32)
    with np.errstate(all="ignore"):
      out = accumulate(y, axis=axis, dtype=y.dtype)
    out = np.flip(out, axis) if reverse else out
    return out.astype(dtype, copy=False)
  return impl


def _windowed_fold(x, axis, reverse, combine, identity):
  """A scan as XLA runs it (a reduce_window): element i folds its window, ``x[:i + 1]``
  (``x[i:]`` if ``reverse``), in index order from ``identity``. For complex max, min and
  logaddexp this differs from a running fold of the flipped array (NaNs, rounding)."""
  moved = np.moveaxis(x, axis, 0)
  n = moved.shape[0]
  acc = np.full(moved.shape, identity, x.dtype)
  with np.errstate(all="ignore"):
    for k in range(n):
      if reverse:   # the k-th element of window i is x[i + k]
        acc[:n - k] = combine(acc[:n - k], moved[k:])
      else:         # the windows i >= k hold x[k] as their k-th element
        acc[k:] = combine(acc[k:], moved[k])
  return np.moveaxis(acc, 0, axis)


def _complex_logaddexp(x, y):
  """JAX's complex logaddexp: ``m + log1p(exp(x + y - 2 m))`` around the larger ``m`` of
  the two (XLA's complex max), the imaginary part wrapped into [-pi, pi)."""
  big = complex_choose(np.greater)(x, y)
  out = big + np.log1p(np.exp(x + y - big * 2))
  wrapped = np.fmod(out.imag + np.pi, 2 * np.pi)
  wrapped = np.where(wrapped < 0, wrapped + 2 * np.pi, wrapped) - np.pi
  return (out.real + 1j * wrapped).astype(x.dtype)


impl_rules.update({
    sorting.sort_p: _sort,
    sorting.top_k_p: _top_k,
    sorting.cumsum_p: _scan(sorting.cumsum_p, np.add.accumulate),
    sorting.cumprod_p: _scan(sorting.cumprod_p, np.multiply.accumulate),
    sorting.cummax_p: _scan(sorting.cummax_p, np.maximum.accumulate,
                            complex_choose(np.greater)),
    sorting.cummin_p: _scan(sorting.cummin_p, np.minimum.accumulate,
                            complex_choose(np.less)),
    sorting.cumlogsumexp_p: _scan(sorting.cumlogsumexp_p, np.logaddexp.accumulate,
                                  _complex_logaddexp, wide=True),
})
