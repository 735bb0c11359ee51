"""``sici``, ``fresnel`` and ``wofz`` of ``jaxlite.scipy.special`` against SciPy in
float32 and float64, their dtypes, jit/vmap, and the derivatives of ``sici`` and
``fresnel`` against the integrands."""
import numpy as np
import pytest
import scipy.special as sps

import jaxlite
import jaxlite.numpy as jnp
from jaxlite.scipy import special as jsp

REAL = np.concatenate([np.linspace(-50, 50, 4001),
                       [0.0, -0.0, 1e-8, -1e-8, 1e-300, 1.5, 1.50001, 4.0, 4.00001,
                        1e3, -1e3, 1e6, -1e6, np.inf, -np.inf]])


def _complex_grid():
  r = np.concatenate([-np.logspace(-3, 2, 41)[::-1], [0.0], np.logspace(-3, 2, 41)])
  re, im = np.meshgrid(r, r[r > -6])  # exp(-z^2) overflows far below the real axis
  return (re + 1j * im).ravel()


def _assert_close(got, want, rtol, atol=0.0):
  got = np.asarray(got).astype(np.result_type(want))
  want = np.asarray(want)
  same = (got == want) | (np.isnan(got) & np.isnan(want))
  with np.errstate(all="ignore"):
    err = np.abs(got - want) / (atol + rtol * np.abs(want))
  err = np.where(same, 0.0, err)
  assert np.all(err <= 1), f"max scaled error {np.nanmax(err)} (nan: {np.isnan(err).any()})"


REAL_FUNS = {"sici": (jsp.sici, sps.sici), "fresnel": (jsp.fresnel, sps.fresnel)}


@pytest.mark.parametrize("name", sorted(REAL_FUNS))
def test_real_functions_match_scipy_float64(name, x64):
  x64(True)
  ours, ref = REAL_FUNS[name]
  got = ours(REAL)
  want = ref(REAL)
  for g, w in zip(got, want):
    assert g.dtype == np.float64
    # relative 1e-12, absolute 1e-15 for the zeros of Ci
    _assert_close(g, w, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", sorted(REAL_FUNS))
def test_real_functions_match_scipy_float32(name):
  ours, ref = REAL_FUNS[name]
  x = REAL.astype(np.float32)
  got = ours(x)
  want = ref(x.astype(np.float64))
  for g, w in zip(got, want):
    assert g.dtype == np.float32
    _assert_close(g, w, rtol=1e-5, atol=1e-6)


def test_special_values(x64):
  x64(True)
  si, ci = jsp.sici(np.array([0.0, np.inf, -np.inf]))
  np.testing.assert_array_equal(np.asarray(si), [0.0, np.pi / 2, -np.pi / 2])
  assert np.asarray(ci)[0] == -np.inf and np.asarray(ci)[1] == 0.0
  assert np.isnan(np.asarray(ci)[2])
  s, c = jsp.fresnel(np.array([0.0, np.inf, -np.inf]))
  np.testing.assert_array_equal(np.asarray(s), [0.0, 0.5, -0.5])
  np.testing.assert_array_equal(np.asarray(c), [0.0, 0.5, -0.5])


def test_wofz_matches_scipy_float64(x64):
  x64(True)
  z = _complex_grid()
  got = jsp.wofz(z)
  assert got.dtype == np.complex128
  want = sps.wofz(z)
  err = np.abs(np.asarray(got) - want) / np.abs(want)
  # JAX's 32-term Weideman approximation: 3.07e-13 at worst on this grid (JAX 0.10.2 too)
  assert err.max() < 5e-13


def test_wofz_matches_scipy_float32():
  z = _complex_grid().astype(np.complex64)
  got = jsp.wofz(z)
  assert got.dtype == np.complex64
  want = sps.wofz(z.astype(np.complex128))
  err = np.abs(np.asarray(got) - want) / np.abs(want)
  assert err.max() < 1e-5


def test_wofz_real_and_integer_input_promote(x64):
  assert jsp.wofz(np.float32(1.5)).dtype == np.complex64
  np.testing.assert_allclose(np.asarray(jsp.wofz(jnp.arange(3))), sps.wofz(np.arange(3.0)),
                             rtol=1e-5)
  x64(True)
  assert jsp.wofz(np.float64(1.5)).dtype == np.complex128
  np.testing.assert_allclose(np.asarray(jsp.wofz(2.0)), sps.wofz(2.0), rtol=5e-13)


def test_integer_input_promotes():
  si, ci = jsp.sici(jnp.arange(1, 4))
  s, c = jsp.fresnel(jnp.arange(3))
  for out in (si, ci, s, c):
    assert out.dtype == np.float32
  np.testing.assert_allclose(np.asarray(si), sps.sici(np.arange(1.0, 4))[0], rtol=1e-5)
  np.testing.assert_allclose(np.asarray(c), sps.fresnel(np.arange(3.0))[1], rtol=1e-5)


def test_jit_and_vmap():
  x = jnp.linspace(-8.0, 8.0, 33)
  for f in (jsp.sici, jsp.fresnel):
    want = f(x)
    for got in (jaxlite.jit(f)(x), jaxlite.vmap(f)(x)):
      for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-7)
  z = jnp.asarray(_complex_grid()[::7].astype(np.complex64))
  want = np.asarray(jsp.wofz(z))
  np.testing.assert_allclose(np.asarray(jaxlite.jit(jsp.wofz)(z)), want, rtol=1e-6)
  np.testing.assert_allclose(np.asarray(jaxlite.vmap(jsp.wofz)(z)), want, rtol=1e-6)


@pytest.mark.parametrize("x", [0.0, 0.5, 1.4, 1.6, 2.0, 3.9, 4.1, 7.0, 30.0, -2.5])
def test_grad_matches_integrands(x, x64):
  x64(True)
  ds = jaxlite.grad(lambda t: jsp.fresnel(t)[0])(x)
  dc = jaxlite.grad(lambda t: jsp.fresnel(t)[1])(x)
  np.testing.assert_allclose(ds, np.sin(np.pi * x * x / 2), rtol=1e-9, atol=1e-9)
  np.testing.assert_allclose(dc, np.cos(np.pi * x * x / 2), rtol=1e-9, atol=1e-9)
  dsi = jaxlite.grad(lambda t: jsp.sici(t)[0])(x)
  np.testing.assert_allclose(dsi, np.sinc(x / np.pi), rtol=1e-9, atol=1e-12)
  if x != 0:
    dci = jaxlite.grad(lambda t: jsp.sici(t)[1])(x)
    # scipy's real Ci is even (Ci(|x|)), so its derivative is cos|x| / x
    np.testing.assert_allclose(dci, np.cos(x) / x, rtol=1e-9, atol=1e-12)


def test_nan_propagates():
  for out in (*jsp.sici(np.float32(np.nan)), *jsp.fresnel(np.float32(np.nan)),
              jsp.wofz(np.complex64(np.nan))):
    assert np.isnan(np.asarray(out))
