"""Windowed reductions: ``reduce_window_sum`` / ``_max`` / ``_min`` and ``reduce_window``.

The sum is linear; its transpose pads the cotangent (interior padding undoes the
strides) and sums windows again, as JAX's rule does. For max and min the tangent is the
tangent at the first element of each window that attains the extremum: the windows are
cut out with pads and strided slices (one slice per window offset), so the rule is made
of primitives that transpose and batch without special cases.
"""
from __future__ import annotations

import itertools

import numpy as np

from jaxlite._src import core
from jaxlite._src import dtypes
from jaxlite._src.core import Primitive, ShapedArray
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.lax import reductions as red
from jaxlite._src.lax import shapes as sh
from jaxlite._src.lax.convolution import _vjp_lhs_padding, dilate_shape, padtype_to_pads
from jaxlite._src.transforms import ad
from jaxlite._src.transforms import batching

_PARAMS = ("base_dilation", "padding", "window_dilation", "window_dimensions",
           "window_strides")


def _window_shape(name, operand, window_dimensions, window_strides, padding, base_dilation,
                  window_dilation):
  n = operand.ndim
  for pname, v in (("window_dimensions", window_dimensions), ("window_strides",
                   window_strides), ("padding", padding), ("base_dilation", base_dilation),
                   ("window_dilation", window_dilation)):
    if len(v) != n:
      raise TypeError(f"{name}: {pname} must have one entry per operand axis ({n}), got "
                      f"{v}.")
  shape = []
  for d, w, s, (lo, hi), bd, wd in zip(operand.shape, window_dimensions, window_strides,
                                       padding, base_dilation, window_dilation):
    if w < 1 or s < 1 or bd < 1 or wd < 1:
      raise TypeError(f"{name}: window dimensions, strides and dilations must be positive.")
    padded = dilate_shape((d,), (bd,))[0] + lo + hi
    span = dilate_shape((w,), (wd,))[0]
    shape.append(0 if padded < span else (padded - span) // s + 1)
  return tuple(shape)


def _reduce_window_prim(name):
  prim = Primitive(name)

  def rule(operand, **params):
    if name == "reduce_window_sum" and operand.dtype == np.bool_:
      raise TypeError("reduce_window_sum does not accept dtype bool.")
    shape = _window_shape(name, operand, **params)
    return ShapedArray(shape, operand.dtype, operand.weak_type)

  prim.def_abstract_eval(rule)
  core.param_printers[(prim, "padding")] = lambda v: str(
      tuple(tuple(int(x) for x in p) for p in v))
  return prim


reduce_window_sum_p = _reduce_window_prim("reduce_window_sum")
reduce_window_max_p = _reduce_window_prim("reduce_window_max")
reduce_window_min_p = _reduce_window_prim("reduce_window_min")


def _canonical_params(operand, window_dimensions, window_strides, padding, base_dilation,
                      window_dilation):
  n = core.get_aval(operand).ndim
  window_dimensions = tuple(int(w) for w in window_dimensions)
  window_strides = tuple(int(s) for s in window_strides)
  base_dilation = (1,) * n if base_dilation is None else tuple(map(int, base_dilation))
  window_dilation = (1,) * n if window_dilation is None else tuple(map(int, window_dilation))
  if isinstance(padding, str):
    shape = core.get_aval(operand).shape
    padding = padtype_to_pads(dilate_shape(shape, base_dilation),
                              dilate_shape(window_dimensions, window_dilation),
                              window_strides, padding)
  padding = tuple((int(lo), int(hi)) for lo, hi in padding)
  return dict(window_dimensions=window_dimensions, window_strides=window_strides,
              padding=padding, base_dilation=base_dilation, window_dilation=window_dilation)


def _binder(prim):
  def fun(operand, window_dimensions, window_strides, padding, base_dilation=None,
          window_dilation=None):
    return prim.bind(operand, **_canonical_params(operand, window_dimensions, window_strides,
                                                  padding, base_dilation, window_dilation))
  fun.__name__ = prim.name
  fun.__doc__ = f"``{prim.name}`` over windows of ``operand``."
  return fun


reduce_window_sum = _binder(reduce_window_sum_p)
reduce_window_max = _binder(reduce_window_max_p)
reduce_window_min = _binder(reduce_window_min_p)


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
  """Reduce each window of ``operand`` with ``computation`` (``jax.lax.reduce_window``).

  Parameters
  ----------
  operand : array
  init_value : scalar
    Start of every window's reduction; it also fills padding and base dilation.
  computation : callable
    ``lax.add``, ``lax.max`` or ``lax.min`` (other monoids are not supported).
  window_dimensions, window_strides : sequence of int, one per axis
  padding : 'SAME', 'VALID' or a sequence of (low, high) pairs
  base_dilation, window_dilation : sequence of int, optional

  Returns
  -------
  array of the reduced windows.
  """
  from jaxlite._src.numpy.util import as_operand
  operand = as_operand(operand)
  dtype = operand.dtype
  if window_strides is None:
    window_strides = (1,) * operand.ndim
  init = np.asarray(core.concrete_or_error(np.asarray, init_value,
                                          "reduce_window requires a concrete init_value."))
  name = getattr(computation, "__name__", None)
  identities = {"add": (0, reduce_window_sum), "max": (dtypes.lowest(dtype), reduce_window_max),
                "min": (dtypes.highest(dtype), reduce_window_min)}
  if computation not in (ew.add, ew.max, ew.min) or name not in identities:
    raise NotImplementedError("jaxlite's reduce_window supports computation=lax.add, "
                              "lax.max or lax.min only.")
  identity, fun = identities[name]
  out = fun(operand, window_dimensions, window_strides, padding, base_dilation,
            window_dilation)
  if init == identity:
    return out
  if name == "add":
    raise NotImplementedError("reduce_window with lax.add requires init_value 0 in jaxlite.")
  # max/min with another init: padding with it changes nothing beyond a final max/min
  from jaxlite._src.array import Array
  bound = sh.broadcast_in_dim(Array(np.asarray(init, dtype)), core.get_aval(out).shape, ())
  return (ew.max if name == "max" else ew.min)(out, bound)




# ----------------------------------------------------------------------------- differentiation

def _scalar(value, dtype):
  from jaxlite._src.array import Array
  return Array(np.array(value, dtype))


def _reduce_window_sum_transpose(ct, operand, *, window_dimensions, window_strides, padding,
                                 base_dilation, window_dilation):
  shape = operand.aval.shape
  pads = _vjp_lhs_padding(shape, window_dimensions, window_strides, core.get_aval(ct).shape,
                          padding, base_dilation, window_dilation)
  config = [(lo, hi, s - 1) for (lo, hi), s in zip(pads, window_strides)]
  padded = sh.pad(ct, _scalar(0, core.get_aval(ct).dtype), config)
  out = reduce_window_sum_p.bind(padded, window_dimensions=window_dimensions,
                                 window_strides=base_dilation,
                                 padding=((0, 0),) * len(shape),
                                 base_dilation=(1,) * len(shape),
                                 window_dilation=window_dilation)
  return [out]


ad.deflinear(reduce_window_sum_p, _reduce_window_sum_transpose)


def _windows(x, fill, *, window_dimensions, window_strides, padding, base_dilation,
             window_dilation):
  """Every window element of ``x``: shape (prod(window), *out_shape), via pad + slices."""
  aval = core.get_aval(x)
  out_shape = _window_shape("reduce_window", aval, window_dimensions, window_strides, padding,
                            base_dilation, window_dilation)
  config = [(lo, hi, bd - 1) for (lo, hi), bd in zip(padding, base_dilation)]
  padded = sh.pad(x, _scalar(fill, aval.dtype), config)
  pieces = []
  for offset in itertools.product(*[range(w) for w in window_dimensions]):
    starts = [o * wd for o, wd in zip(offset, window_dilation)]
    limits = [st + (n - 1) * s + 1 if n else st
              for st, n, s in zip(starts, out_shape, window_strides)]
    piece = sh.slice(padded, starts, limits, window_strides)
    pieces.append(sh.broadcast_in_dim(piece, (1,) + out_shape, tuple(range(1, aval.ndim + 1))))
  return sh.concatenate(pieces, 0)


def _chooser_jvp(prim, fill_of):
  def jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    out = prim.bind(x, **params)
    dtype = core.get_aval(x).dtype
    xs = _windows(x, fill_of(dtype), **params)
    ts = _windows(t, 0, **params)
    # the first position in each window holding the extremum carries the tangent
    first = red.argmax(xs, 0, np.int32) if prim is reduce_window_max_p else red.argmin(
        xs, 0, np.int32)
    shape = core.get_aval(xs).shape
    picked = ew.eq(sh.broadcasted_iota(np.int32, shape, 0),
                   sh.broadcast_in_dim(first, shape, tuple(range(1, len(shape)))))
    zeros = sh.broadcast_in_dim(_scalar(0, dtype), shape, ())
    return out, red.reduce_sum(ew.select_n(picked, zeros, ts), (0,))
  ad.jvp_rules[prim] = jvp


_chooser_jvp(reduce_window_max_p, dtypes.lowest)
_chooser_jvp(reduce_window_min_p, dtypes.highest)


# ----------------------------------------------------------------------------- batching

def _reduce_window_batcher(prim):
  def rule(vals, dims, **params):
    (x,), (d,) = vals, dims
    insert = lambda t, v: tuple(t[:d]) + (v,) + tuple(t[d:])
    new = {k: insert(params[k], (0, 0) if k == "padding" else 1) for k in _PARAMS}
    return prim.bind(x, **new), d
  batching.batching_rules[prim] = rule


for _p in (reduce_window_sum_p, reduce_window_max_p, reduce_window_min_p):
  _reduce_window_batcher(_p)
