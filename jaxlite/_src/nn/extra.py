"""More of ``jax.nn``: small activations, ``logmeanexp`` and a reference
``dot_product_attention``, composed from ``jaxlite.numpy``."""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.numpy import namespace as jnp
from jaxlite._src.lax.call import staged
from jaxlite._src.lax.custom_derivatives import custom_jvp
from jaxlite._src.nn import functions as fn
from jaxlite._src.numpy import reductions
from jaxlite._src.numpy.util import as_operand, check_arraylike

__all__ = ["identity", "tanh", "mish", "squareplus", "sparse_plus", "sparse_sigmoid",
           "log1mexp", "logmeanexp", "dot_product_attention", "scaled_matmul"]


@staged
def identity(x):
  """The identity activation: returns ``x`` as an array."""
  return fn._arraylike("identity", x)


def tanh(x, /):
  """Hyperbolic tangent activation."""
  return jnp.tanh(x)


@staged
def mish(x):
  """Mish activation, ``x * tanh(softplus(x))``."""
  x = fn._arraylike("mish", x)
  return x * jnp.tanh(fn.softplus(x))


@staged
def squareplus(x, b=4):
  """Squareplus activation, ``(x + sqrt(x**2 + b)) / 2``: a smooth, algebraic ReLU."""
  check_arraylike("squareplus", x, b)
  x, b = as_operand(x), as_operand(b)
  return (x + jnp.sqrt(jnp.square(x) + b)) / 2


@staged
def sparse_plus(x):
  """Sparse plus: ``0`` for ``x <= -1``, ``(x + 1)**2 / 4`` on ``(-1, 1)``, ``x`` above."""
  x = fn._arraylike("sparse_plus", x)
  return jnp.where(x <= -1.0, 0.0, jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


@staged
def sparse_sigmoid(x):
  """Sparse sigmoid, the derivative of ``sparse_plus``: ``clip((x + 1) / 2, 0, 1)``."""
  return 0.5 * jnp.clip(x + 1.0, 0.0, 2.0)


@custom_jvp
def log1mexp(x):
  """``log(1 - exp(-x))`` for ``x >= 0``, accurate near 0 and for large ``x`` (Maechler's
  switch at ``log 2``); its derivative is ``1 / expm1(x)``."""
  x = fn._arraylike("log1mexp", x)
  return jnp.where(x < jnp.log(2.0), jnp.log(-jnp.expm1(-x)), jnp.log1p(-jnp.exp(-x)))


log1mexp.defjvps(lambda g, ans, x: g / jnp.expm1(x))


@staged(static_argnames=("axis", "keepdims"))
def logmeanexp(x, axis=None, where=None, keepdims=False):
  """``log(mean(exp(x)))`` over ``axis``: ``logsumexp`` less the log of the count."""
  lse = fn.logsumexp(x, axis=axis, keepdims=keepdims, where=where)
  count = reductions._count(as_operand(x), axis, keepdims, where, lse.dtype)
  return lse - jnp.log(count)


def dot_product_attention(query, key, value, bias=None, mask=None, *, scale=None,
                          is_causal=False, query_seq_lengths=None,
                          key_value_seq_lengths=None, local_window_size=None,
                          implementation=None, return_residual=False):
  """Scaled dot-product attention, ``softmax(q k^T * scale + bias, masked) v``.

  Shapes are ``[B, T, N, H]`` for ``query`` and ``[B, S, K, H]`` for ``key``/``value``
  (the batch axis may be omitted); ``N`` must be a multiple of ``K`` (grouped-query
  attention). ``bias`` and the boolean ``mask`` broadcast to ``[B, N, T, S]``. This is
  the reference ("xla") implementation; ``implementation='cudnn'`` is not available.
  With ``return_residual`` the log-sum-exp of the logits, ``[B, T, N]``, comes too.
  """
  if implementation not in (None, "xla"):
    raise NotImplementedError(f"dot_product_attention: implementation={implementation!r}"
                              " is not available; use None or 'xla'")
  query, key, value = jnp.asarray(query), jnp.asarray(key), jnp.asarray(value)
  unbatched = query.ndim == 3
  if unbatched:
    query, key, value = query[None], key[None], value[None]
  if query.ndim != 4 or key.ndim != 4 or value.ndim != 4:
    raise ValueError("query, key and value must have rank 3 or 4, got shapes "
                     f"{query.shape}, {key.shape}, {value.shape}")
  b, t, n, h = query.shape
  s, k = key.shape[1], key.shape[2]
  if n % k:
    raise ValueError(f"the number of query heads {n} must be a multiple of the number of "
                     f"key/value heads {k}")
  scale = 1.0 / math.sqrt(h) if scale is None else scale
  q = jnp.reshape(query, (b, t, k, n // k, h))
  logits = jnp.einsum("btkgh,bskh->bkgts", q, key) * jnp.asarray(scale, query.dtype)
  logits = jnp.reshape(logits, (b, n, t, s)).astype(jnp.float32)
  if bias is not None:
    bias = jnp.asarray(bias)
    logits = logits + (bias[None] if unbatched and bias.ndim == 3 else bias)
  allowed = jnp.ones((b, n, t, s), dtype=bool)
  if mask is not None:
    mask = jnp.asarray(mask)
    allowed = allowed & (mask[None] if unbatched and mask.ndim == 3 else mask)
  rows = jnp.arange(t)[:, None]
  cols = jnp.arange(s)[None, :]
  if is_causal:
    allowed = allowed & (cols <= rows)
  if local_window_size is not None:
    left, right = ((local_window_size, local_window_size)
                   if isinstance(local_window_size, int) else local_window_size)
    allowed = allowed & (cols >= rows - left) & (cols <= rows + right)
  if query_seq_lengths is not None:
    allowed = allowed & (rows[None, None] < jnp.asarray(query_seq_lengths)[:, None, None,
                                                                           None])
  if key_value_seq_lengths is not None:
    allowed = allowed & (cols[None, None] < jnp.asarray(key_value_seq_lengths)[
        :, None, None, None])
  big_neg = float(np.finfo(np.float32).min) * 0.7
  logits = jnp.where(allowed, logits, big_neg)
  probs = fn.softmax(logits, axis=-1).astype(query.dtype)
  probs = jnp.reshape(probs, (b, k, n // k, t, s))
  out = jnp.reshape(jnp.einsum("bkgts,bskh->btkgh", probs, value), (b, t, n, h))
  if unbatched:
    out = out[0]
  if return_residual:
    lse = jnp.transpose(fn.logsumexp(logits, axis=-1), (0, 2, 1))
    return out, (lse[0] if unbatched else lse)
  return out


def scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, preferred_element_type=np.float32):
  """Block-scaled batched matmul ``(lhs * lhs_scales) @ (rhs * rhs_scales)^T`` with
  ``lhs [B, M, K]``, ``rhs [B, N, K]`` and scales ``[B, M, K/bs]``, ``[B, N, K/bs]``.

  The shapes are checked as JAX checks them; the product itself exists in JAX only as
  a cuDNN kernel (GPU), and on CPU, like JAX, this raises NotImplementedError.
  """
  shapes = [np.shape(v) for v in (lhs, rhs, lhs_scales, rhs_scales)]
  if any(len(s) != 3 for s in shapes):
    raise ValueError("scaled_matmul requires all inputs to be 3-dimensional arrays")
  (ba, ma, ka), (bb, nb, kb), (bas, mas, kas), (bbs, nbs, kbs) = shapes
  if ka != kb or ba != bb:
    raise ValueError("scaled_matmul requires inputs a and b to have matching batch (B) "
                     f"and contract (K) dimensions, but got shapes {shapes[0]} and "
                     f"{shapes[1]}")
  if kas != kbs or bas != bbs:
    raise ValueError("scaled_matmul requires scales to have matching batch (B) and "
                     f"contract (K) dimensions, but got shapes {shapes[2]} and {shapes[3]}")
  if mas != ma or nbs != nb:
    raise ValueError("scaled_matmul requires scales to match non-contract dimensions of "
                     f"inputs, but got shapes a: {shapes[0]}, b: {shapes[1]}, a_scales: "
                     f"{shapes[2]}, b_scales: {shapes[3]}")
  raise NotImplementedError(
      "scaled_matmul is a cuDNN (GPU) kernel with no CPU implementation, as in JAX; "
      "on CPU multiply each operand by its scales repeated over their blocks and use "
      "jnp.einsum('bmk,bnk->bmn', ...).")
