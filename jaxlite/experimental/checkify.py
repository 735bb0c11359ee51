"""``jax.experimental.checkify``: functionalized run-time checks (``check``, NaN, division
by zero and out-of-bounds indexing) returned as an ``Error`` value."""
from jaxlite._src.checkify import (  # noqa: F401
    Error, ErrorCategory, JaxRuntimeError, all_checks, automatic_checks, check, check_error,
    checkify, debug_check, div_checks, float_checks, index_checks, init_error, nan_checks,
    user_checks)

__all__ = ["Error", "ErrorCategory", "JaxRuntimeError", "all_checks", "automatic_checks",
           "check", "check_error", "checkify", "debug_check", "div_checks", "float_checks",
           "index_checks", "init_error", "nan_checks", "user_checks"]
