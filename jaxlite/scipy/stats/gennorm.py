"""``jaxlite.scipy.stats.gennorm`` (``jax.scipy.stats.gennorm``)."""
from jaxlite._src.libraries.scipy.stats_continuous import gennorm as _d

cdf = _d.cdf
logpdf = _d.logpdf
pdf = _d.pdf
