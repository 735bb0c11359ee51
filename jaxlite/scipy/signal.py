"""``jaxlite.scipy.signal`` (``jax.scipy.signal``): convolution, detrending and spectral
analysis."""
from jaxlite._src.libraries.scipy.signal import (  # noqa: F401
    convolve, convolve2d, correlate, correlate2d, csd, detrend, fftconvolve, istft, stft,
    welch)
