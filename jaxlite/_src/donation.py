"""Buffer donation: which arguments a program may write its outputs into.

``jit`` (and ``pmap``) compute a *plan* once per signature with ``plan``: per argument
leaf, the output XLA writes into its buffer, True for a buffer XLA may reuse for any
output, or None. The XLA tier lowers the plan as parameter attributes and lets PJRT
consume the planned buffers that nothing else can see, and tier 0 writes an output into
its donated argument's NumPy buffer where nothing else can see it
(``reuse_host_buffers``); every tier then deletes the donated Arrays (``Array.delete``),
so what a user observes, ``unsafe_buffer_pointer`` included, does not depend on the tier.
"""
from __future__ import annotations

import sys
import warnings
from collections import deque

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.core.array import Array, check_donated_once, delete_donated, owns_buffer
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


# references to a donated argument's NumPy buffer while ``reuse_host_buffers`` checks it:
# the Array's ``_host``, the check's local name and ``sys.getrefcount``'s argument
_SOLE_OWNER_REFS = 3


def reuse_host_buffers(leaves, aliases, outs):
  """Tier 0's donation: each output that ``plan`` aliases to a donated argument is written
  into that argument's NumPy buffer, so it lives where the argument did, as XLA's output
  does (``unsafe_buffer_pointer`` shows it). Only where provably unobservable: the
  argument (to be deleted after the call) must be the sole holder of a dense buffer of its
  own (no view, no NumPy array of the user's, no other Array, no output shares it).
  Returns ``outs`` (a list of NumPy values) with those outputs replaced by the buffers."""
  outs = list(outs)
  for i, j in enumerate(aliases):
    if j is None or j is True:
      continue
    x = leaves[i]
    if type(x) is not Array or x._placed is not None:
      continue
    host = x._host
    if not owns_buffer(host) or sys.getrefcount(host) != _SOLE_OWNER_REFS:
      continue
    out = outs[j]
    if np.shape(out) != host.shape or np.result_type(out) != host.dtype:
      continue
    writeable = host.flags.writeable
    host.flags.writeable = True
    np.copyto(host, out)
    host.flags.writeable = writeable
    outs[j] = host
  return outs


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


def mesh_plan(program, entry, stacklevel=5):
  """The donation plan of a ``sharding_map.MeshProgram``'s traced signature ``entry``
  (made once; its warning, if any, once)."""
  plans = program.__dict__.setdefault("_donation_plans", {})
  aliases = plans.get(id(entry[0]))   # entries live as long as the program's cache
  if aliases is None:
    aliases = plans[id(entry[0])] = plan(entry[0], program.donated, stacklevel=stacklevel)
  return aliases


def run_mesh(program, entry, leaves):
  """Run a ``sharding_map.MeshProgram`` whose ``donated`` flags (pmap's donate_argnums)
  are set: plan once per traced signature, let XLA consume the donated shards it may,
  delete the donated Arrays on either tier. Returns the output Arrays."""
  aliases = mesh_plan(program, entry)
  shardings = [NamedSharding(program.mesh, s) for s in entry[1]]
  donate = mesh_donation(leaves, aliases, shardings)
  check_donated_once(leaves, donate)
  if program._use_xla():
    outs = program._run_xla(entry, leaves, aliases, donate)
  else:
    outs = program._run_numpy(entry[0], entry[1], entry[2], leaves)
  delete_donated(leaves, donate)
  return outs
