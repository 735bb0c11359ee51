"""``jaxlite.numpy.fft``: NumPy's FFT functions on the ``fft`` primitive.

The transformed axes are moved to the end, cut or zero-padded to the requested lengths,
transformed, and moved back; ``norm`` scales the result ('backward', 'ortho',
'forward'), as in NumPy.
"""
from __future__ import annotations

import operator

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.core.array import Array
from jaxlite._src.lax import elementwise as lax_ew
from jaxlite._src.lax import fft as lax_fft
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.libraries.numpy import lax_numpy as lnp
from jaxlite._src.libraries.numpy import ufuncs
from jaxlite._src.libraries.numpy.util import (accepts_device, as_operand, canonicalize_axis,
                                                check_arraylike)

__all__ = [
    "fft", "ifft", "rfft", "irfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
    "rfftn", "irfftn", "hfft", "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]

_T = lax_fft.FftType


def _scale(norm, n, forward):
  # the primitive's inverse transforms already divide by n ("backward")
  if norm in (None, "backward"):
    return None
  if norm == "ortho":
    return 1.0 / np.sqrt(n) if forward else np.sqrt(n)
  if norm == "forward":
    return 1.0 / n if forward else float(n)
  raise ValueError(f'Invalid norm value {norm}; should be "backward", "ortho" or "forward".')


def _resize(x, axis, n):
  """``x`` cut or zero-padded to length ``n`` along ``axis``."""
  size = x.shape[axis]
  if n == size:
    return x
  if n < size:
    return lax_shapes.slice_in_dim(x, 0, n, axis=axis)
  config = [(0, 0, 0)] * x.ndim
  config[axis] = (0, n - size, 0)
  return lax_shapes.pad(x, Array(np.zeros((), x.dtype)), config)


def _fftn_core(name, a, s, axes, norm, fft_type):
  check_arraylike(name, a)
  a = as_operand(a)
  if axes is None:
    axes = tuple(range(a.ndim)) if s is None else tuple(range(a.ndim - len(s), a.ndim))
  axes = tuple(canonicalize_axis(ax, a.ndim) for ax in axes)
  if len(set(axes)) != len(axes):
    raise ValueError(f"{name} does not support repeated axes. Got axes {axes}.")
  if s is not None:
    s = tuple(core.concrete_or_error(operator.index, n, f"{name}: s must be static.")
              for n in s)
    if len(s) != len(axes):
      raise ValueError("Shape and axes have different lengths.")
  if len(axes) > 3:
    # the primitive transforms up to 3 axes at once: split into passes
    if fft_type in (_T.RFFT, _T.IRFFT):
      raise NotImplementedError(f"{name} over more than 3 axes is not supported.")
    head, tail = axes[:-3], axes[-3:]
    s_head = None if s is None else s[:-3]
    s_tail = None if s is None else s[-3:]
    a = _fftn_core(name, a, s_tail, tail, norm, fft_type)
    return _fftn_core(name, a, s_head, head, norm, fft_type)
  # work on the trailing axes
  nd = len(axes)
  if not nd:
    return a
  perm_src = [i for i in range(a.ndim) if i not in axes] + list(axes)
  x = lax_shapes.transpose(a, perm_src)
  lead = a.ndim - nd
  if fft_type == _T.IRFFT:
    lengths = list(x.shape[lead:])
    lengths[-1] = 2 * (lengths[-1] - 1)
    if s is not None:
      lengths = list(s)
    for i in range(nd - 1):
      x = _resize(x, lead + i, lengths[i])
    x = _resize(x, x.ndim - 1, lengths[-1] // 2 + 1)
    x = _to_complex(x)
  else:
    lengths = list(x.shape[lead:]) if s is None else list(s)
    for i in range(nd):
      x = _resize(x, lead + i, lengths[i])
    x = _to_complex(x) if fft_type != _T.RFFT else _to_real(name, x)
  out = lax_fft.fft(x, fft_type, tuple(lengths))
  n = int(np.prod(lengths, dtype=np.int64))
  scale = _scale(norm, n, fft_type in (_T.FFT, _T.RFFT))
  if scale is not None:
    out = ufuncs.multiply(out, Array(np.asarray(scale, out.dtype)))
  inverse = tuple(int(i) for i in np.argsort(perm_src))
  return lax_shapes.transpose(out, inverse)


def _to_complex(x):
  if dtypes.is_complex(x.dtype):
    return x
  target = np.complex128 if x.dtype == np.float64 else np.complex64
  if not dtypes.is_inexact(x.dtype):
    target = np.complex128 if dtypes.default_float_dtype() == np.float64 else np.complex64
  return lax_ew.convert_element_type(x, target)


def _to_real(name, x):
  if dtypes.is_complex(x.dtype):
    raise ValueError(f"{name}: only real valued inputs supported for rfft")
  if not dtypes.is_inexact(x.dtype):
    return lax_ew.convert_element_type(x, dtypes.default_float_dtype())
  return x


def _one_axis(name, fft_type):
  def fun(a, n=None, axis=-1, norm=None):
    return _fftn_core(name, a, None if n is None else (n,), (axis,), norm, fft_type)
  fun.__name__ = name
  return fun


fft = _one_axis("fft", _T.FFT)
ifft = _one_axis("ifft", _T.IFFT)
rfft = _one_axis("rfft", _T.RFFT)
irfft = _one_axis("irfft", _T.IRFFT)
fft.__doc__ = "1-d discrete Fourier transform along ``axis`` (``numpy.fft.fft``)."
ifft.__doc__ = "1-d inverse DFT along ``axis``."
rfft.__doc__ = "1-d DFT of a real input: the ``n // 2 + 1`` non-negative frequencies."
irfft.__doc__ = "Inverse of ``rfft``: a real output of length ``n`` (default 2 (m - 1))."


def fftn(a, s=None, axes=None, norm=None):
  """N-d discrete Fourier transform."""
  return _fftn_core("fftn", a, s, axes, norm, _T.FFT)


def ifftn(a, s=None, axes=None, norm=None):
  """N-d inverse discrete Fourier transform."""
  return _fftn_core("ifftn", a, s, axes, norm, _T.IFFT)


def rfftn(a, s=None, axes=None, norm=None):
  """N-d DFT of a real input (the last axis halved)."""
  return _fftn_core("rfftn", a, s, axes, norm, _T.RFFT)


def irfftn(a, s=None, axes=None, norm=None):
  """Inverse of ``rfftn``."""
  return _fftn_core("irfftn", a, s, axes, norm, _T.IRFFT)


def fft2(a, s=None, axes=(-2, -1), norm=None):
  """2-d discrete Fourier transform."""
  return _fftn_core("fft2", a, s, axes, norm, _T.FFT)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
  """2-d inverse discrete Fourier transform."""
  return _fftn_core("ifft2", a, s, axes, norm, _T.IFFT)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
  """2-d DFT of a real input."""
  return _fftn_core("rfft2", a, s, axes, norm, _T.RFFT)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
  """Inverse of ``rfft2``."""
  return _fftn_core("irfft2", a, s, axes, norm, _T.IRFFT)


def _swap_norm(norm):
  return {None: "forward", "backward": "forward", "ortho": "ortho",
          "forward": "backward"}[norm]


def hfft(a, n=None, axis=-1, norm=None):
  """DFT of a signal with Hermitian symmetry (a real spectrum): ``irfft(conj(a))``
  with the forward normalisation."""
  from jaxlite._src.libraries.numpy import math
  a = as_operand(a)
  conj = math.conj(a) if dtypes.is_complex(a.dtype) else a
  if n is None:
    n = 2 * (a.shape[axis] - 1)
  return irfft(conj, n, axis, _swap_norm(norm))


def ihfft(a, n=None, axis=-1, norm=None):
  """Inverse of ``hfft``: ``conj(rfft(a))`` with the inverse normalisation."""
  from jaxlite._src.libraries.numpy import math
  return math.conj(rfft(a, n, axis, _swap_norm(norm)))


@accepts_device
def fftfreq(n, d=1.0, *, dtype=None):
  """Sample frequencies of ``fft`` for a window of length ``n`` and spacing ``d``."""
  n = core.concrete_or_error(operator.index, n, "fftfreq's n must be static.")
  dtype = dtypes.canonicalize_dtype(dtype or dtypes.default_float_dtype())
  k = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
  return ufuncs.true_divide(Array(k.astype(dtype)), ufuncs.multiply(d, n))


@accepts_device
def rfftfreq(n, d=1.0, *, dtype=None):
  """Sample frequencies of ``rfft``."""
  n = core.concrete_or_error(operator.index, n, "rfftfreq's n must be static.")
  dtype = dtypes.canonicalize_dtype(dtype or dtypes.default_float_dtype())
  k = np.arange(0, n // 2 + 1)
  return ufuncs.true_divide(Array(k.astype(dtype)), ufuncs.multiply(d, n))


def _shift(x, axes, sign):
  from jaxlite._src.libraries.numpy.array_ops import roll
  x = as_operand(x)
  if axes is None:
    axes = tuple(range(x.ndim))
  elif isinstance(axes, (int, np.integer)):
    axes = (axes,)
  shifts = [sign * (x.shape[ax] // 2) for ax in axes]
  return roll(x, tuple(shifts), tuple(axes))


def fftshift(x, axes=None):
  """Move the zero frequency to the centre."""
  return _shift(x, axes, 1)


def ifftshift(x, axes=None):
  """Inverse of ``fftshift``."""
  return _shift(x, axes, -1)
