"""``jnp.ufunc``: a universal function with NumPy's methods (``outer``, ``reduce``,
``accumulate``, ``at``, ``reduceat``), ``frompyfunc``, and ``jnp.add``, ``jnp.multiply``
and the other elementwise functions that JAX exports as ufunc objects.

Built on the finished ``jnp`` namespace: the ufunc objects take the names of its plain
functions, which ``jaxlite.numpy`` imports first and these replace.
"""
from __future__ import annotations

import numpy as np

from jaxlite._src.libraries.numpy import namespace as jnp
from jaxlite._src.libraries.numpy.indexing import unstack
from jaxlite._src.libraries.numpy.util import canonicalize_axis
from jaxlite._src.libraries.numpy.vectorize import vectorize

__all__ = ["ufunc", "frompyfunc"]


class ufunc:
  """A universal function built from a scalar function: call it elementwise with
  broadcasting, or use ``outer``, ``reduce``, ``accumulate``, ``at`` and ``reduceat``
  (``jax.numpy.ufunc``). ``reduce`` and ``accumulate`` need ``nin == 2, nout == 1``."""

  def __init__(self, func, /, nin, nout, *, name=None, nargs=None, identity=None,
               call=None, reduce=None, accumulate=None, at=None, reduceat=None):
    self.__name__ = name or getattr(func, "__name__", "<unnamed>")
    self._func, self.nin, self.nout = func, int(nin), int(nout)
    self.nargs = nargs or self.nin
    self.identity = identity
    self._call, self._reduce, self._accumulate = call, reduce, accumulate
    self._at, self._reduceat = at, reduceat

  def __repr__(self):
    return f"<jnp.ufunc '{self.__name__}'>"

  def __call__(self, *args, out=None, where=None):
    if out is not None:
      raise NotImplementedError(f"out argument of {self}")
    if where is not None:
      raise NotImplementedError(f"where argument of {self}")
    if self._call is not None:
      return self._call(*args)
    return vectorize(self._func)(*args)

  def outer(self, A, B, /):
    """``self(a, b)`` for every pair of elements of ``A`` and ``B``."""
    if self.nin != 2:
      raise ValueError("outer only supported for binary ufuncs")
    A, B = jnp.asarray(A), jnp.asarray(B)
    # both of rank A.ndim + B.ndim, so jax_numpy_rank_promotion='raise' refuses nothing
    return self(A.reshape(A.shape + (1,) * B.ndim), B.reshape((1,) * A.ndim + B.shape))

  def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None,
             where=None):
    """Fold ``self`` over ``axis`` from the left."""
    if self.nin != 2 or self.nout != 1:
      raise ValueError("reduce only supported for binary ufuncs with a single output")
    if out is not None or where is not None:
      raise NotImplementedError(f"out and where arguments of {self}.reduce")
    if self._reduce is not None:
      return self._reduce(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial)
    a = jnp.asarray(a, dtype=dtype)
    if axis is None:
      a, axis = jnp.ravel(a), 0
    axis = canonicalize_axis(axis, a.ndim)
    items = unstack(a, axis=axis)
    if initial is None and not items:
      if self.identity is None:
        raise ValueError(f"zero-size array to reduction operation {self.__name__} which "
                         "has no identity")
      initial = self.identity
    acc = None if initial is None else jnp.full(a.shape[:axis] + a.shape[axis + 1:],
                                                initial, a.dtype)
    for item in items:
      acc = item if acc is None else self(acc, item)
    return jnp.expand_dims(acc, axis) if keepdims else acc

  def accumulate(self, a, axis=0, dtype=None, out=None):
    """Running fold of ``self`` along ``axis``."""
    if self.nin != 2 or self.nout != 1:
      raise ValueError("accumulate only supported for binary ufuncs with a single output")
    if out is not None:
      raise NotImplementedError(f"out argument of {self}.accumulate")
    if self._accumulate is not None:
      return self._accumulate(a, axis=axis, dtype=dtype)
    a = jnp.asarray(a, dtype=dtype)
    axis = canonicalize_axis(axis, a.ndim)
    items = unstack(a, axis=axis)
    if not items:
      return a
    # the running values have the ufunc's result type (bool for logical_and of ints)
    out_dtype = jnp.result_type(self(items[0], items[0]))
    outs = [items[0].astype(out_dtype)]
    for item in items[1:]:
      outs.append(self(outs[-1], item).astype(out_dtype))
    return jnp.stack(outs, axis=axis)

  def at(self, a, indices, b=None, /, *, inplace=True):
    """``a`` with ``a[indices] = self(a[indices], b)`` applied, repeated indices in
    turn. Pass ``inplace=False``: JAX arrays are immutable."""
    if inplace:
      raise NotImplementedError("jnp.ufunc.at: JAX arrays are immutable; pass "
                                "inplace=False.")
    if self._at is not None:
      return self._at(a, indices, b)
    a = jnp.asarray(a)
    idx = np.asarray(indices).reshape(-1)
    bs = None if b is None else jnp.broadcast_to(jnp.asarray(b), idx.shape)
    for k, i in enumerate(idx):
      args = (a[i],) if bs is None else (a[i], bs[k])
      a = a.at[i].set(jnp.asarray(self(*args)).astype(a.dtype))
    return a

  def reduceat(self, a, indices, axis=0, dtype=None, out=None):
    """``reduce`` over each slice ``a[indices[i]:indices[i+1]]`` along ``axis``."""
    if out is not None:
      raise NotImplementedError(f"out argument of {self}.reduceat")
    if self._reduceat is not None:
      return self._reduceat(a, indices, axis=axis, dtype=dtype)
    a = jnp.asarray(a, dtype=dtype)
    axis = canonicalize_axis(axis, a.ndim)
    idx = [int(i) for i in np.asarray(indices).reshape(-1)]
    n = a.shape[axis]
    outs = []
    for k, start in enumerate(idx):
      stop = idx[k + 1] if k + 1 < len(idx) else n
      if stop <= start:
        outs.append(jnp.take(a, start, axis=axis))
      else:
        outs.append(self.reduce(jnp.take(a, jnp.arange(start, stop), axis=axis),
                                axis=axis))
    return jnp.stack(outs, axis=axis)


def frompyfunc(func, /, nin, nout, *, identity=None):
  """A ``jnp.ufunc`` from a scalar Python function of ``nin`` arguments."""
  return ufunc(func, nin, nout, identity=identity)


def _reduce_with(reduction, takes_dtype):
  """``ufunc.reduce`` by a ``jnp`` reduction (``sum`` for ``add``, ...)."""
  def reduce(a, *, axis, dtype, keepdims, initial):
    if takes_dtype:
      return reduction(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial)
    return reduction(jnp.asarray(a, dtype=dtype), axis=axis, keepdims=keepdims,
                     initial=initial)
  return reduce


def _accumulate_with(scan):
  """``ufunc.accumulate`` by a ``jnp`` running reduction (``cumsum`` for ``add``)."""
  return lambda a, *, axis, dtype: scan(a, axis=axis, dtype=dtype)


def _at_with(method):
  """``ufunc.at`` by an ``x.at[...]`` update (``add`` for ``add``)."""
  return lambda a, indices, b: getattr(jnp.asarray(a).at[indices], method)(b)


# JAX's jnp.add, jnp.multiply, ... are ufunc objects, with NumPy's identities; the
# elementwise call stays the plain function's, and reduce/accumulate/at use the matching
# reduction or scatter where there is one.
_UFUNCS = {
    "add": (2, 0, _reduce_with(jnp.sum, True), _accumulate_with(jnp.cumsum), "add"),
    "multiply": (2, 1, _reduce_with(jnp.prod, True), _accumulate_with(jnp.cumprod),
                 "multiply"),
    "maximum": (2, None, _reduce_with(jnp.max, False), None, "max"),
    "minimum": (2, None, _reduce_with(jnp.min, False), None, "min"),
    "subtract": (2, None, None, None, None),
    "bitwise_and": (2, -1, None, None, None), "bitwise_or": (2, 0, None, None, None),
    "bitwise_xor": (2, 0, None, None, None), "logical_and": (2, True, None, None, None),
    "logical_or": (2, False, None, None, None), "logical_xor": (2, False, None, None, None),
    "logaddexp": (2, -np.inf, None, None, None), "logaddexp2": (2, -np.inf, None, None, None),
    "negative": (1, None, None, None, None),
}
for _name, (_nin, _identity, _reduce, _accumulate, _at) in _UFUNCS.items():
  _fn = getattr(jnp, _name)
  globals()[_name] = ufunc(_fn, _nin, 1, name=_name, identity=_identity, call=_fn,
                           reduce=_reduce, accumulate=_accumulate,
                           at=None if _at is None else _at_with(_at))
  __all__.append(_name)
