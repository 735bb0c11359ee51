"""``jaxlite.scipy.stats.pareto`` (``jax.scipy.stats.pareto``)."""
from jaxlite._src.libraries.scipy.stats_continuous import pareto as _d

cdf = _d.cdf
logcdf = _d.logcdf
logpdf = _d.logpdf
logsf = _d.logsf
pdf = _d.pdf
ppf = _d.ppf
sf = _d.sf
