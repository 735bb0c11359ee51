"""Argument handling shared by the transformations: flattening, argnums, debug info."""
from __future__ import annotations

import functools
import inspect
import operator
from typing import Callable, NamedTuple

from jaxlite._src.base import tree


class DebugInfo(NamedTuple):
  """What error messages say about a traced function: its name, source and arguments."""
  traced_for: str          # "jit", "make_jaxpr", ...
  func_src_info: str       # "f at demo.py:12"
  arg_names: tuple         # one name per flattened input leaf, e.g. "x", "params['w']"
  func_name: str = ""


def check_callable(fun):
  """JAX's TypeError for a transformation given something other than a function."""
  if not callable(fun):
    raise TypeError(f"Expected a callable value, got {fun}")
  if inspect.isgeneratorfunction(fun):
    raise TypeError(f"Expected a function, got a generator function: {fun}")


def wraps(wrapped):
  """``functools.wraps``, leaving the wrapper's own name and doc where ``wrapped``'s cannot
  be copied (a callable object whose ``__name__`` is not a string), as JAX's does."""
  def update(wrapper):
    try:
      return functools.update_wrapper(wrapper, wrapped)
    except (AttributeError, TypeError):
      return wrapper
  return update


def fun_name(fun) -> str:
  return getattr(fun, "__name__", None) or type(fun).__name__


def fun_source_info(fun) -> str:
  """``name at file:line`` for a function, as JAX's messages cite it."""
  target = inspect.unwrap(fun) if callable(fun) else fun
  code = getattr(target, "__code__", None)
  if code is None:
    return fun_name(fun)
  return f"{fun_name(fun)} at {code.co_filename}:{code.co_firstlineno}"


def debug_info(traced_for: str, fun: Callable, args, kwargs, static_argnums=()) -> DebugInfo:
  return DebugInfo(traced_for, fun_source_info(fun),
                   tuple(_arg_names(fun, args, kwargs, static_argnums)), fun_name(fun))


def _arg_names(fun, args, kwargs, static_argnums):
  try:
    bound = inspect.signature(fun).bind(*args, **kwargs)
    named = list(bound.arguments.items())
  except (TypeError, ValueError):
    named = [(f"args[{i}]", a) for i, a in enumerate(args)] + [
        (f"kwargs['{k}']", v) for k, v in kwargs.items()]
  dynamic = [(n, a) for i, (n, a) in enumerate(named) if i not in static_argnums]
  names = []
  for name, value in dynamic:
    for path, _ in tree.tree_flatten_with_path(value)[0]:
      names.append(f"{name}{tree.keystr(path)}")
  return names


def flatten_fun(fun: Callable, in_tree, with_kwargs=True):
  """A function of flat leaves that calls ``fun`` on the rebuilt pytrees.

  ``in_tree`` describes ``(args, kwargs)``, or just the tuple ``args`` when
  ``with_kwargs`` is False. Returns ``(flat_fun, out_tree)``: ``out_tree()`` gives the
  output treedef once ``flat_fun`` has run.
  """
  store = []

  def flat_fun(*leaves):
    args, kwargs = (tree.tree_unflatten(in_tree, leaves) if with_kwargs
                    else (tree.tree_unflatten(in_tree, leaves), {}))
    out = fun(*args, **kwargs)
    out_leaves, out_treedef = tree.tree_flatten(out)
    store.append(out_treedef)
    return out_leaves

  return flat_fun, lambda: store[-1]


def normalize_argnums(argnums, nargs: int, fun_description: str, what="argnums") -> tuple:
  """``argnums`` as a tuple of non-negative ints; a clear error when out of range."""
  single = isinstance(argnums, int)
  nums = (argnums,) if single else tuple(argnums)
  out = []
  for n in nums:
    n = operator.index(n)
    if not -nargs <= n < nargs:
      raise TypeError(f"{what} {argnums} out of bounds for {fun_description} called with "
                      f"{nargs} positional argument{'s' if nargs != 1 else ''}.")
    out.append(n % nargs)
  return tuple(out)


def diff_argnums(argnums, nargs: int, fun) -> tuple:
  """The positional arguments to differentiate, with JAX's error when too few were passed."""
  for n in ((argnums,) if isinstance(argnums, int) else tuple(argnums)):
    if n >= nargs:
      raise TypeError(f"differentiating with respect to argnums={argnums} requires at "
                      f"least {n + 1} positional arguments to be passed by the caller, but "
                      f"got only {nargs} positional arguments.")
  return normalize_argnums(argnums, nargs, fun_name(fun))
