"""``jaxlite.scipy.stats.vonmises`` (``jax.scipy.stats.vonmises``)."""
from jaxlite._src.libraries.scipy.stats_continuous import vonmises as _d

logpdf = _d.logpdf
pdf = _d.pdf
