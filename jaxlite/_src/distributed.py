"""``jax.distributed``: jaxlite runs in one process (see docs/distributed.md).

The PyPI CPU PJRT plugin can create several devices in one process but takes no
``node_id``/``num_nodes`` options and no key-value store, so it cannot join processes;
``initialize`` accepts a one-process "cluster" and says so for more.
"""
import dataclasses

__all__ = ["initialize", "is_initialized", "shutdown", "global_state"]


@dataclasses.dataclass
class State:
  """The process's place in a multi-process run (``jax._src.distributed.global_state``,
  which libraries such as orbax read): one process, no coordination service or client."""
  process_id: int = 0
  num_processes: int = 1
  coordinator_address: str | None = None
  client: object = None
  service: object = None
  preemption_sync_manager: object = None
  partition_index: int | None = None
  initialized: bool = False


global_state = State()


def initialize(coordinator_address=None, num_processes=None, process_id=None,
               local_device_ids=None, cluster_detection_method=None,
               initialization_timeout=300, coordinator_bind_address=None, **kwargs):
  """Join a multi-process run; jaxlite supports exactly one process.

  Raises
  ------
  RuntimeError
    ``num_processes`` > 1 (or a ``process_id`` other than 0): cross-process runs need a
    plugin whose collectives span processes (the CUDA plugin, with the PJRT key-value
    store callbacks), which jaxlite does not drive yet.
  """
  if (num_processes or 1) != 1 or (process_id or 0) != 0:
    raise RuntimeError(
        f"jax.distributed.initialize(num_processes={num_processes}, process_id="
        f"{process_id}): jaxlite runs in one process. The CPU PJRT plugin has no "
        "cross-process collectives (it reads only cpu_device_count), and jaxlite does not "
        "yet pass PJRT's key-value store callbacks to the CUDA plugin. Use several devices "
        "in one process instead (jax_num_cpu_devices); docs/distributed.md explains.")
  if global_state.initialized:
    raise RuntimeError("jax.distributed.initialize should only be called once.")
  global_state.initialized = True
  global_state.coordinator_address = coordinator_address


def is_initialized() -> bool:
  return global_state.initialized


def shutdown():
  global_state.initialized = False
  global_state.coordinator_address = None
