"""``jax.experimental.layout``: device memory layouts of arrays."""
from jaxlite._src.base.layout import (AutoLayout as AutoLayout, Format as Format,
                                      Layout as Layout)
from jaxlite._src.lax.sharding_constraint import (
    with_layout_constraint as with_layout_constraint)
