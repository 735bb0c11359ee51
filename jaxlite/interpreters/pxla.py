"""``jax.interpreters.pxla``: JAX's machinery for programs over meshes of devices.

jaxlite partitions programs over devices with XLA's SPMD partitioner, from ``jit``
(docs/architecture.md), and has no executables of this module's kind (the result
handlers extended dtypes use are private ``jax._src.interpreters.pxla``'s,
``jaxlite._src.pxla``). It serves the names of it that are types: ``Index``, the slices
one device holds of an array, and ``MeshAxisName``, a mesh axis's name.
"""
from typing import Any as _Any

__all__ = ["Index", "MeshAxisName"]

Index = tuple[slice, ...]
MeshAxisName = _Any
