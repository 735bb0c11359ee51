"""The host-callback primitives: ``debug_print``, ``debug_callback``, ``pure_callback`` and
``io_callback``, with their shape, JVP, transpose and batching rules.

The user functions that bind them (``jax.debug.print``, ``jax.pure_callback`` ...) are in
``_src/debugging.py``; the implementations that call back into Python, used by tier 0
and by the XLA tier's FFI handler, are in ``backends/numpy/callback_impls.py``.

Under ``vmap``, as in JAX: the debug primitives are unrolled, one call per batch element
in index order; ``io_callback`` loops over the batch (a ``scan``) and refuses ordered
callbacks; ``pure_callback`` does what its ``vmap_method`` says (``_VMAP_METHODS``).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

from jaxlite._src.core import core
from jaxlite._src.base import tree
from jaxlite._src.core.core import Primitive
from jaxlite._src.lax import control_flow
from jaxlite._src.lax import indexing
from jaxlite._src.passes import dce
from jaxlite._src.transforms import ad
from jaxlite._src.transforms import batching


@dataclasses.dataclass(frozen=True)
class _FlatCallback:
  """``callback_func`` called with flat arguments, returning flat results.

  Equal for the same function and argument structure (so a re-traced call site finds
  its XLA callback registration again); printed in jaxprs as JAX prints it.
  """
  callback_func: Callable[..., Any]
  in_tree: Any   # the (args, kwargs) treedef

  def __call__(self, *flat_args):
    args, kwargs = tree.tree_unflatten(self.in_tree, list(flat_args))
    return tree.tree_leaves(self.callback_func(*args, **kwargs))


def _merge_callback_args(in_tree, values, static_args):
  """The callback's ``(args, kwargs)``: the runtime ``values`` with the static leaves
  (``{leaf index: value}``, or its items) put back in place."""
  static_args = dict(static_args)
  dynamic = iter(values)
  leaves = [static_args[i] if i in static_args else next(dynamic)
            for i in range(len(static_args) + len(values))]
  return tree.tree_unflatten(in_tree, leaves)


def _unrolled_batcher(prim):
  """A batching rule that binds ``prim`` once per batch element, in index order (JAX
  unrolls the debug callbacks so that each element is printed or seen on its own)."""
  def rule(vals, dims, **params):
    for i in range(batching.batch_size(vals, dims)):
      prim.bind(*[v if d is None else indexing.index_in_dim(v, i, d, keepdims=False)
                  for v, d in zip(vals, dims)], **params)
    return [], []
  return rule


# -- debug_print / debug_callback: no outputs, run for their effect


class DebugEffect:
  """The effect of an unordered debug callback (printed ``Debug`` in jaxprs)."""
  def __str__(self):
    return "Debug"


class OrderedDebugEffect:
  """The effect of a debug callback ordered with the others (``OrderedDebug``)."""
  def __str__(self):
    return "OrderedDebug"


debug_effect = DebugEffect()
ordered_debug_effect = OrderedDebugEffect()

debug_print_p = Primitive("debug_print")
debug_print_p.multiple_results = True
debug_print_p.def_abstract_eval(lambda *avals, **params: [])

debug_callback_p = Primitive("debug_callback")
debug_callback_p.multiple_results = True
debug_callback_p.def_abstract_eval(lambda *avals, **params: [])
dce.effectful_primitives.update({debug_print_p, debug_callback_p})


def _effect_jvp(prim):
  # Differentiation prints (or calls back with) the primal values only.
  def rule(primals, tangents, **params):
    return prim.bind(*primals, **params), []
  return rule


for _prim in (debug_print_p, debug_callback_p):
  ad.jvp_rules[_prim] = _effect_jvp(_prim)
  batching.batching_rules[_prim] = _unrolled_batcher(_prim)


# -- pure_callback and io_callback: host functions with declared results


def _sequential(prim, vals, dims, params, unroll):
  """Bind ``prim`` on each batch element in turn, in a ``scan`` over the batched
  operands (batch axis first); unbatched ones are passed whole to every call."""
  batched = [v for v, d in zip(vals, dims) if d is not None]

  def body(carry, xs):
    xs = iter(xs)
    return carry, prim.bind(*[v if d is None else next(xs) for v, d in zip(vals, dims)],
                            **params)
  return control_flow.scan(body, (), batched, unroll=unroll)[1]


def _batched_avals(result_avals, size):
  return tuple(a.update(shape=(size,) + a.shape) for a in result_avals)


def _vectorized(expand_to):
  """A ``vmap_method`` that calls the callback once on the whole batch (batch axis first),
  unbatched operands given a leading axis of ``expand_to(size)`` (None: left alone)."""
  def method(prim, vals, dims, size, params):
    new_size = expand_to(size)
    if new_size is not None:
      vals = [batching.broadcast(v, new_size, 0) if d is None else v
              for v, d in zip(vals, dims)]
    return prim.bind(*vals, **dict(params, result_avals=_batched_avals(
        params["result_avals"], size)))
  return method


def _looped(unroll):
  def method(prim, vals, dims, size, params):
    return _sequential(prim, vals, dims, params, unroll)
  return method


# vmap_method -> how a batch of pure callbacks runs (None: vmap raises)
_VMAP_METHODS = {
    "sequential": _looped(unroll=1),               # a scan, one call per element
    "sequential_unrolled": _looped(unroll=True),   # the same scan, unrolled
    "expand_dims": _vectorized(lambda size: 1),    # one call; unbatched args get (1, ...)
    "broadcast_all": _vectorized(lambda size: size),  # one call; unbatched args tiled
    "legacy_vectorized": _vectorized(lambda size: None),  # one call; unbatched as they are
}
_ALLOWED_VMAP_METHODS = [*_VMAP_METHODS, None]


pure_callback_p = Primitive("pure_callback")
pure_callback_p.multiple_results = True
pure_callback_p.def_abstract_eval(lambda *avals, result_avals, **_: list(result_avals))


def _pure_callback_jvp(primals, tangents, **params):
  raise ValueError("Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use "
                   "callbacks while taking gradients.")


def _pure_callback_transpose(*args, **params):
  raise ValueError("Pure callbacks do not support transpose. Please use `jax.custom_vjp` "
                   "to use callbacks while taking gradients.")


def _pure_callback_batcher(vals, dims, *, vmap_method, **params):
  method = _VMAP_METHODS.get(vmap_method)
  if method is None:
    raise NotImplementedError(
        "vmap is only supported for the pure_callback primitive when vmap_method is one "
        "of 'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
        f"'legacy_vectorized'. Got {vmap_method=}.")
  size = batching.batch_size(vals, dims)
  vals = [v if d is None else batching.moveaxis(v, d, 0) for v, d in zip(vals, dims)]
  outs = method(pure_callback_p, vals, dims, size, dict(params, vmap_method=vmap_method))
  return outs, [0] * len(outs)


ad.jvp_rules[pure_callback_p] = _pure_callback_jvp
ad.transpose_rules[pure_callback_p] = _pure_callback_transpose
batching.batching_rules[pure_callback_p] = _pure_callback_batcher

io_callback_p = Primitive("io_callback")
io_callback_p.multiple_results = True
io_callback_p.def_abstract_eval(lambda *avals, result_avals, **_: list(result_avals))
dce.effectful_primitives.add(io_callback_p)


def _io_callback_jvp(primals, tangents, **params):
  raise ValueError("IO callbacks do not support JVP.")


def _io_callback_transpose(*args, **params):
  raise ValueError("IO callbacks do not support transpose.")


def _io_callback_batcher(vals, dims, *, ordered, **params):
  if ordered:
    raise ValueError("Cannot `vmap` ordered IO callback.")
  vals = [v if d is None else batching.moveaxis(v, d, 0) for v, d in zip(vals, dims)]
  outs = _sequential(io_callback_p, vals, dims, dict(params, ordered=False), unroll=1)
  return outs, [0] * len(outs)


ad.jvp_rules[io_callback_p] = _io_callback_jvp
ad.transpose_rules[io_callback_p] = _io_callback_transpose
batching.batching_rules[io_callback_p] = _io_callback_batcher


# -- checkify's check: its operands are the leaves of a checkify Error (err_tree); what
# running and batching it mean (raise the error, reduce it over the batch) is registered
# by _src/checkify.py, which also rewrites it away inside checkify
check_p = Primitive("check")
check_p.multiple_results = True   # none
dce.effectful_primitives.add(check_p)
core.hidden_params[check_p] = lambda name, value, params: name == "err_tree"


@check_p.def_abstract_eval
def _check_abstract_eval(*avals, err_tree, debug):
  return []


def _check_jvp(primals, tangents, *, err_tree, debug):
  # check the primal values; tangents carry no errors
  return check_p.bind(*primals, err_tree=err_tree, debug=debug), []


ad.jvp_rules[check_p] = _check_jvp

_FUNCTIONALIZATION_ERROR = (
    "Cannot abstractly evaluate a checkify.check which was not functionalized. This "
    "probably means you tried to stage (jit/scan/pmap/...) a `check` without "
    "functionalizing it through `checkify.checkify`.")


def staged_check(debug):
  """What compiling a check staged without checkify does (either tier): JAX's error; a
  ``debug_check`` is dropped."""
  if not debug:
    raise ValueError(_FUNCTIONALIZATION_ERROR)
