"""Tier 0's host callbacks: the implementations of the callback primitives
(``lax/callbacks.py``), which call back into Python with the runtime values (as
``Array``s, as JAX passes them). The XLA tier's FFI handler runs the same functions.
"""
from __future__ import annotations

import copy
import logging
import sys

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.core.array import Array
from jaxlite._src.backends.numpy import codegen
from jaxlite._src.backends.numpy.impls import impl_rules
from jaxlite._src.lax import callbacks as cb
from jaxlite._src.lax.callbacks import _merge_callback_args

# jax.debug.log's records are made by (and handled here through) the debugging module's
# logger
logger = logging.getLogger("jaxlite._src.debugging")


def _host_arrays(values) -> list:
  """The runtime values as the callback receives them: ``Array``s, as JAX passes them.

  NumPy values are copied: tier 0 may later write into the buffer of a value that dies,
  not knowing that the callback kept it. (The XLA handler passes Arrays of its own
  copies.)"""
  return [v if isinstance(v, Array) else Array(np.array(v)) for v in values]


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


def _pure_callback_impl(*args, callback, result_avals, sharding, vmap_method):
  return _checked_results(callback(*_host_arrays(args)), result_avals)


def _io_callback_impl(*args, callback, ordered, result_avals, sharding):
  return _checked_results(callback(*_host_arrays(args)), result_avals)


impl_rules[cb.debug_print_p] = _debug_print_impl
impl_rules[cb.debug_callback_p] = _debug_callback_impl
impl_rules[cb.pure_callback_p] = _pure_callback_impl
impl_rules[cb.io_callback_p] = _io_callback_impl


def _check_codegen(em, eqn, args, indent):
  cb.staged_check(eqn.params["debug"])
  return "None"


codegen.codegen_rules[cb.check_p] = _check_codegen
