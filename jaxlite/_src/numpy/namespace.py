"""The ``jaxlite.numpy`` namespace for the library layer.

Modules under ``jaxlite._src`` never import the public ``jaxlite.numpy``; those written in
``jnp`` style import this module instead (``from jaxlite._src.numpy import namespace as
jnp``). It holds every ``jnp`` name except the ones of ``extras``, which is itself built on
this namespace; the public package adds them on top.
"""
import numpy as _np

# jnp.ndarray is jax.Array: isinstance accepts arrays and tracers alike
from jaxlite._src.array import PublicArray as ndarray
from jaxlite._src.dtypes import (
    bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, bfloat16, float16,
    float32, float64, complex64, complex128, issubdtype, promote_types, finfo, iinfo)
from jaxlite._src.numpy.creation import (
    array, asarray, zeros, ones, full, empty, zeros_like, ones_like, full_like, empty_like,
    arange, linspace, eye, identity)
from jaxlite._src.numpy.ufuncs import (
    sin, cos, tan, arcsin, arccos, arctan, sinh, cosh, tanh, arcsinh, arccosh, arctanh,
    asin, acos, atan, asinh, acosh, atanh, exp, exp2, expm1, log, log1p, log2, log10, sqrt,
    cbrt, negative, positive, sign, floor, ceil, square, isfinite, isnan, isinf,
    logical_not, logical_and, logical_or, logical_xor, invert, bitwise_not, bitwise_and,
    bitwise_or, bitwise_xor, absolute, abs, add, subtract, multiply, divide, true_divide,
    floor_divide, divmod, remainder, mod, fmod, power, float_power, reciprocal, maximum,
    minimum, arctan2, atan2, nextafter, equal, not_equal, less, less_equal, greater,
    greater_equal, round, around, clip)
from jaxlite._src.numpy.lax_numpy import (
    shape, ndim, size, broadcast_shapes, reshape, ravel, transpose, permute_dims,
    matrix_transpose, swapaxes, moveaxis, expand_dims, squeeze, broadcast_to,
    broadcast_arrays, atleast_1d, atleast_2d, concatenate, stack, hstack, vstack, astype,
    dot, matmul, result_type, iscomplexobj, isscalar)
from jaxlite._src.numpy.indexing import take, take_along_axis
from jaxlite._src.numpy.reductions import (
    sum, prod, max, min, amax, amin, all, any, mean, var, std, argmax, argmin, count_nonzero)

bool = bool_
pi, e, inf, nan, euler_gamma = _np.pi, _np.e, _np.inf, _np.nan, _np.euler_gamma
newaxis = None
dtype = _np.dtype
generic, number, integer, signedinteger, unsignedinteger = (
    _np.generic, _np.number, _np.integer, _np.signedinteger, _np.unsignedinteger)
inexact, floating, complexfloating = _np.inexact, _np.floating, _np.complexfloating
from jaxlite._src.numpy.math import *  # noqa
from jaxlite._src.numpy.sorting import *  # noqa
from jaxlite._src.numpy.statistics import *  # noqa


class _ScalarMeta(type):
  """``jnp.float32`` and friends: usable as dtypes, and callable to make 0-d Arrays."""

  __module__ = "jaxlite.numpy"

  def __call__(cls, value=0):
    return array(value, dtype=cls.dtype)

  def __instancecheck__(cls, instance):
    return isinstance(instance, cls.dtype.type)

  def __repr__(cls):
    return f"<class 'jaxlite.numpy.{cls.__name__}'>"


def _make_scalar_type(np_type):
  name = _np.dtype(np_type).name
  return _ScalarMeta(name, (), {"dtype": _np.dtype(np_type),
                                "__doc__": f"The {name} scalar type (a JAX-style dtype).",
                                "__module__": "jaxlite.numpy"})


bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64 = map(_make_scalar_type, (
    bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64))
bfloat16, float16, float32, float64, complex64, complex128 = map(_make_scalar_type, (
    bfloat16, float16, float32, float64, complex64, complex128))
bool = bool_
float_, int_, complex_ = float64, int64, complex128
from jaxlite._src.numpy.array_ops import *  # noqa
from jaxlite._src.numpy.einsum import *  # noqa
from jaxlite._src.numpy import linalg, fft  # noqa
from jaxlite._src.numpy.windows import *  # noqa
from jaxlite._src.numpy.polynomial import *  # noqa
