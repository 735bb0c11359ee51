"""JAX's private ``jax._src.interpreters.ad`` as libraries and their tests use it, served
under that name by the alias: ``CustomVJPException`` (diffrax's and jaxopt's tests expect
it when a ``custom_vjp`` function is differentiated with respect to a value it closes
over) and the names of the public ``jax.interpreters.ad`` (``__all__``), which that module
takes from here: the same objects, named once."""
from jaxlite._src.transforms import ad as _ad
from jaxlite._src.transforms.ad import CustomVJPException as CustomVJPException

__all__ = ("JVPTrace", "JVPTracer", "UndefinedPrimal", "Zero", "add_jaxvals", "add_jaxvals_p",
           "add_tangents", "backward_pass", "defbilinear", "defjvp", "defjvp2", "defjvp_zero",
           "deflinear", "deflinear2", "get_primitive_transpose", "instantiate_zeros",
           "is_undefined_primal", "primitive_jvps", "primitive_transposes",
           "zeros_like_aval")
globals().update({name: getattr(_ad, name) for name in __all__})


def __getattr__(name):
  raise AttributeError(f"jaxlite does not provide jax._src.interpreters.ad.{name}; "
                       "jax.interpreters.ad has the public names.")
