"""``jax.experimental.colocated_python``: Python run beside the devices, on their host's CPUs.

JAX serializes a colocated function and runs it in the colocated CPU runtime of each
process that holds the devices (with Pathways, on remote hosts). jaxlite runs in one
process, which holds every device, so a colocated function runs here, in this process, on
the arrays it is given: the CPU devices colocated with any device are this process's CPU
devices, and nothing is serialized.
"""
from jaxlite.experimental.colocated_python.api import (colocated_cpu_devices,
                                                       colocated_python,
                                                       colocated_python_class)

__all__ = ["colocated_cpu_devices", "colocated_python", "colocated_python_class"]
