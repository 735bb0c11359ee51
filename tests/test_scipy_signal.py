"""jaxlite.scipy.signal against scipy.signal, with values recorded from JAX 0.10.2 where
JAX differs from SciPy; eagerly, under jit on both tiers, under grad and vmap."""
import inspect
import warnings

import numpy as np
import pytest
import scipy.signal as ss

import jaxlite
import jaxlite.numpy as jnp
import jaxlite.scipy.signal as jss
from jaxlite._src import tiers
from jaxlite._src.test_util import check_grads

RNG = np.random.RandomState(0)

# parameter names and defaults, from inspect.signature under JAX 0.10.2
SIGNATURES = {
    "convolve": [("in1", None), ("in2", None), ("mode", "full"), ("method", "auto"),
                 ("precision", None)],
    "correlate": [("in1", None), ("in2", None), ("mode", "full"), ("method", "auto"),
                  ("precision", None)],
    "convolve2d": [("in1", None), ("in2", None), ("mode", "full"), ("boundary", "fill"),
                   ("fillvalue", 0), ("precision", None)],
    "correlate2d": [("in1", None), ("in2", None), ("mode", "full"), ("boundary", "fill"),
                    ("fillvalue", 0), ("precision", None)],
    "fftconvolve": [("in1", None), ("in2", None), ("mode", "full"), ("axes", None)],
    "detrend": [("data", None), ("axis", -1), ("type", "linear"), ("bp", 0),
                ("overwrite_data", None)],
    "csd": [("x", None), ("y", None), ("fs", 1.0), ("window", "hann"), ("nperseg", None),
            ("noverlap", None), ("nfft", None), ("detrend", "constant"),
            ("return_onesided", True), ("scaling", "density"), ("axis", -1),
            ("average", "mean")],
    "welch": [("x", None), ("fs", 1.0), ("window", "hann"), ("nperseg", None),
              ("noverlap", None), ("nfft", None), ("detrend", "constant"),
              ("return_onesided", True), ("scaling", "density"), ("axis", -1),
              ("average", "mean")],
    "stft": [("x", None), ("fs", 1.0), ("window", "hann"), ("nperseg", 256),
             ("noverlap", None), ("nfft", None), ("detrend", False),
             ("return_onesided", True), ("boundary", "zeros"), ("padded", True),
             ("axis", -1)],
    "istft": [("Zxx", None), ("fs", 1.0), ("window", "hann"), ("nperseg", None),
              ("noverlap", None), ("nfft", None), ("input_onesided", True),
              ("boundary", True), ("time_axis", -1), ("freq_axis", -2)],
}


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_signature_matches_jax(name):
  params = inspect.signature(getattr(jss, name)).parameters.values()
  got = [(p.name, None if p.default is inspect.Parameter.empty else p.default)
         for p in params]
  assert got == SIGNATURES[name]


def _tol(dtype):
  return dict(rtol=2e-5, atol=2e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)


@pytest.fixture(params=[np.float32, np.float64], ids=["f32", "f64"])
def dtype(request, x64):
  x64(request.param == np.float64)
  return request.param


SHAPES = [((9,), (4,)), ((3,), (7,)), ((5, 6), (3, 2)), ((2, 3), (4, 5)), ((4, 3, 5), (2, 3, 2))]


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_convolutions_match_scipy(shapes, mode, dtype):
  a = RNG.randn(*shapes[0]).astype(dtype)
  b = RNG.randn(*shapes[1]).astype(dtype)
  cases = [(jss.convolve(a, b, mode), ss.convolve(a, b, mode)),
           (jss.convolve(a, b, mode, method="fft"), ss.convolve(a, b, mode)),
           (jss.fftconvolve(a, b, mode), ss.fftconvolve(a, b, mode)),
           (jss.correlate(a, b, mode), ss.correlate(a, b, mode)),
           (jss.correlate(a, b, mode, method="fft"), ss.correlate(a, b, mode))]
  if a.ndim == 2:
    cases += [(jss.convolve2d(a, b, mode), ss.convolve2d(a, b, mode))]
    if mode != "valid" or all(s1 >= s2 for s1, s2 in zip(*shapes)):
      cases += [(jss.correlate2d(a, b, mode), ss.correlate2d(a, b, mode))]
  tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else _tol(dtype)
  for got, want in cases:
    assert got.dtype == dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, **tol)


def test_complex_and_integer_operands():
  a = np.array([1 + 1j, 2, 3j], np.complex64)
  b = np.array([1, 1j], np.complex64)
  for mode in ("full", "same", "valid"):
    for got, want in [(jss.convolve(a, b, mode), ss.convolve(a, b, mode)),
                      (jss.correlate(a, b, mode), ss.correlate(a, b, mode)),
                      (jss.fftconvolve(a, b, mode), ss.fftconvolve(a, b, mode))]:
      assert got.dtype == np.complex64
      np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
  out = jss.convolve(jnp.arange(3), jnp.arange(2))
  assert out.dtype == np.float32 and out.tolist() == [0.0, 0.0, 1.0, 2.0]
  assert jss.fftconvolve(jnp.arange(3), jnp.arange(2)).dtype == np.float32
  assert jss.convolve(jnp.array([True, False]), jnp.array([True])).tolist() == [1.0, 0.0]
  assert float(jss.convolve(jnp.float32(2), jnp.float32(3))) == 6.0
  assert float(jss.fftconvolve(jnp.float32(2), jnp.float32(3))) == 6.0


def test_correlate2d_larger_second_operand_as_jax():
  # recorded from JAX 0.10.2: with the larger in2, 'full' is the conjugate of SciPy's and
  # 'valid' correlates in2 with in1
  a = jnp.arange(4.0).reshape(2, 2)
  b = jnp.arange(9.0).reshape(3, 3) + 1j
  full = [[0 - 0j, 8 - 1j, 7 - 1j, 6 - 1j], [16 - 2j, 43 - 6j, 37 - 6j, 21 - 4j],
          [10 - 2j, 25 - 6j, 19 - 6j, 9 - 4j], [4 - 2j, 8 - 5j, 3 - 5j, 0 - 3j]]
  np.testing.assert_allclose(jss.correlate2d(a, b), full)
  np.testing.assert_allclose(jss.correlate2d(a, b, mode="valid"),
                             [[43 + 6j, 37 + 6j], [25 + 6j, 19 + 6j]])
  np.testing.assert_allclose(jss.correlate2d(a, b, mode="same"),
                             [[43 - 6j, 37 - 6j], [25 - 6j, 19 - 6j]])
  np.testing.assert_allclose(jss.correlate2d(b, a, mode="same"),
                             ss.correlate2d(np.asarray(b), np.asarray(a), mode="same"))


def test_fftconvolve_axes_matches_scipy(dtype):
  a, b = RNG.randn(3, 7, 4).astype(dtype), RNG.randn(3, 2, 4).astype(dtype)
  # the second operand of each case: the axes left out must match in1's
  for axes, b_axes in ((1, b), ([1], b), ((0, 1), b[:1]), (-2, b), (np.int64(1), b)):
    for mode in ("full", "same", "valid"):
      want = ss.fftconvolve(a, b_axes, mode, axes=axes)
      got = jss.fftconvolve(a, b_axes, mode, axes=axes)
      assert got.dtype == dtype
      np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


ERRORS = [
    (lambda: jss.convolve(jnp.ones(3), jnp.ones(2), mode="x"), ValueError,
     r"mode must be one of \['full', 'same', 'valid'\]"),
    (lambda: jss.convolve(jnp.ones(3), jnp.ones(2), method="x"), ValueError,
     r"Got method='x'; expected 'auto', 'fft', or 'direct'."),
    (lambda: jss.convolve(jnp.ones(3), jnp.ones((2, 2))), ValueError,
     "in1 and in2 must have the same number of dimensions"),
    (lambda: jss.convolve(jnp.ones(5), jnp.ones(0)), ValueError,
     r"zero-size arrays not supported in convolutions, got shapes \(5,\) and \(0,\)."),
    (lambda: jss.convolve(jnp.ones((3, 2)), jnp.ones((2, 3))), ValueError,
     "One input must be smaller than the other in every dimension."),
    (lambda: jss.convolve([1, 2], [1]), TypeError, "convolve requires ndarray"),
    (lambda: jss.correlate([1, 2], [1]), TypeError, "correlate requires ndarray"),
    (lambda: jss.fftconvolve(jnp.ones(3), jnp.ones(2), mode="x"), ValueError,
     r"mode must be one of \['same', 'full', 'valid'\]"),
    (lambda: jss.fftconvolve(jnp.ones(3), jnp.ones((2, 2))), ValueError,
     "in1 and in2 should have the same dimensionality"),
    (lambda: jss.fftconvolve([1, 2], [1]), TypeError, "fftconvolve requires ndarray"),
    (lambda: jss.fftconvolve(jnp.ones((3, 2)), jnp.ones((2, 3)), "valid"), ValueError,
     "For 'valid' mode, One input must be at least as large as the other"),
    (lambda: jss.fftconvolve(jnp.ones((3, 4)), jnp.ones((2, 2)), axes=1), ValueError,
     r"mapped axes must have same shape; got in1.shape=\(3, 4\) in2.shape=\(2, 2\)"),
    (lambda: jss.fftconvolve(jnp.ones(5), jnp.ones(0), "same"), TypeError, "zero-length"),
    (lambda: jss.convolve2d(jnp.ones((3, 3)), jnp.ones((2, 2)), boundary="wrap"),
     NotImplementedError, "convolve2d\\(\\) only supports boundary='fill', fillvalue=0"),
    (lambda: jss.correlate2d(jnp.ones((3, 3)), jnp.ones((2, 2)), fillvalue=1),
     NotImplementedError, "correlate2d\\(\\) only supports boundary='fill', fillvalue=0"),
    (lambda: jss.convolve2d(jnp.ones(3), jnp.ones(2)), ValueError,
     r"convolve2d\(\) only supports 2-dimensional inputs."),
    (lambda: jss.correlate2d(jnp.ones((3, 3)), jnp.ones((2, 2)), mode="x"), ValueError,
     "mode must be one of"),
    (lambda: jss.detrend(jnp.ones(5), type="x"), ValueError,
     "Trend type must be 'linear' or 'constant'."),
    (lambda: jss.detrend(jnp.ones(5), overwrite_data=True), NotImplementedError,
     "overwrite_data argument not implemented."),
    (lambda: jss.detrend(jnp.ones(5), bp=7), ValueError,
     "Breakpoints must be non-negative and less than length of data"),
    (lambda: jss.stft(jnp.ones(10), nperseg=4, boundary="x"), ValueError,
     r"Unknown boundary option 'x', must be one of: \['even', 'odd', 'constant', 'zeros', "
     r"None\]"),
    (lambda: jss.stft(jnp.ones(10), nperseg=0), ValueError,
     "nperseg must be a positive integer"),
    (lambda: jss.stft(jnp.ones(10), nperseg=4, noverlap=4), ValueError,
     "noverlap must be less than nperseg."),
    (lambda: jss.stft(jnp.ones(10), nperseg=4, nfft=3), ValueError,
     "nfft must be greater than or equal to nperseg."),
    (lambda: jss.welch(jnp.ones(10), nperseg=4, scaling="x"), ValueError, "Unknown scaling: x"),
    (lambda: jss.welch(jnp.ones(10), nperseg=4, average="x"), ValueError,
     'average must be "median" or "mean", got x'),
    (lambda: jss.welch(jnp.ones(10), nperseg=4, detrend=3), ValueError,
     "Unsupported detrend type: 3"),
    (lambda: jss.welch(jnp.ones(10), window=jnp.ones((2, 2))), ValueError,
     "window must be 1-D"),
    (lambda: jss.welch(jnp.ones(10), window=jnp.ones(12)), ValueError,
     "window is longer than input signal"),
    (lambda: jss.welch(jnp.ones(10), window=jnp.ones(4), nperseg=5), ValueError,
     "value specified for nperseg is different from length of window"),
    (lambda: jss.csd(jnp.zeros((2, 4)), jnp.zeros(4)), ValueError,
     r"two-arguments must have the same rank \(2 vs 1\)."),
    (lambda: jss.csd(jnp.zeros((2, 4)), jnp.zeros((3, 4))), ValueError,
     "x and y cannot be broadcast together."),
    (lambda: jss.istft(jnp.ones(4)), ValueError, "Input stft must be at least 2d!"),
    (lambda: jss.istft(jnp.ones((3, 4)), time_axis=0, freq_axis=-2), ValueError,
     "Must specify differing time and frequency axes!"),
    (lambda: jss.istft(jnp.ones((3, 4)), nfft=2), ValueError,
     r"FFT length \(2\) must be longer than nperseg \(4\)."),
    (lambda: jss.istft(jnp.ones((3, 4)), nperseg=-1), ValueError,
     "nperseg must be a positive integer"),
    (lambda: jss.istft(jnp.ones((3, 4)), noverlap=4), ValueError,
     "noverlap must be less than nperseg."),
    (lambda: jss.istft(jnp.ones((3, 4)), window=jnp.ones(3)), ValueError,
     "window must have length of 4"),
    (lambda: jss.istft(jnp.ones((3, 4)), window=jnp.ones((2, 2))), ValueError,
     "window must be 1-D"),
    (lambda: jss.istft([[1.0, 2.0], [3.0, 4.0]]), TypeError, "istft requires ndarray"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_bad_inputs_raise_jax_errors(case):
  f, cls, message = ERRORS[case]
  with pytest.raises(cls, match=message):
    f()


def _tiers(f):
  """``f`` under jit on tier 0 and, when a plugin is installed, on XLA."""
  runs = [jaxlite.jit(f, backend="numpy")]
  if tiers.xla_available():
    runs.append(jaxlite.jit(f, backend="xla"))
  return runs


JITTED = {
    "convolve": (lambda a, b: jss.convolve(a, b, "same"), (9,), (4,)),
    "convolve_fft": (lambda a, b: jss.convolve(a, b, "valid", method="fft"), (9,), (4,)),
    "correlate2d": (lambda a, b: jss.correlate2d(a, b), (5, 6), (3, 2)),
    "fftconvolve": (lambda a, b: jss.fftconvolve(a, b, "same", axes=0), (5, 3), (2, 3)),
    "detrend": (lambda a, b: jss.detrend(a + b, bp=[10, 20]), (32,), (32,)),
    "stft": (lambda a, b: jss.stft(a * b, nperseg=8)[2], (32,), (32,)),
    "csd": (lambda a, b: jss.csd(a, b, nperseg=8, average="median")[1], (32,), (32,)),
    "istft": (lambda a, b: jss.istft(jss.stft(a - b, nperseg=8)[2])[1], (32,), (32,)),
}


@pytest.mark.parametrize("name", sorted(JITTED))
def test_jit_on_both_tiers_matches_eager(name):
  f, sa, sb = JITTED[name]
  a, b = RNG.randn(*sa).astype(np.float32), RNG.randn(*sb).astype(np.float32)
  eager = np.asarray(f(a, b))
  for jitted in _tiers(f):
    np.testing.assert_allclose(np.asarray(jitted(a, b)), eager, rtol=1e-4, atol=1e-5)


def test_gradients(x64):
  x64(True)
  a, b = RNG.randn(7), RNG.randn(3)
  check_grads(lambda a, b: jss.convolve(a, b, "same"), (a, b), order=2)
  check_grads(lambda a, b: jss.correlate(a, b, method="fft"), (a, b), order=1)
  check_grads(lambda a, b: jss.fftconvolve(a, b, "valid"), (a, b), order=1)
  check_grads(lambda a, b: jss.correlate2d(a, b, "same"),
              (RNG.randn(4, 5), RNG.randn(2, 3)), order=1)
  check_grads(lambda x: jss.detrend(x, bp=3), (RNG.randn(9),), order=1)
  x = RNG.randn(40)
  check_grads(lambda x: jss.stft(x, nperseg=8)[2], (x,), order=1)
  check_grads(lambda x: jss.welch(x, nperseg=8)[1], (x,), order=1)
  check_grads(lambda x: jss.istft(jss.stft(x, nperseg=8)[2])[1], (x,), order=1)


def test_vmap_matches_loop():
  a, b = RNG.randn(3, 8).astype(np.float32), RNG.randn(3, 3).astype(np.float32)
  for f in (jss.convolve, jss.correlate, jss.fftconvolve,
            lambda x, y: jss.stft(x * 2, nperseg=4)[2],
            lambda x, y: jss.csd(x, jnp.pad(y, (0, 5)), nperseg=4)[1],
            lambda x, y: jss.detrend(x, bp=3)):
    np.testing.assert_allclose(jaxlite.vmap(f)(a, b), np.stack([f(x, y) for x, y in zip(a, b)]),
                               rtol=1e-5, atol=1e-5)


def test_detrend_matches_scipy(dtype):
  x = RNG.randn(4, 30).astype(dtype)
  for kw in ({}, {"type": "constant"}, {"bp": [5, 17]}, {"axis": 0}, {"axis": 0, "bp": 2},
             {"bp": 30}):
    got = jss.detrend(x, **kw)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, ss.detrend(x, **kw), **_tol(dtype) if dtype == np.float64
                               else dict(rtol=1e-4, atol=1e-4))
  # recorded from JAX 0.10.2: integers are promoted to an inexact type
  got = jss.detrend(jnp.array([1, 2, 4, 3]))
  assert got.dtype == (np.float32 if dtype == np.float32 else np.float64)
  np.testing.assert_allclose(got, [-0.3, -0.1, 1.1, -0.7], atol=1e-5)


def _spectra(lib, x, y):
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")   # complex inputs switch to two-sided spectra
    return [
        lib.stft(x, nperseg=16),
        lib.stft(x, nperseg=15, noverlap=5, boundary="odd", nfft=20, detrend="linear"),
        lib.stft(x, nperseg=16, boundary="even", padded=False, window="hamming"),
        lib.stft(x, nperseg=16, boundary="constant", return_onesided=False, fs=3.0),
        lib.stft(x.T, nperseg=16, axis=0, boundary=None, window=np.hanning(16)),
        lib.welch(x, nperseg=16),
        lib.welch(x[0]),
        lib.welch(x, nperseg=16, average="median", scaling="spectrum", nfft=33),
        lib.welch(x + 1j * y, nperseg=16),
        lib.csd(x, y, nperseg=16, fs=10.0),
        lib.csd(x, y, nperseg=16, average="median", window=("tukey", 0.3)),
        lib.csd(x, y[:, :40], nperseg=16, noverlap=4),
    ]


def test_spectral_functions_match_scipy(dtype):
  x, y = RNG.randn(2, 50).astype(dtype), RNG.randn(2, 50).astype(dtype)
  cdtype = np.complex64 if dtype == np.float32 else np.complex128
  tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else _tol(dtype)
  for got, want in zip(_spectra(jss, x, y), _spectra(ss, x, y)):
    for g, w in zip(got, want):
      assert g.shape == w.shape
      assert g.dtype in (dtype, cdtype)
      np.testing.assert_allclose(g, w, **tol)


def test_istft_inverts_stft_as_scipy(dtype):
  x = RNG.randn(2, 50).astype(dtype)
  tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else _tol(dtype)
  for kw in ({"nperseg": 16}, {"nperseg": 15, "noverlap": 10}, {"nperseg": 8, "nfft": 12}):
    _, _, z = ss.stft(x, **kw)
    t, got = jss.istft(z.astype(np.complex64 if dtype == np.float32 else np.complex128), **kw)
    tw, want = ss.istft(z, **kw)
    np.testing.assert_allclose(got, want, **tol)
    np.testing.assert_allclose(t, tw)
    np.testing.assert_allclose(got[:, :50], x, **tol)
  _, _, z = ss.stft(x[0], nperseg=16, return_onesided=False, window="hamming")
  got = jss.istft(z, nperseg=16, input_onesided=False, window="hamming")
  want = ss.istft(z, nperseg=16, input_onesided=False, window="hamming")
  for g, w in zip(got, want):
    np.testing.assert_allclose(g, w, **tol)
  z = np.moveaxis(ss.stft(x, nperseg=16)[2], 0, -1)   # (freq, time, batch)
  got = jss.istft(z, nperseg=16, freq_axis=0, time_axis=1)[1]
  np.testing.assert_allclose(got, ss.istft(z, nperseg=16, freq_axis=0, time_axis=1)[1],
                             **tol)


def test_istft_example_values_from_jax():
  # recorded from JAX 0.10.2 (istft's docstring example)
  x = jnp.array([1.0, 2.0, 3.0, 2.0, 1.0, 0.0, 1.0, 2.0])
  f, t, z = jss.stft(x, nperseg=4)
  np.testing.assert_allclose(z, [[1 + 0j, 2.5, 1, 1, 0.5],
                                 [-0.5 + 0.5j, -1.5, -0.5 - 0.5j, -0.5 + 0.5j, -0.5j],
                                 [0j, 0.5, 0, 0, -0.5]], atol=1e-6)
  t, xr = jss.istft(z)
  np.testing.assert_allclose(xr, x, atol=1e-6)
  np.testing.assert_allclose(t, np.arange(8.0))
