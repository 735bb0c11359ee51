"""Run-time printing and callbacks inside transformed code: ``jax.debug.print``,
``jax.debug.callback``, ``jax.pure_callback`` and ``jax.experimental.io_callback``.

They are primitives whose implementation calls back into Python with the runtime values
(as ``Array``s on the CPU, as JAX passes them), so under ``jit`` they run on every call
(not once, at tracing, like ``print``). The debug ones and ``io_callback`` are effectful:
dead-code elimination and CSE never remove them.

Under ``vmap``, as in JAX: the debug primitives are unrolled, one call per batch element
in index order; ``io_callback`` loops over the batch (a ``scan``) and refuses ordered
callbacks; ``pure_callback`` does what its ``vmap_method`` says (``_VMAP_METHODS``).
"""
from __future__ import annotations

import copy
import dataclasses
import logging
import os
import string
import sys
from typing import Any, Callable

import numpy as np

from jaxlite._src import dtypes
from jaxlite._src import tree
from jaxlite._src.core import Primitive, ShapedArray
from jaxlite._src.lax import control_flow
from jaxlite._src.lax import indexing
from jaxlite._src.passes import dce
from jaxlite._src.transforms import ad
from jaxlite._src.transforms import batching

logger = logging.getLogger(__name__)


def _as_operand(x):
  from jaxlite._src.numpy.util import as_operand
  return as_operand(x)


def _host_arrays(values) -> list:
  """The runtime values as the callback receives them: ``Array``s, as JAX passes them.

  NumPy values are copied: tier 0 may later write into the buffer of a value that dies,
  not knowing that the callback kept it. (The XLA handler passes Arrays of its own
  copies.)"""
  from jaxlite._src.array import Array
  return [v if isinstance(v, Array) else Array(np.array(v)) for v in values]


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


def _split_callback_args(args, kwargs):
  """``(in_tree, operands, static_args)``: leaves that are arrays or numbers become
  operands; the others (strings, objects) are passed to the callback as they are."""
  leaves, in_tree = tree.tree_flatten((args, kwargs))
  operands, static_args = [], {}
  for i, leaf in enumerate(leaves):
    try:
      operands.append(_as_operand(leaf))
    except TypeError:
      static_args[i] = leaf
  return in_tree, operands, static_args


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


def _format_message(fmt, np_printoptions, has_placeholders, args, kwargs) -> str:
  if not has_placeholders:   # JAX appends the arguments: print("x", v) -> "x <v>"
    return " ".join((fmt, *(str(a) for a in args)))
  with np.printoptions(**dict(np_printoptions)):
    return fmt.format(*args, **kwargs)


def _debug_print_impl(*args, fmt, has_placeholders, in_tree, logging_record,
                      np_printoptions, ordered, partitioned, static_args):
  pos, kw = _merge_callback_args(in_tree, _host_arrays(args), static_args)
  message = _format_message(fmt, np_printoptions, has_placeholders, pos, kw)
  if logging_record is None:
    sys.stdout.write(message + "\n")
  else:   # jax.debug.log: the record made where it was called, with the message
    record = copy.copy(logging_record)
    record.msg = message
    logger.handle(record)
  return []


def _debug_callback_impl(*args, callback, effect, partitioned):
  callback(*_host_arrays(args))
  return []


def _effect_jvp(prim):
  # Differentiation prints (or calls back with) the primal values only.
  def rule(primals, tangents, **params):
    return prim.bind(*primals, **params), []
  return rule


for _prim in (debug_print_p, debug_callback_p):
  ad.jvp_rules[_prim] = _effect_jvp(_prim)
  batching.batching_rules[_prim] = _unrolled_batcher(_prim)


class _FormatChecker(string.Formatter):
  """Checks a ``jax.debug.print`` format against its arguments, formatting nothing."""

  def format_field(self, value, format_spec):
    return ""

  def check_unused_args(self, used_args, args, kwargs):
    unused = [a for i, a in enumerate(args) if i not in used_args]
    if unused:
      raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused}")
    unused_kw = [k for k in kwargs if k not in used_args]
    if unused_kw:
      raise ValueError(
          f"Unused keyword arguments to `jax.debug.print`: {unused_kw}. You may be passing "
          "an f-string (i.e, `f\"{x}\"`) into `jax.debug.print` and instead should pass "
          "in a regular string.")


def _has_placeholders(fmt: str) -> bool:
  if not fmt:
    return False
  _, field_name, *_ = next(iter(string.Formatter().parse(fmt)))
  return field_name is not None


_JAXLITE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _logging_record(level):
  """A log record located at the user's line that called ``jax.debug.log``."""
  frame = sys._getframe(1)
  while frame is not None and frame.f_code.co_filename.startswith(_JAXLITE_DIR):
    frame = frame.f_back
  file_name, line_no = (("(unknown file)", 0) if frame is None
                        else (frame.f_code.co_filename, frame.f_lineno))
  return logger.makeRecord(logger.name, level, file_name, line_no, "", (), None)


def debug_print(fmt: str | None = None, *args, ordered: bool = False,
                partitioned: bool = False, skip_format_check: bool = False,
                _use_logging: bool = False, **kwargs):
  """Print ``fmt.format(*args, **kwargs)`` with the *runtime* values, also under jit.

  Unlike Python's ``print``, which runs once while a function is traced, this prints on
  every call, and shows values rather than tracers. Under ``vmap`` it prints once per
  batch element. ``jax.debug.print(ordered=True)(fmt, *args)`` (options first) is the
  two-call form.

  Parameters
  ----------
  fmt : str
    A ``str.format`` string; every argument must be used (pass values by keyword rather
    than writing an f-string). Without placeholders the arguments are appended.
  *args, **kwargs
    The values to format: arrays are passed at run time, other objects as they are.
  ordered : bool
    Keep this print in program order with the other ordered effects.
  partitioned : bool
    Accepted for JAX compatibility (one device: the whole value is printed).
  skip_format_check : bool
    Do not check ``fmt`` against the arguments.
  """
  def _debug_print(fmt: str, *c_args, **c_kwargs):
    if not skip_format_check:
      _FormatChecker().format(fmt, *c_args, **c_kwargs)
    in_tree, operands, static_args = _split_callback_args(c_args, c_kwargs)
    debug_print_p.bind(
        *operands, fmt=fmt, has_placeholders=_has_placeholders(fmt), in_tree=in_tree,
        logging_record=_logging_record(logging.INFO) if _use_logging else None,
        np_printoptions=tuple(np.get_printoptions().items()), ordered=ordered,
        partitioned=partitioned, static_args=tuple(static_args.items()))

  if fmt is not None:
    _debug_print(fmt, *args, **kwargs)
    return None
  if args or kwargs:
    raise TypeError(f"debug_print received unexpected arguments in the two-call form: "
                    f"{args=} {kwargs=}")
  return _debug_print


def debug_log(fmt: str | None = None, *args, ordered: bool = False,
              partitioned: bool = False, skip_format_check: bool = False, **kwargs):
  """``jax.debug.log``: like :func:`debug_print`, but the message goes to this module's
  logger at level INFO, located at the caller's line."""
  return debug_print(fmt, *args, ordered=ordered, partitioned=partitioned,
                     skip_format_check=skip_format_check, _use_logging=True, **kwargs)


def debug_callback(callback: Callable[..., None] | None = None, *args,
                   ordered: bool = False, partitioned: bool = False, **kwargs):
  """Call ``callback(*args, **kwargs)`` with the runtime values, for its side effect.

  Arrays reach the callback as ``Array``s; other arguments as they are. Under ``vmap``
  the callback runs once per batch element. ``jax.debug.callback(ordered=True)(f, *args)``
  (options first) is the two-call form.
  """
  def _debug_callback(callback, *c_args, **c_kwargs):
    if not callable(callback):
      raise TypeError("first argument to jax.debug.callback must be callable, but got an "
                      f"object of type {type(callback)}")
    in_tree, operands, static_args = _split_callback_args(c_args, c_kwargs)

    def _flat_callback(*values):
      pos, kw = _merge_callback_args(in_tree, values, static_args)
      callback(*pos, **kw)
    debug_callback_p.bind(*operands, callback=_flat_callback,
                          effect=ordered_debug_effect if ordered else debug_effect,
                          partitioned=partitioned)

  if callback is not None:
    _debug_callback(callback, *args, **kwargs)
    return None
  if args or kwargs:
    raise TypeError(f"debug_callback received unexpected arguments in the two-call form: "
                    f"{args=} {kwargs=}")
  return _debug_callback


# -- pure_callback and io_callback: host functions with declared results

def _checked_results(outs, result_avals) -> list:
  """The callback's flat results as NumPy arrays of the declared shapes and dtypes.

  Values are canonicalized first, as JAX does (a float64 result is float32 with x64
  off); the errors are JAX's, raised inside the callback (XLA wraps them)."""
  if len(outs) != len(result_avals):
    raise RuntimeError(f"Mismatched number of outputs from callback. Expected: "
                       f"{len(result_avals)}, Actual: {len(outs)}")
  results = []
  for i, (value, aval) in enumerate(zip(outs, result_avals)):
    value = np.array(value)   # a copy: the callback may still change its own array
    value = value.astype(dtypes.canonicalize_dtype(value.dtype), copy=False)
    if value.shape != aval.shape:
      raise RuntimeError(f"Incorrect output shape for return value #{i}: Expected: "
                         f"{aval.shape}, Actual: {value.shape}")
    if value.dtype != aval.dtype:
      raise RuntimeError(f"Incorrect output dtype for return value #{i}: Expected: "
                         f"{aval.dtype}, Actual: {value.dtype}")
    results.append(value)
  return results


def _result_avals(result_shape_dtypes):
  """``(avals, treedef)`` of the declared results; 64-bit types need x64 (as in JAX)."""
  leaves, out_tree = tree.tree_flatten(result_shape_dtypes)
  avals = []
  for leaf in leaves:
    dtype = np.dtype(leaf.dtype)
    if dtypes.canonicalize_dtype(dtype) != dtype:
      raise ValueError("result_shape_dtypes cannot specify 64-bit types when "
                       "`jax_enable_x64` is disabled")
    avals.append(ShapedArray(tuple(leaf.shape), dtype))
  return tuple(avals), out_tree


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


def _pure_callback_impl(*args, callback, result_avals, sharding, vmap_method):
  return _checked_results(callback(*_host_arrays(args)), result_avals)


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


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None,
                  **kwargs):
  """Call the pure host function ``callback`` on the runtime values, also under jit.

  ``callback`` receives ``Array``s and returns arrays matching ``result_shape_dtypes``, a
  pytree of ``ShapeDtypeStruct`` (or arrays); the results come back with its structure.
  Being pure, it may be called any number of times, or not at all if its results are
  unused.

  Parameters
  ----------
  callback : callable
    The host function, called as ``callback(*args, **kwargs)``.
  result_shape_dtypes : pytree
    Leaves with ``shape`` and ``dtype`` describing the results (no 64-bit types unless
    ``jax_enable_x64`` is on).
  sharding : optional
    Accepted for JAX compatibility (there is one device).
  vmap_method : str or None
    What ``vmap`` does: ``"sequential"`` calls once per batch element (a ``scan``),
    ``"sequential_unrolled"`` too (the scan unrolled); ``"expand_dims"`` calls once with
    the batch axis first and a size-1 axis added to unbatched arguments;
    ``"broadcast_all"`` likewise but tiles unbatched arguments to the batch size;
    ``"legacy_vectorized"`` passes unbatched arguments unchanged. With None, ``vmap``
    raises ``NotImplementedError``.
  """
  if vmap_method not in _ALLOWED_VMAP_METHODS:
    raise ValueError(f"vmap_method must be on of the allowed methods "
                     f"{_ALLOWED_VMAP_METHODS}, but got: {vmap_method}")
  leaves, in_tree = tree.tree_flatten((args, kwargs))
  result_avals, out_tree = _result_avals(result_shape_dtypes)
  outs = pure_callback_p.bind(*[_as_operand(x) for x in leaves],
                              callback=_FlatCallback(callback, in_tree),
                              result_avals=result_avals, sharding=sharding,
                              vmap_method=vmap_method)
  return tree.tree_unflatten(out_tree, outs)


io_callback_p = Primitive("io_callback")
io_callback_p.multiple_results = True
io_callback_p.def_abstract_eval(lambda *avals, result_avals, **_: list(result_avals))
dce.effectful_primitives.add(io_callback_p)


def _io_callback_impl(*args, callback, ordered, result_avals, sharding):
  return _checked_results(callback(*_host_arrays(args)), result_avals)


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


def io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered: bool = False,
                **kwargs):
  """Call the impure host function ``callback`` on the runtime values, also under jit.

  Like :func:`pure_callback`, but the call is an effect: it is never removed, even if
  its results are unused. Under ``vmap`` it is called once per batch element, in order;
  an ``ordered`` one cannot be vmapped.

  Parameters
  ----------
  callback : callable
    The host function, called as ``callback(*args, **kwargs)`` with ``Array``s.
  result_shape_dtypes : pytree
    Leaves with ``shape`` and ``dtype`` describing the results (None: no results).
  sharding : optional
    Accepted for JAX compatibility (there is one device).
  ordered : bool
    Keep this call in program order with the other ordered effects.
  """
  leaves, in_tree = tree.tree_flatten((args, kwargs))
  result_avals, out_tree = _result_avals(result_shape_dtypes)
  outs = io_callback_p.bind(*[_as_operand(x) for x in leaves],
                            callback=_FlatCallback(callback, in_tree), ordered=ordered,
                            result_avals=result_avals, sharding=sharding)
  return tree.tree_unflatten(out_tree, outs)
