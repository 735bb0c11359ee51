"""``jax.sharding``: meshes, partition specs and shardings, and the mesh in context."""
from jaxlite._src.sharding import (Sharding, Mesh, AbstractMesh, AbstractDevice, AxisType,
                                   PartitionSpec, NamedSharding, SingleDeviceSharding,
                                   set_mesh, get_mesh, get_abstract_mesh, use_abstract_mesh,
                                   reshard, auto_axes, explicit_axes, ManualAxisType,
                                   make_single_device_sharding)

__all__ = ["Sharding", "Mesh", "AbstractMesh", "AbstractDevice", "AxisType", "PartitionSpec",
           "NamedSharding", "SingleDeviceSharding", "set_mesh", "get_mesh",
           "get_abstract_mesh", "use_abstract_mesh", "reshard", "auto_axes",
           "explicit_axes", "ManualAxisType", "make_single_device_sharding"]
