"""``jaxlite.scipy.stats.cauchy`` (``jax.scipy.stats.cauchy``)."""
from jaxlite._src.libraries.scipy.stats_continuous import cauchy as _d

cdf = _d.cdf
isf = _d.isf
logcdf = _d.logcdf
logpdf = _d.logpdf
logsf = _d.logsf
pdf = _d.pdf
ppf = _d.ppf
sf = _d.sf
