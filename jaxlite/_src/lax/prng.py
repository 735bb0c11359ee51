"""Typed PRNG keys: their extended dtype ``key<fry>``, the arrays that hold them, and the
primitives that make and use them.

``jax.random.key(0)`` is an array of shape ``()`` whose one element is a whole key. Its
dtype, ``key<fry>`` (``KeyTy``), is an extended dtype (core/extended.py) whose rules
(``KeyTyRules``, as JAX's) say that a key is made of ``uint32`` data with a trailing axis
of 2 words; ``PRNGKeyArray`` holds that data as an ordinary Array.

Keys are made and used by seven primitives, named and printed as JAX's:
``random_seed`` (integers to keys), ``random_wrap`` / ``random_unwrap`` (uint32 data to
keys and back), ``random_split``, ``random_fold_in``, ``random_bits`` and
``random_clone``. Each works on arrays of keys of any shape (so ``vmap`` batches them
by leaving the batch axis where it is), and its physical rule is the Threefry-2x32
computation on the data, written here once: ``jax.random`` runs the same functions on
raw ``uint32[2]`` keys, so a typed key and a raw key with the same data draw the same
numbers. The shape primitives accept keys as they accept every extended dtype
(lax/extended.py).
"""
from __future__ import annotations

import math

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.base.config import config
from jaxlite._src.core import array
from jaxlite._src.core import extended
from jaxlite._src.core.array import Array
from jaxlite._src.core.core import Primitive, ShapedArray
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.lax import extended as _extended_rules  # noqa: F401 (keys' shape rules)
from jaxlite._src.lax import shapes as lsh
from jaxlite._src.lax.bits import shift_right_logical
from jaxlite._src.lax.rng import threefry2x32_p
from jaxlite._src.transforms import ad
from jaxlite._src.transforms import batching

_UINT = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
         64: np.dtype(np.uint64)}


# ----------------------------------------------------------------------------- key dtype

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
  if isinstance(impl, KeyTy):   # a key dtype names its implementation (random.key's dtype=)
    return impl._impl
  if impl in _IMPLS:
    return _IMPLS[impl]
  raise ValueError(f"unrecognized PRNG implementation {impl!r}: jaxlite implements only "
                   "'threefry2x32'")


class KeyTyRules:
  """The rules of the key dtypes (JAX's ``KeyTyRules``): a key is its implementation's
  uint32 words, converts to nothing, and has float0 tangents."""
  allow_conversion = False

  @staticmethod
  def physical_element_aval(dtype) -> ShapedArray:
    return ShapedArray(dtype._impl.key_shape, np.dtype(np.uint32))

  @staticmethod
  def full(shape, fill_value, dtype):
    data_shape = tuple(shape) + dtype._impl.key_shape
    fill_dtype = getattr(fill_value, "dtype", None)
    if fill_dtype is not None and dtypes.issubdtype(fill_dtype, dtypes.prng_key):
      # a key: its data in every place
      data = random_unwrap(fill_value)
      n = len(_shape(data))
      data = lsh.broadcast_in_dim(data, data_shape,
                                  range(len(data_shape) - n, len(data_shape)))
    else:
      value = ew.convert_element_type(array.as_operand(fill_value), np.uint32)
      data = lsh.broadcast_in_dim(value, data_shape, ())
    return random_wrap(data, impl=dtype._impl)

  @staticmethod
  def global_sharded_result_handler(aval, out_sharding, committed):
    return lambda data: PRNGKeyArray(aval.dtype._impl, data)

  @staticmethod
  def tangent_dtype(_):
    return dtypes.float0

  @staticmethod
  def zero(_):
    return np.zeros((), dtypes.float0)


class KeyTy(dtypes.ExtendedDType):
  """The dtype of typed keys of one implementation: ``key<fry>`` for threefry2x32."""
  __slots__ = ("_impl",)
  type = dtypes.prng_key
  _rules = KeyTyRules

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


_NO_NUMPY = ("JAX array with PRNGKey dtype cannot be converted to a NumPy array. Use "
             "jax.random.key_data(arr) if you wish to extract the underlying integer array.")

# The methods of numbers, which keys do not have: abstract, with JAX's message, ahead of
# Array so that they take the place of jnp's.
_NumberMethods = extended.abstract_methods((
    "astype", "sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin", "any",
    "all", "cumsum", "cumprod", "clip", "round", "dot", "sort", "argsort", "nonzero",
    "searchsorted", "view", "item"))


class PRNGKeyArray(_NumberMethods, extended.ExtendedArray):
  """An array of typed PRNG keys (``jax.random.key``): shape and dtype ``key<fry>`` of
  its own, over its uint32 data ``_base_array`` (of shape ``shape + (2,)``). Everything
  that would read its value as numbers raises, as JAX's does."""
  __slots__ = ("_impl",)

  def __init__(self, impl: PRNGImpl, key_data):
    super().__init__(key_data)
    self._impl = impl

  @property
  def _base_array(self):
    return self._physical

  @property
  def aval(self) -> ShapedArray:
    data = self._physical.aval   # (split over Explicit axes as its data is, as in JAX)
    return ShapedArray(self.shape, self.dtype, spec=extended.logical_spec(data, self.ndim),
                       mesh=data.mesh)

  @property
  def shape(self):
    return self._physical.shape[:-len(self._impl.key_shape)]

  @property
  def dtype(self):
    return KeyTy(self._impl)

  def _no_numpy(self):
    return TypeError(_NO_NUMPY)

  def __iter__(self):
    if not self.shape:
      raise TypeError("iteration over a 0-d key array")
    return (self[i] for i in range(self.shape[0]))

  def __reduce__(self):
    return PRNGKeyArray, (self._impl, self._physical)

  def __repr__(self):
    return (f"Array({self.shape}, dtype={self.dtype.name}) overlaying:\n"
            f"{np.asarray(self._physical)}")

  __str__ = __repr__


array.PublicArray.register(PRNGKeyArray)
array.operand_rules[PRNGKeyArray] = extended.apply_on_physical


# ----------------------------------------------------------------------------- threefry
# Functions of raw key data (uint32, shape batch + (2,)). For a single key (batch ())
# they bind exactly the operations jax.random has always bound for raw keys.

def _u32(value):
  return Array(np.asarray(value, np.uint32), False)


def _shape(x):
  return core.get_aval(x).shape


def _word(keys, i):
  """Word ``i`` of each key (``keys[..., i]``)."""
  shape = _shape(keys)
  starts = (0,) * (len(shape) - 1) + (i,)
  limits = shape[:-1] + (i + 1,)
  return lsh.squeeze(lsh.slice(keys, starts, limits), (len(shape) - 1,))


def _stack_last(xs):
  """``xs`` (of one shape) stacked along a new last axis."""
  n = len(_shape(xs[0]))
  return lsh.concatenate([lsh.expand_dims(x, (n,)) for x in xs], n)


def _hash_counters(keys, shape):
  """The two Threefry-2x32 output words of every key of ``keys`` (batch + (2,)) for the
  counters 0, 1, ... of ``shape``: two arrays of shape batch + shape."""
  size = math.prod(shape)
  if size >= 2 ** 32:
    raise NotImplementedError("random bits arrays of 2**32 or more elements")
  lo = lsh.reshape(lsh.iota(np.uint32, size), tuple(shape))
  hi = _u32(0)  # a scalar: threefry2x32 broadcasts it
  batch = _shape(keys)[:-1]
  k1, k2 = _word(keys, 0), _word(keys, 1)
  if batch:   # keys and counters meet by size-1 broadcasting
    k1, k2 = (lsh.reshape(k, batch + (1,) * len(shape)) for k in (k1, k2))
    lo = lsh.reshape(lo, (1,) * len(batch) + tuple(shape))
  return threefry2x32_p.bind(k1, k2, hi, lo)


def threefry_seed(seeds):
  """The key data of integer ``seeds`` (any shape): the high and low 32-bit words."""
  lo = ew.convert_element_type(seeds, np.uint32)  # wraps: the low 32 bits
  if core.get_aval(seeds).dtype.itemsize == 8:
    wide = ew.convert_element_type(seeds, np.uint64)
    hi = ew.convert_element_type(shift_right_logical(wide, ew._const(wide, 32)), np.uint32)
  else:
    hi = ew.sub(lo, lo)
  return _stack_last([hi, lo])


def threefry_split(keys, shape):
  """The data of ``shape`` new keys from each key of ``keys``: batch + shape + (2,)."""
  if not config.jax_threefry_partitionable:
    size = math.prod(shape)
    return lsh.reshape(_threefry_counts(keys, 2 * size),
                       _shape(keys)[:-1] + tuple(shape) + (2,))
  return _stack_last(_hash_counters(keys, tuple(shape)))


def _threefry_counts(keys, n):
  """JAX's original scheme (``jax_threefry_partitionable`` off): Threefry-2x32 of the
  counters 0 .. n-1 split in two halves as the two words (a zero appended to an odd
  count), the outputs' halves joined again: batch + (n,) words per key."""
  if n >= 2 ** 32:
    raise NotImplementedError("random bits arrays of 2**32 or more elements")
  half = (n + 1) // 2
  batch = _shape(keys)[:-1]
  k1, k2 = (lsh.reshape(_word(keys, i), batch + (1,)) for i in (0, 1))
  counts = lsh.iota(np.uint32, n)
  if n % 2:   # (the zero is hashed beside the last counter; its own word is dropped)
    counts = lsh.concatenate([counts, _u32([0])], 0)
  x1, x2 = (lsh.reshape(lsh.slice(counts, (i * half,), ((i + 1) * half,)),
                        (1,) * len(batch) + (half,)) for i in (0, 1))
  y1, y2 = threefry2x32_p.bind(k1, k2, x1, x2)
  words = lsh.concatenate([y1, y2], len(batch))
  return lsh.slice(words, (0,) * len(batch) + (0,), batch + (n,)) if n % 2 else words


def threefry_fold_in(keys, msgs):
  """The data of each key of ``keys`` folded with the uint32 ``msgs`` (which broadcast
  against the keys' batch shape, lax-style)."""
  batch, msg_shape = _shape(keys)[:-1], _shape(msgs)
  if not batch and not msg_shape:
    # As JAX: hash the count array seed(msg) == [0, msg] with the unsplit scheme.
    x1, x2 = threefry2x32_p.bind(_word(keys, 0), _word(keys, 1), _u32([0]),
                                 lsh.reshape(msgs, (1,)))
    return lsh.concatenate([x1, x2], 0)
  out = ew.broadcast_shapes("random_fold_in", [batch, msg_shape]) + (1,)
  k1, k2, m = (lsh.broadcast_in_dim(x, out, range(len(_shape(x))) if _shape(x) else ())
               for x in (_word(keys, 0), _word(keys, 1), msgs))
  return lsh.concatenate(list(threefry2x32_p.bind(k1, k2, _u32(0), m)), len(out) - 1)


def threefry_random_bits(keys, bit_width, shape):
  """Random bits of ``shape`` and ``bit_width`` from each key: batch + shape."""
  if not config.jax_threefry_partitionable:
    return _original_random_bits(keys, bit_width, tuple(shape))
  b1, b2 = _hash_counters(keys, tuple(shape))
  if bit_width == 64:
    hi64 = ew.convert_element_type(b1, np.uint64)
    return ew.bitwise_or(ew.mul(hi64, ew._const(hi64, 2 ** 32)),
                         ew.convert_element_type(b2, np.uint64))
  bits = ew.bitwise_xor(b1, b2)
  return bits if bit_width == 32 else ew.convert_element_type(bits, _UINT[bit_width])


def _original_random_bits(keys, bit_width, shape):
  """JAX's original bits (``jax_threefry_partitionable`` off): ``bit_width * size / 32``
  words hashed from the counters in order; a 64-bit value joins a word of the first half
  (high) and one of the second, and 8- or 16-bit values are the words' pieces, lowest
  first."""
  size = math.prod(shape)
  batch = _shape(keys)[:-1]
  count = -(-bit_width * size // 32)
  words = _threefry_counts(keys, count)
  if bit_width == 64:
    half = count // 2
    hi, lo = (ew.convert_element_type(lsh.slice(words, (0,) * len(batch) + (a,),
                                                batch + (b,)), np.uint64)
              for a, b in ((0, half), (half, count)))
    bits = ew.bitwise_or(ew.mul(hi, ew._const(hi, 2 ** 32)), lo)
  elif bit_width in (8, 16):
    per = 32 // bit_width
    shifts = lsh.reshape(ew.mul(lsh.iota(np.uint32, per), _u32(bit_width)),
                         (1,) * (len(batch) + 1) + (per,))
    pieces = ew.bitwise_and(
        shift_right_logical(lsh.reshape(words, batch + (count, 1)), shifts),
        _u32(2 ** bit_width - 1))
    pieces = lsh.reshape(pieces, batch + (count * per,))
    bits = ew.convert_element_type(
        lsh.slice(pieces, (0,) * len(batch) + (0,), batch + (size,)), _UINT[bit_width])
  else:
    bits = words
  return lsh.reshape(bits, batch + shape)


# ----------------------------------------------------------------------------- primitives

def _key_primitive(name, abstract_eval, physical_rule, batching_rule=None):
  """A primitive on keys: eagerly its physical rule on the data (``def_impl``), under
  ``jit`` staged and physicalized; no derivative. Without a ``batching_rule`` it is
  batched as it is: it takes keys of any shape, so the batch axis stays where it is."""
  prim = Primitive(name)
  prim.def_abstract_eval(abstract_eval)
  prim.def_impl(lambda *args, **params: extended.apply_on_physical(prim, args, params))
  extended.physical_rules[prim] = physical_rule
  ad.defzero(prim)
  if batching_rule is None:
    batching.defvectorized(prim)
  else:
    batching.batching_rules[prim] = batching_rule
  return prim


def _check_keys(name, keys):
  if type(keys.dtype) is not KeyTy:
    raise TypeError(f"{name} accepts arrays of PRNG keys only, got {keys.str_short()}")


def _seed_rule(seeds, *, impl):
  if not dtypes.issubdtype(seeds.dtype, np.integer):
    raise TypeError(f"PRNG key seed must be an integer; got {seeds.str_short()}")
  return ShapedArray(seeds.shape, KeyTy(impl))


def _wrap_rule(data, *, impl):
  n = len(impl.key_shape)
  if data.ndim < n:
    raise TypeError("JAX encountered invalid PRNG key data: expected key_data.ndim >= "
                    f"{n}; got ndim={data.ndim}")
  if data.shape[-n:] != impl.key_shape:
    raise TypeError("JAX encountered invalid PRNG key data: expected key_data.shape to end "
                    f"with {impl.key_shape}; got shape={data.shape} for impl={impl!r}")
  if data.dtype != np.uint32:
    raise TypeError("JAX encountered invalid PRNG key data: expected key_data.dtype = "
                    f"uint32; got dtype={data.dtype}")
  return ShapedArray(data.shape[:-n], KeyTy(impl))


def _wrap_batcher(vals, dims, *, impl):
  # the batch axis must stay among the keys' axes, in front of the data's key axes
  (data,), (d,) = vals, dims
  if d >= core.get_aval(data).ndim - len(impl.key_shape):
    data, d = batching.moveaxis(data, d, 0), 0
  return random_wrap_p.bind(data, impl=impl), d


def _unwrap_rule(keys):
  _check_keys("random_unwrap", keys)
  return extended.physical_aval(keys)


def _split_rule(keys, *, shape):
  _check_keys("random_split", keys)
  return ShapedArray(keys.shape + shape, keys.dtype)


def _fold_in_rule(keys, msgs):
  _check_keys("random_fold_in", keys)
  if msgs.dtype != np.uint32:
    raise TypeError(f"random_fold_in takes uint32 messages, got {msgs.str_short()}")
  shape = ew.broadcast_shapes("random_fold_in", [keys.shape, msgs.shape])
  return ShapedArray(shape, keys.dtype)


def _bits_rule(keys, *, bit_width, shape):
  _check_keys("random_bits", keys)
  if bit_width not in _UINT:
    raise TypeError(f"random_bits: bit_width must be 8, 16, 32 or 64, got {bit_width}")
  return ShapedArray(keys.shape + shape, _UINT[bit_width])


def _clone_rule(keys):
  _check_keys("random_clone", keys)
  return keys


random_seed_p = _key_primitive(
    "random_seed", _seed_rule, lambda ctx, seeds, *, impl: threefry_seed(seeds))
random_wrap_p = _key_primitive(
    "random_wrap", _wrap_rule, lambda ctx, data, *, impl: data, _wrap_batcher)
random_unwrap_p = _key_primitive("random_unwrap", _unwrap_rule, lambda ctx, keys: keys)
random_split_p = _key_primitive(
    "random_split", _split_rule, lambda ctx, keys, *, shape: threefry_split(keys, shape))
random_fold_in_p = _key_primitive(
    "random_fold_in", _fold_in_rule, lambda ctx, keys, msgs: threefry_fold_in(keys, msgs),
    # keys and messages broadcast against each other, as elementwise operands do
    lambda vals, dims: batching._broadcasting_rule(random_fold_in_p, vals, dims, {}))
random_bits_p = _key_primitive(
    "random_bits", _bits_rule,
    lambda ctx, keys, *, bit_width, shape: threefry_random_bits(keys, bit_width, shape))
random_clone_p = _key_primitive("random_clone", _clone_rule, lambda ctx, keys: keys)


def random_seed(seeds, impl):
  return random_seed_p.bind(seeds, impl=impl)


def random_wrap(data, impl):
  return random_wrap_p.bind(data, impl=impl)


def random_unwrap(keys):
  return random_unwrap_p.bind(keys)


def random_split(keys, shape):
  return random_split_p.bind(keys, shape=tuple(shape))


def random_fold_in(keys, msgs):
  return random_fold_in_p.bind(keys, msgs)


def random_bits(keys, bit_width, shape):
  return random_bits_p.bind(keys, bit_width=bit_width, shape=tuple(shape))


def random_clone(keys):
  return random_clone_p.bind(keys)
