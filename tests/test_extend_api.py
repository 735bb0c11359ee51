"""JAX's primitive-extension API: ``jax.extend.core.Primitive`` with ``def_impl`` and
``def_abstract_eval``, and the rule tables of ``jax.interpreters`` (``ad``, ``batching``,
``mlir``), which are jaxlite's own tables.

Primitives are defined here exactly as a JAX user defines them (the multiply-add of JAX's
"How primitives work" tutorial among them), then run eagerly, under ``jit`` on both tiers,
under ``grad``, ``jvp``, ``vmap`` and inside ``lax.scan``; answers are compared with
analytic values.
"""
import functools
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.extend import core as jex
from jaxlite.interpreters import ad, batching, mlir
from jaxlite.interpreters import partial_eval as pe
from jaxlite.extend import linear_util as lu
from jaxlite import api_util
from jaxlite._src.core import core as _core
from jaxlite._src.backends import lowering as _lowering
from jaxlite._src.transforms import ad as _ad
from jaxlite._src.transforms import batching as _batching

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _xla_available():
  from jaxlite._src.backends import xla_available
  return xla_available()


# how a function runs: eagerly, or jitted on a pinned tier
MODES = ["eager", "numpy", pytest.param("xla", marks=pytest.mark.skipif(
    not _xla_available(), reason="the XLA tier is unavailable"))]


def run(mode, f):
  return f if mode == "eager" else jax.jit(f, backend=mode)


# ----------------------------------------------------------------------------- the tutorial's
# multiply_add(x, y, z) = x * y + z, with a NumPy impl (called with concrete arrays, as in
# JAX), a JVP written with the primitive itself (so reverse mode needs its transpose),
# a batching rule and a lowering written with lower_fun.

multiply_add_p = jex.Primitive("multiply_add")
impl_calls = []


@multiply_add_p.def_impl
def _multiply_add_impl(x, y, z):
  impl_calls.append([type(a) for a in (x, y, z)])
  return np.add(np.multiply(x, y), z)


@multiply_add_p.def_abstract_eval
def _multiply_add_abstract(x, y, z):
  assert x.shape == y.shape == z.shape
  return jax.core.ShapedArray(x.shape, x.dtype)


def multiply_add(x, y, z):
  return multiply_add_p.bind(x, y, z)


def _multiply_add_jvp(primals, tangents):
  x, y, z = primals
  xt, yt, zt = tangents
  out = multiply_add(x, y, z)
  # d(x*y + z) = xt*y + x*yt + zt, each term a multiply_add (linear in its tangent)
  t = ad.instantiate_zeros(zt)
  if type(yt) is not ad.Zero:
    t = multiply_add(x, yt, t)
  if type(xt) is not ad.Zero:
    t = multiply_add(xt, y, t)
  return out, t


def _multiply_add_transpose(ct, x, y, z):
  # linear in z, and in whichever of x or y is undefined (never both)
  if type(ct) is ad.Zero:
    return [None, None, None]
  cx = multiply_add(ct, y, jnp.zeros_like(ct)) if ad.is_undefined_primal(x) else None
  cy = multiply_add(x, ct, jnp.zeros_like(ct)) if ad.is_undefined_primal(y) else None
  cz = ct if ad.is_undefined_primal(z) else None
  return [cx, cy, cz]


def _multiply_add_batch(args, dims):
  size = next(a.shape[d] for a, d in zip(args, dims) if d is not batching.not_mapped)
  args = [batching.bdim_at_front(a, d, size) for a, d in zip(args, dims)]
  return multiply_add(*args), 0


ad.primitive_jvps[multiply_add_p] = _multiply_add_jvp
ad.primitive_transposes[multiply_add_p] = _multiply_add_transpose
batching.primitive_batchers[multiply_add_p] = _multiply_add_batch
mlir.register_lowering(multiply_add_p, mlir.lower_fun(lambda x, y, z: x * y + z,
                                                      multiple_results=False))

X = np.array([0.5, -1.0, 2.0], np.float32)
Y = np.array([3.0, 0.25, -1.5], np.float32)
Z = np.array([1.0, 2.0, 3.0], np.float32)


def test_the_public_names_are_jaxlites_own_tables_and_class():
  assert jex.Primitive is _core.Primitive is jax.core.Primitive
  assert ad.primitive_jvps is _ad.jvp_rules
  assert ad.primitive_transposes is _ad.transpose_rules
  assert batching.primitive_batchers is _batching.batching_rules
  assert batching.fancy_primitive_batchers is _batching.axis_batching_rules
  assert multiply_add_p in _core.abstract_eval_rules
  from jaxlite._src.backends.xla import stablehlo
  assert stablehlo.lowering_rules is _lowering.lowering_rules
  assert multiply_add_p in stablehlo.lowering_rules
  # every jaxlite primitive's lowering is keyed by the primitive object
  assert all(isinstance(p, _core.Primitive) for p in stablehlo.lowering_rules)


def test_eager_bind_calls_the_impl_with_the_concrete_arrays():
  impl_calls.clear()
  x, y, z = map(jnp.asarray, (X, Y, Z))
  out = multiply_add(x, y, z)
  np.testing.assert_allclose(out, X * Y + Z)
  assert impl_calls == [[type(x)] * 3]
  # the impl's result is returned as it is (a NumPy array here), as in JAX
  assert isinstance(out, np.ndarray)


@pytest.mark.parametrize("mode", MODES)
def test_jit_on_each_tier(mode):
  f = run(mode, lambda x, y, z: multiply_add(x, y, z) * 2.0)
  np.testing.assert_allclose(f(X, Y, Z), 2 * (X * Y + Z), rtol=1e-6)


def test_the_primitive_is_staged_and_printed():
  jaxpr = jax.make_jaxpr(multiply_add)(X, Y, Z)
  assert str(jaxpr) == ("{ lambda ; a:f32[3] b:f32[3] c:f32[3]. let\n"
                        "    d:f32[3] = multiply_add a b c\n  in (d,) }")


@pytest.mark.parametrize("mode", MODES)
def test_grad_uses_the_jvp_and_the_transpose(mode):
  loss = lambda x, y, z: jnp.sum(multiply_add(x, y, z) ** 2)
  gx, gy, gz = run(mode, jax.grad(loss, argnums=(0, 1, 2)))(X, Y, Z)
  r = 2 * (X * Y + Z)
  np.testing.assert_allclose(gx, r * Y, rtol=1e-5)
  np.testing.assert_allclose(gy, r * X, rtol=1e-5)
  np.testing.assert_allclose(gz, r, rtol=1e-5)


def test_jvp_with_symbolic_zero_tangents():
  out, t = jax.jvp(lambda x: multiply_add(x, Y, Z), (X,), (np.ones(3, np.float32),))
  np.testing.assert_allclose(out, X * Y + Z)
  np.testing.assert_allclose(t, Y)
  # second order: d2/dx2 of sum((x*y+z)^2) is 2*y^2
  h = jax.grad(lambda x: jnp.sum(jax.grad(lambda u: jnp.sum(multiply_add(u, Y, Z) ** 2))(x)))
  np.testing.assert_allclose(h(X), 2 * Y ** 2, rtol=1e-5)


@pytest.mark.parametrize("mode", MODES)
def test_vmap_with_batched_and_unbatched_operands(mode):
  xs = np.stack([X, 2 * X, 3 * X])
  f = run(mode, jax.vmap(multiply_add, in_axes=(0, None, 1)))
  zs = np.stack([Z, Z + 1, Z + 2], axis=1)
  np.testing.assert_allclose(f(xs, Y, zs), xs * Y + zs.T, rtol=1e-6)
  # vmap of grad
  g = run(mode, jax.vmap(jax.grad(lambda x: jnp.sum(multiply_add(x, Y, Z)))))
  np.testing.assert_allclose(g(xs), np.broadcast_to(Y, xs.shape))


@pytest.mark.parametrize("mode", MODES)
def test_inside_scan(mode):
  # c_{k+1} = c_k * y_k + z_k: a linear recurrence, whose derivative in c_0 is prod(y)
  def f(c0, ys, zs):
    def body(c, yz):
      y, z = yz
      c = multiply_add(c, y, z)
      return c, c
    return lax.scan(body, c0, (ys, zs))
  ys = np.array([2.0, -0.5, 3.0], np.float32)
  zs = np.array([1.0, 1.0, -2.0], np.float32)
  c, cs = run(mode, f)(np.float32(0.5), ys, zs)
  expect = [0.5 * 2 + 1]
  for y, z in zip(ys[1:], zs[1:]):
    expect.append(expect[-1] * y + z)
  np.testing.assert_allclose(cs, expect, rtol=1e-6)
  np.testing.assert_allclose(c, expect[-1], rtol=1e-6)
  dc0 = run(mode, jax.grad(lambda c0: f(c0, ys, zs)[0]))(np.float32(0.5))
  np.testing.assert_allclose(dc0, np.prod(ys), rtol=1e-6)


# ----------------------------------------------------------------------------- other rules

# a linear primitive defined with deflinear2: scale(x, factor) = factor * x
scale_p = jex.Primitive("scale")
scale_p.def_impl(lambda x, *, factor: x * factor)
scale_p.def_abstract_eval(lambda x, *, factor: x)
ad.deflinear2(scale_p, lambda ct, x, *, factor: [scale_p.bind(ct, factor=factor)])
batching.defvectorized(scale_p)
mlir.register_lowering(scale_p, mlir.lower_fun(lambda x, *, factor: x * factor, False))

# a primitive with two results and per-operand rules: sincos(x) = (sin x, cos x)
sincos_p = jex.Primitive("sincos")
sincos_p.multiple_results = True
sincos_p.def_impl(lambda x: (jnp.sin(x), jnp.cos(x)))
sincos_p.def_abstract_eval(lambda x: [x, x])


def _sincos_jvp(primals, tangents):
  (x,), (t,) = primals, tangents
  s, c = sincos_p.bind(x)
  return [s, c], [t * c, -t * s]


ad.primitive_jvps[sincos_p] = _sincos_jvp
batching.primitive_batchers[sincos_p] = lambda args, dims: (sincos_p.bind(*args), [dims[0]] * 2)


# A JAX-style rule that uses ctx and calls lower_fun itself
def _sincos_lowering(ctx, x):
  assert [a.shape for a in ctx.avals_in] == [a.shape for a in ctx.avals_out][:1]
  return mlir.lower_fun(lambda v: [jnp.sin(v), jnp.cos(v)], multiple_results=True)(ctx, x)


mlir.register_lowering(sincos_p, _sincos_lowering)


@pytest.mark.parametrize("mode", MODES)
def test_linear_primitive_and_its_transpose(mode):
  f = lambda x: jnp.sum(scale_p.bind(x, factor=3.0) * x)
  np.testing.assert_allclose(run(mode, f)(X), 3 * np.sum(X * X), rtol=1e-6)
  np.testing.assert_allclose(run(mode, jax.grad(f))(X), 6 * X, rtol=1e-6)
  np.testing.assert_allclose(run(mode, jax.vmap(lambda x: scale_p.bind(x, factor=2.0)))(
      np.stack([X, Y])), 2 * np.stack([X, Y]))
  lin = jax.linear_transpose(lambda x: scale_p.bind(x, factor=-2.0), X)
  np.testing.assert_allclose(lin(Y)[0], -2 * Y)


@pytest.mark.parametrize("mode", MODES)
def test_multiple_results_primitive(mode):
  f = run(mode, lambda x: sincos_p.bind(x))
  s, c = f(X)
  np.testing.assert_allclose(s, np.sin(X), rtol=1e-6)
  np.testing.assert_allclose(c, np.cos(X), rtol=1e-6)
  # d/dx (sin x * cos x) = cos 2x; only one output used: the other's cotangent is zero
  g = run(mode, jax.grad(lambda x: jnp.sum(jnp.prod(jnp.stack(sincos_p.bind(x)), 0))))
  np.testing.assert_allclose(g(X), np.cos(2 * X), rtol=1e-5, atol=1e-6)
  g0 = run(mode, jax.grad(lambda x: jnp.sum(sincos_p.bind(x)[0])))
  np.testing.assert_allclose(g0(X), np.cos(X), rtol=1e-6)
  s2, c2 = run(mode, jax.vmap(sincos_p.bind))(np.stack([X, Y]))
  np.testing.assert_allclose(s2, np.sin(np.stack([X, Y])), rtol=1e-6)


@pytest.mark.parametrize("mode", ["numpy", pytest.param("xla", marks=pytest.mark.skipif(
    not _xla_available(), reason="the XLA tier is unavailable"))])
def test_a_lowering_through_emit_python_callback_calls_the_host_function(mode):
  """equinox's noinline: the lowering calls a jitted host function through
  mlir.emit_python_callback. As in JAX the compiled program calls it when it runs, on
  either tier (the impl serves eager calls only), so its own jit traces it once."""
  traces, impl_calls = [], []

  @jax.jit
  def host(x):
    traces.append(1)
    return (x * 3.0,)

  p = jex.Primitive("host_triple_" + mode)
  p.multiple_results = True
  p.def_impl(lambda x: impl_calls.append(1) or [x * 3.0])
  p.def_abstract_eval(lambda x: [x])

  def lowering(ctx, x):
    assert ctx.module_context.platforms
    result, _, keepalive = mlir.emit_python_callback(
        ctx, host, None, [x], ctx.avals_in, ctx.avals_out, has_side_effect=False)
    ctx.module_context.add_keepalive(keepalive)
    return result
  mlir.register_lowering(p, lowering)
  f = jax.jit(lambda x: p.bind(x)[0] + p.bind(x + 1.0)[0], backend=mode)
  for _ in range(3):
    np.testing.assert_allclose(f(X), 3 * X + 3 * (X + 1), rtol=1e-6)
  assert impl_calls == [] and len(traces) == 1
  np.testing.assert_allclose(p.bind(jnp.asarray(X))[0], 3 * X, rtol=1e-6)
  assert impl_calls == [1]


@pytest.mark.skipif(not _xla_available(), reason="the XLA tier is unavailable")
def test_a_lower_fun_is_traced_once_for_both_tiers():
  """As JAX lowers a program once, an equation's lower_fun is traced once though tier 0
  and XLA both compile it (equinox's announce_transform counts these traces)."""
  traces = []
  p = jex.Primitive("counted_lowering")
  p.def_abstract_eval(lambda x, *, tag: x)
  p.def_impl(lambda x, *, tag: x + 1.0)

  def lowered(x, *, tag):
    traces.append(tag)
    return x + 1.0
  mlir.register_lowering(p, mlir.lower_fun(lowered, multiple_results=False))
  f = jax.jit(lambda x: p.bind(x, tag="a") * 2.0)
  np.testing.assert_allclose(f(X), (X + 1) * 2, rtol=1e-6)   # tier 0 compiles it
  assert traces == ["a"]
  f.lower(X).compile().cost_analysis()                       # XLA compiles it
  assert traces == ["a"]
  g = jax.jit(lambda x: p.bind(x, tag="b") * 2.0)            # another equation
  np.testing.assert_allclose(g(X), (X + 1) * 2, rtol=1e-6)
  assert traces == ["a", "b"]


def test_defjvp_per_operand_rules():
  hyp_p = jex.Primitive("hypot_sq")   # x^2 + y^2
  hyp_p.def_impl(lambda x, y: x * x + y * y)
  hyp_p.def_abstract_eval(lambda x, y: x)
  ad.defjvp(hyp_p, lambda g, x, y: 2 * x * g, lambda g, x, y: 2 * y * g)
  gx, gy = jax.grad(lambda x, y: jnp.sum(hyp_p.bind(x, y)), argnums=(0, 1))(X, Y)
  np.testing.assert_allclose(gx, 2 * X)
  np.testing.assert_allclose(gy, 2 * Y)


@pytest.mark.parametrize("mode", MODES)
def test_impl_only_primitive_runs_under_jit_on_both_tiers(mode):
  """No lowering rule: tier 0 calls the impl when the program runs, XLA traces it."""
  cube_p = jex.Primitive("cube_impl_only")
  calls = []

  def impl(x):
    calls.append(type(x))
    return x * x * x
  cube_p.def_impl(impl)
  cube_p.def_abstract_eval(lambda x: x)
  out = run(mode, lambda x: cube_p.bind(x) + 1.0)(X)
  np.testing.assert_allclose(out, X ** 3 + 1, rtol=1e-6)
  assert calls


@pytest.mark.parametrize("mode", ["numpy", pytest.param("xla", marks=pytest.mark.skipif(
    not _xla_available(), reason="the XLA tier is unavailable"))])
def test_lowering_only_primitive_runs_under_jit_and_not_eagerly(mode):
  twice_p = jex.Primitive("twice_lowering_only")
  twice_p.def_abstract_eval(lambda x: x)
  mlir.register_lowering(twice_p, mlir.lower_fun(lambda x: 2 * x, multiple_results=False))
  np.testing.assert_allclose(jax.jit(twice_p.bind, backend=mode)(X), 2 * X)
  with pytest.raises(TypeError, match="twice_lowering_only"):
    twice_p.bind(jnp.asarray(X))


def test_axis_primitive_batchers_and_fancy_batchers():
  seen = {}
  # JAX's older signature: (axis_size, axis_name, trace_type, vals, dims)
  total_p = jex.Primitive("batch_total")
  total_p.def_impl(lambda x: x)
  total_p.def_abstract_eval(lambda x: x)

  def old_rule(axis_size, axis_name, trace_type, vals, dims):
    seen["old"] = (axis_size, axis_name)
    (x,), (d,) = vals, dims
    return jnp.sum(x, axis=d), None   # every example sees the batch's sum
  batching.axis_primitive_batchers[total_p] = old_rule
  out = jax.vmap(total_p.bind, axis_name="i")(X)
  np.testing.assert_allclose(out, np.sum(X))
  assert seen["old"] == (3, "i")

  other_p = jex.Primitive("batch_size_of")
  other_p.def_abstract_eval(lambda x: x)
  other_p.def_impl(lambda x: x)

  def fancy_rule(axis_data, vals, dims):
    seen["fancy"] = axis_data.size
    assert isinstance(vals, tuple) and isinstance(dims, tuple)   # as JAX passes them
    return vals[0] * axis_data.size, dims[0]
  batching.fancy_primitive_batchers[other_p] = fancy_rule
  np.testing.assert_allclose(jax.vmap(other_p.bind)(X), 3 * X)
  assert seen["fancy"] == 3


def test_defreducer():
  sum_p = jex.Primitive("my_reduce_sum")
  sum_p.def_impl(lambda x, *, axes: jnp.sum(x, axis=axes))
  sum_p.def_abstract_eval(lambda x, *, axes: jax.core.ShapedArray(
      [d for i, d in enumerate(x.shape) if i not in axes], x.dtype))
  batching.defreducer(sum_p)
  x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
  out = jax.vmap(lambda v: sum_p.bind(v, axes=(1,)), in_axes=1)(x)
  np.testing.assert_allclose(out, np.sum(x, axis=2).T)


def test_effectful_primitive_is_kept_by_dead_code_elimination():
  log = []
  note_p = jex.Primitive("note")
  note_p.multiple_results = True
  note_p.def_impl(lambda x: (log.append(float(np.asarray(x))), [])[1])
  note_p.def_effectful_abstract_eval(lambda x: ([], {"note-effect"}))

  def f(x):
    note_p.bind(x)
    return x + 1
  assert "note" in str(jax.make_jaxpr(f)(1.0))
  assert jax.make_jaxpr(f)(1.0).jaxpr.effects
  # no lowering: tier 0 calls the impl when the program runs, nothing reading its result
  jax.jit(f, backend="numpy")(np.float32(4.0))
  assert log == [4.0]


def test_constant_operands_are_not_folded_into_a_library_primitive():
  """A library's impl is Python that may do anything: jit leaves it to run with the
  program (as JAX leaves it to XLA) rather than calling it at compile time."""
  calls = []
  tap_p = jex.Primitive("tap")
  tap_p.def_impl(lambda x: (calls.append(1), x)[1])
  tap_p.def_abstract_eval(lambda x: x)
  f = jax.jit(lambda x: tap_p.bind(np.float32(2.0)) * x, backend="numpy")
  np.testing.assert_allclose(f(np.float32(3.0)), 6.0)
  np.testing.assert_allclose(f(np.float32(4.0)), 8.0)
  assert len(calls) == 2


def test_impl_is_called_for_jaxlite_primitives_too():
  # JAX's Primitive.impl: eager evaluation of any primitive
  from jaxlite._src.lax import elementwise as ew
  np.testing.assert_allclose(ew.sin_p.impl(jnp.asarray(X)), np.sin(X), rtol=1e-6)
  out, effects = sincos_p.abstract_eval(jax.core.ShapedArray((3,), np.float32))
  assert [a.shape for a in out] == [(3,), (3,)] and not effects


# ----------------------------------------------------------------------------- ad helpers

def test_zero_and_undefined_primal():
  z = ad.Zero.from_primal_value(jnp.arange(3))
  assert z.aval.dtype == jax.dtypes.float0 and z.aval.shape == (3,)
  zf = ad.Zero(jax.core.ShapedArray((2,), np.float32))
  np.testing.assert_array_equal(ad.instantiate_zeros(zf), np.zeros(2, np.float32))
  assert ad.instantiate_zeros(X) is X
  u = ad.UndefinedPrimal(jax.core.ShapedArray((2,), np.float32))
  assert ad.is_undefined_primal(u) and not ad.is_undefined_primal(X)
  # pytree nodes with no leaves, as in JAX
  assert jax.tree_util.tree_leaves([u, zf, 1.0]) == [1.0]
  aval = jax.core.ShapedArray((2,), np.int32)
  assert aval.to_tangent_aval().dtype == jax.dtypes.float0
  # at_least_vspace is the same (JAX 0.10.2: float32[] -> float32[], int32[] -> float0[]).
  assert aval.at_least_vspace() == aval.to_tangent_aval()
  assert jax.core.ShapedArray((), np.float32).at_least_vspace() == jax.core.ShapedArray((), np.float32)
  assert jex.primal_dtype_to_tangent_dtype(np.dtype(np.float32)) == np.float32


def test_deflinear_and_defbilinear_in_jax_signatures():
  neg_p = jex.Primitive("my_neg")
  neg_p.def_impl(lambda x: -x)
  neg_p.def_abstract_eval(lambda x: x)
  ad.deflinear(neg_p, lambda ct: [neg_p.bind(ct)])   # JAX's: no operands given
  np.testing.assert_allclose(jax.grad(lambda x: jnp.sum(neg_p.bind(x) * 3))(X), -3 * np.ones(3))

  mul_p = jex.Primitive("my_mul")
  mul_p.def_impl(lambda x, y: x * y)
  mul_p.def_abstract_eval(lambda x, y: x)
  ad.defbilinear(mul_p, lambda ct, x, y: mul_p.bind(ct, y), lambda ct, x, y: mul_p.bind(x, ct))
  gx, gy = jax.grad(lambda x, y: jnp.sum(mul_p.bind(x, y)), argnums=(0, 1))(X, Y)
  np.testing.assert_allclose(gx, Y)
  np.testing.assert_allclose(gy, X)


# ----------------------------------------------------------------------------- jaxprs

def test_building_and_rewriting_jaxprs_with_extend_core():
  # b = multiply_add(a, a, 1.0); the jaxpr built by hand and then evaluated
  f32 = jax.core.ShapedArray((3,), np.float32)
  a, b, one = jex.Var(f32), jex.Var(f32), jex.Var(f32)
  eqn = jex.new_jaxpr_eqn([a, a, one], [b], multiply_add_p, {}, jex.no_effects)
  jaxpr = jex.Jaxpr([one], [a], [b], [eqn], jex.no_effects)
  closed = jex.ClosedJaxpr(jaxpr, [np.ones(3, np.float32)])
  (out,) = jex.jaxpr_as_fun(closed)(X)
  np.testing.assert_allclose(out, X * X + 1)
  # equinox's finalisation: evaluate a traced jaxpr calling impl in place of bind
  traced = jax.make_jaxpr(lambda x: multiply_add(x, x, x))(X)
  env = dict(zip(traced.jaxpr.invars, [X]))
  for e in traced.jaxpr.eqns:
    params = e.primitive.get_bind_params(e.params)
    env[e.outvars[0]] = e.primitive.impl(*[env[v] for v in e.invars], **params)
  np.testing.assert_allclose(env[traced.jaxpr.outvars[0]], X * X + X)
  assert isinstance(traced, jex.ClosedJaxpr) and isinstance(traced.jaxpr, jex.Jaxpr)
  assert list(jex.subjaxprs(jax.make_jaxpr(lambda x: lax.cond(True, jnp.sin, jnp.cos, x))(
      1.0).jaxpr))


def test_mapped_and_unmapped_avals():
  aval = jax.core.ShapedArray((4, 3), np.float32)
  assert jex.mapped_aval(3, 1, aval).shape == (4,)
  assert jex.unmapped_aval(5, 0, aval).shape == (5, 4, 3)
  assert jex.mapped_aval(3, None, aval) is aval


def test_trace_state_and_top_trace():
  s0 = jex.get_opaque_trace_state(convention="flax")
  inner = []
  jax.jit(lambda x: inner.append(jex.get_opaque_trace_state()) or x)(1.0)
  assert s0 == jex.get_opaque_trace_state() and inner[0] != s0
  assert jex.find_top_trace(()) is _core.eval_trace


def test_ensure_compile_time_eval_folds_constants_and_stages_tracers():
  seen = {}

  @jax.jit
  def f(x):
    with jax.ensure_compile_time_eval():
      c = jnp.sin(0.5)              # concrete: no tracer among its operands
      seen["c"] = isinstance(c, jax.core.Tracer)
      y = x * 2                     # staged as usual
      seen["y"] = isinstance(y, jax.core.Tracer)
    return y + c
  np.testing.assert_allclose(f(1.0), 2 + np.sin(0.5), rtol=1e-6)
  assert seen == {"c": False, "y": True}


# ----------------------------------------------------------------------------- flax's tracing

def test_partial_eval_of_a_flattened_wrapped_function():
  """flax's lazy_init and nn.scan: lu.wrap_init -> api_util.flatten_fun_nokwargs ->
  pe.trace_to_jaxpr_nounits."""
  def fn(params, x):
    return {"known": params["w"] * 2, "unknown": x * params["w"]}
  params = {"w": np.float32(3.0)}
  args = (params, jax.ShapeDtypeStruct((2,), np.float32))
  flat, in_tree = jax.tree_util.tree_flatten(args)
  dbg = api_util.debug_info("lazy_init", fn, (in_tree,), {})
  f_flat, out_tree = api_util.flatten_fun_nokwargs(lu.wrap_init(fn, debug_info=dbg), in_tree)
  pvals = [pe.PartialVal.unknown(jax.core.ShapedArray(x.shape, x.dtype))
           if isinstance(x, jax.ShapeDtypeStruct) else pe.PartialVal.known(x) for x in flat]
  jaxpr, out_pvals, consts = pe.trace_to_jaxpr_nounits(f_flat, pvals)
  out = jax.tree_util.tree_unflatten(out_tree(), [c if pv is None else pv
                                                  for pv, c in out_pvals])
  np.testing.assert_allclose(out["known"], 6.0)
  assert out["unknown"].shape == (2,) and out_pvals[1].is_known() is False
  (y,) = jax.core.eval_jaxpr(jaxpr, consts, np.array([1.0, 2.0], np.float32))
  np.testing.assert_allclose(y, [3.0, 6.0])


def test_linear_util_transformations():
  @lu.transformation_with_aux
  def with_count(n, *args):
    out = yield args, {}
    yield out * n, len(args)
  f, aux = with_count(lu.wrap_init(lambda a, b: a + b, debug_info=None), 10)
  assert f.call_wrapped(1, 2) == 30 and aux() == 2


# ----------------------------------------------------------------------------- the alias

def test_served_as_jax_extend_and_jax_interpreters(tmp_path):
  script = textwrap.dedent("""
    import jax, jaxlite
    import jax.extend as jex
    import jax.extend.core
    import jax.interpreters.ad as ad, jax.interpreters.batching as batching
    import jax.interpreters.mlir as mlir
    from jax.extend import linear_util as lu
    from jax.interpreters import partial_eval as pe
    import jax.api_util, jax.custom_derivatives
    from jax._src.ad_util import stop_gradient_p
    assert jex.core.Primitive is jaxlite.core.Primitive
    assert jax.extend.core.ClosedJaxpr is jaxlite._src.core.core.ClosedJaxpr
    p = jax.extend.core.Primitive("double")
    p.def_impl(lambda x: 2 * x)
    p.def_abstract_eval(lambda x: x)
    ad.defjvp(p, lambda g, x: 2 * g)
    batching.defvectorized(p)
    mlir.register_lowering(p, mlir.lower_fun(lambda x: 2 * x, multiple_results=False))
    print(float(jax.grad(lambda x: p.bind(x) ** 2)(3.0)),
          jax.vmap(p.bind)(jax.numpy.arange(3.0)).tolist(),
          float(jax.jit(p.bind, backend="numpy")(4.0)))
  """)
  (tmp_path / "prog.py").write_text(script)
  env = dict(os.environ, PYTHONPATH=str(ROOT))
  out = subprocess.run([sys.executable, "-m", "jaxlite", "prog.py"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=300)
  assert out.returncode == 0, out.stderr
  assert out.stdout.split() == ["24.0", "[0.0,", "2.0,", "4.0]", "8.0"]


# ----------------------------------------------------------------------------- custom rules
# What equinox's filter_custom_jvp/filter_custom_vjp (and through them lineax, optimistix
# and diffrax) rely on: symbolic zeros in custom rules, and linear jaxprs holding calls.

def test_custom_jvp_with_symbolic_zeros():
  from jaxlite.custom_derivatives import SymbolicZero
  seen = []

  @jax.custom_jvp
  def f(x, y):
    return x * y

  def f_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    seen.append((type(tx) is SymbolicZero, type(ty) is SymbolicZero))
    t = SymbolicZero(jax.core.ShapedArray((), np.float32)) if type(tx) is SymbolicZero \
        else tx * y
    if type(ty) is not SymbolicZero:
      t = x * ty if type(t) is SymbolicZero else t + x * ty
    return f(x, y), t
  f.defjvp(f_jvp, symbolic_zeros=True)
  assert float(jax.grad(f)(2.0, 3.0)) == 3.0
  assert seen[-1] == (False, True)
  assert float(jax.grad(f, argnums=1)(2.0, 3.0)) == 2.0
  assert seen[-1] == (True, False)
  out, t = jax.jvp(lambda y: f(2.0, y), (3.0,), (1.0,))
  assert (float(out), float(t)) == (6.0, 2.0)


def test_custom_vjp_with_symbolic_zeros():
  from jaxlite.custom_derivatives import CustomVJPPrimal, SymbolicZero
  seen = {}

  @jax.custom_vjp
  def f(x, y):
    return x * y, x + y

  def fwd(x, y):
    assert type(x) is CustomVJPPrimal and type(y) is CustomVJPPrimal
    seen["perturbed"] = (x.perturbed, y.perturbed)
    # a Python flag among the residuals comes back to bwd as it is
    return f(x.value, y.value), (x.value, y.value, True)

  def bwd(res, cts):
    x, y, flag = res
    seen["flag"] = flag
    c_prod, c_sum = cts
    seen["zero_ct"] = type(c_sum) is SymbolicZero
    cx = c_prod * y + (0 if type(c_sum) is SymbolicZero else c_sum)
    return cx, None   # None for an argument: zero cotangent
  f.defvjp(fwd, bwd, symbolic_zeros=True)
  g = jax.grad(lambda x, y: f(x, y)[0])(2.0, 3.0)
  assert float(g) == 3.0
  assert seen == {"perturbed": (True, False), "flag": True, "zero_ct": True}


def test_custom_vjp_bwd_may_return_none_for_part_of_an_argument():
  @jax.custom_vjp
  def f(xs):
    return xs["a"] * xs["b"]
  f.defvjp(lambda xs: (f(xs), xs), lambda xs, ct: ({"a": ct * xs["b"], "b": None},))
  g = jax.grad(f)({"a": 2.0, "b": 3.0})
  assert float(g["a"]) == 3.0 and float(g["b"]) == 0.0


def test_transposing_a_jitted_call_and_a_custom_jvp_call_of_tangents():
  """A JVP rule that applies a jitted function (or a custom_jvp function) to the tangents
  leaves that call in the linear jaxpr: reverse mode transposes it."""
  double = jax.jit(lambda t: 2.0 * t)

  @jax.custom_jvp
  def halve(t):
    return t / 2

  halve.defjvp(lambda p, t: (halve(*p), t[0] / 2))

  @jax.custom_jvp
  def f(x):
    return x ** 3

  f.defjvp(lambda p, t: (f(*p), halve(double(3.0 * p[0] ** 2 * t[0]))))
  np.testing.assert_allclose(jax.grad(f)(2.0), 12.0)
  np.testing.assert_allclose(jax.jit(jax.grad(f), backend="numpy")(2.0), 12.0)
  lin = jax.linear_transpose(double, 1.0)
  assert float(lin(5.0)[0]) == 10.0


def test_eval_shape_of_shape_dtype_structs_and_tracer_main():
  s = jax.ShapeDtypeStruct((2, 3), np.float32, sharding=None)
  assert s.sharding is None
  out = jax.eval_shape(lambda: {"a": s, "b": jnp.zeros(4, np.int32)})
  assert out["a"] == jax.ShapeDtypeStruct((2, 3), np.float32)
  assert out["b"].shape == (4,)

  def f(x):   # equinox's filter_jvp compares a tracer's trace with the top trace
    top = jex.find_top_trace((x,))
    assert isinstance(x, ad.JVPTracer) and x._trace.main is top.main
    return x * 2
  assert jax.jvp(f, (1.0,), (1.0,))[1] == 2.0


# ----------------------------------------------------------------------------- call primitives
# numpyro looks for JAX's call primitives in jaxprs (numpyro/ops/provenance.py).

def test_extend_core_primitives_are_jaxlites_own():
  from jaxlite.extend.core import primitives
  assert primitives.add_p is _core_primitive_of(lax.add, 1.0, 2.0)
  assert primitives.jit_p.name == "jit" and primitives.closed_call_p.name == "closed_call"
  assert primitives.call_p.name == "call" and primitives.sin_p.name == "sin"
  assert not any(name.startswith("_") for name in vars(primitives) if name.endswith("_p"))


def _core_primitive_of(fun, *args):
  return jax.make_jaxpr(fun)(*args).eqns[0].primitive


@pytest.mark.parametrize("tier", MODES[1:])
def test_closed_call_and_call_run_eagerly_jitted_and_transformed(tier):
  from jaxlite.extend.core import primitives
  closed = jax.make_jaxpr(lambda x, y: (jnp.sin(x) * y, x + y))(1.0, 2.0)

  def f(x, y, prim):
    jaxpr = closed if prim is primitives.closed_call_p else closed.jaxpr
    return prim.bind(x, y, call_jaxpr=jaxpr)

  for prim in (primitives.closed_call_p, primitives.call_p):
    want = [np.sin(0.7) * 3.0, 3.7]
    np.testing.assert_allclose(f(0.7, 3.0, prim), want, rtol=1e-6)
    jitted = jax.jit(lambda x, y: f(x, y, prim), backend=tier)
    np.testing.assert_allclose(jitted(0.7, 3.0), want, rtol=1e-6)
    grad = jax.grad(lambda x, y: f(x, y, prim)[0], (0, 1))(0.7, 3.0)
    np.testing.assert_allclose(grad, [np.cos(0.7) * 3.0, np.sin(0.7)], rtol=1e-6)
    xs = jnp.array([0.1, 0.2, 0.3])
    np.testing.assert_allclose(jax.vmap(lambda x: f(x, 3.0, prim)[0])(xs),
                               np.sin([0.1, 0.2, 0.3]) * 3.0, rtol=1e-6)
    assert any(e.primitive is prim for e in
               jax.make_jaxpr(lambda x, y: f(x, y, prim))(0.7, 3.0).eqns)


def test_take_current_trace_and_trace_tag_as_jax():
  # JAX 0.10.2 (jax.extend.core; dm-haiku imports both): the context manager yields the
  # current trace and makes the eager one current inside; every TraceTag equals the others
  from jaxlite.extend import core as jex_core
  from jaxlite._src.core import core as core_

  with jex_core.take_current_trace() as trace:
    assert trace is core_.eval_trace
  seen = []

  def f(x):
    with jex_core.take_current_trace() as trace:
      seen.append((trace, core_.current_trace()))
    return x * 2
  assert float(jax.jit(f)(1.0)) == 2.0
  assert seen[0][0] is not core_.eval_trace and seen[0][1] is core_.eval_trace
  assert jex_core.TraceTag() == jex_core.TraceTag()
  assert hash(jex_core.TraceTag()) == hash(jex_core.TraceTag())
