"""Typed PRNG key arrays: the ``key<fry>`` dtype and the arrays that hold it.

``jax.random.key(0)`` is an array of shape ``()`` whose one element is a whole key.
Its dtype, ``key<fry>``, is an *extended* dtype (``KeyTy``): jaxprs carry it in their
avals and print it, and the shape primitives (slicing, reshape, concatenate, select,
gather, ...) accept it, as JAX's do. What a key is made of, its *physical* value, is
``uint32`` data with a trailing axis of 2 words: ``PRNGKeyArray`` holds that data as an
ordinary Array, and nothing below ever computes on a key any other way.

A primitive applied to keys therefore has a *physical rule*: the same operation on the
uint32 data (a slice of keys is a slice of the data, with the trailing axis kept whole;
``random_split`` is the Threefry hash of the data). ``physical_rules`` holds them, keyed
by primitive; the layer above (``lax.prng``) fills it. Two users apply them:
``apply_on_key_data`` when a primitive runs eagerly on key arrays, and the jaxpr pass
``passes.physicalize`` before a jaxpr with key avals reaches a backend, so backends only
ever see uint32 arrays.
"""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.core import array
from jaxlite._src.base import tree
from jaxlite._src.core.array import Array
from jaxlite._src.core.core import ShapedArray


class PRNGImpl:
  """A PRNG implementation: its name, the short tag its key dtype prints
  (``key<fry>``) and the shape of one key's uint32 data."""
  __slots__ = ("name", "tag", "key_shape")

  def __init__(self, name: str, tag: str, key_shape: tuple):
    self.name, self.tag, self.key_shape = name, tag, key_shape

  def __str__(self):   # jaxprs print ``random_seed[impl=fry]``
    return self.tag

  def __repr__(self):
    return f"PRNGImpl({self.name})"

  def __reduce__(self):   # one object per implementation, also after unpickling
    return _impl_by_name, (self.name,)


threefry_prng_impl = PRNGImpl("threefry2x32", "fry", (2,))
_IMPLS = {threefry_prng_impl.name: threefry_prng_impl}


def _impl_by_name(name):
  return _IMPLS[name]


def resolve_impl(impl) -> PRNGImpl:
  """The implementation ``impl`` names (None: the default, threefry2x32)."""
  if impl is None or isinstance(impl, PRNGImpl):
    return impl or threefry_prng_impl
  if impl in _IMPLS:
    return _IMPLS[impl]
  raise ValueError(f"unrecognized PRNG implementation {impl!r}: jaxlite implements only "
                   "'threefry2x32'")


class KeyTy(dtypes.ExtendedDType):
  """The dtype of typed keys of one implementation: ``key<fry>`` for threefry2x32."""
  __slots__ = ("_impl",)
  type = dtypes.prng_key

  def __init__(self, impl: PRNGImpl):
    self._impl = impl

  @property
  def name(self) -> str:
    return f"key<{self._impl.tag}>"

  @property
  def itemsize(self) -> int:
    return 4 * math.prod(self._impl.key_shape)

  def __str__(self):
    return self.name

  __repr__ = __str__

  def __eq__(self, other):
    return type(other) is KeyTy and other._impl is self._impl

  def __hash__(self):
    return hash((KeyTy, self._impl.name))

  def __reduce__(self):
    return KeyTy, (self._impl,)


def physical_aval(aval: ShapedArray) -> ShapedArray:
  """The aval of ``aval``'s uint32 data: the key shape appended (others unchanged)."""
  dtype = aval.dtype
  if type(dtype) is not KeyTy:
    return aval
  return ShapedArray(aval.shape + dtype._impl.key_shape, np.uint32)


_NO_NUMPY = ("JAX array with PRNGKey dtype cannot be converted to a NumPy array. Use "
             "jax.random.key_data(arr) if you wish to extract the underlying integer array.")


def _abstract_method(name):
  def method(self, *args, **kwargs):
    raise NotImplementedError(f"Cannot call abstract method {name}")
  method.__name__ = name
  return method


# The methods of numbers, which keys do not have: abstract, with JAX's message. A base
# class ahead of Array, so they take the place of jnp's.
_NumberMethods = type("_NumberMethods", (), {"__slots__": (), **{
    name: _abstract_method(name)
    for name in ("astype", "sum", "prod", "max", "min", "mean", "var", "std", "argmax",
                 "argmin", "any", "all", "cumsum", "cumprod", "clip", "round", "dot",
                 "sort", "argsort", "nonzero", "searchsorted", "view", "item")}})


class PRNGKeyArray(_NumberMethods, Array):
  """An array of typed PRNG keys (``jax.random.key``): shape and dtype ``key<fry>`` of
  its own, over its uint32 data ``_base_array`` (of shape ``shape + (2,)``).

  It is an ``Array`` to the code that accepts arrays (``jnp`` takes it like any array
  and binds primitives on it, which then run on the data by their physical rules), and
  not one to the hot paths, which test ``type(x) is Array``. Everything that would read
  its value as numbers raises, as JAX's does.
  """
  __slots__ = ("_impl", "_base_array")

  def __init__(self, impl: PRNGImpl, key_data):
    self._impl = impl
    self._base_array = key_data
    # the storage of an Array stays empty: the data is _base_array's
    self._host = None
    self._buf = None
    self._placed = None
    self.weak_type = False

  @property
  def aval(self) -> ShapedArray:
    return ShapedArray(self.shape, self.dtype)

  @property
  def shape(self):
    return self._base_array.shape[:-len(self._impl.key_shape)]

  @property
  def dtype(self):
    return KeyTy(self._impl)

  @property
  def _value(self):
    raise TypeError(_NO_NUMPY)

  def __array__(self, dtype=None, copy=None):
    raise TypeError(_NO_NUMPY)

  def __iter__(self):
    if not self.shape:
      raise TypeError("iteration over a 0-d key array")
    return (self[i] for i in range(self.shape[0]))

  __hash__ = None   # unhashable as JAX's key arrays: not even collections.abc.Hashable

  def __reduce__(self):
    return PRNGKeyArray, (self._impl, self._base_array)

  # where the data lives is where the keys live
  def block_until_ready(self):
    self._base_array.block_until_ready()
    return self

  def delete(self, _donated=False):
    self._base_array.delete(_donated)

  def is_deleted(self) -> bool:
    return self._base_array.is_deleted()

  def is_ready(self):
    return self._base_array.is_ready()

  device = property(lambda self: self._base_array.device)
  sharding = property(lambda self: self._base_array.sharding)
  committed = property(lambda self: self._base_array.committed)
  is_fully_replicated = property(lambda self: self._base_array.is_fully_replicated)

  def devices(self):
    return self._base_array.devices()

  def __repr__(self):
    return (f"Array({self.shape}, dtype={self.dtype.name}) overlaying:\n"
            f"{np.asarray(self._base_array)}")

  __str__ = __repr__

  def __format__(self, spec):
    return format(repr(self), spec)


array.PublicArray.register(PRNGKeyArray)


# -- physical rules

class PhysicalContext:
  """What a physical rule knows besides the operands' data: the primitive's logical
  avals in and out (as JAX's lowering rules get ``ctx.avals_in`` / ``ctx.avals_out``)."""
  __slots__ = ("avals_in", "avals_out")

  def __init__(self, avals_in, avals_out):
    self.avals_in, self.avals_out = avals_in, avals_out


# primitive -> rule(ctx, *operands, **params) -> output (a list for multiple results),
# where each key operand and key output is its uint32 data, each other value itself;
# written with lax operations, so it runs eagerly and traces alike
physical_rules: dict = {}


def physical_rule(prim):
  rule = physical_rules.get(prim)
  if rule is None:
    raise TypeError(f"{prim.name} does not accept arrays of PRNG keys (dtype key<...>); "
                    "use jax.random.key_data to work on their uint32 data.")
  return rule


def apply_on_key_data(prim, args, params):
  """Run ``prim`` eagerly on operands among which are key arrays: its physical rule on
  their data, its key outputs wrapped again. The shape rule runs first, so an operation
  keys do not support (``key + 1``) raises the error JAX raises."""
  avals_in = [core.get_aval(x) for x in args]
  avals_out = core.abstract_eval(prim, avals_in, params)
  rule = physical_rule(prim)
  data = [x._base_array if type(x) is PRNGKeyArray else x for x in args]
  outs = rule(PhysicalContext(avals_in, avals_out), *data, **params)
  outs = wrap_key_outputs(outs if prim.multiple_results else [outs], avals_out)
  return outs if prim.multiple_results else outs[0]


def wrap_key_outputs(outs, avals):
  """``outs`` with each value whose aval is a key aval wrapped as a key array."""
  return [PRNGKeyArray(a.dtype._impl, array.as_operand(x)) if type(a.dtype) is KeyTy
          else x for x, a in zip(outs, avals)]


array.operand_rules[PRNGKeyArray] = apply_on_key_data


# -- compiled calls: keys go in and come out as their data

class _KeyData:
  """A key output of a compiled call in its output tree: a node over the one leaf that
  is the key's data, which unflattening wraps as a key array of ``impl``."""
  __slots__ = ("impl",)

  def __init__(self, impl):
    self.impl = impl


tree.register_pytree_node(_KeyData, lambda k: ((0,), k.impl),
                          lambda impl, data: PRNGKeyArray(impl, data[0]))


def data_node(aval):
  """The node over a compiled call's output of type ``aval`` in the tree its flat outputs
  fill: a key's (an executable returns its data, which the node wraps), else None."""
  return _KeyData(aval.dtype._impl) if type(aval.dtype) is KeyTy else None
