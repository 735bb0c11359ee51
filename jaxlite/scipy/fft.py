"""``jaxlite.scipy.fft`` (``jax.scipy.fft``): the discrete cosine transform."""
from jaxlite._src.libraries.scipy.fft import dct, dctn, idct, idctn  # noqa: F401
