"""The functions jax.linearize and jax.vjp return are pytrees whose leaves are the
residuals, as in JAX 0.10.2 (a ``jax.tree_util.Partial`` and a ``jax._src.api.VJP``), so
jit and vmap can return them. Expected values recorded from JAX 0.10.2 or analytic."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp


def test_linearize_returns_a_partial_over_its_residuals():
  _, f_jvp = jax.linearize(jnp.sin, jnp.arange(3.0))
  assert isinstance(f_jvp, jax.tree_util.Partial)
  # JAX 0.10.2: the one leaf is cos(x), [1., 0.5403023, -0.41614684]
  leaves = jax.tree_util.tree_leaves(f_jvp)
  assert len(leaves) == 1
  np.testing.assert_allclose(np.asarray(leaves[0]), np.cos(np.arange(3.0)), rtol=1e-6)
  np.testing.assert_allclose(np.asarray(f_jvp(jnp.ones(3))), np.cos(np.arange(3.0)),
                             rtol=1e-6)


def test_jit_and_vmap_return_the_linearized_function():
  # JAX 0.10.2: jit(lambda x: linearize(sin, x)[1])(1.0)(2.0) == 1.0806046
  g = jax.jit(lambda x: jax.linearize(jnp.sin, x)[1])(1.0)
  assert isinstance(g, jax.tree_util.Partial)
  assert float(g(2.0)) == pytest.approx(2 * np.cos(1.0), rel=1e-6)
  xs = jnp.arange(3.0)
  outs, f_jvps = jax.jit(jax.vmap(lambda x: jax.linearize(jnp.sin, x)))(xs)
  np.testing.assert_allclose(np.asarray(outs), np.sin(np.arange(3.0)), rtol=1e-6)
  # the residuals come back batched: one per example
  leaf, = jax.tree_util.tree_leaves(f_jvps)
  np.testing.assert_allclose(np.asarray(leaf), np.cos(np.arange(3.0)), rtol=1e-6)
  np.testing.assert_allclose(np.asarray(jax.vmap(lambda f, t: f(t))(f_jvps, jnp.ones(3))),
                             np.cos(np.arange(3.0)), rtol=1e-6)


def test_linearize_with_aux_and_tangent_structure_error():
  out, f_jvp, aux = jax.linearize(lambda x, y: (jnp.sin(x) * y, y), 1.0, 2.0, has_aux=True)
  assert isinstance(f_jvp, jax.tree_util.Partial) and float(aux) == 2.0
  assert float(f_jvp(1.0, 0.0)) == pytest.approx(2 * np.cos(1.0), rel=1e-6)
  # JAX 0.10.2: TypeError "expected PyTreeDef((*, *)), got PyTreeDef(((*, *),))"
  with pytest.raises(TypeError, match=r"expected PyTreeDef\(\(\*, \*\)\), got "
                     r"PyTreeDef\(\(\(\*, \*\),\)\)"):
    f_jvp((1.0, 0.0))


def test_vjp_returns_a_pytree_over_its_residuals():
  _, f_vjp = jax.vjp(jnp.sin, jnp.arange(3.0))
  assert type(f_vjp).__name__ == "VJP"
  leaf, = jax.tree_util.tree_leaves(f_vjp)
  np.testing.assert_allclose(np.asarray(leaf), np.cos(np.arange(3.0)), rtol=1e-6)
  same = jax.tree_util.tree_unflatten(jax.tree_util.tree_structure(f_vjp), [leaf * 2])
  ct, = same(jnp.ones(3))
  np.testing.assert_allclose(np.asarray(ct), 2 * np.cos(np.arange(3.0)), rtol=1e-6)
  # JAX 0.10.2: jit(lambda x: vjp(sin, x)[1])(1.0)(2.0) == (1.0806046,)
  g = jax.jit(lambda x: jax.vjp(jnp.sin, x)[1])(1.0)
  ct, = g(2.0)
  assert float(ct) == pytest.approx(2 * np.cos(1.0), rel=1e-6)


def test_vjp_function_called_with_splatted_cotangents_raises_jax_error():
  def myfun(x):
    return (x, x)
  _, f_vjp = jax.vjp(myfun, 1.0)
  # JAX 0.10.2's message (api._vjp_too_many_args)
  with pytest.raises(TypeError, match="The function returned by `jax.vjp` applied to "
                     "myfun was called with 2 arguments"):
    f_vjp(2.0, 2.0)
  assert tuple(map(float, f_vjp((2.0, 3.0)))) == (5.0,)
