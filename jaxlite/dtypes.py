"""Dtype utilities, as in ``jax.dtypes``.

``promote_types`` and ``is_weakly_typed`` live under ``jax.numpy`` and
``jax._src.dtypes`` in JAX; they are public here too.
"""
from jaxlite._src.dtypes import (
    TypePromotionError as TypePromotionError,
    bfloat16 as bfloat16,
    canonicalize_dtype as canonicalize_dtype,
    extended as extended,
    finfo as finfo,
    float0 as float0,
    iinfo as iinfo,
    is_weakly_typed as is_weakly_typed,
    issubdtype as issubdtype,
    itemsize_bits as itemsize_bits,
    prng_key as prng_key,
    promote_types as promote_types,
    result_type as result_type,
    scalar_type_of as scalar_type_of,
)
