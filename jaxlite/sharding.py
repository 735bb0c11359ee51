"""``jax.sharding``: meshes, partition specs and shardings."""
from jaxlite._src.sharding import (Sharding, Mesh, AbstractMesh, AxisType, PartitionSpec,
                                   NamedSharding, SingleDeviceSharding)

__all__ = ["Sharding", "Mesh", "AbstractMesh", "AxisType", "PartitionSpec", "NamedSharding",
           "SingleDeviceSharding"]
