"""``jaxlite.scipy.stats.beta`` (``jax.scipy.stats.beta``)."""
from jaxlite._src.libraries.scipy.stats import beta as _d

logpdf = _d.logpdf
pdf = _d.pdf
