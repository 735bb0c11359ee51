"""``jaxlite.ops``: segment reductions (``jax.ops``), and the pre-2021 functional-update
API (``jax.ops.index_update`` and friends, kept because the tutorials use it; each
function warns and forwards to ``x.at[idx]``)."""
import warnings

from jaxlite._src.libraries.ops import segment_max, segment_min, segment_prod, segment_sum  # noqa: F401


def _deprecated(name, method):
  def fun(x, idx, y, indices_are_sorted=False, unique_indices=False):
    warnings.warn(f"jax.ops.{name} is deprecated: use x.at[idx].{method}(y) instead.",
                  DeprecationWarning, stacklevel=2)
    return getattr(x.at[idx], method)(y, indices_are_sorted=indices_are_sorted,
                                      unique_indices=unique_indices)
  fun.__name__ = name
  fun.__doc__ = f"Deprecated: ``x.at[idx].{method}(y)``."
  return fun


index_update = _deprecated("index_update", "set")
index_add = _deprecated("index_add", "add")
index_mul = _deprecated("index_mul", "multiply")
index_min = _deprecated("index_min", "min")
index_max = _deprecated("index_max", "max")
