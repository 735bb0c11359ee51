"""``out_sharding`` on jax.numpy's functions, as JAX 0.10.2 takes it: keyword-only, a
layout that changes no value, and JAX's errors naming JAX's API (this file, run on JAX
0.10.2 with ``jax`` imported instead, passes but for three of JAX's own failures, which
jaxlite does not copy: ``jnp.percentile`` fails an assertion on a bad sharding where the
others raise this TypeError, and ``percentile`` and ``repeat`` raise AttributeError on the
empty mesh's sharding, which the others take)."""
import inspect

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp

# [n for n in dir(jax.numpy) if 'out_sharding' in inspect.signature(...).parameters]
JAX_TAKES_IT = [
    "arange", "array", "asarray", "bincount", "broadcast_to", "dot", "einsum", "empty",
    "full", "full_like", "matmul", "ones", "ones_like", "percentile", "ravel", "repeat",
    "reshape", "tensordot", "zeros", "zeros_like"]

X = np.arange(12.0, dtype=np.float32).reshape(3, 4)
V = np.arange(6, dtype=np.int32)

# name -> (the call, the API JAX's error names, the values JAX 0.10.2 gave)
CASES = {
    "array": (lambda s: jnp.array([1.0, 2.0], out_sharding=s), "jnp.array", [1.0, 2.0]),
    "asarray": (lambda s: jnp.asarray(np.ones(3, np.float32), out_sharding=s), "jnp.array",
                np.ones(3)),
    "bincount": (lambda s: jnp.bincount(jnp.array([0, 1, 1, 3]), length=5, out_sharding=s),
                 "jnp.bincount", [1, 2, 0, 1, 0]),
    "broadcast_to": (lambda s: jnp.broadcast_to(V, (2, 6), out_sharding=s),
                     "jnp.broadcast_to", np.broadcast_to(V, (2, 6))),
    "empty": (lambda s: jnp.empty((2, 2), out_sharding=s), "jnp.zeros", np.zeros((2, 2))),
    "full_like": (lambda s: jnp.full_like(X, 7.0, out_sharding=s), "full_like",
                  np.full((3, 4), 7.0)),
    "matmul": (lambda s: jnp.matmul(X, X.T, out_sharding=s), "dot_general", X @ X.T),
    "ones_like": (lambda s: jnp.ones_like(X, out_sharding=s), "jnp.ones_like", np.ones((3, 4))),
    "percentile": (lambda s: jnp.percentile(X, 30.0, out_sharding=s), "jnp.percentile",
                   np.percentile(X, 30.0)),
    "ravel": (lambda s: jnp.ravel(X, out_sharding=s), "reshape", X.ravel()),
    "repeat": (lambda s: jnp.repeat(V, 2, out_sharding=s), "repeat", np.repeat(V, 2)),
    "reshape": (lambda s: jnp.reshape(X, (4, 3), out_sharding=s), "reshape", X.reshape(4, 3)),
    "tensordot": (lambda s: jnp.tensordot(X, X, axes=((0, 1), (0, 1)), out_sharding=s),
                  "dot_general", np.tensordot(X, X, axes=((0, 1), (0, 1)))),
    "zeros_like": (lambda s: jnp.zeros_like(X, out_sharding=s), "jnp.zeros_like",
                   np.zeros((3, 4))),
}


@pytest.mark.parametrize("name", JAX_TAKES_IT)
def test_out_sharding_is_keyword_only_with_no_default_layout(name):
  parameter = inspect.signature(getattr(jnp, name)).parameters["out_sharding"]
  assert parameter.kind is inspect.Parameter.KEYWORD_ONLY and parameter.default is None


@pytest.mark.parametrize("name", sorted(CASES))
def test_out_sharding_lays_out_the_result_and_changes_no_value(name):
  call, _, want = CASES[name]
  mesh = jax.make_mesh((1,), ("x",))
  for sharding in (None, jax.typeof(jnp.ones(3)).sharding,   # (the empty mesh's: flax)
                   jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec())):
    np.testing.assert_allclose(np.asarray(call(sharding)), want, rtol=1e-6)
    jitted = jax.jit(lambda s=sharding: call(s))()
    np.testing.assert_allclose(np.asarray(jitted), want, rtol=1e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_out_sharding_other_than_a_named_sharding_raises_jaxs_errors(name):
  call, api, _ = CASES[name]
  for bad in ("x", 3, jax.sharding.SingleDeviceSharding(jax.devices()[0])):
    with pytest.raises(TypeError) as info:
      call(bad)
    assert str(info.value).startswith(
        f"`out_sharding` argument of {api} only supports instances of `NamedSharding` or "
        f"`PartitionSpec`. Got {bad} of type: ")
  with pytest.raises(ValueError, match="Using PartitionSpec when you are not under a mesh "
                                       "context is not allowed"):
    call(jax.sharding.PartitionSpec())
