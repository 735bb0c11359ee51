"""Dtype utilities, as in ``jax.dtypes``.

``promote_types`` and ``is_weakly_typed`` live under ``jax.numpy`` and
``jax._src.dtypes`` in JAX; they are public here too.
"""
from jaxlite._src.base.dtypes import ml_dtypes as _ml_dtypes
from jaxlite._src.base.dtypes import (
    TypePromotionError as TypePromotionError,
    canonicalize_dtype as canonicalize_dtype,
    extended as extended,
    float0 as float0,
    is_weakly_typed as is_weakly_typed,
    issubdtype as issubdtype,
    itemsize_bits as itemsize_bits,
    prng_key as prng_key,
    promote_types as promote_types,
    result_type as result_type,
    scalar_type_of as scalar_type_of,
)


def __getattr__(name):
  # bfloat16, finfo and iinfo are ml_dtypes' (as in JAX), which loads on first access
  if name in ("bfloat16", "finfo", "iinfo"):
    value = getattr(_ml_dtypes(), name)
    globals()[name] = value
    return value
  raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
  return sorted({*globals(), "bfloat16", "finfo", "iinfo"})
