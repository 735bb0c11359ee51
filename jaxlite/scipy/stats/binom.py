"""``jaxlite.scipy.stats.binom`` (``jax.scipy.stats.binom``)."""
from jaxlite._src.libraries.scipy.stats_discrete import binom as _d

logpmf = _d.logpmf
pmf = _d.pmf
