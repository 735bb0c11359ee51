"""Argument checks and NumPy-style promotion shared by every ``jaxlite.numpy`` function."""
from __future__ import annotations

import functools
import inspect
import warnings

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base.config import config, numpy_rank_promotion
from jaxlite._src.base import dtypes
from jaxlite._src.core.array import Array, as_operand  # noqa: F401 (re-exported)
from jaxlite._src.core.core import Tracer
from jaxlite._src.lax import elementwise as lax_ew
from jaxlite._src.lax import shapes as lax_shapes

_SCALARS = (bool, int, float, complex)
_ARRAYLIKE = (Array, Tracer, np.ndarray, np.generic) + _SCALARS


def check_arraylike(fun_name: str, *args):
  """Reject lists, tuples and other non-array arguments, as JAX does."""
  for pos, arg in enumerate(args):
    if not isinstance(arg, _ARRAYLIKE) and not hasattr(arg, "__jax_array__"):
      hint = (" Use jnp.array(x) (or jnp.asarray) to convert a list or tuple first."
              if isinstance(arg, (list, tuple)) else "")
      raise TypeError(f"{fun_name} requires ndarray or scalar arguments, got "
                      f"{type(arg)} at position {pos}.{hint}")


def ensure_arraylike(fun_name: str, *args) -> list:
  """``args`` as arrays, after ``check_arraylike`` (JAX's ``ensure_arraylike``)."""
  check_arraylike(fun_name, *args)
  return [as_operand(x) for x in args]


def constant(value, dtype=None, weak_type=False) -> Array:
  """A concrete Array from a Python scalar or NumPy value (copied, never aliased)."""
  if dtype is None:
    dtype = dtypes.dtype(value, canonicalize=True)
  return Array(np.array(value, dtype=dtype), weak_type)


def lax_const(x, value) -> Array:
  """``value`` as a constant of ``x``'s dtype, for lax ops on ``x`` (JAX's ``lax._const``).

  The constant is weakly typed only when ``x`` is a weakly typed scalar whose dtype is
  the default one of its Python type, as JAX makes it a Python scalar then; otherwise it
  is a strong array, so ``lax.mul(x, lax_const(x, 2))`` of a weak non-scalar ``x`` is
  strong, as in JAX.
  """
  aval = core.get_aval(x)
  if aval.weak_type and not aval.shape:
    value = dtypes.scalar_type_of(aval.dtype)(value)
    return Array(np.array(value, aval.dtype),
                 dtypes.python_scalar_dtype(type(value)) == aval.dtype)
  return Array(np.array(value, aval.dtype))


def constant_like(x, value) -> Array:
  """``value`` as a strongly typed scalar array of ``x``'s dtype (JAX's ``_constant_like``)."""
  return Array(np.array(value, core.get_aval(x).dtype))


def promote_dtypes(*args):
  """Convert ``args`` to their common dtype (JAX's lattice), keeping weak types."""
  if len(args) < 2:
    return [as_operand(x) for x in args]
  to_dtype, weak = dtypes.lattice_result_type(*args)
  return [_cast(x, to_dtype, weak) for x in args]


def _cast(x, dtype, weak):
  if isinstance(x, _SCALARS) and not isinstance(x, np.generic):
    # as JAX: the scalar becomes its weak default type (an int too big for it raises
    # OverflowError), then converts to ``dtype`` as convert_element_type does (ints wrap)
    # (a jaxpr literal's TypedFloat or TypedInt carries its dtype already)
    own = getattr(x, "dtype", None)
    with np.errstate(over="ignore"):
      return Array(np.asarray(x, dtypes.python_scalar_dtype(x) if own is None else own)
                   .astype(dtype), weak)
  x = as_operand(x)
  if isinstance(x, Array) and x.dtype == dtype and x.weak_type == weak:
    return x
  # a tracer goes through the conversion, which binds it for a concrete one (a JVP of a
  # Python float: its result is an array, as in JAX)
  return lax_ew._convert_element_type(x, dtype, weak)


def promote_dtypes_inexact(*args):
  """As ``promote_dtypes``, then to an inexact type (``dtypes.to_inexact_dtype``: with x64
  on, 32-bit integers still become float32, as in JAX)."""
  to_dtype, weak = dtypes.lattice_result_type(*args)
  to_dtype = dtypes.to_inexact_dtype(to_dtype)
  return [_cast(x, to_dtype, weak) for x in args]


def promote_dtypes_numeric(*args):
  """As ``promote_dtypes``, with booleans promoted to int32 (also with x64 on, as JAX)."""
  to_dtype, weak = dtypes.lattice_result_type(*args)
  if to_dtype == np.bool_:
    to_dtype = np.dtype(np.int32)
  return [_cast(x, to_dtype, weak) for x in args]


def promote_shapes(fun_name, *args):
  """Broadcast ranks NumPy-style: lower-rank operands get leading size-1 axes."""
  if len(args) < 2:
    return list(args)
  shapes = [np.shape(x) if not isinstance(x, (Array, Tracer)) else x.shape for x in args]
  ndim = max(len(s) for s in shapes)
  if len({len(s) for s in shapes if s}) > 1:
    broadcast_shapes(fun_name, *shapes)  # ranks differ: NumPy's rules (same ranks: lax's)
    if numpy_rank_promotion() != "allow":
      _rank_promotion(fun_name, shapes)
  out = []
  for x, s in zip(args, shapes):
    if len(s) == ndim or not s:
      out.append(x)
    else:
      out.append(lax_shapes.broadcast_in_dim(x, (1,) * (ndim - len(s)) + tuple(s),
                                             range(ndim - len(s), ndim)))
  return out


def _rank_promotion(fun_name, shapes):
  """Warn or raise, as ``jax_numpy_rank_promotion`` asks, about broadcasting operands of
  different ranks (scalars excepted)."""
  listed = " ".join(str(tuple(s)) for s in shapes)
  link = "https://docs.jax.dev/en/latest/rank_promotion_warning.html"
  if config.jax_numpy_rank_promotion == "raise":
    raise ValueError(f"Operands could not be broadcast together for {fun_name} on shapes "
                     f"{listed} and with the config option jax_numpy_rank_promotion='raise'. "
                     f"For more information, see {link}.")
  warnings.warn(f"Following NumPy automatic rank promotion for {fun_name} on shapes {listed}. "
                "Set the jax_numpy_rank_promotion config option to 'allow' to disable this "
                f"warning; for more information, see {link}.", stacklevel=4)


def broadcast_shapes(fun_name, *shapes):
  """NumPy's broadcast of ``shapes``; a clear TypeError when they are incompatible."""
  ndim = max((len(s) for s in shapes), default=0)
  result = []
  for axis in range(ndim):
    sizes = {s[axis - ndim + len(s)] for s in shapes if axis - ndim + len(s) >= 0}
    big = sizes - {1}
    if len(big) > 1:
      raise ValueError(f"Incompatible shapes for broadcasting: "
                       f"shapes={[tuple(s) for s in shapes]}")
    result.append(big.pop() if big else 1)
  return tuple(result)


def promote_args(fun_name, *args):
  """Check, promote dtypes and broadcast ranks: the preamble of every NumPy binary op."""
  check_arraylike(fun_name, *args)
  try:
    promoted = promote_dtypes(*args)
  except ValueError:
    _check_for_prng_keys(fun_name, args)
    raise
  return promote_shapes(fun_name, *promoted)


def _check_for_prng_keys(fun_name, args):
  """JAX's TypeError for typed PRNG keys among operands of other dtypes (``key + 1``),
  which promotion rejects."""
  arg_dtypes = [dtypes.dtype(x, canonicalize=True) for x in args]
  if any(dtypes.issubdtype(dt, dtypes.prng_key) for dt in arg_dtypes):
    raise TypeError(
        f"{fun_name} does not accept dtypes {', '.join(map(str, arg_dtypes))}.") from None


def promote_args_inexact(fun_name, *args):
  check_arraylike(fun_name, *args)
  return promote_shapes(fun_name, *promote_dtypes_inexact(*args))


def promote_args_numeric(fun_name, *args):
  check_arraylike(fun_name, *args)
  try:
    promoted = promote_dtypes_numeric(*args)
  except ValueError:
    _check_for_prng_keys(fun_name, args)
    raise
  return promote_shapes(fun_name, *promoted)


def canonicalize_axis(axis, ndim: int) -> int:
  """``axis`` in ``[0, ndim)``; a clear error when out of range."""
  try:
    axis = int(axis.__index__())
  except AttributeError:
    raise TypeError(f"axis must be an integer, got {axis!r}") from None
  if not -ndim <= axis < ndim:
    # NumPy's AxisError is both the IndexError JAX raises and the ValueError NumPy does
    raise np.exceptions.AxisError(axis, ndim)
  return axis % ndim


def axis_tuple(axis) -> tuple:
  """``axis`` as a tuple: an int alone, or a sequence or 1-D array (NumPy's or jaxlite's)
  of them, as JAX's ``_ensure_index_tuple`` takes them."""
  if isinstance(axis, (tuple, list, range)) or np.ndim(axis) == 1:
    return tuple(axis)
  return (axis,)


def canonicalize_axes(axis, ndim: int) -> tuple:
  if axis is None:
    return tuple(range(ndim))
  axes = tuple(canonicalize_axis(a, ndim) for a in axis_tuple(axis))
  if len(set(axes)) != len(axes):
    raise ValueError(f"repeated axis in {axis}")
  return axes


def shape_of(x):
  return core.get_aval(x).shape


def place_on(out, device):
  """``out`` put on ``device`` as JAX's creation functions place their results: committed
  to a Device, laid out as a Sharding; inside a trace as it is, as JAX's jit leaves it."""
  if device is None or any(isinstance(leaf, Tracer) for leaf in (
      out if isinstance(out, tuple) else (out,))):
    return out
  return core.device_placement[0](out, device)


def accepts_device(fn):
  """A creation function with JAX's keyword-only ``device`` (``place_on``)."""
  @functools.wraps(fn)
  def wrapped(*args, device=None, **kwargs):
    return place_on(fn(*args, **kwargs), device)
  params = list(inspect.signature(fn).parameters.values())
  at = next((i for i, q in enumerate(params) if q.name == "out_sharding"), len(params))
  params.insert(at, inspect.Parameter("device", inspect.Parameter.KEYWORD_ONLY, default=None))
  wrapped.__signature__ = inspect.signature(fn).replace(parameters=params)
  return wrapped
