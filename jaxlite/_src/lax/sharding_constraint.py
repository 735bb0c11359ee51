"""Layout requests: ``with_sharding_constraint``, ``with_layout_constraint`` and the
``out_sharding`` keyword of ``dot_general``, ``conv_general_dilated`` and
``jnp.einsum``/``jnp.dot``.

``sharding_constraint`` is the identity on values, carrying a sharding for XLA's SPMD
partitioner: inside a ``jit`` compiled with shardings it lowers to an
``sdy.sharding_constraint``, elsewhere in a trace (tier 0, one device) it does nothing.
``with_sharding_constraint`` on a concrete array lays it out (``jax.device_put``).
``layout_constraint`` is the identity on values too, carrying a device memory layout
(``Layout``) for XLA's layout assignment; on a concrete array it relays the array out.
"""
from __future__ import annotations

import functools
import inspect
import weakref

from jaxlite._src.core import core
from jaxlite._src.base import layout as layout_mod
from jaxlite._src.base import tree
from jaxlite._src.core.core import Primitive, Tracer
from jaxlite._src.lax.base import operand as _operand
from jaxlite._src.base.partition_spec import PartitionSpec
from jaxlite._src.transforms import ad
from jaxlite._src.transforms import batching

# Filled by _src/sharding.py, which owns meshes and placement (a layer above):
# "context_sharding" (sharding or PartitionSpec, missing) -> the Sharding the mesh in
# context (jax.set_mesh) makes of it, raising missing() for a spec with no mesh there;
# "place" (Array, Sharding) -> the Array laid out so; "check_explicit" (sharding, api)
# raises JAX's ValueError where a spec names axes that are not Explicit; "relayout"
# (Array, Layout) -> the Array in that device memory layout.
mesh_rules: dict = {}

sharding_constraint_p = Primitive("sharding_constraint")
# its type is split as its sharding says over Explicit axes (JAX's sharding in types)
sharding_constraint_p.def_abstract_eval(lambda x, *, sharding: core.ShapedArray(
    x.shape, x.dtype, x.weak_type, sharding=sharding))


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


layout_constraint_p = Primitive("layout_constraint")
layout_constraint_p.def_abstract_eval(lambda x, *, layout: x)
ad.deflinear2(layout_constraint_p,
              lambda ct, x, *, layout: [layout_constraint_p.bind(ct, layout=layout)])


def _layout_constraint_batcher(args, dims, *, layout):
  (x,), (d,) = args, dims
  if d is None:
    return layout_constraint_p.bind(x, layout=layout), None
  return layout_constraint_p.bind(x, layout=layout_mod.get_layout_for_vmap(d, layout)), d


batching.batching_rules[layout_constraint_p] = _layout_constraint_batcher


def constrained_results(jaxpr) -> list:
  """Per result of ``jaxpr``, the layout of the layout constraint computing it, or None:
  such a result of a jitted function keeps that layout, as in JAX. (Kept per jaxpr: a
  jit with shardings asks on every call.)"""
  found = _constrained.get(jaxpr)
  if found is None:
    made = {v: e.params["layout"] for e in jaxpr.eqns if e.primitive is layout_constraint_p
            for v in e.outvars}
    found = _constrained[jaxpr] = [made.get(v) if type(v) is core.Var else None
                                   for v in jaxpr.outvars]
  return found


_constrained: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def with_layout_constraint(x, layouts):
  """Ask for each array of ``x`` (a pytree) in the device memory layout ``layouts`` says.

  Values never change. Inside a ``jit`` it tells XLA's layout assignment (a result of the
  jitted function computed by it keeps that layout); on a concrete array it returns the
  array relaid out, as JAX does.

  Parameters
  ----------
  x : pytree of arrays
  layouts : Layout or pytree of Layouts (a prefix of ``x``)

  Raises
  ------
  ValueError
    Where a layout is not a ``Layout`` or does not have one entry per dimension.
  """
  leaves, treedef = tree.tree_flatten(x)
  is_layout = lambda l: isinstance(l, layout_mod.Layout)
  per_leaf = ([layouts] * len(leaves) if is_layout(layouts) or layouts is None
              else tree.tree_leaves(layouts, is_leaf=lambda l: l is None or is_layout(l)))
  if len(per_leaf) != len(leaves):
    raise ValueError(f"with_layout_constraint: got {len(per_leaf)} layouts for "
                     f"{len(leaves)} arrays; pass one Layout or a matching pytree.")
  if not all(map(is_layout, per_leaf)):
    raise ValueError("layouts passed to `with_layout_constraint` must be of type `Layout`. "
                     f"Got {[type(l) for l in per_leaf]}")
  outs = []
  for leaf, layout in zip(leaves, per_leaf):
    leaf = _operand(leaf)
    layout.check_shape(core.get_aval(leaf).shape, "with_layout_constraint arguments")
    if not isinstance(leaf, Tracer) and core.current_trace() is core.eval_trace:
      outs.append(mesh_rules["relayout"](leaf, layout))
    else:
      outs.append(layout_constraint_p.bind(leaf, layout=layout))
  return tree.tree_unflatten(treedef, outs)


def _no_mesh():
  return RuntimeError(
      "with_sharding_constraint requires a non-empty mesh in context if you are passing "
      "`PartitionSpec`s to shardings. You can define a context mesh via "
      "`jax.set_mesh(mesh)`. Alternatively, provide `Sharding`s to shardings and then the "
      "mesh context manager is not required.")


def with_sharding_constraint(x, shardings):
  """Ask XLA's SPMD partitioner to lay out ``x`` (a pytree) as ``shardings`` says.

  Inside a ``jit`` compiled with shardings it becomes an ``sdy.sharding_constraint``;
  on concrete arrays it lays them out so (``jax.device_put``), as JAX does; elsewhere
  (tier 0 inside a trace, single-device XLA) it is the identity. As in JAX, a sharding
  may name only Auto axes (``jax.sharding.reshard`` moves splits over Explicit ones);
  under a mesh in context whose axes are all Explicit it asserts instead that each
  array's type is split so.

  Parameters
  ----------
  x : pytree of arrays
  shardings : Sharding, PartitionSpec, Format or pytree of them (a prefix of ``x``)
    A PartitionSpec names axes of the mesh in context (``jax.set_mesh``); a Format
    also asks for its layout (``with_layout_constraint``).

  Raises
  ------
  ValueError
    Where a sharding names an Explicit axis outside an all-Explicit mesh in context.
  AssertionError
    Under an all-Explicit mesh in context, where an array's type is split otherwise.
  """
  return constrain(x, shardings, checked=True)


def constrain(x, shardings, checked=False):
  """``with_sharding_constraint`` without JAX's checks of the user's call: jaxlite's own
  layout requests (``reshard``, ``out_sharding=``), which may name Explicit axes."""
  leaves, treedef = tree.tree_flatten(x)
  # (on the type: an abstract mesh's sharding raises where its devices are asked for)
  is_sharding = lambda s: hasattr(type(s), "device_set") or isinstance(
      s, (PartitionSpec, layout_mod.Format))
  if is_sharding(shardings):
    per_leaf = [shardings] * len(leaves)
  else:
    per_leaf = tree.tree_leaves(shardings, is_leaf=is_sharding)
    if len(per_leaf) != len(leaves):
      raise ValueError(f"with_sharding_constraint: got {len(per_leaf)} shardings for "
                       f"{len(leaves)} arrays; pass one sharding or a matching pytree.")
  resolve = mesh_rules.get("context_sharding", lambda s, missing: s)
  outs = []
  for leaf, sharding in zip(leaves, per_leaf):
    leaf = _operand(leaf)
    if isinstance(sharding, layout_mod.Format):   # laid out first, then relaid out
      layout = sharding.layout
      if sharding.sharding is not None:
        leaf = constrain(leaf, sharding.sharding, checked)
      outs.append(leaf if not isinstance(layout, layout_mod.Layout)
                  else with_layout_constraint(leaf, layout))
      continue
    sharding = resolve(sharding, _no_mesh)
    if checked and mesh_rules["asserted_by_type"](leaf, sharding):
      outs.append(leaf)
      continue
    check = getattr(sharding, "check_shape", None)
    if check is not None:
      check(core.get_aval(leaf).shape)
    if (not isinstance(leaf, Tracer) and core.current_trace() is core.eval_trace
        and not getattr(sharding, "_is_abstract", False)):
      outs.append(mesh_rules["place"](leaf, sharding))
    else:
      outs.append(sharding_constraint_p.bind(leaf, sharding=sharding))
  return tree.tree_unflatten(treedef, outs)


def canonicalize_out_sharding(out_sharding, api_name: str):
  """The sharding that the ``out_sharding`` argument of ``api_name`` asks for: a
  NamedSharding over devices for ``with_sharding_constraint`` to apply, or None.

  None, and a NamedSharding over the empty mesh (the sharding in every array's type,
  ``jax.typeof(x).sharding``, which flax passes along), ask for nothing. Any other
  NamedSharding is returned: laying the result out over its mesh is the identity on one
  device and in tier 0, and changes no value anywhere.

  A PartitionSpec names axes of the mesh in context (``jax.set_mesh``), which must be
  Explicit axes, as in JAX.

  Raises
  ------
  ValueError
    For a PartitionSpec with no mesh in context, or naming an Auto or Manual axis, as
    JAX raises.
  TypeError
    For anything else, as JAX does.
  """
  if out_sharding is None:
    return None
  if isinstance(out_sharding, PartitionSpec):
    spec = out_sharding
    out_sharding = mesh_rules["context_sharding"](spec, lambda: ValueError(
        "Using PartitionSpec when you are not under a mesh context is not allowed. Please "
        "pass a NamedSharding instance or enter into a mesh context via `jax.set_mesh`. "
        f"Got {spec}"))
    mesh_rules["check_explicit"](out_sharding, api_name)
  mesh = getattr(out_sharding, "mesh", None)
  if mesh is None or not hasattr(out_sharding, "spec"):
    raise TypeError(
        f"`out_sharding` argument of {api_name} only supports instances of `NamedSharding` "
        f"or `PartitionSpec`. Got {out_sharding} of type: {type(out_sharding)}")
  return None if getattr(mesh, "empty", False) else out_sharding


def accepts_out_sharding(fn_or_name):
  """A function with JAX's keyword-only ``out_sharding``: its result laid out as that says
  (``with_sharding_constraint``: a layout inside a jit over several devices, the identity
  elsewhere). None, the default, and a sharding over the empty mesh (the one in every
  array's type, which flax passes along) leave the result as it is; anything else is
  checked before the function runs, raising JAX's errors (``canonicalize_out_sharding``),
  which name the API as JAX does: the function's name, or the name given
  (``@accepts_out_sharding("jnp.array")``)."""
  if isinstance(fn_or_name, str):
    return lambda fn: _accepting_out_sharding(fn, fn_or_name)
  return _accepting_out_sharding(fn_or_name, fn_or_name.__name__)


def _accepting_out_sharding(fn, api_name):
  @functools.wraps(fn)
  def wrapped(*args, out_sharding=None, **kwargs):
    if out_sharding is None:
      return fn(*args, **kwargs)
    return computed_as(canonicalize_out_sharding(out_sharding, api_name), fn, *args,
                       **kwargs)
  signature = inspect.signature(fn)
  wrapped.__signature__ = signature.replace(parameters=[
      *signature.parameters.values(),
      inspect.Parameter("out_sharding", inspect.Parameter.KEYWORD_ONLY, default=None)])
  return wrapped


def computed_as(sharding, fn, *args, **kwargs):
  """``fn(*args, **kwargs)`` laid out as the canonical ``out_sharding`` ``sharding`` says
  (None: as it is). Over Explicit axes ``fn`` runs with them made Auto, as JAX runs such a
  call, so that splits its rules could not place (a gather along a split dimension) are
  settled by the layout asked for instead of refused."""
  if sharding is None:
    return fn(*args, **kwargs)
  if getattr(sharding.mesh, "_any_axis_explicit", False):
    return mesh_rules["auto_axes"](fn, out_sharding=sharding)(*args, **kwargs)
  return constrain(fn(*args, **kwargs), sharding)


def like_sharding(x, shape, weak_type):
  """The layout ``full_like(x, ...)`` gives its result, as JAX's: that of a concrete ``x``
  laid out or committed (``jax.device_put``), when the result is not weakly typed and has
  ``x``'s shape or ``x`` is replicated; else None (the default placement)."""
  placed = getattr(x, "_placed", None)
  if placed is None or isinstance(x, Tracer) or weak_type:
    return None
  sharding = placed.sharding
  if tuple(shape) == tuple(placed.shape) or sharding.is_fully_replicated:
    return sharding
  return None

