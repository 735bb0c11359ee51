"""Traceback filtering, as JAX's ``jax._src.traceback_util`` (served under that name by the
alias; equinox and flax use it). An exception that leaves an API boundary (``jit``'s
call, a library's ``api_boundary``) loses the frames of the excluded paths (jaxlite's
package, and the files libraries register) as ``jax_traceback_filtering`` says:

- ``off``: nothing changes;
- ``tracebackhide``: the hidden frames get a ``__tracebackhide__`` local (IPython, pytest
  skip them); the traceback keeps every frame;
- ``remove_frames``: the traceback loses them, and its ``__cause__`` is an
  ``UnfilteredStackTrace`` holding the whole one;
- ``quiet_remove_frames`` (what ``auto`` means outside IPython): the traceback loses them
  and the exception gets a note saying so.

Only the outermost boundary filters: one below another lets the exception through.
"""
from __future__ import annotations

import functools
import os
import traceback
import types

from jaxlite._src.base.config import config

# jaxlite's own frames are internal, every one of them (JAX registers its files one by one)
_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_exclude_paths: list = [_PACKAGE]

# the code of the frames that filter (api_boundary's wrapper, jit's call: ``boundary``)
_boundary_codes: set = set()

_simplified_tb_msg = ("For simplicity, JAX has removed its internal frames from the "
                      "traceback of the following exception. Set "
                      "JAX_TRACEBACK_FILTERING=off to include these.")
_jax_message_append = (
    'The stack trace below excludes JAX-internal frames.\n'
    'The preceding is the original exception that occurred, unmodified.\n'
    '\n--------------------')


class UnfilteredStackTrace(Exception):
  """The ``__cause__`` of an exception filtered in ``remove_frames`` mode: the whole
  traceback."""


class SimplifiedTraceback(Exception):
  def __str__(self):
    return _simplified_tb_msg


SimplifiedTraceback.__module__ = "jax.errors"


def register_exclusion(path: str):
  """Record ``path`` (a file or folder) as one whose frames a filtered traceback omits."""
  _exclude_paths.append(path)


def _path_starts_with(path: str, prefix: str) -> bool:
  path, prefix = os.path.abspath(path), os.path.abspath(prefix)
  try:
    return os.path.commonpath([path, prefix]) == prefix
  except ValueError:   # (paths on different drives)
    return False


def include_filename(filename: str) -> bool:
  """Whether frames of ``filename`` stay in a filtered traceback."""
  return not any(_path_starts_with(filename, p) for p in _exclude_paths)


def include_frame(frame) -> bool:
  """Whether ``frame`` is outside every excluded path."""
  return include_filename(frame.f_code.co_filename)


def filter_traceback(tb):
  """``tb`` without the frames of the excluded paths."""
  out = None
  for f, lineno in reversed(list(traceback.walk_tb(tb))):
    if include_frame(f):
      out = types.TracebackType(out, f, f.f_lasti, lineno)
  return out


def _add_call_stack_frames(tb):
  """``tb`` preceded by the frames that called its first one, up to the first run of
  module-level frames (JAX's heuristic to stop short of a REPL's own frames)."""
  out, reached_module_level = tb, False
  for f, lineno in traceback.walk_stack(tb.tb_frame):
    if "importlib._bootstrap" in f.f_code.co_filename:
      continue
    if reached_module_level and f.f_code.co_name != "<module>":
      break
    if include_frame(f):
      out = types.TracebackType(out, f, f.f_lasti, lineno)
    reached_module_level = reached_module_level or f.f_code.co_name == "<module>"
  return out


def _filtering_mode() -> str:
  mode = config.jax_traceback_filtering
  if mode is None or mode == "auto":
    try:
      get_ipython()  # noqa: F821 (defined inside IPython only)
      mode = "tracebackhide"
    except NameError:
      mode = "quiet_remove_frames"
  return mode


def _under_boundary(e: BaseException) -> bool:
  """Whether a boundary frame called the one ``e`` is passing through now."""
  tb = e.__traceback__
  return tb is not None and any(
      f.f_code in _boundary_codes for f, _ in traceback.walk_stack(tb.tb_frame.f_back))


def filter_exception(e: Exception):
  """Filter ``e``'s traceback as ``jax_traceback_filtering`` says, in place; call it in
  the ``except`` clause of a boundary frame (see ``boundary``) before re-raising."""
  mode = _filtering_mode()
  if mode == "off" or _under_boundary(e):
    return
  tb = e.__traceback__
  if mode == "tracebackhide":
    for f, _ in traceback.walk_tb(tb):
      if not include_frame(f):
        f.f_locals["__tracebackhide__"] = True
    return
  e.with_traceback(filter_traceback(tb))
  if mode == "quiet_remove_frames":
    e.add_note("--------------------\n" + _simplified_tb_msg)
  elif mode == "remove_frames":
    msg = "".join(traceback.format_exception_only(type(e), e)).strip()
    unfiltered = UnfilteredStackTrace(f"{msg}\n\n{_jax_message_append}")
    unfiltered.with_traceback(_add_call_stack_frames(tb))
    unfiltered.__cause__, unfiltered.__context__ = e.__cause__, e.__context__
    unfiltered.__suppress_context__ = e.__suppress_context__
    e.__cause__, e.__context__ = unfiltered, None
  else:
    raise ValueError(f"JAX_TRACEBACK_FILTERING={mode} is not a valid value.")


def boundary(fun):
  """Mark ``fun`` (which calls ``filter_exception`` on the exceptions leaving it) as a
  boundary frame, so that boundaries below it let their exceptions through."""
  _boundary_codes.add(fun.__code__)
  return fun


def api_boundary(fun=None, **_):
  """``fun`` as an API boundary: an exception leaving it, if no outer boundary is on the
  stack, has its traceback filtered (see the module's docstring)."""
  if fun is None:
    return api_boundary

  @functools.wraps(fun)
  def reraise_with_filtered_traceback(*args, **kwargs):
    __tracebackhide__ = True  # noqa: F841 (read by IPython and pytest)
    try:
      return fun(*args, **kwargs)
    except Exception as e:
      filter_exception(e)
      raise
  return reraise_with_filtered_traceback


boundary(api_boundary(lambda: None))   # (one code object serves every wrapper)
