"""Operators and methods of ``Array`` and ``Tracer``, installed from ``jaxlite.numpy``.

Both classes get the same functions, so an expression means the same thing eagerly and
under every transformation.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.core.array import Array
from jaxlite._src.core.core import Tracer
from jaxlite._src.lax import bits as lax_bits
from jaxlite._src.lax import elementwise as lax_ew
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.libraries.numpy import (array_api, array_ops, indexing, lax_numpy, math, reductions,
                                sorting, ufuncs)
from jaxlite._src.libraries.numpy.util import _ARRAYLIKE


def _defer_to_unrecognized(binary_op, swap=False):
  """Return NotImplemented for operands jnp does not accept, so Python can try theirs."""
  def method(self, other):
    if not isinstance(other, _ARRAYLIKE):   # (first: hasattr of a missing name raises)
      if not hasattr(other, "__jax_array__"):
        return NotImplemented
      other = other.__jax_array__()   # as JAX's operators do (an nnx Variable, say)
    return binary_op(other, self) if swap else binary_op(self, other)
  method.__name__ = binary_op.__name__
  return method


_BINARY = {
    "add": ufuncs.add, "sub": ufuncs.subtract, "mul": ufuncs.multiply,
    "truediv": ufuncs.true_divide, "floordiv": ufuncs.floor_divide, "mod": ufuncs.remainder,
    "divmod": ufuncs.divmod, "pow": ufuncs.power, "matmul": lax_numpy.matmul,
    "and": ufuncs.bitwise_and, "or": ufuncs.bitwise_or, "xor": ufuncs.bitwise_xor,
    "lshift": math.left_shift, "rshift": math.right_shift,
}
_COMPARE = {"lt": ufuncs.less, "le": ufuncs.less_equal, "gt": ufuncs.greater,
            "ge": ufuncs.greater_equal, "eq": ufuncs.equal, "ne": ufuncs.not_equal}
_UNARY = {"neg": ufuncs.negative, "pos": ufuncs.positive, "abs": ufuncs.absolute,
          "invert": ufuncs.invert}


# The methods below that forward to a jnp function take JAX's method signatures, which
# differ from the functions' (keyword order, arguments the methods lack).

def _reshape(self, *args, order="C", out_sharding=None):
  shape = args[0] if len(args) == 1 and not isinstance(args[0], (int, np.integer)) else args
  return lax_numpy.reshape(self, shape, order, out_sharding=out_sharding)


def _transpose(self, *args):
  axes = args[0] if len(args) == 1 and (args[0] is None or
                                        isinstance(args[0], (tuple, list))) else args
  return lax_numpy.transpose(self, axes or None)


def _compress(self, condition, axis=None, *, out=None, size=None, fill_value=0):
  return sorting.compress(condition, self, axis, size=size, fill_value=fill_value, out=out)


def _nonzero(self, *, fill_value=None, size=None):
  return sorting.nonzero(self, size=size, fill_value=fill_value)


def _argsort(self, axis=-1, *, kind=None, order=None, stable=True, descending=False):
  return sorting.argsort(self, axis, kind=kind, order=order, stable=stable,
                         descending=descending)


def _dot(self, b, *, precision=None, preferred_element_type=None):
  return lax_numpy.dot(self, b, precision=precision,
                       preferred_element_type=preferred_element_type)


def _var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
         correction=None):
  return reductions.var(self, axis, dtype, out, ddof, keepdims, where=where,
                        correction=correction)


def _std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
         correction=None):
  return reductions.std(self, axis, dtype, out, ddof, keepdims, where=where,
                        correction=correction)


def _choose(self, choices, out=None, mode="raise"):
  return indexing.choose(self, choices, out, mode)


def _view(self, dtype=None, type=None):
  """The bits of ``self`` read as ``dtype`` (``numpy.ndarray.view``).

  A narrower dtype lengthens the last axis and a wider one shortens it, as NumPy does;
  bool counts as 8 bits and a complex value as its real and imaginary parts in turn.
  """
  if type is not None:
    raise NotImplementedError("`type` argument of array.view() is not supported.")
  if dtype is None:
    return self
  dtype = dtypes.canonicalize_dtype(np.dtype(dtype))
  bits_in, bits_out = self.dtype.itemsize, dtype.itemsize
  if self.ndim == 0:
    if bits_in != bits_out:
      raise ValueError("view() of a 0d array is only supported if the itemsize is unchanged.")
    return _view(lax_numpy.expand_dims(self, 0), dtype).squeeze()
  if (self.shape[-1] * bits_in) % bits_out:
    raise ValueError("When changing to a larger dtype, its size must be a divisor of the "
                     "total size in bytes of the last axis of the array.")
  if self.dtype == dtype:
    return self
  # bitcast_convert_type takes neither bool nor complex: go through their bit-equivalents
  if self.dtype == np.bool_:
    return _view(self.astype(np.uint8), dtype)
  if dtypes.is_complex(self.dtype):
    parts = lax_numpy.stack([math.real(self), math.imag(self)], axis=-1)
    return _view(parts.reshape(*self.shape[:-1], 2 * self.shape[-1]), dtype)
  if dtype == np.bool_:
    return _view(self, np.uint8).astype(np.bool_)
  if dtypes.is_complex(dtype):
    parts = _view(self, dtypes.finfo(dtype).dtype)
    return lax_numpy.astype(parts[..., 0::2], dtype) + 1j * parts[..., 1::2]
  if bits_in < bits_out:
    factor = bits_out // bits_in
    grouped = self.reshape(*self.shape[:-1], self.shape[-1] // factor, factor)
    return lax_bits.bitcast_convert_type(grouped, dtype)
  out = lax_bits.bitcast_convert_type(self, dtype)
  return out.reshape(*self.shape[:-1], -1)


def _astype(self, dtype, copy=False, device=None):
  return lax_numpy.astype(self, dtype, copy=copy, device=device)


def _byteswap(self):
  """The elements with their bytes in reverse order, in the same dtype (as NumPy's)."""
  if dtypes.is_complex(self.dtype):
    return lax_ew.complex(_byteswap(self.real), _byteswap(self.imag))
  if self.dtype.itemsize == 1:
    return array_ops.copy(self)
  as_bytes = lax_bits.bitcast_convert_type(self, np.uint8)
  return lax_bits.bitcast_convert_type(lax_shapes.rev(as_bytes, (self.ndim,)), self.dtype)


def _item(self, *args):
  return core.concrete_or_error(np.asarray, self,
                                "This occurred in the item() method of jax.Array").item(*args)


def _round_operator(self, ndigits=None):
  """``round(x)`` gives an integer array (Python's round gives an int), ``round(x, n)``
  rounds to ``n`` decimals keeping the dtype."""
  out = ufuncs.round(self, decimals=ndigits or 0)
  return lax_numpy.astype(out, int) if ndigits is None else out


_METHODS = {
    "__round__": _round_operator, "astype": _astype, "byteswap": _byteswap, "reshape": _reshape, "transpose": _transpose,
    "ravel": lax_numpy.ravel, "flatten": lax_numpy.ravel, "squeeze": lax_numpy.squeeze,
    "swapaxes": lax_numpy.swapaxes, "dot": _dot, "clip": ufuncs.clip,
    "round": ufuncs.round, "sum": reductions.sum, "prod": reductions.prod,
    "max": reductions.max, "min": reductions.min, "mean": reductions.mean,
    "var": _var, "std": _std, "argmax": reductions.argmax,
    "argmin": reductions.argmin, "any": reductions.any, "all": reductions.all,
    "copy": lambda self: array_ops.copy(self),   # a new Array (donating self keeps it)
    # as JAX's, the copy protocol copies too (objects forwarding attributes to an array,
    # flax.nnx's hijax Variables, find them there)
    "__copy__": lambda self: array_ops.copy(self),
    "__deepcopy__": lambda self, memo: array_ops.copy(self),
    "__getitem__": indexing.getitem, "repeat": array_ops.repeat, "take": indexing.take,
    "trace": array_ops.trace, "diagonal": array_ops.diagonal, "compress": _compress,
    "choose": _choose, "sort": sorting.sort, "argsort": _argsort,
    "argpartition": sorting.argpartition, "nonzero": _nonzero,
    "searchsorted": sorting.searchsorted, "view": _view, "item": _item,
}
def __array_namespace__(self, /, *, api_version=None):
  """The Array API namespace of these arrays: ``jaxlite.numpy``, which implements the
  standard's version ``2024.12`` (the only one it answers for, as JAX's)."""
  if api_version is not None and api_version != array_api.__array_api_version__:
    raise ValueError(f"{api_version=!r} is not available; available versions are: "
                     f"{[array_api.__array_api_version__]}")
  return _NAMESPACE[0]


# The public ``jaxlite.numpy`` module registers itself here when imported: ``_src`` never
# imports the public package, yet ``__array_namespace__`` must return it.
_NAMESPACE = [None]


def register_namespace(module):
  """Record ``module`` (the public ``jaxlite.numpy``) as the Array API namespace."""
  _NAMESPACE[0] = module


_METHODS["__array_namespace__"] = __array_namespace__
_METHODS["__dlpack__"] = array_api.__dlpack__
_METHODS["__dlpack_device__"] = array_api.__dlpack_device__
_METHODS["to_device"] = array_api.to_device

_PROPERTIES = {
    "T": lambda self: lax_numpy.transpose(self),
    "mT": lambda self: lax_numpy.matrix_transpose(self),
    "at": indexing.at,
    "nbytes": lambda self: self.size * self.dtype.itemsize,
    "itemsize": lambda self: self.dtype.itemsize,
}


def method_table() -> dict:
  """Every operator, method and property of an array, by attribute name."""
  table = {}
  for name, fn in _BINARY.items():
    table[f"__{name}__"] = _defer_to_unrecognized(fn)
    table[f"__r{name}__"] = _defer_to_unrecognized(fn, swap=True)
  for name, fn in _COMPARE.items():
    table[f"__{name}__"] = _defer_to_unrecognized(fn)
  table.update((f"__{name}__", fn) for name, fn in _UNARY.items())
  table.update(_METHODS)
  table.update((name, property(fn)) for name, fn in _PROPERTIES.items())
  return table


for _cls in (Array, Tracer):
  _cls.install_methods(method_table())
