"""``jaxlite.dlpack`` (``jax.dlpack``): arrays shared with other libraries through DLPack."""
from jaxlite._src.base import dtypes as _dtypes
from jaxlite._src.libraries.numpy.array_api import from_dlpack as _from_dlpack

# the element types DLPack carries to and from jaxlite, by name (JAX 0.10.2's list: no
# 4-bit ints, no 8-bit floats)
_SUPPORTED = frozenset((
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128", "bfloat16"))


def from_dlpack(external_array, device=None, copy=None):
  """An array holding the data of ``external_array``, any object with ``__dlpack__`` and
  ``__dlpack_device__`` (``jnp.from_dlpack``)."""
  return _from_dlpack(external_array, device=device, copy=copy)


def is_supported_dtype(dtype) -> bool:
  """Whether arrays of ``dtype`` can go through DLPack."""
  return _dtypes.dtype(dtype).name in _SUPPORTED
