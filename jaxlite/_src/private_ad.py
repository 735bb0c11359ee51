"""JAX's private ``jax._src.interpreters.ad`` as libraries and their tests use it, served
under that name by the alias: ``CustomVJPException`` (diffrax's tests expect it when a
``custom_vjp`` function is differentiated with respect to a value it closes over) and the
names of the public ``jax.interpreters.ad``, the same objects."""
from jaxlite._src.transforms.ad import CustomVJPException as CustomVJPException
from jaxlite._src.transforms.ad import (  # the public jax.interpreters.ad's names
    JVPTrace as JVPTrace,
    JVPTracer as JVPTracer,
    UndefinedPrimal as UndefinedPrimal,
    Zero as Zero,
    add_jaxvals as add_jaxvals,
    add_jaxvals_p as add_jaxvals_p,
    add_tangents as add_tangents,
    backward_pass as backward_pass,
    defbilinear as defbilinear,
    defjvp as defjvp,
    defjvp2 as defjvp2,
    defjvp_zero as defjvp_zero,
    deflinear as deflinear,
    deflinear2 as deflinear2,
    get_primitive_transpose as get_primitive_transpose,
    instantiate_zeros as instantiate_zeros,
    is_undefined_primal as is_undefined_primal,
    primitive_jvps as primitive_jvps,
    primitive_transposes as primitive_transposes,
    zeros_like_aval as zeros_like_aval,
)


def __getattr__(name):
  raise AttributeError(f"jaxlite does not provide jax._src.interpreters.ad.{name}; "
                       "jax.interpreters.ad has the public names.")
