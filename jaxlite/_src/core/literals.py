"""The values a jaxpr literal holds, as JAX 0.10 holds them (``jax._src.literals``).

A Python ``int``, ``float`` or ``complex`` written inline in a jaxpr becomes a
``TypedInt``, ``TypedFloat`` or ``TypedComplex``: the number itself (a subclass of the
Python type) that also carries the dtype it was given, weakly typed. Any other scalar
constant (a NumPy scalar or 0-d array, a folded conversion, an Array made while tracing)
becomes a ``TypedNdArray``: a 0-d NumPy array carrying its abstract value, weak type
included. A ``bool`` stays a ``bool``. These are the ``.val`` of ``Literal`` users read,
and, being host values of their own types, they stay literals when a jaxpr is staged
again (an Array from before a trace would be a constvar).
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.core import core
from jaxlite._src.core.core import ShapedArray


class _TypedScalar:
  """A Python number (the class's second base) carrying the (weak) dtype it was given."""
  __slots__ = ()

  def __new__(cls, value, dtype):
    v = super().__new__(cls, value)
    v.dtype = np.dtype(dtype)
    v.aval = ShapedArray((), v.dtype, weak_type=True)
    return v

  def _number(self):
    return type(self).__mro__[2](self)   # (int, float or complex)

  def __repr__(self):
    return f"{type(self).__name__}({self._number()}, dtype={self.dtype.name})"

  def __getnewargs__(self):
    return (self._number(), self.dtype)


class TypedInt(_TypedScalar, int):
  """A Python int carrying its (weak) dtype (in an instance dict, as JAX's: an int
  subclass cannot have slots). Printed as its repr, as JAX's."""
  dtype: np.dtype
  aval: ShapedArray


class TypedFloat(_TypedScalar, float):
  """A Python float carrying its (weak) dtype; printed as the number, as JAX's."""
  __slots__ = ("dtype", "aval")

  def __str__(self):
    return str(float(self))


class TypedComplex(_TypedScalar, complex):
  """A Python complex carrying its (weak) dtype."""
  __slots__ = ("dtype", "aval")


class TypedNdArray(np.ndarray):
  """A host NumPy array carrying its abstract value (weak type included)."""

  def __new__(cls, val, aval: ShapedArray | None = None):
    obj = np.asarray(val).view(cls)
    if aval is not None:
      obj._aval = aval
    return obj

  def __array_finalize__(self, obj):
    self._aval = None
    self._weak_type = obj.aval.weak_type if isinstance(obj, TypedNdArray) else False

  @property
  def aval(self) -> ShapedArray:
    if self._aval is None:
      self._aval = ShapedArray(self.shape, self.dtype, weak_type=self._weak_type)
    return self._aval

  @property
  def weak_type(self) -> bool:
    return self.aval.weak_type

  @property
  def val(self) -> np.ndarray:
    return np.asarray(self)

  def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
    # NumPy arithmetic on one gives plain NumPy values, as JAX's does
    plain_ = lambda x: x.view(np.ndarray) if isinstance(x, TypedNdArray) else x
    if "out" in kwargs:
      kwargs["out"] = tuple(map(plain_, kwargs["out"]))
    return getattr(ufunc, method)(*map(plain_, inputs), **kwargs)

  def __repr__(self):
    prefix = "TypedNdArray("
    dtype_str = f"dtype={self.dtype.name}" + (", weak_type=True)" if self.weak_type else ")")
    width = np.get_printoptions()["linewidth"]
    if self.size == 0:
      body = f"[], shape={self.shape}"
    else:
      body = np.array2string(self.view(np.ndarray), prefix=prefix, suffix=",",
                             separator=", ", max_line_width=width)
    last_line = len(body) - body.rfind("\n") + 1
    sep = " " * len(prefix) if last_line + len(dtype_str) + 1 > width else " "
    return f"{prefix}{body},{sep}{dtype_str}"

  def __reduce__(self):
    return TypedNdArray, (self.view(np.ndarray), self.aval)


typed_scalar_types = (TypedInt, TypedFloat, TypedComplex)
# a Python number's type -> the typed one JAX makes of it
SCALAR_TYPES = {int: TypedInt, float: TypedFloat, complex: TypedComplex}
# the types of values jaxpr literals hold (bool aside)
typed_types = frozenset((*typed_scalar_types, TypedNdArray))


def literal_value(x, aval: ShapedArray):
  """``x``, a scalar constant of type ``aval`` (a Python or NumPy scalar, a 0-d NumPy
  array or a host Array), as a jaxpr literal holds it (see above)."""
  kind = type(x)
  if kind is bool or kind in typed_types:
    return x
  typed = SCALAR_TYPES.get(kind)
  if typed is not None:
    return typed(x, aval.dtype)
  return TypedNdArray(np.asarray(x, aval.dtype), aval)


def _canonical_numpy(x):
  if x.dtype.kind in "OUSMm" or (x.dtype.kind == "V" and not dtypes.is_jax_dtype(x.dtype)):
    raise TypeError(f"Dtype {x.dtype} is not a valid JAX array type. Only arrays of "
                    "numeric types are supported by JAX.")
  return TypedNdArray(np.asarray(x, dtypes.canonicalize_dtype(x.dtype)))


def _canonical_scalar(typed):
  return lambda x: typed(x, dtypes.python_scalar_dtype(x))


# what bind hands an impl, as JAX canonicalizes: a NumPy value as a TypedNdArray of the
# canonical dtype, a Python number as a typed one of its canonical weak dtype; typed
# values and bools as they are
core.canonical_value_handlers.update({
    np.ndarray: _canonical_numpy, np.generic: _canonical_numpy,
    **{kind: _canonical_scalar(typed) for kind, typed in SCALAR_TYPES.items()},
    **{kind: lambda x: x for kind in (bool, *typed_types)}})
