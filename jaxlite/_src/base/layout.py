"""``jax.experimental.layout``: how an array's elements sit in device memory (``Layout``)
and a layout paired with a sharding (``Format``). jaxlite keeps every array in the default
row-major layout, so these describe layouts without choosing one: a ``Format`` whose
layout is None or row-major stands for its sharding, and any other layout is refused."""
from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True)
class Layout:
  """A device memory layout: dimensions from major to minor, optional tiling."""
  major_to_minor: tuple
  tiling: tuple | None = None
  sub_byte_element_size_in_bits: int = 0

  def __post_init__(self):
    object.__setattr__(self, "major_to_minor", tuple(int(d) for d in self.major_to_minor))


@dataclasses.dataclass(frozen=True)
class Format:
  """A layout (None: the default one) and a sharding (None: the default one)."""
  layout: Layout | None = None
  sharding: object = None


def is_row_major(layout, ndim: int) -> bool:
  """Whether ``layout`` (a Layout or None) is the row-major layout jaxlite keeps."""
  return layout is None or (layout.major_to_minor == tuple(range(ndim))
                            and not layout.tiling)


def with_layout_constraint(x, layout):
  """``x``, constrained to ``layout``: jaxlite's arrays are row-major, the one layout it
  accepts."""
  if not is_row_major(layout, len(getattr(x, "shape", ()))):
    raise ValueError(f"jaxlite keeps arrays in the row-major layout; it cannot constrain "
                     f"an array to {layout}. Leave the layout to the default.")
  return x
