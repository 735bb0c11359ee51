"""Array creation: array, asarray, zeros, ones, full, the *_like family, arange, linspace, eye;
and arrays from bytes, text or a function of the indices (``frombuffer``, ``fromfunction``)."""
from __future__ import annotations

import math
import operator
import warnings

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.core import extended
from jaxlite._src.core.array import Array
from jaxlite._src.core.core import Tracer
from jaxlite._src.core.literals import TypedNdArray
from jaxlite._src.core.state.types import Ref
from jaxlite._src.lax import elementwise as lax_ew
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.lax.sharding_constraint import (accepts_out_sharding, like_sharding,
                                                  constrain)
from jaxlite._src.libraries.numpy import lax_numpy
from jaxlite._src.libraries.numpy import ufuncs
from jaxlite._src.libraries.numpy.util import (accepts_device, as_operand, check_arraylike,
                                                place_on)


def _requested_dtype(dtype, fun_name):
  if dtype is None:
    return None
  dtypes.check_user_dtype_supported(dtype, fun_name)
  return dtypes.canonicalize_dtype(dtype, allow_extended_dtype=True)


def _contains_tracer(obj):
  """Whether ``obj`` (a sequence) holds values NumPy cannot hold: tracers, or arrays of
  extended dtypes (typed PRNG keys); ``array`` then stacks them with lax operations."""
  if isinstance(obj, (Tracer, extended.ExtendedArray)):
    return True
  return isinstance(obj, (list, tuple)) and any(_contains_tracer(o) for o in obj)


def _contains_extended(obj):
  if isinstance(obj, extended.ExtendedArray) or isinstance(
      getattr(obj, "dtype", None), dtypes.ExtendedDType):
    return True
  return isinstance(obj, (list, tuple)) and any(_contains_extended(o) for o in obj)


def _sequence_leaves(obj) -> list:
  if isinstance(obj, (list, tuple)):
    return [leaf for o in obj for leaf in _sequence_leaves(o)]
  return [obj]


def _stacked_at(items, dtype):
  """A sequence holding tracers as one array, as JAX's ``jnp.array`` makes it: each item
  at ``dtype`` first, given a leading axis, then concatenated (16 at a time, as JAX keeps
  wide concatenations shallow)."""
  rows = [lax_shapes.expand_dims(array(item, dtype, copy=False), (0,)) for item in items]
  while len(rows) > 16:
    rows = [lax_shapes.concatenate(rows[i:i + 16], 0) for i in range(0, len(rows), 16)]
  return lax_shapes.concatenate(rows, 0)


def _arrays_as_numpy(obj):
  """``obj`` with the Arrays nested in its lists and tuples as NumPy arrays: NumPy converts
  those itself, while ml_dtypes' types (``np.asarray([a, b], dtype=bfloat16)``) only
  take numbers and NumPy values."""
  if isinstance(obj, Array):
    return obj._value
  if isinstance(obj, (list, tuple)):
    return [_arrays_as_numpy(o) for o in obj]
  return obj


@accepts_out_sharding("jnp.array")
def array(object, dtype=None, *args, copy=True, order="K", ndmin=0, device=None):
  """Create an array (``numpy.array``); 64-bit types follow ``jax_enable_x64``.

  Unlike NumPy, the result is immutable, a bare Python scalar (without ``dtype``) gives a
  weakly typed array as in JAX (sequences give strongly typed ones), and object or string
  dtypes are rejected. Passing ``copy``, ``order`` and ``ndmin`` positionally is
  deprecated, as in JAX.
  """
  if args:
    copy, order, ndmin = _positional_array_args(args, copy, order, ndmin)
  if order not in (None, "K", "A", "C"):
    raise NotImplementedError(f"jnp.array: order={order!r} is not supported; JAX arrays "
                              "are always in C order.")
  want = _requested_dtype(dtype, "array")
  if object is None:
    raise ValueError("None is not a valid value for jnp.array")
  if hasattr(object, "__jax_array__"):
    object = object.__jax_array__()
  if device is not None:   # (the result is placed; built here as without it)
    return place_on(array(object, dtype, copy=copy, order=order, ndmin=ndmin), device)
  device = core.eval_trace.device   # a device eager values live on (None: the host)
  if isinstance(object, (Array, Tracer)):
    # an eager copy owns a buffer of its own, since DLPack can hand buffers to writers;
    # a traced value is a fresh value already (jaxlite has no copy primitive)
    if isinstance(object, Tracer):   # a JVP tracer of a Python float: an Array, as asarray
      out = lax_ew._convert_element_type(object, object.aval.dtype, object.aval.weak_type)
    elif not copy:
      out = object
    elif isinstance(object, extended.ExtendedArray):   # (a typed key): over a copy of its data
      out = extended.wrap(object.aval, array(object._physical, copy=True))
    elif device is not None:
      out = device.copy(object)
    else:
      out = Array(np.array(object._value), object.weak_type)
  elif isinstance(object, (list, tuple)) and _contains_tracer(object):
    if not object:
      out = as_operand(np.zeros((0,), dtypes.default_float_dtype()))
    elif _contains_extended(object):
      out = lax_numpy.stack([array(o) for o in object])
    else:
      out = _stacked_at(object, want if want is not None
                        else dtypes.result_type(*_sequence_leaves(object)))
  else:
    out = _from_python_or_numpy(_arrays_as_numpy(object), want)
  # weakly typed only as the bare weak value itself was: a dtype or a sequence makes it strong
  weak = dtype is None and not isinstance(object, (list, tuple)) and out.weak_type
  if (want is not None and out.dtype != want) or out.weak_type != weak:
    out = lax_ew._convert_element_type(out, out.dtype if want is None else want, weak)
  if ndmin > out.ndim:
    out = lax_shapes.reshape(out, (1,) * (ndmin - out.ndim) + out.shape)
  return out if device is None else device.adopt(out)


def _positional_array_args(args, copy, order, ndmin):
  """``copy``, ``order`` and ``ndmin`` given positionally to ``jnp.array``, with JAX's
  errors and deprecation warning."""
  if len(args) > 3:
    raise TypeError(f"array() takes at most 5 positional arguments but {len(args) + 2} "
                    "were given")
  for i, name in enumerate(["copy", "order", "ndmin"]):
    if i < len(args) and [copy, order, ndmin][i] != [True, "K", 0][i]:
      raise TypeError(f"array() got multiple values for argument '{name}'")
  warnings.warn("Passing the copy, order, and ndmin arguments to jnp.array positionally is "
                "deprecated. Use keyword arguments instead.", DeprecationWarning, stacklevel=4)
  return (list(args) + [copy, order, ndmin][len(args):])[:3]


def _from_python_or_numpy(obj, want):
  if isinstance(obj, (bool, int, float, complex)) and not isinstance(obj, np.generic):
    if want is None:
      return as_operand(obj)
    # With a dtype the scalar only has to fit that dtype (jnp.asarray(2**32 - 1, 'uint32')).
    if type(obj) is int and want.kind in "iu" and not (
        np.iinfo(want).min <= obj <= np.iinfo(want).max):
      raise OverflowError(f"Python integer {obj} out of bounds for {want}")
  try:
    value = np.asarray(obj) if want is None else np.asarray(obj, dtype=want)
  except ValueError as e:
    raise ValueError(f"jnp.array could not build an array from {obj!r}: {e}") from None
  if value.dtype == object or value.dtype.kind in "USMm" or (
      value.dtype.kind == "V" and not dtypes.is_jax_dtype(value.dtype)):
    raise TypeError(f"Value {obj!r} with dtype {value.dtype} is not a valid JAX array type. "
                    "Only arrays of numeric types are supported by JAX.")
  if want is None:
    if isinstance(obj, (list, tuple)) and value.dtype == np.int64:
      _check_int_range(value)
    want = dtypes.canonicalize_dtype(value.dtype)
  # a jaxpr literal's TypedNdArray keeps its weak type, as in JAX
  weak = type(obj) is TypedNdArray and obj.weak_type and value.dtype == want
  return Array(np.array(value, dtype=want), weak)


def _check_int_range(value):
  if not dtypes.config.jax_enable_x64 and value.size and (
      value.max() > np.iinfo(np.int32).max or value.min() < np.iinfo(np.int32).min):
    raise OverflowError(f"Python int {value.max() if value.max() > 0 else value.min()} "
                        "too large to convert to int32")


@accepts_out_sharding("jnp.array")   # (JAX's name in its errors)
def asarray(a, dtype=None, order=None, *, copy=None, device=None):
  """Convert ``a`` to an array without copying when it already is one (``numpy.asarray``).

  ``copy=True`` always copies; ``copy=None`` or ``False`` return an Array ``a`` itself
  when no conversion is needed. As in JAX, ``copy=False`` does not raise when a
  conversion is needed (a NumPy input is always copied, since Arrays are immutable and a
  NumPy array may be written later); ``jnp.from_dlpack`` shares NumPy buffers instead.
  ``device`` puts the result on that device, committed (a Device), or lays it out as
  that Sharding.
  """
  if device is not None:
    return place_on(asarray(a, dtype, order, copy=copy), device)
  if copy:
    return array(a, dtype=dtype, copy=True, order=order)
  if isinstance(a, Array) and dtype is None:
    return a
  if isinstance(a, Tracer) and dtype is None:   # a JVP tracer of a Python float: an Array
    return lax_ew._convert_element_type(a, a.aval.dtype, a.aval.weak_type)
  if isinstance(a, (bool, int, float, complex, np.generic)) and dtype is None:
    device = core.eval_trace.device
    return as_operand(a) if device is None else device.adopt(as_operand(a))
  return array(a, dtype=dtype, copy=False, order=order)


def _shape(shape, fun_name):
  if isinstance(shape, (int, np.integer)) or (isinstance(shape, (Array, Tracer))
                                              and not shape.shape):
    shape = (shape,)
  try:
    shape = tuple(operator.index(d) for d in shape)
  except TypeError:
    raise TypeError(f"{fun_name}: shape must be a sequence of static integers, got {shape!r}"
                    ". Shapes cannot depend on traced values.") from None
  if any(d < 0 for d in shape):
    raise TypeError(f"{fun_name}: shape must have every element be nonnegative, got {shape}.")
  return shape


@accepts_device
def full(shape, fill_value, dtype=None, *, out_sharding=None):
  """An array of ``shape`` filled with ``fill_value`` (``numpy.full``), laid out as
  ``out_sharding`` (a NamedSharding, or a PartitionSpec of the mesh in context) says."""
  shape = _shape(shape, "full")
  want = _requested_dtype(dtype, "full")
  if dtypes.is_extended(want):   # filled as its rules say (keys: every data word)
    return want._rules.full(shape, fill_value, want)
  check_arraylike("full", fill_value)
  value = as_operand(fill_value)
  if want is not None and (value.dtype != want or value.weak_type):
    value = lax_ew._convert_element_type(value, want, False)
  if value.ndim:
    out = lax_numpy.broadcast_to(value, shape)
    return out if out_sharding is None else constrain(out, out_sharding)
  return lax_shapes.broadcast_in_dim(value, shape, (), out_sharding=out_sharding)


@accepts_device
def zeros(shape, dtype=None, *, out_sharding=None):
  """An array of ``shape`` filled with zeros (``numpy.zeros``)."""
  want = _requested_dtype(dtype, "zeros") or dtypes.default_float_dtype()
  if dtypes.is_extended(want):
    return want._rules.full(_shape(shape, "zeros"), 0, want)
  return full(shape, Array(np.zeros((), want)), out_sharding=out_sharding)


@accepts_device
def ones(shape, dtype=None, *, out_sharding=None):
  """An array of ``shape`` filled with ones (``numpy.ones``)."""
  want = _requested_dtype(dtype, "ones") or dtypes.default_float_dtype()
  if dtypes.is_extended(want):
    return want._rules.full(_shape(shape, "ones"), 1, want)
  return full(shape, Array(np.ones((), want)), out_sharding=out_sharding)


@accepts_out_sharding("jnp.zeros")   # (JAX's name in its errors)
@accepts_device
def empty(shape, dtype=None):
  """Like ``zeros``: JAX arrays are never uninitialised."""
  return zeros(shape, dtype)


def _like(fun_name, a, dtype, shape):
  if (isinstance(a, (core.ShapeDtypeStruct, Ref)) or not isinstance(a, (Array, Tracer))
      and hasattr(a, "dtype") and hasattr(a, "shape") and not hasattr(a, "__jax_array__")
      and not isinstance(a, (np.ndarray, np.generic))):
    # anything with a shape and dtype serves (a description of an array, a ref), as in JAX
    aval = core.ShapedArray(a.shape, np.dtype(a.dtype), getattr(a, "weak_type", False))
  else:
    check_arraylike(fun_name, a)
    # (an object converting itself, as a hijax Variable, is described by what it gives)
    convert = not isinstance(a, (Array, Tracer)) and hasattr(a, "__jax_array__")
    aval = core.get_aval(as_operand(a) if convert else a)
  want = _requested_dtype(dtype, fun_name) or aval.dtype
  return (aval.shape if shape is None else _shape(shape, fun_name)), want, aval.weak_type


@accepts_out_sharding("full_like")
@accepts_device
def full_like(a, fill_value, dtype=None, shape=None):
  """An array with the shape and dtype of ``a`` filled with ``fill_value``."""
  shape, want, weak = _like("full_like", a, dtype, shape)
  if dtypes.is_extended(want):
    return want._rules.full(shape, fill_value, want)
  value = lax_ew._convert_element_type(as_operand(fill_value), want,
                                       weak and dtype is None)
  out = full(shape, value)
  sharding = like_sharding(a, shape, weak and dtype is None)   # (a's layout, as JAX's)
  return out if sharding is None else constrain(out, sharding)


@accepts_out_sharding("jnp.zeros_like")
@accepts_device
def zeros_like(a, dtype=None, shape=None):
  """Zeros with the shape and dtype of ``a``."""
  return full_like(a, 0, dtype, shape)


@accepts_out_sharding("jnp.ones_like")
@accepts_device
def ones_like(a, dtype=None, shape=None):
  """Ones with the shape and dtype of ``a``."""
  return full_like(a, 1, dtype, shape)


@accepts_device
def empty_like(prototype, dtype=None, shape=None):
  """Like ``zeros_like``: JAX arrays are never uninitialised."""
  return zeros_like(prototype, dtype, shape)


@accepts_device
def arange(start, stop=None, step=None, dtype=None, *, out_sharding=None):
  """Evenly spaced values in ``[start, stop)`` (``numpy.arange``).

  The bounds must be concrete scalars. As in JAX, the values are
  ``start + step * iota`` computed in ``dtype`` (in float32 for narrower floats), so a
  float32 result rounds as float32 arithmetic does (``arange(0, 1, 0.1)[-1]`` is
  ``0.90000004``); the length is ``ceil((stop - start) / step)``.
  """
  want = _requested_dtype(dtype, "arange")
  first = "stop" if stop is None and step is None else "start"
  for name, v in ((first, start), ("stop", stop), ("step", step)):
    if v is not None:
      v = core.concrete_or_error(np.asarray, v, f"It arose in the jnp.arange argument "
                                 f"'{name}'. The size of an array cannot depend on a traced "
                                 "value.")
      if v.ndim:
        raise ValueError(f"jax.numpy.arange: arguments must be scalars; got {name}={v}")
      if v.dtype.kind == "c":
        raise ValueError("Passing complex start/stop/step to jnp.arange is no longer "
                         "supported starting in JAX v0.10.0.")
  if want is None:
    want = dtypes.result_type(*(v for v in (start, stop, step) if v is not None))
  start, stop, step = (None if v is None else np.asarray(v).item() for v in (start, stop, step))
  if stop is None:
    start, stop = 0, start
  # (the iota laid out as asked: what is computed from it is split as it is)
  iota = lambda dtype, size: lax_shapes.broadcasted_iota(dtype, (size,), 0,
                                                          out_sharding=out_sharding)
  if step is None:
    values = iota(want, max(0, math.ceil(stop - start)))
    return values if start == 0 else lax_ew.add(_scalar(start, want), values)
  size = max(0, math.ceil((stop - start) / step))
  narrow_float = dtypes.issubdtype(want, np.floating) and want.itemsize < 4
  work = np.dtype(np.float32) if narrow_float else want
  values = lax_ew.add(_scalar(start, work), lax_ew.mul(_scalar(step, work), iota(work, size)))
  return lax_ew._convert_element_type(values, want)


def _scalar(value, dtype):
  """A strongly typed 0-d Array of ``value`` in ``dtype``, converted as lax converts."""
  return lax_ew._convert_element_type(as_operand(value), dtype)


@accepts_device
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
  """``num`` evenly spaced values from ``start`` to ``stop`` (``numpy.linspace``).

  As in JAX, value ``i`` is ``start * (1 - t) + stop * t`` with ``t = i / div`` (``div``
  being ``num - 1``, or ``num`` without the endpoint), computed in ``dtype``'s inexact type
  (an integer ``dtype`` in float32, or float64 for 64-bit integers): the endpoints come out
  exact, and an integer ``dtype`` takes the floor of those values, which is not always
  NumPy's result.
  """
  num = core.concrete_or_error(operator.index, num, "jnp.linspace's `num` must be static.")
  if num < 0:
    raise ValueError(f"Number of samples, {num}, must be non-negative.")
  start, stop = as_operand(start), as_operand(stop)
  dtype = _requested_dtype(dtype, "linspace") or dtypes.to_inexact_dtype(
      dtypes.result_type(start, stop))
  compute = dtypes.to_inexact_dtype(dtype)
  start = lax_ew._convert_element_type(start, compute)
  stop = lax_ew._convert_element_type(stop, compute)
  bshape = lax_numpy.broadcast_shapes(start.shape, stop.shape)
  start, stop = lax_numpy.broadcast_to(start, bshape), lax_numpy.broadcast_to(stop, bshape)
  axis = len(bshape) + axis + 1 if axis < 0 else axis
  bounds = list(bshape)
  bounds.insert(axis, 1)
  div = (num - 1) if endpoint else num
  if num > 1:
    delta = ufuncs.true_divide(ufuncs.subtract(stop, start), Array(np.asarray(div, compute)))
    real = np.finfo(compute).dtype
    steps = [1] * len(bounds)
    steps[axis] = div
    t = ufuncs.true_divide(lax_numpy.reshape(lax_shapes.iota(real, div), steps),
                           Array(np.asarray(div, real)))
    t = lax_ew._convert_element_type(t, compute)
    out = ufuncs.add(ufuncs.multiply(lax_numpy.reshape(start, bounds), ufuncs.subtract(1, t)),
                     ufuncs.multiply(lax_numpy.reshape(stop, bounds), t))
    if endpoint:
      out = lax_shapes.concatenate([out, lax_numpy.reshape(stop, bounds)], axis)
  elif num == 1:
    delta = Array(np.asarray(np.nan, compute)) if endpoint else ufuncs.subtract(stop, start)
    out = lax_numpy.reshape(start, bounds)
  else:
    bounds[axis] = 0
    delta = Array(np.asarray(np.nan, compute))
    out = Array(np.zeros(bounds, compute))
  if dtypes.issubdtype(dtype, np.integer):
    out = ufuncs.floor(out)
  out = lax_ew._convert_element_type(out, dtype)
  return (out, delta) if retstep else out


@accepts_device
def eye(N, M=None, k=0, dtype=None):
  """A 2-d array with ones on diagonal ``k`` (``numpy.eye``); ``k`` may be an array."""
  want = _requested_dtype(dtype, "eye") or dtypes.default_float_dtype()
  for name, n in (("N", N), ("M", M)):
    if n is not None and not isinstance(n, (int, np.integer)):
      raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, "
                      f"got ({n!r},). argument of {name!r} jnp.eye().")
  if N < 0 or (M is not None and M < 0):
    raise ValueError(f"negative dimensions are not allowed, got {N} and {M}")
  M = N if M is None else M
  rows = lax_shapes.broadcasted_iota(np.int32, (N, M), 0)
  cols = lax_shapes.broadcasted_iota(np.int32, (N, M), 1)
  on_diag = lax_ew.eq(lax_ew.add(rows, _scalar(k, np.dtype(np.int32))), cols)
  return lax_ew._convert_element_type(on_diag, want)


def identity(n, dtype=None):
  """The ``n`` x ``n`` identity matrix."""
  return eye(n, dtype=dtype)


# -- from existing data: bytes, text and functions of the indices
def frombuffer(buffer, dtype=float, count=-1, offset=0):
  """An array from the bytes of ``buffer`` (``numpy.frombuffer``, copied)."""
  return asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string, dtype=float, count=-1, *, sep):
  """An array from a text string of separated numbers (``numpy.fromstring``)."""
  return asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def _impure(name, what):
  def fun(*args, **kwargs):
    raise NotImplementedError(
        f"jnp.{name}() is not implemented because it may be non-pure and thus unsafe for "
        f"use with JIT and other JAX transformations. Consider using "
        f"jnp.asarray(np.{name}(...)) instead, although care should be taken if "
        f"np.{name} is used within a jax transformations because of its potential "
        f"side-effect of consuming the {what} object.")
  fun.__name__ = name
  fun.__doc__ = f"Not implemented, as in JAX: ``np.{name}`` consumes a {what}."
  return fun


fromfile = _impure("fromfile", "file")
fromiter = _impure("fromiter", "iterable")


def fromfunction(function, shape, *, dtype=float, **kwargs):
  """``function(*indices)`` where ``indices`` are the coordinate grids of ``shape``."""
  shape = (shape,) if isinstance(shape, int) else tuple(shape)
  grids = [lax_numpy.reshape(arange(n, dtype=dtype), [n if j == i else 1
                                                      for j in range(len(shape))])
           for i, n in enumerate(shape)]
  return function(*[lax_numpy.broadcast_to(g, shape) for g in grids], **kwargs)
