"""custom_jvp, custom_vjp, stop_gradient and checkpoint."""
import re

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.test_util import check_grads


def test_custom_jvp_rule_is_used_by_jvp_grad_and_jit():
  @jax.custom_jvp
  def f(x):
    return jnp.sin(x)

  @f.defjvp
  def f_jvp(primals, tangents):
    x, = primals
    return f(x), 2 * jnp.cos(x) * tangents[0]
  assert float(f(0.5)) == pytest.approx(np.sin(0.5))
  assert float(jax.grad(f)(0.0)) == 2.0
  assert float(jax.jvp(f, (0.0,), (1.0,))[1]) == 2.0
  assert float(jax.jit(jax.grad(f))(0.0)) == 2.0
  assert float(jax.grad(jax.jit(f))(0.0)) == 2.0


def test_custom_jvp_prints_like_jax():
  @jax.custom_jvp
  def f(x):
    return jnp.sin(x)
  f.defjvp(lambda p, t: (f(p[0]), jnp.cos(p[0]) * t[0] * 2))
  assert str(jax.make_jaxpr(f)(1.0)) == """{ lambda ; a:f32[]. let
    b:f32[] = custom_jvp_call[
      name=f
      call_jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c in (d,) }
      jvp=<lambda>
      symbolic_zeros=False
    ] a
  in (b,) }"""


def test_custom_jvp_stabilises_log1pexp_like_the_jax_docs():
  @jax.custom_jvp
  def log1pexp(x):
    return jnp.log(1.0 + jnp.exp(x))

  @log1pexp.defjvp
  def log1pexp_jvp(primals, tangents):
    x, = primals
    t, = tangents
    return log1pexp(x), t * (1.0 - 1.0 / (1.0 + jnp.exp(x)))
  assert float(jax.grad(log1pexp)(100.0)) == 1.0


def test_custom_jvp_with_nondiff_argnums_and_defjvps():
  from functools import partial

  @partial(jax.custom_jvp, nondiff_argnums=(0,))
  def app(f, x):
    return f(x)

  @app.defjvp
  def app_jvp(f, primals, tangents):
    x, = primals
    return app(f, x), 3.0 * tangents[0]
  assert float(jax.grad(lambda x: app(jnp.sin, x))(1.0)) == 3.0

  @jax.custom_jvp
  def g(x, y):
    return x * y
  g.defjvps(lambda t, ans, x, y: t * y * 10, lambda t, ans, x, y: t * x)
  assert float(jax.grad(g)(2.0, 3.0)) == 30.0
  assert float(jax.grad(g, argnums=1)(2.0, 3.0)) == 2.0


def test_custom_vjp_rule_is_used_by_grad():
  @jax.custom_vjp
  def f(x):
    return jnp.sin(x)
  f.defvjp(lambda x: (f(x), jnp.cos(x)), lambda cos_x, g: (3 * cos_x * g,))
  assert float(jax.grad(f)(0.0)) == 3.0
  assert float(jax.jit(jax.grad(f))(0.0)) == 3.0
  assert float(jax.grad(lambda x: f(x) * x)(0.0)) == 0.0


def test_custom_vjp_clip_gradient_with_pytrees():
  @jax.custom_vjp
  def clip_gradient(lo, hi, x):
    return x
  clip_gradient.defvjp(lambda lo, hi, x: (x, (lo, hi)),
                       lambda res, g: (None, None, jnp.clip(g, *res)))
  g = jax.grad(lambda x: jnp.sum(clip_gradient(-0.5, 0.5, x) * jnp.array([2.0, -0.1])))
  np.testing.assert_allclose(g(jnp.ones(2)), [0.5, -0.1])


def test_custom_vjp_errors_match_jax():
  @jax.custom_vjp
  def g(x):
    return jnp.sin(x)
  g.defvjp(lambda x: (g(x), jnp.cos(x)), lambda r, ct: (r * ct,))
  with pytest.raises(TypeError, match=r"can't apply forward-mode autodiff \(jvp\) to a "
                     "custom_vjp function"):
    jax.jvp(g, (1.0,), (1.0,))

  @jax.custom_vjp
  def h(x, y):
    return x * y
  h.defvjp(lambda x, y: (x * y, (x, y)), lambda r, ct: (ct,))
  with pytest.raises(TypeError, match="Custom VJP bwd rule must produce an output with the "
                     "same container"):
    jax.grad(h)(1.0, 2.0)


def test_stop_gradient():
  assert float(jax.grad(lambda x: lax.stop_gradient(x) * x)(3.0)) == 3.0
  assert "stop_gradient" in str(jax.make_jaxpr(lambda x: lax.stop_gradient(x) * 2)(1.0))
  assert lax.stop_gradient(jnp.arange(3)).dtype == np.int32


def test_checkpoint_gives_the_same_gradients_and_recomputes():
  f = lambda x: jnp.sum(jnp.sin(jnp.sin(x)) * 2)
  x = jnp.array([0.3, 1.2])
  np.testing.assert_allclose(jax.grad(jax.checkpoint(f))(x), jax.grad(f)(x), rtol=1e-6)
  check_grads(jax.checkpoint(lambda x: jnp.sin(jnp.cos(x)) * x), (np.float32(0.4),), 2)
  saved = jax.checkpoint(f, policy=jax.checkpoint_policies.everything_saveable)
  np.testing.assert_allclose(jax.grad(saved)(x), jax.grad(f)(x), rtol=1e-6)
  text = str(jax.make_jaxpr(jax.checkpoint(lambda x: jnp.sin(x) * 2))(1.0))
  assert text.splitlines()[1] == "    b:f32[] = remat2["


def test_custom_rules_compose_with_control_flow():
  @jax.custom_jvp
  def f(x):
    return x ** 2
  f.defjvp(lambda p, t: (f(p[0]), 10 * t[0]))
  g = lambda x: lax.scan(lambda c, _: (f(c), None), x, None, length=2)[0]
  # d/dx f(f(x)) with f' := 10 everywhere is 100
  assert float(jax.grad(g)(0.5)) == 100.0


def test_custom_rules_take_defaults_of_nondiff_arguments_left_out():
  # as JAX's resolve_kwargs: flax's fp8 dot_general_with_precision is called with two of
  # its five arguments, its nondiff_argnums (2, 3, 4) falling back to defaults
  from functools import partial

  @partial(jax.custom_jvp, nondiff_argnums=(1, 2))
  def f(x, scale=2.0, power=None):
    return x * scale if power is None else x ** power

  @f.defjvp
  def f_jvp(scale, power, primals, tangents):
    (x,), (t,) = primals, tangents
    return f(x, scale, power), t * 10.0

  @partial(jax.custom_vjp, nondiff_argnums=(1,))
  def g(x, n=3):
    return x * n
  g.defvjp(lambda x, n: (x * n, None), lambda n, r, ct: (ct * 100.0,))
  # JAX 0.10.2: 6.0 (6.0, 10.0) 10.0 6.0 9.0, and 6.0 100.0
  assert float(f(3.0)) == 6.0 and float(jax.jit(f)(3.0)) == 6.0
  assert [float(v) for v in jax.jvp(f, (3.0,), (1.0,))] == [6.0, 10.0]
  assert float(jax.grad(f)(3.0)) == 10.0 and float(f(3.0, 4.0, 2)) == 9.0
  assert float(g(2.0)) == 6.0 and float(jax.grad(g)(2.0)) == 100.0


def test_custom_jvp_call_params_follow_jax():
  # JAX 0.10.2: the params are call_jaxpr, jvp_jaxpr_fun (a WrappedFun whose
  # call_wrapped(*zeros) gives (jvp_jaxpr, consts, out_zeros)), num_consts and
  # symbolic_zeros; get_bind_params gives subfuns=(fun, jvp), which bind takes back
  # (equinox's finalise_jaxpr calls fun.call_wrapped). Values recorded from JAX 0.10.2.
  @jax.custom_jvp
  def f(x, y):
    return jnp.sin(x) * y

  @f.defjvp
  def f_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    return f(x, y), 3.0 * tx + ty

  eqn = jax.make_jaxpr(f)(1.0, 2.0).jaxpr.eqns[0]
  assert {"call_jaxpr", "jvp_jaxpr_fun", "num_consts", "symbolic_zeros"} <= set(eqn.params)
  jvp_jaxpr, consts, out_zeros = eqn.params["jvp_jaxpr_fun"].call_wrapped(False, False)
  assert consts == [] and out_zeros == [False]
  assert len(jvp_jaxpr.invars) == 4 and len(jvp_jaxpr.outvars) == 2
  params = eqn.primitive.get_bind_params(eqn.params)
  fun, jvp = params.pop("subfuns")
  np.testing.assert_allclose(fun.call_wrapped(1.0, 2.0), [1.6829419], rtol=1e-6)
  np.testing.assert_allclose(jvp.call_wrapped(1.0, 2.0, 1.0, 0.5), [1.6829419, 3.5],
                             rtol=1e-6)

  def g(x, y):
    return eqn.primitive.bind(x, y, subfuns=(fun, jvp), **params)[0]
  out, tangent = jax.jvp(g, (1.0, 2.0), (1.0, 0.5))
  np.testing.assert_allclose([out, tangent], [1.6829419, 3.5], rtol=1e-6)
  assert float(jax.grad(g)(1.0, 2.0)) == 3.0
  assert "jvp=f_jvp" in str(jax.make_jaxpr(g)(1.0, 2.0))


def test_grad_of_a_jitted_custom_vjp_traces_bwd_once():
  # as JAX 0.10.2: grad(jit(f)) splits the jitted call into a primal and a tangent call
  # whose jaxprs (JVP, partial evaluation, transpose) are cached per jaxpr, so a second
  # grad reuses the transpose and bwd is traced once; results recorded from JAX 0.10.2
  traces = []

  @jax.custom_vjp
  def f(x):
    return x

  def f_bwd(res, g):
    traces.append(1)
    return (g + 2,)
  f.defvjp(lambda x: (x, None), f_bwd)
  jf = jax.jit(f)
  assert float(jax.grad(jf)(jnp.array(1.0))) == 3.0
  assert float(jax.grad(jf)(jnp.array(2.0))) == 3.0
  assert len(traces) == 1
  # another jit of f shares the first one's traces, as JAX's are keyed by the function
  assert float(jax.grad(jax.jit(f))(jnp.array(1.0))) == 3.0
  assert len(traces) == 1


def test_grad_of_jit_stages_a_primal_and_a_tangent_call():
  # JAX 0.10.2 stages make_jaxpr(grad(jit(g))) as two jit calls, the primal work (with
  # the residuals as outputs) and the transposed tangent work; jvp of jit keeps symbolic
  # zero output tangents
  @jax.jit
  def g(x):
    return jnp.sin(x) * x

  text = str(jax.make_jaxpr(jax.grad(g))(1.0))
  assert text.count("jit[") == 2 and "cos" in text and "add_any" in text
  np.testing.assert_allclose(jax.grad(g)(1.0), np.cos(1.0) + np.sin(1.0), rtol=1e-6)

  @jax.jit
  def h(x, y):
    return x * 2.0, lax.stop_gradient(y), y

  _, tangents = jax.jvp(h, (1.0, 2.0), (1.0, 1.0))
  assert float(tangents[0]) == 2.0 and float(tangents[1]) == 0.0 and float(tangents[2]) == 1.0
  out, tangent = jax.jvp(lambda x: h(x, 2.0)[1], (1.0,), (1.0,))
  assert float(out) == 2.0 and float(tangent) == 0.0


class _Box:
  """A pytree node over one array, as flax's Variables are."""

  def __init__(self, v):
    self.v = v


jax.tree_util.register_pytree_node(_Box, lambda b: ((b.v,), None), lambda _, c: _Box(c[0]))


def test_custom_vjp_bwd_may_return_a_tree_prefix_of_the_arguments():
  # As JAX 0.10.2: each leaf of bwd's output stands for every leaf of the argument subtree
  # at its place (nnx's bwd rules return raw arrays where the arguments hold Variables);
  # values and messages recorded from JAX 0.10.2.
  @jax.custom_vjp
  def f(box, pair):
    return jnp.sin(box.v) * pair[0] * pair[1]

  def fwd(box, pair):
    return f(box, pair), (box.v, pair)

  def bwd(res, g):
    v, (a, b) = res
    return jnp.cos(v) * a * b * g, g * jnp.sin(v)   # an array for the box, one for the pair
  f.defvjp(fwd, bwd)
  grads = jax.grad(lambda bv, a, b: f(_Box(bv), (a, b)), argnums=(0, 1, 2))(0.5, 2.0, 3.0)
  np.testing.assert_allclose(grads, [5.2654953, 0.47942555, 0.47942555], rtol=1e-6)
  structure = "for primal input structure PyTreeDef((CustomNode(_Box[None], [*]), (*, *)))."
  for bad, got in [(lambda res, g: (None, [g, g]), "PyTreeDef((None, [*, *]))"),
                   (lambda res, g: g, "PyTreeDef(*)")]:
    f.defvjp(fwd, bad)
    with pytest.raises(TypeError, match=re.escape(f"but got bwd output structure {got} "
                                                  f"{structure}")):
      jax.grad(lambda a: f(_Box(1.0), (a, 2.0)))(1.0)


def test_call_primitives_run_eagerly_on_the_operands_themselves():
  # JAX 0.10.2 runs the function of custom_jvp, custom_vjp, checkpoint and linear_call on
  # the values, eagerly and under vmap: an output that is an operand is that same Array
  # (recorded there: every line True; lineax's inexact_asarray test relies on it)
  y = jnp.array([1.0, 2.0])
  f = jax.custom_jvp(lambda x: x)
  f.defjvp(lambda p, t: (p[0], t[0]))
  g = jax.custom_vjp(lambda x: x)
  g.defvjp(lambda x: (x, None), lambda r, c: (c,))
  remat = jax.checkpoint(lambda x: x)
  linear = lambda x: jax.custom_derivatives.linear_call(  # noqa: E731
      lambda r, x: x, lambda r, c: c, 0.0, x)
  for fun in (f, g, remat, linear):
    assert fun(y) is y
  for fun in (f, g, remat):
    assert jax.vmap(fun)(y) is y
  # the values still go through the function's computation where it computes
  h = jax.custom_jvp(lambda x: (x, 2.0 * x))
  h.defjvp(lambda p, t: (h(p[0]), (t[0], 2.0 * t[0])))
  same, doubled = jax.vmap(h)(y)
  assert same is y
  np.testing.assert_array_equal(doubled, [2.0, 4.0])


def test_forward_mode_of_a_custom_vjp_function_under_vmap_is_jaxs_type_error():
  # JAX 0.10.2: jacfwd (jvp under vmap) of a custom_vjp function raises the same TypeError
  # as its jvp, from custom_lin's batching rule; jacrev uses the bwd rule ([[3, 0], [0, 3]])
  f = jax.custom_vjp(lambda x: 2 * x)
  f.defvjp(lambda x: (f(x), None), lambda r, g: (3 * g,))
  x = jnp.arange(2.0)
  for fn in (jax.jacfwd(f), jax.jit(jax.jacfwd(f))):
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
      fn(x)
  np.testing.assert_array_equal(jax.jacrev(f)(x), [[3.0, 0.0], [0.0, 3.0]])


def test_custom_rules_under_jvp_of_concrete_values_are_not_traced():
  # As JAX 0.10.2's process_custom_jvp_call / process_custom_vjp_call: under grad, jacrev
  # and jvp of concrete values the function is never traced, fwd and the JVP rule run on
  # the concrete primals, so they may hand them to NumPy (jaxopt's scipy wrappers do).
  # Values recorded from JAX 0.10.2.
  @jax.custom_vjp
  def npf(x):
    return jnp.asarray(np.sin(np.asarray(x)))
  npf.defvjp(lambda x: (npf(x), np.cos(np.asarray(x))), lambda r, g: (g * r,))

  @jax.custom_jvp
  def npj(x):
    return jnp.asarray(np.sin(np.asarray(x)))
  seen = []

  @npj.defjvp
  def npj_jvp(primals, tangents):
    seen.append(type(primals[0]))
    return npj(primals[0]), np.cos(np.asarray(primals[0])) * tangents[0]

  np.testing.assert_allclose(jax.grad(npf)(1.0), 0.5403023, rtol=1e-6)
  np.testing.assert_allclose(jax.jacrev(npf)(jnp.array([1.0, 2.0])),
                             [[0.5403023, 0.0], [0.0, -0.4161468]], rtol=1e-6, atol=1e-7)
  np.testing.assert_allclose(jax.grad(npj)(1.0), 0.5403023, rtol=1e-6)
  out, tangent = jax.jvp(npj, (1.0,), (2.0,))
  # the rule saw the Python float as given: its NumPy tangent is float64, kept as made
  assert seen[-1] is float and tangent.dtype == np.float64
  np.testing.assert_allclose([out, tangent], [0.84147096, 1.0806046117362795], rtol=1e-6)
  value, grad = jax.value_and_grad(lambda x: npf(x) + npj(x))(1.0)
  np.testing.assert_allclose([value, grad], [1.6829419, 1.0806046], rtol=1e-6)
  # with no tangent reaching it the call runs below the JVP trace: on the plain values
  assert jax.grad(lambda x: x * npf(2.0))(1.0) == pytest.approx(0.9092974)
  # under jit the function is traced, as in JAX (NumPy then cannot take the tracer)
  with pytest.raises(jax.errors.TracerArrayConversionError):
    jax.jit(jax.grad(npf))(1.0)


def test_differentiating_a_closed_over_value_of_a_staged_custom_vjp_raises_as_jax():
  # JAX 0.10.2 raises CustomVJPException (jax._src.interpreters.ad) in all three cases.
  from jaxlite._src.transforms.ad import CustomVJPException

  def outer(q, arg_is_q=False):
    @jax.custom_vjp
    def f(x):
      return x * q
    f.defvjp(lambda x: (x * q, None), lambda r, g: (g,))
    return jax.jit(lambda x: f(x))(q if arg_is_q else 2.0)
  for run in (lambda: jax.grad(outer)(3.0), lambda: jax.grad(outer)(3.0, True),
              lambda: jax.jvp(outer, (3.0,), (1.0,))):
    with pytest.raises(CustomVJPException, match="closed-over value"):
      run()
  # not differentiated with respect to it: fine
  assert jax.grad(lambda x: jax.jit(lambda y: outer(4.0) * y)(x))(1.0) == 8.0


def _closing_over(c):
  """A custom_vjp function whose primal closes over ``c`` while its rules do not."""
  @jax.custom_vjp
  def h(x):
    return x * c
  h.defvjp(lambda x: (x * 2.0, None), lambda r, g: (g,))
  return h


def test_a_staged_custom_vjp_differentiated_for_a_closed_over_value_raises_jaxs_error():
  # JAX 0.10.2 (jax._src.interpreters.ad.CustomVJPException): once the call is staged into
  # a jaxpr (a jitted function's), differentiating it with respect to a value the
  # function closes over raises, under grad, jvp and with vmap on either side
  from jaxlite._src.private_ad import CustomVJPException
  outer = lambda c: _closing_over(c)(c + 1.0)
  vouter = lambda c: jnp.sum(jax.vmap(_closing_over(c))(jnp.arange(3.0) + c))
  staged = [jax.grad(jax.jit(outer)), lambda c: jax.jvp(jax.jit(outer), (c,), (1.0,)),
            jax.grad(jax.jit(vouter)),
            lambda c: jax.vmap(jax.grad(jax.jit(outer)))(jnp.arange(3.0) + c)]
  for fn in staged:
    with pytest.raises(CustomVJPException, match="with respect to a closed-over value"):
      fn(3.0)


def test_a_custom_vjp_differentiated_where_it_is_called_drops_closed_over_tangents():
  # JAX 0.10.2: differentiated where it is called (no jit between), the function's fwd
  # alone runs: the closed-over value's tangent is dropped (1.0, not 2c + 1 = 7.0), also
  # under vmap; a closed-over constant has no tangent, so the staged call is fine
  outer = lambda c: _closing_over(c)(c + 1.0)
  vouter = lambda c: jnp.sum(jax.vmap(_closing_over(c))(jnp.arange(3.0) + c))
  assert float(jax.grad(outer)(3.0)) == 1.0
  assert float(jax.jit(jax.grad(outer))(3.0)) == 1.0
  assert float(jax.grad(vouter)(3.0)) == 3.0
  np.testing.assert_array_equal(jax.vmap(jax.grad(outer))(jnp.arange(3.0)), [1.0, 1.0, 1.0])
  const = jax.grad(jax.jit(lambda c: _closing_over(jnp.float32(2.0))(c)))
  assert float(const(3.0)) == 1.0


def test_custom_vjp_call_prints_its_num_consts_as_jax():
  # JAX 0.10.2's make_jaxpr of the function above (c + 1.0 is b; a is closed over)
  text = str(jax.make_jaxpr(lambda c: _closing_over(c)(c + 1.0))(3.0))
  assert "fwd=<lambda>\n      num_consts=1\n      symbolic_zeros=False\n    ] a b" in text


def test_jaxs_private_interpreters_ad_serves_custom_vjp_exception():
  from jaxlite._src import private_ad
  from jaxlite.interpreters import ad
  assert issubclass(private_ad.CustomVJPException, Exception)
  assert private_ad.Zero is ad.Zero and private_ad.JVPTrace is ad.JVPTrace
  with pytest.raises(AttributeError, match="jax._src.interpreters.ad.primitive_jvp_nope"):
    private_ad.primitive_jvp_nope


def test_custom_jvp_call_prints_its_num_consts_as_jax():
  # JAX 0.10.2 prints num_consts of custom_jvp_call and custom_vjp_call only when nonzero
  def outer(c):
    @jax.custom_jvp
    def h(x):
      return x * c
    h.defjvp(lambda p, t: (h(p[0]), t[0]))
    return h(c + 1.0)
  text = str(jax.make_jaxpr(outer)(3.0))
  assert "jvp=<lambda>\n      num_consts=1\n      symbolic_zeros=False\n    ] a b" in text
  f = jax.custom_jvp(lambda x: x * 2)
  f.defjvp(lambda p, t: (f(p[0]), t[0]))
  assert "num_consts" not in str(jax.make_jaxpr(f)(1.0))


@pytest.mark.parametrize("kind", ["custom_jvp", "custom_vjp", "checkpoint"])
def test_tier_0_runs_a_loop_bodys_custom_rule_function_compiled(kind, monkeypatch):
  # the function of a custom_jvp/custom_vjp/checkpoint inside a loop body runs as tier 0's
  # compiled code, not by binding its primitives one by one at each iteration
  from jaxlite._src.core import core
  if kind == "checkpoint":
    g = jax.checkpoint(lambda x: jnp.sin(x) * 2.0)
  else:
    g = getattr(jax, kind)(lambda x: jnp.sin(x) * 2.0)
    if kind == "custom_jvp":
      g.defjvp(lambda p, t: (g(p[0]), t[0]))
    else:
      g.defvjp(lambda x: (g(x), None), lambda r, ct: (ct,))
  f = jax.jit(lambda x: lax.fori_loop(0, 5, lambda i, c: g(c), x), backend="numpy")
  expected = 0.5
  for _ in range(5):
    expected = np.sin(np.float32(expected)) * np.float32(2.0)
  np.testing.assert_allclose(f(jnp.float32(0.5)), expected, rtol=1e-6)
  calls = []
  monkeypatch.setattr(core, "eval_jaxpr", lambda *a: calls.append(a) or [])
  np.testing.assert_allclose(f(jnp.float32(0.5)), expected, rtol=1e-6)
  assert calls == []


@pytest.mark.parametrize("y,kind,dtype", [
    # JAX 0.10.2 (recorded): bind canonicalizes a custom_jvp's non-tracer arguments, so the
    # rule sees a Python number as a typed one of its weak dtype, a NumPy float64 as float32
    (0.0, float, "float32"), (3, int, "int32"), (np.float64(2.0), np.ndarray, "float32"),
])
def test_custom_jvp_rule_sees_canonical_non_tracer_arguments(y, kind, dtype):
  seen = []

  @jax.custom_jvp
  def f(x, y):
    return x * y

  @f.defjvp
  def f_jvp(primals, tangents):
    seen.append(primals[1])
    return f(*primals), tangents[0] * primals[1]

  jax.grad(lambda c: f(c, y))(1.0)
  assert isinstance(seen[0], kind) and seen[0].dtype == np.dtype(dtype)


def test_vmapped_custom_vjp_keeps_shared_residuals_unbatched_for_bwd():
  # JAX 0.10.2 batches only the residuals that depend on a mapped operand: bwd may
  # branch in Python on a flag residual (equinox's checkpointed while loop, under
  # diffrax's vmap + grad with an event, and filters with it), gets y unmapped, and y's
  # cotangent is the examples' sum. Values: JAX 0.10.2's.
  @jax.custom_vjp
  def f(x, y):
    return x * y

  def fwd(x, y):
    return x * y, (True, y, x)

  def bwd(res, g):
    flag, y, x = res
    assert type(flag) is bool   # as in JAX: a Python residual stays Python
    return (g * y, g * x) if flag else (g * 0, g * 0)

  f.defvjp(fwd, bwd)
  x, y = jnp.arange(3.0), jnp.float32(2.0)
  loss = lambda p, q: jnp.sum(jax.vmap(f, (0, None))(p, q))
  gx, gy = jax.grad(loss, (0, 1))(x, y)
  np.testing.assert_allclose(gx, [2.0, 2.0, 2.0])
  np.testing.assert_allclose(gy, 3.0)
  np.testing.assert_allclose(jax.jit(jax.grad(loss))(x, y), [2.0, 2.0, 2.0])
