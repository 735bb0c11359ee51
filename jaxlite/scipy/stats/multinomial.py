"""``jaxlite.scipy.stats.multinomial`` (``jax.scipy.stats.multinomial``)."""
from jaxlite._src.libraries.scipy.stats_discrete import multinomial as _d

logpmf = _d.logpmf
pmf = _d.pmf
