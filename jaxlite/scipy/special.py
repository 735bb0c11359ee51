"""``jaxlite.scipy.special`` (``jax.scipy.special``)."""
from jaxlite._src.libraries.scipy.special import *  # noqa: F401,F403
from jaxlite._src.libraries.scipy.special_hyper import *  # noqa
from jaxlite._src.libraries.scipy.special_integrals import *  # noqa
from jaxlite._src.libraries.scipy.special_oscillatory import *  # noqa
