"""Tier 0's table of NumPy implementations, one row per primitive.

Each implementation takes NumPy values and the primitive's params and returns NumPy
values of exactly the dtype the primitive's shape rule says (a test checks every row).
"""
import warnings

import numpy as np

from jaxlite._src import core
from jaxlite._src import dtypes
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.lax import reductions as red
from jaxlite._src.lax import shapes as sh

impl_rules = {}

# XLA computes nan/inf silently; NumPy would warn from inside these implementations.
# A filter on this module costs nothing per call, unlike np.errstate (about 1 us).
warnings.filterwarnings("ignore", category=RuntimeWarning,
                        module=r"jaxlite\._src\.(backends\.numpy|core)")


def _same_dtype(f):
  """Wrap a NumPy function whose result dtype may drift (e.g. float16 math)."""
  def impl(x, *rest):
    out = f(x, *rest)
    return out if out.dtype == x.dtype else np.asarray(out).astype(x.dtype)
  return impl


def _logistic(x):
  return 1 / (1 + np.exp(-x))


def _div(x, y):
  if x.dtype.kind in "iu":  # C-style integer division truncates toward zero, as XLA
    safe = np.where(y == 0, 1, y).astype(x.dtype)
    q = np.floor_divide(x, safe)
    if x.dtype.kind == "i":   # floor -> toward zero where the signs differ and it is inexact
      q = q + ((np.remainder(x, safe) != 0) & ((x < 0) != (safe < 0)))
    return np.where(y == 0, -1 if x.dtype.kind == "i" else np.iinfo(x.dtype).max,
                    q).astype(x.dtype)
  return np.true_divide(x, y)


def _rem(x, y):
  if x.dtype.kind in "iu":
    return np.where(y == 0, x, np.fmod(x, np.where(y == 0, 1, y))).astype(x.dtype)
  return np.fmod(x, y)


def _pow(x, y):
  out = np.power(x, y)
  if x.dtype.kind == "f":
    # C's pow (XLA's): (-inf)**y is +-inf for y > 0 and +-0 for y < 0 (the sign is -
    # for odd integers y), where NumPy gives NaN for some; y = 0 and NaN y are as NumPy's
    odd = np.mod(y, 2) == 1
    fix = np.isneginf(x) & ((y > 0) | (y < 0))
    if fix.any():
      limit = np.where(y > 0, np.where(odd, -np.inf, np.inf), np.where(odd, -0.0, 0.0))
      out = np.where(fix, limit, out)
  return out


def _exp2(x):
  # exp(x * log(2)) with log(2) rounded to x's dtype, as JAX lowers exp2 (the product is
  # rounded too: bfloat16's exp2(100) is exp(69.0), not 2**100)
  x = x * np.asarray(np.log(2), x.dtype)
  return _complex_exp(x) if x.dtype.kind == "c" else np.exp(x)


def _integer_pow(x, *, y):
  if y == 0:
    return np.ones_like(x)
  return np.power(x, y) if y > 0 else np.power(np.asarray(1, x.dtype) / x, -y).astype(x.dtype)


def _sign(x):
  return np.sign(x)


def _not(x):
  return np.logical_not(x) if x.dtype == np.bool_ else np.invert(x)


def _bitwise(logical, bitwise):
  return lambda x, y: logical(x, y) if x.dtype == np.bool_ else bitwise(x, y)


# -- complex arithmetic as XLA computes it. NumPy follows C99 (Annex G) at infinities
# and NaNs; XLA's CPU kernels (and JAX's own lowerings of sin and cos) use plain formulas
# with a few corner cases of their own, which tier 0 must reproduce.

def _compose(re, im, dtype):
  out = np.empty(np.broadcast(re, im).shape, dtype)
  out.real, out.imag = re, im
  return out


def _flush_subnormal(x):
  """``x`` with subnormals replaced by zeros of their sign. XLA's CPU backend flushes
  denormals, which shows where a formula multiplies a tiny intermediate by a huge one."""
  return np.where(np.abs(x) < np.finfo(x.dtype).tiny, np.copysign(np.zeros((), x.dtype), x), x)


def _complex_exp(z):
  # exp(a) * cis(b), with exp(a / 2) applied twice where exp(a) overflows and a zero
  # imaginary part for real z
  a, b = z.real, z.imag
  exp_a, half = np.exp(a), np.exp(a / 2)
  big = exp_a == np.inf
  cos_b, sin_b = np.cos(b), np.sin(b)
  return _compose(np.where(big, half * cos_b * half, exp_a * cos_b),
                  np.where(b == 0, 0, np.where(big, half * sin_b * half, exp_a * sin_b)),
                  z.dtype)


def _complex_abs(z):
  # max * sqrt(1 + (min / max)**2) with NaN-propagating max and min: NaN if either part
  # is NaN, even beside an infinity (C99's hypot gives inf there)
  out = np.abs(z)
  return np.where(np.isnan(z.real) | np.isnan(z.imag), np.nan, out).astype(out.dtype)


def _complex_sign(z):
  r = _complex_abs(z)
  return np.where(r == 0, 0, _compose(z.real / r, z.imag / r, z.dtype)).astype(z.dtype)


def _cosm1(x):
  return -2 * np.square(np.sin(x / 2))


def _complex_expm1(z):
  a, b = z.real, z.imag
  em1, cm1 = np.expm1(a), _cosm1(b)
  return _compose(em1 * (cm1 + 1) + cm1, np.where(b == 0, 0, (em1 + 1) * np.sin(b)),
                  z.dtype)


def _sinh_cosh_parts(b):
  # JAX's lowering: sinh and cosh from expm1, exact for small b
  e1m, e2m = np.expm1(b), np.expm1(-b)
  two = np.asarray(2, b.dtype)
  return (e1m - e2m) / two, (e1m + e2m + two) / two


def _complex_sin(z):
  a, b = z.real, z.imag
  sinh, cosh = _sinh_cosh_parts(b)
  return _compose(np.where(a == 0, 0, np.sin(a) * cosh), np.cos(a) * sinh, z.dtype)


def _complex_cos(z):
  a, b = z.real, z.imag
  sinh, cosh = _sinh_cosh_parts(b)
  return _compose(np.cos(a) * cosh, np.where(a == 0, 0, -np.sin(a) * sinh), z.dtype)


def _complex_div(x, y):
  """Smith's algorithm, then C99's limits where it gives NaN + NaN j for a zero or an
  infinite operand."""
  ar, ai, br, bi = x.real, x.imag, y.real, y.imag
  dtype = np.result_type(x, y)
  r_over_i, i_over_r = _flush_subnormal(br / bi), _flush_subnormal(bi / br)
  denom_i, denom_r = bi + r_over_i * br, br + i_over_r * bi
  i_bigger = np.abs(br) < np.abs(bi)
  cr = np.where(i_bigger, (r_over_i * ar + ai) / denom_i, (i_over_r * ai + ar) / denom_r)
  ci = np.where(i_bigger, (r_over_i * ai - ar) / denom_i, (ai - i_over_r * ar) / denom_r)
  inf = np.asarray(np.inf, cr.dtype)
  finite = lambda v: np.abs(v) != inf
  infinite = lambda v: np.abs(v) == inf
  unit = lambda v: np.copysign(np.where(infinite(v), 1, 0).astype(cr.dtype), v)
  zero_denom = (br == 0) & (bi == 0) & (~np.isnan(ar) | ~np.isnan(ai))
  signed_inf = np.copysign(inf, br)
  inf_num = (infinite(ar) | infinite(ai)) & finite(br) & finite(bi)
  ur, ui = unit(ar), unit(ai)
  inf_denom = (infinite(br) | infinite(bi)) & finite(ar) & finite(ai)
  vr, vi = unit(br), unit(bi)
  out_r = np.select([zero_denom, inf_num, inf_denom],
                    [signed_inf * ar, inf * (ur * br + ui * bi), 0 * (ar * vr + ai * vi)], cr)
  out_i = np.select([zero_denom, inf_num, inf_denom],
                    [signed_inf * ai, inf * (ui * br - ur * bi), 0 * (ai * vr - ar * vi)], ci)
  both_nan = np.isnan(cr) & np.isnan(ci)
  return _compose(np.where(both_nan, out_r, cr), np.where(both_nan, out_i, ci), dtype)


def _complex_sqrt(z):
  # sqrt|z| * cis(arg(z) / 2), with C99's limits at infinities; unlike C99's csqrt it is
  # not exact on the axes (sqrt(-1 + 0j) has a real part of -4.4e-8 in float32)
  a, b = z.real, z.imag
  r = np.sqrt(_complex_abs(z))
  half_angle = np.arctan2(b, a) * np.asarray(0.5, a.dtype)
  cos, sin = np.cos(half_angle), np.sin(half_angle)
  inf_b = np.abs(b) == np.inf
  re = np.where(inf_b | (a == np.inf), np.inf,
                np.where((a == -np.inf) & ~inf_b, 0, r * cos))
  im = np.where(inf_b | (a == -np.inf), np.copysign(np.asarray(np.inf, a.dtype), b),
                np.where(np.isnan(r), np.nan, np.where(sin == 0, sin, r * sin)))
  return np.where(r == 0, 0, _compose(re, im, z.dtype)).astype(z.dtype)


def _complex_log(z):
  return _compose(np.log(_complex_abs(z)), np.arctan2(z.imag, z.real), z.dtype)


def _complex_pow(x, y):
  """``|x|**c * exp(-d arg x) * cis(c arg x + d log|x|)`` for ``y = c + d j``, with
  Kahan's conventions: ``x**0 = 1``, ``0**c = 0`` for ``c > 0``, ``1**y = 1``, and
  ``inf**c`` is inf or 0 for real ``c``."""
  dtype = np.result_type(x, y)
  a, b, c, d = x.real, x.imag, y.real, y.imag
  r, theta = _complex_abs(x), _flush_subnormal(np.arctan2(b, a))
  coeff = np.power(r, c) * np.exp(-d * theta)
  q = c * theta + d * np.log(r)
  re, im = coeff * np.cos(q), coeff * np.sin(q)
  real_exponent, real_base = d == 0, b == 0
  conditions = [(a == np.inf) & real_base & real_exponent & (c < 0),
                (a == np.inf) & real_base & real_exponent & (c > 0),
                (a == 1) & real_base,
                (c == 0) & real_exponent,
                (r == 0) & real_exponent & (c >= 0)]
  re = np.select(conditions, [0, np.inf, 1, 1, np.where(c == 0, 1, 0)], re)
  im = np.select(conditions, [0, 0, 0, 0, 0], im)
  return _compose(re, im, dtype)


def _complex_atan2(y, x):
  # -i log((x + i y) / sqrt(x**2 + y**2)) in complex arithmetic
  i, minus_i = np.asarray(1j, x.dtype), np.asarray(complex(0, -1), x.dtype)
  root = _complex_sqrt(x * x + y * y)
  return minus_i * _complex_log(_complex_div(x + i * y, root))


def _complex_ordered(pick):
  """max or min of complex numbers, ordered by real part, then by imaginary part."""
  def impl(x, y):
    which = np.where(x.real == y.real, pick(x.imag, y.imag), pick(x.real, y.real))
    return np.where(which, x, y)
  return impl


# primitive -> its implementation for complex operands (tier 0's code generator calls
# these instead of its direct NumPy forms)
complex_rules = {
    ew.exp_p: _complex_exp, ew.abs_p: _complex_abs, ew.sign_p: _complex_sign, ew.expm1_p: _complex_expm1,
    ew.sin_p: _complex_sin, ew.cos_p: _complex_cos, ew.div_p: _complex_div,
    ew.pow_p: _complex_pow, ew.atan2_p: _complex_atan2, ew.log_p: _complex_log,
    ew.sqrt_p: _complex_sqrt,
    ew.max_p: _complex_ordered(np.greater), ew.min_p: _complex_ordered(np.less),
}


_UNARY = {
    ew.neg_p: np.negative, ew.sign_p: _sign, ew.floor_p: np.floor, ew.ceil_p: np.ceil,
    ew.is_finite_p: np.isfinite, ew.exp_p: np.exp, ew.exp2_p: _exp2, ew.log_p: np.log,
    ew.log1p_p: np.log1p, ew.expm1_p: np.expm1, ew.tanh_p: np.tanh,
    ew.logistic_p: _logistic, ew.sin_p: np.sin, ew.cos_p: np.cos, ew.tan_p: np.tan,
    ew.asin_p: np.arcsin, ew.acos_p: np.arccos, ew.atan_p: np.arctan, ew.sinh_p: np.sinh,
    ew.cosh_p: np.cosh, ew.asinh_p: np.arcsinh, ew.acosh_p: np.arccosh,
    ew.atanh_p: np.arctanh, ew.sqrt_p: np.sqrt, ew.rsqrt_p: lambda x: 1 / np.sqrt(x),
    ew.cbrt_p: np.cbrt, ew.not_p: _not, ew.square_p: np.square,
}
_BINARY = {
    ew.add_p: np.add, ew.sub_p: np.subtract, ew.mul_p: np.multiply, ew.div_p: _div,
    ew.rem_p: _rem, ew.pow_p: _pow, ew.max_p: np.maximum, ew.min_p: np.minimum,
    ew.atan2_p: np.arctan2, ew.nextafter_p: np.nextafter,
    ew.and_p: _bitwise(np.logical_and, np.bitwise_and),
    ew.or_p: _bitwise(np.logical_or, np.bitwise_or),
    ew.xor_p: _bitwise(np.logical_xor, np.bitwise_xor),
}
_COMPARE = {ew.eq_p: np.equal, ew.ne_p: np.not_equal, ew.lt_p: np.less,
            ew.le_p: np.less_equal, ew.gt_p: np.greater, ew.ge_p: np.greater_equal}

for _prim, _fn in {**_UNARY, **_BINARY}.items():
  impl_rules[_prim] = _same_dtype(_fn)
impl_rules.update(_COMPARE)
impl_rules[ew.is_finite_p] = np.isfinite
impl_rules[ew.abs_p] = np.abs
impl_rules[ew.integer_pow_p] = _integer_pow


def _complex_aware(real_impl, complex_impl):
  return lambda x, *rest: (complex_impl if x.dtype.kind == "c" else real_impl)(x, *rest)


for _prim, _fn in complex_rules.items():
  impl_rules[_prim] = _complex_aware(impl_rules[_prim], _fn)


def _select_n(which, *cases):
  if len(cases) == 1:
    return cases[0]
  if which.dtype == np.bool_:
    return np.where(which, cases[1], cases[0])
  return np.choose(which, cases, mode="clip")


impl_rules[ew.select_n_p] = _select_n
impl_rules[ew.clamp_p] = lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi).astype(x.dtype)


def _convert_element_type(x, *, new_dtype, weak_type, sharding):
  x = np.asarray(x)
  if x.dtype.kind == "c" and new_dtype.kind != "c":
    x = x.real
  if x.dtype.kind == "f" and new_dtype.kind in "iu":
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
# from this module, where the filter above silences them as XLA would.
impl_rules[red.reduce_sum_p] = _reduce(np.add.reduce)
impl_rules[red.reduce_prod_p] = _reduce(np.multiply.reduce)
impl_rules[red.reduce_max_p] = lambda x, *, axes: np.maximum.reduce(
    x, axis=axes, initial=dtypes.lowest(x.dtype))
impl_rules[red.reduce_min_p] = lambda x, *, axes: np.minimum.reduce(
    x, axis=axes, initial=dtypes.highest(x.dtype))
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
  (lc, rc), (lb, rb) = dimension_numbers
  letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
  lhs_sub = [next(letters) for _ in range(lhs.ndim)]
  rhs_sub = [next(letters) for _ in range(rhs.ndim)]
  for l, r in zip(lc + lb, rc + rb):
    rhs_sub[r] = lhs_sub[l]
  out = ([lhs_sub[d] for d in lb]
         + [s for i, s in enumerate(lhs_sub) if i not in lc + lb]
         + [s for i, s in enumerate(rhs_sub) if i not in rc + rb])
  dtype = preferred_element_type or lhs.dtype
  if dtype != lhs.dtype and dtype.kind in "fc" and lhs.dtype.kind in "fc":
    lhs, rhs = lhs.astype(dtype), rhs.astype(dtype)   # accumulate in the wider type, as XLA
  spec = f"{''.join(lhs_sub)},{''.join(rhs_sub)}->{''.join(out)}"
  if lhs.dtype == np.bool_:
    return np.einsum(spec, lhs.astype(np.int32), rhs.astype(np.int32)).astype(bool)
  return np.asarray(np.einsum(spec, lhs, rhs, optimize=lhs.ndim + rhs.ndim > 3)).astype(
      dtype, copy=False)


impl_rules[red.dot_general_p] = _dot_general


# -- shapes
def _broadcast_in_dim(x, *, shape, broadcast_dimensions, sharding):
  expanded = [1] * len(shape)
  for i, d in enumerate(broadcast_dimensions):
    expanded[d] = x.shape[i]
  return np.broadcast_to(np.reshape(x, expanded), shape)


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


def _dynamic_update_slice(x, update, *starts):
  starts = _clamped_starts(x.shape, starts, update.shape)
  out = np.array(x, copy=True)
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
    sh.dynamic_slice_p: _dynamic_slice,
    sh.dynamic_update_slice_p: _dynamic_update_slice,
})

from jaxlite._src.transforms import ad  # noqa: E402

impl_rules[ad.add_any_p] = np.add

from jaxlite._src.lax import control_flow as cf  # noqa: E402

impl_rules[cf.cond_p] = cf._cond_impl
impl_rules[cf.while_p] = cf._while_impl
impl_rules[cf.scan_p] = cf._scan_impl


def _reduce_computation(*args, computation, jaxpr, dimensions):
  # reduced as a tree of vectorised applications of the computation, compiled once per
  # computation and shapes
  avals = [core.ShapedArray(np.shape(x), np.asarray(x).dtype) for x in args]
  tree = red.reduce_as_tree_jaxpr(avals, jaxpr.jaxpr, jaxpr.consts, dimensions)
  return cf._compiled_fn(tree)(*args)


impl_rules[red.reduce_p] = _reduce_computation

from jaxlite._src import custom_derivatives as cd  # noqa: E402

impl_rules[cd.custom_jvp_call_p] = cd._custom_jvp_call_impl
impl_rules[cd.custom_vjp_call_p] = cd._custom_jvp_call_impl
impl_rules[cd.custom_lin_p] = cd._custom_lin_impl
impl_rules[cd.stop_gradient_p] = lambda x: x
impl_rules[cd.remat_p] = cd._remat_impl

from jaxlite._src import debugging  # noqa: E402

impl_rules[debugging.debug_print_p] = debugging._debug_print_impl
impl_rules[debugging.debug_callback_p] = debugging._debug_callback_impl
impl_rules[debugging.pure_callback_p] = debugging._pure_callback_impl
impl_rules[debugging.io_callback_p] = debugging._io_callback_impl
from jaxlite._src.backends.numpy import extra_impls  # noqa: E402,F401
from jaxlite._src.backends.numpy import linalg_impls  # noqa: E402,F401
