"""Run-time printing and callbacks inside transformed code: ``jax.debug.print``,
``jax.debug.callback``, ``jax.pure_callback`` and ``jax.experimental.io_callback``.

They are primitives whose implementation calls back into Python with the runtime values
(as ``Array``s on the CPU, as JAX passes them), so under ``jit`` they run on every call
(not once, at tracing, like ``print``). The debug ones and ``io_callback`` are effectful:
dead-code elimination and CSE never remove them.

The primitives and their rules are in ``lax/callbacks.py``.
"""
from __future__ import annotations

import logging
import os
import string
import sys
from typing import Callable

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.base import tree
from jaxlite._src.core.core import ShapedArray
from jaxlite._src.lax.callbacks import (
    _ALLOWED_VMAP_METHODS, _FlatCallback, _merge_callback_args, debug_callback_p,
    debug_effect, debug_print_p, io_callback_p, ordered_debug_effect, pure_callback_p)

logger = logging.getLogger(__name__)


def _as_operand(x):
  from jaxlite._src.libraries.numpy.util import as_operand
  return as_operand(x)


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
              partitioned: bool = False, skip_format_check: bool = False,
              _use_logging: bool = True, **kwargs):
  """``jax.debug.log``: like :func:`debug_print` (JAX's is it with ``_use_logging`` on),
  but the message goes to this module's logger at level INFO, located at the caller's
  line."""
  return debug_print(fmt, *args, ordered=ordered, partitioned=partitioned,
                     skip_format_check=skip_format_check, _use_logging=_use_logging,
                     **kwargs)


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
