"""``jaxlite.scipy.stats.beta`` (``jax.scipy.stats.beta``)."""
from jaxlite._src.libraries.scipy.stats import beta as _d

cdf = _d.cdf
logcdf = _d.logcdf
logpdf = _d.logpdf
logsf = _d.logsf
pdf = _d.pdf
sf = _d.sf
