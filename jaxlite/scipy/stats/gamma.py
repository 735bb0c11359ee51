"""``jaxlite.scipy.stats.gamma`` (``jax.scipy.stats.gamma``)."""
from jaxlite._src.libraries.scipy.stats import gamma as _d

cdf = _d.cdf
logcdf = _d.logcdf
logpdf = _d.logpdf
logsf = _d.logsf
pdf = _d.pdf
sf = _d.sf
