"""Mutable array references (``jax.new_ref``, ``jax.Ref``, ``jax.ref``), which jaxlite does
not implement.

In JAX a ``Ref`` is a mutable buffer: ``ref[...] = x`` writes it, inside ``jit`` too, where
its type is an ``AbstractRef`` and a discharge pass turns the writes into values threaded
through the program. jaxlite's arrays are immutable and its ``jit`` has no such pass, so it
makes no refs. The names exist because libraries import them and ask
``isinstance(x, Ref)`` or ``isinstance(jax.typeof(x), AbstractRef)``: those answer False
for every jaxlite value, which is true. Making or using a ref raises NotImplementedError.
"""
from __future__ import annotations

from jaxlite._src.core import core

UNSUPPORTED = (
    "jaxlite does not support mutable array references ({what}): its arrays are immutable "
    "and its jit has no pass that turns writes into values. Pass the value in and return "
    "the updated value instead (x = x.at[i].set(v)), or run the program with the real jax. "
    "(flax.nnx makes refs only for Variables made with ref=True, the default when the "
    "flax_array_ref flag is on; leave both off.)")


def _unsupported(what):
  return NotImplementedError(UNSUPPORTED.format(what=what))


class AbstractRef(core.AbstractValue):
  """The type of a mutable array reference (``jax._src.state.types.AbstractRef``). No
  jaxlite value has it: constructing one raises NotImplementedError."""
  __slots__ = ("inner_aval", "memory_space", "kind")

  def __init__(self, inner_aval, memory_space=None, kind=None):
    raise _unsupported("jax._src.state.types.AbstractRef")


class Ref:
  """A mutable array reference (``jax.Ref``). jaxlite makes none, so no value is an
  instance; constructing one raises NotImplementedError."""

  def __init__(self, aval, refs):
    raise _unsupported("jax.Ref")


def new_ref(init_val, *, memory_space=None, kind=None):
  """A mutable array reference holding ``init_val`` (``jax.new_ref``): not supported.

  Raises
  ------
  NotImplementedError
    Always; return updated values from functions instead of writing to a reference.
  """
  raise _unsupported("jax.new_ref")


def empty_ref(ty, memory_space=None):
  """An uninitialized mutable array reference (``jax.empty_ref``): not supported."""
  raise _unsupported("jax.empty_ref")


def free_ref(ref):
  """Release a mutable array reference (``jax.free_ref``): not supported."""
  raise _unsupported("jax.free_ref")


def freeze(ref):
  """A reference's final value (``jax.freeze``): not supported."""
  raise _unsupported("jax.freeze")


def get(ref, idx=None):
  """Read a reference (``jax.ref.get``): not supported."""
  raise _unsupported("jax.ref.get")


def set(ref, idx, value):  # noqa: A001  (JAX's name)
  """Write a reference (``jax.ref.set``): not supported."""
  raise _unsupported("jax.ref.set")


def swap(ref, idx, value):
  """Write a reference, returning the old value (``jax.ref.swap``): not supported."""
  raise _unsupported("jax.ref.swap")


def addupdate(ref, idx, x):
  """Add to a reference in place (``jax.ref.addupdate``): not supported."""
  raise _unsupported("jax.ref.addupdate")

