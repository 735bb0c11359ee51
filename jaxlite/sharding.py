"""``jax.sharding``: meshes, partition specs and shardings."""
from jaxlite._src.sharding import (Sharding, Mesh, AbstractMesh, AxisType, PartitionSpec,
                                   NamedSharding, SingleDeviceSharding, get_abstract_mesh)

__all__ = ["Sharding", "Mesh", "AbstractMesh", "AxisType", "PartitionSpec", "NamedSharding",
           "SingleDeviceSharding", "get_abstract_mesh"]
