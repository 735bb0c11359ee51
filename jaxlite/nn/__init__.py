"""``jaxlite.nn``: activation functions and helpers for neural networks (``jax.nn``)."""
from jaxlite._src.libraries.nn.functions import (
    relu, relu6, gelu, silu, swish, sigmoid, log_sigmoid, softplus, soft_sign, elu, selu,
    celu, leaky_relu, hard_tanh, hard_sigmoid, hard_silu, hard_swish, glu, softmax,
    log_softmax, logsumexp, standardize, one_hot, identity, tanh, mish, squareplus,
    sparse_plus, sparse_sigmoid, log1mexp, logmeanexp)
from jaxlite._src.libraries.nn.attention import (dot_product_attention, scaled_matmul,
                                                scaled_dot_general,
                                                get_scaled_dot_general_config)
from jaxlite.nn import initializers
