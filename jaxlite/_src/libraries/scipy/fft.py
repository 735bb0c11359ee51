"""``jaxlite.scipy.fft`` (``jax.scipy.fft``): the discrete cosine transform, type 2.

As in JAX 0.10.2: ``dct``, ``idct``, ``dctn`` and ``idctn`` with ``type=2`` only (another
type raises NotImplementedError), ``norm`` None/``'backward'`` or ``'ortho'``, and ``n``
/ ``s`` zero-padding or truncating the transformed axes. Complex inputs are transformed
part by part. Each is built from an FFT of the reordered input (Makhoul, "A Fast Cosine
Transform in One and Two Dimensions", 1980), so it jits, differentiates and vectorizes.

One-dimensional DCT-II of a length-N axis: ``y[k] = 2 * sum_n x[n] cos(pi k (2n + 1) /
2N)``. With ``v`` the even-indexed samples followed by the odd-indexed ones reversed,
``y[k] = 2 * Re(exp(-i pi k / 2N) * FFT(v)[k])``. The inverse (what SciPy calls the
inverse of type 2, a DCT-III scaled by 1/2N) undoes each step.
"""
from __future__ import annotations

import math
import operator
from collections.abc import Sequence

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.lax import elementwise as lax_ew
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.libraries.numpy import namespace as jnp
from jaxlite._src.libraries.numpy.util import (canonicalize_axis, check_arraylike,
                                     promote_dtypes_inexact)

__all__ = ["dct", "dctn", "idct", "idctn"]


def _check(name, x, type, norm):
  check_arraylike(name, x)
  if type != 2:
    raise NotImplementedError("Only DCT type 2 is implemented.")
  if norm is not None and norm not in ("backward", "ortho"):
    raise ValueError(f"jax.scipy.fft.{name}: {norm=!r} is not implemented")
  return jnp.asarray(x)


def _twiddle(n, k):
  """``exp(-i pi k / 2n)``, complex of ``k``'s precision."""
  ctype = jnp.result_type(k.dtype, np.complex64)
  return jnp.exp(jnp.asarray(-0.5j * np.pi / n, ctype) * k.astype(ctype))


def _along(values, axis, ndim):
  """A 1-D array broadcast along ``axis`` of an ``ndim``-dimensional array."""
  return lax_shapes.expand_dims(values, [a for a in range(ndim) if a != axis])


def _resize(x, axis, n):
  """Zero-pad or truncate ``axis`` to length ``n`` (None: as it is)."""
  if n is None:
    return x
  pads = [(0, n - x.shape[axis] if a == axis else 0, 0) for a in range(x.ndim)]
  return lax_shapes.pad(x, jnp.zeros((), x.dtype), pads)


def _interleave(x, axis):
  """Even-indexed samples, then the odd-indexed ones reversed."""
  evens = lax_shapes.slice_in_dim(x, None, None, 2, axis)
  odds = lax_shapes.rev(lax_shapes.slice_in_dim(x, 1, None, 2, axis), (axis,))
  return lax_shapes.concatenate([evens, odds], axis)


def _deinterleave(x, axis):
  """The inverse of ``_interleave``."""
  n = x.shape[axis]
  half = math.ceil(n / 2)
  evens = lax_shapes.slice_in_dim(x, 0, half, 1, axis)
  odds = lax_shapes.rev(lax_shapes.slice_in_dim(x, half, n, 1, axis), (axis,))
  if n % 2:   # one more even sample than odd ones: pad the odd ones to interleave
    odds = _resize(odds, axis, half)
  pairs = jnp.stack([evens, odds], axis=axis + 1)
  shape = list(x.shape)
  shape[axis] = 2 * half
  merged = pairs.reshape(shape)
  return lax_shapes.slice_in_dim(merged, 0, n, 1, axis)


def _ortho_scale(out, axis):
  """Divide by ``sqrt(4N)`` at k = 0 and ``sqrt(2N)`` elsewhere."""
  n = out.shape[axis]
  factor = np.full(n, 2.0 * n)
  factor[0] = 4.0 * n
  return out / _along(jnp.asarray(np.sqrt(factor), out.dtype), axis, out.ndim)


def _by_parts(fn, x, **kwargs):
  return lax_ew.complex(fn(jnp.real(x), **kwargs), fn(jnp.imag(x), **kwargs))


def dct(x, type=2, n=None, axis=-1, norm=None):
  """The discrete cosine transform of ``x`` along ``axis`` (``scipy.fft.dct``, type 2).

  ``n`` zero-pads or truncates the axis first; ``norm='ortho'`` makes the transform
  orthonormal, None or ``'backward'`` leaves it unscaled.
  """
  x = _check("dct", x, type, norm)
  if dtypes.issubdtype(x.dtype, np.complexfloating):
    return _by_parts(dct, x, type=type, n=n, axis=axis, norm=norm)
  axis = canonicalize_axis(axis, x.ndim)
  x = _resize(x, axis, n)
  size = x.shape[axis]
  spectrum = jnp.fft.fft(_interleave(x, axis), axis=axis)
  k = _along(jnp.arange(size, dtype=jnp.real(spectrum).dtype), axis, x.ndim)
  out = 2 * jnp.real(spectrum * _twiddle(size, k))
  return _ortho_scale(out, axis) if norm == "ortho" else out


def idct(x, type=2, n=None, axis=-1, norm=None):
  """The inverse of ``dct`` along ``axis`` (``scipy.fft.idct``, type 2)."""
  x = _check("idct", x, type, norm)
  if dtypes.issubdtype(x.dtype, np.complexfloating):
    return _by_parts(idct, x, type=type, n=n, axis=axis, norm=norm)
  axis = canonicalize_axis(axis, x.ndim)
  x = _resize(x, axis, n)
  size = x.shape[axis]
  x, = promote_dtypes_inexact(x)
  if norm != "ortho":   # the unscaled inverse carries the orthonormal scale twice
    x = _ortho_scale(x, axis)
  x = _ortho_scale(x, axis)
  k = _along(jnp.arange(size, dtype=x.dtype), axis, x.ndim)
  w = _twiddle(size, k)
  v = jnp.fft.ifft(x.astype(w.dtype) / w * (2 * size), axis=axis)
  return _deinterleave(jnp.real(v), axis)


def _shape_and_axes(x, s, axes):
  if s is not None:
    try:
      s = list(s)
    except TypeError:
      s = [operator.index(s)]
    if len(s) > x.ndim:
      raise ValueError(f"s must have at most x.ndim ({x.ndim}) elements, got {len(s)}")
  if axes is None:
    axes = tuple(range(x.ndim - len(s), x.ndim)) if s is not None else tuple(range(x.ndim))
  else:
    if isinstance(axes, int):
      axes = (axes,)
    axes = tuple(canonicalize_axis(a, x.ndim) for a in axes)
    if len(set(axes)) != len(axes):
      raise ValueError(f"repeated axis in {axes}")
  return s, axes


def _resize_axes(x, s, axes):
  if s is None:
    return x
  sizes = dict(zip(axes, s))
  pads = [(0, sizes[a] - x.shape[a] if a in sizes else 0, 0) for a in range(x.ndim)]
  return lax_shapes.pad(x, jnp.zeros((), x.dtype), pads)


def _along_axes(name, one_axis, x, type, s, axes, norm):
  """``one_axis`` (dct or idct) applied along each of ``axes`` in turn."""
  x = _check(name, x, type, norm)
  if dtypes.issubdtype(x.dtype, np.complexfloating):
    return _by_parts(lambda v, **kw: _along_axes(name, one_axis, v, **kw), x, type=type, s=s,
                     axes=axes, norm=norm)
  s, axes = _shape_and_axes(x, s, axes)
  if len(axes) == 1:
    return one_axis(x, n=s[0] if s is not None else None, axis=axes[0], norm=norm)
  x = _resize_axes(x, s, axes)
  for axis in axes:
    x = one_axis(x, axis=axis, norm=norm)
  return x


def dctn(x, type=2, s=None, axes=None, norm=None):
  """The multidimensional DCT of ``x`` over ``axes`` (``scipy.fft.dctn``, type 2).

  ``s`` gives the transformed axes' lengths (zero-padding or truncating); without
  ``axes``, the last ``len(s)`` axes, or every axis when ``s`` is None too.
  """
  return _along_axes("dctn", dct, x, type, s, axes, norm)


def idctn(x, type=2, s=None, axes=None, norm=None):
  """The multidimensional inverse DCT of ``x`` over ``axes`` (``scipy.fft.idctn``)."""
  return _along_axes("idctn", idct, x, type, s, axes, norm)
