"""Helpers the lax families share, below all of them: operands from Python values, and
tracing a user function of pytrees (a reduction's computation, a loop's body); and the
``jax.lax`` functions that are about operands alone (``dtype``, ``stage``,
``shape_as_value``)."""
from __future__ import annotations

import weakref

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.base import mesh_context
from jaxlite._src.base import tree
from jaxlite._src.base import config as config_lib
from jaxlite._src.base.config import config
from jaxlite._src.core.array import Array, as_operand
from jaxlite._src.core.core import Tracer
from jaxlite._src.core.literals import TypedNdArray
from jaxlite._src.core.state.types import Ref
from jaxlite._src.transforms import batching
from jaxlite._src.transforms.staging import trace_to_jaxpr


def operand(x):
  """Python numbers as weakly typed Arrays and NumPy values as Arrays, as in jnp; anything
  else unchanged."""
  if isinstance(x, np.generic):   # (first: np.float64 is a subclass of float)
    return Array(np.asarray(x, dtypes.canonicalize_dtype(x.dtype)))
  if isinstance(x, (bool, int, float, complex)):
    return Array(np.asarray(x, dtypes.python_scalar_dtype(x)), type(x) is not bool)
  if isinstance(x, np.ndarray):   # a copy: the caller may write to its array afterwards
    return Array(np.array(x, dtypes.canonicalize_dtype(x.dtype), copy=True),
                 type(x) is TypedNdArray and x.weak_type)   # (a literal's value)
  return x


def dtype(x):
  """The dtype of ``x`` (an array, a Python scalar or a dtype-like), canonicalized."""
  return dtypes.canonicalize_dtype(dtypes.dtype(x, canonicalize=True))


def stage(x, /):
  """Lift ``x`` (a Python scalar or NumPy array) into an Array; the identity otherwise."""
  return operand(x)


def shape_as_value(shape):
  """``shape`` as a 1-D int32 Array."""
  return Array(np.asarray(tuple(shape), dtype=np.int32).reshape(len(tuple(shape))))


def check_not_a_ref(leaf, what):
  """JAX's error for a traced function's output that is a mutable array reference."""
  if isinstance(leaf, Ref):
    raise ValueError(f"{what} returned a mutable array reference of type {leaf.aval}, but "
                     "mutable array references cannot be returned. Return its value "
                     "(ref[...]) instead; the function's writes to it are kept.")


# The flags of trace_context's last part, in its order (jit names them in recompile reasons).
LIBRARY_FLAGS = ("jax_threefry_partitionable", "jax_enable_custom_prng",
                 "jax_softmax_custom_jvp", "jax_allow_f16_reductions",
                 "jax_remove_size_one_mesh_axis_from_type",
                 "the values of jax.make_user_context's contexts")


def trace_context() -> tuple:
  """What besides the argument avals changes the jaxpr that tracing gives, as JAX's trace
  context: the x64 flag, the named vmap axes in scope, the promotion mode, the default
  matmul precision, the abstract mesh in context (``jax.set_mesh``), and the flags that
  change which primitives a library function binds: the Threefry scheme
  (``jax_threefry_partitionable``), typed keys from ``PRNGKey`` (``jax_enable_custom_prng``)
  softmax's rule (``jax_softmax_custom_jvp``), whether half-precision sums are refused
  (``jax_allow_f16_reductions``), whether types drop mesh axes of size 1
  (``jax_remove_size_one_mesh_axis_from_type``), and the values of
  ``jax.make_user_context``'s contexts."""
  return (config.jax_enable_x64, batching._env_key(), config_lib.numpy_dtype_promotion(),
          config.jax_default_matmul_precision, mesh_context.context.abstract,
          # (read one by one, LIBRARY_FLAGS' order: a loop would slow every jit call)
          (config.jax_threefry_partitionable, config.jax_enable_custom_prng,
           config.jax_softmax_custom_jvp, config.jax_allow_f16_reductions,
           config.jax_remove_size_one_mesh_axis_from_type,
           tuple(map(config.read, config_lib.user_contexts)) if config_lib.user_contexts
           else ()))


# user function -> {signature: (ClosedJaxpr, what else the trace gave)}
_traced = weakref.WeakKeyDictionary()


def trace_cached(fun, signature, trace):
  """``trace()``, a (ClosedJaxpr, aux) pair, for the user function ``fun`` called with
  ``signature``: remembered while ``fun`` lives, as JAX remembers its loops' and branches'
  jaxprs, so a loop run again with the same body does not trace it again (flax counts
  its traces). A jaxpr that closed over an outer trace's tracers, or over the values of
  mutable array references (``state.types.probing``: they may change), is not kept."""
  key = (signature, trace_context())
  user_fun = getattr(fun, "probed", fun)   # (a ref probe is made anew for each call)
  try:
    per_fun = _traced.get(user_fun)
    hit = None if per_fun is None else per_fun.get(key)
  except TypeError:   # (not weakly referenceable, or unhashable: never kept)
    return trace()
  if hit is not None:
    return hit
  result = trace()
  if not getattr(fun, "reads_refs", False) and not any(
      isinstance(c, Tracer) for c in result[0].consts):
    _traced.setdefault(user_fun, {})[key] = result
  return result


def trace_flat(fun, in_tree, in_avals, what):
  """Trace a user function of pytrees; returns (ClosedJaxpr, out_tree)."""
  return trace_cached(fun, (in_tree, tuple(in_avals), what),
                      lambda: _trace_flat(fun, in_tree, in_avals, what))


def _trace_flat(fun, in_tree, in_avals, what):
  store = []

  def flat(*leaves):
    out = fun(*tree.tree_unflatten(in_tree, leaves))
    out_leaves, out_tree = tree.tree_flatten(out)
    store.append(out_tree)
    for leaf in out_leaves:
      check_not_a_ref(leaf, what)
      if not isinstance(leaf, (Array, Tracer, np.ndarray, np.generic, bool, int, float,
                               complex)):
        raise TypeError(f"{what} returned a value of type {type(leaf)}, which is not a "
                        "valid JAX type. Return arrays (or pytrees of arrays) only.")
    return [as_operand(x) for x in out_leaves]
  return trace_to_jaxpr(flat, in_avals), store[-1]
