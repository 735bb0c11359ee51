"""while_loop under linearize, vjp and vmap, as JAX 0.10.2 does them. Expected values are
recorded from JAX 0.10.2 or analytic."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax


def _loop(x, n):
  def body(c):
    i, y, z = c
    return i + 1, y * 1.5 + jnp.sin(z), z * 0.5
  return lax.while_loop(lambda c: c[0] < n, body, (0, x, x * 2.0))


def _reference(x, n, tx):
  """The loop and its tangent in plain Python (analytic)."""
  y, z, ty, tz = x, 2 * x, tx, 2 * tx
  for _ in range(n):
    y, ty = y * 1.5 + np.sin(z), ty * 1.5 + np.cos(z) * tz
    z, tz = z * 0.5, tz * 0.5
  return y, z, ty, tz


@pytest.mark.parametrize("jit", [False, True])
def test_linearize_of_while_loop(jit):
  # JAX 0.10.2: out (4, 10.991231, 0.125), f_jvp(1.0, float0) (float0, 4.369604, 0.125)
  run = jax.jit(_loop, static_argnums=1) if jit else _loop
  out, f_jvp = jax.linearize(run, 1.0, 4)
  y, z, ty, tz = _reference(1.0, 4, 1.0)
  assert int(out[0]) == 4
  np.testing.assert_allclose([float(out[1]), float(out[2])], [y, z], rtol=1e-6)
  t = f_jvp(1.0, np.zeros((), jax.dtypes.float0))
  assert t[0].dtype == jax.dtypes.float0
  np.testing.assert_allclose([float(t[1]), float(t[2])], [ty, tz], rtol=1e-6)


def test_linearize_of_while_loop_stages_the_known_loop_and_the_whole_loop():
  # JAX 0.10.2 stages the primal loop (known carries only) and the whole JVP loop
  jaxpr = jax.make_jaxpr(lambda x: jax.linearize(lambda x: _loop(x, 4), x)[1](x))(1.0)
  whiles = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "while"]
  assert [len(e.outvars) for e in whiles] == [3, 5]


def test_linearize_of_while_loop_with_a_traced_bound_and_consts():
  def f(x, n):
    return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * x), (0, 1.0))[1]
  out, f_jvp = jax.jit(lambda x, n: jax.linearize(lambda x: f(x, n), x))(2.0, 3)
  # x ** 3 and its derivative 3 x ** 2
  assert float(out) == 8.0 and float(f_jvp(1.0)) == 12.0


def test_reverse_mode_through_while_loop_raises_at_transpose():
  # JAX 0.10.2 linearizes and then raises this ValueError when transposing
  _, f_vjp = None, None
  with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for "
                     "lax.while_loop or lax.fori_loop with dynamic start/stop values"):
    _, f_vjp = jax.vjp(lambda x: _loop(x, 4)[1], 1.0)
    f_vjp(1.0)


# -- vmap: outputs computed from shared values only stay shared (unbatched)

def _probe():
  """An identity primitive whose batching rule records the batch dims it sees (as
  equinox's ``nonbatchable``, which raises on a batched operand)."""
  from jaxlite.extend.core import Primitive
  from jaxlite.interpreters import batching, mlir
  seen = []
  p = Primitive("probe")
  p.def_impl(lambda x: x)
  p.def_abstract_eval(lambda x: x)
  mlir.register_lowering(p, mlir.lower_fun(lambda x: x, multiple_results=False))

  def rule(args, dims):
    seen.append(dims[0])
    return args[0], dims[0]
  batching.primitive_batchers[p] = rule
  return p, seen


def test_vmap_of_cond_with_shared_predicate_keeps_shared_outputs_unbatched():
  probe_p, seen = _probe()

  def f(x, n):
    step, y = lax.cond(n > 0, lambda s, x: (s + 1, x * 2.0), lambda s, x: (s, x), n, x)
    return probe_p.bind(step), probe_p.bind(y)
  step, y = jax.vmap(f, in_axes=(0, None))(jnp.arange(3.0), 2)
  # JAX 0.10.2: the rule sees only y (dim 0); step is shared (vmap broadcasts it out)
  assert seen == [0]
  np.testing.assert_array_equal(np.asarray(step), [3, 3, 3])
  np.testing.assert_array_equal(np.asarray(y), [0.0, 2.0, 4.0])


def test_vmap_of_scan_keeps_ys_of_shared_values_unbatched():
  probe_p, seen = _probe()

  def f(x):
    def body(c, i):
      return c + x, (i * 2, c)
    c, (shared, per_example) = lax.scan(body, 0.0, jnp.arange(4))
    return probe_p.bind(shared), probe_p.bind(per_example), c
  shared, per_example, c = jax.vmap(f)(jnp.arange(1.0, 3.0))
  # JAX 0.10.2: the rule sees only per_example, batched along 1 (the loop's axis is 0)
  assert seen == [1]
  np.testing.assert_array_equal(np.asarray(shared), [[0, 2, 4, 6]] * 2)
  np.testing.assert_array_equal(np.asarray(per_example), [[0, 1, 2, 3], [0, 2, 4, 6]])
  np.testing.assert_array_equal(np.asarray(c), [4.0, 8.0])


def test_vmap_of_while_keeps_a_counter_from_a_cond_unbatched():
  # the mechanism of equinox's checkpointed while loop: the loop's counter passes through
  # a cond and a nonbatchable primitive inside a vmapped while loop
  probe_p, seen = _probe()

  def f(x):
    def body(c):
      i, v = c
      i, v = lax.cond(i % 2 == 0, lambda i, v: (i + 1, v * 2.0), lambda i, v: (i + 1, v),
                      i, v)
      return probe_p.bind(i), v
    return lax.while_loop(lambda c: c[0] < 5, body, (0, x))
  i, v = jax.vmap(f)(jnp.arange(3.0))
  assert 0 not in seen   # the counter never reaches the rule batched
  np.testing.assert_array_equal(np.asarray(i), [5, 5, 5])
  np.testing.assert_array_equal(np.asarray(v), [0.0, 8.0, 16.0])


# -- JVP: values that depend on no perturbed input keep symbolic zero tangents

def _nondifferentiable():
  """Identity that raises when differentiated (equinox's ``nondifferentiable``)."""
  @jax.custom_jvp
  def f(x):
    return x

  @f.defjvp
  def f_jvp(primals, tangents):
    raise RuntimeError("Unexpected tangent.")
  return f


def test_scan_and_cond_do_not_differentiate_unperturbed_carries():
  # equinox's test_nondifferentiable_body1 as a lax.scan over a lax.cond; JAX 0.10.2:
  # value 18.999998 (sum of the pieces), grad of x 1.0 and of z [1, 1, 1]
  nondiff = _nondifferentiable()

  def body(carry):
    step, x, y, z = carry
    return step + 1, x + nondiff(y), y + 1, z.at[step].set(y)

  def run(xz, y):
    x, z = xz
    def f(c, _):
      return lax.cond(c[0] < 3, body, lambda c: c, c), None
    _, x, y, z = lax.scan(f, (0, x, y, z), None, length=3)[0]
    return x + y + jnp.sum(z)
  value, (gx, gz) = jax.jit(jax.value_and_grad(run))((1.2, jnp.full(3, -5.0)), 0.7)
  # x + 3 y + 3 + (y + 3) + (3 y + 3)
  assert float(value) == pytest.approx(1.2 + 3 * 0.7 + 3 + 0.7 + 3 + 3 * 0.7 + 3, rel=1e-6)
  assert float(gx) == 1.0
  np.testing.assert_array_equal(np.asarray(gz), [0.0, 0.0, 0.0])


def test_while_jvp_does_not_differentiate_unperturbed_carries():
  nondiff = _nondifferentiable()

  def f(x, y):
    def body(c):
      i, x, y = c
      return i + 1, x * 2.0 + nondiff(y), y + 1.0
    return lax.while_loop(lambda c: c[0] < 3, body, (0, x, y))
  (_, x, y), (_, tx, ty) = jax.jvp(lambda x: f(x, 0.5), (1.0,), (1.0,))
  # x -> 2x + y three times: 8 + 4(0.5) + 2(1.5) + 2.5; the tangent 8; y's is zero
  assert float(x) == 15.5 and float(tx) == 8.0 and float(y) == 3.5 and float(ty) == 0.0


def test_cond_output_without_tangent_in_any_branch_stays_symbolic():
  nondiff = _nondifferentiable()

  def f(x, y):
    a, b = lax.cond(x > 0, lambda x, y: (x * 2, y + 1), lambda x, y: (x, y), x, y)
    return a + nondiff(b)
  assert float(jax.grad(f)(1.0, 3.0)) == 2.0
  assert float(jax.jit(jax.grad(f))(-1.0, 3.0)) == 1.0
