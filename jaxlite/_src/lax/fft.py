"""The ``fft`` primitive: n-dimensional discrete Fourier transforms over trailing axes.

All four kinds are linear, so differentiation needs only transposes. The DFT matrix is
symmetric, so FFT and IFFT are their own transposes; the real transforms are written in
terms of a full FFT, as JAX does, and the ``conj`` that JAX's IRFFT rule takes is
avoided through ``conj(rfft(t)) = n * ifft(t)`` for real ``t``.
"""
from __future__ import annotations

import enum
import math

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.core.array import Array
from jaxlite._src.core.core import Primitive, ShapedArray
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.lax import shapes as sh
from jaxlite._src.transforms import ad
from jaxlite._src.transforms import batching


class FftType(enum.IntEnum):
  """The kind of transform (JAX's ``jax.lax.FftType``)."""
  FFT = 0
  IFFT = 1
  RFFT = 2
  IRFFT = 3


def _complex_dtype(dtype):
  return np.dtype(np.complex128 if np.dtype(dtype) in (np.float64, np.complex128)
                  else np.complex64)


def _real_dtype(dtype):
  return np.dtype(np.float64 if np.dtype(dtype) in (np.float64, np.complex128)
                  else np.float32)


fft_p = Primitive("fft")


@fft_p.def_abstract_eval
def _fft_rule(x, *, fft_type, fft_lengths):
  nd = len(fft_lengths)
  if not 1 <= nd <= 3 or x.ndim < nd:
    raise ValueError(f"fft requires 1 to 3 transformed axes and an operand with at least "
                     f"that many, got fft_lengths={fft_lengths} for shape {x.shape}.")
  if fft_type == FftType.RFFT:
    if dtypes.is_complex(x.dtype) or not dtypes.is_inexact(x.dtype):
      raise TypeError(f"RFFT requires a real floating input, got {x.dtype.name}.")
    if x.shape[-nd:] != tuple(fft_lengths):
      raise ValueError(f"RFFT fft_lengths {fft_lengths} must equal the trailing axes of "
                       f"the operand, shape {x.shape}.")
    shape = x.shape[:-1] + (fft_lengths[-1] // 2 + 1,)
    return ShapedArray(shape, _complex_dtype(x.dtype))
  if not dtypes.is_complex(x.dtype):
    raise TypeError(f"{FftType(fft_type).name} requires a complex input, got "
                    f"{x.dtype.name}.")
  if fft_type == FftType.IRFFT:
    want = tuple(fft_lengths[:-1]) + (fft_lengths[-1] // 2 + 1,)
    if x.shape[-nd:] != want:
      raise ValueError(f"IRFFT with fft_lengths {fft_lengths} requires the trailing axes "
                       f"of the operand to be {want}, got shape {x.shape}.")
    return ShapedArray(x.shape[:-1] + (fft_lengths[-1],), _real_dtype(x.dtype))
  if x.shape[-nd:] != tuple(fft_lengths):
    raise ValueError(f"fft_lengths {fft_lengths} must equal the trailing axes of the "
                     f"operand, shape {x.shape}.")
  return x.strip_weak_type()


core.param_printers[(fft_p, "fft_type")] = lambda v: str(int(v))


def fft(x, fft_type, fft_lengths):
  """A DFT of ``fft_type`` over the trailing ``len(fft_lengths)`` axes of ``x``.

  Parameters
  ----------
  x : array
  fft_type : FftType or str
    ``FFT``, ``IFFT``, ``RFFT`` (real in, half spectrum out) or ``IRFFT``.
  fft_lengths : sequence of int
    Lengths of the transformed axes (for IRFFT: of the real output).
  """
  if isinstance(fft_type, str):
    fft_type = FftType[fft_type.upper()]
  fft_type = FftType(fft_type)
  lengths = tuple(int(n) for n in fft_lengths)
  if fft_type == FftType.RFFT and dtypes.is_complex(core.get_aval(x).dtype):
    raise ValueError("only real valued inputs supported for rfft")
  return fft_p.bind(x, fft_type=fft_type, fft_lengths=lengths)


# -- differentiation: linear

def _scalar(value, dtype):
  return Array(np.array(value, dtype))


def _rfft_transpose(ct, fft_lengths):
  # rfft(x) = fft(complex(x))[..., :n//2+1]: pad the cotangent back, FFT, keep the real part
  aval = core.get_aval(ct)
  nd = aval.ndim
  n = fft_lengths[-1]
  config = [(0, 0, 0)] * nd
  config[-1] = (0, n - aval.shape[-1], 0)
  full = sh.pad(ct, _scalar(0, aval.dtype), config)
  out = fft(full, FftType.FFT, fft_lengths)
  return ew.convert_element_type(out, _real_dtype(aval.dtype))


def _irfft_transpose(ct, fft_lengths):
  # JAX: conj(rfft(ct)) * mask / prod(n); conj(rfft(t)) is prod(n) * ifft(t), t real
  n = fft_lengths[-1]
  half = n // 2 + 1
  ctype = _complex_dtype(core.get_aval(ct).dtype)
  x = fft(ew.convert_element_type(ct, ctype), FftType.IFFT, fft_lengths)
  nd = core.get_aval(x).ndim
  x = sh.slice(x, (0,) * nd, core.get_aval(x).shape[:-1] + (half,))
  weights = np.full(half, 2.0)
  weights[0] = 1.0
  if n % 2 == 0:
    weights[-1] = 1.0
  mask = sh.broadcast_in_dim(_scalar(weights, ctype), core.get_aval(x).shape, (nd - 1,))
  return ew.mul(x, mask)


def _fft_transpose(ct, x, *, fft_type, fft_lengths):
  if type(ct) is ad.Zero:
    return [ad.Zero(x.aval)]
  if fft_type == FftType.RFFT:
    return [_rfft_transpose(ct, fft_lengths)]
  if fft_type == FftType.IRFFT:
    return [_irfft_transpose(ct, fft_lengths)]
  return [fft(ct, fft_type, fft_lengths)]


ad.deflinear2(fft_p, _fft_transpose)


def _fft_batcher(vals, dims, *, fft_type, fft_lengths):
  (x,), (d,) = vals, dims
  x = batching.moveaxis(x, d, 0)
  return fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths), 0


batching.batching_rules[fft_p] = _fft_batcher
