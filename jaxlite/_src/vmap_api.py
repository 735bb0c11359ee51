"""The vectorization API: vmap (the Jacobians built from it live with autodiff).

Argument handling only (in_axes / out_axes pytrees, sizes, checks with JAX's messages);
the transformation itself lives in ``transforms/batching.py``.
"""
from __future__ import annotations

import collections
import inspect

import numpy as np

from jaxlite._src.base import api_util
from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.base import traceback_util
from jaxlite._src.base import tree
from jaxlite._src.core.array import Array
from jaxlite._src.core.core import Tracer
from jaxlite._src.core.state import types as ref_types
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.libraries.numpy.util import as_operand
from jaxlite._src.transforms import ad
from jaxlite._src.transforms import batching


def _is_axis_spec(x) -> bool:
  return x is None or type(x) is int


class PytreeLeaf:
  """Stands for one argument leaf when axis specs are matched against arguments."""

  def __repr__(self):
    return "*"


def _flatten_axes(name, treedef, axis_tree, kws=False):
  """One axis spec per leaf of ``treedef``, from the prefix tree ``axis_tree``."""
  if _is_axis_spec(axis_tree):
    return [axis_tree] * treedef.num_leaves
  if kws and _is_axis_spec(axis_tree[0]):  # the common case: one spec for all args
    n_args = treedef.children()[0].num_leaves
    return [axis_tree[0]] * n_args + [axis_tree[1]] * (treedef.num_leaves - n_args)
  is_none = lambda x: x is None
  specs, spec_tree = tree.tree_flatten(axis_tree, is_leaf=is_none)
  dummy = tree.tree_unflatten(treedef, [PytreeLeaf()] * treedef.num_leaves)
  try:
    subtrees = spec_tree.flatten_up_to(dummy)
  except ValueError:
    if kws:  # only positional arguments have user-given specs; kwargs always map axis 0
      dummy, axis_tree = dummy[0], axis_tree[0]
    errors = tree.prefix_errors(axis_tree, dummy, is_leaf=is_none)
    details = "\n  ".join(e(name).args[0] for e in errors)
    raise ValueError(f"{name} specification must be a tree prefix of the corresponding "
                     f"value; \n  Mismatch details ({len(errors)} found):\n  {details}"
                     ) from None
  axes = []
  for spec, sub in zip(specs, subtrees):
    axes += [spec] * tree.tree_structure(sub).num_leaves
  return axes


def _type_of(x) -> str:
  try:
    return core.get_aval(x).str_short()
  except TypeError:
    return "unknown"


def _inconsistent_sizes(fun, in_tree, leaves, in_dims, sizes, axis_size):
  """JAX's message naming, for each distinct size, an argument mapped with that size."""
  args, kwargs = tree.tree_unflatten(in_tree, leaves)
  try:
    params = list(inspect.signature(fun).bind(*args, **kwargs).signature.parameters)
  except (TypeError, ValueError):
    params = None

  def arg_name(path):
    i = path[0].idx
    if params is None or i >= len(params):
      return f"args{tree.keystr(path)}"
    return f"argument {params[i]}{tree.keystr(path[1:])}"

  paths = [f"{arg_name(p)} of type {_type_of(x)}"
           for p, x in tree.tree_flatten_with_path(args)[0]]
  paths += [f"kwargs{tree.keystr(p)} of type {_type_of(x)}"
            for p, x in tree.tree_flatten_with_path(kwargs)[0]]
  counts = collections.Counter(s for s in sizes if s is not None).most_common()
  lines = ["vmap got inconsistent sizes for array axes to be mapped:\n"]
  if axis_size is not None:
    lines.append(f"  * the `axis_size` argument was {axis_size};\n")
  for k, (size, count) in enumerate(counts):
    i = sizes.index(size)
    where = f"axis {in_dims[i]} of {paths[i]}"
    if count == 1:
      lines.append(f"  * one axis had size {size}: {where};\n")
    else:
      which = "most" if k == 0 else "some"
      lines.append(f"  * {which} axes ({count} of them) had size {size}, e.g. {where};\n")
  return ValueError("".join(lines)[:-2])


def _mapped_axis_size(fun, in_tree, leaves, in_dims, axis_size):
  if not leaves:
    if axis_size is not None:
      return axis_size
    args, kwargs = tree.tree_unflatten(in_tree, leaves)
    raise ValueError("vmap wrapped function must be passed at least one argument "
                     "containing an array or axis_size must be specified, got empty "
                     f"*args={args} and **kwargs={kwargs}")
  sizes = []
  for x, d in zip(leaves, in_dims):
    if d is None:
      sizes.append(None)
      continue
    shape = np.shape(x)
    if not -len(shape) <= d < len(shape):
      min_rank = d + 1 if d >= 0 else -d
      raise ValueError(f"vmap was requested to map its argument along axis {d}, which "
                       f"implies that its rank should be at least {min_rank}, but is only "
                       f"{len(shape)} (its shape is {shape})")
    sizes.append(shape[d])
  distinct = set(s for s in sizes if s is not None)
  if axis_size is not None:
    distinct.add(axis_size)
  if len(distinct) == 1:
    return distinct.pop()
  if not distinct:
    raise ValueError("vmap must have at least one non-None value in in_axes or axis_size "
                     "must be specified")
  raise _inconsistent_sizes(fun, in_tree, leaves, in_dims, sizes, axis_size)


def _check_arg(x):
  if isinstance(x, (Array, Tracer, ref_types.Ref, np.ndarray, np.generic, bool, int,
                    float, complex)):
    return
  raise TypeError(f"Argument {x!r} of type {type(x)} is not a valid JAX type")


def _to_out_axis(x, src, dst, size, axis_name, path, sum_match=False):
  """Output ``x`` (batch axis ``src``) with its batch axis at ``dst`` as out_axes asks
  (with ``sum_match``, a batched output that out_axes leaves unmapped is summed).

  ``path()`` gives the output's key path, for the error message.
  """
  if src == dst:
    return x
  if dst is None and sum_match:
    return x.sum(src)
  if dst is None:
    if axis_name is not None:
      raise ValueError(f"vmap has mapped output (axis_name={axis_name}) but out_axes is "
                       f"{dst}")
    raise ValueError(f"at vmap out_axes{tree.keystr(path())}, got axis spec {dst} but "
                     f"output was batched on axis {src}")
  if ad.is_float0(x):
    # float0 cotangents (of integer inputs) have no values to broadcast
    dst = lax_shapes._canonical_axis(dst, x.ndim + 1)
    return np.zeros(x.shape[:dst] + (size,) + x.shape[dst:], dtypes.float0)
  ndim = core.get_aval(x).ndim
  if src is None:
    return batching.broadcast(x, size, lax_shapes._canonical_axis(dst, ndim + 1))
  return batching.moveaxis(x, src, lax_shapes._canonical_axis(dst, ndim))


def vmap(fun, in_axes=0, out_axes=0, axis_name=None, axis_size=None, spmd_axis_name=None,
         sum_match=False):
  """Vectorize ``fun``: map it over an axis of its inputs, as one batched computation.

  Parameters
  ----------
  fun : callable
    Function of pytrees of arrays.
  in_axes : int, None or tuple
    For each positional argument, the axis to map over (negative ints count from the
    end), None to pass it unmapped to every example, or a pytree of those (a prefix of
    the argument's structure: dicts, lists and tuples as in the argument). An int or
    None applies to all arguments. Keyword arguments are always mapped over axis 0.
  out_axes : int, None or pytree of them
    Where the mapped axis goes in each output. None keeps an output unmapped (it must
    then be the same for every example); an int for an unmapped output broadcasts it.
  axis_name : hashable, optional
    A name for the mapped axis, so that collectives (``lax.psum``, ``lax.pmean``,
    ``lax.all_gather``, ``lax.axis_index``...) can refer to it.
  axis_size : int, optional
    The size of the mapped axis; required when no argument is mapped.
  spmd_axis_name : optional
    Accepted for compatibility; the NumPy backend has no devices to shard over.
  sum_match : bool
    Sum an output over the mapped axis where ``out_axes`` is None for it and the output
    depends on the example, instead of raising.

  Returns
  -------
  callable
    The vectorized function. The batch is computed with whole-batch operations (a
    ``make_jaxpr`` of it has as many equations for 2 examples as for 2000).

  Examples
  --------
  >>> import jaxlite as jax, jaxlite.numpy as jnp
  >>> jax.vmap(jnp.dot)(jnp.ones((3, 2)), jnp.arange(6.).reshape(3, 2))
  Array([1., 5., 9.], dtype=float32)
  >>> jax.vmap(lambda x, y: x + y, in_axes=(0, None))(jnp.arange(3.), 10.)
  Array([10., 11., 12.], dtype=float32)
  >>> jax.vmap(lambda d: d['a'] * d['b'], in_axes=({'a': 0, 'b': None},))(
  ...     {'a': jnp.arange(3.), 'b': 2.})
  Array([0., 2., 4.], dtype=float32)
  """
  api_util.check_callable(fun)
  if isinstance(in_axes, list):
    in_axes = tuple(in_axes)
  if not (in_axes is None or type(in_axes) in (int, tuple)):
    raise TypeError("vmap in_axes must be an int, None, or a tuple of entries corresponding "
                    "to the positional arguments passed to the function, but got "
                    f"{in_axes}.")
  if not all(map(_is_axis_spec, tree.tree_leaves(in_axes, is_leaf=lambda x: x is None))):
    raise TypeError("vmap in_axes must be an int, None, or (nested) container with those "
                    f"types as leaves, but got {in_axes}.")
  if not all(map(_is_axis_spec, tree.tree_leaves(out_axes, is_leaf=lambda x: x is None))):
    raise TypeError("vmap out_axes must be an int, None, or (nested) container with those "
                    f"types as leaves, but got {out_axes}.")

  @traceback_util.api_boundary
  @api_util.wraps(fun)
  def vmap_f(*args, **kwargs):
    if isinstance(in_axes, tuple) and len(in_axes) != len(args):
      raise ValueError("vmap in_axes must be an int, None, or a tuple of entries "
                       "corresponding to the positional arguments passed to the function, "
                       f"but got len(in_axes)={len(in_axes)}, len(args)={len(args)}")
    leaves, in_tree = tree.tree_flatten((args, kwargs))
    in_dims = _flatten_axes("vmap in_axes", in_tree, (in_axes, 0), kws=True)
    for x, d in zip(leaves, in_dims):
      if d is not None:  # unmapped leaves pass through untouched, whatever they are
        _check_arg(x)
    size = _mapped_axis_size(fun, in_tree, leaves, in_dims, axis_size)
    in_dims = [None if d is None else d % np.ndim(x) for x, d in zip(leaves, in_dims)]
    # a mapped ref: each example gets a ref of its slice, written back once all are done
    refs = [i for i in ref_types.refs_in(leaves) if in_dims[i] is not None]
    ref_leaves = [leaves[i] for i in refs]
    leaves = [ref_types.current_value(x) if i in refs else x if d is None else as_operand(x)
              for i, (x, d) in enumerate(zip(leaves, in_dims))]
    flat_fun, out_tree = api_util.flatten_fun(fun, in_tree)
    outs, dims = batching.vmap_flat(ref_types.with_local_refs(flat_fun, refs), leaves,
                                    in_dims, size, axis_name, spmd_axis_name)
    if refs:
      n = len(outs) - len(refs)
      for ref, i, x, src in zip(ref_leaves, refs, outs[n:], dims[n:]):
        ref_types.store(ref, _to_out_axis(x, src, in_dims[i], size, axis_name, None))
      outs, dims = outs[:n], dims[:n]
    out_tree = out_tree()
    for x in outs:
      if not isinstance(x, (Array, Tracer, np.ndarray, np.generic, bool, int, float,
                            complex)):
        raise TypeError(f"Output from batched function {x!r} with type {type(x)} is not a "
                        "valid JAX type")
    out_dims = _flatten_axes("vmap out_axes", out_tree, out_axes)
    path = lambda i: lambda: tree.tree_flatten_with_path(
        tree.tree_unflatten(out_tree, outs))[0][i][0]
    outs = [_to_out_axis(x, src, dst, size, axis_name, path(i), sum_match)
            for i, (x, src, dst) in enumerate(zip(outs, dims, out_dims))]
    return tree.tree_unflatten(out_tree, outs)

  return vmap_f
