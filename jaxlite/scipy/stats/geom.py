"""``jaxlite.scipy.stats.geom`` (``jax.scipy.stats.geom``)."""
from jaxlite._src.libraries.scipy.stats_discrete import geom as _d

logpmf = _d.logpmf
pmf = _d.pmf
