"""``jax.experimental.sparse``: the part of it jaxlite has, the ``BCOO`` format.

JAX's module is a whole sparse library (``BCOO``, ``BCSR``, ``sparsify``, sparse
primitives). jaxlite has ``BCOO`` with no batch or dense dimensions: a matrix or array
stored as ``data`` (nse,) and ``indices`` (nse, ndim), a pytree, with ``fromdense``,
``from_scipy_sparse``, ``todense``, ``T``/``transpose``, ``sum`` and products with dense
arrays (``@`` on either side, broadcasting batch axes as ``jnp.matmul``; ``*`` by a
scalar). numpyro imports it at module level (its CAR distribution multiplies a sparse
adjacency matrix by a stack of vectors). Other names raise ImportError ("cannot import
name").
"""
import numpy as np

import jaxlite.numpy as jnp
from jaxlite._src.base import tree

__all__ = ["BCOO"]


@tree.register_pytree_node_class
class BCOO:
  """A sparse array in coordinate format: ``todense()[tuple(indices.T)] += data``."""

  def __init__(self, args, *, shape, indices_sorted=False, unique_indices=False):
    data, indices = args
    self.data = jnp.asarray(data)
    self.indices = jnp.asarray(indices)
    self.shape = tuple(int(d) for d in shape)
    self.indices_sorted = indices_sorted
    self.unique_indices = unique_indices
    if self.indices.ndim != 2 or self.indices.shape[1] != len(self.shape):
      raise NotImplementedError(
          "jaxlite's BCOO has no batch or dense dimensions: indices must have shape "
          f"(nse, {len(self.shape)}), got {self.indices.shape}")

  dtype = property(lambda self: self.data.dtype)
  ndim = property(lambda self: len(self.shape))
  nse = property(lambda self: self.data.shape[0])
  size = property(lambda self: int(np.prod(self.shape)))

  def tree_flatten(self):
    return (self.data, self.indices), (self.shape, self.indices_sorted, self.unique_indices)

  @classmethod
  def tree_unflatten(cls, aux, children):
    obj = cls.__new__(cls)
    obj.data, obj.indices = children
    obj.shape, obj.indices_sorted, obj.unique_indices = aux
    return obj

  @classmethod
  def fromdense(cls, mat, *, nse=None, index_dtype=np.int32):
    """The nonzero entries of a concrete dense array."""
    mat = np.asarray(mat)
    idx = np.argwhere(mat != 0).astype(index_dtype)
    if nse is not None:
      idx = idx[:nse]
    return cls((mat[tuple(idx.T)], idx), shape=mat.shape, indices_sorted=True,
               unique_indices=True)

  @classmethod
  def from_scipy_sparse(cls, mat, *, index_dtype=None):
    """A SciPy sparse matrix as a BCOO matrix."""
    coo = mat.tocoo()
    index_dtype = np.int32 if index_dtype is None else index_dtype
    indices = np.stack([coo.row, coo.col], axis=1).astype(index_dtype)
    return cls((coo.data, indices), shape=coo.shape)

  def todense(self):
    """The dense array (duplicate indices add up)."""
    out = jnp.zeros(self.shape, self.dtype)
    return out.at[tuple(self.indices[:, i] for i in range(self.ndim))].add(self.data)

  def transpose(self, axes=None):
    axes = tuple(reversed(range(self.ndim))) if axes is None else tuple(axes)
    return BCOO((self.data, self.indices[:, list(axes)]),
                shape=tuple(self.shape[a] for a in axes))

  T = property(transpose)

  def sum(self, axis=None, keepdims=False):
    return self.todense().sum(axis=axis, keepdims=keepdims)

  def __matmul__(self, other):
    other = jnp.asarray(other)
    if self.ndim != 2:
      raise NotImplementedError("jaxlite's BCOO multiplies matrices only")
    if other.ndim == 0:
      raise ValueError("matmul input operand 1 must have ndim at least 1, but it has ndim 0")
    # As jnp.matmul: a vector's only axis, else the second-to-last, meets the columns;
    # moved to the front, the product is one gather of rows and one scatter-add.
    axis = max(other.ndim - 2, 0)
    _check_contracting(self.shape[-1], other.shape[axis])
    front = jnp.moveaxis(other, axis, 0)
    rows, cols = self.indices[:, 0], self.indices[:, 1]
    products = self.data.reshape((-1,) + (1,) * (front.ndim - 1)) * front[cols]
    out = jnp.zeros((self.shape[0],) + front.shape[1:], products.dtype)
    return jnp.moveaxis(out.at[rows].add(products), 0, axis)

  def __rmatmul__(self, other):
    other = jnp.asarray(other)
    if other.ndim == 0:
      raise ValueError("matmul input operand 0 must have ndim at least 1, but it has ndim 0")
    _check_contracting(other.shape[-1], self.shape[0])
    if other.ndim == 1:
      return self.T @ other
    return jnp.swapaxes(self.T @ jnp.swapaxes(other, -1, -2), -1, -2)

  def __mul__(self, other):
    if np.ndim(other) != 0:
      return self.todense() * other
    return BCOO((self.data * other, self.indices), shape=self.shape)

  __rmul__ = __mul__

  def __neg__(self):
    return BCOO((-self.data, self.indices), shape=self.shape)

  def __repr__(self):
    return f"BCOO({self.dtype.name}{list(self.shape)}, nse={self.nse})"


def _check_contracting(lhs, rhs):
  """Raise JAX's error when a product's contracted sizes differ."""
  if lhs != rhs:
    raise TypeError("dot_general requires contracting dimensions to have the same shape, "
                    f"got ({lhs},) and ({rhs},).")
