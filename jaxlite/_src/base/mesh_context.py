"""The mesh in context, which ``jax.set_mesh`` sets (``_src/sharding.py``): per thread, as
in JAX, a concrete mesh and its abstract mesh. It lives down here because tracing reads
it: the abstract mesh is part of what a traced function's jaxpr depends on."""
from __future__ import annotations

import threading


class _MeshContext(threading.local):
  concrete = None   # the Mesh set by jax.set_mesh, or None (no mesh in context)
  abstract = None   # its AbstractMesh, or None (the empty abstract mesh)


context = _MeshContext()


def swap(concrete, abstract) -> tuple:
  """Put ``concrete`` and ``abstract`` in context; returns the previous pair."""
  prev = (context.concrete, context.abstract)
  context.concrete, context.abstract = concrete, abstract
  return prev
