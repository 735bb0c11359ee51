"""Indexing functions whose jaxprs must print exactly as JAX 0.10 prints them.

``cases(jnp, lax)`` builds them from either library, so the same definitions serve
``make_indexing_jaxprs.py`` (run with real JAX) and ``tests/test_indexing.py``.
"""
import numpy as np


def cases(jnp, lax):
  f3 = np.zeros(3, np.float32)
  f34 = np.zeros((3, 4), np.float32)
  f234 = np.zeros((2, 3, 4), np.float32)
  ia = np.array([0, 2], np.int32)
  i32 = np.int32
  return {
      "static_mix": (lambda x: (x[1:], x[::2], x[::-1], x[..., None], x[1]), (f3,)),
      "negative_int": (lambda x: x[-1], (f3,)),
      "two_ints": (lambda x: x[1, 2], (f34,)),
      "column": (lambda x: x[:, 1], (f34,)),
      "reversed_step": (lambda x: x[::-2], (np.zeros(5, np.float32),)),
      "newaxis_between": (lambda x: x[:, None, 1:], (f34,)),
      "ellipsis_int": (lambda x: x[..., 0], (f234,)),
      "full_slice": (lambda x: x[:], (f34,)),
      "empty_tuple": (lambda x: x[()], (f34,)),
      "traced_weak_scalar": (lambda x, i: x[i], (f3, 1)),
      "traced_scalar": (lambda x, i: x[i], (f3, i32(1))),
      "traced_weak_scalar_2d": (lambda x, i: x[i], (f34, 1)),
      "traced_scalar_and_slice": (lambda x, i: x[i, 1:3], (f34, 1)),
      "traced_scalar_second_axis": (lambda x, i: x[:, i], (f34, i32(1))),
      "traced_two_scalars": (lambda x, i, j: x[i, j], (f34, i32(1), i32(2))),
      "traced_int8_scalar": (lambda x, i: x[i], (f3, np.int8(1))),
      "traced_array": (lambda x, i: x[i], (f34, ia)),
      "traced_array_second_axis": (lambda x, i: x[:, i], (f34, ia)),
      "traced_two_arrays": (lambda x, i, j: x[i, j], (f34, ia, ia)),
      "separated_arrays": (lambda x, i, j: x[i, :, j], (f234, ia[:1], ia)),
      "array_and_int": (lambda x, i: x[i, 1], (f34, ia)),
      "array_2d": (lambda x, i: x[i], (f3, np.zeros((2, 2), np.int32))),
      "array_and_step": (lambda x, i: x[i, ::2], (f34, ia)),
      "array_and_reversed": (lambda x, i: x[i, ::-1], (f34, ia)),
      "array_and_newaxis": (lambda x, i: x[None, i], (f34, ia)),
      "numpy_constant_index": (lambda x: x[np.array([0, 2])], (f3,)),
      "scalar_bool": (lambda x: x[True], (f3,)),
      "int8_array": (lambda x, i: x[i], (f3, np.array([1], np.int8))),
      "uint8_array": (lambda x, i: x[i], (f3, np.array([1], np.uint8))),
      "set_traced_scalar": (lambda x, i: x.at[i].set(5.), (f3, 1)),
      "set_static": (lambda x: x.at[1].set(5.), (f3,)),
      "set_slice": (lambda x: x.at[1:].set(5.), (f3,)),
      "set_array": (lambda x, i, y: x.at[i].set(y), (f3, ia, np.zeros(2, np.float32))),
      "set_row": (lambda x, i: x.at[i].set(1.), (f34, 1)),
      "set_int_into_float": (lambda x: x.at[0].set(2), (f3,)),
      "set_float_into_int": (lambda x: x.at[0].set(1.5), (np.zeros(3, np.int32),)),
      "set_reversed": (lambda x: x.at[::-1].set(np.arange(3, dtype=np.float32)), (f3,)),
      "set_newaxis": (lambda x: x.at[None, 0].set(1.), (f3,)),
      "add": (lambda x, i: x.at[i].add(5.), (f3, ia)),
      "subtract": (lambda x, i: x.at[i].subtract(5.), (f3, ia)),
      "multiply": (lambda x, i: x.at[i].multiply(5.), (f3, ia)),
      "min": (lambda x, i: x.at[i].min(5.), (f3, ia)),
      "max": (lambda x, i: x.at[i].max(5.), (f3, ia)),
      "divide": (lambda x, i: x.at[i].divide(2.), (f3, ia)),
      "power": (lambda x, i: x.at[i].power(2.), (f3, ia)),
      "get_fill": (lambda x, i: x.at[i].get(mode="fill"), (f3, 1)),
      "get_fill_int": (lambda x, i: x.at[i].get(mode="fill"), (np.zeros(3, np.int32), ia)),
      "get_clip": (lambda x, i: x.at[i].get(mode="clip"), (f3, ia)),
      "dynamic_slice_in_dim": (lambda x, i: lax.dynamic_slice_in_dim(x, i, 2, 1),
                               (f34, i32(1))),
      "dynamic_update_slice_in_dim": (
          lambda x, u, i: lax.dynamic_update_slice_in_dim(x, u, i, 0),
          (f34, np.zeros((1, 4), np.float32), i32(1))),
  }
