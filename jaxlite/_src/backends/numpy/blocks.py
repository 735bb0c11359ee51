"""Tier 0's blocked regions: large elementwise work evaluated in cache-sized blocks, on threads.

A run of elementwise ufunc equations on arrays of one large shape is, unblocked, one full
pass over memory per equation. ``plan`` groups such a run into a ``Region``; code
generation emits the region's body as a function of one block (a slice of the flattened
arrays) and ``run`` calls it over all the blocks, on up to ``jaxlite_tier0_threads``
threads (NumPy's ufuncs release the GIL). The intermediates of a block are written into
a few scratch buffers per thread, reused from block to block and from call to call: they
stay in the cache, and no block allocates. (Allocating them instead was 13% slower once
the XLA client existed: glibc then grew and trimmed the heap for them on every call.)

Every element goes through the same ufunc calls as unblocked, and through the same
machine code: NumPy's loops compute the vector body and the scalar tail of an array with
different instructions, which differ where they must pick one of two NaN operands (the
sign or payload of the result). So blocks are a multiple of every vector width and the
last block takes the remainder: each element lies in a vector body or in the tail exactly
as it does in the whole array, and the bits are those of the unblocked code whichever
thread computes a block.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import itertools
import math
import threading
from typing import NamedTuple

import numpy as np

from jaxlite._src import core
from jaxlite._src.config import config

MIN_SIZE = 1 << 16   # elements: smaller arrays are cheap enough as whole-array passes
BLOCK = 1 << 15      # elements per block (a multiple of 64): its intermediates fit in L2


class Region:
  """Elementwise equations over arrays of one ``shape``, evaluated block by block.

  ``invars`` are the values the region reads from outside (arrays of ``shape`` or
  scalars); ``outvars`` the values it defines that something outside reads, which are
  materialised as whole arrays; the rest live one block at a time."""

  def __init__(self, shape):
    self.shape = shape
    self.eqns = []
    self.defined = set()
    self.invars = []
    self.outvars = []

  def add(self, eqn):
    self.eqns.append(eqn)
    for v in eqn.invars:
      if type(v) is not core.Literal and v not in self.defined and v not in self.invars:
        self.invars.append(v)
    self.defined.update(eqn.outvars)

  def reads_from(self, eqn) -> bool:
    return any(type(v) is not core.Literal and v in self.defined for v in eqn.invars)


def plan(jaxpr: core.Jaxpr, blockable) -> list:
  """``jaxpr``'s equations with maximal runs of ``blockable`` equations of one shape
  grouped into Regions. An equation that reads nothing from the open region is moved
  ahead of it, so that (say) a scalar broadcast does not split a run; this keeps the
  order of every equation outside regions, so effects keep their order."""
  items, region, ahead = [], None, []

  def close():
    nonlocal region, ahead
    items.extend(ahead)
    if region is not None:
      items.append(region)
    region, ahead = None, []

  for eqn in jaxpr.eqns:
    if blockable(eqn):
      shape = eqn.outvars[0].aval.shape
      if region is None or region.shape != shape:
        close()
        region = Region(shape)
      region.add(eqn)
    elif region is not None and not region.reads_from(eqn):
      ahead.append(eqn)
    else:
      close()
      items.append(eqn)
  close()
  _mark_outputs(items, jaxpr.outvars)
  return items


def _mark_outputs(items, outvars):
  """Set each region's outvars: what later items or the jaxpr's outputs read of it."""
  needed = {v for v in outvars if type(v) is not core.Literal}
  for item in reversed(items):
    if type(item) is Region:
      item.outvars = [v for e in item.eqns for v in e.outvars if v in needed]
      needed.update(item.invars)
    else:
      needed.update(v for v in item.invars if type(v) is not core.Literal)


class Layout(NamedTuple):
  """What ``run`` needs to know of a region: its shape, size, output dtypes and the
  block function's scratch buffers, as (dtype, the how-many-th of that dtype) pairs."""
  shape: tuple
  size: int
  dtypes: tuple
  scratch: tuple = ()


def layout(region: Region, scratch_dtypes=()) -> Layout:
  return Layout(region.shape, math.prod(region.shape),
                tuple(v.aval.dtype for v in region.outvars),
                tuple((d, list(scratch_dtypes[:j]).count(d))
                      for j, d in enumerate(scratch_dtypes)))


def run(block, lay: Layout, arrays, scalars):
  """Evaluate a region: ``block(s, *arrays, *scalars, *outs, *scratch)`` computes the
  elements ``s`` of the outputs ``outs`` from those of ``arrays``, with ``scratch``
  buffers of the block's length to write intermediates into. Returns the outputs."""
  if not all(type(a) is np.ndarray and a.flags.c_contiguous for a in arrays):
    # only a contiguous array has flat slices; NumPy may take another loop on strided
    # memory, so compute as unblocked code does: one block of everything
    outs = [np.empty(lay.shape, d) for d in lay.dtypes]
    block(..., *arrays, *scalars, *outs, *[np.empty(lay.shape, d) for d, _ in lay.scratch])
    return outs
  flat = [a.reshape(-1) for a in arrays]
  outs = [np.empty(lay.size, d) for d in lay.dtypes]
  args = (*flat, *scalars, *outs)
  count = max(1, lay.size // BLOCK)
  indices = iter(range(count))   # shared by the threads: each block is taken once

  def work():
    with _scratch(lay.scratch) as tmp:
      for i in indices:
        start = i * BLOCK
        stop = start + BLOCK if i < count - 1 else lay.size
        block(slice(start, stop), *args, *[t[:stop - start] for t in tmp])

  helpers = min(config.jaxlite_tier0_threads, count) - 1
  if helpers > 0:
    _run_with_helpers(work, helpers)
  else:
    work()
  return [o.reshape(lay.shape) for o in outs]


class _ThreadScratch(threading.local):
  """A thread's scratch buffers, by dtype: ``2 * BLOCK`` elements each (a region's last
  block is up to twice as long as the others), made on first use and shared by every
  region the thread runs. A region run while the thread is inside another (a finalizer
  that runs jitted code, say) gets buffers of its own."""

  def __init__(self):
    self.length = 0
    self.pool = {}
    self.busy = False


_thread_scratch = _ThreadScratch()


@contextlib.contextmanager
def _scratch(slots):
  """This thread's buffers for ``slots`` ((dtype, index) pairs), for the duration of the
  ``with``."""
  mine = _thread_scratch
  if mine.busy:
    yield [np.empty(2 * BLOCK, d) for d, _ in slots]
    return
  if mine.length != 2 * BLOCK:   # (tests vary BLOCK)
    mine.length, mine.pool = 2 * BLOCK, {}
  tmp = []
  for dtype, k in slots:
    have = mine.pool.setdefault(dtype, [])
    while len(have) <= k:
      have.append(np.empty(mine.length, dtype))
    tmp.append(have[k])
  mine.busy = True
  try:
    yield tmp
  finally:
    mine.busy = False


def _run_with_helpers(work, helpers):
  """Run ``work`` on this thread and on ``helpers`` pool threads; they share its blocks."""
  futures = [_pool(helpers).submit(work) for _ in range(helpers)]
  try:
    work()
  finally:
    for f in futures:
      if not f.cancel():   # started: wait, so no thread still writes the outputs
        f.result()


_pool_lock = threading.Lock()
_executor, _executor_size = None, 0


def _pool(helpers):
  """The process's helper threads, as many as the largest ``helpers`` asked for. A
  smaller pool is dropped, not shut down: a caller may still be submitting to it."""
  global _executor, _executor_size
  with _pool_lock:
    if _executor_size < helpers:
      _executor = concurrent.futures.ThreadPoolExecutor(
          helpers, thread_name_prefix="jaxlite-tier0")
      _executor_size = helpers
    return _executor


def blockable_shapes(eqn) -> bool:
  """Whether ``eqn``'s operands and result fit a region: one output of at least
  ``MIN_SIZE`` elements, operands of its shape or scalars, NumPy numeric dtypes (the
  8-bit floats and bfloat16 are ml_dtypes' loops, left whole)."""
  if len(eqn.outvars) != 1:
    return False
  out = eqn.outvars[0].aval
  if math.prod(out.shape) < MIN_SIZE or out.dtype.kind not in "biufc":
    return False
  return all(v.aval.shape in (out.shape, ()) and v.aval.dtype.kind in "biufc"
             for v in eqn.invars)
