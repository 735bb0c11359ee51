"""``jax.sharding.PartitionSpec``, in a module of its own so that the layers below
``sharding`` (lax's ``out_sharding`` arguments) can recognise one."""


class _Unconstrained:
  """``PartitionSpec.UNCONSTRAINED``: a dimension whose layout is left to the compiler
  (jaxlite does not split it)."""
  __slots__ = ()

  def __repr__(self):
    return "UNCONSTRAINED"

  def __reduce__(self):
    return "UNCONSTRAINED"


UNCONSTRAINED = _Unconstrained()


class PartitionSpec(tuple):
  """Per array dimension: None (not split), a mesh axis name, a tuple of names, or
  ``PartitionSpec.UNCONSTRAINED``."""
  UNCONSTRAINED = UNCONSTRAINED

  def __new__(cls, *parts):
    return super().__new__(cls, parts)

  def __repr__(self):
    return "P" + tuple.__repr__(self)

  def __reduce__(self):
    return (PartitionSpec, tuple(self))
