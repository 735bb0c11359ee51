"""``jax.sharding.PartitionSpec``, in a module of its own so that the layers below
``sharding`` (lax's ``out_sharding`` arguments) can recognise one."""


class PartitionSpec(tuple):
  """Per array dimension: None (not split), a mesh axis name, or a tuple of names."""

  def __new__(cls, *parts):
    return super().__new__(cls, parts)

  def __repr__(self):
    return "P" + tuple.__repr__(self)

  def __reduce__(self):
    return (PartitionSpec, tuple(self))
