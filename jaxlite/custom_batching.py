"""``jaxlite.custom_batching`` (``jax.custom_batching``): functions with their own vmap
rule, and functions that vmap runs one example at a time."""
from jaxlite._src.lax.custom_batching import custom_vmap, sequential_vmap  # noqa: F401
