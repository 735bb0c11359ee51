"""``jaxlite.scipy.stats`` (``jax.scipy.stats``)."""
from jaxlite.scipy.stats import norm, t, gamma, beta, bernoulli  # noqa: F401
from jaxlite._src.libraries.scipy.kde import gaussian_kde  # noqa: F401,E402
