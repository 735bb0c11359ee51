"""The mesh in context, which ``jax.set_mesh`` sets (``_src/sharding.py``): per thread, as
in JAX, a concrete mesh and its abstract mesh. It lives down here because tracing reads
it: the abstract mesh is part of what a traced function's jaxpr depends on."""
from __future__ import annotations

import threading


class _MeshContext(threading.local):
  concrete = None   # the Mesh set by jax.set_mesh, or None (no mesh in context)
  abstract = None   # its AbstractMesh, or None (the empty abstract mesh)


context = _MeshContext()

# callbacks(active: bool), called when the first thread puts a mesh in context and when
# the last takes its out (sharding.py: eager results are then laid out over the mesh)
on_change: list = []
active = 0   # how many threads have a mesh in context (a global: hot paths read it)
# whether this process has made a Mesh of several devices: until it has, no jaxpr can lay
# a value out over devices, and jit's trace need not look (``jit.constrains_over_devices``)
several_devices = False
_lock = threading.Lock()


def swap(concrete, abstract) -> tuple:
  """Put ``concrete`` and ``abstract`` in context; returns the previous pair."""
  global active
  prev = (context.concrete, context.abstract)
  context.concrete, context.abstract = concrete, abstract
  delta = (concrete is not None) - (prev[0] is not None)
  if delta:
    with _lock:
      active += delta
      if active == (1 if delta > 0 else 0):
        for callback in on_change:
          callback(active > 0)
  return prev
