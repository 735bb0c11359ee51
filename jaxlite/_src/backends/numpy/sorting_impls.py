"""NumPy implementations of the sorting primitives (sort, top_k) and the cumulative scans
(cumsum, cumprod, cummax, cummin, cumlogsumexp), with XLA's orders and rounding."""
import numpy as np

from jaxlite._src.backends.numpy.impls import complex_choose, impl_rules
from jaxlite._src.base import dtypes
from jaxlite._src.lax import sorting


def _sort(*operands, dimension, is_stable, num_keys):
  keys = [np.moveaxis(k, dimension, -1) for k in operands[:num_keys]]
  if num_keys == 1:
    perm = np.argsort(keys[0], axis=-1, kind="stable")
  else:
    # lexsort's last key is the primary one; its float keys treat -0.0 == 0.0 and put
    # NaNs last, as XLA's comparator does after canonicalizing them.
    perm = np.lexsort(keys[::-1], axis=-1)
  return [np.moveaxis(np.take_along_axis(np.moveaxis(o, dimension, -1), perm, -1), -1,
                      dimension) for o in operands]


def _total_order_key(x):
  """Integers ordered as XLA's total order of the floats ``x``: -NaN < -inf < ... < -0.0 <
  0.0 < ... < inf < NaN (the sign bit decides; a negative float's other bits count down)."""
  signed = x.view(np.dtype(f"int{8 * x.dtype.itemsize}"))
  return np.where(signed < 0, signed ^ np.iinfo(signed.dtype).max, signed)


def _top_k(x, *, k, axis):
  moved = np.moveaxis(x, axis, -1)
  n = moved.shape[-1]
  key = _total_order_key(moved) if dtypes.is_floating(moved.dtype) else moved
  # a stable ascending sort of the reversed keys, reversed again: descending order in
  # which ties keep the lower index first
  perm = np.argsort(key[..., ::-1], axis=-1, kind="stable")[..., ::-1][..., :k]
  indices = (n - 1 - perm).astype(np.int32)
  values = np.take_along_axis(moved, indices, -1)
  return [np.moveaxis(values, -1, axis), np.moveaxis(indices, -1, axis)]


def _scan(prim, accumulate, complex_combine=None, wide=False):
  def impl(x, *, axis, reverse):
    if x.shape[axis] == 0:
      return x
    dtype = x.dtype
    identity = sorting.scan_identity(prim, dtype)   # raises where XLA's init value would
    if complex_combine is not None and dtype.kind == "c":
      return _windowed_fold(x, axis, reverse, complex_combine, identity)
    y = np.flip(x, axis) if reverse else x
    if wide and dtype.itemsize < 4:
      y = y.astype(np.float32)
    with np.errstate(all="ignore"):
      out = accumulate(y, axis=axis, dtype=y.dtype)
    out = np.flip(out, axis) if reverse else out
    return out.astype(dtype, copy=False)
  return impl


def _windowed_fold(x, axis, reverse, combine, identity):
  """A scan as XLA runs it (a reduce_window): element i folds its window, ``x[:i + 1]``
  (``x[i:]`` if ``reverse``), in index order from ``identity``. For complex max, min and
  logaddexp this differs from a running fold of the flipped array (NaNs, rounding)."""
  moved = np.moveaxis(x, axis, 0)
  n = moved.shape[0]
  acc = np.full(moved.shape, identity, x.dtype)
  with np.errstate(all="ignore"):
    for k in range(n):
      if reverse:   # the k-th element of window i is x[i + k]
        acc[:n - k] = combine(acc[:n - k], moved[k:])
      else:         # the windows i >= k hold x[k] as their k-th element
        acc[k:] = combine(acc[k:], moved[k])
  return np.moveaxis(acc, 0, axis)


def _complex_logaddexp(x, y):
  """JAX's complex logaddexp: ``m + log1p(exp(x + y - 2 m))`` around the larger ``m`` of
  the two (XLA's complex max), the imaginary part wrapped into [-pi, pi)."""
  big = complex_choose(np.greater)(x, y)
  out = big + np.log1p(np.exp(x + y - big * 2))
  wrapped = np.fmod(out.imag + np.pi, 2 * np.pi)
  wrapped = np.where(wrapped < 0, wrapped + 2 * np.pi, wrapped) - np.pi
  return (out.real + 1j * wrapped).astype(x.dtype)


impl_rules.update({
    sorting.sort_p: _sort,
    sorting.top_k_p: _top_k,
    sorting.cumsum_p: _scan(sorting.cumsum_p, np.add.accumulate),
    sorting.cumprod_p: _scan(sorting.cumprod_p, np.multiply.accumulate),
    sorting.cummax_p: _scan(sorting.cummax_p, np.maximum.accumulate,
                            complex_choose(np.greater)),
    sorting.cummin_p: _scan(sorting.cummin_p, np.minimum.accumulate,
                            complex_choose(np.less)),
    sorting.cumlogsumexp_p: _scan(sorting.cumlogsumexp_p, np.logaddexp.accumulate,
                                  _complex_logaddexp, wide=True),
})
