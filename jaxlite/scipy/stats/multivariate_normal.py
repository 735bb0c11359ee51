"""``jaxlite.scipy.stats.multivariate_normal`` (``jax.scipy.stats.multivariate_normal``)."""
from jaxlite._src.libraries.scipy.stats_multivariate import multivariate_normal as _d

logpdf = _d.logpdf
pdf = _d.pdf
