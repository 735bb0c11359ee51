"""Neural-network activation functions and friends (``jax.nn``), in jnp/lax operations.

Every function is differentiable by ``grad`` like the operations it is built from; a few
carry custom derivatives where the naive one misbehaves (relu's at 0, as JAX's).
"""
from __future__ import annotations

import math

import numpy as np

import jaxlite.numpy as jnp
from jaxlite._src import dtypes
from jaxlite._src.custom_derivatives import custom_jvp, stop_gradient
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import special
from jaxlite._src.numpy.util import canonicalize_axes, promote_args_inexact


@custom_jvp
def relu(x):
  """Rectified linear unit, ``max(x, 0)``; its derivative at 0 is 0, as in JAX.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> jax.nn.relu(jnp.array([-2., 0., 3.]))
  Array([0., 0., 3.], dtype=float32)
  >>> float(jax.grad(jax.nn.relu)(0.))
  0.0
  """
  return jnp.maximum(x, 0)


relu.defjvps(lambda g, ans, x: jnp.where(x > 0, g, jnp.zeros_like(g)))


@custom_jvp
def relu6(x):
  """``min(max(x, 0), 6)``; its derivative is 0 at both kinks, as in JAX.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> jax.nn.relu6(jnp.array([-1., 3., 8.]))
  Array([0., 3., 6.], dtype=float32)
  >>> float(jax.grad(jax.nn.relu6)(6.))
  0.0
  """
  return jnp.minimum(jnp.maximum(x, 0), 6.)


relu6.defjvps(lambda g, ans, x: jnp.where((x > 0) & (x < 6), g, jnp.zeros_like(g)))


def sigmoid(x):
  """The logistic function ``1 / (1 + exp(-x))``.

  Examples
  --------
  >>> import jaxlite as jax
  >>> float(jax.nn.sigmoid(0.))
  0.5
  """
  x, = promote_args_inexact("sigmoid", x)
  return lax.logistic(x)


def log_sigmoid(x):
  """``log(sigmoid(x))``, computed as ``-softplus(-x)`` so it stays finite.

  Examples
  --------
  >>> import jaxlite as jax
  >>> round(float(jax.nn.log_sigmoid(-100.)), 3)
  -100.0
  """
  x, = promote_args_inexact("log_sigmoid", x)
  return -softplus(-x)


def softplus(x):
  """``log(1 + exp(x))``, as ``logaddexp(x, 0)`` so large inputs do not overflow.

  Examples
  --------
  >>> import jaxlite as jax
  >>> float(jax.nn.softplus(1000.))
  1000.0
  """
  return jnp.logaddexp(x, 0)


def soft_sign(x):
  """``x / (|x| + 1)``.

  Examples
  --------
  >>> import jaxlite as jax
  >>> float(jax.nn.soft_sign(1.))
  0.5
  """
  x, = promote_args_inexact("soft_sign", x)
  return x / (jnp.abs(x) + 1)


def silu(x):
  """Sigmoid-weighted linear unit ``x * sigmoid(x)`` (also called swish).

  Examples
  --------
  >>> import jaxlite as jax
  >>> float(jax.nn.silu(0.))
  0.0
  """
  x, = promote_args_inexact("silu", x)
  return x * sigmoid(x)


swish = silu


def hard_sigmoid(x):
  """``relu6(x + 3) / 6``.

  Examples
  --------
  >>> import jaxlite as jax
  >>> float(jax.nn.hard_sigmoid(0.))
  0.5
  """
  return relu6(x + 3.) / 6.


def hard_silu(x):
  """``x * hard_sigmoid(x)`` (also called hard_swish).

  Examples
  --------
  >>> import jaxlite as jax
  >>> float(jax.nn.hard_silu(3.))
  3.0
  """
  x, = promote_args_inexact("hard_silu", x)
  return x * hard_sigmoid(x)


hard_swish = hard_silu


def hard_tanh(x):
  """``x`` clipped to ``[-1, 1]``.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> jax.nn.hard_tanh(jnp.array([-2., 0.5, 2.]))
  Array([-1. ,  0.5,  1. ], dtype=float32)
  """
  x, = promote_args_inexact("hard_tanh", x)
  return jnp.where(x > 1, 1., jnp.where(x < -1, -1., x)).astype(x.dtype)


def elu(x, alpha=1.0):
  """``x`` where positive, else ``alpha * (exp(x) - 1)``.

  Examples
  --------
  >>> import jaxlite as jax
  >>> float(jax.nn.elu(2.))
  2.0
  """
  x, = promote_args_inexact("elu", x)
  safe_x = jnp.where(x > 0, 0., x)  # keep expm1 of large positives out of the gradient
  return jnp.where(x > 0, x, alpha * lax.expm1(safe_x))


def celu(x, alpha=1.0):
  """Continuously differentiable ELU: ``max(x, 0) + alpha * min(expm1(x / alpha), 0)``.

  Examples
  --------
  >>> import jaxlite as jax
  >>> float(jax.nn.celu(1.))
  1.0
  """
  x, = promote_args_inexact("celu", x)
  return jnp.maximum(x, 0.0) + alpha * lax.expm1(jnp.minimum(x, 0.0) / alpha)


def selu(x):
  """Scaled ELU with the self-normalising constants of Klambauer et al. (2017).

  Examples
  --------
  >>> import jaxlite as jax
  >>> round(float(jax.nn.selu(1.)), 4)
  1.0507
  """
  alpha = 1.6732632423543772848170429916717
  scale = 1.0507009873554804934193349852946
  return scale * elu(x, alpha)


def leaky_relu(x, negative_slope=1e-2):
  """``x`` where non-negative, else ``negative_slope * x``.

  Examples
  --------
  >>> import jaxlite as jax
  >>> round(float(jax.nn.leaky_relu(-10.)), 6)
  -0.1
  """
  x, = promote_args_inexact("leaky_relu", x)
  return jnp.where(x >= 0, x, negative_slope * x)


def gelu(x, approximate: bool = True):
  """Gaussian error linear unit: ``x * Phi(x)``, or its tanh approximation.

  Parameters
  ----------
  x : array_like
  approximate : bool
    True (default, as JAX) for ``x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3)))``;
    False for the exact ``x/2 (1 + erf(x / sqrt(2)))``.

  Examples
  --------
  >>> import jaxlite as jax
  >>> round(float(jax.nn.gelu(1., approximate=False)), 4)
  0.8413
  """
  x, = promote_args_inexact("gelu", x)
  if approximate:
    sqrt_2_over_pi = np.sqrt(2 / np.pi).astype(x.dtype)
    cdf = 0.5 * (1.0 + jnp.tanh(sqrt_2_over_pi * (x + 0.044715 * (x ** 3))))
    return x * cdf
  sqrt_half = np.sqrt(0.5).astype(x.dtype)
  return jnp.array(0.5 * x * special.erfc(-x * sqrt_half), dtype=x.dtype)


def glu(x, axis=-1):
  """Gated linear unit: split ``x`` in two along ``axis``, return ``a * sigmoid(b)``.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> jax.nn.glu(jnp.array([2., 0.])).tolist()
  [1.0]
  """
  x = jnp.asarray(x)
  size = x.shape[axis]
  if size % 2:
    raise AssertionError("axis size must be divisible by 2")
  a = jnp.take(x, jnp.arange(size // 2), axis=axis)
  b = jnp.take(x, jnp.arange(size // 2, size), axis=axis)
  return a * sigmoid(b)


def _reduce_max(x, axis, where, initial, keepdims=True):
  if where is not None:
    x = jnp.where(where, x, -jnp.inf if initial is None else initial)
  return jnp.max(x, axis=axis, keepdims=keepdims)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
  """``log(sum(exp(a)))`` over ``axis``, shifted by the maximum so it cannot overflow.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> float(jax.nn.logsumexp(jnp.array([1000., 1000.])))
  1000.6931762695312
  """
  a, = promote_args_inexact("logsumexp", a)
  if b is not None:
    a, b = promote_args_inexact("logsumexp", a, b)
    a = jnp.where(b != 0, a, -jnp.inf)
  axes = canonicalize_axes(axis, a.ndim) if axis is not None else tuple(range(a.ndim))
  amax = _reduce_max(a, axes, where, None)
  amax = stop_gradient(jnp.where(jnp.isfinite(amax), amax, 0.).astype(a.dtype))
  exp_a = lax.exp(a - amax)
  if b is not None:
    exp_a = exp_a * b
  if where is not None:
    exp_a = jnp.where(where, exp_a, 0.)
  sumexp = jnp.sum(exp_a, axis=axes, keepdims=True)
  sign = jnp.sign(sumexp)
  out = lax.log(jnp.abs(sumexp)) + amax
  if not keepdims:
    out, sign = jnp.squeeze(out, axes), jnp.squeeze(sign, axes)
  if return_sign:
    return out, sign
  if b is not None and not np.issubdtype(out.dtype, np.complexfloating):
    out = jnp.where(sign < 0, jnp.nan, out)
  return out


def log_softmax(x, axis=-1, where=None):
  """``x - logsumexp(x, axis)``: log-probabilities that stay finite for large inputs.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> jax.nn.log_softmax(jnp.array([0., 0.])).tolist()
  [-0.6931471824645996, -0.6931471824645996]
  """
  x, = promote_args_inexact("log_softmax", x)
  axes = canonicalize_axes(axis, x.ndim)
  shifted = x - stop_gradient(_reduce_max(x, axes, where, None))
  exp_shifted = lax.exp(shifted)
  if where is not None:
    exp_shifted = jnp.where(where, exp_shifted, 0.)
  result = shifted - lax.log(jnp.sum(exp_shifted, axis=axes, keepdims=True))
  if where is not None:
    return jnp.where(where, result, -jnp.inf)
  return result


def softmax(x, axis=-1, where=None):
  """``exp(x) / sum(exp(x), axis)``, computed from ``x - max(x)``.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> jax.nn.softmax(jnp.array([1e4, 1e4])).tolist()
  [0.5, 0.5]
  """
  x, = promote_args_inexact("softmax", x)
  axes = canonicalize_axes(axis, x.ndim)
  unnormalized = lax.exp(x - stop_gradient(_reduce_max(x, axes, where, None)))
  if where is not None:
    unnormalized = jnp.where(where, unnormalized, 0.)
  result = unnormalized / jnp.sum(unnormalized, axis=axes, keepdims=True)
  if where is not None:
    result = jnp.where(where, result, 0.)
  return result


def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                algorithm="fast"):
  """Normalise ``x`` to zero mean and unit variance along ``axis``.

  ``algorithm="fast"`` (JAX's default) takes the variance as ``E[x^2] - E[x]^2``,
  clipped at 0; ``"stable"`` as ``E[(x - E[x])^2]``.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> y = jax.nn.standardize(jnp.array([1., 2., 3.]))
  >>> round(float(y.mean()), 6), round(float(y.var()), 3)
  (0.0, 1.0)
  """
  x, = promote_args_inexact("standardize", x)
  if mean is None:
    mean = jnp.mean(x, axis, keepdims=True, where=where)
  if variance is None:
    if algorithm == "stable":
      variance = jnp.mean(jnp.square(x - mean), axis, keepdims=True, where=where)
    elif algorithm == "fast":
      variance = jnp.clip(jnp.mean(jnp.square(x), axis, keepdims=True, where=where)
                          - jnp.square(mean), 0)
    else:
      raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
  return (x - mean) * lax.rsqrt(variance + epsilon)


def one_hot(x, num_classes, *, dtype=None, axis=-1):
  """One-hot encode integer ``x``: a new ``num_classes`` axis at ``axis``.

  Out-of-range entries (negative or ``>= num_classes``) give an all-zero vector.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> jax.nn.one_hot(jnp.array([0, 2]), 3)
  Array([[1., 0., 0.],
         [0., 0., 1.]], dtype=float32)
  """
  num_classes = int(num_classes)
  dtype = dtypes.canonicalize_dtype(dtypes.default_float_dtype() if dtype is None else dtype)
  x = jnp.asarray(x)
  out_ndim = x.ndim + 1
  axis = axis % out_ndim
  lhs = jnp.expand_dims(x, axis)
  rhs_shape = [1] * out_ndim
  rhs_shape[axis] = num_classes
  rhs = jnp.arange(num_classes, dtype=x.dtype).reshape(rhs_shape)
  return (lhs == rhs).astype(dtype)
