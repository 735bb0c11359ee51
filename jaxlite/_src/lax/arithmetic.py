"""The arithmetic of ``jax.lax`` that is composed from primitives rather than being one:
``reciprocal`` (an ``integer_pow``) and ``mulhi`` (the high half of a double-width integer
product, from shifts and bitcasts). Their jaxprs show the primitives they are made of.

Also the public forms of ``mul`` (with JAX's ``out_dtype``) and ``nextafter`` (with JAX's
argument names), over the fast functions the rest of jaxlite calls.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.core.array import Array
from jaxlite._src.lax import bits as lax_bits
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.lax.base import operand as _operand
from jaxlite._src.lax.shapes import _fill


def mul(x, y, *, out_dtype=None):
  """``x * y`` elementwise, for operands of one dtype; with ``out_dtype``, of that dtype
  (both operands are converted to it first, as JAX does where no kernel fuses the two)."""
  if out_dtype is not None:
    x = ew.convert_element_type(x, out_dtype)
    y = ew.convert_element_type(y, out_dtype)
  return ew.mul(x, y)


def nextafter(x1, x2):
  """The next float after ``x1`` in the direction of ``x2``, elementwise."""
  return ew.nextafter(x1, x2)


def reciprocal(x):
  """``1 / x`` elementwise."""
  return ew.integer_pow(_operand(x), -1)


def mulhi(x, y, /):
  """The high half of the double-width product ``x * y`` of two integers of one dtype."""
  x, y = _operand(x), _operand(y)
  dt = np.dtype(core.get_aval(x).dtype)
  if dt.kind not in "iu" or core.get_aval(y).dtype != dt:
    raise TypeError(f"mulhi requires two integer operands of one dtype, got {dt} and "
                    f"{core.get_aval(y).dtype}")
  bits = dt.itemsize * 8
  udt = np.dtype(f"uint{bits}")
  ux = lax_bits.bitcast_convert_type(x, udt) if dt.kind == "i" else x
  uy = lax_bits.bitcast_convert_type(y, udt) if dt.kind == "i" else y
  half = bits // 2
  mask = Array(np.array((1 << half) - 1, udt), True)
  sh = Array(np.array(half, udt), True)
  lo = lambda v: ew.bitwise_and(v, mask)
  hi = lambda v: lax_bits.shift_right_logical(v, sh)
  x0, x1, y0, y1 = lo(ux), hi(ux), lo(uy), hi(uy)
  t = ew.add(ew.mul(x1, y0), hi(ew.mul(x0, y0)))
  w1 = ew.add(lo(t), ew.mul(x0, y1))
  out = ew.add(ew.add(ew.mul(x1, y1), hi(t)), hi(w1))
  if dt.kind == "u":
    return out
  # signed: subtract y where x < 0 and x where y < 0 (modulo 2**bits)
  out = ew.sub(out, ew.select(ew.lt(x, ew._const(x, 0)), uy, _fill(uy, 0)))
  out = ew.sub(out, ew.select(ew.lt(y, ew._const(y, 0)), ux, _fill(ux, 0)))
  return lax_bits.bitcast_convert_type(out, dt)
