"""``jaxlite.scipy.stats.norm`` (``jax.scipy.stats.norm``)."""
from jaxlite._src.libraries.scipy.stats import norm as _d

cdf = _d.cdf
logcdf = _d.logcdf
logpdf = _d.logpdf
logsf = _d.logsf
pdf = _d.pdf
ppf = _d.ppf
sf = _d.sf
isf = _d.isf
