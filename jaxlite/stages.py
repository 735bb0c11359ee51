"""Ahead-of-time compilation stages (``jax.stages``)."""
from jaxlite._src.stages import Traced, Lowered, Compiled, ArgInfo, CompilerOptions
from jaxlite._src.jit import PjitFunction as Wrapped
