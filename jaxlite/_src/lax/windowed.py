"""Windowed reductions: ``reduce_window_sum`` / ``_max`` / ``_min``, and ``reduce_window``
with any computation (the ``reduce_window`` primitive, as JAX's); and their output
shape, ``reduce_window_shape_tuple``.

The sum is linear; its transpose pads the cotangent (interior padding undoes the
strides) and sums windows again, as JAX's rule does. For max and min the tangent is the
tangent at the first element of each window that attains the extremum: the windows are
cut out with pads and strided slices (one slice per window offset), so the rule is made
of primitives that transpose and batch without special cases.
"""
from __future__ import annotations

import itertools

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.base import tree
from jaxlite._src.core.array import Array
from jaxlite._src.core.core import Primitive, ShapedArray
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.lax.base import operand as _operand
from jaxlite._src.lax import reductions as red
from jaxlite._src.lax import shapes as sh
from jaxlite._src.lax.convolution import (_stride_shape, _vjp_lhs_padding, dilate_shape,
                                          padtype_to_pads)
from jaxlite._src.transforms import ad
from jaxlite._src.transforms import batching
from jaxlite._src.transforms import staging

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
  window_strides = (1,) * n if window_strides is None else tuple(map(int, window_strides))
  base_dilation = (1,) * n if base_dilation is None else tuple(map(int, base_dilation))
  window_dilation = (1,) * n if window_dilation is None else tuple(map(int, window_dilation))
  if isinstance(padding, str):
    # as JAX: the pads come from the undilated operand shape
    padding = padtype_to_pads(core.get_aval(operand).shape,
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


# ----------------------------------------------------------------------------- any monoid

reduce_window_p = Primitive("reduce_window")
reduce_window_p.multiple_results = True
core.param_printers[(reduce_window_p, "padding")] = core.param_printers[
    (reduce_window_sum_p, "padding")]


@reduce_window_p.def_abstract_eval
def _reduce_window_abstract_eval(*avals, jaxpr, consts, **params):
  operands, inits = red._split_half(avals)
  if [o.dtype for o in operands] != [i.dtype for i in inits]:
    raise TypeError("reduce_window got inconsistent dtypes for operands and init_values: got "
                    f"operand dtypes {[o.dtype.name for o in operands]} and init_value "
                    f"dtypes {[i.dtype.name for i in inits]}.")
  if any(i.shape != () for i in inits):
    raise TypeError("reduce_window expected init_values to be scalars but init_values have "
                    f"shapes {[i.shape for i in inits]}.")
  if len({o.shape for o in operands}) > 1:
    raise TypeError(f"reduce_window operands must all have the same shape, got "
                    f"{[o.shape for o in operands]}.")
  shape = _window_shape("reduce_window", operands[0], **params)
  return [ShapedArray(shape, o.dtype) for o in operands]


def _window_monoids(dtype):
  """``{computation: (identity, reducer)}`` that JAX turns into windowed primitives."""
  return {ew.add: (0, reduce_window_sum), ew.max: (dtypes.lowest(dtype), reduce_window_max),
          ew.min: (dtypes.highest(dtype), reduce_window_min)}


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
  """Reduce each window of ``operand`` with ``computation`` (``jax.lax.reduce_window``).

  Parameters
  ----------
  operand : array or pytree of arrays of one shape
  init_value : scalar or pytree of scalars with the structure of ``operand``
    The start of every window's reduction (applied once per window). Elements from
    padding or base dilation take no part, as on XLA's CPU backend.
  computation : callable ``(xs, ys) -> zs`` on pytrees of scalars
    Associative, with ``init_value`` as its identity (XLA may assume both). ``lax.add``,
    ``lax.max`` and ``lax.min`` with their identities become ``reduce_window_sum`` /
    ``_max`` / ``_min``, which are differentiable; any other computation is forward-mode
    differentiable only, as in JAX.
  window_dimensions : sequence of int, one per axis
  window_strides : sequence of int, optional (default: all 1)
  padding : 'SAME', 'SAME_LOWER', 'VALID' or a sequence of (low, high) pairs
  base_dilation, window_dilation : sequence of int, optional

  Returns
  -------
  The reduced windows, in the structure of ``operand``.

  Examples
  --------
  >>> import jaxlite.numpy as jnp
  >>> from jaxlite import lax
  >>> lax.reduce_window(jnp.arange(5.), 1., lax.mul, (2,))
  Array([ 0.,  2.,  6., 12.], dtype=float32)
  """
  flat_ops, op_tree = tree.tree_flatten(operand)
  flat_inits, init_tree = tree.tree_flatten(init_value)
  if op_tree != init_tree:
    raise ValueError("Operands must have the same tree structure as init_values: "
                     f"{op_tree} vs. {init_tree}")
  if not flat_ops:
    raise ValueError("reduce_window must have at least one operand.")
  flat_ops = [_operand(x) for x in flat_ops]
  flat_inits = [_operand(x) for x in flat_inits]
  params = _canonical_params(flat_ops[0], window_dimensions, window_strides, padding,
                             base_dilation, window_dilation)
  if len(flat_ops) == 1:
    reducer = red.monoid_reducer(_window_monoids, computation, flat_inits[0])
    if reducer is not None:
      return tree.tree_unflatten(op_tree, [reducer(flat_ops[0], **params)])
  closed = red.reduction_jaxpr(computation, flat_inits, init_tree, "reduce_window")
  outs = reduce_window_p.bind(*flat_ops, *flat_inits, jaxpr=closed.jaxpr,
                              consts=tuple(closed.consts), **params)
  return tree.tree_unflatten(op_tree, outs)


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None):
  """Output shape of ``reduce_window`` with explicit ``(low, high)`` padding."""
  if base_dilation is not None:
    operand_shape = dilate_shape(operand_shape, base_dilation)
  if window_dilation is not None:
    window_dimensions = dilate_shape(window_dimensions, window_dilation)
  padded = [d + lo + hi for d, (lo, hi) in zip(operand_shape, padding)]
  return _stride_shape(padded, window_dimensions, window_strides)


# ----------------------------------------------------------------------------- differentiation

def _scalar(value, dtype):
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


ad.deflinear2(reduce_window_sum_p, _reduce_window_sum_transpose)


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


# ----------------------------------------------------------------------------- any monoid: rules

def _reduce_window_jvp(primals, tangents, *, jaxpr, consts, **params):
  # As JAX: one reduce_window over primals and tangents together, whose computation is
  # the JVP of the user's. It is not linear in the tangents, so (as in JAX) reverse mode
  # is available for the recognised monoids only.
  operands, inits = red._split_half(primals)
  op_tangents, init_tangents = red._split_half(tangents)
  if any(type(t) is not ad.Zero for t in init_tangents):
    raise TypeError("reduce_window jvp does not support non-zero init_value_tangent.")
  diff = [dtypes.is_inexact(core.get_aval(x).dtype) for x in operands]
  jvp = ad.jvp_jaxpr(core.ClosedJaxpr(jaxpr, consts), diff + diff)
  n, k = len(operands), sum(diff)

  def computation(*args):   # (acc, acc tangents, x, x tangents) in the jvp's order
    acc, tacc, x, tx = args[:n], args[n:n + k], args[n + k:2 * n + k], args[2 * n + k:]
    return core.eval_jaxpr(jvp.jaxpr, jvp.consts, *acc, *x, *tacc, *tx)
  avals = [core.get_aval(x) for x in inits]
  t_avals = [ad.tangent_aval(a) for a, d in zip(avals, diff) if d]
  closed = staging.trace_to_jaxpr(computation, (avals + t_avals) * 2)
  t_ops = [ad.instantiate(t) for t, d in zip(op_tangents, diff) if d]
  t_inits = [_scalar(0, a.dtype) for a in t_avals]
  outs = reduce_window_p.bind(*operands, *t_ops, *inits, *t_inits, jaxpr=closed.jaxpr,
                              consts=tuple(closed.consts), **params)
  out_tangents = iter(outs[n:])
  return outs[:n], [next(out_tangents) if d else ad.Zero(ad.tangent_aval(core.get_aval(o)))
                    for o, d in zip(outs[:n], diff)]


ad.jvp_rules[reduce_window_p] = _reduce_window_jvp


def _reduce_window_any_batcher(vals, dims, *, jaxpr, consts, **params):
  operands, inits = red._split_half(vals)
  op_dims, init_dims = red._split_half(dims)
  if any(d is not None for d in init_dims):
    raise NotImplementedError("reduce_window batching is not implemented for initial "
                              "values (nor in JAX): close over one init value.")
  size = batching.batch_size(vals, dims)
  operands = [batching.bdim_at_front(x, d, size) for x, d in zip(operands, op_dims)]
  new = {k: ((0, 0) if k == "padding" else 1,) + tuple(params[k]) for k in _PARAMS}
  outs = reduce_window_p.bind(*operands, *inits, jaxpr=jaxpr, consts=consts, **new)
  return outs, [0] * len(outs)


batching.batching_rules[reduce_window_p] = _reduce_window_any_batcher
