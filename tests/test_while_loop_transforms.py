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
