"""``jax.experimental.multihost_utils``, for the one process jaxlite runs in.

With one process every host-level collective is local, and each function returns what
JAX 0.10.2's returns when ``jax.process_count() == 1``: ``process_allgather`` gives NumPy
arrays with a leading process axis of length 1 (none with ``tiled=True``),
``broadcast_one_to_all`` gives the inputs as NumPy arrays, ``sync_global_devices``
and ``assert_equal`` return at once, and ``reached_preemption_sync_point`` is False (no
distributed client). ``host_local_array_to_global_array`` places the local arrays on the
mesh with the given partition specs; ``global_array_to_host_local_array`` does the same
with the (identical) local mesh.
"""
import contextlib
import zlib

import numpy as np

import jaxlite
from jaxlite import distributed
from jaxlite._src.base import tree
from jaxlite._src.sharding import NamedSharding, PartitionSpec

__all__ = ["broadcast_one_to_all", "process_allgather", "sync_global_devices",
           "assert_equal", "reached_preemption_sync_point", "host_local_array_to_global_array",
           "global_array_to_host_local_array", "live_devices", "ProcessFailureError"]


def broadcast_one_to_all(in_tree, is_source=None):
  """Every process gets the source process's values: here, the inputs as NumPy arrays."""
  del is_source
  return tree.tree_map(np.asarray, in_tree)


def process_allgather(in_tree, tiled=False):
  """Every process's leaves, stacked on a new axis 0 (concatenated when ``tiled``), as
  NumPy arrays: here, each leaf with a leading axis of length 1 (as it is when ``tiled``,
  a scalar included, as JAX does with one process)."""
  def gather(x):
    out = np.asarray(x)
    return out if tiled else np.expand_dims(out, 0)
  return tree.tree_map(gather, in_tree)


def assert_equal(in_tree, fail_message=""):
  """Check that every process holds the same values: one process always does."""
  gathered = process_allgather(in_tree, tiled=True)
  expected = tree.tree_map(lambda x: np.atleast_1d(np.asarray(x)), in_tree)
  if not all(np.all(np.equal(a, b)) for a, b in zip(tree.tree_leaves(expected),
                                                      tree.tree_leaves(gathered))):
    raise AssertionError(f"{fail_message}. Expected: {gathered}; got: {in_tree}.")


def sync_global_devices(name):
  """A barrier across processes (checking they all reached the one named ``name``)."""
  assert_equal(np.uint32(zlib.crc32(name.encode())),
               f"sync_global_devices name mismatch ('{name}')")


def reached_preemption_sync_point(step_id):
  """Whether all processes reached a preemption sync step: False without a distributed
  client, as in JAX."""
  del step_id
  return False


def _check_pspecs(pspecs):
  for p in tree.tree_leaves(pspecs, is_leaf=lambda x: x is None):
    if p is None:
      raise ValueError(
          "`None` is not a valid input to the pspecs argument. Please use "
          "jax.sharding.PartitionSpec() if you wanted to replicate your input.")


def _place(arrays, mesh, pspecs):
  _check_pspecs(pspecs)
  leaves, treedef = tree.tree_flatten(arrays)
  if isinstance(pspecs, PartitionSpec):
    specs = [pspecs] * len(leaves)
  else:
    specs = tree.tree_leaves(pspecs, is_leaf=lambda x: isinstance(x, PartitionSpec))
    if len(specs) == 1:
      specs = specs * len(leaves)
  placed = [jaxlite.device_put(x, NamedSharding(mesh, spec)) for x, spec in zip(leaves, specs)]
  return tree.tree_unflatten(treedef, placed)


def host_local_array_to_global_array(local_inputs, global_mesh, pspecs):
  """The global arrays made of each process's local arrays: here, the local arrays
  placed on ``global_mesh`` with ``pspecs``."""
  return _place(local_inputs, global_mesh, pspecs)


def global_array_to_host_local_array(global_inputs, global_mesh, pspecs):
  """This process's parts of global arrays: here, the whole arrays, on the mesh."""
  return _place(global_inputs, global_mesh, pspecs)


class ProcessFailureError(Exception):
  """Raised by ``live_devices`` when processes holding some of its devices failed.

  Attributes
  ----------
  failed_devices : set
    The devices whose processes failed.
  """
  def __init__(self, failed_devices):
    self.failed_devices = failed_devices
    super().__init__(f"Devices failed: {failed_devices}")


@contextlib.contextmanager
def live_devices(devices):
  """Run the ``with`` block on those of ``devices`` whose processes are alive.

  With one process, every device is alive, so the block gets ``devices`` sorted by id,
  and an exception in it propagates unchanged (no process can fail under it).

  Raises
  ------
  RuntimeError
    ``jax.distributed.initialize()`` was not called, as in JAX.
  ValueError
    ``devices`` is empty, or holds none of this process's devices.
  """
  if not distributed.is_initialized():
    raise RuntimeError("Distributed JAX not initialized.")
  if not devices:
    raise ValueError("No devices provided.")
  if all(d.process_index != jaxlite.process_index() for d in devices):
    raise ValueError("Provided devices do not have any local devices.")
  yield sorted(devices, key=lambda d: d.id)
