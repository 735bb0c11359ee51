"""``jaxlite.scipy.stats`` (``jax.scipy.stats``)."""
from jaxlite.scipy.stats import norm, t, gamma, beta, bernoulli  # noqa: F401
from jaxlite.scipy.stats import (cauchy, chi2, expon, gennorm, gumbel_l, gumbel_r, laplace, logistic, pareto, truncnorm, uniform, vonmises, wrapcauchy)  # noqa: F401,E501
from jaxlite._src.libraries.scipy.kde import gaussian_kde  # noqa: F401,E402
from jaxlite.scipy.stats import (  # noqa: F401,E402
    betabinom, binom, dirichlet, geom, multinomial, multivariate_normal, nbinom, poisson)
from jaxlite._src.libraries.scipy.stats_summary import mode, rankdata, sem  # noqa: F401,E402
