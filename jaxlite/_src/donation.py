"""Buffer donation: which arguments a program may write its outputs into.

``jit`` (and ``pmap``) compute a *plan* once per signature with ``plan``: per argument
leaf, the output XLA writes into its buffer, True for a buffer XLA may reuse for any
output, or None. The XLA tier lowers the plan as parameter attributes and lets PJRT
consume the planned buffers that nothing else can see; every tier then deletes the
donated Arrays (``Array.delete``), so what a user observes does not depend on the tier.
"""
from __future__ import annotations

import warnings
from collections import deque

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.core.array import Array, check_donated_once, delete_donated
from jaxlite._src.passes import dce
from jaxlite._src.sharding import NamedSharding


def plan(closed, donated, keep_unused=False, stacklevel=5):
  """Per argument leaf: the output XLA writes into its buffer, True (XLA may reuse it for
  any output of as many elements), or None (not donated). As JAX's lowering
  (``mlir._set_up_aliases``): a donated argument aliases the first free output of its
  shape and dtype, else is a buffer donor for one of its size; an argument the program
  does not read is not donated (unless ``keep_unused``, as JAX prunes it); a donation
  with no output to go to warns and leaves the argument alive."""
  jaxpr = dce.run(closed).jaxpr
  if not keep_unused:
    used = {v for e in jaxpr.eqns for v in e.invars if type(v) is core.Var}
    used.update(v for v in jaxpr.outvars if type(v) is core.Var)
    donated = [d and v in used for d, v in zip(donated, jaxpr.invars)]
  in_avals = [v.aval for v in jaxpr.invars]
  out_avals = closed.out_avals
  aliases = [None] * len(in_avals)
  waiting = {}
  for i, (aval, d) in enumerate(zip(in_avals, donated)):
    if d:
      waiting.setdefault((aval.shape, aval.dtype), deque()).append(i)
  for j, aval in enumerate(out_avals):
    queue = waiting.get((aval.shape, aval.dtype))
    if queue:
      aliases[queue.popleft()] = j
  taken = set(p for p in aliases if p is not None)
  by_size = {}
  for j, aval in enumerate(out_avals):
    if j not in taken:
      by_size.setdefault(aval.size, deque()).append(j)
  unusable = []
  for i, (aval, d) in enumerate(zip(in_avals, donated)):
    if d and aliases[i] is None:
      if by_size.get(aval.size):
        by_size[aval.size].popleft()
        aliases[i] = True
      else:
        unusable.append(aval.str_short())
  if unusable:
    warnings.warn(f"Some donated buffers were not usable: {', '.join(unusable)}.\nSee an "
                  "explanation at https://docs.jax.dev/en/latest/faq.html#buffer-donation.",
                  stacklevel=stacklevel)
  return tuple(aliases)


def donated_positional(treedef, donate_argnums):
  """Per leaf of ``(args, kwargs)`` flattened by ``treedef``: whether it belongs to a
  positional argument in ``donate_argnums`` (pmap donates positional arguments only)."""
  args_tree, kwargs_tree = treedef.children()
  flags = [i in donate_argnums for i, a in enumerate(args_tree.children())
           for _ in range(a.num_leaves)]
  return flags + [False] * kwargs_tree.num_leaves


def mesh_donation(leaves, aliases, shardings):
  """pmap: the donated leaves that are Arrays already laid out as the program takes them
  (the previous step's outputs); as in JAX, an argument that must be resharded first is
  copied into new shards, and only those are donated, so it stays alive."""
  return [i for i in range(len(leaves)) if aliases[i] is not None
          and type(leaves[i]) is Array and leaves[i]._placed is not None
          and leaves[i]._placed.sharding == shardings[i]]


def consumable_pieces(leaf, pieces) -> bool:
  """Whether XLA may write into the device buffers ``pieces`` of ``leaf``: the leaf's own
  shards (not copies made for this call), none sharing host memory."""
  placed = leaf._placed
  return (placed is not None and pieces is placed.pieces
          and not any(isinstance(p, np.ndarray) or not p.donatable(False) for p in pieces))


def run_mesh(program, entry, leaves):
  """Run a ``sharding_map.MeshProgram`` whose ``donated`` flags (pmap's donate_argnums)
  are set: plan once per traced signature, let XLA consume the donated shards it may,
  delete the donated Arrays on either tier. Returns the output Arrays."""
  plans = program.__dict__.setdefault("_donation_plans", {})
  aliases = plans.get(id(entry))   # entries live as long as the program's cache
  if aliases is None:
    aliases = plans[id(entry)] = plan(entry[0], program.donated, stacklevel=4)
  shardings = [NamedSharding(program.mesh, s) for s in entry[1]]
  donate = mesh_donation(leaves, aliases, shardings)
  check_donated_once(leaves, donate)
  if program._use_xla():
    outs = program._run_xla(entry, leaves, aliases, donate)
  else:
    outs = program._run_numpy(entry[0], entry[1], entry[2], leaves)
  delete_donated(leaves, donate)
  return outs
