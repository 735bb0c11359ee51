"""Arrays of extended dtypes: dtypes that carry their own rules, as JAX defines them.

An *extended dtype* (``dtypes.ExtendedDType``) is a dtype object with a ``_rules``
class, JAX's protocol: ``physical_element_aval(dtype)`` says what one element is made of
(a typed PRNG key ``key<fry>``: ``uint32[2]``; flax's ``fp8_meta32``: ``float32[]``),
``convert_from`` / ``convert_to`` (or ``allow_conversion``) which conversions to and from
the representation dtype are allowed, ``full``, ``zero``, ``add`` and ``tangent_dtype``
how arrays are filled and how autodiff makes and sums their tangents, and
``global_sharded_result_handler`` the array type a computed value of the dtype becomes.
Jaxprs carry such dtypes in their avals and print them, and the shape primitives accept
them. What an array of the dtype is made of, its *physical* value, is an ordinary Array
of shape ``shape + physical_element_aval.shape``; ``ExtendedArray`` holds it, and nothing
below ever computes on an extended array any other way.

A primitive applied to extended arrays therefore has a *physical rule*: the same
operation on the physical data (a slice of keys is a slice of the data, with the
trailing element axes kept whole). ``physical_rules`` holds them, keyed by primitive; the
layer above (``lax``) fills it. Two users apply them: ``apply_on_physical`` when a
primitive runs eagerly on extended arrays, and the jaxpr pass ``passes.physicalize``
before a jaxpr with extended avals reaches a backend, so backends only ever see
physical arrays. Typed PRNG keys (``lax/prng.py``) are one such dtype.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.core import array
from jaxlite._src.base import tree
from jaxlite._src.core.array import Array
from jaxlite._src.core.core import ShapedArray

is_extended = dtypes.is_extended


def physical_element_aval(dtype) -> ShapedArray:
  """What one element of extended ``dtype`` is made of (its rules' answer, as an aval)."""
  duck = dtype._rules.physical_element_aval(dtype)
  return ShapedArray(tuple(duck.shape), dtypes.aval_dtype(duck.dtype))


def physical_aval(aval: ShapedArray) -> ShapedArray:
  """The aval of ``aval``'s physical data: the element shape appended, the dtype the
  representation dtype (other avals unchanged)."""
  if not is_extended(aval.dtype):
    return aval
  element = physical_element_aval(aval.dtype)
  return ShapedArray(aval.shape + element.shape, element.dtype)


def element_shape(aval: ShapedArray) -> tuple:
  """The trailing axes an element of ``aval`` adds to its data (none unless extended)."""
  return physical_element_aval(aval.dtype).shape if is_extended(aval.dtype) else ()


def _abstract_method(name):
  def method(self, *args, **kwargs):
    raise NotImplementedError(f"Cannot call abstract method {name}")
  method.__name__ = name
  return method


def abstract_methods(names, properties=()):
  """A base class (put ahead of Array) whose methods ``names`` and properties
  ``properties`` raise JAX's NotImplementedError for arrays without numbers."""
  attrs = {name: _abstract_method(name) for name in names}
  attrs.update({name: property(_abstract_method(name)) for name in properties})
  return type("_AbstractMethods", (), {"__slots__": (), **attrs})


class ExtendedArray(Array):
  """An array of an extended dtype over its physical data ``_physical`` (an Array of
  shape ``shape + element shape``). It is an ``Array`` to the code that accepts arrays
  (``jnp`` and ``lax`` take it and bind primitives on it, which then run on the data by
  their physical rules), and not one to the hot paths, which test ``type(x) is Array``."""
  __slots__ = ("_physical",)

  def __init__(self, data):
    self._physical = data
    self._born = array.birth()
    # the storage of an Array stays empty: the data is _physical's
    self._host = None
    self._buf = None
    self._placed = None
    self.weak_type = False

  @property
  def aval(self) -> ShapedArray:   # (each kind of extended array says its type)
    raise NotImplementedError(f"{type(self).__name__} must define its aval")

  @property
  def shape(self):
    return self.aval.shape

  @property
  def dtype(self):
    return self.aval.dtype

  def _no_numpy(self):
    return TypeError(f"an array of extended dtype {self.dtype} has no NumPy value")

  @property
  def _value(self):
    raise self._no_numpy()

  def __array__(self, dtype=None, copy=None):
    raise self._no_numpy()

  __hash__ = None   # unhashable as JAX's: not even collections.abc.Hashable

  # where the data lives is where the array lives
  def block_until_ready(self):
    self._physical.block_until_ready()
    return self

  def delete(self, _donated=False):
    self._physical.delete(_donated)

  def is_deleted(self) -> bool:
    return self._physical.is_deleted()

  def is_ready(self):
    return self._physical.is_ready()

  device = property(lambda self: self._physical.device)
  sharding = property(lambda self: self._physical.sharding)
  committed = property(lambda self: self._physical.committed)
  is_fully_replicated = property(lambda self: self._physical.is_fully_replicated)

  def devices(self):
    return self._physical.devices()

  def __format__(self, spec):
    return format(repr(self), spec)


# JAX's EArray has every method, operator and property of jax.Array abstract but these
_EARRAY_ABSTRACT = (
    "__getitem__", "__setitem__", "__copy__", "__contains__", "__deepcopy__", "__neg__",
    "__pos__", "__abs__", "__invert__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__",
    "__ge__", "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
    "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__divmod__",
    "__rdivmod__", "__mod__", "__rmod__", "__pow__", "__rpow__", "__matmul__",
    "__rmatmul__", "__and__", "__rand__", "__or__", "__ror__", "__xor__", "__rxor__",
    "__lshift__", "__rshift__", "__rlshift__", "__rrshift__", "__round__",
    "__array_namespace__", "all", "any", "argmax", "argmin", "argpartition", "argsort",
    "astype", "byteswap", "choose", "clip", "compress", "conj", "conjugate", "cumprod",
    "cumsum", "diagonal", "dot", "flatten", "item", "max", "mean", "min", "nonzero",
    "prod", "ptp", "ravel", "repeat", "reshape", "round", "searchsorted", "sort",
    "squeeze", "std", "sum", "swapaxes", "take", "to_device", "trace", "transpose", "var",
    "view")
_EARRAY_ABSTRACT_PROPERTIES = ("flat", "T", "mT", "real", "imag", "nbytes", "at")


class EArray(abstract_methods(_EARRAY_ABSTRACT, _EARRAY_ABSTRACT_PROPERTIES),
             ExtendedArray):
  """An array of an extended dtype whose rules name no array type of their own
  (``jax._src.earray.EArray``): its aval and its data ``_data``; printed as JAX prints
  it, ``E`` and the data's repr. Only the shape primitives (``lax``) take it."""
  __slots__ = ("_aval",)

  def __init__(self, aval, data):
    super().__init__(data)
    self._aval = aval

  @property
  def aval(self):
    return self._aval

  @property
  def _data(self):
    return self._physical

  @property
  def itemsize(self):
    return self._aval.dtype.itemsize

  def __len__(self):
    if not self.shape:
      raise TypeError("len() of unsized object")
    return self.shape[0]

  def __iter__(self):
    if not self.shape:
      raise TypeError("iteration over a 0-d array")
    raise NotImplementedError

  def __array__(self, dtype=None, copy=None):
    raise NotImplementedError

  def copy(self):
    return EArray(self._aval, self._physical.copy())

  @property
  def tolist(self):   # (not a method of JAX's EArray: no numbers to list)
    raise AttributeError("'EArray' object has no attribute 'tolist'")

  def __reduce__(self):
    return EArray, (self._aval, self._physical)

  def __repr__(self):
    return "E" + repr(self._physical)

  __str__ = __repr__


array.PublicArray.register(EArray)


def wrap(aval: ShapedArray, data):
  """The array of extended ``aval`` over physical ``data``: the array type its rules'
  ``global_sharded_result_handler`` makes (JAX's protocol), an ``EArray`` without one."""
  handler = getattr(aval.dtype._rules, "global_sharded_result_handler", None)
  if handler is None:
    return EArray(aval, data)
  return handler(aval, data.sharding, data.committed)(data)


def physical(x):
  """The physical data of an extended array; any other value as it is."""
  return x._physical if isinstance(x, ExtendedArray) else x


# -- physical rules

class PhysicalContext:
  """What a physical rule knows besides the operands' data: the primitive's logical
  avals in and out (as JAX's lowering rules get ``ctx.avals_in`` / ``ctx.avals_out``)."""
  __slots__ = ("avals_in", "avals_out")

  def __init__(self, avals_in, avals_out):
    self.avals_in, self.avals_out = avals_in, avals_out


# primitive -> rule(ctx, *operands, **params) -> output (a list for multiple results),
# where each extended operand and output is its physical data, each other value itself;
# written with lax operations, so it runs eagerly and traces alike
physical_rules: dict = {}


def physical_rule(prim, avals=()):
  """``prim``'s physical rule; TypeError, naming the extended dtype among ``avals``,
  where it has none."""
  rule = physical_rules.get(prim)
  if rule is None:
    dtype = next((a.dtype for a in avals if is_extended(a.dtype)), None)
    if dtype is not None and dtypes.issubdtype(dtype, dtypes.prng_key):
      raise TypeError(f"{prim.name} does not accept arrays of PRNG keys (dtype "
                      f"{dtype}); use jax.random.key_data to work on their uint32 data.")
    raise TypeError(f"{prim.name} does not accept arrays of the extended dtype {dtype}; "
                    "convert them to their representation dtype first "
                    "(jax.lax.convert_element_type).")
  return rule


def apply_on_physical(prim, args, params):
  """Run ``prim`` eagerly on operands among which are extended arrays: its physical rule
  on their data, its extended outputs wrapped again. The shape rule runs first, so an
  operation the dtype does not support (``key + 1``) raises the error JAX raises."""
  avals_in = [core.get_aval(x) for x in args]
  avals_out = core.abstract_eval(prim, avals_in, params)
  rule = physical_rule(prim, avals_in)
  outs = rule(PhysicalContext(avals_in, avals_out), *map(physical, args), **params)
  outs = wrap_outputs(outs if prim.multiple_results else [outs], avals_out)
  return outs if prim.multiple_results else outs[0]


def wrap_outputs(outs, avals):
  """``outs`` with each value whose aval is extended wrapped as an array of it."""
  return [wrap(a, array.as_operand(x)) if is_extended(a.dtype) else x
          for x, a in zip(outs, avals)]


array.operand_rules[EArray] = apply_on_physical


# -- compiled calls: extended arrays go in and come out as their data

class _PhysicalData:
  """An extended output of a compiled call in its output tree: a node over the one leaf
  that is its data, which unflattening wraps as an array of ``aval``."""
  __slots__ = ("aval",)

  def __init__(self, aval):
    self.aval = aval


tree.register_pytree_node(_PhysicalData, lambda k: ((0,), k.aval),
                          lambda aval, data: wrap(aval, data[0]))


def data_node(aval):
  """The node over a compiled call's output of type ``aval`` in the tree its flat outputs
  fill: an extended array's (an executable returns its data, which the node wraps), else
  None."""
  return _PhysicalData(aval) if is_extended(aval.dtype) else None
