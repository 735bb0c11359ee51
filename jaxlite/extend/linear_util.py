"""``jax.extend.linear_util``: functions wrapped with the transformations to apply to them
(what flax hands to ``jax.interpreters.partial_eval``)."""
from jaxlite._src.base.linear_util import (
    EqualStore as EqualStore,
    Store as Store,
    StoreException as StoreException,
    WrappedFun as WrappedFun,
    cache as cache,
    merge_linear_aux as merge_linear_aux,
    transformation as transformation,
    transformation2 as transformation2,
    transformation_with_aux as transformation_with_aux,
    transformation_with_aux2 as transformation_with_aux2,
    wrap_init as wrap_init,
)
