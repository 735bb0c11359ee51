"""JAX's private ``jax._src.interpreters.pxla`` as extended dtypes' rules use it, served
under that name by the alias: ``global_result_handlers``, the table from an aval type to
the maker of the function that turns a computed physical value into an array.

A rules class's ``global_sharded_result_handler`` (core/extended.py's ``wrap`` asks it
for the array type of its dtype) builds on the ``ShapedArray`` handler, as flax's fp8
metadata does. In jaxlite a computed value already is an Array (the "buffers" JAX's
handlers assemble), so that handler hands it back as it is.
"""
from jaxlite._src.core.core import ShapedArray


def _array_result_handler(aval, sharding, committed):
  """The maker of ``aval``'s result handler: the computed Array is the array."""
  del aval, sharding, committed   # (the Array carries its own)
  return lambda value: value


global_result_handlers = {ShapedArray: _array_result_handler}
