"""``jaxlite.scipy.stats`` (``jax.scipy.stats``)."""
from jaxlite.scipy.stats import norm, t, gamma, beta, bernoulli  # noqa: F401
