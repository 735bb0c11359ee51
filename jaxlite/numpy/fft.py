"""``jaxlite.numpy.fft``: discrete Fourier transforms (``jax.numpy.fft``)."""
from jaxlite._src.libraries.numpy.fft import *  # noqa: F401,F403
from jaxlite._src.libraries.numpy.fft import __all__  # noqa: F401
