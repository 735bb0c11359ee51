"""``jax.interpreters``: the rule tables of jaxlite's transformations, under JAX's names,
for libraries that define primitives (``ad``, ``batching``, ``mlir``) or trace functions
partially (``partial_eval``)."""
from jaxlite.interpreters import xla  # noqa: F401  (an attribute after `import jax`, as in JAX)
