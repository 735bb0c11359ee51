"""``jaxlite.scipy.stats.t`` (``jax.scipy.stats.t``)."""
from jaxlite._src.libraries.scipy.stats import t as _d

logpdf = _d.logpdf
pdf = _d.pdf
