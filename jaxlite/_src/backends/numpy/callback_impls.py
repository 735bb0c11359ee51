"""Tier 0's host callbacks: the implementations of the callback primitives
(``lax/callbacks.py``), which call back into Python with the runtime values (as
``Array``s, as JAX passes them). The XLA tier's FFI handler runs the same functions.
"""
from __future__ import annotations

import copy
import functools
import logging
import sys
import traceback

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.base import errors
from jaxlite._src.core.array import Array
from jaxlite._src.backends.numpy import codegen
from jaxlite._src.backends.numpy.impls import impl_rules
from jaxlite._src.lax import callbacks as cb
from jaxlite._src.lax.callbacks import _merge_callback_args

# jax.debug.log's records are made by (and handled here through) the debugging module's
# logger
logger = logging.getLogger("jaxlite._src.debugging")
# A failing callback is logged under JAX's logger names and messages: libraries filter
# these records by both (equinox's filter_jit silences "jax.pure_callback failed")
_failure_loggers = {"pure_callback": logging.getLogger("jax._src.callback"),
                    "io_callback": logging.getLogger("jax._src.callback"),
                    "debug.callback": logging.getLogger("jax._src.debugging")}


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


def _call(name, callback, args):
  """The user's callback on the runtime values; a failure is logged as JAX logs it."""
  try:
    return callback(*_host_arrays(args))
  except Exception:
    _failure_loggers[name].exception(f"jax.{name} failed")
    raise


def failure_message() -> str:
  """What XLA's CPU client reports (after its ``INTERNAL: `` status) for the exception
  being handled in a host callback: the Python traceback, ending with the exception."""
  return "CpuCallback error calling callback: " + traceback.format_exc().removesuffix("\n")


def reported_as_runtime_error(impl):
  """``impl`` raising what the runtime raises when a host callback fails: a
  ``JaxRuntimeError`` with the traceback in its message (JAX's, eager and under jit)."""
  @functools.wraps(impl)
  def run(*args, **params):
    try:
      return impl(*args, **params)
    except Exception:
      raise errors.JaxRuntimeError("INTERNAL: " + failure_message()) from None
  return run


def _debug_callback_impl(*args, callback, effect, partitioned):
  _call("debug.callback", callback, args)
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
  return _checked_results(_call("pure_callback", callback, args), result_avals)


def _io_callback_impl(*args, callback, ordered, result_avals, sharding):
  return _checked_results(_call("io_callback", callback, args), result_avals)


impl_rules[cb.debug_print_p] = _debug_print_impl
impl_rules[cb.debug_callback_p] = reported_as_runtime_error(_debug_callback_impl)
impl_rules[cb.pure_callback_p] = reported_as_runtime_error(_pure_callback_impl)
impl_rules[cb.io_callback_p] = reported_as_runtime_error(_io_callback_impl)


def _check_codegen(em, eqn, args, indent):
  cb.staged_check(eqn.params["debug"])
  return "None"


codegen.codegen_rules[cb.check_p] = _check_codegen
