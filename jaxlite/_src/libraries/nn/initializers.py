"""Parameter initializers (``jax.nn.initializers``): each returns ``init(key, shape, dtype)``.

Examples
--------
>>> import jaxlite as jax
>>> init = jax.nn.initializers.glorot_normal()
>>> init(jax.random.PRNGKey(0), (3, 4)).shape
(3, 4)
"""
from __future__ import annotations

import math
import typing

import numpy as np

from jaxlite._src.libraries.numpy import namespace as jnp
from jaxlite._src.base import dtypes
from jaxlite._src.libraries import random


class Initializer(typing.Protocol):
  """The type of an initializer (``jax.nn.initializers.Initializer``): called with a PRNG
  key, a shape and an optional dtype, it returns an array of that shape."""

  def __call__(self, key, shape, dtype=None, out_sharding=None):
    ...


def _dtype(dtype):
  return dtypes.canonicalize_dtype(dtypes.default_float_dtype() if dtype is None else dtype)


def zeros(key, shape, dtype=None, out_sharding=None):
  """An initializer of zeros (the key is ignored), laid out as ``out_sharding`` says.

  Examples
  --------
  >>> import jaxlite as jax
  >>> jax.nn.initializers.zeros(jax.random.PRNGKey(0), (2,))
  Array([0., 0.], dtype=float32)
  """
  return jnp.zeros(shape, _dtype(dtype), out_sharding=out_sharding)


def ones(key, shape, dtype=None, out_sharding=None):
  """An initializer of ones (the key is ignored), laid out as ``out_sharding`` says.

  Examples
  --------
  >>> import jaxlite as jax
  >>> jax.nn.initializers.ones(jax.random.PRNGKey(0), (2,))
  Array([1., 1.], dtype=float32)
  """
  return jnp.ones(shape, _dtype(dtype), out_sharding=out_sharding)


def constant(value, dtype=None):
  """An initializer filling arrays with ``value``.

  Examples
  --------
  >>> import jaxlite as jax
  >>> jax.nn.initializers.constant(-7)(jax.random.PRNGKey(0), (2,))
  Array([-7., -7.], dtype=float32)
  """
  def init(key, shape, dtype=dtype):
    return jnp.full(shape, value, dtype=_dtype(dtype))
  return init


def uniform(scale=1e-2, dtype=None):
  """An initializer drawing uniformly from ``[0, scale)``.

  Examples
  --------
  >>> import jaxlite as jax
  >>> float(jax.nn.initializers.uniform(10.)(jax.random.PRNGKey(0), (100,)).max()) < 10
  True
  """
  def init(key, shape, dtype=dtype):
    dtype = _dtype(dtype)
    return random.uniform(key, shape, dtype) * jnp.array(scale, dtype)
  return init


def normal(stddev=1e-2, dtype=None):
  """An initializer drawing from a normal distribution of standard deviation ``stddev``.

  Examples
  --------
  >>> import jaxlite as jax
  >>> jax.nn.initializers.normal(5.)(jax.random.PRNGKey(0), (2, 3)).shape
  (2, 3)
  """
  def init(key, shape, dtype=dtype):
    dtype = _dtype(dtype)
    return random.normal(key, shape, dtype) * jnp.array(stddev, dtype)
  return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0):
  """An initializer drawing ``stddev`` times a normal truncated to ``[lower, upper]``.

  Examples
  --------
  >>> import jaxlite as jax
  >>> x = jax.nn.initializers.truncated_normal(1.)(jax.random.PRNGKey(0), (100,))
  >>> bool((abs(x) <= 2).all())
  True
  """
  def init(key, shape, dtype=dtype):
    dtype = _dtype(dtype)
    return random.truncated_normal(key, lower, upper, shape, dtype) * jnp.array(stddev, dtype)
  return init


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
  """Fan-in and fan-out of a weight shape (receptive-field axes multiply both)."""
  if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
    raise ValueError(f"Can't compute input and output sizes of a {len(shape)}-dimensional "
                     "weights tensor with default in_axis. Must be at least 2D or specify "
                     "in_axis explicitly.")
  size = lambda axes: shape[axes] if isinstance(axes, int) else math.prod(
      shape[i] for i in axes)
  in_size, out_size, batch_size = size(in_axis), size(out_axis), size(batch_axis)
  receptive_field = math.prod(shape) / in_size / out_size / batch_size
  return in_size * receptive_field, out_size * receptive_field


def _polar(radius, key, shape, dtype):
  """``radius * exp(i theta)`` with ``theta`` uniform on the circle (``radius``: real)."""
  theta = 2 * np.pi * random.uniform(key, shape, radius.dtype)
  return radius.astype(dtype) * jnp.exp(1j * theta.astype(dtype))


def _complex_uniform(key, shape, dtype):
  """Uniform on the disk of the complex plane with zero mean and unit variance (a
  modulus of sqrt(2 u) has E|z|^2 = 1)."""
  key_r, key_theta = random.split(key)
  real = np.finfo(dtype).dtype
  return _polar(jnp.sqrt(2 * random.uniform(key_r, shape, real)), key_theta, shape, dtype)


def _complex_truncated_normal(key, upper, shape, dtype):
  """A centred complex normal of unit variance with its modulus truncated to ``upper``:
  the modulus by inverting its CDF, 1 - exp(-r^2), on the truncated range."""
  key_r, key_theta = random.split(key)
  real = np.finfo(dtype).dtype
  t = (1 - np.exp(-upper ** 2)) * random.uniform(key_r, shape, real)
  return _polar(jnp.sqrt(-jnp.log1p(-t)), key_theta, shape, dtype)


def variance_scaling(scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=None):
  """An initializer whose variance is ``scale`` over a fan of the weight shape.

  Parameters
  ----------
  scale : float
    Target variance times the fan.
  mode : {"fan_in", "fan_out", "fan_avg", "fan_geo_avg"}
    Which fan divides ``scale``.
  distribution : {"truncated_normal", "normal", "uniform"}
    The distribution (a truncated normal is rescaled to keep the variance).
  in_axis, out_axis, batch_axis : int or sequence of ints
    Axes of the weight shape that hold inputs, outputs and a batch.

  Examples
  --------
  >>> import jaxlite as jax
  >>> init = jax.nn.initializers.variance_scaling(2., "fan_in", "normal")
  >>> init(jax.random.PRNGKey(0), (64, 32)).shape
  (64, 32)
  """
  def init(key, shape, dtype=dtype, out_sharding=None):
    shape = tuple(int(d) for d in shape)
    dtype = _dtype(dtype)
    fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
    denominators = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
                    "fan_geo_avg": (fan_in * fan_out) ** 0.5}
    if mode not in denominators:
      raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
    variance = jnp.array(scale / denominators[mode], dtype=dtype)
    real = dtypes.issubdtype(dtype, np.floating)
    if distribution == "truncated_normal":
      if real:   # 0.8796... is the standard deviation of a standard normal on (-2, 2)
        stddev = jnp.sqrt(variance) / jnp.array(.87962566103423978, dtype)
        return random.truncated_normal(key, -2, 2, shape, dtype,
                                       out_sharding=out_sharding) * stddev
      # 0.9531... is that of a complex standard normal whose modulus is truncated to 2
      stddev = jnp.sqrt(variance) / jnp.array(.95311164380491208, dtype)
      return _complex_truncated_normal(key, 2, shape, dtype) * stddev
    if distribution == "normal":
      return random.normal(key, shape, dtype, out_sharding=out_sharding) * jnp.sqrt(variance)
    if distribution == "uniform":
      if real:
        return random.uniform(key, shape, dtype, -1,
                              out_sharding=out_sharding) * jnp.sqrt(3 * variance)
      return _complex_uniform(key, shape, dtype) * jnp.sqrt(variance)
    raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")
  return init


def _scaled(scale, mode, distribution, doc):
  def make(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None):
    return variance_scaling(scale, mode, distribution, in_axis=in_axis, out_axis=out_axis,
                            batch_axis=batch_axis, dtype=dtype)
  make.__doc__ = doc
  return make


glorot_uniform = _scaled(1.0, "fan_avg", "uniform",
                         "Glorot (Xavier) uniform: variance 1 / fan_avg.")
glorot_normal = _scaled(1.0, "fan_avg", "truncated_normal",
                        "Glorot (Xavier) truncated normal: variance 1 / fan_avg.")
lecun_uniform = _scaled(1.0, "fan_in", "uniform", "LeCun uniform: variance 1 / fan_in.")
lecun_normal = _scaled(1.0, "fan_in", "truncated_normal",
                       "LeCun truncated normal: variance 1 / fan_in.")
he_uniform = _scaled(2.0, "fan_in", "uniform", "He (Kaiming) uniform: variance 2 / fan_in.")
he_normal = _scaled(2.0, "fan_in", "truncated_normal",
                    "He (Kaiming) truncated normal: variance 2 / fan_in.")
for _f, _name in ((glorot_uniform, "glorot_uniform"), (glorot_normal, "glorot_normal"),
                  (lecun_uniform, "lecun_uniform"), (lecun_normal, "lecun_normal"),
                  (he_uniform, "he_uniform"), (he_normal, "he_normal")):
  _f.__name__ = _f.__qualname__ = _name
xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def orthogonal(scale=1.0, column_axis=-1, dtype=None):
  """An initializer of (scaled) matrices with orthonormal columns along ``column_axis``.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> w = jax.nn.initializers.orthogonal()(jax.random.PRNGKey(0), (4, 3))
  >>> bool(jnp.allclose(w.T @ w, jnp.eye(3), atol=1e-5))
  True
  """
  def init(key, shape, dtype=dtype):
    dtype = _dtype(dtype)
    if len(shape) < 2:
      raise ValueError("orthogonal initializer requires at least a 2D shape")
    if any(d == 0 for d in shape):
      return jnp.zeros(shape, dtype=dtype)
    n_rows, n_cols = math.prod(shape) // shape[column_axis], shape[column_axis]
    q = random.orthogonal(key, n_rows, (), dtype, n_cols)
    q = jnp.reshape(q, tuple(np.delete(shape, column_axis)) + (shape[column_axis],))
    return jnp.array(scale, dtype) * jnp.moveaxis(q, -1, column_axis)
  return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None):
  """An initializer of convolution kernels (3, 4 or 5 dimensions, spatial ones first)
  that are zero but at the spatial centre, where they hold an orthogonal
  ``(fan_in, fan_out)`` matrix: the delta-orthogonal initialization of Xiao et al., 2018.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> w = jax.nn.initializers.delta_orthogonal()(jax.random.PRNGKey(0), (3, 3, 2, 4))
  >>> bool(jnp.allclose(w[1, 1] @ w[1, 1].T, jnp.eye(2), atol=1e-5)), float(w[0, 0].sum())
  (True, 0.0)
  """
  def init(key, shape, dtype=dtype):
    dtype = _dtype(dtype)
    if len(shape) not in (3, 4, 5):
      raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
    if shape[-1] < shape[-2]:
      raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
    matrix = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(key, shape[-2:])
    centre = tuple((k - 1) // 2 for k in shape[:-2])
    return jnp.zeros(shape, dtype).at[centre].set(matrix)
  return init
