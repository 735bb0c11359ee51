"""Shape manipulation, selection and products in ``jaxlite.numpy``."""
from __future__ import annotations

import builtins
import operator

import numpy as np

from jaxlite._src.core import core
from jaxlite._src.base import dtypes
from jaxlite._src.core.array import Array
from jaxlite._src.core.core import Tracer
from jaxlite._src.lax.call import staged
from jaxlite._src.lax import elementwise as lax_ew
from jaxlite._src.lax import reductions as lax_red
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.lax.sharding_constraint import accepts_out_sharding
from jaxlite._src.libraries.numpy import util
from jaxlite._src.libraries.numpy.util import (as_operand, canonicalize_axis, check_arraylike,
                                     ensure_arraylike, place_on, promote_dtypes)


def shape(a):
  """The shape of ``a``."""
  return core.get_aval(a).shape if isinstance(a, (Array, Tracer)) else np.shape(a)


def ndim(a):
  """The number of dimensions of ``a``."""
  return len(shape(a))


def size(a, axis=None):
  """The number of elements of ``a`` (along ``axis`` if given)."""
  s = shape(a)
  return int(np.prod(s, dtype=np.int64)) if axis is None else s[axis]


def broadcast_shapes(*shapes):
  """The shape that ``shapes`` broadcast to (``numpy.broadcast_shapes``)."""
  return util.broadcast_shapes("broadcast_shapes", *[tuple(s) for s in shapes])


def _new_shape(a, shape):
  """``shape`` as a tuple of ints, its one -1 (if any) resolved against ``a.size``."""
  if not isinstance(shape, (tuple, list)) and np.ndim(shape) == 0:
    shape = (shape,)   # a scalar size (a traced one fails below with a clear error)
  shape = tuple(operator.index(d) for d in shape)
  if shape.count(-1) > 1:
    raise TypeError(f"can only specify one unknown axis size with a `-1` value, got {shape}")
  if -1 in shape:
    known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
    if known == 0 or a.size % known:
      raise TypeError(f"cannot reshape array of shape {a.shape} (size {a.size}) into shape "
                      f"{shape}")
    shape = tuple(a.size // known if d == -1 else d for d in shape)
  if int(np.prod(shape, dtype=np.int64)) != a.size:
    raise TypeError(f"cannot reshape array of shape {a.shape} (size {a.size}) into shape "
                    f"{shape} (size {int(np.prod(shape, dtype=np.int64))})")
  return shape


@accepts_out_sharding("reshape")
def reshape(a, shape, order="C", *, copy=None):
  """Give ``a`` a new shape with the same number of elements; one size may be -1.

  Parameters
  ----------
  a : array_like
  shape : int or sequence of int
  order : {'C', 'F'}
    Read and write the elements in row-major ('C') or column-major ('F') order. JAX
    arrays have no memory layout of their own, so 'A' is not supported (as in JAX).
  copy : bool, optional
    Ignored: the result is always a new array, as in JAX.

  Examples
  --------
  >>> import jaxlite.numpy as jnp
  >>> jnp.reshape(jnp.arange(6).reshape(2, 3), (3, 2), order="F")
  Array([[0, 4],
         [3, 2],
         [1, 5]], dtype=int32)
  """
  check_arraylike("reshape", a)
  if isinstance(a, (np.ndarray, np.generic)):
    # JAX forwards NumPy values to their own method: the result stays a concrete NumPy
    # array, even under jit, as libraries (numpyro's constraint checks) rely on
    return a.reshape(shape, order=order)
  return _reshape(a, shape, order)


def _reshape(a, shape, order="C"):
  a = as_operand(a)
  shape = _new_shape(a, shape)
  if order == "C":
    return lax_shapes.reshape(a, shape)
  if order == "F":
    # column-major: reverse the axes, reshape row-major to the reversed shape, reverse
    reversed_axes = tuple(range(a.ndim))[::-1]
    out = lax_shapes.reshape(a, shape[::-1], reversed_axes)
    return lax_shapes.transpose(out, tuple(range(len(shape)))[::-1])
  if order == "A":
    raise NotImplementedError("np.reshape order=A is not implemented.")
  raise ValueError(f"Unexpected value for 'order' argument: {order}.")


@accepts_out_sharding("reshape")   # (JAX's name in its errors)
def ravel(a, order="C"):
  """The elements of ``a`` as a 1-d array, read in row-major ('C') or column-major ('F')
  order."""
  check_arraylike("ravel", a)
  if order == "K":
    raise NotImplementedError("Ravel not implemented for order='K'.")
  return _reshape(a, (-1,), order)


def transpose(a, axes=None):
  """Permute the axes of ``a`` (reverse them if ``axes`` is None)."""
  check_arraylike("transpose", a)
  a = as_operand(a)
  axes = tuple(range(a.ndim))[::-1] if axes is None else tuple(
      canonicalize_axis(i, a.ndim) for i in axes)
  if sorted(axes) != list(range(a.ndim)):
    raise TypeError(f"transpose permutation isn't a permutation of operand dimensions, got "
                    f"permutation {axes} for operand shape {a.shape}.")
  return lax_shapes.transpose(a, axes)


def permute_dims(a, /, axes):
  return transpose(a, axes)


def matrix_transpose(x, /):
  """Swap the last two axes."""
  x = as_operand(x)
  if x.ndim < 2:
    raise ValueError(f"x must be at least two-dimensional for matrix_transpose; got "
                     f"ndim={x.ndim}")
  return swapaxes(x, -1, -2)


def swapaxes(a, axis1, axis2):
  """Interchange two axes."""
  a = as_operand(a)
  perm = list(range(a.ndim))
  i, j = canonicalize_axis(axis1, a.ndim), canonicalize_axis(axis2, a.ndim)
  perm[i], perm[j] = perm[j], perm[i]
  return lax_shapes.transpose(a, perm)


def moveaxis(a, source, destination):
  """Move axes ``source`` to positions ``destination``."""
  a = as_operand(a)
  src = util.canonicalize_axes(source, a.ndim)
  dst = util.canonicalize_axes(destination, a.ndim)
  if len(src) != len(dst):
    raise ValueError("`source` and `destination` arguments must have the same number of "
                     "elements")
  order = [i for i in range(a.ndim) if i not in src]
  for d, s in sorted(zip(dst, src)):
    order.insert(d, s)
  return lax_shapes.transpose(a, order)


def rollaxis(a, axis, start=0):
  """Move ``axis`` so that it sits before position ``start`` (prefer ``jnp.moveaxis``)."""
  (a,) = ensure_arraylike("rollaxis", a)
  n = a.ndim
  axis = canonicalize_axis(axis, n)
  if not -n <= start <= n:
    raise ValueError(f"start={start} must satisfy {-n}<=start<={n}")
  start = start + n if start < 0 else start
  if start > axis:
    start -= 1
  return moveaxis(a, axis, start)


def expand_dims(a, axis):
  """Insert size-1 axes at ``axis`` (an int or a tuple)."""
  check_arraylike("expand_dims", a)
  return lax_shapes.expand_dims(as_operand(a), util.axis_tuple(axis))


def squeeze(a, axis=None):
  """Remove size-1 axes (all of them, or those in ``axis``)."""
  check_arraylike("squeeze", a)
  a = as_operand(a)
  if axis is None:
    axes = [i for i, d in enumerate(a.shape) if d == 1]
  else:
    axes = util.canonicalize_axes(axis, a.ndim)
    for i in axes:
      if a.shape[i] != 1:
        raise ValueError(f"cannot select an axis to squeeze out which has size not equal "
                         f"to one, got shape={a.shape} and dimensions={tuple(axes)}")
  return lax_shapes.squeeze(a, axes)


@accepts_out_sharding("jnp.broadcast_to")
def broadcast_to(array, shape):
  """Broadcast ``array`` to ``shape`` (NumPy rules)."""
  check_arraylike("broadcast_to", array)
  array = as_operand(array)
  shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
  if len(shape) < array.ndim:
    raise ValueError(f"Cannot broadcast to shape with fewer dimensions: arr_shape="
                     f"{array.shape} shape={shape}")
  try:
    compatible = util.broadcast_shapes(
        "broadcast_to", array.shape, shape) == shape
  except ValueError:
    compatible = False
  if not compatible:
    raise ValueError(f"Incompatible types for broadcasting: input type="
                     f"{array.aval.str_short()} and requested type="
                     f"{array.aval.update(shape=shape).str_short()}")
  lead = len(shape) - array.ndim
  keep = [i for i, d in enumerate(array.shape) if d != 1 or shape[lead + i] == 1]
  squeezed = lax_shapes.squeeze(array, [i for i in range(array.ndim) if i not in keep])
  return lax_shapes.broadcast_in_dim(squeezed, shape, [lead + i for i in keep])


def broadcast_arrays(*args):
  """Broadcast all ``args`` to their common shape."""
  out_shape = broadcast_shapes(*(shape(a) for a in args))
  return [broadcast_to(a, out_shape) for a in args]


def atleast_1d(*arys):
  out = [_reshape(a, (1,)) if ndim(a) == 0 else as_operand(a) for a in arys]
  return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
  out = [expand_dims(a, tuple(range(2 - ndim(a)))) if ndim(a) < 2 else as_operand(a)
         for a in arys]
  return out[0] if len(out) == 1 else out


def concatenate(arrays, axis=0, dtype=None):
  """Join arrays along an existing axis (``numpy.concatenate``); ``axis=None`` flattens."""
  if isinstance(arrays, (Array, Tracer)):
    arrays = list(arrays)
  if not arrays:
    raise ValueError("Need at least one array to concatenate.")
  check_arraylike("concatenate", *arrays)
  if axis is None:
    arrays, axis = [ravel(a) for a in arrays], 0
  arrays = promote_dtypes(*arrays)
  if dtype is not None:
    arrays = [lax_ew._convert_element_type(a, dtypes.canonicalize_dtype(dtype)) for a in arrays]
  ranks = {a.ndim for a in arrays}
  if 0 in ranks:
    raise ValueError("Zero-dimensional arrays cannot be concatenated.")
  if len(ranks) > 1:
    raise TypeError("Cannot concatenate arrays with different numbers of dimensions: got "
                    + ", ".join(str(a.shape) for a in arrays) + ".")
  axis = canonicalize_axis(axis, arrays[0].ndim)
  for a in arrays:
    if any(x != y for i, (x, y) in enumerate(zip(a.shape, arrays[0].shape)) if i != axis):
      raise TypeError("Cannot concatenate arrays with shapes that differ in dimensions other "
                      f"than the one being concatenated: concatenating along dimension "
                      f"{axis} for shapes {', '.join(str(b.shape) for b in arrays)}.")
  return lax_shapes.concatenate(arrays, axis)


def concat(arrays, /, *, axis=0):
  """Join arrays along an existing axis (the array-API name of ``jnp.concatenate``)."""
  return concatenate(arrays, axis=axis)


def stack(arrays, axis=0, out=None, dtype=None):
  """Join arrays along a new axis (``out`` is not supported, as in JAX)."""
  if out is not None:
    raise NotImplementedError("The 'out' argument to jnp.stack is not supported.")
  if not len(arrays):
    raise ValueError("Need at least one array to stack.")
  check_arraylike("stack", *arrays)
  arrays = [as_operand(a) for a in arrays]
  if len({a.shape for a in arrays}) > 1:
    raise ValueError("All input arrays must have the same shape, got "
                     + ", ".join(str(a.shape) for a in arrays))
  axis = canonicalize_axis(axis, arrays[0].ndim + 1)
  return concatenate([expand_dims(a, axis) for a in arrays], axis, dtype)


def hstack(tup, dtype=None):
  arrs = atleast_1d(*tup) if len(tup) > 1 else [atleast_1d(tup[0])]
  return concatenate(arrs, 0 if arrs[0].ndim == 1 else 1, dtype)


def vstack(tup, dtype=None):
  arrs = atleast_2d(*tup) if len(tup) > 1 else [atleast_2d(tup[0])]
  return concatenate(arrs, 0, dtype)


def where(condition, x, y, /):
  """``x`` where ``condition`` else ``y``, elementwise with broadcasting: the three-term
  ``jnp.where`` (the public one, in ``sorting.py``, adds the one-argument form, which is
  ``jnp.nonzero``). Both ``x`` and ``y`` are always computed."""
  check_arraylike("where", condition, x, y)
  x, y = promote_dtypes(x, y)
  condition = as_operand(condition)
  if condition.dtype != np.bool_:
    condition = lax_ew.ne(condition, as_operand(np.zeros((), condition.dtype)))
  out_shape = broadcast_shapes(condition.shape, x.shape, y.shape)
  condition, x, y = (broadcast_to(v, out_shape) for v in (condition, x, y))
  return lax_ew.select_n(condition, y, x)


# the three-term where as JAX stages it (``jnp.where`` and JAX's own library code call it)
_where = staged(where, name="_where")


def astype(x, dtype, /, *, copy=False, device=None):
  """``x`` converted to ``dtype``."""
  check_arraylike("astype", x)
  dtypes.check_user_dtype_supported(dtype, "astype")
  x = as_operand(x)
  if dtypes.is_complex(x.dtype) and np.dtype(dtype) == np.bool_:
    # as JAX: nonzero, imaginary part included (a conversion would drop it)
    return place_on(lax_ew.ne(x, as_operand(np.zeros((), x.dtype))), device)
  return place_on(lax_ew.convert_element_type(x, dtype), device)


def _dot_type_order(dtype):
  """XLA's order of operand types in a mixed-type dot (JAX's dot_general dtype rule): complex
  over real, then float range and precision, then width, then signed over unsigned."""
  real = dtypes.finfo(dtype).dtype if dtypes.is_complex(dtype) else dtype
  floating = dtypes.is_floating(real)
  return (dtypes.is_complex(dtype), dtypes.finfo(real).maxexp if floating else -1,
          dtypes.finfo(real).nmant if floating else -1, _dot_bit_width(real),
          not dtypes.issubdtype(real, np.unsignedinteger))


def _dot_bit_width(dtype):
  if dtype == np.bool_:
    return 1
  return (dtypes.finfo if dtypes.is_inexact(dtype) else dtypes.iinfo)(dtype).bits


def _dot_operands(name, a, b, preferred_element_type):
  """``a`` and ``b`` promoted for a contraction, the result dtype and whether the result is
  weakly typed (as promotion makes it when no preferred_element_type is given).

  JAX contracts the unpromoted operands with the result type as preferred_element_type, and
  XLA refuses a non-float result narrower than the higher operand type: so
  ``jnp.dot(int8_array, 2)`` raises (the 2 is an int32 array there).
  """
  check_arraylike(name, a, b)
  a, b = as_operand(a), as_operand(b)
  if preferred_element_type is None:
    result, weak = dtypes.lattice_result_type(a, b)
  else:
    dtypes.check_user_dtype_supported(preferred_element_type, name)
    result, weak = dtypes.canonicalize_dtype(preferred_element_type), False
  higher = builtins.max(a.dtype, b.dtype, key=_dot_type_order)
  if not dtypes.is_floating(higher) and _dot_bit_width(result) < _dot_bit_width(higher):
    raise TypeError(f"`preferred_element_type` must not be narrower than the original type, "
                    f"got preferred_element_type of {result} for result type of {higher}.")
  a, b = promote_dtypes(a, b)
  return a, b, result, weak


def _dot_result(out, weak):
  return lax_ew._convert_element_type(out, out.dtype, weak)


def dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
  """Dot product (``numpy.dot``): scalars multiply, 1-d and 2-d contract, N-d as NumPy.
  ``out_sharding`` lays out the result as in ``lax.dot_general``."""
  a, b, out_dtype, weak = _dot_operands("dot", a, b, preferred_element_type)
  contract_a = () if a.ndim == 0 or b.ndim == 0 else (a.ndim - 1,)
  contract_b = () if not contract_a else (0,) if b.ndim == 1 else (b.ndim - 2,)
  if contract_a and a.shape[-1] != b.shape[contract_b[0]]:
    raise TypeError(f"dot_general requires contracting dimensions to have the same shape, "
                    f"got {a.shape} and {b.shape}: jnp.dot contracts the last axis of a "
                    f"({a.shape[-1]}) with axis {contract_b[0]} of b "
                    f"({b.shape[contract_b[0]]}).")
  out = lax_red.dot_general(a, b, ((contract_a, contract_b), ((), ())), precision, out_dtype,
                            out_sharding=out_sharding)
  return _dot_result(out, weak)


@accepts_out_sharding("dot_general")   # (JAX's name in its errors)
def matmul(a, b, *, precision=None, preferred_element_type=None):
  """Matrix product with broadcast batch axes (``numpy.matmul``, the ``@`` operator).

  As in JAX, one ``dot_general`` with no broadcast: a batch axis both operands have (of one
  size) is a batch axis of the contraction, one that only one operand has (or has at a size
  other than 1, facing a 1, which is squeezed) is a free axis of that operand, and a
  transpose puts the result's axes in NumPy's order.
  """
  a, b, out_dtype, weak = _dot_operands("matmul", a, b, preferred_element_type)
  if a.ndim == 0 or b.ndim == 0:
    raise ValueError("matmul: Input operand does not have enough dimensions (scalars are "
                     "not allowed; use * or jnp.multiply).")
  a_mat, b_mat = a.ndim > 1, b.ndim > 1
  if a.shape[-1] != b.shape[-2 if b_mat else -1]:
    raise TypeError(f"dot_general requires contracting dimensions to have the same shape, "
                    f"got {(a.shape[-1],)} and {(b.shape[-2 if b_mat else -1],)}.")
  a_batch, b_batch = a.shape[:-2], b.shape[:-2]
  n = builtins.max(len(a_batch), len(b_batch))
  a_batch = (None,) * (n - len(a_batch)) + a_batch
  b_batch = (None,) * (n - len(b_batch)) + b_batch
  a_specs, b_specs = _batch_specs(a, n), _batch_specs(b, n)
  squeeze_a, squeeze_b, batch_a, batch_b = [], [], [], []
  at_batch, at_a, at_b = [], [], []   # where each kind of result axis goes, in order
  for i, (da, db) in enumerate(zip(a_batch, b_batch)):
    kept_a, kept_b = len(at_batch) + len(at_a), len(at_batch) + len(at_b)
    if da is None:
      at_b.append(i)
    elif db is None:
      at_a.append(i)
    elif da == 1:
      at_b.append(i)
      squeeze_a.append(kept_a + len(squeeze_a))
    elif db == 1:
      at_a.append(i)
      squeeze_b.append(kept_b + len(squeeze_b))
    elif da == db and a_specs[i] == b_specs[i]:
      batch_a.append(kept_a)
      batch_b.append(kept_b)
      at_batch.append(i)
    else:   # (of other sizes, or split over other mesh axes)
      raise ValueError(f"Incompatible types for matmul arguments: {core.get_aval(a)} and "
                       f"{core.get_aval(b)}")
  if a_mat:
    at_a.append(n)
  if b_mat:
    at_b.append(n + 1 if a_mat else n)
  a = lax_shapes.squeeze(a, tuple(squeeze_a)) if squeeze_a else a
  b = lax_shapes.squeeze(b, tuple(squeeze_b)) if squeeze_b else b
  out = lax_red.dot_general(a, b, (((a.ndim - 1,), (b.ndim - 2 if b_mat else b.ndim - 1,)),
                                   (tuple(batch_a), tuple(batch_b))), precision, out_dtype)
  perm = tuple(int(i) for i in np.argsort(at_batch + at_a + at_b))
  if perm != tuple(range(len(perm))):
    out = lax_shapes.transpose(out, perm)
  return _dot_result(out, weak)


def _batch_specs(x, n):
  """The splits of ``x``'s batch axes over Explicit mesh axes, left-padded to ``n``."""
  spec = getattr(core.get_aval(x), "spec", None) or (None,) * x.ndim
  batch = tuple(spec[:-2])
  return (None,) * (n - len(batch)) + batch


def result_type(*args):
  """The dtype JAX's promotion gives ``args``."""
  return dtypes.result_type(*args)


def issubdtype(arg1, arg2):
  """Whether ``arg1`` is a subtype of ``arg2`` (``numpy.issubdtype``, with bfloat16 and
  the other ml_dtypes types where they belong: see ``jax.dtypes.issubdtype``)."""
  return dtypes.issubdtype(arg1, arg2)


def iscomplexobj(x):
  return dtypes.is_complex(dtypes.dtype(x))


def isscalar(element):
  if isinstance(element, (Array, Tracer)):
    return element.ndim == 0
  return np.isscalar(element)


iterable = np.iterable


builtins_max = builtins.max
