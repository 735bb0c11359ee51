"""``jaxlite.scipy.stats.dirichlet`` (``jax.scipy.stats.dirichlet``)."""
from jaxlite._src.libraries.scipy.stats_multivariate import dirichlet as _d

logpdf = _d.logpdf
pdf = _d.pdf
