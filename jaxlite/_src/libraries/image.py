"""``jax.image``: resampling an image with separable kernels, as JAX computes it.

Each resized axis gets a weight matrix (input positions by output positions) from its
kernel, normalised per output pixel and zeroed where the sample falls outside the image;
one ``einsum`` then contracts every resized axis with its matrix. Nearest neighbour is a
gather instead. The kernels, their radii and the normalisation are JAX's, so results agree
with ``jax.image`` (which is not PIL's or OpenCV's algorithm).
"""
from __future__ import annotations

import enum
import math
import operator

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.lax import call
from jaxlite._src.lax.precision import Precision
from jaxlite._src.libraries.numpy import namespace as jnp
from jaxlite._src.libraries.numpy.util import canonicalize_axis, promote_dtypes_inexact

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
  """Image resize method.

  Possible values are:

  NEAREST:
    Nearest-neighbor interpolation.

  LINEAR:
    Linear interpolation.

  LANCZOS3:
    Lanczos resampling, using a kernel of radius 3.

  LANCZOS5:
    Lanczos resampling, using a kernel of radius 5.

  CUBIC:
    Cubic interpolation, using the Keys cubic kernel.

  CUBIC_PYTORCH:
    Cubic interpolation as PyTorch's bicubic resize (OpenCV's kernel, edges repeated)
    when antialiasing is off; ``CUBIC`` when it is on.

  AREA:
    Area resampling: the average of the input pixels under each output pixel.
  """
  NEAREST = 0
  LINEAR = 1
  LANCZOS3 = 2
  LANCZOS5 = 3
  CUBIC = 4
  CUBIC_PYTORCH = 5
  AREA = 6

  @staticmethod
  def from_string(s: str):
    """The method a string names (``'bilinear'`` is ``LINEAR``, ...); ValueError for an
    unknown name."""
    method = _NAMES.get(s)
    if method is None:
      raise ValueError(f'Unknown resize method "{s}"')
    return method


_NAMES = {
    "nearest": ResizeMethod.NEAREST,
    "linear": ResizeMethod.LINEAR, "bilinear": ResizeMethod.LINEAR,
    "trilinear": ResizeMethod.LINEAR, "triangle": ResizeMethod.LINEAR,
    "lanczos3": ResizeMethod.LANCZOS3, "lanczos5": ResizeMethod.LANCZOS5,
    "cubic": ResizeMethod.CUBIC, "bicubic": ResizeMethod.CUBIC,
    "tricubic": ResizeMethod.CUBIC,
    "cubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
    "bicubic-pytorch": ResizeMethod.CUBIC_PYTORCH,
    "area": ResizeMethod.AREA,
}


# -- kernels: weight as a function of the distance |x| (in input pixels) from the sample

def _lanczos(radius):
  def kernel(x):
    y = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
    # y / (pi^2 x^2) away from 0, whose limit is 1
    out = jnp.where(x > 1e-3, jnp.divide(y, jnp.where(x != 0, np.pi ** 2 * x ** 2, 1)), 1)
    return jnp.where(x > radius, 0., out)
  return kernel


def _keys_cubic(x):
  """Keys' cubic convolution kernel with a = -0.5 (Pillow's, TensorFlow's)."""
  out = ((1.5 * x - 2.5) * x) * x + 1.
  out = jnp.where(x >= 1., ((-0.5 * x + 2.5) * x - 4.) * x + 2., out)
  return jnp.where(x >= 2., 0., out)


def _opencv_cubic(x):
  """The cubic kernel with a = -0.75 that OpenCV and PyTorch (without antialias) use."""
  a = -0.75
  out = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
  out = jnp.where(x >= 1.0, ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a, out)
  return jnp.where(x >= 2.0, 0.0, out)


def _triangle(x):
  return jnp.maximum(0, 1 - jnp.abs(x))


# AREA weighs by interval overlap rather than by a kernel of the distance
_AREA = object()

# method -> (kernel radius, kernel)
_KERNELS = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic),
    ResizeMethod.AREA: (1, _AREA),
}


def _normalized(weights, total):
  """``weights / total`` per output pixel, 0 where the total is negligible."""
  usable = jnp.abs(total) > 1000. * float(np.finfo(np.float32).eps)
  return jnp.where(usable, jnp.divide(weights, jnp.where(total != 0, total, 1)), 0)


def _weight_matrix(input_size, output_size, scale, translation, kernel, antialias,
                   edge_padding, radius):
  """The (input_size, output_size) matrix whose column j weighs the input pixels that
  make output pixel j."""
  dtype = dtypes.result_type(scale, translation)
  inv_scale = 1. / scale
  # downsampling widens the kernel (a low-pass filter); upsampling only interpolates
  kernel_scale = jnp.maximum(inv_scale, 1.) if antialias else 1.
  # the input coordinate of each output pixel's centre
  sample_f = ((jnp.arange(output_size, dtype=dtype) + 0.5) * inv_scale
              - translation * inv_scale - 0.5)
  k = radius if edge_padding else 0   # edge padding: k pixels beyond each edge too
  expanded = jnp.arange(-k, input_size + k, dtype=dtype)
  if kernel is _AREA:
    left = jnp.arange(output_size, dtype=dtype) * inv_scale - translation * inv_scale
    right = left + inv_scale
    pixel_left = jnp.arange(input_size, dtype=dtype)
    weights = jnp.maximum(0.0, jnp.minimum(right[None, :], pixel_left[:, None] + 1.0)
                          - jnp.maximum(left[None, :], pixel_left[:, None]))
  else:
    weights = kernel(jnp.abs(sample_f[None, :] - expanded[:, None]) / kernel_scale)
  if edge_padding:
    # the weights of pixels beyond an edge move onto that edge pixel
    clamped = jnp.clip(expanded.astype(jnp.int32), 0, input_size - 1)
    columns = jnp.broadcast_to(jnp.arange(output_size)[None, :], weights.shape)
    matrix = jnp.zeros((input_size, output_size), dtype).at[clamped[:, None], columns].add(
        weights)
    return _normalized(matrix, jnp.sum(matrix, axis=0, keepdims=True))
  weights = _normalized(weights, jnp.sum(weights, axis=0, keepdims=True))
  # output pixels whose sample lies outside the image get nothing
  inside = (sample_f >= -0.5) & (sample_f <= input_size - 0.5)
  return jnp.where(inside[None, :], weights, 0)


def _scale_and_translate(x, shape, spatial_dims, scale, translation, method, antialias,
                         precision):
  if method == ResizeMethod.CUBIC_PYTORCH and antialias:
    method = ResizeMethod.CUBIC
  radius, kernel = _KERNELS[method]
  edge_padding = method == ResizeMethod.CUBIC_PYTORCH and not antialias
  if not spatial_dims:
    return x
  n = len(shape)
  operands, out_indices = [], list(range(n))
  for i, d in enumerate(spatial_dims):
    d = canonicalize_axis(d, x.ndim)
    w = _weight_matrix(x.shape[d], shape[d], scale[i], translation[i], kernel, antialias,
                       edge_padding, radius).astype(x.dtype)
    operands += [w, [d, n + i]]
    out_indices[d] = n + i
  return jnp.einsum(x, list(range(n)), *operands, out_indices, precision=precision)


def _canonical_shape(shape):
  """``shape`` as a tuple of ints; TypeError (as JAX raises) for anything else."""
  try:
    return tuple(operator.index(d) for d in shape)
  except TypeError:
    pass
  raise TypeError("Shapes must be 1D sequences of concrete values of integer type, "
                  f"got {shape}.")


def _check_rank(shape, image):
  if len(shape) != image.ndim:
    raise ValueError("shape must have length equal to the number of dimensions of x; "
                     f" {shape} vs {image.shape}")


def _method(method):
  if isinstance(method, str):
    return ResizeMethod.from_string(method)
  if not isinstance(method, ResizeMethod):
    raise TypeError(f"method must be a ResizeMethod or its name as a string, got "
                    f"{method!r}.")
  return method


def scale_and_translate(image, shape, spatial_dims, scale, translation, method,
                        antialias: bool = True, precision=Precision.HIGHEST):
  """Apply a scale and translation to an image.

  A location ``x`` of axis ``spatial_dims[i]`` of the input maps to
  ``x * scale[i] + translation[i]`` in the output (the inverse warp gives the sample
  locations), with half-centred pixels; output pixels whose sample falls outside the
  input are zero.

  Parameters
  ----------
  image : array
  shape : sequence of int
    The output shape, one entry per axis of ``image``.
  spatial_dims : sequence of int
    The K axes that ``scale`` and ``translation`` apply to.
  scale, translation : arrays of shape (K,)
  method : str or ResizeMethod
    Any method but ``NEAREST``: ``'linear'``, ``'lanczos3'``, ``'lanczos5'``,
    ``'cubic'``, ``'cubic-pytorch'``, ``'area'`` (and their aliases).
  antialias : bool
    Widen the kernel when downsampling (a low-pass filter). Default True.
  precision
    The precision of the contractions (default ``Precision.HIGHEST``).

  Returns
  -------
  Array
    The resampled image, in a floating dtype.
  """
  shape = _canonical_shape(shape)
  _check_rank(shape, image)
  method = _method(method)
  if method == ResizeMethod.NEAREST:
    raise ValueError("Nearest neighbor resampling is not currently supported for "
                     "scale_and_translate.")
  image, = promote_dtypes_inexact(jnp.asarray(image))
  scale, translation = promote_dtypes_inexact(jnp.asarray(scale), jnp.asarray(translation))
  if len(spatial_dims) != scale.shape[0] or len(spatial_dims) != translation.shape[0]:
    raise ValueError(f"scale_and_translate: scale and translation need one entry per "
                     f"spatial dimension ({len(spatial_dims)}), got shapes {scale.shape} "
                     f"and {translation.shape}.")
  return _scale_and_translate(image, shape, tuple(spatial_dims), scale, translation,
                              method, antialias, precision)


def _resize_nearest(x, shape):
  for d in range(len(shape)):
    m, n = x.shape[d], shape[d]
    if m == n:
      continue
    # (float32 offsets, as JAX computes them whatever the x64 setting)
    offsets = (jnp.arange(n, dtype=np.float32) + 0.5) * m / n
    offsets = jnp.floor(offsets.astype(np.float32)).astype(np.int32)
    index = [slice(None)] * len(shape)
    index[d] = offsets
    x = x[tuple(index)]
  return x


@call.staged(static_argnames=("shape", "method", "antialias", "precision"),
             name="_resize")
def _resize(image, shape, method, antialias, precision):
  image = jnp.asarray(image)
  _check_rank(shape, image)
  method = _method(method)
  if method == ResizeMethod.NEAREST:
    return _resize_nearest(image, shape)
  image, = promote_dtypes_inexact(image)
  # an axis whose size stays is the identity for these interpolating kernels
  spatial_dims = tuple(d for d in range(len(shape)) if image.shape[d] != shape[d])
  scale = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in spatial_dims]
  return _scale_and_translate(image, shape, spatial_dims, scale, [0.] * len(spatial_dims),
                              method, antialias, precision)


def resize(image, shape, method, antialias: bool = True, precision=Precision.HIGHEST):
  """Image resize.

  ``resize`` does not tell spatial axes from batch or channel axes: an axis whose size
  stays the same is left as it is.

  Parameters
  ----------
  image : array
  shape : sequence of int
    The output shape, one entry per axis of ``image``.
  method : str or ResizeMethod
    ``'nearest'`` (the dtype stays; ``antialias`` and ``precision`` are ignored),
    ``'linear'`` (``'bilinear'``, ``'trilinear'``, ``'triangle'``), ``'lanczos3'``,
    ``'lanczos5'``, ``'cubic'`` (``'bicubic'``, ``'tricubic'``: Keys' kernel),
    ``'cubic-pytorch'`` (``'bicubic-pytorch'``) or ``'area'``.
  antialias : bool
    Widen the kernel when downsampling (a low-pass filter). Default True; no effect
    when upsampling.
  precision
    The precision of the contractions (default ``Precision.HIGHEST``).

  Returns
  -------
  Array
    The resized image: the input's dtype for ``'nearest'``, a floating dtype otherwise.

  Examples
  --------
  >>> import jaxlite.numpy as jnp
  >>> from jaxlite import image
  >>> image.resize(jnp.array([[0., 1.], [2., 3.]]), (2, 4), 'nearest').tolist()
  [[0.0, 0.0, 1.0, 1.0], [2.0, 2.0, 3.0, 3.0]]
  """
  return _resize(image, _canonical_shape(shape), method, antialias, precision)
