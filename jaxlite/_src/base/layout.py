"""``jax.experimental.layout``: how an array's elements sit in device memory (``Layout``)
and a layout paired with a sharding (``Format``), as JAX 0.10 defines them.

A layout is physical only: it never changes a value. ``major_to_minor`` lists the
dimensions from the slowest varying to the fastest, so ``(0, 1, ..., n-1)`` is row-major
(C order), the layout every array has unless asked otherwise. Placement (``sharding.py``)
realises other layouts in the device buffers; this module holds the values and their
rules only.
"""
from __future__ import annotations

from jaxlite._src.base import errors


class AutoLayoutSingleton:
  """``Layout.AUTO``: let the compiler choose the layout."""

  def __repr__(self):
    return "AUTO"


AutoLayout = AutoLayoutSingleton()


class Layout:
  """A device memory layout: dimensions from major to minor, and optional tiling.

  Parameters
  ----------
  major_to_minor : sequence of int
    A permutation of the array's dimensions, slowest varying first.
  tiling : sequence of sequences of int, optional
    XLA's tiles, outermost first (None: the device's choice).
  sub_byte_element_size_in_bits : int
    The element size of packed sub-byte types (0: the dtype's).
  """
  __slots__ = ("major_to_minor", "tiling", "sub_byte_element_size_in_bits")
  AUTO = AutoLayout

  def __init__(self, major_to_minor, tiling=None, sub_byte_element_size_in_bits: int = 0):
    self.major_to_minor = tuple(major_to_minor)
    self.tiling = None if tiling is None else tuple(map(tuple, tiling))
    self.sub_byte_element_size_in_bits = sub_byte_element_size_in_bits

  def __repr__(self):
    return (f"Layout(major_to_minor={self.major_to_minor}, tiling={self.tiling}, "
            f"sub_byte_element_size_in_bits={self.sub_byte_element_size_in_bits})")

  def _key(self):
    return (self.major_to_minor, self.tiling, self.sub_byte_element_size_in_bits)

  def __hash__(self):
    return hash(self._key())

  def __eq__(self, other):
    return isinstance(other, Layout) and self._key() == other._key()

  def update(self, **kwargs) -> "Layout":
    """A copy with the fields given replaced."""
    fields = dict(zip(self.__slots__, self._key()))
    fields.update(kwargs)
    return Layout(**fields)

  def check_compatible_aval(self, aval_shape):
    """Raise ValueError unless the layout has one entry per dimension of ``aval_shape``."""
    if len(self.major_to_minor) != len(aval_shape):
      raise ValueError(
          f"Length of major_to_minor and the rank of the value should match. Got "
          f"major_to_minor={self.major_to_minor} and shape={tuple(aval_shape)}")

  def check_shape(self, shape, context=None):
    """Check the layout against a value of ``shape`` before anything runs: ValueError
    (prefixed by ``context``, the words of the API asking) unless it has one entry per
    dimension, and JaxRuntimeError (XLA's INVALID_ARGUMENT, as JAX raises it) unless
    ``major_to_minor`` lists each dimension once."""
    try:
      self.check_compatible_aval(shape)
    except ValueError as e:
      if context is None:
        raise
      raise ValueError(f"{context}: {e}") from None
    if sorted(self.major_to_minor) != list(range(len(shape))):
      raise errors.JaxRuntimeError(
          f"INVALID_ARGUMENT: layout major_to_minor={self.major_to_minor} is not a "
          f"permutation of the dimensions of shape {tuple(shape)}; list each dimension "
          f"once, slowest varying first.")


class Format:
  """A layout (None: the default one; ``Layout.AUTO``: the compiler's choice) and a
  sharding (None: the default one). A concrete ``Layout`` needs a concrete sharding."""
  __slots__ = ("layout", "sharding")

  def __init__(self, layout=None, sharding=None):
    if isinstance(layout, Layout) and sharding is None:
      raise ValueError(
          f"Sharding has to be concrete when layout is of type {type(layout)}. Please "
          "pass a `jax.sharding.NamedSharding` or `jax.sharding.SingleDeviceSharding` to "
          f"the sharding argument. Got sharding {sharding}")
    if not isinstance(layout, (Layout, type(None), AutoLayoutSingleton)):
      raise TypeError(
          "Invalid value received for the layout argument. Expected values are `None`, "
          f"`Layout.AUTO` or an instance of `Layout`. Got {layout} of type {type(layout)}")
    # (a Sharding is anything with a device set: this layer sits below sharding.py)
    if sharding is not None and not hasattr(type(sharding), "device_set"):
      raise TypeError(
          "Invalid value received for the sharding argument. Expected values are `None` "
          f"or an instance of `jax.Sharding`. Got {sharding} of type {type(sharding)}")
    self.layout, self.sharding = layout, sharding

  def __repr__(self):
    return f"Format(layout={self.layout}, sharding={self.sharding})"

  def __hash__(self):
    return hash((self.layout, self.sharding))

  def __eq__(self, other):
    return (isinstance(other, Format) and self.layout == other.layout
            and self.sharding == other.sharding)


def get_layout_for_vmap(dim: int, layout: Layout) -> Layout:
  """``layout`` for the value with a new dimension at ``dim``, made the most major."""
  shifted = [d + 1 for d in layout.major_to_minor]
  return layout.update(major_to_minor=(dim, *shifted))


def is_default(layout, default: tuple) -> bool:
  """Whether ``layout`` (a Layout or None) is the device's default one, ``default`` =
  (dimension order, tiles) (row-major and untiled on the CPU; see
  ``relayout.default_layout``): None, or that order with no tiles asked or those."""
  return layout is None or (isinstance(layout, Layout)
                            and layout.major_to_minor == tuple(default[0])
                            and layout.tiling in (None, (), tuple(default[1])))


def canonical(layout, default: tuple, seen_tiles=()):
  """``layout`` as placement keeps it: None for the device's default layout (``default``
  = its dimension order and tiles), ``Layout.AUTO``, or a Layout of another order.
  Tiles other than the device's own (its default ones, or ``seen_tiles``: those it gave
  a buffer in this order) are refused, since jaxlite reads buffers back by their
  dimension order alone."""
  if isinstance(layout, AutoLayoutSingleton):
    return layout
  if is_default(layout, default):
    return None
  if layout.tiling and layout.tiling not in (tuple(default[1]), *seen_tiles):
    raise NotImplementedError(
        f"jaxlite lays arrays out in any dimension order but keeps the device's own "
        f"tiles; {layout} asks for tiles. Leave tiling=None.")
  if layout.sub_byte_element_size_in_bits:
    raise NotImplementedError(
        f"jaxlite keeps each element's own size; {layout} asks for packed sub-byte "
        f"elements. Leave sub_byte_element_size_in_bits=0.")
  return Layout(layout.major_to_minor)


def layout_mode(layout) -> str | None:
  """The ``mhlo.layout_mode`` attribute that asks XLA for ``layout`` (canonical): None
  for the default layout, ``"auto"``, or XLA's minor-to-major list such as ``"{0,1}"``."""
  if layout is None:
    return None
  if isinstance(layout, AutoLayoutSingleton):
    return "auto"
  return "{" + ",".join(map(str, reversed(layout.major_to_minor))) + "}"
