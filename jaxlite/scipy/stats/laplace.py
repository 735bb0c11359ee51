"""``jaxlite.scipy.stats.laplace`` (``jax.scipy.stats.laplace``)."""
from jaxlite._src.libraries.scipy.stats_continuous import laplace as _d

cdf = _d.cdf
logpdf = _d.logpdf
pdf = _d.pdf
