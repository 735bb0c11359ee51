"""``jaxlite.numpy``: NumPy's API on immutable arrays, built from lax primitives."""
import sys as _sys

from jaxlite._src.numpy.namespace import *  # noqa
from jaxlite.numpy import linalg, fft  # noqa
from jaxlite._src.numpy.extras import *  # noqa
from jaxlite._src.numpy import array_methods as _array_methods

_array_methods.register_namespace(_sys.modules[__name__])
del _sys, _array_methods
