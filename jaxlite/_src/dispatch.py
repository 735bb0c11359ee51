"""The part of JAX's private ``jax._src.dispatch`` that libraries use, served under that
name by the alias: equinox registers ``wait_for_tokens`` to run at exit."""
from jaxlite._src.api import effects_barrier


def wait_for_tokens():
  """Wait for the computations with side effects to finish (JAX's ordered-effect tokens);
  jaxlite has no tokens, so it waits for every pending computation."""
  effects_barrier()
