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


def _canonical_partition(entry):
  """A list is a tuple; a tuple of one name is the name, an empty one None (as JAX)."""
  if isinstance(entry, (list, tuple)):
    return None if not entry else entry[0] if len(entry) == 1 else tuple(entry)
  return entry


def _axis_set(what, axes):
  if not isinstance(axes, (set, frozenset)):
    # JAX's message says "type" but shows the value; kept word for word
    raise TypeError(f"{what} argument of PartitionSpec should of type `frozenset` or "
                    f"`set`. Got type {axes}")
  return frozenset(axes)


def _names(partitions):
  """The mesh axis names the partitions split over."""
  for entry in partitions:
    if isinstance(entry, tuple):
      yield from entry
    elif entry is not None and entry is not UNCONSTRAINED:
      yield entry


def _set_repr(axes):
  return "{" + ", ".join(map(repr, axes)) + "}"


class P:
  """Tuple describing how to partition an array across a mesh of devices.

  Each entry is ``None`` (the dimension is not split), a mesh axis name, a tuple of names,
  or ``PartitionSpec.UNCONSTRAINED``. ``unreduced`` names mesh axes over which the array
  holds partial sums still to be added, ``reduced`` axes over which it is replicated and
  whose cotangents will be such partial sums.

  Parameters
  ----------
  *partitions : None, str, tuple of str, or UNCONSTRAINED
  unreduced, reduced : set or frozenset of str
  """
  __slots__ = ("_partitions", "unreduced", "reduced")
  UNCONSTRAINED = UNCONSTRAINED

  def __init__(self, *partitions, unreduced=frozenset(), reduced=frozenset()):
    partitions = tuple(map(_canonical_partition, partitions))
    unreduced, reduced = _axis_set("unreduced", unreduced), _axis_set("reduced", reduced)
    for what, axes in (("unreduced", unreduced), ("reduced", reduced)):
      if None in axes:
        raise ValueError(f"{what} cannot contain None. All elements in {what} should "
                         "refer to the mesh axes.")
    if unreduced & reduced:
      raise ValueError("`unreduced` and `reduced` argument to PartitionSpec cannot "
                       f"overlap. Got unreduced: {unreduced} and reduced: {reduced}")
    used = set(_names(partitions))
    for what, axes in (("unreduced", unreduced), ("reduced", reduced)):
      if used & axes:
        raise ValueError(f"partitions cannot overlap with {what} axes passed to "
                         f"PartitionSpec. Got partitions: {partitions} and {what} axes: "
                         f"{axes}")
    for name, value in (("_partitions", partitions), ("unreduced", unreduced),
                        ("reduced", reduced)):
      object.__setattr__(self, name, value)

  @property
  def partitions(self):
    return self._partitions

  def __setattr__(self, name, value):
    raise AttributeError(f"cannot assign to field {name!r}")

  def __delattr__(self, name):
    raise AttributeError(f"cannot delete field {name!r}")

  def __repr__(self):
    parts = list(map(repr, self._partitions))
    parts += [f"{what}={_set_repr(axes)}" for what, axes in
              (("unreduced", self.unreduced), ("reduced", self.reduced)) if axes]
    one = len(parts) == 1 and self._partitions   # P('x',), as a one-element tuple prints
    return f"P({', '.join(parts)}{',' if one else ''})"

  def __eq__(self, other):
    if not isinstance(other, P):
      return False
    return (self._partitions == other._partitions and self.unreduced == other.unreduced
            and self.reduced == other.reduced)

  def __hash__(self):
    return hash((self._partitions, self.unreduced, self.reduced))

  def _refuse_positional(self, how):
    if self.unreduced or self.reduced:
      raise ValueError(f"Using {how} is dangerous when PartitionSpec has non-empty "
                       f"unreduced/reduced set. Please use {how.replace('pspec', 'spec.partitions')}")

  def __getitem__(self, index):
    self._refuse_positional("pspec[...]")
    return self._partitions[index]

  def __iter__(self):
    self._refuse_positional("*pspec")
    return iter(self._partitions)

  def __len__(self):
    return len(self._partitions)

  def count(self, value):
    return self._partitions.count(value)

  def index(self, value):
    return self._partitions.index(value)

  def __add__(self, other):
    if isinstance(other, P):
      return P(*self._partitions, *other._partitions,
               unreduced=self.unreduced | other.unreduced,
               reduced=self.reduced | other.reduced)
    if isinstance(other, tuple):
      if self.unreduced or self.reduced:
        raise TypeError(f"other {other} cannot be of instance `tuple` when self {self} "
                        "has unreduced in `__add__` of PartitionSpec.")
      return P(*self._partitions, *other)
    return NotImplemented

  def __radd__(self, other):
    if isinstance(other, tuple):
      return P(*other, *self._partitions, unreduced=self.unreduced, reduced=self.reduced)
    return NotImplemented

  def update(self, partitions=None, unreduced=None, reduced=None):
    """A copy with the given fields replaced."""
    return P(*(self._partitions if partitions is None else partitions),
             unreduced=self.unreduced if unreduced is None else unreduced,
             reduced=self.reduced if reduced is None else reduced)

  def to_lo(self):
    return [self]

  def to_tangent_spec(self):
    return self

  def to_ct_spec(self):
    """A cotangent's spec: a replicated ``reduced`` value's cotangents are partial sums,
    and an ``unreduced`` value's cotangent is replicated."""
    return P(*self._partitions, unreduced=self.reduced, reduced=self.unreduced)

  def _normalized_spec_for_aval(self, ndim):
    """Padded with None to ``ndim`` entries."""
    return P(*self._partitions, *(None,) * (ndim - len(self._partitions)),
             unreduced=self.unreduced, reduced=self.reduced)

  def __getnewargs_ex__(self):
    return self._partitions, {"unreduced": self.unreduced, "reduced": self.reduced}

  def __reduce__(self):
    return (_rebuild, (self._partitions, self.unreduced, self.reduced))

  def __deepcopy__(self, memo):
    return self


def _rebuild(partitions, unreduced, reduced):
  return P(*partitions, unreduced=unreduced, reduced=reduced)


P.__module__ = "jaxlite"
PartitionSpec = P
