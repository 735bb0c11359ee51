"""``jax.experimental.layout``: device memory layouts (jaxlite keeps arrays row-major)."""
from jaxlite._src.base.layout import (Format as Format, Layout as Layout,
                                 with_layout_constraint as with_layout_constraint)
