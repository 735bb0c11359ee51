"""checkify cases, recorded from JAX (make_checkify.py) and replayed on jaxlite
(tests/test_checkify.py).

``cases(jax, jnp, lax, checkify, jit)`` takes the modules, so the same code runs on real JAX
and on jaxlite; ``jit`` is the jit the cases use (jaxlite replays them with each backend).
Each case is a function of no arguments returning ``(err, out)`` (recorded as
``err.get()`` and the leaves of ``out``), or raising (recorded as the error's class and
message).
"""
import re

import numpy as np


def cases(jax, jnp, lax, checkify, jit):
  E = checkify.all_checks
  f32 = jnp.float32
  c = {}

  def positive_log(x):
    checkify.check(x > 0, "x must be positive, got {x}", x=x)
    return jnp.log(x)

  # -- user checks and their messages
  c["check_fails"] = lambda: checkify.checkify(positive_log)(f32(-1.0))
  c["check_passes"] = lambda: checkify.checkify(positive_log)(f32(2.0))
  c["check_format_spec"] = lambda: checkify.checkify(
      lambda x, y: checkify.check(x < y, "{:.2f} is not below {y:.1f}", x, y=y) or x + y)(
          f32(3.14159), f32(2.0))
  c["check_array_arg"] = lambda: checkify.checkify(
      lambda x: checkify.check(jnp.all(x > 0), "bad {}", x) or x)(
          jnp.array([1.0, -3.0, -2.0]))
  c["check_int_args"] = lambda: checkify.checkify(
      lambda i, n: checkify.check(i < n, "index {i} >= {n}", i=i, n=n) or i)(
          jnp.int32(7), jnp.int32(5))
  c["check_pytree_args"] = lambda: checkify.checkify(
      lambda d: checkify.check(d["a"] > d["b"], "{} and {}", d["a"], d["b"]) or d["a"])(
          {"a": f32(1.0), "b": f32(2.0)})

  def two_checks(x):
    checkify.check(x > 0, "first {}", x)
    checkify.check(x > -5, "second {}", x)
    return x * 2
  c["first_of_two_checks"] = lambda: checkify.checkify(two_checks)(f32(-10.0))
  c["second_of_two_checks"] = lambda: checkify.checkify(
      lambda x: two_checks(-x) + two_checks(x))(f32(3.0))
  c["user_check_not_enabled"] = lambda: checkify.checkify(
      positive_log, errors=checkify.nan_checks)(f32(-1.0))
  c["debug_check_in_checkify"] = lambda: checkify.checkify(
      lambda x: checkify.debug_check(x != 0, "cannot be zero!") or x)(jnp.int32(0))

  # -- NaN checks name the primitive
  c["nan_log"] = lambda: checkify.checkify(jnp.log, errors=checkify.nan_checks)(f32(-1.0))
  c["nan_sqrt"] = lambda: checkify.checkify(jnp.sqrt, errors=E)(jnp.array([4.0, -1.0]))
  c["nan_mul"] = lambda: checkify.checkify(lambda x: x * jnp.inf, errors=E)(jnp.zeros(3))
  c["nan_sub"] = lambda: checkify.checkify(lambda x: x - x, errors=E)(jnp.array([jnp.inf]))
  c["nan_sin"] = lambda: checkify.checkify(lambda x: x + jnp.sin(x),
                                           errors=checkify.float_checks)(f32(jnp.inf))
  c["nan_reduce_sum"] = lambda: checkify.checkify(jnp.sum, errors=E)(jnp.array([jnp.nan]))
  c["nan_from_nan_input"] = lambda: checkify.checkify(lambda x: x + 1.0, errors=E)(
      f32(jnp.nan))
  c["nan_free"] = lambda: checkify.checkify(lambda x: jnp.exp(x) * 2.0, errors=E)(
      jnp.arange(3.0))
  c["nan_dot_general"] = lambda: checkify.checkify(lambda x: x @ x, errors=E)(
      jnp.array([jnp.inf, 0.0]))

  # -- division by zero
  c["div_int"] = lambda: checkify.checkify(lambda x, y: x // y, errors=checkify.div_checks)(
      jnp.arange(3), jnp.array([1, 0, 1]))
  c["div_float"] = lambda: checkify.checkify(lambda x, y: x / y, errors=E)(
      jnp.ones(3), f32(0.0))
  c["div_before_nan"] = lambda: checkify.checkify(lambda x, y: x / y, errors=E)(
      jnp.arange(3.0), f32(0.0))
  c["rem_unchecked"] = lambda: checkify.checkify(lambda x, y: x % y, errors=E)(
      jnp.arange(3), jnp.array([1, 0, 1]))
  c["div_fine"] = lambda: checkify.checkify(lambda x, y: lax.div(x, y), errors=E)(
      jnp.arange(4), jnp.int32(2))

  # -- out-of-bounds indexing
  I = checkify.index_checks
  c["oob_scalar_index"] = lambda: checkify.checkify(lambda x, i: x[i], errors=I)(
      jnp.arange(3), jnp.int32(5))
  c["oob_negative_index"] = lambda: checkify.checkify(lambda x, i: x[i], errors=I)(
      jnp.arange(3), jnp.int32(-5))
  c["in_bounds_negative"] = lambda: checkify.checkify(lambda x, i: x[i], errors=I)(
      jnp.arange(3), jnp.int32(-2))
  c["oob_second_axis"] = lambda: checkify.checkify(lambda x, i, j: x[i, j], errors=I)(
      jnp.ones((3, 4)), jnp.int32(1), jnp.int32(7))
  c["oob_gather"] = lambda: checkify.checkify(lambda x, i: x[i], errors=I)(
      jnp.ones((3, 4)), jnp.array([0, 5, 7]))
  c["oob_take"] = lambda: checkify.checkify(lambda x, i: jnp.take(x, i), errors=I)(
      jnp.ones((3, 4)), jnp.array([0, 5, 17]))
  c["oob_scatter_add"] = lambda: checkify.checkify(lambda x, i: x.at[i].add(1.0), errors=I)(
      jnp.ones((3, 4)), jnp.array([0, 5]))
  c["oob_scatter_set"] = lambda: checkify.checkify(lambda x, i: x.at[i].set(1), errors=I)(
      jnp.arange(3), jnp.int32(5))
  c["oob_dynamic_slice"] = lambda: checkify.checkify(
      lambda x, i: lax.dynamic_slice(x, (i, 0), (2, 2)), errors=I)(jnp.ones((3, 4)),
                                                                  jnp.int32(-4))
  c["oob_dynamic_slice_end"] = lambda: checkify.checkify(
      lambda x, i: lax.dynamic_slice(x, (i,), (2,)), errors=I)(jnp.arange(3.0), jnp.int32(2))
  c["oob_dynamic_update_slice"] = lambda: checkify.checkify(
      lambda x, i: lax.dynamic_update_slice(x, jnp.ones(2), (i,)), errors=I)(
          jnp.ones(3), jnp.int32(5))
  c["oob_index_in_dim"] = lambda: checkify.checkify(
      lambda x, i: lax.dynamic_index_in_dim(x, i), errors=I)(jnp.ones((3, 4)), jnp.int32(3))

  # -- control flow
  c["cond_nan_branch"] = lambda: checkify.checkify(
      lambda x: lax.cond(x > 0, lambda x: jnp.log(-x), lambda x: x, x), errors=E)(f32(1.0))
  c["cond_other_branch"] = lambda: checkify.checkify(
      lambda x: lax.cond(x > 0, lambda x: jnp.log(-x), lambda x: x, x), errors=E)(f32(-1.0))

  def branch_check(x):
    def b(x):
      checkify.check(x < 0, "in branch {}", x)
      return x
    return lax.cond(x > 0, b, lambda x: x * 2, x)
  c["cond_check"] = lambda: checkify.checkify(branch_check)(f32(1.0))
  c["cond_check_untaken"] = lambda: checkify.checkify(branch_check)(f32(-1.0))
  c["switch_nan"] = lambda: checkify.checkify(
      lambda i, x: lax.switch(i, [lambda x: x, lambda x: jnp.log(x), lambda x: -x], x),
      errors=E)(jnp.int32(1), f32(-1.0))

  def while_body_check(x):
    def body(v):
      checkify.check(v < 5, "loop {}", v)
      return v + 1
    return lax.while_loop(lambda v: v < 10, body, x)
  c["while_body"] = lambda: checkify.checkify(while_body_check)(jnp.int32(0))
  c["while_body_ok"] = lambda: checkify.checkify(while_body_check)(jnp.int32(6))

  def while_cond_check(x):
    def cond(v):
      checkify.check(v < 5, "cond {}", v)
      return v < 10
    return lax.while_loop(cond, lambda v: v + 1, x)
  c["while_cond"] = lambda: checkify.checkify(while_cond_check)(jnp.int32(0))
  c["while_cond_initial"] = lambda: checkify.checkify(while_cond_check)(jnp.int32(7))

  def scan_check(xs):
    def body(carry, x):
      checkify.check(x < 2, "scan {} {}", carry, x)
      return carry + x, carry
    return lax.scan(body, f32(0.0), xs)
  c["scan"] = lambda: checkify.checkify(scan_check)(jnp.arange(5.0))
  c["scan_nan"] = lambda: checkify.checkify(
      lambda xs: lax.scan(lambda c, x: (c + jnp.log(x), c), f32(0.0), xs), errors=E)(
          jnp.array([1.0, 2.0, -1.0, 3.0]))
  c["fori_loop"] = lambda: checkify.checkify(
      lambda x: lax.fori_loop(0, 5, lambda i, v: checkify.check(i < 3, "fori {i}", i=i)
                              or v + i, x))(jnp.int32(0))
  c["fori_loop_traced_bounds"] = lambda: checkify.checkify(
      lambda n, x: lax.fori_loop(0, n, lambda i, v: checkify.check(i < 3, "fori {i}", i=i)
                                 or v + i, x))(jnp.int32(6), jnp.int32(0))

  def nested(xs):
    def outer(carry, x):
      inner = lax.while_loop(lambda v: v < x, lambda v: v + jnp.sqrt(v - 2.0), f32(3.0))
      return carry + inner, inner
    return lax.scan(outer, f32(0.0), xs)
  c["scan_of_while_nan"] = lambda: checkify.checkify(nested, errors=E)(
      jnp.array([2.0, 5.0, 9.0]))

  # -- around and inside other transformations
  c["jit_inside"] = lambda: checkify.checkify(jit(positive_log))(f32(-2.0))
  c["jit_outside"] = lambda: jit(checkify.checkify(positive_log))(f32(-2.0))
  c["jit_outside_passes"] = lambda: jit(checkify.checkify(positive_log))(f32(2.0))
  c["jit_both_nan"] = lambda: jit(checkify.checkify(jit(lambda x: jnp.log(x) + 1.0),
                                                    errors=E))(jnp.array([1.0, -1.0]))
  c["jit_of_loop"] = lambda: jit(checkify.checkify(while_body_check))(jnp.int32(0))
  c["grad_inside"] = lambda: checkify.checkify(jax.grad(positive_log))(f32(-2.0))
  c["grad_inside_passes"] = lambda: checkify.checkify(jax.grad(positive_log))(f32(4.0))
  c["grad_nan"] = lambda: checkify.checkify(jax.grad(lambda x: jnp.sqrt(x) * x),
                                            errors=E)(f32(0.0))
  c["grad_of_checked_output"] = lambda: (
      checkify.checkify(positive_log)(f32(2.0))[0],
      jax.grad(lambda x: checkify.checkify(positive_log)(x)[1])(f32(2.0)))

  def scan_grad_f(x):
    def body(c, xi):
      checkify.check(xi < 10.0, "big {}", xi)
      return c * jnp.sin(xi) + jnp.log(xi), c
    return lax.scan(body, x, jnp.arange(1.0, 4.0) * x)[0]

  def cond_grad_f(x):
    def t(x):
      checkify.check(x < 10.0, "big {}", x)
      return jnp.log(x) * x
    return lax.cond(x > 1.0, t, lambda x: x * 3.0, x)
  c["grad_of_cond_check"] = lambda: checkify.checkify(jax.grad(cond_grad_f), errors=E)(
      f32(20.0))
  c["grad_through_checkified_cond"] = lambda: (None, jax.value_and_grad(
      lambda x: checkify.checkify(cond_grad_f, errors=E)(x)[1])(f32(2.0)))
  c["jacfwd_of_scan_check"] = lambda: checkify.checkify(jax.jacfwd(scan_grad_f),
                                                        errors=E)(f32(20.0))
  c["grad_through_checkified_scan"] = lambda: (None, jax.value_and_grad(
      lambda x: checkify.checkify(scan_grad_f, errors=E)(x)[1])(f32(2.0)))
  c["jit_grad_of_cond_check"] = lambda: jit(checkify.checkify(jax.grad(cond_grad_f)))(
      f32(20.0))
  c["vmap_inside"] = lambda: checkify.checkify(jax.vmap(positive_log))(
      jnp.array([1.0, -3.0, -2.0]))
  c["vmap_inside_one"] = lambda: checkify.checkify(jax.vmap(positive_log))(
      jnp.array([1.0, -3.0, 2.0]))
  c["vmap_outside"] = lambda: jax.vmap(checkify.checkify(positive_log))(
      jnp.array([1.0, -2.0, -3.0]))
  c["vmap_outside_ok"] = lambda: jax.vmap(checkify.checkify(positive_log))(
      jnp.array([1.0, 2.0]))
  c["vmap_outside_nan"] = lambda: jax.vmap(checkify.checkify(jnp.log, errors=E))(
      jnp.array([1.0, -2.0, 3.0]))
  xs2 = lambda: jnp.array([[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]])
  c["vmap_vmap_inside"] = lambda: checkify.checkify(jax.vmap(jax.vmap(positive_log)))(xs2())
  c["vmap_vmap_outside"] = lambda: jax.vmap(jax.vmap(checkify.checkify(positive_log)))(
      xs2())
  c["vmap_between"] = lambda: jax.vmap(checkify.checkify(jax.vmap(positive_log)))(xs2())
  c["check_before_nan_of_same_eqn"] = lambda: checkify.checkify(
      lambda x: jnp.log(x) + positive_log(x), errors=E)(f32(-1.0))
  c["check_constant_false"] = lambda: checkify.checkify(
      lambda x: checkify.check(False, "const") or x)(jnp.int32(1))
  xs4 = lambda: jnp.array([1.0, -2.0, 3.0, -4.0])
  c["vmap_of_jit_inside"] = lambda: checkify.checkify(jax.vmap(jit(positive_log)))(xs4())
  c["jit_of_vmap_inside"] = lambda: checkify.checkify(jit(jax.vmap(positive_log)))(xs4())
  c["jit_vmap_checkify_jit"] = lambda: jit(jax.vmap(checkify.checkify(jit(positive_log),
                                                                     errors=E)))(xs4())
  c["lax_map"] = lambda: jit(checkify.checkify(lambda xs: lax.map(positive_log, xs),
                                               errors=E))(xs4())
  cond_check = lambda x: lax.cond(x > 0, lambda x: x, positive_log, x)
  c["vmap_of_cond_inside"] = lambda: checkify.checkify(jax.vmap(cond_check))(xs4())
  c["vmap_of_cond_outside"] = lambda: jax.vmap(checkify.checkify(cond_check))(xs4())
  c["jit_of_vmap_outside"] = lambda: jit(jax.vmap(checkify.checkify(positive_log)))(
      jnp.array([1.0, -2.0]))

  @jax.custom_jvp
  def safe_log(x):
    return jnp.log(x)
  safe_log.defjvp(lambda p, t: (safe_log(p[0]), t[0] / p[0]))
  c["custom_jvp_nan"] = lambda: checkify.checkify(safe_log, errors=E)(f32(-1.0))

  @jax.custom_vjp
  def host_log_sqrt(x):
    y = jax.pure_callback(lambda v: np.log(np.abs(v)), jax.ShapeDtypeStruct(x.shape, x.dtype),
                          x)
    return y * jnp.sqrt(x)
  host_log_sqrt.defvjp(lambda x: (host_log_sqrt(x), x), lambda x, g: (g / x,))
  c["custom_vjp_callback_grad_through"] = lambda: (None, jax.grad(
      lambda x: checkify.checkify(host_log_sqrt, errors=E)(x)[1])(f32(2.0)))
  c["custom_vjp_callback_nan"] = lambda: checkify.checkify(jax.grad(host_log_sqrt),
                                                           errors=E)(f32(-2.0))

  def sin_positive(x):
    checkify.check(x > 0, "neg {}", x)
    return jnp.sin(x)

  @jax.custom_jvp
  def custom_checked(x):
    return sin_positive(x)
  custom_checked.defjvp(lambda p, t: (custom_checked(p[0]), jnp.cos(p[0]) * t[0]))
  for label, fun in (("checkpoint", jax.checkpoint(sin_positive)),
                     ("custom_jvp", custom_checked)):
    c[f"{label}_check"] = lambda fun=fun: checkify.checkify(fun)(f32(-1.0))
    c[f"{label}_check_jit"] = lambda fun=fun: checkify.checkify(jit(fun))(f32(-1.0))
    c[f"{label}_check_grad"] = lambda fun=fun: checkify.checkify(jax.grad(fun))(f32(-1.0))
    c[f"{label}_grad_through"] = lambda fun=fun: (None, jax.grad(
        lambda x: checkify.checkify(fun)(x)[1])(f32(1.0)))
  c["checkpoint_nan"] = lambda: checkify.checkify(jax.checkpoint(jnp.log), errors=E)(
      f32(-1.0))

  # -- check outside checkify, check_error
  c["eager_check_raises"] = lambda: positive_log(f32(-1.0))
  c["eager_check_passes"] = lambda: (None, positive_log(f32(1.0)))
  c["jit_without_checkify"] = lambda: jit(positive_log)(f32(-1.0))
  c["jit_without_checkify_passing"] = lambda: jit(positive_log)(f32(1.0))
  c["debug_check_outside"] = lambda: (
      None, checkify.debug_check(f32(0.0) != 0, "cannot be zero!") or f32(1.0))
  c["jit_debug_check_outside"] = lambda: (None, jit(
      lambda x: checkify.debug_check(x != 0, "cannot be zero!") or x + 1)(jnp.int32(0)))
  c["jit_debug_check_in_checkify"] = lambda: jit(checkify.checkify(
      lambda x: checkify.debug_check(x != 0, "cannot be zero {}!", x) or x + 1))(jnp.int32(0))
  c["throw"] = lambda: checkify.checkify(positive_log)(f32(-1.0))[0].throw()
  c["throw_no_error"] = lambda: (None, checkify.checkify(positive_log)(f32(1.0))[0].throw())
  c["check_error_eager"] = lambda: checkify.check_error(
      checkify.checkify(positive_log)(f32(-1.0))[0])

  def rechecked(x):
    err, out = jit(checkify.checkify(positive_log))(x)
    checkify.check_error(err)
    return out
  c["check_error_in_checkify"] = lambda: checkify.checkify(rechecked)(f32(-1.0))
  c["check_error_not_error"] = lambda: checkify.check_error("no")
  c["check_python_float_arg"] = lambda: checkify.checkify(positive_log)(-1.0)
  c["check_numpy_pred"] = lambda: checkify.check(np.array(True), "x")
  c["check_eager_python_false"] = lambda: checkify.check(False, "plain {}", jnp.int32(3))
  c["check_eager_under_vmap"] = lambda: jax.vmap(positive_log)(jnp.array([1.0, -2.0, -3.0]))
  c["check_vector_pred"] = lambda: checkify.checkify(
      lambda x: checkify.check(x > 0, "bad") or x)(jnp.ones(3))
  return c


def jaxpr_cases(jax, jnp, checkify):
  """Functions whose jaxprs are compared as JAX prints them (error codes masked)."""
  def f(x):
    checkify.check(x > 0, "bad {}", x)
    return x * 2
  x = jnp.float32(1.0)
  return {"check": lambda: jax.make_jaxpr(f)(x),
          "checkified": lambda: jax.make_jaxpr(checkify.checkify(f))(x),
          "checkified_nan": lambda: jax.make_jaxpr(
              checkify.checkify(jnp.log, errors=checkify.nan_checks))(x)}


def masked_jaxpr(text):
  """A printed jaxpr with its error codes (process-wide counters) replaced by ``#``."""
  return re.sub(r"(select_n False:bool\[\] )\d+(:i32\[\])", r"\1#\2", str(text))


def leaves(jax, out):
  """``out`` as JSON: [shape, dtype, values] per leaf."""
  return [[list(np.shape(x)), np.asarray(x).dtype.name, np.asarray(x).tolist()]
          for x in jax.tree_util.tree_leaves(out)]


def run(jax, case):
  """What a case did: {"msg", "out"} or {"error": [class name, message]}."""
  try:
    err, out = case()
  except Exception as e:  # noqa: BLE001  (recorded)
    return {"error": [type(e).__name__, str(e).split("\n")[0]]}
  return {"msg": None if err is None else err.get(), "out": leaves(jax, out)}
