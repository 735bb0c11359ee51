"""``jaxlite.scipy.stats.betabinom`` (``jax.scipy.stats.betabinom``)."""
from jaxlite._src.libraries.scipy.stats_discrete import betabinom as _d

logpmf = _d.logpmf
pmf = _d.pmf
