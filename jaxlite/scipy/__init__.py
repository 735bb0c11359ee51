"""``jaxlite.scipy``: SciPy's API on jaxlite arrays (``jax.scipy``)."""
import importlib as _importlib

from jaxlite.scipy import special, stats  # noqa: F401
from jaxlite.scipy import linalg  # noqa

# imported on first access, as JAX's jax.scipy loads its submodules (jax.scipy.optimize is
# not among them there either: it needs its own import)
_LAZY = ("cluster", "fft", "integrate", "interpolate", "ndimage", "signal", "sparse")


def __getattr__(name):
  if name in _LAZY:
    return _importlib.import_module(f"{__name__}.{name}")
  raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
  return sorted(set(globals()) | set(_LAZY))
