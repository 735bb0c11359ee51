"""jnp math, sorting, set, statistics, polynomial and window functions against NumPy."""
import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import errors
from jaxlite._src.base import dtypes
from jaxlite._src.test_util import check_grads

F = np.array([0.0, -0.0, 0.3, -1.7, 2.5, 1e-40, np.inf, -np.inf, np.nan], np.float32)
FLOAT_DTYPES = [np.float16, dtypes.bfloat16, np.float32]


def _close(actual, expected, rtol=1e-6, atol=0):
  actual = np.asarray(actual)
  np.testing.assert_allclose(actual.astype(np.float64) if actual.dtype.kind != "c" else actual,
                             expected, rtol=rtol, atol=atol, equal_nan=True)


UNARY = ["deg2rad", "rad2deg", "sinc", "trunc", "rint", "signbit", "isneginf", "isposinf",
         "fabs", "i0", "nan_to_num", "spacing"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_math_matches_numpy_on_edge_values(name):
  x = F[:-3] if name in ("i0",) else F
  out = getattr(jnp, name)(x)
  expected = getattr(np, name)(x)
  if name == "spacing":  # XLA flushes float32 subnormal spacings the same way numpy does
    x, out, expected = x[2:], out[2:], expected[2:]
  assert out.dtype == expected.dtype
  _close(out, expected, rtol=1e-5)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + [np.int32, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_rint_trunc_signbit_dtypes(dtype):
  x = np.array([0, 1, 3, 2], dtype) if np.dtype(dtype).kind in "bi" else F.astype(dtype)
  x = jnp.asarray(x.astype(np.float32)).astype(dtype) if dtype == dtypes.bfloat16 else x
  assert jnp.trunc(x).dtype == dtype   # booleans stay booleans, as in JAX 0.10
  assert jnp.signbit(x).dtype == np.bool_
  if np.dtype(dtype).kind == "f" or dtype == dtypes.bfloat16:
    _close(jnp.rint(x), np.rint(np.asarray(x).astype(np.float32)))


@pytest.mark.parametrize("name", ["hypot", "copysign", "logaddexp", "logaddexp2", "fmax",
                                  "fmin", "heaviside"])
def test_binary_math_matches_numpy(name):
  # as in XLA, F's subnormal counts as a zero (tests/test_subnormals.py), up to a
  # subnormal-sized difference
  tiny = np.finfo(np.float32).tiny
  flushed = np.where(np.abs(F) < tiny, np.copysign(np.float32(0), F), F)
  with np.errstate(all="ignore"):
    expected = getattr(np, name)(flushed[:, None], flushed[None, :])
  _close(getattr(jnp, name)(F[:, None], F[None, :]), expected, rtol=1e-5, atol=tiny)


def test_frexp_ldexp_modf_round_trip():
  m, e = jnp.frexp(F)
  em, ee = np.frexp(F)
  # JAX's frexp of a float32 subnormal on XLA: 0.5 * 2**-149 (tests/test_subnormals.py)
  em[5], ee[5] = 0.5, -149
  _close(m, em)
  assert e.dtype == np.int32 and np.asarray(e).tolist() == ee.tolist()
  with np.errstate(all="ignore"):
    _close(jnp.ldexp(np.float32(3), jnp.array([1, -150, 200])),
           np.ldexp(np.float32(3), [1, -150, 200]))
  frac, whole = jnp.modf(F[:6])
  ef, ew = np.modf(F[:6])
  _close(frac, ef)
  _close(whole, ew)


def test_gcd_lcm_and_shifts():
  a = np.array([12, -18, 0, 7, 0], np.int32)
  b = np.array([8, 12, 5, 0, 0], np.int32)
  assert jnp.gcd(a, b).tolist() == np.gcd(a, b).tolist()
  assert jnp.lcm(a, b).tolist() == np.lcm(a, b).tolist()
  x = np.array([-8, 8, 1], np.int16)
  assert jnp.right_shift(x, 2).tolist() == np.right_shift(x, 2).tolist()
  assert jnp.left_shift(np.uint8(1), 9).tolist() == 0
  assert jnp.bitwise_count(np.array([-1, 7], np.int8)).tolist() == [1, 3]


def test_complex_helpers_and_methods():
  z = np.array([1 + 2j, -3 - 0.5j, 2 + 0j], np.complex64)
  for name in ("real", "imag", "conj", "conjugate", "angle", "iscomplex", "isreal"):
    _close(getattr(jnp, name)(z), getattr(np, name)(z), rtol=1e-6)
  a = jnp.asarray(z)
  _close(a.real, z.real)
  _close(a.imag, z.imag)
  _close(a.conj(), z.conj())
  assert jnp.isrealobj(jnp.ones(2)) and not jnp.isrealobj(a)
  _close(jnp.imag(jnp.arange(3.0)), np.zeros(3))
  _close(jnp.nan_to_num(np.array([np.nan + 1j * np.inf], np.complex64)),
         np.nan_to_num(np.array([np.nan + 1j * np.inf], np.complex64)))


def test_math_gradients(x64):
  x64(True)
  x, y = np.array([0.4, -1.3, 2.0]), np.array([1.5, 0.2, -0.7])
  for f in (jnp.hypot, jnp.logaddexp, jnp.logaddexp2, jnp.copysign):
    check_grads(f, (x, y), order=2)
  check_grads(jnp.sinc, (np.array([0.3, -1.2, 2.5]),), order=2)
  assert np.isfinite(float(jaxlite.grad(jnp.sinc)(0.0)))


# -- sorting and searching
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint16, np.float16, np.float32],
                         ids=lambda d: np.dtype(d).name)
def test_sort_argsort_match_numpy(dtype):
  x = np.random.default_rng(0).integers(0, 4, (3, 5)).astype(dtype)
  for axis in (0, -1, None):
    np.testing.assert_array_equal(jnp.sort(x, axis=axis), np.sort(x, axis=axis))
    np.testing.assert_array_equal(jnp.argsort(x, axis=axis),
                                  np.argsort(x, axis=axis, kind="stable"))
  desc = jnp.argsort(x, axis=-1, descending=True)
  np.testing.assert_array_equal(np.take_along_axis(x, np.asarray(desc), -1),
                                -np.sort(-x.astype(np.float64), -1))
  np.testing.assert_array_equal(jnp.asarray(x).sort(), np.sort(x))


def test_descending_sort_reverses_the_ascending_sort_as_jax_does():
  # XLA's CPU sort ties a subnormal with zero; JAX's descending sort is rev(sort(x)), so
  # the tied pair comes out reversed (recorded from JAX 0.10.2); argsort keeps tie order.
  for x, want in [([0.0, 4e-44], [4e-44, 0.0]), ([4e-44, 0.0], [0.0, 4e-44])]:
    x = np.array(x, np.float32)
    for sort in (jnp.sort, jaxlite.jit(jnp.sort, static_argnames="descending")):
      got = np.asarray(sort(x, descending=True))
      np.testing.assert_array_equal(got.view(np.int32),
                                    np.array(want, np.float32).view(np.int32))
    np.testing.assert_array_equal(jnp.argsort(x, descending=True), [0, 1])
  np.testing.assert_array_equal(jnp.argsort(np.array([1.0, 2, 1, 3]), descending=True),
                                [3, 1, 0, 2])


def test_lexsort_partition_and_sort_with_nans():
  k1, k2 = np.array([1, 2, 1, 0]), np.array([3, 0, -1, 9])
  np.testing.assert_array_equal(jnp.lexsort([k1, k2]), np.lexsort([k1, k2]))
  x = np.array([3.0, np.nan, -1.0, 2.0], np.float32)
  np.testing.assert_array_equal(jnp.sort(x), np.sort(x))
  p = np.asarray(jnp.partition(x, 1))
  assert p[1] == np.sort(x)[1] and (p[:1] <= p[1]).all()
  assert int(jnp.argpartition(x, 0)[0]) == 2


@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_matches_numpy(side):
  a = np.array([1.0, 2.0, 2.0, 3.0, np.nan], np.float32)
  v = np.array([[2.0, 2.5], [np.nan, -np.inf]], np.float32)
  out = jnp.searchsorted(a, v, side=side)
  assert out.dtype == np.int32
  np.testing.assert_array_equal(out, np.searchsorted(a, v, side=side))
  b = np.array([3, 1, 2, 2])
  sorter = np.argsort(b)
  np.testing.assert_array_equal(jnp.searchsorted(b, 2, sorter=sorter),
                                np.searchsorted(b, 2, sorter=sorter))


def test_nonzero_family_with_and_without_size():
  x = np.array([[0, 3, 0], [4, 0, 5]])
  for a, b in zip(jnp.nonzero(x), np.nonzero(x)):
    np.testing.assert_array_equal(a, b)
  np.testing.assert_array_equal(jnp.argwhere(x), np.argwhere(x))
  np.testing.assert_array_equal(jnp.flatnonzero(x), np.flatnonzero(x))
  rows, cols = jnp.nonzero(x, size=5, fill_value=(-1, -2))
  assert rows.tolist() == [0, 1, 1, -1, -1] and cols.tolist() == [1, 0, 2, -2, -2]
  assert jnp.nonzero(x, size=1)[1].tolist() == [1]
  assert jnp.nonzero(np.zeros((0,)))[0].shape == (0,)
  f = jaxlite.jit(lambda v: jnp.argwhere(v, size=4))
  np.testing.assert_array_equal(f(x), np.concatenate([np.argwhere(x), [[0, 0]]]))
  with pytest.raises(errors.ConcretizationTypeError, match="size argument of jnp.nonzero"):
    jaxlite.jit(jnp.nonzero)(x)
  with pytest.raises(ValueError, match="0d"):
    jnp.nonzero(3)


def test_unique_with_all_outputs_and_size():
  x = np.array([[3, 1], [1, 2]])
  vals, idx, inv, counts = jnp.unique(x, return_index=True, return_inverse=True,
                                      return_counts=True)
  evals, eidx, einv, ecounts = np.unique(x, return_index=True, return_inverse=True,
                                         return_counts=True)
  for a, b in ((vals, evals), (idx, eidx), (inv, einv.reshape(x.shape)), (counts, ecounts)):
    np.testing.assert_array_equal(a, b)
  # padded with the smallest value; counts padded with 0 (as JAX)
  out = jnp.unique(np.array([3.0, 1, 1, np.nan], np.float32), size=5, return_counts=True)
  np.testing.assert_array_equal(out[0], [1.0, 3.0, np.nan, 1.0, 1.0])
  assert out[1].tolist() == [2, 1, 1, 0, 0]
  np.testing.assert_array_equal(jaxlite.jit(lambda v: jnp.unique(v, size=2))(x), [1, 2])
  with pytest.raises(errors.ConcretizationTypeError):
    jaxlite.jit(jnp.unique)(x)


@pytest.mark.parametrize("shape,axis", [((6, 3), 0), ((6, 3), 1), ((4, 5, 2), 1),
                                        ((3, 2, 4), -1), ((0, 3), 0), ((5,), 0)])
def test_unique_along_an_axis_matches_numpy(shape, axis):
  rng = np.random.default_rng(sum(shape))
  x = rng.integers(0, 2, shape)   # few distinct values, so slices repeat
  got = jnp.unique(x, axis=axis, return_index=True, return_inverse=True, return_counts=True)
  want = np.unique(x, axis=axis, return_index=True, return_inverse=True, return_counts=True)
  for g, w in zip(got, want):
    np.testing.assert_array_equal(g, w.reshape(-1) if w is want[2] else w)
  assert got[2].ndim == 1   # as JAX: the inverse of an axis-wise unique is 1-D
  f = np.array([[1.5, np.nan], [0.5, 2.0], [1.5, np.nan]], np.float32)
  np.testing.assert_array_equal(jnp.unique(f, axis=0), [[0.5, 2.0], [1.5, np.nan]])
  # padded with the first unique slice, counted 0, and usable under jit with size=
  padded, counts = jaxlite.jit(lambda v: jnp.unique(v, axis=0, size=4, return_counts=True))(
      np.array([[1, 2], [0, 5], [1, 2]]))
  np.testing.assert_array_equal(padded, [[0, 5], [1, 2], [0, 5], [0, 5]])
  assert counts.tolist() == [1, 2, 0, 0]
  assert jnp.unique(np.zeros((3, 0)), axis=0).shape == (1, 0)
  with pytest.raises(np.exceptions.AxisError):
    jnp.unique(x, axis=len(shape))


def test_set_operations_match_numpy():
  a, b = np.array([5, 1, 2, 3, 3]), np.array([2, 3, 4, 4])
  for name in ("union1d", "intersect1d", "setdiff1d", "setxor1d"):
    np.testing.assert_array_equal(getattr(jnp, name)(a, b), getattr(np, name)(a, b))
  assert jnp.intersect1d(a, b, size=4).tolist() == [2, 3, 2, 2]
  assert jnp.setdiff1d(a, b, size=4).tolist() == [1, 5, 0, 0]
  np.testing.assert_array_equal(jnp.isin(a, b), np.isin(a, b))
  np.testing.assert_array_equal(jnp.isin(a, b, invert=True), np.isin(a, b, invert=True))


def test_selection_functions():
  x = np.arange(-3.0, 4.0)
  np.testing.assert_array_equal(
      jnp.select([x < -1, x > 1], [x * 10, x * 100], default=-1.0),
      np.select([x < -1, x > 1], [x * 10, x * 100], default=-1.0))
  np.testing.assert_array_equal(
      jnp.piecewise(x, [x < 0, x > 2], [lambda v: -v, 7.0, lambda v: v * 2]),
      np.piecewise(x, [x < 0, x > 2], [lambda v: -v, 7.0, lambda v: v * 2]))
  np.testing.assert_array_equal(jnp.extract(x > 0, x), np.extract(x > 0, x))
  m = np.arange(6).reshape(2, 3)
  np.testing.assert_array_equal(jnp.compress(jnp.array([True, False, True]), m, axis=1),
                                np.compress([True, False, True], m, axis=1))
  assert jnp.compress(jnp.array([False, True]), m, axis=0, size=2,
                      fill_value=9).tolist() == [[3, 4, 5], [9, 9, 9]]


# -- statistics
def test_cumulative_functions_dtypes_and_values():
  assert jnp.cumsum(np.array([True, True])).dtype == np.int32
  assert jnp.cumsum(np.arange(3, dtype=np.int8)).dtype == np.int8
  x = np.array([[1.0, np.nan, 2.0], [3.0, 4.0, np.nan]], np.float32)
  _close(jnp.nancumsum(x, axis=1), np.nancumsum(x, axis=1))
  _close(jnp.nancumprod(x), np.nancumprod(x))
  _close(jnp.cumprod(np.arange(1, 5), dtype=np.float32), np.cumprod(np.arange(1, 5)))
  _close(jnp.asarray(x).cumsum(axis=0), np.cumsum(x, axis=0))
  _close(jnp.cumulative_sum(np.arange(3), include_initial=True), [0, 0, 1, 3])


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_methods_match_numpy(method):
  x = np.random.default_rng(3).normal(size=(4, 7)).astype(np.float32)
  # q = 0.5 falls halfway between two elements for 4 and 28 of them, where 'nearest'
  # differs: NumPy rounds half to even, JAX takes the lower one (checked below)
  q = np.array([0.0, 0.1, 0.77, 1.0] + ([] if method == "nearest" else [0.5]), np.float32)
  for axis in (None, 0, 1, (0, 1)):
    _close(jnp.quantile(x, q, axis=axis, method=method),
           np.quantile(x, q, axis=axis, method=method), rtol=1e-5, atol=1e-6)
  _close(jnp.percentile(x, 30.0, axis=1, method=method, keepdims=True),
         np.percentile(x, 30.0, axis=1, method=method, keepdims=True), rtol=1e-5)


def test_quantile_nearest_takes_the_lower_value_at_ties():
  # JAX 0.10: jnp.quantile(jnp.arange(4.), 0.5, method="nearest") == 1.0 (NumPy: 2.0)
  _close(jnp.quantile(jnp.arange(4.0), jnp.array([0.5, 1 / 6]), method="nearest"), [1.0, 0.0])


def test_median_and_nan_statistics():
  x = np.array([[3.0, 1.0, np.nan, 7.0], [1.0, 2.0, 5.0, 4.0]], np.float32)
  _close(jnp.median(x, axis=1), np.median(x, axis=1))
  with np.errstate(all="ignore"):
    for name in ("nanmedian", "nanmean", "nanvar", "nanstd", "nansum", "nanprod",
                 "nanmax", "nanmin", "nanargmax", "nanargmin"):
      _close(getattr(jnp, name)(x, axis=1), getattr(np, name)(x, axis=1), rtol=1e-5)
    _close(jnp.nanpercentile(x, 40.0, axis=1), np.nanpercentile(x, 40.0, axis=1), rtol=1e-5)
    _close(jnp.nanquantile(x, 0.4), np.nanquantile(x, 0.4), rtol=1e-5)
  all_nan = np.full((2,), np.nan, np.float32)
  assert np.isnan(float(jnp.nanmax(all_nan))) and int(jnp.nanargmax(all_nan)) == -1
  assert jnp.median(np.arange(5)).dtype == np.float32
  _close(jnp.ptp(x[1]), np.ptp(x[1]))


def test_median_gradient_and_jit():
  x = np.array([0.3, 2.0, -1.0, 0.7], np.float32)
  np.testing.assert_allclose(jaxlite.grad(jnp.median)(x), [0.5, 0, 0, 0.5])
  _close(jaxlite.jit(lambda v: jnp.percentile(v, np.array([10.0, 90.0])))(x),
         np.percentile(x, [10.0, 90.0]), rtol=1e-5)


def test_average_cov_corrcoef():
  x = np.random.default_rng(4).normal(size=(3, 6)).astype(np.float32)
  w = np.arange(1.0, 7.0, dtype=np.float32)
  for a, b in zip(jnp.average(x, axis=1, weights=w, returned=True),
                  np.average(x, axis=1, weights=w, returned=True)):
    _close(a, b, rtol=1e-5)
  _close(jnp.average(np.arange(4)), 1.5)
  _close(jnp.cov(x), np.cov(x), rtol=1e-4, atol=1e-6)
  _close(jnp.cov(x, rowvar=False, bias=True), np.cov(x, rowvar=False, bias=True), rtol=1e-4,
         atol=1e-6)
  _close(jnp.cov(x, aweights=w, fweights=np.arange(1, 7)), np.cov(x, aweights=w,
         fweights=np.arange(1, 7)), rtol=1e-4, atol=1e-6)
  _close(jnp.corrcoef(x), np.corrcoef(x), rtol=1e-4, atol=1e-6)


def test_histogram_and_bincount():
  x = np.random.default_rng(5).normal(size=50).astype(np.float32)
  for bins, rng, density in ((10, None, None), (4, (-1.0, 1.0), True)):
    h, e = jnp.histogram(x, bins=bins, range=rng, density=density)
    eh, ee = np.histogram(x, bins=bins, range=rng, density=density)
    _close(h, eh, rtol=1e-5)
    _close(e, ee, rtol=1e-5, atol=1e-6)
  i = np.array([0, 1, 1, 3, 1])
  np.testing.assert_array_equal(jnp.bincount(i), np.bincount(i))
  np.testing.assert_array_equal(jnp.bincount(i, minlength=6), np.bincount(i, minlength=6))
  _close(jnp.bincount(i, weights=np.arange(5.0), length=5), np.bincount(i, np.arange(5.0), 5))
  assert jaxlite.jit(lambda v: jnp.bincount(v, length=3))(i).tolist() == [1, 3, 0]
  with pytest.raises(errors.ConcretizationTypeError):
    jaxlite.jit(jnp.bincount)(i)


def test_diff_convolve_interp_trapezoid():
  x = np.array([[1.0, 4.0, 9.0, 16.0], [2.0, 0.0, -1.0, 5.0]], np.float32)
  _close(jnp.diff(x), np.diff(x))
  _close(jnp.diff(x, n=2, axis=0, prepend=0.0), np.diff(x, n=2, axis=0, prepend=0.0))
  assert jnp.diff(np.array([True, False, False])).tolist() == [True, False]
  _close(jnp.ediff1d(x, to_begin=np.array([9.0])), np.ediff1d(x, to_begin=[9.0]))
  a, v = np.arange(5.0), np.array([1.0, 2.0, 3.0])
  for mode in ("full", "same", "valid"):
    _close(jnp.convolve(a, v, mode), np.convolve(a, v, mode))
    _close(jnp.correlate(a, v, mode), np.correlate(a, v, mode))
    _close(jnp.convolve(v, a, mode), np.convolve(v, a, mode))
  xp, fp = np.array([0.0, 1.0, 3.0]), np.array([0.0, 10.0, 0.0])
  q = np.array([-1.0, 0.5, 1.0, 2.0, 5.0])
  _close(jnp.interp(q, xp, fp), np.interp(q, xp, fp), rtol=1e-6)
  _close(jnp.interp(q, xp, fp, left=-5.0, right=5.0), np.interp(q, xp, fp, -5.0, 5.0))
  _close(jnp.trapezoid(x), np.trapezoid(x))
  _close(jnp.trapezoid(x, x=np.array([0.0, 1.0, 3.0, 4.0])),
         np.trapezoid(x, x=[0.0, 1.0, 3.0, 4.0]))


# -- polynomials and windows
def test_polynomials_match_numpy():
  p, q = np.array([1.0, -2.0, 3.0]), np.array([4.0, 5.0])
  _close(jnp.polyval(p, np.array([0.5, 2.0])), np.polyval(p, [0.5, 2.0]))
  _close(jnp.polyadd(p, q), np.polyadd(p, q))
  _close(jnp.polysub(q, p), np.polysub(q, p))
  _close(jnp.polymul(p, q), np.polymul(p, q))
  _close(jnp.polyder(p, 2), np.polyder(p, 2))
  _close(jnp.polyint(p, 2, k=jnp.array([1.0, 2.0])), np.polyint(p, 2, k=[1.0, 2.0]),
         rtol=1e-6)
  with pytest.raises(TypeError, match="polyint requires ndarray"):   # as JAX: k not a list
    jnp.polyint(p, 2, k=[1.0, 2.0])
  _close(jnp.poly(q), np.poly(q))


def test_polyval_and_polyadd_take_a_batch_of_polynomials_as_jax():
  # Values recorded from JAX 0.10.2: axes after the first are a batch of polynomials
  # (diffrax's interpolations evaluate polynomials of shape (degree + 1, *y.shape)).
  p = np.array([[1.0, 2.0], [3.0, -1.0], [0.5, 4.0]])
  assert jnp.polyval(p, 2.0).tolist() == [10.5, 10.0]
  assert jnp.polyval(p, np.array([[2.0], [-1.0]])).tolist() == [[10.5, 10.0], [-1.5, 7.0]]
  assert jnp.polyval(np.array([[1, 2], [3, 4]]), 2).dtype == jnp.int32
  a, b = np.arange(10.0).reshape(5, 2), np.array([[1.0, -1.0], [2.0, 3.0]])
  want = [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0], [7.0, 6.0], [10.0, 12.0]]
  assert jnp.polyadd(a, b).tolist() == want and jnp.polyadd(b, a).tolist() == want
  diff = jnp.polysub(b, a)   # JAX adds b into the negated a: its first zero stays -0.0
  assert diff.tolist() == [[0.0, -1.0], [-2.0, -3.0], [-4.0, -5.0], [-5.0, -8.0],
                           [-6.0, -6.0]] and np.signbit(diff[0, 0])
  # the shorter's trailing axes broadcast into the longer's last rows
  assert jnp.polyadd(a, np.array([1.0, 2.0])).tolist()[3:] == [[7.0, 9.0], [9.0, 11.0]]
  assert jnp.polyadd(np.ones((2, 2, 2)), b).shape == (2, 2, 2)
  with pytest.raises(ValueError, match="do not broadcast to the last rows"):
    jnp.polyadd(a, np.array([1.0, 2.0, 3.0]))
  with pytest.raises(ValueError, match="at least one dimension"):
    jnp.polyval(2.0, 3.0)
  with pytest.raises(ValueError, match="must be a 1-D array"):
    jnp.polyder(p)


@pytest.mark.parametrize("name", ["bartlett", "blackman", "hamming", "hanning"])
def test_windows_match_numpy(name):
  for m in (0, 1, 2, 7):
    _close(getattr(jnp, name)(m), getattr(np, name)(m), atol=1e-6)
  _close(jnp.kaiser(8, 3.0), np.kaiser(8, 3.0), rtol=1e-5)


def test_reshape_forwards_numpy_values_to_their_own_method():
  # as in JAX 0.10.2 (recorded): jnp.reshape of a NumPy array or scalar is NumPy's reshape,
  # concrete even under jit (numpyro's support checks count on it); ravel and atleast_1d
  # and Python scalars still give Arrays
  assert type(jnp.reshape(np.arange(6), (2, 3))) is np.ndarray
  assert type(jnp.reshape(np.float32(2), (1,))) is np.ndarray
  np.testing.assert_array_equal(jnp.reshape(np.arange(6), (3, 2), order="F"),
                                [[0, 3], [1, 4], [2, 5]])
  assert isinstance(jnp.reshape(2.0, (1,)), jaxlite.Array)
  assert isinstance(jnp.ravel(np.arange(6)), jaxlite.Array)
  assert isinstance(jnp.atleast_1d(np.float32(2)), jaxlite.Array)
  seen = []

  def f(x):
    seen.append(type(jnp.reshape(np.ones((2, 2), bool), (-1,))))
    return jnp.reshape(x, (2, 2))
  np.testing.assert_array_equal(jaxlite.jit(f)(jnp.arange(4)), [[0, 1], [2, 3]])
  assert seen == [np.ndarray]
