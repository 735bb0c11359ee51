"""``jaxlite.scipy.stats.chi2`` (``jax.scipy.stats.chi2``)."""
from jaxlite._src.libraries.scipy.stats_continuous import chi2 as _d

cdf = _d.cdf
logcdf = _d.logcdf
logpdf = _d.logpdf
logsf = _d.logsf
pdf = _d.pdf
sf = _d.sf
