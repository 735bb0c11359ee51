"""Small reference libraries built on jaxlite, as ``jax.example_libraries``."""
