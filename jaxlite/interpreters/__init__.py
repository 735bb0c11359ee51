"""``jax.interpreters``: the modules of JAX's tracing machinery that libraries import."""
from jaxlite.interpreters import xla  # noqa: F401  (an attribute after `import jax`, as in JAX)
