"""The operations on mutable array references (``jax.new_ref``, ``jax.ref.get`` /
``set`` / ``swap`` / ``addupdate``, ``jax.freeze``, ``jax.empty_ref``, ``jax.free_ref``).

A read is indexing of the value the ref holds where the program is
(``types.current_value``); a write computes the new whole value with ``.at[idx].set``
and stores it (``types.store``). Under a trace both are ordinary lax operations on
traced values, so they stage, differentiate and batch as any; ``types`` explains how
regions carry the values in and out.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.base import errors
from jaxlite._src.core import core
from jaxlite._src.core.array import Array, as_operand
from jaxlite._src.core.state import types
from jaxlite._src.core.state.types import AbstractRef, Ref
from jaxlite._src.lax.elementwise import _convert_element_type


def _check_ref(ref, what):
  if not isinstance(ref, Ref):
    raise TypeError(f"{what} takes a mutable array reference (jax.Ref, made by "
                    f"jax.new_ref), not a value of type {type(ref).__name__}.")


def _whole(idx):
  return idx is None or idx is Ellipsis or (type(idx) is tuple and not idx)


def _aval_of(value, what):
  if isinstance(value, Ref):
    raise ValueError("Cannot store a Ref into another Ref. Did you forget to load from "
                     "it using `[...]`?")
  try:
    return core.get_aval(value)
  except TypeError:
    raise TypeError(f"{what} takes an array value, not a value of type "
                    f"{type(value).__name__}.") from None


def _traced_as_ref_type(ref, value):
  # as in JAX, a traced program's ref holds values of the ref's type, weak type included
  # (a staged region gives back values of that type); eagerly it holds what was written
  inner = ref._aval.inner_aval
  if not isinstance(value, core.Tracer) or value.aval.weak_type == inner.weak_type:
    return value
  return _convert_element_type(value, inner.dtype, weak_type=inner.weak_type)


def _implicit_cast(dtype, value):
  # JAX's _maybe_implicit_cast, its operator precedence included: a weakly typed float
  # takes a float ref's dtype, any integer an integer ref's
  aval = core.get_aval(value)
  if not isinstance(dtype, np.dtype) or not isinstance(aval.dtype, np.dtype):
    return value   # (typed PRNG keys: no implicit cast)
  kind, value_kind = dtype.kind, aval.dtype.kind
  if (aval.weak_type and kind == "f" and value_kind == "f"
      or kind in "iu" and value_kind in "iu"):
    return _convert_element_type(value, dtype)
  return value


def _checked(ref, idx, value, expected, what):
  """``value`` as written at ``idx``, whose current value has the abstract value
  ``expected``: its shape must be that shape and its dtype the ref's (JAX's rules)."""
  aval = _aval_of(value, what)
  if expected.shape != aval.shape:
    raise ValueError(f"Invalid shape for `{what}`. Ref shape: {ref.shape}. Expected "
                     f"shape: {expected.shape}. Value shape: {aval.shape}. Indexer: "
                     f"{'...' if _whole(idx) else repr(idx)}. ")
  if expected.dtype != aval.dtype:
    if what == "swap":
      raise ValueError(f"Invalid dtype for `swap`. Ref dtype: {expected.dtype}. Value "
                       f"dtype: {aval.dtype}. ")
    raise ValueError(f"Invalid dtype for `addupdate`. Ref dtype: {ref.dtype}. Value "
                     f"shape: {aval.dtype}. ")
  return as_operand(value)


def _check_bounds(ref, idx):
  # as JAX's indexer: a static integer index out of bounds is an error, not clamped
  # (NumPy's sequence protocol, np.asarray(ref), relies on the error to stop)
  dims = iter(ref.shape)
  for i in idx if type(idx) is tuple else (idx,):
    if getattr(i, "dtype", None) == np.bool_ and getattr(i, "ndim", 0):
      # a ref's indexer takes integers and slices only: JAX's error, concrete mask or not
      raise errors.NonConcreteBooleanIndexError(_MaskType(core.get_aval(i)))
    if i is None or i is Ellipsis:
      return
    dim = next(dims, None)
    if isinstance(i, (int, np.integer)) and not isinstance(i, bool) and dim is not None \
        and not -dim <= i < dim:
      raise ValueError(f"Out of bound indexer: idx={i}, dim={dim}.")


class _MaskType:
  """What NonConcreteBooleanIndexError shows of a mask (its ``aval``)."""
  def __init__(self, aval):
    self.aval = aval


def _read(ref, idx):
  value = types.current_value(ref)
  if _whole(idx):
    return value
  _check_bounds(ref, idx)
  return value[idx]


def get(ref, idx=None):
  """Read ``ref[idx]`` (``jax.ref.get``).

  Parameters
  ----------
  ref : Ref
    The reference.
  idx : index, optional
    A NumPy-style index; None or ``...`` reads the whole value.

  Returns
  -------
  Array
    The indexed elements (a new Array, not a reference).
  """
  _check_ref(ref, "jax.ref.get")
  return _read(ref, idx)


def swap(ref, idx, value, _function_name="ref_swap"):
  """Write ``value`` into ``ref[idx]`` and return what was there (``jax.ref.swap``).

  Parameters
  ----------
  ref : Ref
    The reference; it holds the new value afterwards.
  idx : index or None
    A NumPy-style index; None or ``...`` writes the whole value.
  value : array_like
    The values to write: of the indexed shape and the ref's dtype (a weakly typed value
    of the same kind is cast).

  Returns
  -------
  Array
    The previous value at ``idx``.
  """
  _check_ref(ref, "jax.ref.swap")
  if not isinstance(value, Ref):
    value = _implicit_cast(ref.dtype, as_operand(value))
  whole = types.current_value(ref)
  old = _read(ref, idx)
  value = _checked(ref, idx, value, core.get_aval(old), "swap")
  new = value if _whole(idx) else whole.at[idx].set(value)
  types.store(ref, _traced_as_ref_type(ref, new))
  return old


def set(ref, idx, value):  # noqa: A001  (JAX's name)
  """Write ``value`` into ``ref[idx]`` (``jax.ref.set``, ``ref[idx] = value``).

  Parameters
  ----------
  ref : Ref
    The reference; it holds the new value afterwards.
  idx : index or None
    A NumPy-style index; None or ``...`` writes the whole value.
  value : array_like
    The values to write: of the indexed shape and the ref's dtype.
  """
  swap(ref, idx, value, _function_name="ref_set")


def addupdate(ref, idx, x):
  """Add ``x`` to ``ref[idx]`` in place (``jax.ref.addupdate``, ``ref[idx] += x``).

  Parameters
  ----------
  ref : Ref
    The reference; it holds the sum afterwards.
  idx : index or None
    A NumPy-style index; None or ``...`` adds to the whole value.
  x : array_like
    The values to add: of the indexed shape and the ref's dtype.
  """
  _check_ref(ref, "jax.ref.addupdate")
  whole = types.current_value(ref)
  x = _checked(ref, idx, x, core.get_aval(_read(ref, idx)),
               "addupdate")
  new = whole + x if _whole(idx) else whole.at[idx].add(x)
  types.store(ref, _traced_as_ref_type(ref, new))


def _check_memory_space(memory_space):
  if memory_space is None:
    return
  if core._context.trace is core.eval_trace and not types.in_scope():
    raise NotImplementedError("array ref with memory space only works inside of a `jit`.")
  # JAX places such refs in a kernel's memory (Pallas), which jaxlite has no kernels for
  raise NotImplementedError(f"jaxlite does not support refs in a memory space "
                            f"({memory_space!r}); make the ref with memory_space=None.")


def new_ref(init_val, *, memory_space=None, kind=None):
  """A mutable array reference holding ``init_val`` (``jax.new_ref``).

  Parameters
  ----------
  init_val : array_like
    The initial value (an Array, a NumPy array or a Python scalar).
  memory_space : optional
    A memory space; only JAX's Pallas kernels use one, so it must be None here.
  kind : optional
    How the ref behaves under rematerialization; kept on its type.

  Returns
  -------
  Ref
    A new reference; writes to it do not change ``init_val``.
  """
  if isinstance(init_val, Ref):
    raise TypeError("jax.new_ref takes an array value, not a Ref: read it first "
                    "(jax.new_ref(ref[...])).")
  _check_memory_space(memory_space)
  try:
    value = as_operand(init_val)
  except TypeError:
    raise TypeError(f"Error interpreting argument to new_ref as a JAX value. The "
                    f"problematic value is of type {type(init_val)} and was passed to "
                    "new_ref at position 0.\n") from None
  return types.create(AbstractRef(core.get_aval(value), kind=kind), value)


def empty_ref(ty, memory_space=None):
  """An uninitialized mutable array reference of type ``ty`` (``jax.empty_ref``).

  Parameters
  ----------
  ty : ShapedArray or ShapeDtypeStruct
    The type of the value it will hold.
  memory_space : optional
    Must be None (see ``new_ref``).

  Returns
  -------
  Ref
    A reference holding zeros until it is written (JAX leaves the contents undefined).
  """
  _check_memory_space(memory_space)
  aval = core.ShapedArray(ty.shape, ty.dtype, getattr(ty, "weak_type", False))
  if core._context.trace is core.eval_trace and not types.in_scope():
    # JAX has no eager rule for empty_ref: it exists only in traced programs
    raise NotImplementedError("Evaluation rule for 'empty_ref' not implemented")
  zeros = Array(np.zeros(aval.shape, aval.dtype), aval.weak_type)
  return types.create(AbstractRef(aval), zeros)


def free_ref(ref):
  """Invalidate ``ref`` (``jax.free_ref``); returns ``()``."""
  _check_ref(ref, "jax.free_ref")
  return ()


def freeze(ref):
  """The value ``ref`` holds, as an Array (``jax.freeze``).

  Parameters
  ----------
  ref : Ref
    The reference.

  Returns
  -------
  Array
    Its contents.
  """
  _check_ref(ref, "jax.freeze")
  return types.current_value(ref)


def _repr(ref):
  value = types.current_value(ref) if types.in_scope() else ref._value
  text = repr(value)
  # the Array's repr with the class name changed, as JAX's (typed keys' too)
  return "Ref" + text[5:] if isinstance(value, Array) and text.startswith("Array") \
      else f"Ref({text})"


types.ref_ops.update(get=get, swap=swap, addupdate=addupdate, repr=_repr)
