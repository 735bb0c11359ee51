"""``jax.experimental.mesh_utils``: arrays of devices shaped as a mesh.

JAX orders the devices of a TPU or GPU slice to follow its physical interconnect; the
devices jaxlite drives (one host's CPU, or one process's accelerators) have no such
topology, so the mesh holds them in the order given, as JAX's does for CPU devices.
"""
import math

import numpy as np

import jaxlite

__all__ = ["create_device_mesh"]


def create_device_mesh(mesh_shape, devices=None, *, contiguous_submeshes=False,
                       allow_split_physical_axes=False) -> np.ndarray:
  """An object array of devices of shape ``mesh_shape``, for ``jax.sharding.Mesh``.

  Parameters
  ----------
  mesh_shape : sequence of int
    The mesh's shape; its product must be the number of devices.
  devices : sequence of Device, optional
    The devices to lay out, in this order; default ``jax.devices()``.
  contiguous_submeshes, allow_split_physical_axes : bool
    Options about a TPU slice's physical layout, which jaxlite's devices do not have;
    accepted and without effect, as in JAX for CPU devices.

  Returns
  -------
  numpy.ndarray
    ``devices`` as an array of dtype ``object`` and shape ``mesh_shape``.

  Examples
  --------
  >>> import jaxlite as jax
  >>> from jaxlite.experimental import mesh_utils
  >>> mesh_utils.create_device_mesh((1, 1)).shape
  (1, 1)
  """
  del contiguous_submeshes, allow_split_physical_axes
  devices = jaxlite.devices() if devices is None else list(devices)
  mesh_shape = tuple(mesh_shape)
  if math.prod(mesh_shape) != len(devices):
    raise ValueError(f"Number of devices {len(devices)} must equal the product of "
                     f"mesh_shape {mesh_shape}")
  out = np.empty(len(devices), dtype=object)
  out[:] = devices   # element by element: a device is no sequence for NumPy to unpack
  return out.reshape(mesh_shape)
