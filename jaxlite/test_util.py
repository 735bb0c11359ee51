"""Testing helpers (``jax.test_util``)."""
from jaxlite._src.test_util import check_grads, check_jvp, check_vjp
