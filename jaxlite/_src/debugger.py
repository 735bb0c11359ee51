"""``jax.debug.breakpoint``: stop a running program in a small debugger ("jdb").

The breakpoint records the Python frames around it when it is reached (traced, under
``jit``), and a debug callback opens the debugger with those frames when the program
runs, the frames' traced locals replaced by their runtime values: ``p x`` prints the
array a tracer stood for. The commands are those of JAX's command-line debugger.
"""
from __future__ import annotations

import cmd
import dataclasses
import inspect
import os
import pprint
import sys
import threading
import traceback

from jaxlite._src.base import traceback_util
from jaxlite._src.base import tree
from jaxlite._src.core.core import Tracer
from jaxlite._src.debugging import debug_callback, pure_callback
from jaxlite._src.lax.custom_derivatives import stop_gradient

_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


@dataclasses.dataclass(frozen=True)
class DebuggerFrame:
  """One Python frame as the debugger shows it."""
  filename: str
  locals: dict
  globals: dict
  code_context: list | None
  source: list
  lineno: int
  offset: int | None

  @classmethod
  def from_frameinfo(cls, info) -> DebuggerFrame:
    try:
      lines, start = inspect.getsourcelines(info.frame)
      source = "".join(lines).split("\n")
      # (getsourcelines counts from 1, or gives 0 for a whole module)
      offset = info.lineno - max(start, 1)
      if offset >= len(source):
        source, offset = [], None
    except OSError:
      source, offset = [], None
    return cls(info.filename, dict(info.frame.f_locals), {}, info.code_context, source,
               info.lineno, offset)


class _CantFlatten:
  def __repr__(self):
    return "<cant_flatten>"


cant_flatten = _CantFlatten()


def _split_frames(frames):
  """The tracers among the frames' locals (the callback's operands), and a function of
  their runtime values giving the frames with those values in their places."""
  operands, layout = [], []
  for frame in frames:
    names = []
    for name, value in frame.locals.items():
      try:
        leaves, treedef = tree.tree_flatten(value)
      except Exception:   # (a value the pytree registry cannot walk is shown as such)
        leaves, treedef = [cant_flatten], tree.tree_structure(0)
      spots = [i for i, leaf in enumerate(leaves) if isinstance(leaf, Tracer)]
      operands += [leaves[i] for i in spots]
      names.append((name, leaves, treedef, spots))
    layout.append((frame, names))

  def rebuild(values):
    values, out = iter(values), []
    for frame, names in layout:
      local = {}
      for name, leaves, treedef, spots in names:
        leaves = list(leaves)
        for i in spots:
          leaves[i] = next(values)
        local[name] = tree.tree_unflatten(treedef, leaves)
      out.append(dataclasses.replace(frame, locals=local))
    return out
  return operands, rebuild


class CliDebugger(cmd.Cmd):
  """A text debugger over recorded frames (JAX's "jdb"): ``p``/``pp`` print an
  expression, ``u``/``d`` move between frames, ``l`` lists the source, ``w`` the stack,
  ``c`` continues and ``q`` exits the program; any other line is evaluated and printed."""
  prompt = "(jdb) "

  def __init__(self, frames, thread_id, stdin=None, stdout=None, completekey="tab"):
    super().__init__(stdin=stdin, stdout=stdout, completekey=completekey)
    self.use_rawinput = stdin is None
    self.frames, self.frame_index, self.thread_id = frames, 0, thread_id
    self.intro = "Entering jdb:"

  def evaluate(self, expr):
    frame = self.frames[self.frame_index]
    return eval(expr, {}, {**frame.globals, **frame.locals})

  def _show(self, expr, format):
    try:
      print(format(self.evaluate(expr)), file=self.stdout)
    except Exception:
      message = traceback.format_exception_only(*sys.exc_info()[:2])[-1].strip()
      print("***", message, file=self.stdout)

  def default(self, line):
    """Evaluate an expression and print its repr."""
    self._show(line, repr)

  def do_p(self, arg):
    """p expression
    Evaluates and prints the value of an expression
    """
    self._show(arg, repr)

  def do_pp(self, arg):
    """pp expression
    Evaluates and pretty-prints the value of an expression
    """
    self._show(arg, pprint.pformat)

  def print_context(self, num_lines=2):
    frame = self.frames[self.frame_index]
    lines = [f"> {frame.filename}({frame.lineno})"]
    for i, line in enumerate(frame.source):
      if frame.offset - 1 - num_lines <= i <= frame.offset + num_lines:
        lines.append(("->  " if i == frame.offset else "    ") + line)
    print("\n".join(lines), file=self.stdout)

  def do_up(self, arg, /):
    """u(p)
    Move up a stack frame.
    """
    if self.frame_index == len(self.frames) - 1:
      print("At topmost frame.", file=self.stdout)
    else:
      self.frame_index += 1
    self.print_context()
  do_u = do_up

  def do_down(self, arg, /):
    """d(own)
    Move down a stack frame.
    """
    if self.frame_index == 0:
      print("At bottommost frame.", file=self.stdout)
    else:
      self.frame_index -= 1
    self.print_context()
  do_d = do_down

  def do_list(self, _):
    """l(ist)
    List source code for the current file.
    """
    self.print_context(num_lines=5)
  do_l = do_list

  def do_continue(self, _):
    """c(ont(inue))
    Continue the program's execution.
    """
    return True
  do_c = do_cont = do_continue

  def do_quit(self, _):
    """q(uit)\n(exit)
    Quit the debugger. The program is given an exit command.
    """
    sys.exit(0)
  do_q = do_EOF = do_exit = do_quit

  def do_where(self, _):
    """w(here)
    Prints a stack trace with the most recent frame on the bottom.
    'bt' is an alias for this command.
    """
    lines = ["Traceback:"]
    for frame in self.frames[::-1]:
      lines.append(f'  File "{frame.filename}", line {frame.lineno}')
      lines.append("    <no source>" if frame.offset is None else
                   f"    {frame.source[frame.offset].strip()}")
    print("\n".join(lines), file=self.stdout)
  do_w = do_bt = do_where

  def run(self):
    while True:
      try:
        self.cmdloop()
        return
      except KeyboardInterrupt:
        print("--KeyboardInterrupt--", file=sys.stdout)


def run_debugger(frames, thread_id, **kwargs):
  CliDebugger(frames, thread_id, **kwargs).run()


# name -> (priority, debugger): the highest priority is used when no backend is named
_debuggers: dict = {"cli": (-1, run_debugger)}
_debug_lock = threading.Lock()


def register_debugger(name, debugger, priority):
  """Make ``debugger(frames, thread_id, **kwargs)`` a backend of ``breakpoint``."""
  if name in _debuggers:
    raise ValueError(f"Debugger with name \"{name}\" already registered.")
  _debuggers[name] = (priority, debugger)


def get_debugger(backend=None):
  if backend is not None and backend in _debuggers:
    return _debuggers[backend][1]
  return max(_debuggers.values(), key=lambda entry: entry[0])[1]


def _user_frame(frame) -> bool:
  """A frame outside jaxlite and the libraries that hide theirs (``traceback_util``)."""
  return (not frame.f_code.co_filename.startswith(_PACKAGE)
          and traceback_util.include_frame(frame))


def breakpoint(*, backend: str | None = None, filter_frames: bool = True,
               num_frames: int | None = None, ordered: bool = False, token=None,
               **kwargs):
  """Stop at this point when the program runs, in a debugger over the calling frames
  (``jax.debug.breakpoint``); under ``jit`` on every call, with traced values shown as
  the arrays they stand for.

  Parameters
  ----------
  backend : str, optional
    A registered debugger ('cli', the command-line one, is the default).
  filter_frames : bool
    Leave out jaxlite's own frames.
  num_frames : int, optional
    Show only this many frames, innermost first.
  ordered : bool
    Order the stop with the other ordered effects (``jax.debug.print(ordered=True)``).
  token : pytree of arrays, optional
    Instead of ``ordered``: stop once ``token`` is computed; it is returned, and must be
    used later, or the stop is pruned with it.
  **kwargs
    Passed to the debugger (``stdin``, ``stdout``).

  Returns
  -------
  ``token``, or None.
  """
  if token is not None and ordered:
    raise ValueError("`ordered` and `token` are mutually exclusive arguments.")
  infos = inspect.stack()[1:]
  frames = [DebuggerFrame.from_frameinfo(i) for i in infos
            if not filter_frames or _user_frame(i.frame)]
  if num_frames is not None:
    frames = frames[:num_frames]
  operands, rebuild = _split_frames(frames)

  def stop(*values):
    thread_id = (None if threading.current_thread() is threading.main_thread()
                 else threading.get_ident())
    with _debug_lock:
      get_debugger(backend)(rebuild(values), thread_id, **kwargs)

  if token is None:
    debug_callback(stop, *operands, ordered=ordered)
    return None

  def stop_then_pass(x, *values):
    stop(*values)
    return x
  token, operands = stop_gradient((token, operands))
  return pure_callback(stop_then_pass, token, token, *operands)
