"""``jaxlite.random``: JAX's threefry2x32 pseudo-random numbers (``jax.random``)."""
from jaxlite._src.libraries.random import (
    PRNGKey, key, key_data, wrap_key_data, key_impl, split, fold_in, bits, uniform,
    randint, normal, truncated_normal, bernoulli, exponential, laplace, logistic, cauchy,
    gumbel, categorical, permutation, shuffle, choice, gamma, loggamma, beta, dirichlet,
    poisson, multivariate_normal, orthogonal, clone, key_dtype)
from jaxlite._src.lax.special import random_gamma_p  # noqa: F401 (jax.random.random_gamma_p)
from jaxlite._src.libraries.random_continuous import *  # noqa
from jaxlite._src.libraries.random_discrete import *  # noqa
