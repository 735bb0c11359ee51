"""``jax.extend.source_info_util``: the files whose frames JAX leaves out of the source
locations it records; jaxlite records none, and keeps the registry of
``jax._src.traceback_util``."""
from jaxlite._src.base.traceback_util import register_exclusion as register_exclusion
