"""``jaxlite.scipy.stats.truncnorm`` (``jax.scipy.stats.truncnorm``)."""
from jaxlite._src.libraries.scipy.stats_continuous import truncnorm as _d

cdf = _d.cdf
logcdf = _d.logcdf
logpdf = _d.logpdf
logsf = _d.logsf
pdf = _d.pdf
sf = _d.sf
