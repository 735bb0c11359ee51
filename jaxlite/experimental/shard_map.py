"""``jax.experimental.shard_map``: the older home of ``jax.shard_map``."""
from jaxlite._src.sharding_map import shard_map

__all__ = ["shard_map"]
