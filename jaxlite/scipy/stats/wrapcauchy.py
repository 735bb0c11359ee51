"""``jaxlite.scipy.stats.wrapcauchy`` (``jax.scipy.stats.wrapcauchy``)."""
from jaxlite._src.libraries.scipy.stats_continuous import wrapcauchy as _d

logpdf = _d.logpdf
pdf = _d.pdf
