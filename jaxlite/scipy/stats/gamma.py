"""``jaxlite.scipy.stats.gamma`` (``jax.scipy.stats.gamma``)."""
from jaxlite._src.libraries.scipy.stats import gamma as _d

cdf = _d.cdf
logpdf = _d.logpdf
pdf = _d.pdf
