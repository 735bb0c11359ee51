"""``jaxlite.numpy``: NumPy's API on immutable arrays, built from lax primitives."""
import sys as _sys

from jaxlite._src.libraries.numpy.namespace import *  # noqa
# the public submodules (only their __all__), not the _src modules that the star import
# above binds to these names
import importlib as _importlib
linalg = _importlib.import_module("jaxlite.numpy.linalg")
fft = _importlib.import_module("jaxlite.numpy.fft")
from jaxlite._src.libraries.numpy.ufunc_api import *  # noqa
from jaxlite._src.libraries.numpy.array_api import (  # noqa
    __array_api_version__, __array_namespace_info__, from_dlpack)
from jaxlite._src.libraries.numpy import array_methods as _array_methods

from jaxlite._src.libraries.numpy.namespace import _LAZY_NAMES, _lazy_attribute

_array_methods.register_namespace(_sys.modules[__name__])
del _array_methods, _importlib


def __getattr__(name):
  # bfloat16, finfo, dtype, ...: they load ml_dtypes, on first use rather than at import
  return _lazy_attribute(_sys.modules[__name__], name)


def __dir__():
  return sorted({*globals(), *_LAZY_NAMES})
