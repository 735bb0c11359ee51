"""The special-function, bit, sorting and scan primitives against NumPy/SciPy, their
derivatives against finite differences, vmap against a loop, and jaxprs against JAX's."""
import numpy as np
import pytest
import scipy.special as sps

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite._src.base import dtypes
from jaxlite._src.test_util import check_grads

FLOATS = [np.float16, dtypes.bfloat16, np.float32]
INTS = [np.int8, np.int16, np.int32, np.uint8, np.uint32]
EDGE = np.array([0.0, -0.0, 0.3, -1.7, 2.5, 40.0, np.inf, -np.inf, np.nan])


def _tol(dtype):
  return {np.dtype(np.float16): 2e-3, np.dtype(dtypes.bfloat16): 2e-2}.get(np.dtype(dtype),
                                                                           2e-6)


UNARY = {"erf": sps.erf, "erfc": sps.erfc,
         # as JAX (XLA): lgamma(-inf) is +inf, where SciPy gives -inf
         "lgamma": lambda x: np.where(np.isneginf(x), np.inf, sps.gammaln(x)),
         "bessel_i0e": sps.i0e, "bessel_i1e": sps.i1e}


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_special_functions_match_scipy_and_keep_dtype(name, dtype):
  x = EDGE.astype(dtype)
  out = getattr(lax, name)(jnp.asarray(EDGE.astype(np.float32)).astype(dtype))
  assert out.dtype == np.dtype(dtype) and out.shape == x.shape
  expected = UNARY[name](x.astype(np.float64)).astype(dtype)
  np.testing.assert_allclose(np.asarray(out, np.float64), expected.astype(np.float64),
                             rtol=_tol(dtype), equal_nan=True)


def test_special_functions_on_0d_and_empty_arrays():
  assert lax.erf(jnp.float32(0.5)).shape == ()
  assert lax.lgamma(jnp.zeros((0, 3), jnp.float32)).shape == (0, 3)


def test_digamma_erf_inv_and_incomplete_gamma_match_scipy():
  x = np.array([0.3, 1.0, 2.5, 7.0], np.float32)
  np.testing.assert_allclose(lax.digamma(x), sps.digamma(x), rtol=1e-5)
  assert np.isnan(np.asarray(lax.digamma(jnp.array([0.0, -2.0])))).all()
  p = np.array([-0.9, 0.0, 0.5, 0.99], np.float32)
  np.testing.assert_allclose(lax.erf_inv(p), sps.erfinv(p), rtol=1e-5, atol=1e-7)
  a = np.array([0.5, 1.0, 3.0, 10.0], np.float32)
  np.testing.assert_allclose(lax.igamma(a, x), sps.gammainc(a, x), rtol=1e-5)
  np.testing.assert_allclose(lax.igammac(a, x), sps.gammaincc(a, x), rtol=1e-5)


def test_special_functions_reject_integer_input():
  with pytest.raises(TypeError, match="erf does not accept dtype int32"):
    lax.erf(jnp.arange(3))


def test_special_functions_in_float64(x64):
  x64(True)
  x = np.array([0.1, 1.5, 4.0])
  out = lax.lgamma(jnp.asarray(x))
  assert out.dtype == np.float64
  np.testing.assert_allclose(out, sps.gammaln(x), rtol=1e-14)


@pytest.mark.parametrize("name", ["erf", "erfc", "erf_inv", "lgamma", "digamma",
                                  "bessel_i0e", "bessel_i1e"])
def test_gradients_of_unary_special_functions(name, x64):
  x64(True)
  x = np.array([0.3, -0.6, 0.7]) if name in ("erf_inv", "erf", "erfc", "bessel_i0e",
                                              "bessel_i1e") else np.array([0.4, 1.3, 3.2])
  check_grads(getattr(lax, name), (x,), order=2 if name != "digamma" else 1)


def test_bessel_i1e_gradient_is_one_half_at_zero():
  assert float(jaxlite.grad(lax.bessel_i1e)(0.0)) == 0.5


def test_igamma_gradients_in_both_arguments(x64):
  x64(True)
  check_grads(lax.igamma, (np.array([0.7, 2.0]), np.array([0.5, 3.0])), order=1,
              rtol=1e-4, atol=1e-4)
  check_grads(lax.igammac, (np.array([0.7, 2.0]), np.array([0.5, 3.0])), order=1,
              rtol=1e-4, atol=1e-4)


def test_vmap_of_special_functions_matches_a_loop():
  a = np.array([[0.5, 1.0], [2.0, 3.0]], np.float32)
  x = np.array([0.3, 1.7], np.float32)
  out = jaxlite.vmap(lax.igamma, in_axes=(0, None))(a, x)
  np.testing.assert_allclose(out, np.stack([sps.gammainc(r, x) for r in a]), rtol=1e-5)


# -- bits
@pytest.mark.parametrize("dtype", INTS, ids=lambda d: np.dtype(d).name)
def test_shifts_follow_xla_for_large_and_negative_amounts(dtype):
  bits = 8 * np.dtype(dtype).itemsize
  x = np.array([1, 5, 100, np.iinfo(dtype).max, np.iinfo(dtype).min], dtype)
  for s in [0, 1, 3, bits - 1]:
    y = np.full(x.shape, s, dtype)
    np.testing.assert_array_equal(lax.shift_left(x, y), np.left_shift(x, y))
    u = x.view(f"u{x.itemsize}")
    np.testing.assert_array_equal(lax.shift_right_logical(x, y),
                                  np.right_shift(u, y.astype(u.dtype)).view(dtype))
    np.testing.assert_array_equal(lax.shift_right_arithmetic(x, y),
                                  np.right_shift(x.view(f"i{x.itemsize}"), y.astype(
                                      f"i{x.itemsize}")).view(dtype))
  big = np.full(x.shape, bits, dtype)
  assert (np.asarray(lax.shift_left(x, big)) == 0).all()
  assert (np.asarray(lax.shift_right_logical(x, big)) == 0).all()


def test_shift_right_arithmetic_fills_with_the_sign():
  x = jnp.array([-8, 8], jnp.int32)
  assert lax.shift_right_arithmetic(x, jnp.array([40, 40], jnp.int32)).tolist() == [-1, 0]


@pytest.mark.parametrize("dtype", INTS, ids=lambda d: np.dtype(d).name)
def test_population_count_and_clz(dtype):
  x = np.array([0, 1, 6, np.iinfo(dtype).max, np.iinfo(dtype).min], dtype)
  bits = 8 * x.itemsize
  u = x.view(f"u{x.itemsize}").astype(np.uint64)
  pop = [bin(int(v)).count("1") for v in u]
  clz = [bits - int(v).bit_length() for v in u]
  assert lax.population_count(x).tolist() == pop and lax.population_count(x).dtype == dtype
  assert lax.clz(x).tolist() == clz


def test_bitcast_convert_type_changes_trailing_axis():
  x = np.array([1.0, -2.5], np.float32)
  out = lax.bitcast_convert_type(x, jnp.int32)
  np.testing.assert_array_equal(out, x.view(np.int32))
  narrow = lax.bitcast_convert_type(x, jnp.uint8)
  assert narrow.shape == (2, 4)
  np.testing.assert_array_equal(lax.bitcast_convert_type(narrow, jnp.float32), x)
  with pytest.raises(ValueError):   # as JAX: the shape rule rejects it
    lax.bitcast_convert_type(jnp.zeros((3,), jnp.uint8), jnp.int32)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, dtypes.bfloat16],
                         ids=lambda d: np.dtype(d).name)
def test_reduce_precision_to_float16_and_bfloat16(dtype):
  x = np.array([1.0001, 3.14159, 70000.0, 1e-8, -0.0, np.inf, np.nan], np.float32)
  for target, (e, m) in ((np.float16, (5, 10)), (dtypes.bfloat16, (8, 7))):
    if np.dtype(dtype).itemsize == 2 and np.dtype(target) != np.dtype(dtype) and \
        dtypes.finfo(dtype).nexp < e:
      continue
    src = x.astype(dtype)
    out = np.asarray(lax.reduce_precision(jnp.asarray(x).astype(dtype), e, m))
    expected = src.astype(target).astype(dtype)
    np.testing.assert_array_equal(out.astype(np.float32), expected.astype(np.float32))


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: np.dtype(d).name)
def test_round_methods(dtype):
  x = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999997, 3.7, -0.0, np.inf, np.nan]).astype(
      dtype)
  arr = jnp.asarray(x.astype(np.float32)).astype(dtype)
  away = lax.round(arr, lax.RoundingMethod.AWAY_FROM_ZERO)
  even = lax.round(arr, 1)
  wide = x.astype(np.float64)
  with np.errstate(invalid="ignore"):
    expected_away = np.where(np.abs(wide - np.trunc(wide)) >= 0.5,
                             np.trunc(wide) + np.sign(wide), np.trunc(wide))
  np.testing.assert_array_equal(np.asarray(away, np.float64), expected_away)
  np.testing.assert_array_equal(np.asarray(even, np.float64), np.rint(wide))
  assert away.dtype == np.dtype(dtype)


def test_complex_parts_and_their_gradients():
  z = jnp.array([1 + 2j, -3 - 0.5j], jnp.complex64)
  np.testing.assert_array_equal(lax.real(z), [1, -3])
  np.testing.assert_array_equal(lax.imag(z), [2, -0.5])
  np.testing.assert_array_equal(lax.conj(z), np.conj(np.asarray(z)))
  assert lax.conj(jnp.ones(2)).dtype == np.complex64
  assert lax.complex(jnp.ones(2), jnp.zeros(2)).dtype == np.complex64
  f = lambda x, y: lax.real(lax.complex(x, y) * lax.complex(y, x)).sum()
  check_grads(f, (np.array([0.5, 1.0], np.float32), np.array([2.0, -1.0], np.float32)), 2)
  g = lambda x: lax.imag(lax.conj(x * (1 + 2j))).sum()
  np.testing.assert_allclose(jaxlite.grad(g)(jnp.array([1.0, 2.0])), [-2.0, -2.0])


# -- sorting and scans
@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint32, np.float16, np.float32],
                         ids=lambda d: np.dtype(d).name)
def test_sort_matches_numpy(dtype):
  x = np.random.default_rng(0).integers(0, 5, (3, 6)).astype(dtype)
  for dim in (0, 1, -1):
    np.testing.assert_array_equal(lax.sort(x, dim), np.sort(x, dim))


def test_sort_puts_nans_last_and_keeps_signed_zeros_stable():
  x = np.array([np.nan, 1.0, -np.inf, 0.0, -0.0, -np.nan, 2.0], np.float32)
  out = np.asarray(lax.sort(x))
  np.testing.assert_array_equal(out[:5], [-np.inf, 0.0, -0.0, 1.0, 2.0])
  assert np.signbit(out[1]) == False and np.signbit(out[2]) == True  # noqa: E712
  assert np.isnan(out[5:]).all()


def test_sort_with_several_operands_and_keys():
  k1 = np.array([2, 1, 2, 1, 0], np.int32)
  k2 = np.array([0.5, 0.3, 0.1, 0.4, 0.9], np.float32)
  v = np.arange(5, dtype=np.int32)
  _, _, perm = lax.sort((k1, k2, v), num_keys=2)
  np.testing.assert_array_equal(perm, np.lexsort((k2, k1)))
  _, perm1 = lax.sort((k1, v), num_keys=1)
  np.testing.assert_array_equal(perm1, np.argsort(k1, kind="stable"))


def test_sort_gradient_permutes_tangents():
  x = np.array([0.3, -1.2, 2.0, 0.9], np.float32)
  check_grads(lambda v: lax.sort(v) * jnp.arange(1.0, 5.0), (x,), order=2)
  check_grads(lambda v: lax.sort((v, v * 2.0))[1], (x,), order=1)


def test_vmap_of_sort_and_top_k():
  x = np.random.default_rng(1).normal(size=(4, 7)).astype(np.float32)
  np.testing.assert_array_equal(jaxlite.vmap(lax.sort, in_axes=1, out_axes=1)(x),
                                np.sort(x, 0))
  vals, idx = jaxlite.vmap(lambda r: lax.top_k(r, 3))(x)
  np.testing.assert_array_equal(idx, np.argsort(-x, 1, kind="stable")[:, :3])
  np.testing.assert_array_equal(vals, -np.sort(-x, 1)[:, :3])


def test_top_k_breaks_ties_toward_lower_indices_and_differentiates():
  x = np.array([1.0, 3.0, 3.0, 2.0], np.float32)
  vals, idx = lax.top_k(x, 3)
  assert vals.tolist() == [3.0, 3.0, 2.0] and idx.tolist() == [1, 2, 3]
  assert idx.dtype == np.int32
  y = np.array([0.1, 0.7, -0.4, 0.5], np.float32)
  check_grads(lambda v: lax.top_k(v, 2)[0], (y,), order=2)
  with pytest.raises(ValueError, match="no larger than"):
    lax.top_k(x, 5)


SCANS = {"cumsum": np.cumsum, "cumprod": np.cumprod,
         "cummax": np.maximum.accumulate, "cummin": np.minimum.accumulate,
         "cumlogsumexp": np.logaddexp.accumulate}


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("name", sorted(SCANS))
def test_cumulative_reductions_match_numpy(name, reverse):
  x = np.random.default_rng(2).uniform(0.5, 1.5, (3, 5)).astype(np.float32)
  for axis in (0, 1):
    src = np.flip(x, axis) if reverse else x
    expected = SCANS[name](src, axis=axis)
    expected = np.flip(expected, axis) if reverse else expected
    out = getattr(lax, name)(x, axis=axis, reverse=reverse)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, expected, rtol=1e-5)


@pytest.mark.parametrize("name", sorted(SCANS))
def test_cumulative_reductions_gradients(name, x64):
  x64(True)
  x = np.array([[0.7, -0.3, 1.1, 0.2], [1.5, 0.4, -0.8, 0.9]])
  check_grads(lambda v: getattr(lax, name)(v, axis=1, reverse=True), (x,), order=2)


def test_cumprod_gradient_is_exact_at_zero():
  g = jaxlite.grad(lambda v: lax.cumprod(v)[-1])(jnp.array([2.0, 0.0, 3.0]))
  np.testing.assert_allclose(g, [0.0, 6.0, 0.0])


def test_cumulative_reductions_on_integers_and_empty():
  x = np.array([3, -1, 4, 1, -5], np.int8)
  np.testing.assert_array_equal(lax.cumsum(x), np.cumsum(x).astype(np.int8))
  np.testing.assert_array_equal(lax.cummax(x), np.maximum.accumulate(x))
  assert lax.cumsum(jnp.zeros((0,), jnp.float32)).shape == (0,)
  out = jaxlite.vmap(lambda r: lax.cummin(r))(np.array([[3, 1, 2], [0, 5, -1]], np.int32))
  np.testing.assert_array_equal(out, [[3, 1, 1], [0, 0, -1]])


# -- printed jaxprs, recorded from JAX 0.10.2
JAXPRS = [
    (lambda a: lax.erf_inv(a), "{ lambda ; a:f32[3]. let b:f32[3] = erf_inv a in (b,) }"),
    (lambda a: lax.round(a), "{ lambda ; a:f32[3]. let b:f32[3] = round[rounding_method=0] "
                             "a in (b,) }"),
    (lambda a: lax.round(a, lax.RoundingMethod.TO_NEAREST_EVEN),
     "{ lambda ; a:f32[3]. let b:f32[3] = round[rounding_method=1] a in (b,) }"),
    (lambda a: lax.top_k(a, 2),
     "{ lambda ; a:f32[3]. let b:f32[2] c:i32[2] = top_k[axis=0 k=2] a in (b, c) }"),
    (lambda a: lax.cumsum(a),
     "{ lambda ; a:f32[3]. let b:f32[3] = cumsum[axis=0 reverse=False] a in (b,) }"),
    (lambda a: lax.conj(a),
     "{ lambda ; a:f32[3]. let b:c64[3] = conj[input_dtype=float32] a in (b,) }"),
    (lambda a: lax.cumprod(a, reverse=True),
     "{ lambda ; a:f32[3]. let b:f32[3] = cumprod[axis=0 reverse=True] a in (b,) }"),
    (lambda a: lax.sort(a), "{ lambda ; a:f32[3]. let\n    b:f32[3] = sort[dimension=0 "
                            "is_stable=True num_keys=1] a\n  in (b,) }"),
    (lambda a: lax.reduce_precision(a, 5, 10),
     "{ lambda ; a:f32[3]. let\n    b:f32[3] = reduce_precision[exponent_bits=5 "
     "mantissa_bits=10] a\n  in (b,) }"),
    (lambda a: lax.bitcast_convert_type(a, jnp.int8),
     "{ lambda ; a:f32[3]. let\n    b:i8[3,4] = bitcast_convert_type[new_dtype=int8] a\n"
     "  in (b,) }"),
]


@pytest.mark.parametrize("fun,expected", JAXPRS)
def test_jaxprs_print_like_jax(fun, expected):
  assert str(jaxlite.make_jaxpr(fun)(jnp.ones(3, jnp.float32))) == expected


def test_primitives_run_under_jit():
  x = jnp.array([0.3, -1.0, 2.0], jnp.float32)
  f = jaxlite.jit(lambda v: (lax.erf(v), lax.sort(v), lax.cumsum(v, reverse=True),
                             lax.top_k(v, 1)[1], lax.population_count(lax.convert_element_type(
                                 v, jnp.int32))))
  for a, b in zip(f(x), (lax.erf(x), lax.sort(x), lax.cumsum(x, reverse=True),
                         lax.top_k(x, 1)[1], jnp.array([0, 32, 1]))):
    np.testing.assert_allclose(a, b, rtol=1e-6)
