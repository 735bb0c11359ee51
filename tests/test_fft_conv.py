"""FFTs, convolutions and windowed reductions: values against NumPy / SciPy / JAX,
gradients against finite differences, and vmap against a loop."""
import pickle

import numpy as np
import pytest
import scipy.signal

import jaxlite
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite._src.test_util import check_grads
from reference_jax import run_reference

RNG = np.random.default_rng(0)
@pytest.fixture(autouse=True)
def _x64():
  old = jaxlite.config.jax_enable_x64
  jaxlite.config.update("jax_enable_x64", True)
  yield
  jaxlite.config.update("jax_enable_x64", old)


def _x(*shape, dtype=np.float64):
  return RNG.standard_normal(shape).astype(dtype)


# ----------------------------------------------------------------------------- fft

@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "fft2", "ifft2", "rfft2", "fftn",
                                  "ifftn", "rfftn"])
@pytest.mark.parametrize("norm", [None, "ortho", "forward"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_fft_matches_numpy(name, norm, dtype):
  x = _x(3, 4, 6).astype(dtype)
  if name.startswith("r") and np.iscomplexobj(x):
    x = x.real.copy()
  out = getattr(jnp.fft, name)(x, norm=norm)
  want = getattr(np.fft, name)(x, norm=norm)
  assert out.shape == want.shape
  single = np.dtype(dtype) in (np.float32, np.complex64)
  assert out.dtype == (np.complex64 if single else np.complex128)
  np.testing.assert_allclose(out, want, rtol=1e-4 if single else 1e-10, atol=1e-4 if single
                             else 1e-10)


@pytest.mark.parametrize("n", [None, 5, 8])
def test_irfft_and_lengths_match_numpy(n):
  c = np.fft.rfft(_x(3, 6))
  np.testing.assert_allclose(jnp.fft.irfft(c, n), np.fft.irfft(c, n), atol=1e-12)
  x = _x(4, 6)
  np.testing.assert_allclose(jnp.fft.fft(x, n, axis=0), np.fft.fft(x, n, axis=0), atol=1e-12)
  c2 = np.fft.rfftn(_x(4, 6))
  s = None if n is None else (4, n)
  np.testing.assert_allclose(jnp.fft.irfftn(c2, s, (0, 1)), np.fft.irfftn(c2, s, (0, 1)),
                             atol=1e-12)
  np.testing.assert_allclose(jnp.fft.hfft(c, n), np.fft.hfft(c, n), atol=1e-10)
  np.testing.assert_allclose(jnp.fft.ihfft(x), np.fft.ihfft(x), atol=1e-12)


def test_fft_helpers():
  for n in (7, 8):
    np.testing.assert_allclose(jnp.fft.fftfreq(n, 0.3), np.fft.fftfreq(n, 0.3))
    np.testing.assert_allclose(jnp.fft.rfftfreq(n, 0.3), np.fft.rfftfreq(n, 0.3))
    x = _x(n, 3)
    np.testing.assert_array_equal(jnp.fft.fftshift(x), np.fft.fftshift(x))
    np.testing.assert_array_equal(jnp.fft.ifftshift(x, 0), np.fft.ifftshift(x, 0))


def test_fft_gradients():
  x = _x(3, 6)
  parts = lambda z: (jnp.real(z), jnp.imag(z))
  check_grads(lambda v: parts(jnp.fft.fft(v)), (x,), order=2)
  check_grads(lambda v: jnp.real(jnp.fft.rfft(v)), (x,), order=1)
  check_grads(lambda v: jnp.fft.irfft(jnp.fft.rfft(v) * (1 + 0.5j)), (x,), order=2)
  check_grads(lambda v: jnp.fft.irfft(jnp.fft.fft(v)[:, :4]), (x,), order=1)
  check_grads(lambda v: jnp.fft.irfft(jnp.fft.fft(v)[:, :4], 7), (x,), order=1)
  check_grads(lambda v: parts(jnp.fft.ifft2(v)), (x,), order=1)
  check_grads(lambda v: jnp.fft.irfftn(jnp.fft.rfftn(v) * 2.0), (x,), order=1)


def test_fft_under_vmap_and_jit():
  x = _x(4, 3, 8)
  np.testing.assert_allclose(jaxlite.vmap(jnp.fft.rfft, 1)(x),
                             np.moveaxis(np.fft.rfft(x), 1, 0), atol=1e-12)
  np.testing.assert_allclose(jaxlite.jit(jnp.fft.fft2)(x), np.fft.fft2(x), atol=1e-12)
  text = str(jaxlite.make_jaxpr(jnp.fft.rfft)(np.ones((3, 3), np.float32)))
  assert "fft[fft_lengths=(3,) fft_type=2]" in text


# ----------------------------------------------------------------------------- convolution

def _ref_conv(lhs, rhs, strides, padding, lhs_dil, rhs_dil, fgc=1, bgc=1):
  """Direct loops over NCHW / OIHW: the definition of the operation."""
  N, C = lhs.shape[:2]
  O, I = rhs.shape[:2]
  sp = lhs.ndim - 2
  # dilate + pad the input
  dil_shape = [(d - 1) * r + 1 for d, r in zip(lhs.shape[2:], lhs_dil)]
  x = np.zeros((N, C) + tuple(dil_shape), lhs.dtype)
  x[(slice(None), slice(None)) + tuple(slice(None, None, r) for r in lhs_dil)] = lhs
  pads = [(max(lo, 0), max(hi, 0)) for lo, hi in padding]
  x = np.pad(x, [(0, 0), (0, 0)] + pads)
  x = x[(slice(None), slice(None)) + tuple(
      slice(-min(lo, 0), x.shape[2 + i] + min(hi, 0)) for i, (lo, hi) in enumerate(padding))]
  k_eff = [(k - 1) * r + 1 for k, r in zip(rhs.shape[2:], rhs_dil)]
  out_sp = [(x.shape[2 + i] - k_eff[i]) // strides[i] + 1 for i in range(sp)]
  out = np.zeros((N // bgc, O) + tuple(out_sp), np.result_type(lhs, rhs))
  og = O // (fgc * bgc)
  for n in range(N // bgc):
    for o in range(O):
      g = o // (O // fgc) if fgc > 1 else 0
      b = o // (O // bgc) if bgc > 1 else 0
      for pos in np.ndindex(*out_sp):
        acc = 0.0
        for i in range(I):
          c = g * I + i
          window = x[(b * (N // bgc) + n, c) + tuple(
              slice(p * s, p * s + ke, r) for p, s, ke, r in zip(pos, strides, k_eff, rhs_dil))]
          acc += np.sum(window * rhs[o, i])
        out[(n, o) + pos] = acc
  return out


CONV_CASES = [
    # lhs shape, rhs shape, strides, padding, lhs_dil, rhs_dil, fgc, bgc
    ((2, 3, 6, 5), (4, 3, 3, 2), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1), 1, 1),
    ((2, 3, 7, 6), (4, 3, 3, 3), (2, 1), ((1, 2), (0, 1)), (1, 1), (1, 1), 1, 1),
    ((1, 2, 6, 6), (3, 2, 2, 3), (1, 2), ((2, 1), (1, 1)), (2, 1), (1, 2), 1, 1),
    ((2, 4, 5, 5), (6, 2, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), (1, 1), 2, 1),
    ((4, 3, 5, 5), (6, 3, 2, 2), (1, 1), ((0, 0), (1, 0)), (1, 1), (1, 1), 1, 2),
    ((2, 3, 8), (4, 3, 3), (3,), ((1, -1),), (1,), (2,), 1, 1),
    ((2, 2, 4, 4, 3), (2, 2, 2, 2, 2), (1, 1, 1), ((0, 0), (1, 0), (0, 1)), (1, 1, 1),
     (1, 1, 1), 1, 1),
]


@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_conv_general_dilated_matches_direct_loops(case):
  ls, rs, strides, padding, ld, rd, fgc, bgc = CONV_CASES[case]
  lhs, rhs = _x(*ls), _x(*rs)
  out = lax.conv_general_dilated(lhs, rhs, strides, padding, ld, rd,
                                 feature_group_count=fgc, batch_group_count=bgc)
  np.testing.assert_allclose(out, _ref_conv(lhs, rhs, strides, padding, ld, rd, fgc, bgc),
                             rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("case", range(len(CONV_CASES)))
def test_conv_gradients_for_both_operands(case):
  ls, rs, strides, padding, ld, rd, fgc, bgc = CONV_CASES[case]
  if len(ls) == 5:
    ls, rs = (1, 2, 3, 3, 2), (2, 2, 2, 2, 2)
  f = lambda a, b: lax.conv_general_dilated(a, b, strides, padding, ld, rd,
                                            feature_group_count=fgc, batch_group_count=bgc)
  check_grads(f, (_x(*ls), _x(*rs)), order=2, modes=("rev",))
  check_grads(f, (_x(*ls), _x(*rs)), order=1, modes=("fwd",))


def test_conv_dimension_numbers_and_same_padding():
  lhs = _x(2, 7, 6, 3)   # NHWC
  rhs = _x(3, 2, 3, 4)   # HWIO
  dn = ("NHWC", "HWIO", "NHWC")
  out = lax.conv_general_dilated(lhs, rhs, (2, 1), "SAME", dimension_numbers=dn)
  ref = _ref_conv(lhs.transpose(0, 3, 1, 2), rhs.transpose(3, 2, 0, 1), (2, 1),
                  lax.padtype_to_pads((7, 6), (3, 2), (2, 1), "SAME"), (1, 1), (1, 1))
  np.testing.assert_allclose(out, ref.transpose(0, 2, 3, 1), rtol=1e-10, atol=1e-10)
  assert out.shape == (2, 4, 6, 4)
  dnums = lax.conv_dimension_numbers(lhs.shape, rhs.shape, dn)
  assert dnums == lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
  check_grads(lambda a, b: lax.conv_general_dilated(a, b, (2, 1), "SAME",
                                                    dimension_numbers=dn),
              (lhs, rhs), order=1, modes=("rev",))


def test_conv_matches_scipy_correlate():
  x, k = _x(1, 1, 9, 8), _x(1, 1, 3, 4)
  out = lax.conv(x, k, (1, 1), "VALID")
  np.testing.assert_allclose(out[0, 0], scipy.signal.correlate2d(x[0, 0], k[0, 0], "valid"),
                             rtol=1e-10)


def test_conv_integer_and_preferred_element_type():
  x = RNG.integers(-3, 3, (1, 2, 4, 4)).astype(np.int32)
  k = RNG.integers(-3, 3, (2, 2, 2, 2)).astype(np.int32)
  out = lax.conv(x, k, (1, 1), "VALID")
  assert out.dtype == np.int32
  np.testing.assert_array_equal(out, _ref_conv(x, k, (1, 1), ((0, 0),) * 2, (1, 1), (1, 1)))
  f16 = lax.conv_general_dilated(x.astype(np.float16), k.astype(np.float16), (1, 1), "VALID",
                                 preferred_element_type=np.float32)
  assert f16.dtype == np.float32


@pytest.mark.parametrize("case", [0, 3, 4])
@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0), (2, 1)])
def test_conv_under_vmap_matches_a_loop(case, in_axes):
  ls, rs, strides, padding, ld, rd, fgc, bgc = CONV_CASES[case]
  B = 3
  lhs = np.stack([_x(*ls) for _ in range(B)], in_axes[0]) if in_axes[0] is not None else _x(*ls)
  rhs = np.stack([_x(*rs) for _ in range(B)], in_axes[1]) if in_axes[1] is not None else _x(*rs)
  f = lambda a, b: lax.conv_general_dilated(a, b, strides, padding, ld, rd,
                                            feature_group_count=fgc, batch_group_count=bgc)
  out = jaxlite.vmap(f, in_axes)(lhs, rhs)
  take = lambda v, ax, i: v if ax is None else np.take(v, i, ax)
  want = np.stack([np.asarray(f(take(lhs, in_axes[0], i), take(rhs, in_axes[1], i)))
                   for i in range(B)])
  np.testing.assert_allclose(out, want, rtol=1e-10, atol=1e-10)


def _jax_reference(script):
  return pickle.loads(run_reference(script))


def test_conv_and_reduce_window_jaxprs_and_values_match_jax():
  lhs, rhs = _x(2, 4, 5, 5, dtype=np.float32), _x(6, 2, 3, 3, dtype=np.float32)
  script = f"""
import pickle, sys, numpy as np, jax
from jax import lax
lhs = np.array({lhs.tolist()}, np.float32); rhs = np.array({rhs.tolist()}, np.float32)
f = lambda a, b: lax.conv_general_dilated(a, b, (1, 2), 'SAME', rhs_dilation=(2, 1),
    feature_group_count=2)
g = lambda a: lax.reduce_window(a, -np.inf, lax.max, (1, 1, 2, 3), (1, 1, 2, 1), 'SAME')
res = dict(conv=np.asarray(f(lhs, rhs)), conv_jaxpr=str(jax.make_jaxpr(f)(lhs, rhs)),
           rw=np.asarray(g(lhs)), rw_jaxpr=str(jax.make_jaxpr(g)(lhs)),
           grad=np.asarray(jax.grad(lambda a, b: (f(a, b) ** 2).sum(), 1)(lhs, rhs)))
sys.stdout.buffer.write(pickle.dumps(res))
"""
  want = _jax_reference(script)
  f = lambda a, b: lax.conv_general_dilated(a, b, (1, 2), "SAME", rhs_dilation=(2, 1),
                                            feature_group_count=2)
  g = lambda a: lax.reduce_window(a, -np.inf, lax.max, (1, 1, 2, 3), (1, 1, 2, 1), "SAME")
  np.testing.assert_allclose(f(lhs, rhs), want["conv"], rtol=1e-4, atol=1e-4)
  assert str(jaxlite.make_jaxpr(f)(lhs, rhs)) == want["conv_jaxpr"]
  np.testing.assert_allclose(g(lhs), want["rw"])
  assert str(jaxlite.make_jaxpr(g)(lhs)) == want["rw_jaxpr"]
  grad = jaxlite.grad(lambda a, b: (f(a, b) ** 2).sum(), 1)(lhs, rhs)
  np.testing.assert_allclose(grad, want["grad"], rtol=1e-3, atol=1e-3)


# ----------------------------------------------------------------------------- reduce_window

def _ref_reduce_window(x, fn, init, window, strides, padding, base_dil, win_dil):
  shape = [(d - 1) * b + 1 for d, b in zip(x.shape, base_dil)]
  y = np.full(shape, init, x.dtype)
  y[tuple(slice(None, None, b) for b in base_dil)] = x
  y = np.pad(y, padding, constant_values=init)
  span = [(w - 1) * d + 1 for w, d in zip(window, win_dil)]
  out_shape = [(s - sp) // st + 1 for s, sp, st in zip(y.shape, span, strides)]
  out = np.empty(out_shape, x.dtype)
  for pos in np.ndindex(*out_shape):
    win = y[tuple(slice(p * s, p * s + sp, d) for p, s, sp, d in zip(pos, strides, span,
                                                                       win_dil))]
    out[pos] = fn(win, initial=init) if fn is not np.sum else np.sum(win) + init
  return out


RW_CASES = [
    ((5, 6), (2, 2), (2, 2), ((0, 0), (0, 0)), (1, 1), (1, 1)),
    ((5, 6), (3, 2), (1, 2), ((1, 1), (0, 1)), (1, 1), (1, 1)),
    ((4, 5), (2, 2), (1, 1), ((1, 0), (0, 2)), (2, 1), (1, 2)),
    ((2, 3, 7), (1, 2, 3), (1, 1, 2), ((0, 0), (0, 1), (1, 1)), (1, 1, 1), (1, 1, 2)),
]


@pytest.mark.parametrize("case", range(len(RW_CASES)))
@pytest.mark.parametrize("kind", ["sum", "max", "min"])
def test_reduce_window_matches_loops_and_differentiates(case, kind):
  shape, window, strides, padding, bd, wd = RW_CASES[case]
  x = _x(*shape)
  comp, fn, init = {"sum": (lax.add, np.sum, 0.0), "max": (lax.max, np.max, -np.inf),
                    "min": (lax.min, np.min, np.inf)}[kind]
  f = lambda v: lax.reduce_window(v, init, comp, window, strides, padding, bd, wd)
  want = _ref_reduce_window(x, fn, init, window, strides, padding, bd, wd)
  np.testing.assert_allclose(f(x), want, rtol=1e-12)
  if kind == "sum" or np.all(np.isfinite(want)):
    check_grads(f, (x,), order=2)
  np.testing.assert_allclose(jaxlite.vmap(f, 1)(np.stack([x, 2 * x], 1)),
                             np.stack([want, f(2 * x)]), rtol=1e-12)


def test_reduce_window_integer_and_init_value():
  x = RNG.integers(-9, 9, (4, 6)).astype(np.int32)
  # init values have the operand's dtype: Python ints are int64 under x64 (as JAX, this
  # module's tests run with x64), and reduce_window rejects them for int32 operands
  out = lax.reduce_window(x, np.int32(np.iinfo(np.int32).min), lax.max, (2, 3), (2, 3),
                          "VALID")
  np.testing.assert_array_equal(out, x.reshape(2, 2, 2, 3).max(axis=(1, 3)))
  # an init value that is not the identity stages the general reduce_window
  clipped = lax.reduce_window(x, np.int32(5), lax.max, (2, 3), (2, 3), "VALID")
  np.testing.assert_array_equal(clipped, np.maximum(x.reshape(2, 2, 2, 3).max(axis=(1, 3)), 5))
  assert lax.reduce_window(x, 0, lax.add, (2, 3), (2, 3), "VALID").dtype == np.int32
