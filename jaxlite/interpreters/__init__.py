"""``jax.interpreters``: the modules of JAX's tracing machinery that libraries import."""
