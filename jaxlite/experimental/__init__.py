"""Experimental APIs (``jax.experimental``)."""
from jaxlite._src.debugging import io_callback
from jaxlite._src.hijax import cur_qdd as cur_qdd
