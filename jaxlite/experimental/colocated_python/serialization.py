"""``jax.experimental.colocated_python.serialization``: JAX pickles colocated functions,
meshes and shardings here to send them to the hosts of remote devices. jaxlite runs every
colocated function in its own process (see the package), so nothing is serialized; the
names that code outside JAX reads from this module (orbax: ``DeviceList``, ``xb``) are
the ones that describe devices."""
from jaxlite._src import xla_bridge as xb
from jaxlite._src.sharding import DeviceList

__all__ = ["DeviceList", "xb"]
