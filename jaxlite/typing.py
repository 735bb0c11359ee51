"""Type annotations for JAX-style code (``jax.typing``).

``ArrayLike`` is what jaxlite's functions accept as an array argument: jaxlite arrays
(and tracers, which ``isinstance(x, jaxlite.Array)`` accepts), NumPy arrays and scalars,
and Python scalars. ``DTypeLike`` is what they accept as a dtype. Both are meant for
annotations; for runtime checks use ``isinstance(x, jaxlite.Array)``.
"""
from typing import Any, Protocol, Union

import numpy as np

from jaxlite._src.core.array import PublicArray as _Array


class SupportsDType(Protocol):
  """Anything with a ``dtype`` attribute (arrays, ``ShapeDtypeStruct``...)."""

  @property
  def dtype(self) -> np.dtype: ...


ArrayLike = Union[_Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]
DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]

del Any, Protocol, Union
