"""vmap cases whose jaxprs are compared with JAX's (see make_vmap_jaxprs.py).

``cases(jax, jnp, lax)`` takes the modules so that the same code builds the functions
for real JAX (to record the reference) and for jaxlite (to test).
"""
import numpy as np


def cases(jax, jnp, lax):
  vmap = jax.vmap
  f32 = lambda *shape: np.ones(shape, np.float32)
  i32 = lambda n: np.arange(n, dtype=np.int32)
  return {
      "dot_both_batched": (vmap(jnp.dot), (f32(3, 4), f32(3, 4))),
      "matmul_lhs_batched_axis_1": (vmap(lambda x, y: x @ y, in_axes=(1, None)),
                                    (f32(4, 3, 5), f32(5, 2))),
      "matmul_rhs_batched": (vmap(lambda x, y: x @ y, in_axes=(None, 0)),
                             (f32(4, 5), f32(3, 5, 2))),
      "sum_plus_x": (vmap(lambda x: jnp.sum(x) + x), (f32(3, 4),)),
      "sin_in_out_axes_1": (vmap(lambda x: jnp.sin(x) * 2, in_axes=1, out_axes=1),
                            (f32(3, 4),)),
      "add_unbatched_operand": (vmap(lambda x, y: x + y, in_axes=(0, None)),
                                (f32(3, 4), f32(4))),
      "add_different_axes": (vmap(lambda x, y: x + y, in_axes=(1, 0)),
                             (f32(4, 3), f32(3, 4))),
      "select_unbatched_case": (vmap(lambda x, y: lax.select(x > 0, x, y),
                                     in_axes=(0, None)), (f32(3, 4), f32(4))),
      "argmax_axis_1": (vmap(jnp.argmax, in_axes=1), (f32(4, 3),)),
      "reshape_axis_1": (vmap(lambda x: x.reshape(-1), in_axes=1), (f32(4, 3, 2),)),
      "transpose_axis_1": (vmap(lambda x: x.T, in_axes=1), (f32(4, 3, 2),)),
      "dynamic_slice_both_batched": (vmap(lambda x, i: lax.dynamic_slice(x, (i,), (2,))),
                                     (f32(3, 5), i32(3))),
      "dynamic_slice_index_batched": (
          vmap(lambda x, i: lax.dynamic_slice(x, (i,), (2,)), in_axes=(None, 0)),
          (f32(5), i32(3))),
      "dynamic_update_slice_batched": (
          vmap(lambda x, i, u: lax.dynamic_update_slice(x, u, (i,))),
          (f32(3, 5), i32(3), f32(3, 2))),
      "take_batched_index": (vmap(lambda x, i: x[i]), (f32(3, 5), i32(3))),
      "at_add_batched_index": (vmap(lambda x, i: x.at[i].add(1.)), (f32(3, 5), i32(3))),
      "iota_plus_x": (vmap(lambda x: lax.iota(jnp.int32, 4) + x),
                      (np.ones((3, 4), np.int32),)),
      "jit_axis_1": (vmap(jax.jit(lambda x: jnp.sin(x) * 2), in_axes=1), (f32(2, 3),)),
      "axis_index": (vmap(lambda x: lax.axis_index("i") + x, axis_name="i"),
                     (np.ones(3, np.int32),)),
  }
