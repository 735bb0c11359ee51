"""Vectorization (``vmap``): a trace whose tracers each stand for a whole batch of values.

A ``BatchTracer`` holds ``val``, the batch as the parent trace sees it, and
``batch_dim``, the axis of ``val`` that indexes the batch (an int; values that do not
vary over the batch are never wrapped, so a tracer's ``batch_dim`` is never None). Its
``aval`` is the per-example one: ``val``'s with that axis removed. A primitive whose
operands are all unbatched is bound on the parent trace at once; otherwise its batching
rule rewrites it into whole-batch operations, run with the parent trace current (so
vmap nests with itself, jvp, grad and jit), and never as a Python loop over the batch.

Writing a batching rule
-----------------------
Rules live in two tables keyed by primitive, filled beside each primitive in ``lax/``::

  batching_rules[prim] = rule(vals, dims, **params) -> (out, out_dim)
  axis_batching_rules[prim] = rule(axis_data, vals, dims, **params) -> (out, out_dim)

``vals`` are the operands in the parent trace and ``dims[i]`` the batch axis of
``vals[i]`` (an int, or None where the operand is the same for every example); at least
one is batched. The rule returns the result the same way: ``out_dim`` is an int, or
None when the result is the same for every example. A ``multiple_results`` primitive
takes and returns lists (``outs, out_dims``). Any batch axis may be returned: callers
move axes only where they must, which keeps jaxprs free of needless transposes.

The second table is for rules that need the mapped axis itself: ``axis_data`` is an
``AxisData(name, size, spmd_name)``. Collectives (``psum``...) and primitives that carry
jaxprs (``jit``, control flow) use it; such a rule is called even when no operand is
batched if the primitive refers to this trace's axis name (``collective_axis_names``
says which names a collective refers to; nested jaxprs are searched for them).

Helpers for rules: ``moveaxis``, ``bdim_at_front`` (move the batch axis to 0,
broadcasting an unbatched operand), ``broadcast`` (insert a new axis of a given size),
``matchaxis`` (move or broadcast to a wanted axis), ``batch_size``, ``shift_axes`` (map
per-example axes to axes of the batched value), ``defvectorized`` (unary elementwise),
``defbroadcasting`` (n-ary elementwise with lax broadcasting), and ``batch_jaxpr``
(batch a ClosedJaxpr, cached; what rules for ``jit`` and control flow call). ``vmap_flat``
runs a flat function on a batch. A control-flow rule typically moves batched operands to
axis 0 and batches its bodies with ``batch_jaxpr(body, axis_data, dims, out_dims)``,
forcing (``out_dims[i] = 0``) the outputs that must agree across branches or iterations;
a loop carry that comes out batched although it went in unbatched is marked batched and
the body batched again (a fixed point, as in JAX).

Named axes: ``vmap(..., axis_name=n)`` binds ``n`` (``extend_axis_env``) while the
function runs; ``axis_size(n)`` looks it up and raises JAX's NameError if it is unbound.
"""
from __future__ import annotations

import threading
import weakref
from typing import Callable, NamedTuple

from jaxlite._src.core import core
from jaxlite._src.core.leak_check import check_no_leaks
from jaxlite._src.core.state import types as ref_state
from jaxlite._src.base import errors
from jaxlite._src.core.core import ClosedJaxpr, Jaxpr, Primitive, Tracer, set_current_trace
from jaxlite._src.transforms import ad
from jaxlite._src.transforms import lax_ops
from jaxlite._src.transforms import staging

batching_rules: dict[Primitive, Callable] = {}
axis_batching_rules: dict[Primitive, Callable] = {}
# collective primitive -> params -> the axis names it reduces or gathers over
collective_axis_names: dict[Primitive, Callable] = {}


class AxisData(NamedTuple):
  """The mapped axis of one vmap: its name (or None), size and spmd name."""
  name: object
  size: int
  spmd_name: object = None


# ----------------------------------------------------------------------------- axis names

class _AxisEnv(threading.local):
  """The named axes bound by the vmaps running on this thread, innermost last."""

  def __init__(self):
    self.names: list = []


_axis_env = _AxisEnv()


class extend_axis_env:
  """``with extend_axis_env(name, size):`` binds ``name`` for collectives in the block.

  ``by_vmap`` marks a binding made by ``vmap`` itself (rather than by a mesh program
  tracing its per-device function, or by ``make_jaxpr(axis_env=...)``): JAX supports
  some collective options, such as ``axis_index_groups``, only outside vmap.
  """
  __slots__ = ("name", "size", "by_vmap")

  def __init__(self, name, size, by_vmap=False):
    self.name, self.size, self.by_vmap = name, size, by_vmap

  def __enter__(self):
    _axis_env.names.append((self.name, self.size, self.by_vmap))

  def __exit__(self, *exc):
    _axis_env.names.pop()


def axis_size(name, prim_name="a collective") -> int:
  """The size of the innermost vmap axis called ``name``; NameError if none is bound."""
  for bound, size, _ in reversed(_axis_env.names):
    if bound == name:
      return size
  raise NameError(f"unbound axis name: {name}. Call {prim_name} inside "
                  f"jax.vmap(f, axis_name={name!r}), which binds the name.")


def bound_by_vmap(name) -> bool:
  """Whether the innermost binding of ``name`` was made by a ``vmap``."""
  for bound, _, by_vmap in reversed(_axis_env.names):
    if bound == name:
      return by_vmap
  return False


def _env_key():
  return tuple(_axis_env.names)


# ----------------------------------------------------------------------------- the trace

class BatchTracer(Tracer):
  """A batch of values: ``val`` with the batch along axis ``batch_dim``."""
  __slots__ = ("val", "batch_dim", "_aval")

  def __init__(self, trace, val, batch_dim: int):
    self._trace = trace
    self.val = val
    self.batch_dim = batch_dim
    self._aval = None

  @property
  def aval(self):
    aval = self._aval
    if aval is None:
      full = core.get_aval(self.val)
      shape = full.shape[:self.batch_dim] + full.shape[self.batch_dim + 1:]
      aval = self._aval = full.update(shape=shape)
    return aval

  def __repr__(self):
    return (f"VmapTracer(aval={self.aval.str_short()}, "
            f"batched={core.get_aval(self.val).str_short()})")


class BatchTrace(core.Trace):
  """Runs each primitive's batching rule with the parent trace current."""
  description = "vmap"

  def __init__(self, parent, axis_data: AxisData):
    self.parent = parent
    self.axis_data = axis_data
    self.is_valid = True

  def to_batch_info(self, x):
    """``(value in the parent trace, batch dim or None)`` for an operand."""
    if type(x) is BatchTracer and x._trace is self:
      return x.val, x.batch_dim
    if isinstance(x, Tracer) and not x._trace.is_valid:
      raise errors.UnexpectedTracerError(x)
    return x, None

  def process_primitive(self, prim, args, params):
    vals, dims = [], []
    for x in args:
      v, d = self.to_batch_info(x)
      vals.append(v)
      dims.append(d)
    vals, dims = tuple(vals), tuple(dims)   # as JAX passes them (rules may rely on it)
    axis_rule = axis_batching_rules.get(prim)
    if all(d is None for d in dims) and (
        axis_rule is None or not _refers_to_axis(prim, params, self.axis_data.name)):
      with set_current_trace(self.parent):
        return prim.bind(*vals, **params)
    with set_current_trace(self.parent):
      if axis_rule is not None:
        out, out_dim = axis_rule(self.axis_data, vals, dims, **params)
      else:
        rule = batching_rules.get(prim)
        if rule is None:
          raise NotImplementedError(
              f"Batching rule for '{prim.name}' not implemented: jax.vmap cannot map "
              f"over '{prim.name}'. Call the function outside vmap, or write the "
              "computation with primitives that vmap supports.")
        out, out_dim = rule(vals, dims, **params)
    if prim.multiple_results:
      return [self._wrap(v, d) for v, d in zip(out, out_dim)]
    return self._wrap(out, out_dim)

  def _wrap(self, val, dim):
    return val if dim is None else BatchTracer(self, val, dim)


def _vmap_ref_write(trace, ref, value):
  # a ref made outside vmap holds one value, not one per example (JAX's error, which JAX
  # raises whatever the value)
  raise Exception(
      "performing a set/swap operation with vmapped value on an unbatched array "
      f"reference of type {ref.aval}. Move the array reference to be an argument to the "
      "vmapped function?")


ref_state.write_rules[BatchTrace] = _vmap_ref_write


def _refers_to_axis(prim, params, name) -> bool:
  """Whether binding ``prim`` with ``params`` uses the named axis ``name``."""
  if name is None:
    return False
  names_of = collective_axis_names.get(prim)
  if names_of is not None and name in names_of(params):
    return True
  return any(_jaxpr_refers_to_axis(v, name) for v in params.values())


def _jaxpr_refers_to_axis(value, name) -> bool:
  if isinstance(value, (tuple, list)):
    return any(_jaxpr_refers_to_axis(v, name) for v in value)
  if isinstance(value, ClosedJaxpr):
    value = value.jaxpr
  if not isinstance(value, Jaxpr):
    return False
  return any(_refers_to_axis(e.primitive, e.params, name) for e in value.eqns)


def vmap_flat(flat_fun, args, in_dims, size: int, axis_name=None, spmd_axis_name=None):
  """Run ``flat_fun`` (flat lists in and out) on a batch of ``size`` examples.

  ``in_dims[i]`` is the batch axis of ``args[i]`` (non-negative), or None if it is
  shared by every example. Returns ``(outs, out_dims)`` in the parent trace, each output
  with its batch axis where the computation left it (None: the same for every example).
  """
  trace = BatchTrace(core.current_trace(), AxisData(axis_name, size, spmd_axis_name))
  try:
    tracers = [x if d is None else BatchTracer(trace, x, d) for x, d in zip(args, in_dims)]
    with set_current_trace(trace):
      if axis_name is None:
        outs = flat_fun(*tracers)
      else:
        with extend_axis_env(axis_name, size, by_vmap=True):
          outs = flat_fun(*tracers)
    pairs = [trace.to_batch_info(x) for x in outs]
  finally:
    trace.invalidate()
  del tracers, outs   # the tracers this frame holds are not leaks
  check_no_leaks(trace, "The error occurred while tracing a function for vmap.")
  return [v for v, _ in pairs], [d for _, d in pairs]


# primitives with a jaxpr param batch it once per (jaxpr, dims, axis): ClosedJaxpr -> {key: ..}
_batched_jaxprs: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def batch_jaxpr(closed: ClosedJaxpr, axis_data: AxisData, in_dims, out_dims=None,
                batched_avals=None):
  """Batch ``closed``: returns ``(batched ClosedJaxpr, out_dims)``.

  ``in_dims`` gives the batch axis of each input (None: unbatched). With ``out_dims``
  None each output keeps the batch axis the computation gave it (None if unbatched);
  otherwise ``out_dims[i]``, if an int, is the axis output i is moved (or broadcast) to,
  and None leaves output i where it falls. ``batched_avals``: the types of the batched
  operands themselves, whose batch axis may be split over mesh axes (sharding in
  types), which the batched jaxpr then keeps. Results are cached per jaxpr.
  """
  in_dims = tuple(in_dims)
  # the batched operands whose type is split over mesh axes: part of the signature
  split = () if batched_avals is None else tuple(
      (i, a) for i, (a, d) in enumerate(zip(batched_avals, in_dims))
      if d is not None and getattr(a, "spec", None) is not None)
  key = (axis_data, in_dims, None if out_dims is None else tuple(out_dims), _env_key(),
         split)
  cache = _batched_jaxprs.setdefault(closed, {})
  hit = cache.get(key)
  if hit is not None:
    return hit
  in_avals = [aval if d is None else aval.update(
      shape=aval.shape[:d] + (axis_data.size,) + aval.shape[d:])
      for aval, d in zip(closed.in_avals, in_dims)]
  for i, a in split:
    in_avals[i] = a
  found = []

  def batched(*args):
    def inner(*xs):
      return core.eval_jaxpr(closed.jaxpr, closed.consts, *xs)
    outs, dims = vmap_flat(inner, args, in_dims, axis_data.size, axis_data.name,
                           axis_data.spmd_name)
    if out_dims is not None:
      outs = [x if want is None else matchaxis(d, want, axis_data.size, x)
              for x, d, want in zip(outs, dims, out_dims)]
      dims = [d if want is None else want for d, want in zip(dims, out_dims)]
    found.append(dims)
    return outs

  result = staging.trace_to_jaxpr(batched, in_avals), found[0]
  if not any(isinstance(c, Tracer) for c in result[0].consts):
    cache[key] = result  # consts that are tracers belong to one trace: never reuse them
  return result


# ----------------------------------------------------------------------------- helpers

def batch_size(vals, dims) -> int:
  """The batch size, read off the first batched operand."""
  return next(core.get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)


def moveaxis(x, src: int, dst: int):
  """``x`` with axis ``src`` moved to position ``dst`` (a transpose; none if equal)."""
  ndim = core.get_aval(x).ndim
  src, dst = src % ndim, dst % ndim
  if src == dst:
    return x
  perm = [i for i in range(ndim) if i != src]
  perm.insert(dst, src)
  return lax_ops.transpose(x, perm)


def broadcast(x, size: int, axis: int, mesh_axis=None):
  """``x`` with a new axis of length ``size`` inserted at ``axis`` (no copy in NumPy).
  ``mesh_axis`` (JAX's, for explicit sharding) must be None."""
  shape = core.get_aval(x).shape
  out_shape = shape[:axis] + (size,) + shape[axis:]
  dims = [i for i in range(len(out_shape)) if i != axis]
  return lax_ops.broadcast_in_dim(x, out_shape, dims)


def bdim_at_front(x, dim, size: int, mesh_axis=None):
  """``x`` with its batch axis at 0; an unbatched ``x`` is broadcast to the batch."""
  if dim is None:
    return broadcast(x, size, 0)
  return moveaxis(x, dim, 0)


def matchaxis(src, dst, size: int, x):
  """``x`` (batched along ``src``, or None) with its batch axis at ``dst``."""
  if src == dst:
    return x
  if src is None:
    return broadcast(x, size, dst)
  return moveaxis(x, src, dst)


def shift_axes(axes, dim) -> tuple:
  """Per-example axes as axes of the batched value whose batch axis is ``dim``."""
  return tuple(a + (a >= dim) for a in axes)


def defvectorized(prim):
  """A unary elementwise primitive: apply it to the batch as is."""
  batching_rules[prim] = lambda vals, dims, **params: (prim.bind(*vals, **params), dims[0])


def defbroadcasting(prim):
  """An n-ary elementwise primitive whose operands broadcast as lax allows them to
  (equal ranks with size-1 axes, or rank 0)."""
  batching_rules[prim] = lambda vals, dims, **params: _broadcasting_rule(
      prim, vals, dims, params)


def _broadcasting_rule(prim, vals, dims, params):
  if len(vals) == 1:
    return prim.bind(*vals, **params), dims[0]
  ndims = [core.get_aval(v).ndim for v in vals]
  batched = [(n, d) for n, d in zip(ndims, dims) if d is not None]
  n0, d0 = batched[0]
  if all(b == (n0, d0) for b in batched) and all(
      n in (0, n0 - 1) for n, d in zip(ndims, dims) if d is None):
    # Batched operands agree: unbatched scalars broadcast by themselves, and unbatched
    # arrays get a size-1 axis at the batch position, which lax broadcasts.
    args = [v if d is not None or n == 0 else _expand(v, d0)
            for v, n, d in zip(vals, ndims, dims)]
    return prim.bind(*args, **params), d0
  rank = max(n - (d is not None) for n, d in zip(ndims, dims))
  size = batch_size(vals, dims)
  args = []
  for v, n, d in zip(vals, ndims, dims):
    if d is None:
      args.append(v if n == 0 else _expand(v, 0))
    elif n - 1 < rank:  # a per-example scalar among arrays: shape (size, 1, ..., 1)
      args.append(lax_ops.broadcast_in_dim(moveaxis(v, d, 0), (size,) + (1,) * rank,
                                                 (0,)))
    else:
      args.append(moveaxis(v, d, 0))
  return prim.bind(*args, **params), 0


def _expand(x, axis):
  return lax_ops.expand_dims(x, (axis,))


# -- add_any (ad's sum of tangents): operands of one shape, so the batch axes must agree
def _add_any_batcher(vals, dims):
  (x, y), (xd, yd) = vals, dims
  if xd != yd:
    size = batch_size(vals, dims)
    x, y, xd = bdim_at_front(x, xd, size), bdim_at_front(y, yd, size), 0
  return ad.add_any_p.bind(x, y), xd


batching_rules[ad.add_any_p] = _add_any_batcher


# -- JAX's names (jax.interpreters.batching) for the same tables and helpers

primitive_batchers = batching_rules
fancy_primitive_batchers = axis_batching_rules
not_mapped = None


class _AxisPrimitiveBatchers:
  """JAX's ``axis_primitive_batchers``, which takes rules written the older way,
  ``rule(axis_size, axis_name, trace_type, vals, dims, **params)``: each is stored in
  ``axis_batching_rules`` (``fancy_primitive_batchers``), adapted to ``AxisData``."""

  def __setitem__(self, prim, rule):
    def adapted(axis_data, vals, dims, **params):
      return rule(axis_data.size, axis_data.name, None, vals, dims, **params)
    axis_batching_rules[prim] = adapted

  def __delitem__(self, prim):
    del axis_batching_rules[prim]

  def __contains__(self, prim):
    return prim in axis_batching_rules


axis_primitive_batchers = _AxisPrimitiveBatchers()


def defreducer(prim):
  """A reduction over the ``axes`` param: the batch axis is kept out of the reduced axes."""
  batching_rules[prim] = lambda vals, dims, *, axes, **params: _reducer_rule(
      prim, vals, dims, axes, params)


def _reducer_rule(prim, vals, dims, axes, params):
  (x,), (d,) = vals, dims
  axes = shift_axes(axes, d)
  kept = [i for i in range(core.get_aval(x).ndim) if i not in axes]
  if "input_shape" in params:
    params = dict(params, input_shape=core.get_aval(x).shape)
  return prim.bind(x, axes=axes, **params), kept.index(d)
