"""``jaxlite.nn.initializers``: parameter initializers (``jax.nn.initializers``)."""
from jaxlite._src.libraries.nn.initializers import (
    Initializer,
    zeros, ones, constant, uniform, normal, truncated_normal, variance_scaling,
    glorot_uniform, glorot_normal, xavier_uniform, xavier_normal, lecun_uniform,
    lecun_normal, he_uniform, he_normal, kaiming_uniform, kaiming_normal, orthogonal,
    delta_orthogonal)
