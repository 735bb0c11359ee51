"""``jax.distributed``: jaxlite runs in one process (see docs/distributed.md)."""
from jaxlite._src.distributed import initialize, is_initialized, shutdown

__all__ = ["initialize", "is_initialized", "shutdown"]
