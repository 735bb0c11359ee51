"""``ravel_pytree``: a pytree of arrays as one flat vector, and the function that undoes it."""
import functools
import warnings

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.base import tree
from jaxlite._src.lax import elementwise
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.libraries.numpy import creation
from jaxlite._src.libraries.numpy import lax_numpy


def ravel_pytree(pytree):
  """Ravel (flatten) a pytree of arrays down to a 1D array (``jax.flatten_util.ravel_pytree``).

  Parameters
  ----------
  pytree : pytree
    Arrays and scalars, in any containers.

  Returns
  -------
  flat : Array
    The leaves raveled and concatenated, cast to their promoted dtype (float32 for an
    empty tree).
  unravel : callable
    Maps a 1D array of the same length back to a pytree of ``pytree``'s structure, each
    leaf with its original shape and dtype.
  """
  leaves, treedef = tree.tree_flatten(pytree)
  flat, unravel_list = _ravel_list(leaves)
  return flat, functools.partial(_unravel_pytree, treedef, unravel_list)


def _unravel_pytree(treedef, unravel_list, flat):
  return tree.tree_unflatten(treedef, unravel_list(flat))


def _ravel_list(leaves):
  if not leaves:
    return creation.array([], np.float32), lambda _: []
  from_dtypes = tuple(dtypes.dtype(leaf, canonicalize=True) for leaf in leaves)
  to_dtype = dtypes.result_type(*from_dtypes)
  sizes = [int(np.size(leaf)) for leaf in leaves]
  shapes = [np.shape(leaf) for leaf in leaves]
  flat = lax_numpy.concatenate([lax_numpy.ravel(elementwise.convert_element_type(leaf, to_dtype))
                           for leaf in leaves])
  if all(dt == to_dtype for dt in from_dtypes):
    # One dtype throughout: unravel keeps whatever dtype it is given (JAX does too).
    return flat, functools.partial(_unravel_same_dtype, sizes, shapes)
  return flat, functools.partial(_unravel_mixed_dtypes, sizes, shapes, from_dtypes, to_dtype)


def _unravel_same_dtype(sizes, shapes, arr):
  return [chunk.reshape(shape) for chunk, shape in zip(lax_shapes.split(arr, sizes), shapes)]


def _unravel_mixed_dtypes(sizes, shapes, from_dtypes, to_dtype, arr):
  arr_dtype = dtypes.dtype(arr)
  if arr_dtype != to_dtype:
    raise TypeError(f"unravel function given array of dtype {arr_dtype}, "
                    f"but expected dtype {to_dtype}")
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")   # complex -> real drops the imaginary part, as JAX does
    return [elementwise.convert_element_type(chunk.reshape(shape), dtype)
            for chunk, shape, dtype in zip(lax_shapes.split(arr, sizes), shapes, from_dtypes)]
