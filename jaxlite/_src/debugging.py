"""Run-time printing and callbacks inside transformed code: ``jax.debug.print``,
``jax.debug.callback`` and ``jax.pure_callback``.

They are primitives whose implementation calls back into Python with NumPy values, so
under ``jit`` they run on every call (not once, at tracing, like ``print``). The debug
ones are effectful: dead-code elimination and CSE never remove them.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src import core
from jaxlite._src import dtypes
from jaxlite._src import tree
from jaxlite._src.core import Primitive, ShapedArray
from jaxlite._src.passes import dce
from jaxlite._src.transforms import ad


def _as_operand(x):
  from jaxlite._src.numpy.util import as_operand
  return as_operand(x)


def _host_values(args):
  from jaxlite._src.array import Array
  return [np.asarray(a._value) if isinstance(a, Array) else np.asarray(a) for a in args]


# -- debug_print / debug_callback: no outputs, run for their effect

debug_print_p = Primitive("debug_print")
debug_print_p.multiple_results = True
debug_print_p.def_abstract_eval(lambda *avals, **params: [])
core.param_order[debug_print_p] = ("fmt", "in_tree", "ordered")

debug_callback_p = Primitive("debug_callback")
debug_callback_p.multiple_results = True
debug_callback_p.def_abstract_eval(lambda *avals, **params: [])
core.param_order[debug_callback_p] = ("callback", "ordered")
dce.effectful_primitives.update({debug_print_p, debug_callback_p})


def _debug_print_impl(*args, fmt, in_tree, ordered):
  values = _host_values(args)
  pos, kw = tree.tree_unflatten(in_tree, values)
  print(fmt.format(*pos, **kw))
  return []


def _debug_callback_impl(*args, callback, ordered):
  callback(*_host_values(args))
  return []


def _effect_jvp(prim):
  # Differentiation prints (or calls back with) the primal values only.
  def rule(primals, tangents, **params):
    return prim.bind(*primals, **params), []
  return rule


ad.jvp_rules[debug_print_p] = _effect_jvp(debug_print_p)
ad.jvp_rules[debug_callback_p] = _effect_jvp(debug_callback_p)


def debug_print(fmt: str, *args, ordered: bool = False, **kwargs):
  """Print ``fmt.format(*args, **kwargs)`` with the *runtime* values, also under jit.

  Unlike Python's ``print``, which runs once while a function is traced, this prints on
  every call, and shows values rather than tracers.
  """
  leaves, in_tree = tree.tree_flatten((args, kwargs))
  debug_print_p.bind(*[_as_operand(x) for x in leaves], fmt=fmt, in_tree=in_tree,
                     ordered=ordered)


def debug_callback(callback, *args, ordered: bool = False, **kwargs):
  """Call ``callback(*args, **kwargs)`` with runtime NumPy values, for its side effect."""
  leaves, in_tree = tree.tree_flatten((args, kwargs))

  def flat_callback(*values):
    pos, kw = tree.tree_unflatten(in_tree, list(values))
    callback(*pos, **kw)
  flat_callback.__name__ = getattr(callback, "__name__", "callback")
  debug_callback_p.bind(*[_as_operand(x) for x in leaves], callback=flat_callback,
                        ordered=ordered)


# -- pure_callback: a pure host function with declared result shapes

pure_callback_p = Primitive("pure_callback")
pure_callback_p.multiple_results = True
pure_callback_p.def_abstract_eval(lambda *avals, result_avals, **_: list(result_avals))
core.param_order[pure_callback_p] = ("callback", "result_avals", "vmap_method")


def _pure_callback_impl(*args, callback, result_avals, vmap_method):
  outs = callback(*_host_values(args))
  out_leaves = tree.tree_leaves(outs)
  if len(out_leaves) != len(result_avals):
    raise TypeError(f"pure_callback: the callback returned {len(out_leaves)} arrays but "
                    f"result_shape_dtypes describes {len(result_avals)}.")
  results = []
  for value, aval in zip(out_leaves, result_avals):
    value = np.asarray(value)
    if value.shape != aval.shape:
      raise TypeError(f"pure_callback: the callback returned an array of shape "
                      f"{value.shape} where result_shape_dtypes says {aval.shape}.")
    if value.dtype != aval.dtype:
      raise TypeError(f"pure_callback: the callback returned dtype {value.dtype} where "
                      f"result_shape_dtypes says {aval.dtype}; convert it in the callback.")
    results.append(value)
  return results


def _pure_callback_jvp(primals, tangents, **params):
  raise ValueError("Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use "
                   "callbacks while taking gradients.")


ad.jvp_rules[pure_callback_p] = _pure_callback_jvp


def pure_callback(callback, result_shape_dtypes, *args, sharding=None, vmap_method=None,
                  **kwargs):
  """Call the pure host function ``callback`` on runtime NumPy values.

  ``result_shape_dtypes`` is a pytree of ``ShapeDtypeStruct`` (or arrays) describing the
  results, which are returned with the same structure.
  """
  leaves, in_tree = tree.tree_flatten((args, kwargs))
  res_leaves, res_tree = tree.tree_flatten(result_shape_dtypes)
  result_avals = tuple(ShapedArray(r.shape, dtypes.canonicalize_dtype(r.dtype))
                       for r in res_leaves)

  def flat_callback(*values):
    pos, kw = tree.tree_unflatten(in_tree, list(values))
    return callback(*pos, **kw)
  flat_callback.__name__ = getattr(callback, "__name__", "callback")
  outs = pure_callback_p.bind(*[_as_operand(x) for x in leaves], callback=flat_callback,
                              result_avals=result_avals, vmap_method=vmap_method)
  return tree.tree_unflatten(res_tree, outs)
