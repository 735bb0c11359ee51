"""``jaxlite.scipy.stats.expon`` (``jax.scipy.stats.expon``)."""
from jaxlite._src.libraries.scipy.stats_continuous import expon as _d

cdf = _d.cdf
logcdf = _d.logcdf
logpdf = _d.logpdf
logsf = _d.logsf
pdf = _d.pdf
ppf = _d.ppf
sf = _d.sf
