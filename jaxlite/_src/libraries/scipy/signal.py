"""``jaxlite.scipy.signal`` (``jax.scipy.signal``): convolution, detrending and spectral
analysis, as JAX 0.10.2 has them.

Every N-dimensional convolution and correlation goes through one direct kernel
(``_convolve_nd``, a ``conv_general_dilated`` of the flipped smaller operand) or one FFT
kernel (``_fftconvolve``); correlations are convolutions with the flipped conjugate.
``stft``, ``csd`` and ``welch`` share ``_spectral_helper`` (segments, detrending, window,
FFT, scaling), as SciPy's own implementation does; ``istft`` inverts it by overlap-add.
Each is built from jaxlite.numpy and lax operations, so it jits, differentiates and
vectorizes.
"""
from __future__ import annotations

import operator
import warnings

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.core import core
from jaxlite._src.lax.convolution import conv_general_dilated
from jaxlite._src.libraries.numpy import namespace as jnp
from jaxlite._src.libraries.numpy.util import (canonicalize_axis, check_arraylike,
                                               promote_dtypes_inexact)

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "csd", "detrend",
           "fftconvolve", "istft", "stft", "welch"]

_MODES = ("full", "same", "valid")


# ----------------------------------------------------------------------------- convolution

def _check_arrays(name, *arrays):
  check_arraylike(name, *arrays)
  return [jnp.asarray(a) for a in arrays]


def _convolve_nd(in1, in2, mode, precision):
  """The direct N-dimensional convolution: ``conv_general_dilated`` of the larger operand
  with the flipped smaller one, padded for ``mode`` (``same`` centres on ``in1``)."""
  if mode not in _MODES:
    raise ValueError("mode must be one of ['full', 'same', 'valid']")
  if in1.ndim != in2.ndim:
    raise ValueError("in1 and in2 must have the same number of dimensions")
  if in1.size == 0 or in2.size == 0:
    raise ValueError("zero-size arrays not supported in convolutions, got shapes "
                     f"{in1.shape} and {in2.shape}.")
  in1, in2 = promote_dtypes_inexact(in1, in2)
  no_swap = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape))
  swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
  if not (no_swap or swap):
    raise ValueError("One input must be smaller than the other in every dimension.")
  shape_o = in2.shape
  if swap:
    in1, in2 = in2, in1
  shape = in2.shape
  if mode == "valid":
    padding = [(0, 0)] * len(shape)
  elif mode == "same":
    padding = [(s - 1 - (so - 1) // 2, s - so + (so - 1) // 2)
               for s, so in zip(shape, shape_o)]
  else:
    padding = [(s - 1, s - 1) for s in shape]
  out = conv_general_dilated(in1[None, None], jnp.flip(in2)[None, None], (1,) * len(shape),
                             padding, precision=precision)
  return out[0, 0]


def _fftconvolve(in1, in2, mode, axes):
  """The convolution over ``axes`` by a product of FFTs; the other axes are matched
  elementwise (``in1`` and ``in2`` agree there)."""
  full_shape = [in1.shape[a] + in2.shape[a] - 1 for a in axes]
  if mode == "valid":
    s1, s2 = [in1.shape[a] for a in axes], [in2.shape[a] for a in axes]
    no_swap = all(a >= b for a, b in zip(s1, s2))
    swap = all(a <= b for a, b in zip(s1, s2))
    if not (no_swap or swap):
      raise ValueError("For 'valid' mode, One input must be at least as large as the other "
                       "in every dimension.")
    if swap:
      in1, in2 = in2, in1
  if all(in1.shape[a] == 1 or in2.shape[a] == 1 for a in axes):
    conv = in1 * in2   # one of each pair of lengths is 1: the product is the convolution
  elif jnp.iscomplexobj(in1):
    conv = jnp.fft.ifftn(jnp.fft.fftn(in1, full_shape, axes) * jnp.fft.fftn(in2, full_shape, axes),
                         full_shape, axes)
  else:
    conv = jnp.fft.irfftn(jnp.fft.rfftn(in1, full_shape, axes)
                          * jnp.fft.rfftn(in2, full_shape, axes), full_shape, axes)
  if mode == "full":
    out_shape = full_shape
  elif mode == "same":
    out_shape = [in1.shape[a] for a in axes]
  else:
    out_shape = [in1.shape[a] - in2.shape[a] + 1 for a in axes]
  if any(out > full for out, full in zip(out_shape, full_shape)):
    # only a zero-length operand makes the full convolution shorter than the requested part
    raise TypeError(f"fftconvolve: mode={mode!r} needs {tuple(out_shape)} elements of a full "
                    f"convolution of shape {tuple(full_shape)}; an operand has a zero-length "
                    "axis: pass non-empty operands or mode='full'.")
  index = [slice(None)] * conv.ndim
  for a, full, out in zip(axes, full_shape, out_shape):
    start = (full - out) // 2
    index[a] = slice(start, start + out)
  return conv[tuple(index)]


def fftconvolve(in1, in2, mode="full", axes=None):
  """Convolve two N-dimensional arrays with the fast Fourier transform
  (``scipy.signal.fftconvolve``).

  Parameters
  ----------
  in1, in2 : array_like
    The operands, of equal rank.
  mode : {'full', 'same', 'valid'}
    The whole convolution; its centre, shaped as ``in1``; or the part where the operands
    overlap completely.
  axes : int or sequence of int, optional
    The axes to convolve over (default: all). On the other axes the operands must agree
    and are matched elementwise.

  Returns
  -------
  Array
    The convolution, of the operands' inexact dtype.
  """
  check_arraylike("fftconvolve", in1, in2)
  in1, in2 = promote_dtypes_inexact(in1, in2)
  if in1.ndim != in2.ndim:
    raise ValueError("in1 and in2 should have the same dimensionality")
  if mode not in _MODES:
    raise ValueError("mode must be one of ['same', 'full', 'valid']")
  if axes is None:
    axes = tuple(range(in1.ndim))
  else:
    axes = tuple(operator.index(a) for a in (np.ravel(axes) if np.ndim(axes) else [axes]))
    axes = tuple(canonicalize_axis(a, in1.ndim) for a in axes)
    mapped = set(range(in1.ndim)) - set(axes)
    if any(in1.shape[i] != in2.shape[i] for i in mapped):
      raise ValueError(f"mapped axes must have same shape; got in1.shape={in1.shape} "
                       f"in2.shape={in2.shape} axes={axes}")
  return _fftconvolve(in1, in2, mode, axes)


def convolve(in1, in2, mode="full", method="auto", precision=None):
  """Convolution of two N-dimensional arrays (``scipy.signal.convolve``).

  Parameters
  ----------
  in1, in2 : array_like
    The operands, of equal rank; one must be at least as large as the other in every
    dimension.
  mode : {'full', 'same', 'valid'}
    The whole convolution; its centre, shaped as ``in1``; or the part where the operands
    overlap completely.
  method : {'auto', 'direct', 'fft'}
    ``'auto'`` and ``'direct'`` lower to ``lax.conv_general_dilated``; ``'fft'`` uses
    ``fftconvolve``.
  precision : lax.Precision, optional
    The precision of the direct convolution.

  Returns
  -------
  Array
    The convolution, of the operands' inexact dtype.
  """
  in1, in2 = _check_arrays("convolve", in1, in2)
  if method == "fft":
    return fftconvolve(in1, in2, mode=mode)
  if method in ("direct", "auto"):
    return _convolve_nd(in1, in2, mode, precision)
  raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")


def correlate(in1, in2, mode="full", method="auto", precision=None):
  """Cross-correlation of two N-dimensional arrays (``scipy.signal.correlate``):
  ``z[k] = sum_n in1[n + k] * conj(in2[n])``, the convolution of ``in1`` with the
  flipped conjugate of ``in2``.

  Parameters
  ----------
  in1, in2 : array_like
    The operands, of equal rank.
  mode : {'full', 'same', 'valid'}
    As in ``convolve``.
  method : {'auto', 'direct', 'fft'}
    As in ``convolve``.
  precision : lax.Precision, optional
    The precision of the direct method.

  Returns
  -------
  Array
    The cross-correlation.
  """
  in1, in2 = _check_arrays("correlate", in1, in2)
  return convolve(in1, jnp.flip(jnp.conj(in2)), mode, method=method, precision=precision)


def _check_2d(name, in1, in2, boundary, fillvalue):
  if boundary != "fill" or fillvalue != 0:
    raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
  in1, in2 = _check_arrays(name, in1, in2)
  if in1.ndim != 2 or in2.ndim != 2:
    raise ValueError(f"{name}() only supports 2-dimensional inputs.")
  return in1, in2


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
  """Convolution of two 2-dimensional arrays (``scipy.signal.convolve2d``).

  Parameters
  ----------
  in1, in2 : array_like
    Two-dimensional operands.
  mode : {'full', 'same', 'valid'}
    As in ``convolve``.
  boundary : str
    Only ``'fill'`` is supported, as in JAX.
  fillvalue : scalar
    Only ``0`` is supported, as in JAX.
  precision : lax.Precision, optional
    The precision of the convolution.

  Returns
  -------
  Array
    The convolution.
  """
  in1, in2 = _check_2d("convolve2d", in1, in2, boundary, fillvalue)
  return _convolve_nd(in1, in2, mode, precision)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
  """Cross-correlation of two 2-dimensional arrays (``scipy.signal.correlate2d``).

  As in JAX 0.10.2, when ``in2`` is the larger operand the ``'full'`` result is the
  conjugate of ``correlate``'s and ``'valid'`` the correlation of ``in2`` with ``in1``
  (SciPy's ``correlate2d`` swaps the operands so).

  Parameters
  ----------
  in1, in2 : array_like
    Two-dimensional operands.
  mode : {'full', 'same', 'valid'}
    As in ``convolve``.
  boundary : str
    Only ``'fill'`` is supported, as in JAX.
  fillvalue : scalar
    Only ``0`` is supported, as in JAX.
  precision : lax.Precision, optional
    The precision of the convolution.

  Returns
  -------
  Array
    The cross-correlation.
  """
  in1, in2 = _check_2d("correlate2d", in1, in2, boundary, fillvalue)
  swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
  same_shape = in1.shape == in2.shape
  if swap and ((mode == "valid" and not same_shape) or mode not in ("same", "valid")):
    # the larger in2 correlated with in1: in the full mode conjugated back
    out = _convolve_nd(jnp.flip(in2), jnp.conj(in1), mode, precision)
    return out if mode == "valid" else jnp.conj(out)
  return jnp.flip(_convolve_nd(jnp.flip(in1), jnp.conj(in2), mode, precision))


# ----------------------------------------------------------------------------- detrend

def _linear_residual_matrix(n):
  """``I - A pinv(A)`` for ``A = [1, t]`` on ``n`` points: the map from samples to their
  residual after the least-squares line (a constant, so built once in NumPy)."""
  a = np.stack([np.ones(n), np.arange(1, n + 1) / n], axis=1)
  return np.eye(n) - a @ np.linalg.pinv(a)


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):
  """Remove a linear or piecewise linear trend, or the mean, along an axis
  (``scipy.signal.detrend``).

  Parameters
  ----------
  data : array_like
    The data.
  axis : int
    The axis to detrend along (default: the last).
  type : {'linear', 'constant'}
    A least-squares line per piece between breakpoints, or the mean.
  bp : int or sequence of int
    Breakpoints (static) between which separate lines are fit (``'linear'`` only).
  overwrite_data : None
    Not supported, as in JAX.

  Returns
  -------
  Array
    ``data`` less its trend, of an inexact dtype.
  """
  if overwrite_data is not None:
    raise NotImplementedError("overwrite_data argument not implemented.")
  if type not in ("constant", "linear"):
    raise ValueError("Trend type must be 'linear' or 'constant'.")
  data, = promote_dtypes_inexact(jnp.asarray(data))
  if type == "constant":
    return data - data.mean(axis, keepdims=True)
  axis = canonicalize_axis(axis, data.ndim)
  n = data.shape[axis]
  bps = np.sort(np.unique(np.r_[0, bp, n]))
  if bps[0] < 0 or bps[-1] > n:
    raise ValueError("Breakpoints must be non-negative and less than length of data along "
                     "given axis.")
  moved = jnp.moveaxis(data, axis, 0)
  pieces = []
  for lo, hi in zip(bps[:-1], bps[1:]):
    resid = jnp.asarray(_linear_residual_matrix(int(hi - lo)), dtype=data.real.dtype)
    pieces.append(jnp.tensordot(resid, moved[lo:hi], axes=1, precision="highest"))
  return jnp.moveaxis(jnp.concatenate(pieces, axis=0), 0, axis)


# ----------------------------------------------------------------------------- spectra

def _hann(n, dtype):
  """The periodic Hann window, computed in the default float type as JAX does."""
  if n == 1:
    return jnp.ones(1, dtype)
  return (jnp.sin(jnp.linspace(0, np.pi, n, endpoint=False)) ** 2).astype(dtype)


def _named_window(window, n, dtype):
  """A window named by a string or a (name, parameters...) tuple; names other than Hann
  come from ``scipy.signal.get_window``, as in JAX."""
  if isinstance(window, str) and window == "hann":
    return _hann(n, dtype)
  from scipy.signal import get_window   # only for windows other than Hann
  return jnp.asarray(np.asarray(get_window(window, n)), dtype=dtype)


def _triage_segments(window, nperseg, input_length, dtype):
  """The window array and the segment length, from ``window`` and ``nperseg`` (SciPy's
  ``_triage_segments``): a named window has ``nperseg`` points (at most the input's
  length), an array window fixes it."""
  if isinstance(window, (str, tuple)):
    n = input_length if nperseg is None else int(nperseg)
    if n > input_length:
      warnings.warn(f"nperseg={n} is greater than input_length={input_length}, "
                    f"using nperseg={input_length}")
      n = input_length
    return _named_window(window, n, dtype), n
  win = jnp.asarray(window, dtype=dtype)
  n = win.size if nperseg is None else int(nperseg)
  if win.ndim != 1:
    raise ValueError("window must be 1-D")
  if input_length < win.size:
    raise ValueError("window is longer than input signal")
  if n != win.size:
    raise ValueError("value specified for nperseg is different from length of window")
  return win, n


def _odd_ext(x, n, axis=-1):
  """``x`` extended at both ends by ``n`` points, odd-symmetric about the end points."""
  if n < 1:
    return x
  if n > x.shape[axis] - 1:
    raise ValueError(f"The extension length n ({n}) is too big. It must not exceed "
                     f"x.shape[axis]-1, which is {x.shape[axis] - 1}.")
  x = jnp.moveaxis(x, axis, -1)
  left = 2 * x[..., :1] - jnp.flip(x[..., 1:n + 1], -1)
  right = 2 * x[..., -1:] - jnp.flip(x[..., -(n + 1):-1], -1)
  return jnp.moveaxis(jnp.concatenate([left, x, right], -1), -1, axis)


def _pad_ends(mode, **kwargs):
  def pad(x, n, axis=-1):
    widths = [(0, 0)] * x.ndim
    widths[axis] = (n, n)
    return jnp.pad(x, widths, mode, **kwargs)
  return pad


# how stft extends the signal at both ends, by boundary name
_BOUNDARY_FUNCS = {
    "even": _pad_ends("reflect"),
    "odd": _odd_ext,
    "constant": _pad_ends("edge"),
    "zeros": _pad_ends("constant", constant_values=0.0),
    None: lambda x, n, axis=-1: x,
}


def _static_int(value, what):
  return core.concrete_or_error(int, value, what)


def _segments(x, nperseg, noverlap):
  """The overlapping length-``nperseg`` segments of the last axis: ``(..., nseg, nperseg)``
  (their starts are static, so this is one gather)."""
  step = nperseg - noverlap
  starts = np.arange(0, x.shape[-1] - nperseg + 1, step)
  return jnp.take(x, jnp.asarray(starts[:, None] + np.arange(nperseg)[None, :]), axis=-1)


def _fft_helper(x, win, detrend_func, nperseg, noverlap, nfft, sides):
  """The windowed FFT of each detrended segment of the last axis."""
  if nperseg == 1 and noverlap == 0:
    segs = x[..., None]
  else:
    segs = _segments(x, nperseg, noverlap)
  segs = detrend_func(segs)
  if jnp.iscomplexobj(win) and not jnp.iscomplexobj(segs):
    segs = segs.astype(dtypes.to_complex_dtype(segs.dtype))
  segs = win.reshape((1,) * (segs.ndim - 1) + win.shape) * segs   # explicit, as in JAX
  if sides == "twosided":
    return jnp.fft.fft(segs, n=nfft)
  return jnp.fft.rfft(segs.real, n=nfft)


def _detrend_func(detrend_type, axis):
  if isinstance(detrend_type, str):
    return lambda d: detrend(d, axis=-1, type=detrend_type)
  if callable(detrend_type):
    # as in JAX, the callable sees the segments with the data's (non-negative) axis last
    return lambda d: jnp.moveaxis(detrend_type(jnp.moveaxis(d, axis, -1)), -1, axis)
  if not detrend_type:
    return lambda d: d
  raise ValueError(f"Unsupported detrend type: {detrend_type}")


def _spectral_helper(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
                     detrend_type="constant", return_onesided=True, scaling="density",
                     axis=-1, mode="psd", boundary=None, padded=False):
  """Frequencies, segment times and the scaled windowed FFTs (``mode='stft'``) or
  periodograms (``'psd'``, cross-spectral when ``y`` is given) of each segment, with the
  frequency axis at ``axis`` and the segments last (SciPy's ``_spectral_helper``)."""
  if mode not in ("psd", "stft"):
    raise ValueError(f"Unknown value for mode {mode}, must be one of: ('psd', 'stft')")
  if boundary not in _BOUNDARY_FUNCS:
    raise ValueError(f"Unknown boundary option '{boundary}', must be one of: "
                     f"{list(_BOUNDARY_FUNCS)}")
  axis = canonicalize_axis(_static_int(axis, "axis of windowed-FFT"), np.ndim(x))
  if y is None:
    check_arraylike("spectral_helper", x)
    x, = promote_dtypes_inexact(x)
    outershape = x.shape[:axis] + x.shape[axis + 1:]
  else:
    if mode != "psd":
      raise ValueError("two-argument mode is available only when mode=='psd'")
    check_arraylike("spectral_helper", x, y)
    x, y = promote_dtypes_inexact(x, y)
    if x.ndim != y.ndim:
      raise ValueError(f"two-arguments must have the same rank ({x.ndim} vs {y.ndim}).")
    try:
      outershape = jnp.broadcast_shapes(x.shape[:axis] + x.shape[axis + 1:],
                                        y.shape[:axis] + y.shape[axis + 1:])
    except ValueError as err:
      raise ValueError("x and y cannot be broadcast together.") from err
  result_dtype = dtypes.to_complex_dtype(x.dtype)
  freq_dtype = np.finfo(result_dtype).dtype
  if nperseg is not None:
    nperseg = _static_int(nperseg, "nperseg of windowed-FFT")
    if nperseg < 1:
      raise ValueError("nperseg must be a positive integer")
  win, nperseg = _triage_segments(window, nperseg, x.shape[axis], x.dtype)
  noverlap = (nperseg // 2 if noverlap is None
              else _static_int(noverlap, "noverlap of windowed-FFT"))
  nfft = nperseg if nfft is None else _static_int(nfft, "nfft of windowed-FFT")

  if x.size == 0 or (y is not None and y.size == 0):
    shape = x.shape if y is None else (
        outershape[:axis] + (min(x.shape[axis], y.shape[axis]),) + outershape[axis:])
    return (jnp.zeros(shape, freq_dtype), jnp.zeros(shape, freq_dtype),
            jnp.zeros(shape, result_dtype))

  x = jnp.moveaxis(x, axis, -1)
  if y is not None:
    y = jnp.moveaxis(y, axis, -1)
    length = max(x.shape[-1], y.shape[-1])   # the shorter one is zero-padded
    x, y = (jnp.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, length - a.shape[-1])]) for a in (x, y))
  if nfft < nperseg:
    raise ValueError("nfft must be greater than or equal to nperseg.")
  if noverlap >= nperseg:
    raise ValueError("noverlap must be less than nperseg.")
  nstep = nperseg - noverlap
  signals = [x] if y is None else [x, y]
  if boundary is not None:
    signals = [_BOUNDARY_FUNCS[boundary](s, nperseg // 2, axis=-1) for s in signals]
  if padded:
    # zero-pad to a whole number of segments
    nadd = (-(signals[0].shape[-1] - nperseg) % nstep) % nperseg
    signals = [jnp.pad(s, [(0, 0)] * (s.ndim - 1) + [(0, nadd)]) for s in signals]
  detrend_func = _detrend_func(detrend_type, axis)

  if scaling == "density":
    scale = 1.0 / (fs * (win * win).sum())
  elif scaling == "spectrum":
    scale = 1.0 / win.sum() ** 2
  else:
    raise ValueError(f"Unknown scaling: {scaling}")
  if mode == "stft":
    scale = jnp.sqrt(scale)
  scale = jnp.asarray(scale).astype(dtypes.to_complex_dtype(jnp.asarray(scale).dtype))

  sides = "onesided" if return_onesided else "twosided"
  if return_onesided and any(jnp.iscomplexobj(s) for s in signals):
    sides = "twosided"
    warnings.warn("Input data is complex, switching to return_onesided=False")
  freq_fn = jnp.fft.fftfreq if sides == "twosided" else jnp.fft.rfftfreq
  freqs = freq_fn(nfft, 1 / fs, dtype=freq_dtype)

  spectra = [_fft_helper(s, win, detrend_func, nperseg, noverlap, nfft, sides)
             for s in signals]
  if y is not None:
    result = jnp.conj(spectra[0]) * spectra[1]
  elif mode == "psd":
    result = jnp.conj(spectra[0]) * spectra[0]
  else:
    result = spectra[0]
  result = result * scale
  if sides == "onesided" and mode == "psd":
    # the one-sided spectrum folds in the negative frequencies: all but DC (and Nyquist)
    double = np.ones(result.shape[-1])
    double[1:None if nfft % 2 else -1] = 2
    result = result * jnp.asarray(double.reshape((1,) * (result.ndim - 1) + double.shape),
                                  dtype=freq_dtype)
  length = signals[0].shape[-1]
  time = jnp.arange(nperseg / 2, length - nperseg / 2 + 1, nstep, dtype=freq_dtype) / fs
  if boundary is not None:
    time = time - (nperseg / 2) / fs
  result = result.astype(result_dtype)
  if y is None and mode != "stft":
    result = result.real   # a periodogram is real
  return freqs, time, jnp.moveaxis(result, -1, axis)


def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False,
         return_onesided=True, boundary="zeros", padded=True, axis=-1):
  """The short-time Fourier transform (``scipy.signal.stft``).

  Parameters
  ----------
  x : array_like
    The time series.
  fs : float
    The sampling frequency.
  window : str, tuple or array_like
    The window: ``'hann'``, another name or (name, parameters...) tuple that
    ``scipy.signal.get_window`` knows, or the window's values.
  nperseg : int
    The segment length (at most the signal's length).
  noverlap : int, optional
    The overlap of consecutive segments (default ``nperseg // 2``).
  nfft : int, optional
    The FFT length, if zero-padding is wanted (default ``nperseg``).
  detrend : bool, str or callable
    How each segment is detrended: not (``False``), ``'constant'``, ``'linear'`` or by
    a function.
  return_onesided : bool
    A one-sided spectrum for real data.
  boundary : {'zeros', 'even', 'odd', 'constant', None}
    How the signal is extended by ``nperseg // 2`` points at both ends.
  padded : bool
    Zero-pad the signal's end to a whole number of segments.
  axis : int
    The time axis.

  Returns
  -------
  f, t, Zxx : Array
    The frequencies, the segment times and the STFT (frequencies at ``axis``, segment
    times last).
  """
  return _spectral_helper(x, None, fs, window, nperseg, noverlap, nfft, detrend,
                          return_onesided, scaling="spectrum", axis=axis, mode="stft",
                          boundary=boundary, padded=padded)


def _median_bias(n):
  """The bias of the median of ``n`` periodograms relative to their mean (Allen et al.,
  "FINDCHIRP", Phys. Rev. D 85, 2012, Appendix B)."""
  ii_2 = jnp.arange(2.0, n, 2)
  return 1 + jnp.sum(1.0 / (ii_2 + 1) - 1.0 / ii_2)


def _average(pxy, average):
  """The mean or (bias-corrected) median of the periodograms over the last axis."""
  if pxy.ndim < 2 or pxy.size == 0:
    return pxy
  if pxy.shape[-1] == 1:
    return pxy.reshape(pxy.shape[:-1])
  if average == "mean":
    return pxy.mean(axis=-1)
  if average != "median":
    raise ValueError(f'average must be "median" or "mean", got {average}')
  bias = _median_bias(pxy.shape[-1]).astype(pxy.dtype)
  if jnp.iscomplexobj(pxy):
    med = jnp.median(pxy.real, axis=-1) + 1j * jnp.median(pxy.imag, axis=-1)
  else:
    med = jnp.median(pxy, axis=-1)
  return med / bias


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
        detrend="constant", return_onesided=True, scaling="density", axis=-1,
        average="mean"):
  """The cross power spectral density by Welch's method (``scipy.signal.csd``).

  Parameters
  ----------
  x, y : array_like
    The two time series (``y=None``: the power spectral density of ``x``). The shorter is
    zero-padded to the other's length.
  fs, window, nperseg, noverlap, nfft, detrend, return_onesided, axis
    As in ``stft``; ``nperseg`` defaults to the window's length for an array window and,
    as in JAX 0.10.2, to the signal's length for a named one.
  scaling : {'density', 'spectrum'}
    Power spectral density (V**2/Hz) or power spectrum (V**2).
  average : {'mean', 'median'}
    How the segments' periodograms are averaged.

  Returns
  -------
  f, Pxy : Array
    The frequencies and the cross spectral density (complex when ``y`` is given).
  """
  freqs, _, pxy = _spectral_helper(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                                   return_onesided, scaling, axis, mode="psd")
  if y is not None:
    pxy = pxy + 0j   # complex even when x and y are real
  return freqs, _average(pxy, average)


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          detrend="constant", return_onesided=True, scaling="density", axis=-1,
          average="mean"):
  """The power spectral density by Welch's method (``scipy.signal.welch``): the average
  of the modified periodograms of overlapping segments.

  Parameters
  ----------
  x : array_like
    The time series.
  fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis, average
    As in ``csd``.

  Returns
  -------
  f, Pxx : Array
    The frequencies and the (real) power spectral density.
  """
  freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap,
                   nfft=nfft, detrend=detrend, return_onesided=return_onesided,
                   scaling=scaling, axis=axis, average=average)
  return freqs, pxx.real


def _overlap_and_add(frames, step):
  """Frames ``(..., nframes, length)`` laid ``step`` apart and summed where they overlap:
  ``(..., step * (nframes - 1) + length)``."""
  *batch, nframes, length = frames.shape
  chunks = -(-length // step)   # each frame as chunks of one step
  frames = jnp.pad(frames, [(0, 0)] * len(batch) + [(0, 0), (0, chunks * step - length)])
  frames = frames.reshape(*batch, nframes, chunks, step)
  total = 0
  for k in range(chunks):
    # chunk k of frame i lands in output block i + k
    widths = [(0, 0)] * len(batch) + [(k, chunks - 1 - k), (0, 0)]
    total = total + jnp.pad(frames[..., k, :], widths)
  out = total.reshape(*batch, (nframes + chunks - 1) * step)
  return out[..., :step * (nframes - 1) + length]


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          input_onesided=True, boundary=True, time_axis=-1, freq_axis=-2):
  """The inverse short-time Fourier transform (``scipy.signal.istft``), by windowed
  overlap-add.

  Parameters
  ----------
  Zxx : array_like
    The STFT, at least 2-D.
  fs : float
    The sampling frequency.
  window : str, tuple or array_like
    The STFT's window.
  nperseg : int, optional
    The segment length (default: from ``Zxx``'s frequency axis).
  noverlap : int, optional
    The segments' overlap (default ``nperseg // 2``; ``0`` also means the default, as in
    JAX).
  nfft : int, optional
    The FFT length (default: from ``Zxx``'s frequency axis).
  input_onesided : bool
    ``Zxx`` holds the positive frequencies of a real signal.
  boundary : bool
    The STFT extended the signal at both ends: those points are dropped.
  time_axis, freq_axis : int
    ``Zxx``'s segment and frequency axes.

  Returns
  -------
  t, x : Array
    The sample times and the signal.
  """
  check_arraylike("istft", Zxx)
  Zxx = jnp.asarray(Zxx)
  if Zxx.ndim < 2:
    raise ValueError("Input stft must be at least 2d!")
  freq_axis = canonicalize_axis(freq_axis, Zxx.ndim)
  time_axis = canonicalize_axis(time_axis, Zxx.ndim)
  if freq_axis == time_axis:
    raise ValueError("Must specify differing time and frequency axes!")
  Zxx = Zxx.astype(dtypes.to_complex_dtype(Zxx.dtype))
  n_default = 2 * (Zxx.shape[freq_axis] - 1) if input_onesided else Zxx.shape[freq_axis]
  nperseg = _static_int(nperseg or n_default, "nperseg: segment length of STFT")
  if nperseg < 1:
    raise ValueError("nperseg must be a positive integer")
  if nfft is None:
    # an odd nperseg has no FFT padding
    nfft = n_default + 1 if input_onesided and nperseg == n_default + 1 else n_default
  else:
    nfft = _static_int(nfft, "nfft of STFT")
  if nfft < nperseg:
    raise ValueError(f"FFT length ({nfft}) must be longer than nperseg ({nperseg}).")
  noverlap = _static_int(noverlap or nperseg // 2, "noverlap of STFT")
  if noverlap >= nperseg:
    raise ValueError("noverlap must be less than nperseg.")
  nstep = nperseg - noverlap

  if time_axis != Zxx.ndim - 1 or freq_axis != Zxx.ndim - 2:
    outer = tuple(i for i in range(Zxx.ndim) if i not in (time_axis, freq_axis))
    Zxx = jnp.transpose(Zxx, outer + (freq_axis, time_axis))
  ifft = jnp.fft.irfft if input_onesided else jnp.fft.ifft
  xsubs = ifft(Zxx, axis=-2, n=nfft)[..., :nperseg, :]   # (..., nperseg, nframes)
  if isinstance(window, (str, tuple)):
    win = _named_window(window, nperseg, xsubs.dtype)
  else:
    win = jnp.asarray(window)
    if win.ndim != 1:
      raise ValueError("window must be 1-D")
    if win.shape[0] != nperseg:
      raise ValueError(f"window must have length of {nperseg}")
  xsubs = xsubs * win.sum()   # undoes the STFT's 'spectrum' scaling
  win = win[:, None]
  x = _overlap_and_add(jnp.swapaxes(xsubs * win, -2, -1), nstep)
  win_squared = jnp.broadcast_to(win * win, (nperseg, xsubs.shape[-1]))
  norm = _overlap_and_add(jnp.swapaxes(win_squared, -2, -1), nstep)
  if boundary:
    x = x[..., nperseg // 2:-(nperseg // 2)]
    norm = norm[..., nperseg // 2:-(nperseg // 2)]
  x = x / jnp.where(norm > 1e-10, norm, 1.0)
  if x.ndim > 1 and time_axis != Zxx.ndim - 1:
    x = jnp.moveaxis(x, -1, time_axis - 1 if freq_axis < time_axis else time_axis)
  # as in JAX 0.10.2, the times count the leading axis of x (its only one for 1-D signals)
  time = jnp.arange(x.shape[0], dtype=np.finfo(x.dtype).dtype) / fs
  return time, x
