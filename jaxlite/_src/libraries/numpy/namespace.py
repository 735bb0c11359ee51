"""The ``jaxlite.numpy`` namespace for the library layer.

Modules under ``jaxlite._src`` never import the public ``jaxlite.numpy``; those written in
``jnp`` style import this module instead (``from jaxlite._src.libraries.numpy import namespace as
jnp``). It holds every ``jnp`` name except ``ufunc``, ``frompyfunc`` and the ufunc objects
that JAX exports as ``jnp.add``, ``jnp.multiply``, ...: ``ufunc_api`` builds those on this
namespace (whose ``add`` is the plain function), and the public package puts them on top.
"""
import sys as _sys

import numpy as _np

# jnp.ndarray is jax.Array: isinstance accepts arrays and tracers alike
from jaxlite._src.core.array import PublicArray as ndarray
from jaxlite._src.base import dtypes as _dtypes
from jaxlite._src.base.dtypes import (
    bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16,
    float32, float64, complex64, complex128, promote_types)
from jaxlite._src.libraries.numpy.creation import (
    array, asarray, zeros, ones, full, empty, zeros_like, ones_like, full_like, empty_like,
    arange, linspace, eye, identity, frombuffer, fromstring, fromfile, fromiter, fromfunction)
from jaxlite._src.libraries.numpy.ufuncs import (
    sin, cos, tan, arcsin, arccos, arctan, sinh, cosh, tanh, arcsinh, arccosh, arctanh,
    asin, acos, atan, asinh, acosh, atanh, exp, exp2, expm1, log, log1p, log2, log10, sqrt,
    cbrt, negative, positive, sign, floor, ceil, square, isfinite, isnan, isinf,
    logical_not, logical_and, logical_or, logical_xor, invert, bitwise_not, bitwise_and,
    bitwise_or, bitwise_xor, absolute, abs, add, subtract, multiply, divide, true_divide,
    floor_divide, divmod, remainder, mod, fmod, power, pow, float_power, reciprocal, maximum,
    minimum, arctan2, atan2, nextafter, equal, not_equal, less, less_equal, greater,
    greater_equal, round, around, clip, bitwise_invert)
from jaxlite._src.libraries.numpy.lax_numpy import (
    shape, ndim, size, broadcast_shapes, reshape, ravel, transpose, permute_dims,
    matrix_transpose, swapaxes, moveaxis, expand_dims, squeeze, broadcast_to,
    broadcast_arrays, atleast_1d, atleast_2d, concatenate, concat, stack, hstack, vstack,
    astype, rollaxis, dot, matmul, result_type, iscomplexobj, issubdtype, isscalar,
    iterable)
from jaxlite._src.libraries.numpy.indexing import (
    take, take_along_axis, unstack, choose, ix_, ravel_multi_index, unravel_index)
from jaxlite._src.libraries.numpy.array_api import isdtype, can_cast
from jaxlite._src.libraries.numpy.reductions import (
    sum, prod, max, min, amax, amin, all, any, mean, var, std, argmax, argmin, count_nonzero)

bool = bool_
pi, e, inf, nan, euler_gamma = _np.pi, _np.e, _np.inf, _np.nan, _np.euler_gamma
newaxis = None
generic, number, integer, signedinteger, unsignedinteger = (
    _np.generic, _np.number, _np.integer, _np.signedinteger, _np.unsignedinteger)
inexact, floating, complexfloating = _np.inexact, _np.floating, _np.complexfloating
from jaxlite._src.libraries.numpy.math import *  # noqa
from jaxlite._src.libraries.numpy.sorting import *  # noqa
from jaxlite._src.libraries.numpy.statistics import *  # noqa


class _ScalarMeta(type):
  """``jnp.float32`` and friends: usable as dtypes, and callable to make 0-d Arrays."""

  __module__ = "jaxlite.numpy"

  def __call__(cls, x):
    return array(x, dtype=cls.dtype)

  def __instancecheck__(cls, instance):
    return isinstance(instance, cls.dtype.type)

  # equal to (and hashed as) NumPy's scalar type, as JAX's are: jnp.float32 == np.float32
  # (TFP's JAX substrate compares default arguments written with either)
  def __eq__(cls, other):
    return cls is other or cls.dtype.type == other

  def __ne__(cls, other):
    return not cls == other

  def __hash__(cls):
    return hash(cls.dtype.type)

  def __repr__(cls):
    return f"<class 'jaxlite.numpy.{cls.__name__}'>"


def _make_scalar_type(np_type):
  name = _np.dtype(np_type).name
  return _ScalarMeta(name, (), {"dtype": _np.dtype(np_type),
                                "__doc__": f"The {name} scalar type (a JAX-style dtype).",
                                "__module__": "jaxlite.numpy"})


bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64 = map(_make_scalar_type, (
    bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64))
float16, float32, float64, complex64, complex128 = map(_make_scalar_type, (
    float16, float32, float64, complex64, complex128))
bool = bool_
float_, int_, complex_ = float64, int64, complex128
single, double, csingle, cdouble, uint = float32, float64, complex64, complex128, uint64
character, flexible, object_ = _np.character, _np.flexible, _np.object_
ComplexWarning = _np.exceptions.ComplexWarning
from jaxlite._src.libraries.numpy.array_ops import *  # noqa
from jaxlite._src.libraries.numpy.einsum import *  # noqa
from jaxlite._src.libraries.numpy import linalg, fft  # noqa
from jaxlite._src.libraries.numpy.windows import *  # noqa
from jaxlite._src.libraries.numpy.polynomial import *  # noqa
from jaxlite._src.libraries.numpy.bit_packing import *  # noqa
from jaxlite._src.libraries.numpy.index_tricks import *  # noqa
from jaxlite._src.libraries.numpy.io import *  # noqa
from jaxlite._src.libraries.numpy.vectorize import *  # noqa


# The names bound to ml_dtypes objects, as in JAX: narrow float and int scalar types (arrays
# of them other than bfloat16 are not admitted by jaxlite's dtype table, so they are
# exported as plain scalar types), its finfo and iinfo, and np.dtype, which parses
# 'bfloat16' only once ml_dtypes is loaded. They load ml_dtypes on first access
# (``__getattr__``), which is why ``import jaxlite.numpy`` does not.
_LAZY_NAMES = ("bfloat16", "dtype", "finfo", "iinfo", "float4_e2m1fn", "float6_e2m3fn",
               "float6_e3m2fn", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz",
               "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
               "float8_e8m0fnu", "int1", "int2", "int4", "uint1", "uint2", "uint4")
_lazy_values = {}


def _ml_dtypes_value(name):
  ml_dtypes = _dtypes.ml_dtypes()  # also teaches np.dtype the names 'bfloat16', ...
  if name == "bfloat16":
    return _make_scalar_type(ml_dtypes.bfloat16)
  return _np.dtype if name == "dtype" else getattr(ml_dtypes, name)


def _lazy_attribute(module, name):
  """``module.name`` for a name of ``_LAZY_NAMES``, made on first access and then bound in
  ``module``, so that later accesses are plain lookups (and every module gets one object)."""
  if name not in _LAZY_NAMES:
    raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")
  value = _lazy_values.get(name)
  if value is None:
    value = _lazy_values.setdefault(name, _ml_dtypes_value(name))
  setattr(module, name, value)
  return value


def __getattr__(name):
  return _lazy_attribute(_sys.modules[__name__], name)
