"""The functions of ``jax.nn`` that JAX runs as cuDNN kernels on a GPU:
``dot_product_attention``, here its reference ("xla") implementation, and
``scaled_matmul`` and ``scaled_dot_general``'s block-scaled form, which on a CPU raise
after checking their arguments, as JAX's do."""
from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.lax import reductions as lax_reductions

from jaxlite._src.libraries.numpy import namespace as jnp
from jaxlite._src.libraries.nn import functions as fn

__all__ = ["dot_product_attention", "scaled_matmul", "scaled_dot_general",
           "get_scaled_dot_general_config"]


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
  # of the logits' rank, so that no broadcast below promotes ranks (rank_promotion='raise')
  rows = jnp.arange(t)[None, None, :, None]
  cols = jnp.arange(s)[None, None, None, :]
  if is_causal:
    allowed = allowed & (cols <= rows)
  if local_window_size is not None:
    left, right = ((local_window_size, local_window_size)
                   if isinstance(local_window_size, int) else local_window_size)
    allowed = allowed & (cols >= rows - left) & (cols <= rows + right)
  if query_seq_lengths is not None:
    allowed = allowed & (rows < jnp.asarray(query_seq_lengths)[:, None, None, None])
  if key_value_seq_lengths is not None:
    allowed = allowed & (cols < jnp.asarray(key_value_seq_lengths)[:, None, None, None])
  big_neg = float(np.finfo(np.float32).min) * 0.7
  logits = jnp.where(allowed, logits, big_neg)
  probs = fn.softmax(logits, axis=-1).astype(query.dtype)
  probs = jnp.reshape(probs, (b, k, n // k, t, s))
  out = jnp.reshape(jnp.einsum("bkgts,bskh->btkgh", probs, value), (b, t, n, h))
  if query_seq_lengths is not None:   # JAX zeroes the padded queries' outputs
    valid = jnp.arange(t)[None, :] < jnp.asarray(query_seq_lengths)[:, None]
    out = out * valid[:, :, None, None].astype(out.dtype)
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


@dataclasses.dataclass(slots=True)
class BlockScaleConfig:
  """How ``scaled_dot_general`` quantizes an operand: blocks of ``block_size`` values of
  ``data_type`` sharing one scale of ``scale_type`` (times ``global_scale``, if any)."""
  mode: str
  block_size: int
  data_type: Any
  scale_type: Any
  global_scale: Any
  infer_only: bool


def get_scaled_dot_general_config(mode, global_scale=None) -> BlockScaleConfig:
  """The quantization of ``scaled_dot_general`` for ``mode`` 'nvfp4' (blocks of 16
  float4_e2m1fn values, float8_e4m3fn scales, ``global_scale`` defaulting to ``[1.]``) or
  'mxfp8' (blocks of 32 float8_e4m3fn values, float8_e8m0fnu scales)
  (``jax.nn.get_scaled_dot_general_config``)."""
  if mode == "nvfp4":
    one = jnp.ones((1,), dtype=np.float32)
    return BlockScaleConfig(mode="nvfp4", block_size=16, data_type=dtypes.float4_e2m1fn,
                            scale_type=dtypes.float8_e4m3fn,
                            global_scale=one if global_scale is None else global_scale,
                            infer_only=False)
  if mode == "mxfp8":
    return BlockScaleConfig(mode="mxfp8", block_size=32, data_type=dtypes.float8_e4m3fn,
                            scale_type=dtypes.float8_e8m0fnu, global_scale=None,
                            infer_only=False)
  raise ValueError(f"Unsupported mode: {mode}")


def scaled_dot_general(lhs, rhs, dimension_numbers, preferred_element_type=np.float32,
                       configs=None, implementation=None):
  """``lax.dot_general`` with the operands block-quantized as ``configs`` say
  (``jax.nn.scaled_dot_general``).

  Parameters
  ----------
  lhs, rhs : array_like
  dimension_numbers : ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))
  preferred_element_type : dtype
    The result's type (float32 by default; bfloat16 and float16 too).
  configs : list of BlockScaleConfig, optional
    For lhs, rhs and the gradients (``get_scaled_dot_general_config``). None: a plain
    ``lax.dot_general``. Given, the product is ``scaled_matmul``, a cuDNN kernel: on a
    CPU it raises NotImplementedError, as JAX's does.
  implementation : None
    Deprecated and ignored, as in JAX (a DeprecationWarning).
  """
  if implementation is not None:
    warnings.warn("Backend selector, now ignored. The system chooses the backend "
                  "automatically.", DeprecationWarning)
  if configs is None:
    return lax_reductions.dot_general(lhs, rhs, dimension_numbers,
                                      preferred_element_type=preferred_element_type)
  raise NotImplementedError(
      "MLIR translation rule for primitive 'scaled_matmul' not found for platform cpu")
