"""``jaxlite.scipy.stats.bernoulli`` (``jax.scipy.stats.bernoulli``)."""
from jaxlite._src.libraries.scipy.stats import bernoulli as _d

cdf = _d.cdf
logpmf = _d.logpmf
pmf = _d.pmf
ppf = _d.ppf
