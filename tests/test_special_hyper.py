"""Tests for ``hyp2f1`` and ``sph_harm_y`` of ``jaxlite.scipy.special``."""
import numpy as np
import pytest
import scipy.special as osp

import jaxlite
import jaxlite.numpy as jnp
import jaxlite.scipy.special as jsp


def _hyp_grid():
  vals = np.arange(-3, 3.01, 0.5)
  a, b, c = (v.ravel() for v in np.meshgrid(vals, vals, vals, indexing="ij"))
  xs = np.array([-5, -3, -1.5, -1, -0.7, -0.3, 0, 0.2, 0.45, 0.5, 0.55, 0.7, 0.85, 0.95])
  n = len(xs)
  a, b, c, x = np.repeat(a, n), np.repeat(b, n), np.repeat(c, n), np.tile(xs, len(a))
  keep = ~((c <= 0) & (c == np.floor(c)))
  return a[keep], b[keep], c[keep], x[keep]


@pytest.mark.parametrize("use_x64", [False, True])
def test_hyp2f1_vs_scipy(x64, use_x64):
  x64(use_x64)
  dt = np.float64 if use_x64 else np.float32
  a, b, c, x = _hyp_grid()
  ref = osp.hyp2f1(a, b, c, x)
  got = jsp.hyp2f1(a.astype(dt), b.astype(dt), c.astype(dt), x.astype(dt))
  assert got.dtype == dt
  got = np.asarray(got, np.float64)
  ok = np.isfinite(ref)
  # relative error, measured absolutely below a floor (scipy's near-zero values
  # come from cancellation)
  floor = 1e-4 if use_x64 else 1.0
  err = np.abs(got[ok] - ref[ok]) / np.maximum(np.abs(ref[ok]), floor)
  assert np.all(np.isfinite(got[ok]))
  # x >= -1: JAX's algorithm, whose series (at most 250 terms) is this accurate on the
  # grid under JAX 0.10.2 too (p99 5.9e-7 / 2.9e-6, worst 0.15 / 0.09 near x = 0.95);
  # x < -1: Pfaff's transformation, where JAX's series diverges
  near = x[ok] >= -1
  if use_x64:
    assert np.percentile(err[near], 99) < 1e-6 and err[near].max() < 0.2
    assert err[~near].max() < 1e-10
  else:
    assert np.percentile(err[near], 99) < 1e-5 and err[near].max() < 0.1
    assert err[~near].max() < 2e-4


def test_hyp2f1_special_values(x64):
  x64(True)
  # x == 1: Gauss's formula when c - a - b > 0, else inf
  np.testing.assert_allclose(jsp.hyp2f1(1., 2., 4., 1.), 3.0, rtol=1e-12)
  np.testing.assert_allclose(jsp.hyp2f1(0.5, 0.5, 3., 1.), osp.hyp2f1(0.5, 0.5, 3., 1.),
                             rtol=1e-12)
  assert np.isinf(jsp.hyp2f1(1., 2., 3., 1.))
  # x > 1 and non-positive integer c: inf, as in JAX
  assert np.isinf(jsp.hyp2f1(1., 2., 3., 1.5))
  assert np.isinf(jsp.hyp2f1(1., 2., -1., 0.5))
  assert np.isinf(jsp.hyp2f1(1., 2., 0., 0.5))
  # terminating series and closed forms
  np.testing.assert_allclose(jsp.hyp2f1(-1., 2., 3., 0.5), 2 / 3, rtol=1e-14)
  x = np.linspace(-10, 0.99, 23)
  np.testing.assert_allclose(jsp.hyp2f1(1., 1., 2., x), -np.log1p(-x) / np.where(x == 0, 1, x),
                             rtol=1e-10)


def test_hyp2f1_dtype():
  assert jsp.hyp2f1(1, 2, 3, 0.5).dtype == np.float32
  assert jsp.hyp2f1(np.float32(1), 2., 3., np.float32(.5)).dtype == np.float32


def test_hyp2f1_jit_vmap():
  a, b, c = 0.3, 1.7, 2.2
  x = jnp.asarray(np.linspace(-4, 0.9, 11), jnp.float32)
  ref = osp.hyp2f1(a, b, c, np.asarray(x, np.float64))
  jitted = jaxlite.jit(jsp.hyp2f1)(a, b, c, x)
  vmapped = jaxlite.vmap(lambda t: jsp.hyp2f1(a, b, c, t))(x)
  np.testing.assert_allclose(jitted, ref, rtol=1e-4)
  np.testing.assert_allclose(vmapped, ref, rtol=1e-4)


@pytest.mark.parametrize("xv", [-3.0, -0.6, 0.0, 0.2, 0.7, 0.9])
@pytest.mark.parametrize("abc", [(0.3, 1.2, 2.7), (1.0, 1.0, 2.0), (-2.0, 1.5, 0.5)])
def test_hyp2f1_grad(x64, xv, abc):
  x64(True)
  a, b, c = abc
  g = jaxlite.grad(lambda t: jsp.hyp2f1(a, b, c, t))(xv)
  expected = a * b / c * osp.hyp2f1(a + 1, b + 1, c + 1, xv)
  np.testing.assert_allclose(g, expected, rtol=1e-7)


def _sph_cases():
  n = np.array([0, 1, 1, 1, 2, 2, 2, 3, 3, 4, 5, 7, 7, 10, 10])
  m = np.array([0, -1, 0, 1, -2, 1, 2, -3, 2, 0, -4, 7, -5, 3, -10])
  rng = np.random.default_rng(0)
  theta = rng.uniform(0, np.pi, n.shape)
  phi = rng.uniform(0, 2 * np.pi, n.shape)
  return n, m, theta, phi


@pytest.mark.parametrize("use_x64", [False, True])
def test_sph_harm_y_vs_scipy(x64, use_x64):
  x64(use_x64)
  dt = np.float64 if use_x64 else np.float32
  n, m, theta, phi = _sph_cases()
  ref = osp.sph_harm_y(n, m, theta, phi)
  got = jsp.sph_harm_y(jnp.asarray(n), jnp.asarray(m), theta.astype(dt), phi.astype(dt))
  assert got.dtype == (np.complex128 if use_x64 else np.complex64)
  np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12 if use_x64 else 2e-5)
  # as JAX: the result is complex128 whenever x64 is on, even for float32 angles
  got32 = jsp.sph_harm_y(jnp.asarray(n), jnp.asarray(m), theta.astype(np.float32),
                         phi.astype(np.float32))
  assert got32.dtype == (np.complex128 if use_x64 else np.complex64)


def test_sph_harm_y_poles_and_nmax(x64):
  x64(True)
  n = np.array([3, 3, 2, 4])
  m = np.array([0, 1, -2, 0])
  for th in (0.0, np.pi):
    np.testing.assert_allclose(jsp.sph_harm_y(n, m, th, 0.3),
                               osp.sph_harm_y(n, m, th, 0.3), atol=1e-12)
  # n is clipped to n_max, as in JAX
  np.testing.assert_allclose(jsp.sph_harm_y(np.array([4]), np.array([1]), 0.3, 0.4, n_max=2),
                             osp.sph_harm_y([2], [1], 0.3, 0.4), atol=1e-12)


def test_sph_harm_y_jit_vmap():
  n, m, theta, phi = _sph_cases()
  ref = osp.sph_harm_y(n, m, theta, phi)
  f = jaxlite.jit(lambda n, m, t, p: jsp.sph_harm_y(n, m, t, p, n_max=10))
  np.testing.assert_allclose(f(n, m, theta.astype(np.float32), phi.astype(np.float32)),
                             ref, atol=2e-5)
  g = jaxlite.vmap(lambda t: jsp.sph_harm_y(n, m, t, 0.5))
  thetas = np.linspace(0.1, 3.0, 4)
  out = g(jnp.asarray(thetas, jnp.float32))
  np.testing.assert_allclose(out, osp.sph_harm_y(n, m, thetas[:, None], 0.5), atol=2e-5)


def test_sph_harm_y_diff_n():
  with pytest.raises(NotImplementedError):
    jsp.sph_harm_y(np.array([2]), np.array([1]), 0.3, 0.4, diff_n=1)
