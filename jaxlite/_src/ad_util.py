"""JAX's private ``jax._src.ad_util``, served to libraries that import it (lineax takes
``stop_gradient_p`` from it to give it a transpose rule): the same objects as jaxlite's."""
from jaxlite._src.lax.custom_derivatives import stop_gradient_p  # noqa: F401
from jaxlite._src.lax.custom_derivatives import zero_from_primal  # noqa: F401
from jaxlite._src.transforms.ad import (  # noqa: F401
    SymbolicZero, Zero, add_any_p, add_jaxvals, add_jaxvals_p, instantiate, zeros_like_aval)
