"""``jaxlite.scipy.stats``: the summary functions ``mode``, ``rankdata`` and ``sem``
(``jax.scipy.stats``), with JAX 0.10.2's ``nan_policy`` rules and errors."""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.core.array import Array
from jaxlite._src.lax import control_flow
from jaxlite._src.lax import sorting as lax_sorting
from jaxlite._src.lax.call import staged
from jaxlite._src.libraries.numpy import namespace as jnp
from jaxlite._src.libraries.numpy.util import (
    canonicalize_axis, check_arraylike, promote_args_inexact)


class ModeResult(NamedTuple):
  """The result of :func:`mode`: the modal values and how often each occurs."""
  mode: Array
  count: Array


def _check_nan_policy(fun_name, nan_policy):
  """``mode`` and ``rankdata`` implement only ``"propagate"``, as in JAX: whether an array
  holds nans is not known while it is traced, and omitting them changes result shapes."""
  if nan_policy not in ["propagate", "omit", "raise"]:
    raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                     "{'propagate', 'omit', 'raise'}")
  if nan_policy == "omit":
    raise NotImplementedError(
        f"Logic for `nan_policy` of {nan_policy} is not implemented. {fun_name} supports "
        "only nan_policy='propagate'; drop the nans first, e.g. x[~jnp.isnan(x)].")
  if nan_policy == "raise":
    raise NotImplementedError(
        f"In order to best JIT compile `{fun_name}`, we cannot know whether `x` contains "
        "nans. Please check if nans exist in `x` outside of the "
        f"`{fun_name}` function.")


def _mode_1d(x):
  """The most common value of the 1-d ``x`` (the smallest among ties) and its count."""
  if x.size == 0:
    return (jnp.array(np.nan, dtype=dtypes.default_float_dtype()),
            jnp.array(0, dtype=dtypes.default_float_dtype()))
  vals, counts = jnp.unique(x, return_counts=True, size=x.size)
  return vals[jnp.argmax(counts)], counts.max()


@staged(static_argnames=("axis", "nan_policy", "keepdims"))
def mode(a, axis=0, nan_policy="propagate", keepdims=False):
  """Compute the mode (most common value) along an axis of an array
  (``scipy.stats.mode``).

  Parameters
  ----------
  a : array_like
    The values.
  axis : int or None, default 0
    Axis along which to find the mode; ``None`` uses the flattened array.
  nan_policy : str, default "propagate"
    Only ``"propagate"`` is supported (``"omit"`` and ``"raise"`` raise
    ``NotImplementedError``, as in JAX).
  keepdims : bool, default False
    Keep the reduced axis with size 1.

  Returns
  -------
  ModeResult
    ``(mode, count)``: the modal values (the smallest among ties) and their counts.
  """
  check_arraylike("mode", a)
  x = jnp.atleast_1d(a)
  _check_nan_policy("mode", nan_policy)
  if axis is not None:
    axis = canonicalize_axis(axis, x.ndim)
  if axis is None:
    output_shape = (1,) * x.ndim if keepdims else ()
    x = x.ravel()
    axis = 0
  else:
    output_shape = tuple(1 if i == axis else s for i, s in enumerate(x.shape)
                         if keepdims or i != axis)
  x = jnp.moveaxis(x, axis, 0)
  x = x.reshape(x.shape[0], math.prod(x.shape[1:]))
  vals, counts = control_flow.vmap_axis(_mode_1d, x, x.shape[1], in_axis=1)
  return ModeResult(vals.reshape(output_shape), counts.reshape(output_shape))


def _invert_permutation(i):
  return jnp.empty_like(i).at[i].set(jnp.arange(i.size, dtype=i.dtype))


_RANK_METHODS = ("average", "min", "max", "dense", "ordinal")


def _ranks_1d(a, method):
  """The ranks of the 1-d ``a`` (no nans) by ``method``, as floats."""
  out_dtype = dtypes.default_float_dtype()
  arr, sorter = lax_sorting.sort_key_val(a, jnp.arange(a.size))
  inv = _invert_permutation(sorter)
  if method == "ordinal":
    return (inv + 1).astype(out_dtype)
  obs = jnp.concatenate([jnp.array([True]), arr[1:] != arr[:-1]])
  dense = obs.cumsum()[inv]
  if method == "dense":
    return dense.astype(out_dtype)
  # count[j]: how many values are below the (j + 1)-th distinct value
  count = jnp.nonzero(obs, size=arr.size + 1, fill_value=obs.size)[0].astype(out_dtype)
  if method == "max":
    return count[dense]
  if method == "min":
    return count[dense - 1] + 1
  return .5 * (count[dense] + count[dense - 1] + 1)


@staged(static_argnames=("method", "axis", "nan_policy"))
def rankdata(a, method="average", *, axis=None, nan_policy="propagate"):
  """Compute the rank of data along an array axis (``scipy.stats.rankdata``).

  Parameters
  ----------
  a : array_like
    The values.
  method : {"average", "min", "max", "dense", "ordinal"}, default "average"
    How tied values are ranked.
  axis : int or None, default None
    Rank along this axis; ``None`` ranks the flattened array.
  nan_policy : str, default "propagate"
    Only ``"propagate"`` (a slice holding a nan ranks as all nan) is supported.

  Returns
  -------
  Array
    Ranks starting at 1, in the default float dtype.
  """
  check_arraylike("rankdata", a)
  _check_nan_policy("rankdata", nan_policy)
  if method not in _RANK_METHODS:
    raise ValueError(f"unknown method '{method}'; expected one of {_RANK_METHODS}")
  if axis is not None:
    return jnp.apply_along_axis(rankdata, axis, a, method)
  a = jnp.ravel(a)
  out_dtype = dtypes.default_float_dtype()
  return control_flow.cond(jnp.any(jnp.isnan(a)),
                           lambda a: jnp.full_like(a, jnp.nan, out_dtype),
                           lambda a: _ranks_1d(a, method), a)


@staged(static_argnames=("axis", "nan_policy", "keepdims"))
def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
  """Compute the standard error of the mean (``scipy.stats.sem``).

  Parameters
  ----------
  a : array_like
    The values.
  axis : int or None, default 0
    Axis along which to compute; ``None`` uses the flattened array.
  ddof : int, default 1
    Delta degrees of freedom of the standard deviation.
  nan_policy : {"propagate", "omit"}, default "propagate"
    ``"omit"`` leaves the nans out of the standard deviation and the count.
  keepdims : bool, default False
    Keep the reduced axis with size 1.

  Returns
  -------
  Array
    ``std(a, ddof=ddof) / sqrt(count)``.
  """
  b, = promote_args_inexact("sem", a)
  if nan_policy == "propagate":
    size = b.size if axis is None else b.shape[axis]
    return b.std(axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(size).astype(b.dtype)
  if nan_policy == "omit":
    count = (~jnp.isnan(b)).sum(axis, keepdims=keepdims)
    return jnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(count).astype(b.dtype)
  raise ValueError(f"{nan_policy} is not supported; sem accepts nan_policy='propagate' or "
                   "'omit'.")
