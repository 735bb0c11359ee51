"""Bit-level and representation primitives: shifts, bit counts, bitcasts, precision
reduction, rounding. (The parts of complex numbers, ``real``, ``imag``, ``complex`` and
``conj``, are elementwise primitives in ``elementwise.py``; they are re-exported here.)"""
from __future__ import annotations

import enum

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.core.core import Primitive, ShapedArray
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.lax.elementwise import _float, _int, family_naryop as naryop
from jaxlite._src.lax.elementwise import (  # noqa: F401 (re-exported)
    complex, complex_p, conj, conj_p, imag, imag_p, real, real_p)
from jaxlite._src.transforms import ad
from jaxlite._src.transforms import batching

shift_left_p = naryop("shift_left", _int)
shift_right_logical_p = naryop("shift_right_logical", _int)
shift_right_arithmetic_p = naryop("shift_right_arithmetic", _int)
population_count_p = naryop("population_count", _int)
clz_p = naryop("clz", _int)
round_p = naryop("round", _float)
reduce_precision_p = naryop("reduce_precision", _float)

class RoundingMethod(enum.IntEnum):
  """How ``round`` breaks ties: away from zero (0) or to the nearest even number (1)."""
  AWAY_FROM_ZERO = 0
  TO_NEAREST_EVEN = 1

  def __str__(self):  # jaxprs print the number, as JAX's do
    return str(int(self))


def shift_left(x, y):
  """``x << y``; shifts of at least the bit width give 0."""
  return shift_left_p.bind(x, y)


def shift_right_logical(x, y):
  """``x >> y`` filling with zeros; shifts of at least the bit width give 0."""
  return shift_right_logical_p.bind(x, y)


def shift_right_arithmetic(x, y):
  """``x >> y`` filling with the sign bit; large shifts give 0 or -1."""
  return shift_right_arithmetic_p.bind(x, y)


def population_count(x):
  """The number of set bits of each element."""
  return population_count_p.bind(x)


def clz(x):
  """The number of leading zero bits of each element."""
  return clz_p.bind(x)


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
  """Round to the nearest integer; ties go away from zero or to even.

  Parameters
  ----------
  x : floating array
  rounding_method : RoundingMethod or int
    ``0`` (``AWAY_FROM_ZERO``, the default) or ``1`` (``TO_NEAREST_EVEN``).
  """
  return round_p.bind(x, rounding_method=RoundingMethod(int(rounding_method)))


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int):
  """Round ``operand`` to the nearest value of a float format with the given bit counts,
  keeping its dtype (e.g. ``(5, 10)`` emulates float16 inside float32)."""
  return reduce_precision_p.bind(operand, exponent_bits=int(exponent_bits),
                                 mantissa_bits=int(mantissa_bits))


bitcast_convert_type_p = Primitive("bitcast_convert_type")


@bitcast_convert_type_p.def_abstract_eval
def _bitcast_abstract_eval(operand, *, new_dtype):
  # as JAX: the shape rule (ValueError) runs before the dtype rule (TypeError)
  shape = _bitcast_shape(operand.shape, operand.dtype, np.dtype(new_dtype))
  _bitcast_check_dtypes(operand.dtype, np.dtype(new_dtype))
  return ShapedArray(shape, new_dtype)


def _bitcast_shape(shape, old, new):
  old_bits, new_bits = 8 * old.itemsize, 8 * new.itemsize
  if old_bits == new_bits:
    return shape
  if old_bits > new_bits:
    return shape + (old_bits // new_bits,)
  last = shape[-1] if shape else 1
  if last * old_bits != new_bits:
    raise ValueError(f"Attempting to convert array of shape {shape} from {old.name} of "
                     f"size {old_bits} bits to {new.name} of size {new_bits} bits, but "
                     f"{last} * {old_bits} != {new_bits}: the last dimension must be "
                     f"{new_bits // old_bits}.")
  return shape[:-1]


def _bitcast_check_dtypes(old, new):
  bool_or_complex = lambda d: d == np.bool_ or dtypes.is_complex(d)
  if (bool_or_complex(old) or bool_or_complex(new)) and old != new:
    raise TypeError("lax.bitcast_convert_type does not support bool or complex values "
                    f"unless the operand and destination types match. Got operand "
                    f"dtype={old.name}, new_dtype={new.name}. Consider using the "
                    "arr.view() method instead.")


def bitcast_convert_type(operand, new_dtype):
  """Reinterpret the bits of ``operand`` as ``new_dtype``. A narrower type adds a
  trailing axis; a wider type consumes the trailing axis."""
  return bitcast_convert_type_p.bind(operand, new_dtype=dtypes.canonicalize_dtype(new_dtype))


# -- derivatives
for _p in (shift_left_p, shift_right_logical_p, shift_right_arithmetic_p, population_count_p,
           clz_p, round_p, bitcast_convert_type_p):
  ad.defzero(_p)


ad.deflinear2(reduce_precision_p, lambda ct, x, **params: [reduce_precision_p.bind(ct, **params)])


# -- batching
for _p in (shift_left_p, shift_right_logical_p, shift_right_arithmetic_p):
  batching.defbroadcasting(_p)
for _p in (population_count_p, clz_p, round_p, reduce_precision_p):
  batching.defvectorized(_p)


def _bitcast_batcher(vals, dims, *, new_dtype):
  (x,), (d,) = vals, dims
  x = batching.moveaxis(x, d, 0)  # the trailing axis may be created or consumed
  return bitcast_convert_type_p.bind(x, new_dtype=new_dtype), 0


batching.batching_rules[bitcast_convert_type_p] = _bitcast_batcher
