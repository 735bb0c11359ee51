"""Calls that use the parameters jaxlite took over from JAX 0.10.2's signatures (keyword
names, new keywords, ``out_sharding``, defaults), for ``make_surface_params_reference.py``
(run with real JAX) and ``tests/test_surface_params.py``.

``cases(jax)`` builds them from either library (its top-level package): each is a thunk
whose result (or error) is recorded by ``outcome``.
"""
import warnings

import numpy as np


def outcome(thunk):
  """What ``thunk()`` gives: ``{"value", "dtype"}`` of its array leaves, or ``{"error"}``
  (the class name) with the first line of the message; warnings as a list of classes."""
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    try:
      out = thunk()
    except Exception as e:  # noqa: BLE001 - the class and message are what is recorded
      return {"error": type(e).__name__, "message": str(e).split("\n")[0]}
  leaves = out if isinstance(out, (tuple, list)) else [out]
  result = {"value": [np.asarray(x).tolist() for x in leaves],
            "dtype": [str(np.asarray(x).dtype) for x in leaves]}
  kinds = sorted({w.category.__name__ for w in caught
                  if issubclass(w.category, (DeprecationWarning, UserWarning))})
  if kinds:
    result["warnings"] = kinds
  return result


def _with_nondiff_name(jax):
  """A custom_jvp whose second argument (n) is non-differentiable by name."""
  @jax.custom_jvp
  def f(x, n):
    return x ** n
  f = jax.custom_jvp(f.fun, nondiff_argnames=("n",))
  f.defjvp(lambda n, primals, tangents: (f(primals[0], n),
                                         n * primals[0] ** (n - 1) * tangents[0] * 10.))
  return f


def _vjp_with_nondiff_name(jax):
  f = jax.custom_vjp(lambda x, n: x ** n, nondiff_argnames=("n",))
  f.defvjp(lambda x, n: (x ** n, x), lambda n, x, g: (g * n * x ** (n - 1) * 10.,))
  return f


def cases(jax):
  jnp, lax = jax.numpy, jax.lax
  P = jax.sharding.PartitionSpec
  x = jnp.arange(6.).reshape(2, 3)
  v = jnp.arange(3.)
  i, j = np.array([0, 1, 2]), np.array([3, 0, 5])
  empty = jax.typeof(v).sharding      # the sharding in every array's type: asks for nothing
  return {
      # lax.dot: JAX's newer signature
      "dot_matrix_vector": lambda: lax.dot(x, v),
      "dot_vector_vector": lambda: lax.dot(v, v, preferred_element_type=jnp.float32),
      "dot_dimension_numbers": lambda: lax.dot(
          jnp.ones((2, 2, 3)), jnp.ones((2, 3, 4)),
          dimension_numbers=(((2,), (1,)), ((0,), (0,)))),
      "dot_int_dimension_numbers": lambda: lax.dot(
          jnp.ones((2, 2, 3)), jnp.ones((2, 3, 4)), dimension_numbers=((2, 1), (0, 0))),
      "dot_general_int_dimension_numbers": lambda: lax.dot_general(
          jnp.ones((2, 3)), jnp.ones((3, 4)), ((1, 0), ((), ()))),
      "dot_needs_dimension_numbers": lambda: lax.dot(jnp.ones((2, 2, 3)), v),
      "dot_positional_precision_refused": lambda: lax.dot(x, v, None),
      # out_sharding where JAX takes it
      "dot_out_sharding_empty_mesh": lambda: lax.dot(x, v, out_sharding=empty),
      "dot_out_sharding_spec_without_mesh": lambda: lax.dot(x, v, out_sharding=P()),
      "dot_out_sharding_bad_type": lambda: lax.dot(x, v, out_sharding="x"),
      "reshape_out_sharding": lambda: lax.reshape(x, (3, 2), out_sharding=empty),
      "reshape_out_sharding_spec_without_mesh": lambda: lax.reshape(x, (3, 2),
                                                                    out_sharding=P()),
      "broadcast_out_sharding": lambda: lax.broadcast(v, (2,), out_sharding=empty),
      "reduce_sum_out_sharding": lambda: lax.reduce_sum(x, (1,), out_sharding=empty),
      "reduce_sum_out_sharding_bad_type": lambda: lax.reduce_sum(x, (1,), out_sharding=3),
      "method_reshape_out_sharding": lambda: x.reshape(3, 2, out_sharding=empty),
      "method_reshape_spec_without_mesh": lambda: x.reshape(6, out_sharding=P()),
      "at_get_out_sharding": lambda: v.at[1:].get(out_sharding=empty),
      "at_set_out_sharding": lambda: v.at[1].set(7., out_sharding=empty),
      "at_add_spec_without_mesh": lambda: v.at[1].add(7., out_sharding=P()),
      "at_divide_out_sharding": lambda: v.at[1].divide(2., out_sharding=empty),
      "at_apply_takes_no_out_sharding": lambda: v.at[1].apply(jnp.sin, out_sharding=empty),
      "initializers_zeros_positional_out_sharding": lambda: jax.nn.initializers.zeros(
          jax.random.key(0), (2,), jnp.float32, None),
      "initializers_ones_out_sharding": lambda: jax.nn.initializers.ones(
          jax.random.key(0), (2,), out_sharding=empty),
      # array methods with JAX's method signatures
      "method_std_refuses_mean": lambda: x.std(mean=0.),
      "method_var_correction": lambda: x.var(correction=1),
      "method_argsort_refuses_dtype": lambda: v.argsort(dtype=jnp.int32),
      "method_dot_refuses_out_sharding": lambda: v.dot(v, out_sharding=empty),
      "method_nonzero": lambda: jnp.array([0, 2, 0, 3]).nonzero(fill_value=9, size=3),
      "method_compress": lambda: v.compress(jnp.array([True, False, True]), out=None),
      "method_transpose_args": lambda: x.transpose(1, 0),
      # lax keywords
      "dynamic_slice_in_dim_no_wrap": lambda: lax.dynamic_slice_in_dim(
          v, -1, 2, allow_negative_indices=False),
      "dynamic_slice_in_dim_wrap": lambda: lax.dynamic_slice_in_dim(v, -1, 1),
      "dynamic_index_in_dim_no_wrap": lambda: lax.dynamic_index_in_dim(
          v, -1, keepdims=False, allow_negative_indices=False),
      "dynamic_update_slice_in_dim_no_wrap": lambda: lax.dynamic_update_slice_in_dim(
          v, jnp.array([9.]), -1, 0, allow_negative_indices=False),
      "dynamic_update_index_in_dim_wrap": lambda: lax.dynamic_update_index_in_dim(
          v, 9., -1, 0, allow_negative_indices=True),
      "mul_out_dtype": lambda: lax.mul(jnp.array([1.5, 2.], jnp.bfloat16),
                                       jnp.array([2., 3.], jnp.bfloat16),
                                       out_dtype=jnp.float32),
      "nextafter_keywords": lambda: lax.nextafter(x1=jnp.float32(1.), x2=jnp.float32(2.)),
      "broadcast_shapes": lambda: lax.broadcast_shapes((2, 1), (3,)),
      "switch_operand_none": lambda: lax.switch(0, [lambda o: jnp.float32(o is None)],
                                                operand=None),
      "switch_operand_and_operands": lambda: lax.switch(0, [lambda *o: 1.], 1., operand=2.),
      "all_gather_bad_to": lambda: jax.vmap(
          lambda a: lax.all_gather(a, "i", to="bogus"), axis_name="i")(v),
      "dtype_refuses_canonicalize": lambda: lax.dtype(1., canonicalize=True),
      # jax.numpy keywords
      "ravel_multi_index_wrap": lambda: jnp.ravel_multi_index((i, j), (2, 4), mode="wrap"),
      "ravel_multi_index_order_f": lambda: jnp.ravel_multi_index((i, j), (2, 4),
                                                                 mode="wrap", order="F"),
      "ravel_multi_index_dtype": lambda: jnp.ravel_multi_index((i, j), (2, 4), mode="clip",
                                                               dtype="uint8"),
      "ravel_multi_index_raise": lambda: jnp.ravel_multi_index((i, j), (3, 6)),
      "ravel_multi_index_out_of_range": lambda: jnp.ravel_multi_index((i, j), (3, 5)),
      "ravel_multi_index_small_dtype": lambda: jnp.ravel_multi_index(
          (i, j), (300, 6), dtype="int8"),
      "ravel_multi_index_bad_mode": lambda: jnp.ravel_multi_index((i, j), (3, 6),
                                                                  mode="bogus"),
      "gcd_keywords": lambda: jnp.gcd(x1=jnp.array([12, 9]), x2=jnp.array([8, 6])),
      "lcm_keywords": lambda: jnp.lcm(x1=jnp.array([4, 3]), x2=jnp.array([6, 5])),
      "isreal_keyword": lambda: jnp.isreal(x=jnp.array([1 + 0j, 1j])),
      "issubdtype_keywords": lambda: jnp.issubdtype(arg1=jnp.int8, arg2=jnp.integer),
      "outer_out_refused": lambda: jnp.outer(v, v, out=v),
      "array_positional_ndmin": lambda: jnp.array([1, 2], None, True, "K", 2),
      "array_positional_conflict": lambda: jnp.array([1, 2], None, False, copy=False),
      "einsum_path_default": lambda: jnp.einsum_path("ij,jk->ik", x, x.T)[0],
      # jax.random: dtype names the implementation
      "key_dtype": lambda: jax.random.key_data(jax.random.key(3, dtype="threefry2x32")),
      "key_dtype_object": lambda: jax.random.key_data(
          jax.random.key(3, dtype=jax.random.key_dtype("threefry2x32"))),
      "key_impl_and_dtype": lambda: jax.random.key(3, impl="threefry2x32",
                                                   dtype="threefry2x32"),
      "wrap_key_data_dtype": lambda: jax.random.key_data(jax.random.wrap_key_data(
          np.array([0, 3], np.uint32), dtype="threefry2x32")),
      # other modules
      "pascal_kind_none": lambda: jax.scipy.linalg.pascal(3, kind=None),
      "invpascal_default": lambda: jax.scipy.linalg.invpascal(3),
      "segment_sum_out_sharding": lambda: jax.ops.segment_sum(
          v, jnp.array([0, 0, 1]), 2, out_sharding=empty),
      "segment_max_spec_without_mesh": lambda: jax.ops.segment_max(
          v, jnp.array([0, 0, 1]), 2, out_sharding=P()),
      "linalg_tensordot_out_sharding": lambda: jnp.linalg.tensordot(x, x, axes=2,
                                                                    out_sharding=empty),
      "tree_reduce_initializer_none": lambda: jax.tree_util.tree_reduce(
          lambda a, b: (a or 0) + b, [1, 2], None),
      "dtypes_issubdtype_keywords": lambda: jax.dtypes.issubdtype(a=jnp.bfloat16,
                                                                  b=jnp.floating),
      "zero_from_primal_keyword": lambda: jax.custom_derivatives.zero_from_primal(val=v),
      "linear_call_keywords": lambda: jax.custom_derivatives.linear_call(
          fun=lambda r, a: a * r, fun_transpose=lambda r, ct: ct * r,
          residual_args=2., linear_args=v),
      "custom_jvp_nondiff_argnames": lambda: jax.grad(_with_nondiff_name(jax))(2., 3),
      "custom_vjp_nondiff_argnames": lambda: jax.grad(_vjp_with_nondiff_name(jax))(2., 3),
      "shape_dtype_struct_keywords": lambda: np.array(jax.eval_shape(
          jnp.sin, jax.ShapeDtypeStruct((2,), jnp.float32, weak_type=True,
                                        sharding=None)).weak_type),
      "shape_dtype_struct_positional_weak_type": lambda: jax.ShapeDtypeStruct(
          (2,), jnp.float32, True),
      "scalar_type_needs_a_value": lambda: jnp.float32(),
      "scalar_type_keyword": lambda: jnp.int16(x=3),
      # jax
      "vmap_sum_match": lambda: jax.vmap(lambda a: a * 2., out_axes=None,
                                         sum_match=True)(v),
      "vmap_sum_match_unbatched": lambda: jax.vmap(lambda a: jnp.float32(2.), out_axes=None,
                                                   sum_match=True)(v),
      "vjp_reduce_axes": lambda: jax.vjp(jnp.sin, v, reduce_axes=("i",)),
      "checkpoint_concrete_removed": lambda: jax.checkpoint(jnp.sin, concrete=True),
      "checkpoint_static_argnames": lambda: jax.grad(jax.checkpoint(
          lambda a, n: a ** n, static_argnames="n"))(2., 3),
      "remat_concrete_removed": lambda: jax.remat(jnp.sin, concrete=False),
      "jit_none": lambda: jax.jit(None),
      "jit_fun_keyword": lambda: jax.jit(fun=jnp.sin),
      "jit_as_decorator_factory": lambda: jax.jit(static_argnums=0)(
          lambda n, a: a * n)(2, v),
      "jit_abstracted_axes_refused": lambda: jax.jit(jnp.sin, abstracted_axes=None),
      "local_devices_unknown_process": lambda: jax.local_devices(1),
      "local_devices_count": lambda: len(jax.local_devices(0, "cpu")),
      "devices_backend_keyword": lambda: len(jax.devices(backend="cpu")),
      "pmap_global_arg_shapes_refused": lambda: jax.pmap(jnp.sin, global_arg_shapes=None),
      "shard_map_check_rep_refused": lambda: jax.shard_map(
          jnp.sin, mesh=jax.make_mesh((1,), ("x",)), out_specs=P(), check_rep=True),
      "transfer_guard_needs_a_value": lambda: jax.transfer_guard_host_to_device().__enter__(),
      "dtype_promotion_needs_a_value": lambda: jax.numpy_dtype_promotion().__enter__(),
  }
