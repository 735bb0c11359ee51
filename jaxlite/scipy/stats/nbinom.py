"""``jaxlite.scipy.stats.nbinom`` (``jax.scipy.stats.nbinom``)."""
from jaxlite._src.libraries.scipy.stats_discrete import nbinom as _d

logpmf = _d.logpmf
pmf = _d.pmf
