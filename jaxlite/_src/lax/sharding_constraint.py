"""Layout requests: ``with_sharding_constraint`` and the ``out_sharding`` keyword of
``dot_general``, ``conv_general_dilated`` and ``jnp.einsum``/``jnp.dot``.

``sharding_constraint`` is the identity on values, carrying a sharding for XLA's SPMD
partitioner: inside a ``jit`` compiled with shardings it lowers to an ``mhlo.sharding``
annotation, everywhere else (tier 0, one device) it does nothing.
"""
from __future__ import annotations

from jaxlite._src.core import core
from jaxlite._src.base import tree
from jaxlite._src.core.core import Primitive
from jaxlite._src.lax.base import operand as _operand
from jaxlite._src.base.partition_spec import PartitionSpec
from jaxlite._src.transforms import ad
from jaxlite._src.transforms import batching

sharding_constraint_p = Primitive("sharding_constraint")
sharding_constraint_p.def_abstract_eval(lambda x, *, sharding: x)


def _sharding_constraint_batcher(args, dims, *, sharding):
  (x,), (d,) = args, dims
  spec = getattr(sharding, "spec", None)
  if spec is not None and d is not None:
    # the batch axis is not split: the spec's entries move past it
    entries = list(spec) + [None] * max(0, d - len(spec))
    sharding = type(sharding)(sharding.mesh, type(spec)(*(entries[:d] + [None]
                                                          + entries[d:])))
  return sharding_constraint_p.bind(x, sharding=sharding), d


batching.batching_rules[sharding_constraint_p] = _sharding_constraint_batcher
ad.deflinear2(sharding_constraint_p,
             lambda ct, x, *, sharding: [sharding_constraint_p.bind(ct, sharding=sharding)])


def with_sharding_constraint(x, shardings):
  """Ask XLA's SPMD partitioner to lay out ``x`` (a pytree) as ``shardings`` says.

  Inside a ``jit`` compiled with shardings it becomes an ``mhlo.sharding`` annotation;
  everywhere else (tier 0, single-device XLA) it is the identity.

  Parameters
  ----------
  x : pytree of arrays
  shardings : Sharding or pytree of them (a prefix of ``x``)
  """
  leaves, treedef = tree.tree_flatten(x)
  if hasattr(shardings, "device_set"):
    per_leaf = [shardings] * len(leaves)
  else:
    per_leaf = tree.tree_leaves(shardings, is_leaf=lambda s: hasattr(s, "device_set"))
    if len(per_leaf) != len(leaves):
      raise ValueError(f"with_sharding_constraint: got {len(per_leaf)} shardings for "
                       f"{len(leaves)} arrays; pass one sharding or a matching pytree.")
  outs = []
  for leaf, sharding in zip(leaves, per_leaf):
    leaf = _operand(leaf)
    check = getattr(sharding, "check_shape", None)
    if check is not None:
      check(core.get_aval(leaf).shape)
    outs.append(sharding_constraint_p.bind(leaf, sharding=sharding))
  return tree.tree_unflatten(treedef, outs)


def canonicalize_out_sharding(out_sharding, api_name: str):
  """The sharding that the ``out_sharding`` argument of ``api_name`` asks for: a
  NamedSharding over devices for ``with_sharding_constraint`` to apply, or None.

  None, and a NamedSharding over the empty mesh (the sharding in every array's type,
  ``jax.typeof(x).sharding``, which flax passes along), ask for nothing. Any other
  NamedSharding is returned: laying the result out over its mesh is the identity on one
  device and in tier 0, and changes no value anywhere.

  Raises
  ------
  ValueError
    For a PartitionSpec: it names axes of the mesh in context, and jaxlite has no mesh
    context (``jax.set_mesh``), as JAX raises outside one.
  TypeError
    For anything else, as JAX does.
  """
  if out_sharding is None:
    return None
  if isinstance(out_sharding, PartitionSpec):
    raise ValueError(
        "Using PartitionSpec when you are not under a mesh context is not allowed. Please "
        "pass a NamedSharding instance (jaxlite has no mesh context: no jax.set_mesh). "
        f"Got {out_sharding}")
  mesh = getattr(out_sharding, "mesh", None)
  if mesh is None or not hasattr(out_sharding, "spec"):
    raise TypeError(
        f"`out_sharding` argument of {api_name} only supports instances of `NamedSharding` "
        f"or `PartitionSpec`. Got {out_sharding} of type: {type(out_sharding)}")
  return None if getattr(mesh, "empty", False) else out_sharding
