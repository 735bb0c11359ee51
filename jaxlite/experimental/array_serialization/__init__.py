"""``jax.experimental.array_serialization``: writing arrays to and reading them from
TensorStore checkpoints (``serialization``)."""
