"""Tier 0's float32 emulation of XLA's CPU math (backends/numpy/xla_math.py) against values
recorded from JAX 0.10.2 (tests/data/make_xla_math_reference.py): bit for bit."""
import os
import warnings

from fractions import Fraction

import numpy as np
import pytest

from jaxlite._src.backends.numpy import xla_math

REF = np.load(os.path.join(os.path.dirname(__file__), "data", "xla_math_f32_reference.npz"))


def _assert_bits_equal(got, want):
  assert got.dtype == np.float32 and got.shape == want.shape
  same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
  bad = np.flatnonzero(~same)
  assert bad.size == 0, f"{bad.size} differ, e.g. at {bad[:5]}: {got[bad[:5]]} vs {want[bad[:5]]}"


@pytest.mark.parametrize("name", ["exp", "log", "log1p", "tan", "erf"])
def test_unary_matches_xla_bit_for_bit(name):
  x = REF[f"{name}_x"]
  with warnings.catch_warnings():
    warnings.simplefilter("error")   # the functions never warn, even on inf / nan / 0
    got = getattr(xla_math, name)(x)
  _assert_bits_equal(got, REF[f"{name}_out"])


def test_pow_matches_xla_bit_for_bit():
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    got = xla_math.pow(REF["pow_x"], REF["pow_y"])
  _assert_bits_equal(got, REF["pow_out"])


@pytest.mark.parametrize("name", ["exp", "log", "log1p", "tan", "erf"])
def test_zero_dim_and_empty(name):
  fn = getattr(xla_math, name)
  x = REF[f"{name}_x"][7]
  out = fn(np.float32(x))
  assert out.shape == () and out.dtype == np.float32
  _assert_bits_equal(out.reshape(1), fn(np.array([x], np.float32)))
  assert fn(np.zeros((0, 3), np.float32)).shape == (0, 3)


def test_erf_is_within_6_ulp_of_correctly_rounded():
  from scipy import special
  x = np.random.default_rng(0).uniform(-4, 4, 100_000).astype(np.float32)
  want = special.erf(x.astype(np.float64))
  ulp = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
  assert (np.abs(xla_math.erf(x) - want) <= 6 * ulp).all()


@pytest.mark.parametrize("name", ["exp", "log", "log1p", "tan"])
def test_close_to_correctly_rounded(name):
  # an independent sanity check of the recorded data: within 3 ulp of float64 math
  # (subnormals excluded: XLA reads them as zero)
  x = REF[f"{name}_x"]
  x = x[np.isfinite(x) & (np.abs(x) < 80) & (x > (0 if name == "log" else -1))
        & (np.abs(x) >= np.finfo(np.float32).tiny)]
  want = getattr(np, name)(x.astype(np.float64))
  got = getattr(xla_math, name)(x).astype(np.float64)
  ok = np.isfinite(want) & (np.abs(want) > 1e-30)
  ulp = np.spacing(np.abs(want[ok]).astype(np.float32)).astype(np.float64)
  assert (np.abs(got[ok] - want[ok]) <= 3 * ulp).all()


def test_fma_rounds_once_where_float64_would_round_twice():
  # a * b = 2^-24 + 4688 * 2^-70: 1 + a * b is just above the float32 tie 1 + 2^-24, but its
  # float64 rounding lands exactly on the tie, which then rounds to even (1.0)
  a = np.float32((2 ** 23 + 2896) * 2.0 ** -35)
  b = np.float32((2 ** 23 - 2895) * 2.0 ** -35)
  assert np.float32(np.float64(a) * np.float64(b) + 1.0) == 1.0
  want = np.float32(1 + 2 ** -23)
  assert xla_math.fma(a, b, np.float32(1)) == want
  out = np.ones(3, np.float32)
  assert (xla_math.fma(np.full(3, a), b, out, out=out) == want).all() and out[0] == want
  # correctly rounded: no float32 neighbour of the result is nearer the exact value
  rng = np.random.default_rng(0)
  x, y = (rng.standard_normal(3000).astype(np.float32) for _ in range(2))
  z = (rng.standard_normal(3000) * 10.0 ** rng.integers(-12, 12, 3000)).astype(np.float32)
  for g, p, q, r in zip(xla_math.fma(x, y, z), x, y, z):
    exact = Fraction(float(p)) * Fraction(float(q)) + Fraction(float(r))
    err = abs(Fraction(float(g)) - exact)
    for side in (-np.inf, np.inf):
      assert err <= abs(Fraction(float(np.nextafter(g, np.float32(side)))) - exact)
