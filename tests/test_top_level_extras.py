"""Smaller top-level APIs, against JAX 0.10.2 (the values below came from it): process
indices, ``copy_to_host_async`` and ``jax.dlpack``."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp


def test_one_process():
  assert jax.process_indices() == [0] and jax.host_ids() == [0]


def test_copy_to_host_async_returns_its_tree():
  tree = {"a": jnp.ones(2), "b": 3}
  assert jax.copy_to_host_async(tree) is tree
  np.testing.assert_array_equal(tree["a"], [1.0, 1.0])


# JAX 0.10.2's jax.dlpack.is_supported_dtype
DLPACK = [("float32", True), ("float64", True), ("int8", True), ("bool", True),
          ("complex64", True), ("bfloat16", True), ("float16", True), ("uint64", True),
          ("float8_e4m3fn", False), ("int4", False)]


@pytest.mark.parametrize("name, supported", DLPACK)
def test_dlpack_supported_dtypes_are_jaxs(name, supported):
  assert jax.dlpack.is_supported_dtype(getattr(jnp, name) if name != "bool" else bool) \
      is supported


def test_from_dlpack_shares_or_converts_as_jax():
  x = jax.dlpack.from_dlpack(np.arange(3.0))
  assert x.dtype == np.float32   # (x64 off: converted, as JAX 0.10.2 gives float32)
  np.testing.assert_array_equal(x, [0.0, 1.0, 2.0])
  with pytest.raises(TypeError, match="__dlpack__"):
    jax.dlpack.from_dlpack([1, 2])


def test_shards_are_jax_shard():
  shard = jnp.arange(3.0).addressable_shards[0]
  assert isinstance(shard, jax.Shard)
  np.testing.assert_array_equal(shard.data, [0.0, 1.0, 2.0])


def test_make_array_from_process_local_data_in_one_process():
  sharding = jax.sharding.NamedSharding(jax.make_mesh((1,), ("x",)), jax.P("x"))
  data = np.arange(8.0).reshape(4, 2)
  out = jax.make_array_from_process_local_data(sharding, data)
  assert out.dtype == np.float32 and out.sharding == sharding   # (as JAX 0.10.2 gives)
  np.testing.assert_array_equal(out, data)
  assert jax.make_array_from_process_local_data(sharding, data, (4, 2)).shape == (4, 2)
  with pytest.raises(ValueError, match=r"global_shape should be None or equal to "
                                       r"local_data.shape.Got global_shape=\(8, 2\)"):
    jax.make_array_from_process_local_data(sharding, data, (8, 2))


def test_a_boolean_array_is_no_index_and_a_range_is_axes():
  # JAX 0.10.2: operator.index of a bool array raises this TypeError, so int ** bool-array
  # goes through power (numpyro's (-1) ** bernoulli draw); a range names axes
  flag = jnp.array(True)
  with pytest.raises(TypeError, match="Only integer scalar arrays can be converted to a "
                                      "scalar index."):
    [1, 2][flag]
  assert int((-1) ** flag) == -1 and int(2 ** flag) == 2
  assert [1, 2, 3][jnp.array(1)] == 2
  x = jnp.ones((2, 3))
  np.testing.assert_array_equal(x.sum(range(-1, 0)), [3.0, 3.0])
  assert float(jnp.sum(x, axis=range(0, 2))) == 6.0


@pytest.mark.parametrize("fun,shape", [
    # JAX 0.10.2's shapes (recorded); numpyro's MatrixNormal test moves axes to arange(n)
    (lambda x: jnp.moveaxis(x, (1, 2), jnp.arange(2)), (3, 4, 2)),
    (lambda x: jnp.moveaxis(x, jnp.array([2, 0]), (0, 1)), (4, 2, 3)),
    (lambda x: jnp.moveaxis(x, np.array([2]), np.array([0])), (4, 2, 3)),
    (lambda x: jnp.moveaxis(x, jnp.array(2), 0), (4, 2, 3)),
    (lambda x: jnp.sum(x, axis=jnp.array([0, 1])), (4,)),
    (lambda x: jnp.expand_dims(x, jnp.array([0])), (1, 2, 3, 4)),
    (lambda x: jnp.squeeze(x[:1], np.array([0])), (3, 4)),
    (lambda x: jnp.average(x, axis=np.array([0, 2]), weights=jnp.ones((2, 4))), (3,)),
])
def test_a_one_dimensional_array_of_ints_names_axes(fun, shape):
  assert fun(jnp.zeros((2, 3, 4))).shape == shape
