"""``jax.custom_batching`` against JAX 0.10.2 (the values and messages below were recorded
from it running the same code): the rule serves vmap, including vmap of jit and of jvp
(whose tangent is the rule's derivative), the function serves everything else, and
reverse mode is refused."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.custom_batching import custom_vmap, sequential_vmap


def make_f(calls):
  @custom_vmap
  def f(x, y):
    return jnp.sin(x) * y

  @f.def_vmap
  def rule(axis_size, in_batched, x, y):
    calls.append((axis_size, list(in_batched)))
    return jnp.cos(x) * y, in_batched[0] or in_batched[1]
  return f


XS = np.arange(3.0, dtype=np.float32)
COS = [1.0, 0.5403023, -0.41614684]   # JAX 0.10.2: the rule's cos(x) * 1


@pytest.mark.parametrize("how", ["vmap", "vmap_of_jit", "jit_of_vmap", "jit_xla", "jit_numpy"])
def test_vmap_calls_the_rule(how):
  calls = []
  f = make_f(calls)
  run = {"vmap": jax.vmap(f), "vmap_of_jit": jax.vmap(jax.jit(f)),
         "jit_of_vmap": jax.jit(jax.vmap(f)),
         "jit_xla": jax.jit(jax.vmap(f), backend="xla"),
         "jit_numpy": jax.jit(jax.vmap(f), backend="numpy")}[how]
  np.testing.assert_allclose(run(XS, np.ones(3, np.float32)), COS, rtol=1e-6)
  assert calls[0] == (3, [True, True])


def test_unbatched_arguments_are_flagged_and_the_function_runs_elsewhere():
  calls = []
  f = make_f(calls)
  np.testing.assert_allclose(jax.vmap(f, in_axes=(0, None))(XS, 2.0),
                             [2.0, 1.0806046, -0.8322937], rtol=1e-6)
  assert calls == [(3, [True, False])]
  np.testing.assert_allclose(f(1.0, 2.0), 1.6829419, rtol=1e-6)   # sin, not the rule
  np.testing.assert_allclose(jax.jit(f)(1.0, 2.0), 1.6829419, rtol=1e-6)


def test_jvp_differentiates_the_function_and_under_vmap_the_rule():
  f = make_f([])
  y, t = jax.jvp(f, (1.0, 2.0), (1.0, 0.0))
  np.testing.assert_allclose([y, t], [1.6829419, 1.0806046], rtol=1e-6)
  y, t = jax.vmap(lambda x, t: jax.jvp(f, (x, 2.0), (t, 0.0)))(XS, np.ones(3, np.float32))
  np.testing.assert_allclose(y, [2.0, 1.0806046, -0.8322937], rtol=1e-6)
  np.testing.assert_allclose(t, [0.0, -1.6829419, -1.8185948], rtol=1e-6, atol=1e-7)


def test_reverse_mode_and_a_missing_rule_raise_as_in_jax():
  with pytest.raises(ValueError):
    jax.grad(make_f([]))(1.0, 2.0)

  @custom_vmap
  def g(x):
    return x + 1
  with pytest.raises(AttributeError, match="No batching rule defined for custom_vmap "
                                           "function g using def_vmap."):
    jax.vmap(g)(XS)


def test_jaxpr_is_printed_as_jaxs():
  @custom_vmap
  def f(x, y):
    return jnp.sin(x) * y

  @f.def_vmap
  def rule(axis_size, in_batched, x, y):
    return jnp.cos(x) * y, True
  text = str(jax.make_jaxpr(f)(1.0, 2.0))
  assert text.startswith("""{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = custom_vmap_call[
      call={ lambda ; d:f32[] e:f32[]. let
          f:f32[] = sin d
          g:f32[] = mul f e
        in (g,) }
      in_tree=PyTreeDef(([], (*, *)))
      out_tree=PyTreeDef(*)
      rule=<function""")


def test_sequential_vmap_loops_over_the_batch():
  @sequential_vmap
  def h(x):
    return x.sum() * 2
  np.testing.assert_array_equal(jax.vmap(h)(jnp.ones((3, 2))), [4.0, 4.0, 4.0])
  np.testing.assert_array_equal(jax.vmap(jax.vmap(h))(jnp.ones((2, 3, 2))),
                                np.full((2, 3), 4.0))
  assert "scan" in str(jax.make_jaxpr(jax.vmap(h))(jnp.ones((3, 2))))

  @sequential_vmap
  def h2(x, y):
    return {"s": x.sum() * y}
  out = jax.vmap(h2, in_axes=(0, None))(jnp.arange(6.0).reshape(3, 2), 3.0)
  np.testing.assert_array_equal(out["s"], [3.0, 15.0, 27.0])


def test_a_rule_output_of_the_wrong_shape_is_an_error():
  @custom_vmap
  def f(x):
    return x * 2

  @f.def_vmap
  def rule(axis_size, in_batched, x):
    return x[0], True   # (claims a batch axis it dropped)
  with pytest.raises(ValueError, match="out_batched flag True asks for"):
    jax.vmap(f)(XS)
