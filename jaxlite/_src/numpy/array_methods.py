"""Operators and methods of ``Array`` and ``Tracer``, installed from ``jaxlite.numpy``.

Both classes get the same functions, so an expression means the same thing eagerly and
under every transformation.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.array import Array
from jaxlite._src.core import Tracer
from jaxlite._src.numpy import indexing, lax_numpy, math, reductions, ufuncs
from jaxlite._src.numpy.util import _ARRAYLIKE


def _defer_to_unrecognized(binary_op, swap=False):
  """Return NotImplemented for operands jnp does not accept, so Python can try theirs."""
  def method(self, other):
    if not isinstance(other, _ARRAYLIKE) and not hasattr(other, "__jax_array__"):
      return NotImplemented
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


def _reshape(self, *shape, order="C"):
  if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
    shape = shape[0]
  return lax_numpy.reshape(self, shape, order)


def _transpose(self, *axes):
  if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
    axes = axes[0]
  return lax_numpy.transpose(self, axes or None)


_METHODS = {
    "astype": lax_numpy.astype, "reshape": _reshape, "transpose": _transpose,
    "ravel": lax_numpy.ravel, "flatten": lax_numpy.ravel, "squeeze": lax_numpy.squeeze,
    "swapaxes": lax_numpy.swapaxes, "dot": lax_numpy.dot, "clip": ufuncs.clip,
    "round": ufuncs.round, "sum": reductions.sum, "prod": reductions.prod,
    "max": reductions.max, "min": reductions.min, "mean": reductions.mean,
    "var": reductions.var, "std": reductions.std, "argmax": reductions.argmax,
    "argmin": reductions.argmin, "any": reductions.any, "all": reductions.all,
    "copy": lambda self: lax_numpy.astype(self, self.dtype),
    "__getitem__": indexing.getitem,
}
def _array_namespace(self, /, *, api_version=None):
  """The Array API namespace of these arrays: ``jaxlite.numpy``."""
  if api_version not in (None, "2023.12", "2024.12"):
    raise ValueError(f"Unrecognized array API version {api_version!r}; jaxlite.numpy follows "
                     "2023.12.")
  import jaxlite.numpy
  return jaxlite.numpy


_METHODS["__array_namespace__"] = _array_namespace

_PROPERTIES = {
    "T": lambda self: lax_numpy.transpose(self),
    "mT": lambda self: lax_numpy.matrix_transpose(self),
    "at": indexing.at,
}


def install(cls):
  for name, fn in _BINARY.items():
    setattr(cls, f"__{name}__", _defer_to_unrecognized(fn))
    setattr(cls, f"__r{name}__", _defer_to_unrecognized(fn, swap=True))
  for name, fn in _COMPARE.items():
    setattr(cls, f"__{name}__", _defer_to_unrecognized(fn))
  for name, fn in _UNARY.items():
    setattr(cls, f"__{name}__", fn)
  for name, fn in _METHODS.items():
    setattr(cls, name, fn)
  for name, fn in _PROPERTIES.items():
    setattr(cls, name, property(fn))


for _cls in (Array, Tracer):
  install(_cls)
