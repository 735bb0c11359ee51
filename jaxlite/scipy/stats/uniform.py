"""``jaxlite.scipy.stats.uniform`` (``jax.scipy.stats.uniform``)."""
from jaxlite._src.libraries.scipy.stats_continuous import uniform as _d

cdf = _d.cdf
logpdf = _d.logpdf
pdf = _d.pdf
ppf = _d.ppf
