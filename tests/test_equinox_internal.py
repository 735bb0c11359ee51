"""equinox.internal's own primitives on jaxlite, through `python -m jaxlite` and JAX's
extension API: a primitive defined with `filter_primitive_def` / `_jvp` / `_transpose` /
`_batching` and bound with `filter_primitive_bind`, and `unvmap_any` / `unvmap_all`,
eagerly and under `jit`, `grad`, `jvp`, `linear_transpose` and `vmap`.

The program runs in a fresh interpreter under `python -m jaxlite` (equinox imports `jax`)
and prints its results as JSON; JAX_VALUES is what it prints on JAX 0.10.2 with equinox
0.13.8 (`python` on the real jax, CPU).
"""
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

pytestmark = pytest.mark.skipif(importlib.util.find_spec("equinox") is None,
                                reason="equinox is not installed")

PROGRAM = r'''
import json

import equinox.internal as eqxi
import jax
import jax.extend.core
import jax.interpreters.ad as ad
import jax.interpreters.batching as batching
import jax.interpreters.mlir as mlir
import jax.numpy as jnp

# scaled(c, x, tag) = c * x for a scalar c and a vector x; `tag` is a static string
# that filter_primitive_bind keeps out of the primitive's operands.
scaled_p = jax.extend.core.Primitive("scaled")
scaled_p.multiple_results = True
scaled = lambda c, x, tag: eqxi.filter_primitive_bind(scaled_p, c, x, tag)
used = set()   # the rules that ran, so that a value reached another way shows


@eqxi.filter_primitive_def
def scaled_impl(c, x, tag):
  used.add('impl')
  assert tag == "static"
  return c * x


@eqxi.filter_primitive_def
def scaled_abstract(c, x, tag):
  used.add('abstract')
  shape = jnp.broadcast_shapes(c.shape, x.shape)   # c is (n, 1) once batched
  return jax.core.ShapedArray(shape, jnp.result_type(c.dtype, x.dtype))


@eqxi.filter_primitive_jvp
def scaled_jvp(primals, tangents):
  used.add('jvp')
  c, x, tag = primals
  tc, tx, _ = tangents
  parts = ([] if tc is None else [scaled(tc, x, tag)]) + ([] if tx is None else [scaled(c, tx, tag)])
  return scaled(c, x, tag), sum(parts[1:], parts[0])


@eqxi.filter_primitive_transpose
def scaled_transpose(inputs, ct):
  used.add('transpose')
  c, x, tag = inputs
  if ct is None:
    return None, None, None
  if isinstance(x, ad.UndefinedPrimal):   # linear in x: c is known
    return None, scaled(c, ct, tag), None
  # linear in c (a scalar, or (n, 1) once batched): x is known
  keep = c.aval.ndim > 0
  return jnp.sum(ct * x, axis=-1 if keep else None, keepdims=keep), None, None


@eqxi.filter_primitive_batching
def scaled_batch(inputs, axes):
  used.add('batch')
  c, x, tag = inputs
  bc, bx, _ = axes
  if bx is not None:
    x = jnp.moveaxis(x, bx, 0)
  if bc is not None:
    c = jnp.moveaxis(c, bc, 0)[:, None]
  return scaled(c, x, tag), 0


scaled_p.def_impl(scaled_impl)
scaled_p.def_abstract_eval(scaled_abstract)
ad.primitive_jvps[scaled_p] = scaled_jvp
ad.primitive_transposes[scaled_p] = scaled_transpose
batching.primitive_batchers[scaled_p] = scaled_batch
mlir.register_lowering(scaled_p, mlir.lower_fun(scaled_impl, multiple_results=True))

c = jnp.float32(1.5)
x = jnp.array([0.5, -1.0, 2.0], jnp.float32)
cs = jnp.array([1.0, 2.0], jnp.float32)
xs = jnp.array([[0.5, -1.0, 2.0], [1.0, 0.0, -0.5]], jnp.float32)
loss = lambda c, x: jnp.sum(jnp.sin(scaled(c, x, "static")))

# unvmap_any/all reduce over the vmapped axis too, so every lane sees the same answer.
def clip_if_any_large(x):
  return jnp.where(eqxi.unvmap_any(x > 1.0), x ** 2, x)

def clip_if_all_positive(x):
  return jnp.where(eqxi.unvmap_all(x > 0.0), 3.0 * x, -x)

bools = jnp.array([False, True, False])
out = {
    "eager": scaled(c, x, "static"),
    "jit": jax.jit(scaled, static_argnums=2)(c, x, "static"),
    "jvp": jax.jvp(lambda c, x: scaled(c, x, "static"), (c, x), (jnp.float32(0.5), x))[1],
    "grad_c": jax.grad(loss)(c, x),
    "grad_x": jax.grad(loss, argnums=1)(c, x),
    "jit_grad": jax.jit(jax.grad(loss, argnums=(0, 1)))(c, x),
    "vmap_c": jax.vmap(scaled, in_axes=(0, None, None))(cs, x, "static"),
    "vmap_x": jax.vmap(scaled, in_axes=(None, 0, None))(c, xs, "static"),
    "vmap_both_axis1": jax.vmap(scaled, in_axes=(0, 1, None))(cs, xs.T, "static"),
    "jit_vmap_grad": jax.jit(jax.vmap(jax.grad(loss, argnums=(0, 1))))(cs, xs),
    "grad_vmap": jax.grad(lambda cs: jnp.sum(jax.vmap(loss, in_axes=(0, None))(cs, x)))(cs),
    "linear_transpose": jax.linear_transpose(lambda x: scaled(c, x, "static"), x)(x)[0],
    "unvmap_any": eqxi.unvmap_any(bools),
    "unvmap_all": eqxi.unvmap_all(bools),
    "jit_unvmap_any": jax.jit(eqxi.unvmap_any)(bools),
    "vmap_unvmap_any": jax.vmap(eqxi.unvmap_any)(bools),
    "vmap_unvmap_all": jax.vmap(eqxi.unvmap_all)(bools),
    "jit_vmap_unvmap_all": jax.jit(jax.vmap(eqxi.unvmap_all))(bools | True),
    "vmap_vmap_unvmap_any": jax.vmap(jax.vmap(eqxi.unvmap_any))(jnp.eye(2, dtype=bool)),
    "vmap_where_any": jax.vmap(clip_if_any_large)(x),
    "vmap_where_all": jax.vmap(clip_if_all_positive)(x),
    "grad_where_any": jax.grad(lambda x: jnp.sum(jax.vmap(clip_if_any_large)(x)))(x),
    "jit_vmap_grad_where_all": jax.jit(jax.vmap(jax.grad(clip_if_all_positive)))(jnp.abs(x)),
}
as_json = lambda v: (v.tolist() if hasattr(v, "tolist") else v if isinstance(v, str)
                     else [as_json(e) for e in v])
out["rules"] = sorted(used)
print(json.dumps({k: as_json(jax.device_get(v)) for k, v in out.items()}))
'''

JAX_VALUES = {
    'eager': [0.75, -1.5, 3.0],
    'jit': [0.75, -1.5, 3.0],
    'jvp': [1.0, -2.0, 4.0],
    'grad_c': -1.6848777532577515,
    'grad_x': [1.0975332260131836, 0.10610579699277878, -1.4849886894226074],
    'jit_grad': [-1.6848777532577515, [1.0975332260131836, 0.10610579699277878, -1.4849886894226074]],
    'vmap_c': [[0.5, -1.0, 2.0], [1.0, -2.0, 4.0]],
    'vmap_x': [[0.75, -1.5, 3.0], [1.5, 0.0, -0.75]],
    'vmap_both_axis1': [[0.5, -1.0, 2.0], [2.0, 0.0, -1.0]],
    'jit_vmap_grad': [[-0.9338046908378601, -0.6862980127334595], [[0.8775825500488281, 0.5403022766113281, -0.416146844625473], [-0.832293689250946, 2.0, 1.0806045532226562]]],
    'grad_vmap': [-0.9338046908378601, -0.620989203453064],
    'linear_transpose': [0.75, -1.5, 3.0],
    'unvmap_any': True,
    'unvmap_all': False,
    'jit_unvmap_any': True,
    'vmap_unvmap_any': [True, True, True],
    'vmap_unvmap_all': [False, False, False],
    'jit_vmap_unvmap_all': [True, True, True],
    'vmap_vmap_unvmap_any': [[True, True], [True, True]],
    'vmap_where_any': [0.25, 1.0, 4.0],
    'vmap_where_all': [-0.5, 1.0, -2.0],
    'grad_where_any': [1.0, -2.0, 4.0],
    'jit_vmap_grad_where_all': [3.0, 3.0, 3.0],
    'rules': ['abstract', 'batch', 'impl', 'jvp', 'transpose'],
}


def assert_tree_close(got, want, where):
  """Leaves are the rectangular lists (arrays); a ragged list is a tuple of outputs."""
  if isinstance(want, list) and all(isinstance(w, str) for w in want):
    assert got == want, where    # the names of the rules that ran
    return
  try:
    want_array = np.asarray(want)
  except ValueError:
    assert isinstance(got, list) and len(got) == len(want), (where, got)
    for i, (g, w) in enumerate(zip(got, want)):
      assert_tree_close(g, w, f"{where}[{i}]")
    return
  got_array = np.asarray(got)
  assert (got_array.dtype, got_array.shape) == (want_array.dtype, want_array.shape), (
      where, got, want)
  np.testing.assert_allclose(got_array, want_array, rtol=1e-6, err_msg=where)


@pytest.fixture(scope="module")
def results():
  env = dict(os.environ, PYTHONPATH=os.pathsep.join(
      [ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
  proc = subprocess.run([sys.executable, "-m", "jaxlite", "-c", PROGRAM], cwd=ROOT, env=env,
                        capture_output=True, text=True, timeout=600)
  assert proc.returncode == 0, proc.stderr
  return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", sorted(JAX_VALUES))
def test_equinox_primitive_matches_jax(results, name):
  assert_tree_close(results[name], JAX_VALUES[name], name)
