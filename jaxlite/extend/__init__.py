"""JAX's extension API (``jax.extend``): what libraries that define their own primitives,
or trace and rewrite jaxprs, build on. ``jax.extend.core.Primitive`` is jaxlite's own
primitive class, and the rule tables of ``jax.interpreters`` are jaxlite's own tables."""
from jaxlite.extend import core, linear_util  # noqa: F401
