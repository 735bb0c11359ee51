"""Programs whose printed jaxprs must match JAX 0.10's, byte for byte.

``cases(jax, jnp, lax)`` takes the modules, so the same definitions serve
``make_jaxpr_prints.py`` (run with real JAX, records ``str(jax.make_jaxpr(f)(*args))``)
and ``tests/test_jaxpr_printing.py`` (runs jaxlite). They cover the layout rules of
JAX's printer: one-line jaxprs, equations whose parameters break onto several lines,
variable lists that wrap, sub-jaxprs at each nesting level, and shared sub-jaxprs.
"""
import numpy as np


def _f32(*shape):
  return np.ones(shape, np.float32)


def _i32(*shape):
  return np.ones(shape, np.int32)


def _small(jax, jnp, lax):
  """Tiny programs: most print on one line."""
  return {
      "identity": (lambda x: x, (1.,)),
      "sin": (jnp.sin, (_f32(3),)),
      "add_weak": (lambda x: x + 1, (_f32(3),)),
      "add_two_args": (lambda x, y: x + y, (1., 2.)),
      "mul_scalar_f32": (lambda x: x * np.float32(2), (_f32(),)),
      "neg_int": (lambda x: -x, (_i32(4),)),
      "no_args_const": (lambda: jnp.float32(3) * 2, ()),
      "return_literal": (lambda x: 2., (1.,)),
      "return_input_twice": (lambda x: (x, x), (_f32(2),)),
      "no_outputs": (lambda x: (), (_f32(2),)),
      "unused_input": (lambda x, y: jnp.cos(y), (_f32(2), _f32(2))),
      "unused_intermediate": (lambda x: (jnp.sin(x), x * 2)[1], (_f32(2),)),
      "exp_log": (lambda x: jnp.log(jnp.exp(x)), (1.,)),
      "tanh_logistic": (lambda x: jax.nn.sigmoid(jnp.tanh(x)), (_f32(5),)),
      "compare_select": (lambda x: jnp.where(x > 0, x, 0.), (_f32(4),)),
      "square": (lambda x: x ** 2, (_f32(3),)),
      "integer_pow_3": (lambda x: x ** 3, (_f32(3),)),
      "sqrt_rsqrt": (lambda x: (jnp.sqrt(x), lax.rsqrt(x)), (_f32(3),)),
      "abs_sign": (lambda x: (jnp.abs(x), jnp.sign(x)), (_f32(3),)),
      "max_min": (lambda x, y: (jnp.maximum(x, y), jnp.minimum(x, y)), (_f32(3), _f32(3))),
      "floor_ceil_round": (lambda x: (jnp.floor(x), jnp.ceil(x), jnp.round(x)), (_f32(3),)),
      "convert_int_to_float": (lambda x: x.astype(jnp.float32), (_i32(3),)),
      "convert_float_to_int": (lambda x: x.astype(jnp.int32), (_f32(3),)),
      "convert_to_bool": (lambda x: x.astype(bool), (_f32(3),)),
      "int_div": (lambda x, y: x // y, (_i32(3), _i32(3))),
      "true_div_int": (lambda x, y: x / y, (_i32(3), _i32(3))),
      "rem": (lambda x: x % 3., (_f32(3),)),
      "bitwise": (lambda x, y: (x & y, x | y, x ^ y, ~x), (_i32(3), _i32(3))),
      "shifts": (lambda x: (x << 2, x >> 1), (_i32(3),)),
      "logical": (lambda x, y: jnp.logical_and(x > 0, y < 1), (_f32(3), _f32(3))),
      "atan2_pow": (lambda x, y: (jnp.arctan2(x, y), x ** y), (_f32(3), _f32(3))),
      "clip": (lambda x: jnp.clip(x, 0., 1.), (_f32(3),)),
      "iota": (lambda: jnp.arange(5), ()),
      "zeros_like": (jnp.zeros_like, (_f32(3),)),
      "full": (lambda: jnp.full((2, 3), 7.), ()),
      "bool_arg": (lambda b, x: jnp.where(b, x, -x), (np.array(True), _f32(3))),
      "stop_gradient": (lambda x: lax.stop_gradient(x) * x, (_f32(3),)),
      "complex_mul": (lambda x: x * (1 + 2j), (np.ones(2, np.complex64),)),
      "real_imag_conj": (lambda z: (jnp.real(z), jnp.imag(z), jnp.conj(z)),
                         (np.ones(2, np.complex64),)),
      "expm1_log1p": (lambda x: jnp.expm1(jnp.log1p(x)), (_f32(2),)),
      "erf_lgamma": (lambda x: (lax.erf(x), lax.lgamma(x)), (_f32(2),)),
      "is_finite": (lambda x: jnp.isfinite(x), (_f32(2),)),
      "nextafter": (lambda x, y: lax.nextafter(x, y), (_f32(2), _f32(2))),
      "population_count": (lambda x: lax.population_count(x), (_i32(3),)),
  }


def _literals(jax, jnp, lax):
  """Literals and weak types of each dtype."""
  return {
      "lit_f32": (lambda x: x + np.float32(1.5), (_f32(2),)),
      "lit_f16": (lambda x: x * 2, (np.ones(2, np.float16),)),
      "lit_bf16": (lambda x: x * 0.5, (np.ones(2, jnp.bfloat16),)),
      "lit_i8": (lambda x: x + 3, (np.ones(2, np.int8),)),
      "lit_u8": (lambda x: x + 3, (np.ones(2, np.uint8),)),
      "lit_u32": (lambda x: x * 7, (np.ones(2, np.uint32),)),
      "lit_i16": (lambda x: x - 1, (np.ones(2, np.int16),)),
      "lit_bool": (lambda x: jnp.logical_or(x, True), (np.ones(2, bool),)),
      "lit_complex": (lambda x: x + 1j, (np.ones(2, np.complex64),)),
      "lit_negative": (lambda x: x * -2.5, (_f32(2),)),
      "lit_tiny": (lambda x: x + 1e-30, (_f32(2),)),
      "lit_huge": (lambda x: x * 3e38, (_f32(2),)),
      "lit_inf": (lambda x: jnp.minimum(x, jnp.inf), (_f32(2),)),
      "lit_nan": (lambda x: x + jnp.nan, (_f32(2),)),
      "lit_third": (lambda x: x / 3., (_f32(2),)),
      "lit_int_big": (lambda x: x + 2 ** 30, (_i32(2),)),
      "lit_bf16_inexact": (lambda x: x * 0.1, (np.ones(2, jnp.bfloat16),)),
      "lit_f16_inexact": (lambda x: x * 0.1, (np.ones(2, np.float16),)),
      "weak_scalar_args": (lambda x, y: x * y + 1, (1., 2)),
      "weak_int_times_float": (lambda x: x * 2.5, (3,)),
      "weak_bool_arg": (lambda b: jnp.logical_not(b), (True,)),
      "weak_complex_arg": (lambda z: z * 2, (1j,)),
      "weak_broadcast": (lambda x: jnp.broadcast_to(x, (3,)), (2.,)),
      "strong_from_weak": (lambda x: jnp.asarray(x, jnp.float32) + 1, (2.,)),
      "array_constant": (lambda x: x + np.arange(3, dtype=np.float32), (_f32(3),)),
      "array_constant_2d": (lambda x: x @ np.eye(3, dtype=np.float32), (_f32(2, 3),)),
  }


def _shapes(jax, jnp, lax):
  """Shape ops and their parameters."""
  return {
      "reshape": (lambda x: x.reshape(6), (_f32(2, 3),)),
      "transpose": (lambda x: x.T, (_f32(2, 3),)),
      "broadcast_rank": (lambda x: jnp.broadcast_to(x, (4, 3)), (_f32(3),)),
      "expand_squeeze": (lambda x: jnp.squeeze(x[None], 0), (_f32(3),)),
      "concatenate": (lambda x, y: jnp.concatenate([x, y, x]), (_f32(2), _f32(3))),
      "stack": (lambda x, y: jnp.stack([x, y]), (_f32(2), _f32(2))),
      "pad": (lambda x: jnp.pad(x, (1, 2)), (_f32(3),)),
      "pad_lax_interior": (lambda x: lax.pad(x, 0., ((1, 2, 1),)), (_f32(3),)),
      "rev": (lambda x: lax.rev(x, (0,)), (_f32(3),)),
      "slice": (lambda x: lax.slice(x, (1,), (3,)), (_f32(4),)),
      "slice_strided": (lambda x: lax.slice(x, (0, 1), (4, 3), (2, 1)), (_f32(4, 3),)),
      "dynamic_slice": (lambda x, i: lax.dynamic_slice(x, (i, 0), (2, 2)),
                        (_f32(4, 3), np.int32(1))),
      "dynamic_update_slice": (lambda x, u, i: lax.dynamic_update_slice(x, u, (i,)),
                               (_f32(5), _f32(2), np.int32(1))),
      "split": (lambda x: jnp.split(x, 3), (_f32(6),)),
      "tile": (lambda x: jnp.tile(x, 3), (_f32(2),)),
      "repeat": (lambda x: jnp.repeat(x, 2), (_f32(3),)),
      "flip_roll": (lambda x: (jnp.flip(x), jnp.roll(x, 1)), (_f32(4),)),
      "select_n": (lambda p, x, y: lax.select(p, x, y), (np.ones(3, bool), _f32(3), _f32(3))),
      "squeeze_many": (lambda x: jnp.squeeze(x), (_f32(1, 3, 1, 2, 1),)),
      "big_shape_reshape": (lambda x: x.reshape(2, 3, 4, 5, 6, 7),
                            (_f32(5040),)),
  }


def _reductions(jax, jnp, lax):
  """Reductions, contractions and convolutions."""
  return {
      "sum": (jnp.sum, (_f32(3, 4),)),
      "sum_axis": (lambda x: jnp.sum(x, axis=1), (_f32(3, 4),)),
      "mean": (jnp.mean, (_f32(3, 4),)),
      "max_argmax": (lambda x: (jnp.max(x), jnp.argmax(x)), (_f32(5),)),
      "prod_min": (lambda x: (jnp.prod(x, 0), jnp.min(x, 1)), (_f32(3, 4),)),
      "any_all": (lambda x: (jnp.any(x > 0), jnp.all(x > 0)), (_f32(3),)),
      "var": (jnp.var, (_f32(4),)),
      "logsumexp": (jax.nn.logsumexp, (_f32(4),)),
      "softmax": (jax.nn.softmax, (_f32(4),)),
      "cumsum": (jnp.cumsum, (_f32(4),)),
      "cumprod_reverse": (lambda x: lax.cumprod(x, reverse=True), (_f32(4),)),
      "dot": (jnp.dot, (_f32(3), _f32(3))),
      "matmul": (jnp.matmul, (_f32(2, 3), _f32(3, 4))),
      "matmul_batched": (jnp.matmul, (_f32(5, 2, 3), _f32(5, 3, 4))),
      # batch axes on one side only, or of size 1, are free axes: no broadcast
      "matmul_3d_by_2d": (jnp.matmul, (_f32(2, 3, 4), _f32(4, 5))),
      "matmul_vector_by_3d": (jnp.matmul, (_f32(4), _f32(2, 4, 5))),
      "matmul_size_one_batch": (jnp.matmul, (_f32(2, 1, 3, 4), _f32(5, 4, 2))),
      "matmul_transposed_result": (jnp.matmul, (_f32(1, 3, 4), _f32(2, 4, 5))),
      "convolve": (lambda a, v: jnp.convolve(a, v, mode="same"), (_f32(5), _f32(3))),
      "correlate_swapped": (jnp.correlate, (_f32(3), _f32(5))),
      "einsum": (lambda x, y: jnp.einsum("ij,jk->ik", x, y), (_f32(2, 3), _f32(3, 4))),
      "dot_general_precision": (
          lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ())),
                                       precision=lax.Precision.HIGHEST),
          (_f32(2, 3), _f32(3, 4))),
      "dot_general_preferred": (
          lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ())),
                                       preferred_element_type=jnp.float32),
          (np.ones((2, 3), np.float16), np.ones((3, 4), np.float16))),
      "conv_1d": (lambda x, w: lax.conv(x, w, (1,), "SAME"), (_f32(1, 2, 8), _f32(3, 2, 3))),
      "conv_2d_general": (
          lambda x, w: lax.conv_general_dilated(
              x, w, (2, 1), ((1, 1), (0, 0)), lhs_dilation=(1, 1), rhs_dilation=(1, 2),
              dimension_numbers=("NHWC", "HWIO", "NHWC")),
          (_f32(1, 8, 8, 3), _f32(3, 3, 3, 4))),
      "conv_grouped": (
          lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID",
                                                feature_group_count=2),
          (_f32(1, 4, 5, 5), _f32(6, 2, 3, 3))),
      "reduce_window_max": (
          lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (1, 1), "VALID"),
          (_f32(4, 4),)),
      "sort": (jnp.sort, (_f32(5),)),
      "argsort": (jnp.argsort, (_f32(5),)),
      "top_k": (lambda x: lax.top_k(x, 2), (_f32(5),)),
      "fft": (jnp.fft.fft, (np.ones(4, np.complex64),)),
      "norm": (jnp.linalg.norm, (_f32(3, 3),)),
  }


def _indexing(jax, jnp, lax):
  """Gathers and scatters, whose parameters are long."""
  idx = np.array([0, 2], np.int32)
  return {
      "index_int": (lambda x: x[1], (_f32(3),)),
      "index_traced": (lambda x, i: x[i], (_f32(3), np.int32(1))),
      "gather_array": (lambda x, i: x[i], (_f32(4, 3), idx)),
      "gather_two_arrays": (lambda x, i, j: x[i, j], (_f32(4, 3), idx, idx)),
      "scatter_set": (lambda x, i: x.at[i].set(0.), (_f32(4), idx)),
      "scatter_add": (lambda x, i, u: x.at[i].add(u), (_f32(4), idx, _f32(2))),
      "scatter_mul": (lambda x, i: x.at[i].mul(2.), (_f32(4), idx)),
      "scatter_max_2d": (lambda x, i: x.at[:, i].max(1.), (_f32(3, 4), idx)),
      "take_along_axis": (lambda x, i: jnp.take_along_axis(x, i, axis=1),
                          (_f32(3, 4), np.zeros((3, 2), np.int32))),
      "take_clip": (lambda x, i: jnp.take(x, i, mode="clip"), (_f32(5), idx)),
      "one_hot": (lambda i: jax.nn.one_hot(i, 4), (idx,)),
      "boolean_mask_where": (lambda x: jnp.where(x > 0, size=2, fill_value=0)[0],
                             (_f32(4),)),
  }


def _transforms(jax, jnp, lax):
  """jvp, grad, vmap, linearize, and their compositions."""
  grad = jax.grad
  return {
      "jvp_exp": (lambda x, t: jax.jvp(jnp.exp, (x,), (t,)), (1., 1.)),
      "jvp_sin_cos": (lambda x, t: jax.jvp(lambda y: jnp.sin(y) * jnp.cos(y), (x,), (t,)),
                      (_f32(3), _f32(3))),
      "grad_square": (grad(lambda x: x ** 2), (3.,)),
      "grad_sin": (grad(jnp.sin), (1.,)),
      "grad_sum_tanh": (grad(lambda x: jnp.sum(jnp.tanh(x))), (_f32(4),)),
      "grad_two_args": (grad(lambda x, y: jnp.sum(x * y + jnp.sin(x)), argnums=(0, 1)),
                        (_f32(3), _f32(3))),
      "grad_of_grad": (grad(grad(lambda x: x ** 3)), (2.,)),
      "grad_matmul_loss": (grad(lambda w, x: jnp.sum((x @ w) ** 2)), (_f32(3, 2), _f32(4, 3))),
      "value_and_grad": (jax.value_and_grad(lambda x: jnp.sum(jnp.exp(x))), (_f32(3),)),
      "vjp": (lambda x, g: jax.vjp(jnp.sin, x)[1](g), (_f32(3), _f32(3))),
      "linearize": (lambda x, t: jax.linearize(jnp.sin, x)[1](t), (_f32(3), _f32(3))),
      "vmap_add": (jax.vmap(lambda x, y: x + y), (_f32(3, 2), _f32(3, 2))),
      "vmap_dot": (jax.vmap(jnp.dot), (_f32(4, 3), _f32(4, 3))),
      "vmap_in_axes": (jax.vmap(lambda x, y: x * y, in_axes=(0, None)), (_f32(3, 2), _f32(2))),
      "vmap_sum": (jax.vmap(jnp.sum, in_axes=1), (_f32(3, 4),)),
      "vmap_grad": (jax.vmap(grad(lambda x: jnp.sin(x) * x)), (_f32(3),)),
      "jacfwd": (jax.jacfwd(lambda x: jnp.sin(x) * x), (_f32(3),)),
      "jacrev": (jax.jacrev(lambda x: jnp.sin(x) * x), (_f32(3),)),
      "hessian": (jax.hessian(lambda x: jnp.sum(x ** 3)), (_f32(2),)),
      "grad_of_where": (grad(lambda x: jnp.sum(jnp.where(x > 0, x, 0.))), (_f32(3),)),
      "grad_of_max": (grad(lambda x: jnp.max(x)), (_f32(3),)),
      "grad_of_index": (grad(lambda x: x[1] * x[2]), (_f32(4),)),
      "grad_of_logsumexp": (grad(lambda x: jax.nn.logsumexp(x)), (_f32(4),)),
      "grad_of_norm": (grad(jnp.linalg.norm), (_f32(3),)),
  }


def _jit(jax, jnp, lax):
  """Nested jit: pjit printing, variable aliasing, shared jaxprs."""
  jit = jax.jit

  def inner(x):
    return jnp.sin(x) * 2

  def twice(x):
    g = jit(inner)
    return g(g(x))

  def long_body(x):
    for _ in range(12):
      x = jnp.sin(x) + 1
    return x

  def named_f(x):
    return jnp.cos(x)

  return {
      "jit_one": (jit(lambda x: x + 1), (_f32(3),)),
      "jit_inner": (lambda x: jit(inner)(x) + 1, (_f32(3),)),
      "jit_twice_shared": (twice, (_f32(3),)),
      "jit_nested_three": (jit(lambda x: jit(lambda y: jit(jnp.sin)(y) * 2)(x) + 1),
                           (_f32(3),)),
      "jit_long_body_hoisted": (lambda x: jit(long_body)(x) * 2, (_f32(3),)),
      "jit_many_args": (jit(lambda a, b, c, d, e, f: a + b + c + d + e + f),
                        tuple(_f32(3) for _ in range(6))),
      "jit_many_outputs": (jit(lambda x: tuple(x + i for i in range(8))), (_f32(3),)),
      "jit_same_arg_twice": (lambda x: jit(lambda a, b: a * b)(x, x), (_f32(3),)),
      "jit_literal_arg": (lambda x: jit(lambda a, b: a * b)(x, 2.), (_f32(3),)),
      "jit_returns_input": (lambda x, y: jit(lambda a, b: (b, a + b))(x, y), (_f32(2), _f32(2))),
      "jit_static_argnums": (lambda x: jit(lambda a, n: a * n, static_argnums=1)(x, 3),
                             (_f32(2),)),
      "jit_named_function": (lambda x: jit(named_f)(x) + jit(named_f)(x + 1), (_f32(2),)),
      "jit_grad": (jit(jax.grad(lambda x: jnp.sum(jnp.sin(x)))), (_f32(3),)),
      "grad_of_jit": (jax.grad(lambda x: jnp.sum(jit(jnp.sin)(x))), (_f32(3),)),
      "vmap_of_jit": (jax.vmap(jit(lambda x: jnp.sin(x) * 2)), (_f32(4, 3),)),
      "jit_unused_output": (lambda x: jit(lambda a: (a * 2, a + 1))(x)[0], (_f32(3),)),
      "jit_of_constant": (jit(lambda x: x + np.arange(3, dtype=np.float32)), (_f32(3),)),
      "jit_no_args": (lambda: jit(lambda: jnp.ones(3))(), ()),
  }


def _control_flow(jax, jnp, lax):
  """cond, switch, while, fori and scan at several nesting levels."""
  cond, switch, scan = lax.cond, lax.switch, lax.scan

  def scan_body(c, x):
    return c + x, c * x

  return {
      "cond": (lambda p, x: cond(p, jnp.sin, jnp.cos, x), (np.array(True), _f32(3))),
      "cond_int_pred": (lambda i, x: cond(i > 0, lambda y: y + 1., lambda y: y - 1., x),
                        (np.int32(1), 1.)),
      "cond_two_operands": (lambda p, x, y: cond(p, lambda a, b: a * b,
                                                 lambda a, b: a - b, x, y),
                            (np.array(True), _f32(2), _f32(2))),
      "cond_closure": (lambda p, x, y: cond(p, lambda a: a * y, lambda a: a + y, x),
                       (np.array(True), _f32(2), _f32(2))),
      "switch_three": (lambda i, x: switch(i, [jnp.sin, jnp.cos, jnp.tan], x),
                       (np.int32(1), _f32(3))),
      "cond_nested": (lambda p, x: cond(p, lambda y: cond(y[0] > 0, jnp.sin, jnp.cos, y),
                                        lambda y: y * 2, x),
                      (np.array(True), _f32(3))),
      "cond_in_jit": (jax.jit(lambda p, x: cond(p, jnp.sin, jnp.cos, x)),
                      (np.array(True), _f32(3))),
      "while_loop": (lambda x: lax.while_loop(lambda c: c < 10., lambda c: c * 2., x), (1.,)),
      "while_tuple": (lambda x: lax.while_loop(lambda c: c[0] < 5,
                                               lambda c: (c[0] + 1, c[1] * 2.), (0, x)),
                      (_f32(3),)),
      "fori_loop": (lambda x: lax.fori_loop(0, 5, lambda i, c: c + i, x), (1.,)),
      "fori_loop_array": (lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, x), (_f32(3),)),
      "fori_loop_traced_bound": (lambda n, x: lax.fori_loop(0, n, lambda i, c: c + 1., x),
                                 (np.int32(3), 1.)),
      "scan_cumsum": (lambda xs: scan(scan_body, 0., xs), (_f32(5),)),
      "scan_no_xs": (lambda c: scan(lambda c, _: (c * 2, c), c, None, length=4), (1.,)),
      "scan_reverse": (lambda xs: scan(scan_body, 0., xs, reverse=True), (_f32(5),)),
      "scan_unroll": (lambda xs: scan(scan_body, 0., xs, unroll=2), (_f32(5),)),
      "scan_pytree": (lambda xs, ys: scan(lambda c, xy: ((c[0] + xy[0], c[1] * xy[1]),
                                                         xy[0] - xy[1]),
                                          (0., 1.), (xs, ys)),
                      (_f32(4), _f32(4))),
      "scan_in_scan": (lambda xs: scan(lambda c, row: (c + scan(scan_body, 0., row)[0], c),
                                       0., xs),
                       (_f32(3, 4),)),
      "while_in_cond": (lambda p, x: cond(p, lambda y: lax.while_loop(lambda c: c < 9.,
                                                                      lambda c: c + 1., y),
                                          lambda y: y, x),
                        (np.array(True), 1.)),
      "scan_in_while": (lambda x: lax.while_loop(
          lambda c: c[0] < 3,
          lambda c: (c[0] + 1, scan(lambda a, b: (a + b, a), c[1], x)[0]), (0, 0.)),
                        (_f32(4),)),
      "grad_of_cond": (jax.grad(lambda x: cond(x > 0, jnp.sin, jnp.cos, x)), (1.,)),
      "grad_of_scan": (jax.grad(lambda xs: scan(scan_body, 1., xs)[0]), (_f32(3),)),
      "grad_of_fori": (jax.grad(lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, 1.)), (2.,)),
      "vmap_of_cond": (jax.vmap(lambda p, x: cond(p, jnp.sin, jnp.cos, x)),
                       (np.array([True, False]), _f32(2))),
      "vmap_of_while": (jax.vmap(lambda x: lax.while_loop(lambda c: c < 5., lambda c: c + 1., x)),
                        (_f32(3),)),
      "jit_in_scan": (lambda xs: scan(lambda c, x: (jax.jit(jnp.add)(c, x), c), 0., xs),
                      (_f32(3),)),
      "cond_jit_both_branches": (
          lambda p, x: cond(p, jax.jit(jnp.sin), jax.jit(jnp.sin), x),
          (np.array(True), _f32(2))),
      "map": (lambda xs: lax.map(jnp.sin, xs), (_f32(3, 2),)),
  }


def _custom(jax, jnp, lax):
  """custom_jvp and custom_vjp calls."""

  @jax.custom_jvp
  def f(x):
    return jnp.sin(x)

  @f.defjvp
  def f_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return f(x), jnp.cos(x) * t

  @jax.custom_vjp
  def g(x, y):
    return x * y

  def g_fwd(x, y):
    return g(x, y), (x, y)

  def g_bwd(res, ct):
    x, y = res
    return ct * y, ct * x

  g.defvjp(g_fwd, g_bwd)

  @jax.custom_jvp
  def clip_gradient(x):
    return jnp.clip(x, -1., 1.)

  clip_gradient.defjvp(lambda p, t: (clip_gradient(p[0]), t[0]))

  return {
      "custom_jvp_call": (f, (_f32(3),)),
      "custom_jvp_in_expr": (lambda x: f(x) * 2 + 1, (_f32(3),)),
      "custom_jvp_grad": (jax.grad(lambda x: jnp.sum(f(x))), (_f32(3),)),
      "custom_jvp_jvp": (lambda x, t: jax.jvp(f, (x,), (t,)), (_f32(3), _f32(3))),
      "custom_jvp_in_jit": (jax.jit(lambda x: f(f(x))), (_f32(3),)),
      "custom_jvp_long_body": (clip_gradient, (_f32(3),)),
      "custom_vjp_call": (g, (_f32(3), _f32(3))),
      "custom_vjp_grad": (jax.grad(lambda x, y: jnp.sum(g(x, y))), (_f32(3), _f32(3))),
      "custom_vjp_in_scan": (lambda xs: lax.scan(lambda c, x: (g(c, x), c), 1., xs),
                             (_f32(3),)),
      "relu": (jax.nn.relu, (_f32(3),)),
      "grad_relu": (jax.grad(lambda x: jnp.sum(jax.nn.relu(x))), (_f32(3),)),
      "gelu": (jax.nn.gelu, (_f32(3),)),
      "silu": (jax.nn.silu, (_f32(3),)),
      "softplus": (jax.nn.softplus, (_f32(3),)),
  }


def _random(jax, jnp, lax):
  """PRNG key operations."""
  key = np.array([0, 42], np.uint32)
  return {
      "random_split": (lambda k: jax.random.split(k), (key,)),
      "random_uniform": (lambda k: jax.random.uniform(k, (3,)), (key,)),
      "random_normal": (lambda k: jax.random.normal(k, (2,)), (key,)),
      "random_bits": (lambda k: jax.random.bits(k, (4,)), (key,)),
      "random_randint": (lambda k: jax.random.randint(k, (3,), 0, 10), (key,)),
      "random_bernoulli": (lambda k: jax.random.bernoulli(k, 0.3, (3,)), (key,)),
      "random_fold_in": (lambda k: jax.random.fold_in(k, 3), (key,)),
      "random_key_in_fn": (lambda: jax.random.PRNGKey(0), ()),
  }


def _layout(jax, jnp, lax):
  """Programs sized to fall just under and just over 80 columns, long lists, deep nests."""
  spec = lambda *shape: jax.ShapeDtypeStruct(shape, jnp.float32)

  def chain(n):
    def f(x):
      for _ in range(n):
        x = jnp.sin(x)
      return x
    return f

  def many_in(n):
    return lambda *xs: sum(xs[1:], xs[0])

  return {
      # `{ lambda ; a:f32[] b:f32[]. let c:f32[] = exp a; d:f32[] = mul b c in (c, d) }`
      "width_two_eqns_fits": (lambda x, t: jax.jvp(jnp.exp, (x,), (t,)), (1., 1.)),
      # `{ lambda ; a:f32[S]. let b:f32[S] = sin a in (b,) }` is 50 + 2 len(S) columns
      "width_one_eqn_78": (jnp.sin, (spec(1000, 1000, 1000),)),
      "width_one_eqn_80": (jnp.sin, (spec(1000, 1000, 10000),)),
      "width_one_eqn_82": (jnp.sin, (spec(1000, 10000, 10000),)),
      "width_returns_input": (lambda x: (jnp.sin(x), x), (spec(10, 10),)),
      "width_two_eqns_over": (lambda x: jnp.cos(jnp.sin(x)), (_f32(1000, 1000),)),
      "width_two_eqns_under": (lambda x: jnp.cos(jnp.sin(x)), (_f32(10, 10),)),
      "width_three_eqns": (lambda x: jnp.cos(jnp.sin(x)) + 1, (_f32(),)),
      "chain_3": (chain(3), (1.,)),
      "chain_30": (chain(30), (1.,)),
      "many_inputs_10": (many_in(10), tuple(_f32(3) for _ in range(10))),
      "many_inputs_30": (many_in(30), tuple(_f32(3) for _ in range(30))),
      "many_inputs_big_shapes": (many_in(8), tuple(_f32(123, 456, 7) for _ in range(8))),
      "many_outputs_20": (lambda x: tuple(x * i for i in range(20)), (_f32(3),)),
      "many_outputs_40": (lambda x: tuple(x + i for i in range(40)), (_f32(2, 2),)),
      "many_outputs_multiline_width": (lambda x: tuple(x + i for i in range(12)),
                                       (_f32(100, 100),)),
      "long_var_names": (chain(705), (1.,)),  # names run past zz to baa
      "split_many_outputs": (lambda x: jnp.split(x, 30), (_f32(30),)),
      "long_params_transpose": (lambda x: jnp.transpose(x, (5, 4, 3, 2, 1, 0, 6, 7, 8, 9)),
                                (_f32(*([1] * 10)),)),
      "long_params_broadcast": (lambda x: jnp.broadcast_to(x, (2,) * 12),
                                (_f32(*([1] * 12)),)),
      "long_params_broadcast_lax": (
          lambda x: lax.broadcast_in_dim(x, (2,) * 12, tuple(range(12))), (_f32(*([1] * 12)),)),
      "long_params_reshape": (lambda x: x.reshape((2, 3, 2, 3, 2, 3, 2, 3)), (_f32(1296),)),
      "deep_jit_5": (_deep_jit(jax, jnp, 5), (_f32(3),)),
      "deep_cond_4": (_deep_cond(jax, jnp, lax, 4), (np.array(True), _f32(3))),
      "deep_scan_3": (_deep_scan(jax, jnp, lax, 3), (_f32(2, 2, 2),)),
      "mlp": (_mlp(jax, jnp), (_f32(4, 8), _f32(8), _f32(8, 2), _f32(2), _f32(5, 4))),
      "grad_mlp": (jax.grad(_mlp(jax, jnp), argnums=(0, 2)),
                   (_f32(4, 8), _f32(8), _f32(8, 2), _f32(2), _f32(5, 4))),
  }


def _deep_jit(jax, jnp, depth):
  f = jnp.sin
  for i in range(depth):
    f = jax.jit(lambda x, f=f, i=i: f(x) * (i + 1))
  return f


def _deep_cond(jax, jnp, lax, depth):
  def build(d):
    if d == 0:
      return jnp.sin
    inner = build(d - 1)
    return lambda x: lax.cond(x[0] > d, inner, lambda y: y * d, x)

  body = build(depth)
  return lambda p, x: lax.cond(p, body, jnp.cos, x)


def _deep_scan(jax, jnp, lax, depth):
  def build(d):
    if d == 0:
      return lambda c, x: (c + x, c)
    inner = build(d - 1)
    return lambda c, xs: (c + lax.scan(inner, 0., xs)[0], c)

  body = build(depth - 1)
  return lambda xs: lax.scan(body, 0., xs)


def _mlp(jax, jnp):
  def loss(w1, b1, w2, b2, x):
    h = jax.nn.relu(x @ w1 + b1)
    return jnp.mean((h @ w2 + b2) ** 2)
  return loss


def _boundaries(jax, jnp, lax):
  """Equations and jaxprs sized around the width, and JAX's rule that a group fits if
  it fits by itself: a parameter list ending at column 80 stays flat even when the
  operands after it run past the width."""
  spec = lambda *shape: jax.ShapeDtypeStruct(shape, jnp.float32)
  reshape = lambda *sizes: lambda x: lax.reshape(x, sizes)
  return {
      "params_end_at_78": (reshape(10, 10), (spec(100),)),
      "params_end_at_80_operands_past": (reshape(100, 100), (spec(10000),)),
      "params_end_past_80": (reshape(100, 1000), (spec(100000),)),
      "params_end_past_80_other": (reshape(1000, 100), (spec(100000),)),
      "params_three_dims_79": (reshape(3, 3, 3), (spec(27),)),
      "params_wide_break": (reshape(1000, 1000, 1000), (spec(10 ** 9),)),
      "no_eqns_long": (lambda *xs: xs[::-1], tuple(_f32(7, 7) for _ in range(12))),
      "no_eqns_short": (lambda x, y: (y, x), (_f32(2), _f32(2))),
      "outputs_wrap": (lambda x: tuple(lax.mul(x, np.float32(i)) for i in range(1, 31)),
                       (_f32(4),)),
      "jit_outputs_wrap": (lambda x: jax.jit(lambda y: tuple(y + np.float32(i)
                                                             for i in range(24)))(x),
                           (_f32(4, 4),)),
      "jit_literal_operands_wrap": (
          lambda x: jax.jit(lambda *a: sum(a[1:], a[0]))(x, *[np.float32(i / 7)
                                                                for i in range(1, 9)]),
          (np.float32(1),)),
      "jit_wide_inner": (jax.jit(lambda x: jnp.sin(x) + jnp.cos(x)), (spec(1000, 1000, 1000),)),
      "jit_narrow_inner": (lambda x: jax.jit(jnp.sin)(x) * 2, (_f32(),)),
      "one_line_literal_outputs": (lambda x: (x, 1., 2), (np.float32(1),)),
  }


def _shared(jax, jnp, lax):
  """Sub-jaxprs printed once in a ``let``: used twice, or longer than 10 equations."""
  jit = jax.jit

  def chain(n, op):
    def f(x):
      for _ in range(n):
        x = op(x)
      return x
    return f

  def a(x):  # a shared jaxpr named `a`: variables skip that name
    return jnp.sin(x) * 2

  def outer(x):
    return jit(jnp.cos)(x) + 1

  return {
      "shared_named_a": (lambda x: jit(a)(jit(a)(x)), (_f32(3),)),
      "shared_lambda_name": (jit(lambda x: chain(11, jnp.sin)(x)), (_f32(3),)),
      "shared_ten_eqns_inline": (lambda x: jit(chain(10, jnp.sin))(x), (_f32(3),)),
      "shared_eleven_eqns": (lambda x: jit(chain(11, jnp.sin))(x), (_f32(3),)),
      "shared_name_collision": (
          lambda p, x: lax.cond(p, chain(11, jnp.sin), chain(11, jnp.cos), x),
          (np.array(True), _f32(3))),
      "shared_inner_of_shared": (lambda x: jit(outer)(jit(outer)(x)), (_f32(3),)),
      "shared_while_body": (lambda x: lax.while_loop(lambda c: c[0] < 1.,
                                                     lambda c: chain(11, jnp.sin)(c), x),
                            (_f32(3),)),
      "shared_scan_body": (lambda xs: lax.scan(lambda c, x: (chain(12, jnp.cos)(c + x), x),
                                               np.float32(0), xs), (_f32(3),)),
      "shared_twice_in_cond": (
          lambda p, x: lax.cond(p, lambda y: jit(a)(y), lambda y: jit(a)(y) + 1, x),
          (np.array(True), _f32(3))),
  }


def _strong_carries(jax, jnp, lax):
  """Loops whose carries start strongly typed (weak ones differ; see the test)."""
  zero = np.float32(0)

  def body(c, x):
    return c + x, c * x

  return {
      "scan_strong": (lambda xs: lax.scan(body, zero, xs), (_f32(5),)),
      "scan_strong_reverse_unroll": (lambda xs: lax.scan(body, zero, xs, reverse=True,
                                                         unroll=2), (_f32(5),)),
      "scan_strong_pytree": (lambda xs, ys: lax.scan(
          lambda c, xy: ((c[0] + xy[0], c[1] * xy[1]), xy[0] - xy[1]),
          (zero, np.float32(1)), (xs, ys)), (_f32(4), _f32(4))),
      "scan_strong_in_scan": (lambda xs: lax.scan(
          lambda c, row: (c + lax.scan(body, zero, row)[0], c), zero, xs), (_f32(3, 4),)),
      "scan_strong_consts": (lambda w, xs: lax.scan(lambda c, x: (c * w + x, c), zero, xs),
                             (np.float32(2), _f32(4))),
      "scan_strong_wide": (lambda xs: lax.scan(body, jnp.zeros((100, 100, 100)), xs),
                           (jax.ShapeDtypeStruct((7, 100, 100, 100), jnp.float32),)),
      "deep_scan_strong": (lambda xs: lax.scan(
          lambda c, m: (c + lax.scan(lambda d, row: (d + lax.scan(body, zero, row)[0], d),
                                     zero, m)[0], c), zero, xs), (_f32(2, 2, 2),)),
      "while_strong_in_scan": (lambda xs: lax.scan(
          lambda c, x: (lax.while_loop(lambda d: d < x, lambda d: d + np.float32(1), c), c),
          zero, xs), (_f32(3),)),
  }


def _more_lax(jax, jnp, lax):
  """lax ops with longer parameter lists."""
  return {
      "conv_3d": (lambda x, w: lax.conv_general_dilated(
          x, w, (1, 2, 1), ((1, 1), (0, 0), (2, 2)), rhs_dilation=(1, 1, 2)),
                  (_f32(1, 2, 6, 6, 6), _f32(4, 2, 3, 3, 3))),
      "dot_general_batch_dims": (lambda x, y: lax.dot_general(
          x, y, (((3,), (2,)), ((0, 1), (0, 1)))), (_f32(2, 3, 4, 5), _f32(2, 3, 5, 6))),
      "lax_cumsum": (lambda x: lax.cumsum(x, axis=1, reverse=True), (_f32(3, 4),)),
      "lax_sort_two_operands": (lambda x, y: lax.sort((x, y), num_keys=1), (_f32(5), _f32(5))),
      "lax_argmax": (lambda x: lax.argmax(x, 1, jnp.int32), (_f32(3, 4),)),
      "lax_clamp": (lambda x: lax.clamp(np.float32(0), x, np.float32(1)), (_f32(3),)),
      "lax_reduce_precision": (lambda x: lax.reduce_precision(x, 5, 10), (_f32(3),)),
      "lax_broadcast_in_dim": (lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1,)), (_f32(3),)),
      "lax_select_n_three": (lambda i, x, y, z: lax.select_n(i, x, y, z),
                             (_i32(3), _f32(3), _f32(3), _f32(3))),
      "lax_shift_ops": (lambda x: (lax.shift_left(x, np.int32(2)),
                                   lax.shift_right_logical(x, np.int32(1))), (_i32(3),)),
      "lax_expand_dims": (lambda x: lax.expand_dims(x, (0, 2)), (_f32(3, 4),)),
      "lax_integer_pow": (lambda x: lax.integer_pow(x, -2), (_f32(3),)),
      "lax_round": (lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), (_f32(3),)),
      "lax_iota_2d": (lambda: lax.broadcasted_iota(jnp.int32, (3, 4), 1), ()),
      "lax_bitcast": (lambda x: lax.bitcast_convert_type(x, jnp.int32), (_f32(3),)),
  }


def _closed_over(jax, jnp, lax):
  """Scalar constants from outside: Python and NumPy scalars are literals, an Array made
  before the trace (eagerly, or under an enclosing trace) is a constvar."""
  eager = {"jnp_f32": jnp.float32(2.5), "jnp_array": jnp.array(2.5),
           "jnp_sin": jnp.sin(1.0), "jnp_int": jnp.array(3), "jnp_bool": jnp.array(True)}
  c0 = eager["jnp_f32"]

  def made_outside_cond(x):
    k = jnp.asarray(5.0)
    return lax.cond(x > 0, lambda: x * k, lambda: x), k

  def compile_time(x):
    with jax.ensure_compile_time_eval():
      k = jnp.sin(jnp.float32(1.0))
    return x * k

  def body(c, _):
    return c * c0 + np.float32(3.0) + 1.5, None
  out = {f"closed_{name}": ((lambda c: lambda x: x * c)(c), (1.,))
         for name, c in eager.items()}
  out.update({
      "closed_np_scalars": (lambda x: x * np.float32(2.5) + np.array(1.5) + np.int32(4)
                            + np.bool_(True), (1.,)),
      "closed_py_scalars": (lambda x: (x * 2 + True, x * (1 + 2j)), (1.,)),
      "closed_in_cond": (lambda x: lax.cond(x > 0, lambda: x * c0, lambda: x * 2.0), (1.,)),
      "closed_made_outside_cond": (made_outside_cond, (1.,)),
      "closed_compile_time_eval": (compile_time, (1.,)),
      "closed_in_scan": (lambda x: lax.scan(body, x, None, length=2)[0], (np.float32(1),)),
      "closed_in_jit": (lambda x: jax.jit(lambda y: y * c0 + jnp.int32(3))(x), (1.,)),
      "closed_outputs": (lambda x: (x, c0, np.float32(3.0), 1), (1.,)),
  })
  return out


def cases(jax, jnp, lax):
  out = {}
  for group in (_small, _literals, _shapes, _reductions, _indexing, _transforms, _jit,
                _control_flow, _custom, _random, _layout, _boundaries, _shared,
                _strong_carries, _more_lax, _closed_over):
    out.update(group(jax, jnp, lax))
  return out


_LAYOUT_CASES = ("jvp_exp", "cond_nested", "jit_twice_shared", "many_inputs_30",
                 "custom_vjp_call", "gather_array", "conv_2d_general", "deep_jit_5",
                 "scan_strong_in_scan", "outputs_wrap", "jit_literal_operands_wrap",
                 "no_eqns_long", "shared_name_collision")

# (case, keyword arguments of ``ClosedJaxpr.pretty_print``), recorded beside ``str``
PRETTY_PRINTS = (
    [(name, {"width": w}) for name in _LAYOUT_CASES for w in (20, 40, 60, 100, 150)]
    + [(name, {"print_shapes": False}) for name in _LAYOUT_CASES]
    + [(name, {"print_shapes": False, "width": 40}) for name in _LAYOUT_CASES])


def pretty_print_key(name, kwargs):
  """The JSON key of a ``pretty_print`` recording, e.g. ``'jvp_exp width=40'``."""
  return " ".join([name] + [f"{k}={v}" for k, v in sorted(kwargs.items())])
