"""Neural-network activation functions and friends (``jax.nn``), in jnp/lax operations.

Each function is written as JAX writes it: most take their input as it comes (no
promotion to float first), so integer and boolean inputs follow the promotion of the
jnp operations inside (``hard_tanh`` of int8 stays int8, ``elu`` of int32 gives a weakly
typed float, ``sigmoid`` of an integer is a TypeError from ``lax.logistic``). A few
carry custom derivatives where the naive one misbehaves (relu's at 0, as JAX's).
"""
from __future__ import annotations

import functools
import warnings

import numpy as np

from jaxlite._src.libraries.numpy import namespace as jnp
from jaxlite._src.base import dtypes
from jaxlite._src.base.config import config
from jaxlite._src.lax.custom_derivatives import custom_jvp, stop_gradient
from jaxlite._src.lax.call import staged
from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.lax import special
from jaxlite._src.libraries.numpy import reductions
from jaxlite._src.libraries.numpy.util import (as_operand, canonicalize_axes, canonicalize_axis,
                                     check_arraylike, promote_args_inexact)


def _arraylike(name, x):
  """``x`` as an array, rejecting lists and tuples (JAX's ``ensure_arraylike``)."""
  check_arraylike(name, x)
  return as_operand(x)


def _zero_unless(pred, g):
  return lax.select(pred, g, jnp.zeros_like(g))


@custom_jvp
@staged
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


relu.defjvps(lambda g, ans, x: _zero_unless(x > 0, g))


@custom_jvp
@staged
def relu6(x):
  """``min(max(x, 0), 6)``; its derivative is 0 at both kinks, as in JAX.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> jax.nn.relu6(jnp.array([-1., 3., 8.]))
  Array([0., 3., 6.], dtype=float32)
  """
  return jnp.minimum(jnp.maximum(x, 0), 6.)


relu6.defjvps(lambda g, ans, x: _zero_unless((x > 0) & (x < 6), g))


def sigmoid(x):
  """The logistic function ``1 / (1 + exp(-x))`` (``lax.logistic``: floats only).

  Examples
  --------
  >>> import jaxlite as jax
  >>> float(jax.nn.sigmoid(0.))
  0.5
  """
  return lax.logistic(x)


@staged
def log_sigmoid(x):
  """``log(sigmoid(x))``, computed as ``-softplus(-x)`` so it stays finite.

  Examples
  --------
  >>> import jaxlite as jax
  >>> round(float(jax.nn.log_sigmoid(-100.)), 3)
  -100.0
  """
  x = _arraylike("log_sigmoid", x)
  return -softplus(-x)


@staged
def softplus(x):
  """``log(1 + exp(x))``, as ``logaddexp(x, 0)`` so large inputs do not overflow.

  Examples
  --------
  >>> import jaxlite as jax
  >>> float(jax.nn.softplus(1000.))
  1000.0
  """
  return jnp.logaddexp(x, 0)


@staged
def soft_sign(x):
  """``x / (|x| + 1)``.

  Examples
  --------
  >>> import jaxlite as jax
  >>> float(jax.nn.soft_sign(1.))
  0.5
  """
  x = _arraylike("soft_sign", x)
  return x / (jnp.abs(x) + 1)


@staged
def silu(x):
  """Sigmoid-weighted linear unit ``x * sigmoid(x)`` (also called swish).

  Examples
  --------
  >>> import jaxlite as jax
  >>> float(jax.nn.silu(0.))
  0.0
  """
  x = _arraylike("silu", x)
  return x * sigmoid(x)


swish = silu


@staged
def hard_sigmoid(x):
  """``relu6(x + 3) / 6``.

  Examples
  --------
  >>> import jaxlite as jax
  >>> float(jax.nn.hard_sigmoid(0.))
  0.5
  """
  return relu6(x + 3.) / 6.


@staged
def hard_silu(x):
  """``x * hard_sigmoid(x)`` (also called hard_swish).

  Examples
  --------
  >>> import jaxlite as jax
  >>> float(jax.nn.hard_silu(3.))
  3.0
  """
  x = _arraylike("hard_silu", x)
  return x * hard_sigmoid(x)


hard_swish = hard_silu


@staged
def hard_tanh(x):
  """``x`` clipped to ``[-1, 1]``, in ``x``'s own dtype (integers stay integers).

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> jax.nn.hard_tanh(jnp.array([-2., 0.5, 2.]))
  Array([-1. ,  0.5,  1. ], dtype=float32)
  """
  x = _arraylike("hard_tanh", x)
  return jnp.where(x > 1, 1, jnp.where(x < -1, -1, x))


@staged
def elu(x, alpha=1.0):
  """``x`` where positive, else ``alpha * (exp(x) - 1)``.

  Examples
  --------
  >>> import jaxlite as jax
  >>> float(jax.nn.elu(2.))
  2.0
  """
  x = _arraylike("elu", x)
  safe_x = jnp.where(x > 0, 0., x)  # keep expm1 of large positives out of the gradient
  return jnp.where(x > 0, x, alpha * jnp.expm1(safe_x))


@staged
def celu(x, alpha=1.0):
  """Continuously differentiable ELU: ``max(x, 0) + alpha * min(expm1(x / alpha), 0)``.

  Examples
  --------
  >>> import jaxlite as jax
  >>> float(jax.nn.celu(1.))
  1.0
  """
  return jnp.maximum(x, 0.0) + alpha * jnp.expm1(jnp.minimum(x, 0.0) / alpha)


@staged
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


@staged
def leaky_relu(x, negative_slope=1e-2):
  """``x`` where non-negative, else ``negative_slope * x``.

  Examples
  --------
  >>> import jaxlite as jax
  >>> round(float(jax.nn.leaky_relu(-10.)), 6)
  -0.1
  """
  x = _arraylike("leaky_relu", x)
  return jnp.where(x >= 0, x, negative_slope * x)


def gelu(x, approximate: bool = True):
  """Gaussian error linear unit: ``x * Phi(x)``, or its tanh approximation.

  Parameters
  ----------
  x : array_like
  approximate : bool
    True (default, as JAX) for ``x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3)))``;
    False for the exact ``x/2 erfc(-x / sqrt(2))``.

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
  x = _arraylike("glu", x)
  if x.shape[axis] % 2:
    raise AssertionError("axis size must be divisible by 2")
  a, b = jnp.split(x, 2, axis)
  return a * sigmoid(b)


@staged
def identity(x):
  """The identity activation: returns ``x`` as an array."""
  return _arraylike("identity", x)


def tanh(x, /):
  """Hyperbolic tangent activation."""
  return jnp.tanh(x)


@staged
def mish(x):
  """Mish activation, ``x * tanh(softplus(x))``."""
  x = _arraylike("mish", x)
  return x * jnp.tanh(softplus(x))


@staged
def squareplus(x, b=4):
  """Squareplus activation, ``(x + sqrt(x**2 + b)) / 2``: a smooth, algebraic ReLU."""
  check_arraylike("squareplus", x, b)
  x, b = as_operand(x), as_operand(b)
  return (x + jnp.sqrt(jnp.square(x) + b)) / 2


@staged
def sparse_plus(x):
  """Sparse plus: ``0`` for ``x <= -1``, ``(x + 1)**2 / 4`` on ``(-1, 1)``, ``x`` above."""
  x = _arraylike("sparse_plus", x)
  return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


@staged
def sparse_sigmoid(x):
  """Sparse sigmoid, the derivative of ``sparse_plus``: ``clip((x + 1) / 2, 0, 1)``."""
  return 0.5 * jnp.clip(x + 1.0, 0.0, 2.0)


@custom_jvp
def log1mexp(x):
  """``log(1 - exp(-x))`` for ``x >= 0``, accurate near 0 and for large ``x`` (Maechler's
  switch at ``log 2``); its derivative is ``1 / expm1(x)``."""
  x = _arraylike("log1mexp", x)
  return jnp.where(x < jnp.log(2.0), jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


log1mexp.defjvps(lambda g, ans, x: g / jnp.expm1(x))


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
  """``log(sum(b * exp(a)))`` over ``axis``, shifted by the maximum so it cannot overflow.

  Parameters
  ----------
  a : array_like
  axis : int or tuple of ints, optional
  b : array_like, optional
    Weights of the terms (may be negative).
  keepdims : bool
  return_sign : bool
    If True, return ``(log(abs(s)), sign(s))``; otherwise a negative sum gives NaN.
  where : array_like of bool, optional
    The elements to include.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> float(jax.nn.logsumexp(jnp.array([1000., 1000.])))
  1000.6931762695312
  """
  if where is not None:
    a = jnp.where(where, a, 0)
  if b is not None:
    a, b = promote_args_inexact("logsumexp", a, b)
    a = jnp.where(b != 0, a, -np.inf)
  else:
    a, = promote_args_inexact("logsumexp", a)
  axes = canonicalize_axes(axis, a.ndim)
  amax = reductions.max(jnp.real(a), axis=axes, keepdims=keepdims, where=where,
                        initial=-np.inf)
  amax = stop_gradient(lax.select(jnp.isfinite(amax), amax, jnp.zeros_like(amax)))
  amax_kept = amax if keepdims else lax_shapes.expand_dims(amax, axes)
  exp_a = lax.exp(lax.sub(a, amax_kept.astype(a.dtype)))
  if b is not None:
    exp_a = lax.mul(exp_a, b)
  sumexp = reductions.sum(exp_a, axis=axes, keepdims=keepdims, where=where)
  sign = lax.sign(sumexp)
  if return_sign or not dtypes.is_complex(a.dtype):
    sumexp = jnp.abs(sumexp)
  out = lax.add(lax.log(sumexp), amax.astype(sumexp.dtype))
  if return_sign:
    return out, sign
  if b is not None and not dtypes.is_complex(out.dtype):
    out = jnp.where(sign < 0, jnp.array(np.nan, dtype=out.dtype), out)
  return out


@staged(static_argnames=("axis", "keepdims"))
def logmeanexp(x, axis=None, where=None, keepdims=False):
  """``log(mean(exp(x)))`` over ``axis``: ``logsumexp`` less the log of the count."""
  lse = logsumexp(x, axis=axis, keepdims=keepdims, where=where)
  count = reductions._count(as_operand(x), axis, keepdims, where, lse.dtype)
  return lse - jnp.log(count)


@staged(static_argnames=("axis",))
def log_softmax(x, axis=-1, where=None):
  """``x - logsumexp(x, axis)``: log-probabilities that stay finite for large inputs;
  ``-inf`` where ``where`` is false.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> jax.nn.log_softmax(jnp.array([0., 0.])).tolist()
  [-0.6931471824645996, -0.6931471824645996]
  """
  x = _arraylike("log_softmax", x)
  x_max = jnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
  x_safe = x if where is None else jnp.where(where, x, -np.inf)
  shifted = x_safe - stop_gradient(x_max)
  shifted_logsumexp = jnp.log(jnp.sum(jnp.exp(shifted), axis, where=where, keepdims=True))
  result = shifted - shifted_logsumexp
  if where is not None:
    return jnp.where(where, result, -np.inf)
  return result


def softmax(x, axis=-1, where=None):
  """``exp(x) / sum(exp(x), axis)``, computed from ``x - max(x)``; 0 where ``where`` is
  false. Differentiated through that formula, or by its own rule under
  ``jax_softmax_custom_jvp`` (the same derivative, rounded otherwise), as in JAX.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> jax.nn.softmax(jnp.array([1e4, 1e4])).tolist()
  [0.5, 0.5]
  """
  if config.jax_softmax_custom_jvp:
    return _softmax_by_rule(x, axis, where)
  return _softmax(x, axis, where, stop_gradient)


def _softmax(x, axis, where, hold=lambda m: m):
  x_max = jnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
  x_safe = x if where is None else jnp.where(where, x, -np.inf)
  unnormalized = jnp.exp(x_safe - hold(x_max))
  result = unnormalized / jnp.sum(unnormalized, axis, where=where, keepdims=True)
  if where is not None:
    result = jnp.where(where, result, 0)
  return result


@functools.partial(custom_jvp, nondiff_argnums=(1,))
def _softmax_by_rule(x, axis, where):
  return _softmax(x, axis, where)


@_softmax_by_rule.defjvp
def _softmax_jvp(axis, primals, tangents):
  (x, where), (x_dot, _) = primals, tangents
  y = _softmax_by_rule(x, axis, where)
  return y, y * (x_dot - jnp.sum(y * x_dot, axis, where=where, keepdims=True))


@staged(static_argnames=("axis",))
def standardize(x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *,
                algorithm="fast"):
  """Normalise ``x`` to zero mean and unit variance along ``axis`` (over the elements
  where ``where`` holds).

  ``algorithm="fast"`` (JAX's default) takes the variance as ``E[x^2] - E[x]^2``,
  clipped at 0; ``"stable"`` as ``E[(x - E[x])^2]``.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> y = jax.nn.standardize(jnp.array([1., 2., 3.]))
  >>> round(float(y.mean()), 6), round(float(y.var()), 3)
  (0.0, 1.0)
  """
  check_arraylike("standardize", x)
  check_arraylike("standardize", *[v for v in (mean, variance, where) if v is not None])
  if mean is None:
    mean = jnp.mean(x, axis, keepdims=True, where=where)
  if variance is None:
    if algorithm == "stable":
      variance = jnp.mean(jnp.square(jnp.subtract(x, mean)), axis, keepdims=True,
                          where=where)
    elif algorithm == "fast":
      variance = jnp.mean(jnp.square(x), axis, keepdims=True, where=where) - \
          jnp.square(mean)
      variance = jnp.clip(variance, 0)
    else:
      raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
  return jnp.subtract(x, mean) * lax.rsqrt(variance + epsilon)


def one_hot(x, num_classes, *, dtype=None, axis=-1):
  """One-hot encode integer ``x``: a new ``num_classes`` axis at ``axis``.

  Out-of-range entries (negative or ``>= num_classes``) give an all-zero vector.
  Non-integer input is deprecated (as in JAX) and boolean input is a TypeError.

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> jax.nn.one_hot(jnp.array([0, 2]), 3)
  Array([[1., 0., 0.],
         [0., 0., 1.]], dtype=float32)
  """
  num_classes = int(num_classes)
  x = jnp.asarray(x)
  if not dtypes.is_integer(x.dtype):
    warnings.warn(f"jax.nn.one_hot input should be integer-typed; got dtype={x.dtype}",
                  DeprecationWarning, stacklevel=2)
  return _one_hot(x, num_classes, dtype=dtype, axis=axis)


@staged(static_argnames=("num_classes", "dtype", "axis"))
def _one_hot(x, num_classes, *, dtype, axis):
  dtype = dtypes.default_float_dtype() if dtype is None else dtype
  out_axis = canonicalize_axis(axis, x.ndim + 1)
  lhs = lax_shapes.expand_dims(x, (out_axis,))
  rhs_shape = [1] * x.ndim
  rhs_shape.insert(out_axis, num_classes)
  rhs = lax_shapes.broadcasted_iota(x.dtype, rhs_shape, out_axis)
  return (lhs == rhs).astype(dtype)
