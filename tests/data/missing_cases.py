"""Calls whose results must be JAX 0.10's: one-argument ``jnp.where`` and ``nonzero`` with
``size``, ``reshape`` / ``ravel`` with ``order``, ``jax.ops.segment_*``, reductions with
``where=``, ``lax.reduce_window`` and ``lax.reduce`` with any computation.

``cases(jax, jnp, lax, ops)`` builds them from either library, so the same definitions
serve ``make_missing_behaviour.py`` (run with real JAX, it records the results) and
``tests/test_missing_behaviour.py`` (which runs them in jaxlite in every mode).

Each case is ``(function, args, modes)`` or ``(function, args, modes, in_axes)``. Modes:
``eager``; ``jit``; ``vmap`` (over ``in_axes``, default 0 for every argument); ``grad``
(of a weighted sum of the inexact outputs, with respect to the first argument); ``jvp``
(in the first argument, along ``tangent_like(args[0])``); ``jaxpr`` (printed).
"""
import numpy as np

E, J, V, G, T, P = "eager", "jit", "vmap", "grad", "jvp", "jaxpr"

f32, i32 = np.float32, np.int32


def total(jnp, leaves):
  """The weighted sum ``sum_i leaf_i * (1 + i)`` over the inexact ``leaves``."""
  result = 0.0
  for leaf in leaves:
    if jnp.issubdtype(leaf.dtype, jnp.inexact):
      weights = jnp.arange(1, leaf.size + 1, dtype=leaf.dtype).reshape(leaf.shape)
      result = result + jnp.sum(jnp.where(jnp.isfinite(leaf), leaf * weights, 0))
  return result


def tangent_like(x):
  x = np.asarray(x)
  return (np.arange(x.size, dtype=x.dtype).reshape(x.shape) % 3 - 1).astype(x.dtype)


def _where_cases(jnp):
  i23 = np.array([[0, 1, 2], [3, 0, 0]], i32)
  f5 = np.array([0., np.nan, -1.5, 0., 2.], f32)
  b4 = np.array([True, False, True, True])
  i234 = (np.arange(24).reshape(2, 3, 4) % 3 == 0).astype(i32)
  rows = np.array([[0, 1, 0, 2], [3, 0, 0, 0], [0, 0, 0, 0]], i32)
  return {
      "where1_int": (lambda c: jnp.where(c), (i23,), (E, J)),
      "where1_float_nan": (lambda c: jnp.where(c), (f5,), (E,)),
      "where1_bool": (lambda c: jnp.where(c), (b4,), (E,)),
      "where1_3d": (lambda c: jnp.where(c), (i234,), (E,)),
      "where1_size_fill": (lambda c: jnp.where(c, size=5, fill_value=-1), (i23,), (E, J)),
      "where1_size_vmap": (lambda c: jnp.where(c, size=3, fill_value=9), (rows,), (E, J, V)),
      "where1_size_truncates": (lambda c: jnp.where(c, size=2), (i23,), (E, J)),
      "where1_size_default_fill": (lambda c: jnp.where(c, size=6), (i23,), (E, J)),
      "where1_fill_tuple": (lambda c: jnp.where(c, size=5, fill_value=(7, 8)), (i23,),
                            (E, J)),
      "where1_fill_float": (lambda c: jnp.where(c, size=5, fill_value=2.5), (i23,), (E, J)),
      "where1_fill_tuple_wrong_length": (
          lambda c: jnp.where(c, size=5, fill_value=(1, 2, 3)), (i23,), (E,)),
      "where1_fill_array": (lambda c: jnp.where(c, size=5, fill_value=np.array([1, 2])),
                            (i23,), (E,)),
      "where1_size0": (lambda c: jnp.where(c, size=0), (i23,), (E, J)),
      "where1_empty": (lambda c: jnp.where(c), (np.zeros((0, 3), f32),), (E,)),
      "where1_0d": (lambda c: jnp.where(c), (np.int32(3),), (E,)),
      "where1_list": (lambda: jnp.where([0, 1, 1]), (), (E,)),
      "where_x_only": (lambda c: jnp.where(c, 1), (i23,), (E,)),
      "where3_size": (lambda c: jnp.where(c, 1, 2, size=3), (i23,), (E,)),
      "where3_fill": (lambda c: jnp.where(c, 1, 2, fill_value=0), (i23,), (E,)),
      "nonzero_size_fill": (lambda c: jnp.nonzero(c, size=4, fill_value=-2), (i234,),
                            (E, J)),
      "nonzero_fill_tuple": (lambda c: jnp.nonzero(c, size=9, fill_value=(5, 6, 7)),
                             (i234,), (E, J)),
      "nonzero_no_size": (lambda c: jnp.nonzero(c), (f5,), (E, J)),
      "nonzero_vmap": (lambda c: jnp.nonzero(c, size=2), (rows,), (V,)),
      "argwhere_size_fill": (lambda c: jnp.argwhere(c, size=5, fill_value=-1), (i23,),
                             (E, J)),
      "argwhere_vmap": (lambda c: jnp.argwhere(c, size=3), (rows,), (V,)),
      "argwhere_fill_tuple": (lambda c: jnp.argwhere(c, size=5, fill_value=(7, 8)), (i23,),
                              (E, J)),
      "argwhere_no_size": (lambda c: jnp.argwhere(c), (i23,), (E, J)),
      "argwhere_0d": (lambda c: jnp.argwhere(c), (np.int32(3),), (E,)),
      "flatnonzero_size_fill": (lambda c: jnp.flatnonzero(c, size=4, fill_value=-1),
                                (i23,), (E, J)),
      "flatnonzero_vmap": (lambda c: jnp.flatnonzero(c, size=2, fill_value=7), (rows,),
                           (V,)),
      "flatnonzero_no_size": (lambda c: jnp.flatnonzero(c), (i234,), (E, J)),
  }


def _reshape_cases(jnp):
  a23 = np.arange(6, dtype=f32).reshape(2, 3)
  a234 = np.arange(24, dtype=f32).reshape(2, 3, 4)
  i23 = np.arange(6, dtype=i32).reshape(2, 3)
  cases = {
      "reshape_F": (lambda a: jnp.reshape(a, (3, 2), order="F"), (a23,), (E, J, G)),
      "reshape_F_neg1": (lambda a: jnp.reshape(a, (4, -1), order="F"), (a234,), (E, J, G)),
      "reshape_F_3d": (lambda a: jnp.reshape(a, (4, 3, 2), order="F"), (a234,), (E, J, G)),
      "reshape_F_int": (lambda a: jnp.reshape(a, 6, order="F"), (i23,), (E, J)),
      "reshape_F_weak": (lambda: jnp.reshape(2.0, (1, 1), order="F"), (), (E, J)),
      "reshape_F_vmap": (lambda a: jnp.reshape(a, (2, 6), order="F"), (a234,), (V,)),
      "method_reshape_F_tuple": (lambda a: a.reshape((3, 2), order="F"), (a23,), (E, J, G)),
      "method_reshape_F_args": (lambda a: a.reshape(3, 2, order="F"), (a23,), (E, J)),
      "method_reshape_F_neg1": (lambda a: a.reshape(-1, 2, order="F"), (a234,), (E, J, V)),
      "ravel_F": (lambda a: jnp.ravel(a, order="F"), (a234,), (E, J, V, G)),
      "method_ravel_F": (lambda a: a.ravel(order="F"), (a23,), (E, J, G)),
      "method_flatten_F": (lambda a: a.flatten(order="F"), (a234,), (E, J, V)),
      "reshape_F_bad_size": (lambda a: jnp.reshape(a, (4, 2), order="F"), (a23,), (E,)),
      "reshape_copy_true": (lambda a: jnp.reshape(a, (3, 2), copy=True), (a23,), (E, J)),
      "reshape_copy_false": (lambda a: jnp.reshape(a, (3, 2), order="F", copy=False), (a23,),
                             (E, J)),
      "ravel_list": (lambda: jnp.ravel([1, 2], order="F"), (), (E,)),
  }
  for order in ("A", "K", "c", "f", None, "X"):
    tag = str(order)
    cases[f"reshape_order_{tag}"] = (
        lambda a, o=order: jnp.reshape(a, (3, 2), order=o), (a23,), (E, J))
    cases[f"method_reshape_order_{tag}"] = (
        lambda a, o=order: a.reshape(3, 2, order=o), (a23,), (E,))
    cases[f"ravel_order_{tag}"] = (lambda a, o=order: jnp.ravel(a, order=o), (a23,), (E, J))
    cases[f"method_ravel_order_{tag}"] = (lambda a, o=order: a.ravel(order=o), (a23,), (E,))
  return cases


def _segment_cases(jnp, ops):
  d5 = np.array([1., 5., 2., 7., 3.], f32)
  d35 = np.stack([d5, -d5, d5 * 0.5])
  ids = np.array([0, 0, 2, 2, -1], i32)
  ids_far = np.array([0, 4, 1, 1, 2], i32)
  unique = np.array([3, 0, 2, 1, 4], i32)
  d52 = np.arange(10, dtype=f32).reshape(5, 2) - 3
  i5 = np.array([3, -1, 4, 1, 5], i32)
  u5 = np.array([3, 1, 4, 1, 5], np.uint8)
  b5 = np.array([True, False, True, False, False])
  cases = {}
  for name in ("segment_sum", "segment_prod", "segment_max", "segment_min"):
    f = getattr(ops, name)
    grad = G if name != "segment_prod" else T   # scatter_mul: reverse mode needs unique ids
    cases.update({
        f"{name}_float": (lambda d, i, f=f: f(d, i, 4), (d5, ids), (E, J, grad, T)),
        f"{name}_default_num_segments": (lambda d, i, f=f: f(d, i), (d5, ids), (E, J)),
        f"{name}_int": (lambda d, i, f=f: f(d, i, 4), (i5, ids), (E, J)),
        f"{name}_uint8": (lambda d, i, f=f: f(d, i, 3), (u5, ids), (E,)),
        f"{name}_bool": (lambda d, i, f=f: f(d, i, 3), (b5, ids), (E,)),
        f"{name}_2d": (lambda d, i, f=f: f(d, i, 3), (d52, ids_far), (E, J)),
        f"{name}_clip": (lambda d, i, f=f: f(d, i, 3, mode="clip"), (d5, ids_far),
                         (E, J, G) if name == "segment_sum" else (E, J)),
        f"{name}_promise_in_bounds": (
            lambda d, i, f=f: f(d, i, 5, mode="promise_in_bounds"), (d5, unique), (E, J)),
        f"{name}_bucket": (lambda d, i, f=f: f(d, i, 4, bucket_size=2), (d5, ids),
                           (E, J, grad)),
        f"{name}_bucket_2d": (lambda d, i, f=f: f(d, i, 3, bucket_size=3), (d52, ids_far),
                              (E,)),
        f"{name}_sorted_unique": (
            lambda d, i, f=f: f(d, i, 6, indices_are_sorted=True, unique_indices=True),
            (d5, np.arange(5, dtype=i32)), (E, J, G)),
        f"{name}_zero_segments": (lambda d, i, f=f: f(d, i, 0), (d5, ids), (E, J)),
        f"{name}_negative_num_segments": (lambda d, i, f=f: f(d, i, -1), (d5, ids), (E,)),
        f"{name}_numpy_num_segments": (lambda d, i, f=f: f(d, i, np.int64(3)), (d5, ids),
                                       (E,)),
        f"{name}_empty_ids": (lambda d, i, f=f: f(d, i), (np.zeros(0, f32),
                                                          np.zeros(0, i32)), (E,)),
        f"{name}_float_ids": (lambda d, i, f=f: f(d, i, 3), (d5, ids.astype(f32)), (E,)),
        f"{name}_list_data": (lambda i, f=f: f([1., 2., 3., 4., 5.], i, 3), (ids,), (E,)),
        f"{name}_vmap": (lambda d, i, f=f: f(d, i, 3), (d35, ids), (V,), (0, None)),
        f"{name}_vmap_ids": (lambda d, i, f=f: f(d, i, 5), (d5, np.stack([ids, unique])),
                             (V,), (None, 0)),
    })
  return cases


def _where_reduction_cases(jnp):
  x = np.array([[1., 2., np.nan, 4.], [5., -6., 7., 8.], [np.nan, 3., -1., .5]], f32)
  xf = np.array([[1., 2., -3., 4.], [5., -6., 7., 8.], [2., 3., -1., .5]], f32)
  m = np.array([[True, False, True, True], [False, True, True, False],
                [False, False, False, False]])
  m4 = np.array([True, False, True, True])
  xi = np.array([[1, -2, 3, 0], [5, 6, -7, 8], [0, 3, 1, 2]], i32)
  xb = xi > 0
  xc = (xf + 1j * xf[::-1]).astype(np.complex64)
  cases = {}

  def add(name, fn, args, modes, in_axes=None):
    cases[name] = (fn, args, modes) if in_axes is None else (fn, args, modes, in_axes)

  for name in ("sum", "prod"):
    f = getattr(jnp, name)
    add(f"{name}_where", lambda a, w, f=f: f(a, where=w), (x, m), (E, J))
    add(f"{name}_where_axis1", lambda a, w, f=f: f(a, axis=1, where=w), (xf, m), (E, J, G))
    add(f"{name}_where_broadcast_keepdims",
        lambda a, w, f=f: f(a, axis=0, keepdims=True, where=w), (xf, m4), (E, J, G))
    add(f"{name}_where_initial", lambda a, w, f=f: f(a, axis=1, initial=3., where=w),
        (xf, m), (E, J, G))
    add(f"{name}_where_int", lambda a, w, f=f: f(a, axis=1, where=w), (xi, m), (E, J))
    add(f"{name}_where_int8_no_promote",
        lambda a, w, f=f: f(a, axis=0, where=w, promote_integers=False),
        (xi.astype(np.int8), m), (E, J))
    add(f"{name}_where_bool", lambda a, w, f=f: f(a, axis=1, where=w), (xb, m), (E, J))
    add(f"{name}_where_dtype", lambda a, w, f=f: f(a, axis=1, dtype=jnp.int32, where=w),
        (xf, m), (E, J))
    add(f"{name}_where_true", lambda a, f=f: f(a, axis=0, where=True), (xf,), (E, J))
    add(f"{name}_where_int_mask", lambda a, f=f: f(a, where=xi), (xf,), (E,))
    add(f"{name}_where_vmap", lambda a, w, f=f: f(a, where=w), (xf, m), (V,))
  for name in ("max", "min", "amax", "amin"):
    f = getattr(jnp, name)
    add(f"{name}_where_no_initial", lambda a, w, f=f: f(a, where=w), (x, m), (E,))
    add(f"{name}_where_initial", lambda a, w, f=f: f(a, axis=1, initial=0.5, where=w),
        (x, m), (E, J))
    add(f"{name}_where_initial_grad", lambda a, w, f=f: f(a, axis=1, initial=0.5, where=w),
        (xf, m), (G,))
  for name in ("max", "min"):
    f = getattr(jnp, name)
    add(f"{name}_where_int_keepdims",
        lambda a, w, f=f: f(a, axis=0, keepdims=True, initial=-1, where=w), (xi, m), (E, J))
    add(f"{name}_where_bool", lambda a, w, f=f: f(a, axis=1, initial=False, where=w),
        (xb, m), (E, J))
    add(f"{name}_where_vmap", lambda a, w, f=f: f(a, initial=0., where=w), (xf, m), (V,))
    add(f"{name}_initial_array", lambda a, f=f: f(a, initial=np.ones(2, f32)), (xf,), (E,))
  for name in ("any", "all"):
    f = getattr(jnp, name)
    add(f"{name}_where", lambda a, w, f=f: f(a, axis=1, where=w), (xf, m), (E, J))
    add(f"{name}_where_bool_keepdims", lambda a, w, f=f: f(a, axis=0, keepdims=True,
                                                           where=w), (xb, m4), (E, J))
    add(f"{name}_where_vmap", lambda a, w, f=f: f(a, where=w), (xb, m), (V,))
  add("mean_where", lambda a, w: jnp.mean(a, where=w), (xf, m), (E, J, G))
  add("mean_where_axis1_empty_row", lambda a, w: jnp.mean(a, axis=1, where=w), (xf, m),
      (E, J, G))
  add("mean_where_keepdims", lambda a, w: jnp.mean(a, axis=0, keepdims=True, where=w),
      (xf, m4), (E, J))
  add("mean_where_int", lambda a, w: jnp.mean(a, axis=1, where=w), (xi, m), (E, J))
  add("mean_where_float16", lambda a, w: jnp.mean(a, axis=1, where=w),
      (xf.astype(np.float16), m), (E, J))
  add("mean_where_dtype", lambda a, w: jnp.mean(a, axis=1, dtype=jnp.float16, where=w),
      (xf, m), (E, J))
  add("mean_where_vmap", lambda a, w: jnp.mean(a, where=w), (xf, m), (V,))
  add("mean_where_nonbool", lambda a: jnp.mean(a, where=1), (xf,), (E,))
  for name in ("var", "std"):
    f = getattr(jnp, name)
    add(f"{name}_where", lambda a, w, f=f: f(a, axis=1, where=w), (xf, m), (E, J, G))
    add(f"{name}_where_all", lambda a, w, f=f: f(a, where=w), (xf, m), (E, J, G))
    add(f"{name}_where_ddof", lambda a, w, f=f: f(a, axis=1, ddof=1, where=w), (xf, m),
        (E, J))
    add(f"{name}_where_correction", lambda a, w, f=f: f(a, axis=0, correction=1.5,
                                                        where=w, keepdims=True),
        (xf, m4), (E, J))
    add(f"{name}_mean", lambda a, f=f: f(a, axis=1, mean=np.ones((3, 1), f32)), (xf,),
        (E, J, G))
    add(f"{name}_mean_where", lambda a, w, f=f: f(a, axis=1, where=w, mean=2.), (xf, m),
        (E, J))
    add(f"{name}_where_int", lambda a, w, f=f: f(a, axis=1, where=w), (xi, m), (E, J))
    add(f"{name}_where_complex", lambda a, w, f=f: f(a, axis=1, where=w), (xc, m), (E, J))
    add(f"{name}_ddof_and_correction", lambda a, f=f: f(a, ddof=1, correction=1), (xf,),
        (E,))
    add(f"{name}_where_vmap", lambda a, w, f=f: f(a, where=w), (xf, m), (V,))
  add("std_int_dtype", lambda a: jnp.std(a, dtype=jnp.int32), (xf,), (E,))
  add("var_real_dtype_of_complex", lambda a: jnp.var(a, dtype=jnp.float32), (xc,), (E,))
  for name in ("nansum", "nanprod", "nanmean", "nanvar", "nanstd"):
    f = getattr(jnp, name)
    add(f"{name}_where", lambda a, w, f=f: f(a, axis=1, where=w), (x, m), (E, J, G))
    add(f"{name}_where_all", lambda a, w, f=f: f(a, where=w), (x, m), (E, J))
    add(f"{name}_where_keepdims", lambda a, w, f=f: f(a, axis=0, keepdims=True, where=w),
        (x, m4), (E, J))
    add(f"{name}_where_int", lambda a, w, f=f: f(a, axis=1, where=w), (xi, m), (E, J))
    add(f"{name}_where_vmap", lambda a, w, f=f: f(a, where=w), (x, m), (V,))
  add("nansum_where_initial", lambda a, w: jnp.nansum(a, axis=1, initial=2., where=w),
      (x, m), (E, J))
  add("nanvar_where_ddof_mean", lambda a, w: jnp.nanvar(a, axis=1, ddof=1, where=w,
                                                        mean=1.), (x, m), (E, J))
  add("nanstd_mean", lambda a: jnp.nanstd(a, axis=0, mean=np.zeros(4, f32)), (x,), (E, J))
  for name in ("nanmax", "nanmin"):
    f = getattr(jnp, name)
    add(f"{name}_where_no_initial", lambda a, w, f=f: f(a, where=w), (x, m), (E,))
    add(f"{name}_where_initial", lambda a, w, f=f: f(a, axis=1, initial=0.5, where=w),
        (x, m), (E, J))
    add(f"{name}_initial_all_nan", lambda a, f=f: f(a, axis=0, initial=0.5),
        (np.full((2, 3), np.nan, f32),), (E, J))
    add(f"{name}_all_nan", lambda a, f=f: f(a, axis=0), (np.full((2, 3), np.nan, f32),),
        (E, J))
    add(f"{name}_where_int", lambda a, w, f=f: f(a, axis=1, initial=-9, where=w), (xi, m),
        (E, J))
    add(f"{name}_where_grad", lambda a, w, f=f: f(a, axis=1, initial=0., where=w), (xf, m),
        (G,))
  add("count_nonzero_where", lambda a: jnp.count_nonzero(a, where=True), (xf,), (E,))
  return cases


def argmax_pairs(lax):
  """The (value, index) pairs computation of an argmax: the larger value, the smaller
  index among equal ones (associative, not commutative)."""
  def argmax(a, b):
    pick = lax.bitwise_or(lax.gt(a[0], b[0]), lax.bitwise_and(lax.eq(a[0], b[0]),
                                                              lax.lt(a[1], b[1])))
    return lax.select(pick, a[0], b[0]), lax.select(pick, a[1], b[1])
  return argmax


def _reduce_window_cases(jnp, lax):
  x = (np.arange(20, dtype=f32).reshape(4, 5) / 4 - 1.5).astype(f32)
  xb = np.stack([x, x[::-1] * 2, -x])
  xi = (np.arange(20, dtype=i32).reshape(4, 5) % 7 - 2).astype(i32)
  idx = np.arange(20, dtype=i32).reshape(4, 5)
  xt = np.array([[1., 3., 3., 0., 2.], [5., 5., 1., 5., 2.]], f32)
  it = np.arange(10, dtype=i32).reshape(2, 5)
  rw = lax.reduce_window
  argmax = argmax_pairs(lax)
  ninf, inf = -np.inf, np.inf


  return {
      "rw_add_identity": (lambda a: rw(a, 0., lax.add, (2, 2), (1, 1), "VALID"), (x,),
                          (E, J, G, P)),
      "rw_add_vmap": (lambda a: rw(a, 0., lax.add, (2, 2), (1, 2), "SAME"), (xb,), (V,)),
      "rw_add_init1": (lambda a: rw(a, 1., lax.add, (2, 2), (1, 1), "VALID"), (x,),
                       (E, J, T, G, P)),
      "rw_add_init1_vmap": (lambda a: rw(a, 1., lax.add, (2, 3), (1, 1), "SAME"), (xb,),
                            (V,)),
      "rw_add_init1_padded": (lambda a: rw(a, 1., lax.add, (2, 2), (1, 1), ((1, 2), (0, 1))),
                              (x,), (E, J)),
      "rw_add_init1_base_dilation": (lambda a: rw(a, 1., lax.add, (2, 2), (1, 1), "VALID",
                                                  base_dilation=(2, 3)), (x,), (E, J)),
      "rw_max_init0_padded_dilated": (lambda a: rw(a, 0., lax.max, (3, 2), (2, 1), "SAME",
                                                   (1, 2), (1, 2)), (x,), (E, J, T)),
      "rw_max_identity": (lambda a: rw(a, ninf, lax.max, (2, 3), (1, 1), "SAME"), (x,),
                          (E, J, G, P)),
      "rw_max_init0": (lambda a: rw(a, 0., lax.max, (2, 3), (1, 1), "SAME"), (x,),
                       (E, J, T, G, P)),
      "rw_min_identity": (lambda a: rw(a, inf, lax.min, (2, 2), (2, 1), ((1, 0), (0, 2))),
                          (x,), (E, J, G)),
      "rw_mul": (lambda a: rw(a, 1., lax.mul, (2, 3), (1, 2), "SAME"), (x,),
                 (E, J, T, G, P)),
      "rw_mul_vmap": (lambda a: rw(a, 1., lax.mul, (3, 2), (1, 1), "VALID"), (xb,), (V,)),
      "rw_lambda_max": (lambda a: rw(a, ninf, lambda p, q: jnp.maximum(p, q), (2, 2), None,
                                     "VALID"), (x,), (E, J, T, P)),
      "rw_logaddexp": (lambda a: rw(a, ninf, jnp.logaddexp, (1, 3), (1, 1), "SAME"), (x,),
                       (E, J, T)),
      "rw_add_base_dilation": (lambda a: rw(a, 0., lax.add, (2, 2), (1, 1), "SAME",
                                            base_dilation=(2, 1)), (x,), (E, J, G)),
      "rw_mul_base_dilation": (lambda a: rw(a, 1., lax.mul, (2, 2), (1, 1), "SAME",
                                            base_dilation=(2, 1)), (x,), (E, J, T, P)),
      "rw_max_window_dilation": (lambda a: rw(a, ninf, lax.max, (2, 2), (1, 1), "VALID",
                                              window_dilation=(1, 2)), (x,), (E, J)),
      "rw_mul_window_dilation": (lambda a: rw(a, 1., lax.mul, (2, 2), (2, 1), "VALID",
                                              window_dilation=(2, 2)), (x,), (E, J, T)),
      "rw_add_all_params": (lambda a: rw(a, 0., lax.add, (2, 3), (2, 1), ((1, 2), (0, 1)),
                                         (1, 2), (2, 1)), (x,), (E, J, G)),
      "rw_mul_all_params": (lambda a: rw(a, 1., lax.mul, (2, 3), (2, 1), ((1, 2), (0, 1)),
                                         (1, 2), (2, 1)), (x,), (E, J, T)),
      "rw_add_negative_padding": (lambda a: rw(a, 0., lax.add, (2, 2), (1, 1),
                                               ((-1, 1), (0, 0))), (x,), (E, J, G)),
      "rw_mul_negative_padding": (lambda a: rw(a, 1., lax.mul, (2, 2), (1, 1),
                                               ((-1, 1), (0, -1))), (x,), (E, J, P)),
      "rw_int_mul": (lambda a: rw(a, np.int32(1), lax.mul, (2, 2), (1, 1), "VALID"), (xi,),
                     (E, J)),
      "rw_int_max_init": (lambda a: rw(a, np.int32(0), lax.max, (2, 2), (1, 1), "SAME"),
                          (xi,), (E, J)),
      "rw_int_add_weak": (lambda a: rw(a, 0, lax.add, (2, 2), (1, 1), "VALID"), (xi,),
                          (E, J)),
      "rw_bool_or": (lambda a: rw(a, False, lax.bitwise_or, (2, 2), (1, 1), "VALID"),
                     (xi > 0,), (E, J)),
      "rw_variadic_argmax": (lambda a, i: rw((a, i), (ninf, np.int32(0)), argmax, (1, 2),
                                             (1, 1), "VALID"), (xt, it), (E, J, P)),
      "rw_variadic_vmap": (lambda a, i: rw((a, i), (ninf, np.int32(0)), argmax, (2,),
                                           (1,), "VALID"), (xt, it), (V,)),
      "rw_weak_operand_generic": (lambda: rw(lax.full((3,), 1.), 1., lax.mul, (2,), (1,),
                                             "VALID"), (), (E, J)),
      "rw_weak_operand_monoid": (lambda: rw(lax.full((3,), 1.), 0., lax.add, (2,), (1,),
                                            "VALID"), (), (E, J)),
      "rw_window_too_big": (lambda a: rw(a, 1., lax.mul, (5, 1), (1, 1), "VALID"), (x,),
                            (E, J)),
      "rw_tree_mismatch": (lambda a: rw((a, a), 0., lax.add, (2, 2), (1, 1), "VALID"),
                           (x,), (E,)),
      "rw_dtype_mismatch": (lambda a: rw(a, np.int32(1), lax.mul, (2, 2), (1, 1), "VALID"),
                            (x,), (E,)),
      "rw_nonscalar_init": (lambda a: rw(a, np.ones(2, f32), lax.mul, (2, 2), (1, 1),
                                         "VALID"), (x,), (E,)),
      "rw_batched_init": (lambda a, i: rw(a, i, lax.mul, (2,), (1,), "VALID"),
                          (x, x[:, 0]), (V,)),
  }


def _reduce_cases(jnp, lax):
  x = (np.arange(12, dtype=f32).reshape(3, 4) / 3 - 1.2).astype(f32)
  xb = np.stack([x, -x, x * 2])
  xi = (np.arange(12, dtype=i32).reshape(3, 4) * 5 % 11 - 3).astype(i32)
  xt = np.array([[1., 3., 3., 0.], [5., 5., 1., 5.], [0., 0., 0., 0.]], f32)
  it = np.tile(np.arange(4, dtype=i32), (3, 1))
  long = (np.sin(np.arange(1001, dtype=f32)) * 0.01 + 1).astype(f32).reshape(1001, 1)
  r = lax.reduce
  argmax = argmax_pairs(lax)
  ninf, inf = -np.inf, np.inf


  return {
      "red_add_identity": (lambda a: r(a, 0., lax.add, (0,)), (x,), (E, J, V, G, P)),
      "red_add_init1": (lambda a: r(a, 1., lax.add, (0,)), (x,), (E, J, V, G, T, P)),
      "red_mul_identity": (lambda a: r(a, 1., lax.mul, (1,)), (x,), (E, J, G, P)),
      "red_mul_identity_vmap": (lambda a: r(a, 1., lax.mul, (1,)), (xb,), (V,)),
      "red_mul_init2": (lambda a: r(a, 2., lax.mul, (1,)), (x,), (E, J, P)),
      "red_lambda_mul": (lambda a: r(a, 1., lambda p, q: p * q, (1,)), (x,),
                         (E, J, G, T, P)),
      "red_lambda_mul_all_axes": (lambda a: r(a, 1., lambda p, q: p * q, (0, 1)), (x,),
                                  (E, J, G)),
      "red_max_identity": (lambda a: r(a, ninf, lax.max, (0,)), (x,), (E, J, V, G, P)),
      "red_max_init0": (lambda a: r(a, 0., lax.max, (0,)), (x,), (E, J, V, G, P)),
      "red_min_lambda": (lambda a: r(a, inf, lambda p, q: jnp.minimum(p, q), (0, 1)), (x,),
                         (E, J, G, P)),
      "red_and_int": (lambda a: r(a, np.int32(-1), lax.bitwise_and, (1,)), (xi,), (E, J, P)),
      "red_and_int_weak": (lambda a: r(a, -1, lax.bitwise_and, (1,)), (xi,), (E, J, P)),
      "red_or_bool": (lambda a: r(a, False, lax.bitwise_or, (0,)), (xi > 0,), (E, J, P)),
      "red_xor_int": (lambda a: r(a, np.int32(0), lax.bitwise_xor, (0,)), (xi,), (E, J, P)),
      "red_and_int_init3": (lambda a: r(a, np.int32(3), lax.bitwise_and, (1,)), (xi,),
                            (E, J, P)),
      "red_variadic_argmax": (lambda a, i: r((a, i), (ninf, np.int32(0)), argmax, (1,)),
                              (xt, it), (E, J, P)),
      "red_variadic_argmax_vmap": (lambda a, i: r((a, i), (ninf, np.int32(0)), argmax, (0,)),
                                   (xt, it), (V,)),
      "red_variadic_sum_prod": (lambda a: r((a, a), (0., 1.), lambda p, q: (
          p[0] + q[0], p[1] * q[1]), (1,)), (x,), (E, J, G)),
      "red_variadic_sum_prod_vmap": (lambda a: r((a, a), (0., 1.), lambda p, q: (
          p[0] + q[0], p[1] * q[1]), (1,)), (xb,), (V,)),
      "red_dict_operands": (lambda a: r({"s": a, "m": a}, {"s": 0., "m": ninf},
                                        lambda p, q: {"s": p["s"] + q["s"],
                                                      "m": jnp.maximum(p["m"], q["m"])},
                                        (0,)), (x,), (E, J, G)),
      "red_no_dims": (lambda a: r(a, 1., lambda p, q: p * q, ()), (x,), (E, J)),
      "red_empty_axis": (lambda a: r(a, 1., lambda p, q: p * q, (0,)),
                         (np.zeros((0, 3), f32),), (E, J)),
      "red_long_lambda_sum": (lambda a: r(a, 0., lambda p, q: p + q, (0,)), (long,),
                              (E, J, G)),
      "red_long_lambda_prod": (lambda a: r(a, 1., lambda p, q: p * q, (0,)), (long,),
                               (E, J)),
      "red_weak_monoid": (lambda: r(lax.full((3,), 1.), 0., lax.add, (0,)), (), (E, J)),
      "red_weak_generic": (lambda: r(lax.full((3,), 1.), 1., lax.add, (0,)), (), (E, J)),
      "red_strong_init_monoid": (lambda: r(lax.full((3,), 1.), np.float32(0), lax.add,
                                           (0,)), (), (E, J)),
      "red_tree_mismatch": (lambda a: r((a, a), 0., lax.add, (0,)), (x,), (E,)),
      "red_dtype_mismatch": (lambda a: r(a, np.int32(1), lambda p, q: p * q, (0,)), (x,),
                             (E,)),
      "red_nonscalar_init": (lambda a: r(a, np.ones(4, f32), lambda p, q: p * q, (0,)),
                             (x,), (E,)),
      "red_vmap_batched_init": (lambda a, i: r(a, i, lambda p, q: p * q, (0,)),
                                (xb, x[:, 0]), (V,)),
      "red_vmap_generic": (lambda a: r(a, 1., lambda p, q: p * q, (1,)), (xb,), (V,)),
  }


def _order_statistic_and_scan_cases(jnp, lax):
  x = np.array([[1.5, -2., 3., 0.25, 4.], [2., 2., -1., 7., 0.5], [0., 1., 5., -3., 2.]], f32)
  xn = np.array([[1., np.nan, 3., 2.], [np.nan, np.nan, np.nan, np.nan],
                 [4., 0.5, np.nan, 1.]], f32)
  w5 = np.array([1., 3., 0.5, 2., 1.], f32)
  q3 = np.array([0.1, 0.5, 0.9], f32)
  x234 = (np.arange(24, dtype=f32).reshape(2, 3, 4) * 7 % 11 - 5).astype(f32)
  c = np.array([[1 + 1j, np.nan, 3, 2 + 5j], [1, 2, 0, complex(0, np.nan)],
                [-np.inf + 1j, 3, 3 - 1j, 1]], np.complex64)
  cn = np.array([[1, np.nan, 0, 3], [1, 2, 0, 3 + 4j]], np.complex64)
  fn = np.array([[1., np.nan, 0., 3.], [1., 2., 0., np.nan]], f32)
  i8 = np.array([[100, 27, -3], [90, 1, 5]], np.int8)
  cases = {}

  def add(name, fn_, args, modes):
    cases[name] = (fn_, args, modes)

  for method in ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf"):
    add(f"quantile_{method}_q_vector", lambda a, q, m=method: jnp.quantile(
        a, q, axis=-1, method=m), (x, q3), (E, J, V))
    add(f"nanquantile_{method}_keepdims", lambda a, q, m=method: jnp.nanquantile(
        a, q, axis=1, method=m, keepdims=True), (xn, q3), (E, J))
  add("quantile_nearest_takes_lower_at_ties",
      lambda a: jnp.quantile(a, 0.5, axis=0, method="nearest"), (x[:2],), (E, J))
  add("quantile_weights", lambda a, w: jnp.quantile(a, 0.4, axis=-1, method="inverted_cdf",
                                                    weights=w), (x, x * x), (E, J, V))
  add("quantile_weights_full_shape", lambda a, w: jnp.quantile(
      a, q3, axis=0, method="inverted_cdf", weights=w, keepdims=True), (x, x * x), (E, J))
  add("quantile_negative_weight_is_nan", lambda a, w: jnp.quantile(
      a, 0.4, axis=1, method="inverted_cdf", weights=w), (x, x), (E, J))
  add("quantile_weights_need_inverted_cdf",
      lambda a, w: jnp.quantile(a, 0.4, axis=1, weights=w), (x, w5), (E,))
  add("percentile_weights", lambda a, w: jnp.percentile(a, 40, axis=1, method="inverted_cdf",
                                                        weights=w), (x, w5), (E, J))
  add("quantile_tuple_axis_keepdims", lambda a, q: jnp.quantile(a, q, axis=(-1, 0),
                                                                keepdims=True), (x234, q3),
      (E, J, V))
  add("quantile_float16_q_float32", lambda a, q: jnp.quantile(a, q),
      (x.astype(np.float16), np.float32(0.3)), (E, J))
  add("quantile_int_q", lambda a: jnp.quantile(a, 1), (x,), (E,))
  add("quantile_empty_axis", lambda a: jnp.quantile(a, 0.5, axis=1), (np.zeros((3, 0), f32),),
      (E, J))
  add("nanmedian_empty", lambda a: jnp.nanmedian(a), (np.zeros((0, 3), f32),), (E, J))
  add("median_overwrite_input", lambda a: jnp.median(a, overwrite_input=True), (x,), (E,))
  add("median_grad", lambda a: jnp.median(a, axis=1), (x,), (G,))
  add("nanquantile_grad", lambda a: jnp.nanquantile(a, 0.3, axis=1), (xn,), (G,))
  for name in ("max", "min"):
    f = getattr(jnp, name)
    add(f"{name}_complex_nan_folds_as_xla", lambda a, f=f: f(a, axis=-1), (c,), (E, J, V))
    add(f"{name}_complex_all_axes", lambda a, f=f: f(a), (c,), (E, J))
  for name in ("cummax", "cummin"):
    f = getattr(lax, name)
    add(f"{name}_nan", lambda a, f=f: f(a.T, axis=0), (fn,), (E, J, V))
    add(f"{name}_nan_reverse", lambda a, f=f: f(a, axis=1, reverse=True), (fn,), (E, J))
    add(f"{name}_complex_nan", lambda a, f=f: f(a.T, axis=0), (cn,), (E, J, V))
    add(f"{name}_complex_nan_reverse", lambda a, f=f: f(a, axis=1, reverse=True), (cn,),
        (E, J))
    add(f"{name}_bool", lambda a, f=f: f(a, axis=1), (fn > 0,), (E,))
  add("cumlogsumexp_complex", lambda a: lax.cumlogsumexp(a, axis=1), (cn[1:] + 1j,), (E, J))
  add("cumlogsumexp_complex_reverse", lambda a: lax.cumlogsumexp(a, axis=1, reverse=True),
      (cn[1:] * 1j,), (E, J))
  add("cumlogsumexp_int", lambda a: lax.cumlogsumexp(a.T, axis=0), (i8,), (E, J, V))
  add("cumsum_negative_axis", lambda a: lax.cumsum(a, axis=-1), (x,), (E,))
  add("reduce_window_max_nan", lambda a: lax.reduce_window(a, -np.inf, lax.max, (1, 2),
                                                           (1, 1), "VALID"), (fn,), (E, J))
  add("argmax_keepdims_all_axes", lambda a: jnp.argmax(a, keepdims=True), (x234,), (E, J, V))
  add("nanargmin_keepdims_all_axes", lambda a: jnp.nanargmin(a, keepdims=True), (xn,),
      (E, J))
  add("argmax_complex", lambda a: jnp.argmax(a), (c,), (E,))
  add("sum_where_of_higher_rank", lambda a, w: jnp.sum(a, where=w),
      (x[:2, :3], np.arange(24).reshape(4, 2, 3) % 3 == 0), (E, J))
  add("sum_weak_scalar", lambda: jnp.sum(3.0), (), (E, J))
  add("sum_bool_no_promotion", lambda a: jnp.sum(a, axis=0, promote_integers=False),
      (fn > 0,), (E, J))
  add("reduce_sum_bool", lambda a: lax.reduce_sum(a, (0,)), (fn > 0,), (E,))
  add("any_complex_uses_real_part", lambda a: jnp.any(a, axis=1),
      (np.array([[1j, 0], [1j, 1]], np.complex64),), (E, J))
  add("var_int_dtype", lambda a: jnp.var(a, axis=1, dtype=jnp.int32), (i8,), (E, J))
  add("nanvar_int_dtype", lambda a: jnp.nanvar(a, axis=1, dtype=jnp.int8), (i8,), (E, J))
  add("nanstd_int_dtype", lambda a: jnp.nanstd(a, dtype=jnp.int32), (i8,), (E,))
  add("cumsum_dtype_bool", lambda a: jnp.cumsum(a, axis=1, dtype=bool), (i8 - 1,), (E, J))
  add("cumulative_sum_int8", lambda a: jnp.cumulative_sum(a, axis=-1, include_initial=True),
      (i8,), (E, J, V))
  add("average_tuple_axis_weights", lambda a, w: jnp.average(
      a, axis=(2, 0), weights=w, returned=True), (x234, x234[:, 0].T), (E, J, G))
  return cases


def as_arrays(jnp, args):
  """NumPy array arguments as the library's arrays (jnp.reshape and methods of NumPy
  arrays would otherwise run NumPy's code eagerly)."""
  return tuple(jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args)


def unpack(case):
  """``(function, args, modes, in_axes)`` of a case."""
  fn, args, modes = case[:3]
  return fn, args, modes, case[3] if len(case) > 3 else 0


def transformed(jax, jnp, case, mode):
  """The callable that ``mode`` runs on the case's args (``jit`` is left to the caller)."""
  fn, args, _, in_axes = unpack(case)
  if mode in (E, J):
    return fn
  if mode == V:
    return jax.vmap(fn, in_axes)
  if mode == G:
    return jax.grad(lambda *a: total(jnp, jax.tree_util.tree_leaves(fn(*a))))
  if mode == T:
    tangent = tangent_like(args[0])
    return lambda x, *rest: jax.jvp(lambda y: fn(y, *rest), (x,), (tangent,))
  raise ValueError(f"no callable for mode {mode}")


def cases(jax, jnp, lax, ops):
  del jax
  out = {}
  out.update(_where_cases(jnp))
  out.update(_reshape_cases(jnp))
  out.update(_segment_cases(jnp, ops))
  out.update(_where_reduction_cases(jnp))
  out.update(_reduce_window_cases(jnp, lax))
  out.update(_reduce_cases(jnp, lax))
  out.update(_order_statistic_and_scan_cases(jnp, lax))
  return out
