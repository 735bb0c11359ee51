"""``jax.ds`` (dynamic) slices as indices: reads, indexed updates, under jit, vmap and grad.

``cases(jax)`` builds them from either library (its top-level module), so the same
definitions serve ``make_ds_reference.py`` (run with real JAX) and
``tests/test_ds_indexing.py``. Each case is ``(function, args)``; ``value_cases`` are
compared by value, ``jaxpr_cases`` by their printed jaxprs.
"""
import numpy as np


def value_cases(jax):
  jnp, ds = jax.numpy, jax.ds
  x = jnp.arange(10., dtype=np.float32)
  y = jnp.arange(12., dtype=np.float32).reshape(3, 4)
  return {
      "get": (lambda x: x[ds(2, 3)], (x,)),
      "get_negative_start_wraps": (lambda x: x[ds(-3, 2)], (x,)),
      "get_out_of_bounds_clamps": (lambda x: x[ds(8, 4)], (x,)),
      "get_strided": (lambda x: x[ds(1, 3, 3)], (x,)),
      "get_strided_negative_clamps": (lambda x: x.at[ds(-4, 2, 2)].get(), (x,)),
      "get_stride_zero": (lambda x: x[ds(2, 3, 0)], (x,)),
      "get_fill": (lambda x: x.at[ds(8, 4)].get(mode="fill", fill_value=-9.), (x,)),
      "at_get": (lambda x: x.at[ds(2, 3)].get(), (x,)),
      "set": (lambda x: x.at[ds(2, 3)].set(-1.), (x,)),
      "set_negative_start_dropped": (lambda x: x.at[ds(-3, 2)].set(-1.), (x,)),
      "set_out_of_bounds_dropped": (lambda x: x.at[ds(8, 4)].set(-1.), (x,)),
      "set_out_of_bounds_clip": (lambda x: x.at[ds(8, 4)].set(
          jnp.array([1., 2., 3., 4.]), mode="clip"), (x,)),
      "set_strided_partly_out": (lambda x: x.at[ds(5, 3, 3)].set(-1.), (x,)),
      "set_size_zero": (lambda x: x.at[ds(2, 0)].set(1.), (x,)),
      "set_whole_axis_ignores_start": (lambda x: x.at[ds(3, 10)].set(1.), (x,)),
      "add_strided": (lambda x: x.at[ds(1, 3, 3)].add(5.), (x,)),
      "multiply_two_ds": (lambda y: y.at[ds(1, 2), ds(2, 2)].multiply(2.), (y,)),
      "min": (lambda x: x.at[ds(1, 3)].min(0.5), (x,)),
      "max": (lambda x: x.at[ds(1, 3)].max(2.5), (x,)),
      "apply": (lambda x: x.at[ds(1, 3)].apply(jnp.negative), (x,)),
      "divide": (lambda x: x.at[ds(1, 3)].divide(2.), (x,)),
      "power": (lambda x: x.at[ds(1, 3)].power(2.), (x,)),
      "subtract": (lambda x: x.at[ds(1, 3)].subtract(2.), (x,)),
      "set_row_entry": (lambda y: y.at[1, ds(1, 2)].set(jnp.array([7., 8.])), (y,)),
      "set_after_ellipsis": (lambda y: y.at[..., ds(1, 2)].set(0.), (y,)),
      "set_after_newaxis": (lambda y: y.at[None, ds(1, 2)].set(0.), (y,)),
      "set_with_index_array": (lambda y: y.at[jnp.array([0, 2]), ds(1, 2)].set(0.), (y,)),
      "set_int8_start": (lambda x: x.at[ds(jnp.array(3, jnp.int8), 2)].set(1.), (x,)),
      "add_uint32_start": (lambda x: x.at[ds(jnp.array(3, jnp.uint32), 2)].add(1.), (x,)),
      "jit_add": (jax.jit(lambda x, i: x.at[ds(i, 3)].add(1.)), (x, 4)),
      "jit_set_negative_dropped": (jax.jit(lambda x, i: x.at[ds(i, 3)].set(0.)), (x, -2)),
      "jit_get_negative_wraps": (jax.jit(lambda x, i: x[ds(i, 3)]), (x, -2)),
      "jit_set_strided": (jax.jit(lambda x, i: x.at[ds(i, 3, 2)].set(0.)), (x, 3)),
      "jit_two_traced_starts": (jax.jit(lambda y, i, j: y.at[ds(i, 2), ds(j, 3)].add(1.)),
                                (y, 1, np.int32(1))),
      "vmap_set": (jax.vmap(lambda x, i: x.at[ds(i, 2)].set(0.)),
                   (y, np.array([0, 1, 2], np.int32))),
      "vmap_get": (jax.vmap(lambda x, i: x[ds(i, 2)]), (y, np.array([0, 1, 3], np.int32))),
      "vmap_add_values": (jax.vmap(lambda x, v: x.at[ds(1, 2)].add(v)),
                          (y, np.arange(6., dtype=np.float32).reshape(3, 2))),
      "grad_multiply": (jax.grad(lambda x, i: (x.at[ds(i, 3)].multiply(3.) ** 2).sum()),
                        (x, 2)),
      "grad_get": (jax.grad(lambda x, i: (x[ds(i, 3)] ** 2).sum()), (x, 2)),
      "grad_set_values": (jax.grad(lambda v, x: (x.at[ds(2, 3)].set(v) ** 2).sum()),
                          (np.array([1., 2., 3.], np.float32), x)),
  }


def jaxpr_cases(jax):
  ds = jax.ds
  x = np.zeros(10, np.float32)
  y = np.zeros((3, 4), np.float32)
  return {
      "set_traced_start": (lambda x, i: x.at[ds(i, 3)].set(0.), (x, 1)),
      "get_traced_start": (lambda x, i: x[ds(i, 3)], (x, 1)),
      "add_strided": (lambda x: x.at[ds(1, 3, 2)].add(1.), (x,)),
      "get_two_ds": (lambda y, i: y[ds(i, 2), ds(1, 2)], (y, 1)),
      "set_int_and_ds": (lambda y, i: y.at[0, ds(i, 2)].set(1.), (y, 1)),
  }


def error_cases(jax):
  """Functions that must raise JAX's error class."""
  ds = jax.ds
  x = jax.numpy.zeros(10, np.float32)
  return {
      "set_traced_size": (jax.jit(lambda x, n: x.at[ds(1, n)].set(0.)), (x, 2)),
      "set_size_past_the_axis": (lambda x: x.at[ds(2, 11)].set(1.), (x,)),
      "get_size_past_the_axis": (lambda x: x[ds(2, 11)], (x,)),
  }
