"""Array: immutability, printing as JAX prints, conversions, operators with JAX's promotion."""
import pickle

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp


def test_arange_prints_like_the_tutorial():
  x = jnp.arange(10)
  assert str(x) == "[0 1 2 3 4 5 6 7 8 9]" and x.dtype == np.int32


@pytest.mark.parametrize("make,expected", [
    (lambda: jnp.arange(3), "Array([0, 1, 2], dtype=int32)"),
    (lambda: jnp.array(1.5), "Array(1.5, dtype=float32, weak_type=True)"),
    (lambda: jnp.asarray(1.5), "Array(1.5, dtype=float32, weak_type=True)"),
    (lambda: jnp.array(True), "Array(True, dtype=bool)"),
    (lambda: jnp.array([1 + 2j]), "Array([1.+2.j], dtype=complex64)"),
    (lambda: jnp.ones(3, jnp.bfloat16), "Array([1, 1, 1], dtype=bfloat16)"),
    (lambda: jnp.zeros((0, 3)), "Array([], shape=(0, 3), dtype=float32)"),
    (lambda: jnp.array([1, 2], dtype=jnp.uint8), "Array([1, 2], dtype=uint8)"),
    (lambda: jnp.full(2, 3), "Array([3, 3], dtype=int32, weak_type=True)"),
    (lambda: jnp.arange(12.).reshape(3, 4),
     "Array([[ 0.,  1.,  2.,  3.],\n       [ 4.,  5.,  6.,  7.],\n"
     "       [ 8.,  9., 10., 11.]], dtype=float32)"),
    (lambda: jnp.arange(100)[90:],
     "Array([90, 91, 92, 93, 94, 95, 96, 97, 98, 99], dtype=int32)"),
])
def test_repr_matches_jax(make, expected):
  assert repr(make()) == expected


def test_long_repr_puts_dtype_like_jax():
  text = repr(jnp.arange(100))
  assert text.endswith("99],      dtype=int32)") and text.startswith("Array([ 0,  1,")


def test_item_assignment_raises_type_error_pointing_to_at():
  x = jnp.array([1, 2, 3])
  with pytest.raises(TypeError, match=r"immutable.*x\.at\[idx\]\.set\(y\)"):
    x[0] = 123
  y = x.at[0].set(123)
  assert str(y) == "[123   2   3]" and str(x) == "[1 2 3]"


def test_numpy_view_of_an_array_is_read_only():
  x = jnp.arange(3)
  view = np.asarray(x)
  with pytest.raises(ValueError):
    view[0] = 5
  assert x.tolist() == [0, 1, 2]
  copy = np.array(x)
  copy[0] = 5
  assert x.tolist() == [0, 1, 2]


def test_input_numpy_arrays_are_copied():
  a = np.zeros(3, np.float32)
  x = jnp.asarray(a)
  a[0] = 7
  assert float(x[0]) == 0.0


@pytest.mark.parametrize("op", [
    lambda a: jax.lax.reshape(a, (2, 3)),
    lambda a: jax.lax.broadcast_in_dim(a, (1, 6), (1,)),
    lambda a: jax.lax.broadcast_in_dim(a, (4, 6), (1,)),
    lambda a: jax.lax.transpose(a.reshape(2, 3), (1, 0)),
    lambda a: jax.lax.squeeze(a.reshape(1, 6), (0,)),
    lambda a: jax.lax.expand_dims(a, (0,)),
    lambda a: jax.lax.slice(a, (1,), (5,), (2,)),
    lambda a: jax.lax.rev(a, (0,)),
    lambda a: jax.lax.dynamic_slice(a, (2,), (3,)),
    lambda a: jax.lax.convert_element_type(a, np.float32),
    lambda a: jax.lax.optimization_barrier(a),
    lambda a: jax.lax.cond(True, lambda v: v, lambda v: v, a),
    lambda a: jax.device_put(a),
], ids=["reshape", "broadcast_in_dim-reshape", "broadcast_in_dim", "transpose", "squeeze",
        "expand_dims", "slice", "rev", "dynamic_slice", "convert_element_type",
        "optimization_barrier", "cond", "device_put"])
def test_lax_results_of_numpy_arrays_do_not_change_when_the_input_is_written(op):
  # eager lax ops on a NumPy argument: views of it (NumPy's reshape, transpose, slicing)
  # must become Arrays of their own, as JAX's results are on the device
  a = np.arange(6, dtype=np.float32)
  before = np.asarray(op(a)).copy()
  out = op(a)
  assert isinstance(out, jax.Array)
  a[:] = -1
  np.testing.assert_array_equal(np.asarray(out), before)


def test_conversions_and_attributes():
  x = jnp.arange(6.0).reshape(2, 3)
  assert (x.shape, x.ndim, x.size, x.dtype) == ((2, 3), 2, 6, np.float32)
  assert x.T.shape == (3, 2) and x.tolist() == [[0, 1, 2], [3, 4, 5]]
  assert len(x) == 2 and [r.tolist() for r in x] == [[0, 1, 2], [3, 4, 5]]
  assert jnp.array(3.5).item() == 3.5 and float(jnp.array(2)) == 2.0
  assert int(jnp.array(7)) == 7 and bool(jnp.array(True))
  assert [0, 1, 2][jnp.array(1)] == 1
  assert x.block_until_ready() is x
  assert pickle.loads(pickle.dumps(x)).tolist() == x.tolist()
  with pytest.raises(TypeError, match="unhashable"):
    hash(x)
  with pytest.raises(TypeError, match="len"):
    len(jnp.array(1.0))
  assert f"{jnp.array(2.5):.2f}" == "2.50"


def test_operators_convert_an_operand_with_jax_array_as_jax_does():
  # JAX 0.10.2's operators call __jax_array__ (an nnx Variable's value), recorded:
  # x + V(1.0) == [2., 2.] float32, x - V(3) == [-2., -2.], x * V([2, 3]) == [2., 3.]
  class V:
    def __init__(self, value):
      self.value = value

    def __jax_array__(self):
      return jnp.asarray(self.value)

  x = jnp.ones(2)
  assert (x + V(1.0)).tolist() == [2.0, 2.0] and (x + V(1.0)).dtype == np.float32
  assert (x - V(3)).tolist() == [-2.0, -2.0]
  assert (x * V(jnp.array([2, 3]))).tolist() == [2.0, 3.0]


def test_operators_follow_jax_promotion():
  i8 = jnp.array([1, 2], jnp.int8)
  assert (i8 + 1).dtype == np.int8
  assert (i8 + 1.5).dtype == np.float32
  assert (jnp.ones(2, jnp.bfloat16) * 2.0).dtype == jnp.bfloat16
  assert (jnp.ones(2, jnp.float16) + jnp.ones(2, jnp.bfloat16)).dtype == np.float32
  assert (jnp.array([1, 2]) / 2).dtype == np.float32
  assert (jnp.arange(3) ** 2).tolist() == [0, 1, 4]
  assert (2 ** jnp.arange(3)).tolist() == [1, 2, 4]
  assert (-jnp.arange(3)).tolist() == [0, -1, -2]
  assert (jnp.array([7, -7]) // 2).tolist() == [3, -4]
  assert (jnp.array([7, -7]) % 3).tolist() == [1, 2]
  assert (jnp.array([True, False]) & True).tolist() == [True, False]
  assert (jnp.arange(3) == 1).tolist() == [False, True, False]
  m = jnp.arange(4.0).reshape(2, 2)
  np.testing.assert_allclose(m @ m, np.arange(4.0).reshape(2, 2) @ np.arange(4.0).reshape(2, 2))
  assert abs(jnp.array(-2.0)) == 2.0


def test_unsupported_operand_types_return_not_implemented():
  with pytest.raises(TypeError):
    jnp.ones(2) + "a"
  with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
    jnp.sin([1.0, 2.0])


def test_x64_flag_and_float64_warning(x64):
  with pytest.warns(UserWarning, match="Explicitly requested dtype float64"):
    assert jnp.zeros(2, dtype=jnp.float64).dtype == np.float32
  x64(True)
  assert jnp.arange(3).dtype == np.int64 and jnp.array(1.5).dtype == np.float64
  assert jnp.zeros(2, dtype=jnp.float64).dtype == np.float64


def test_x64_environment_variable_enables_64_bit_types():
  import subprocess
  import sys
  out = subprocess.run([sys.executable, "-c", "import jaxlite.numpy as jnp; "
                        "print(jnp.arange(3).dtype)"], capture_output=True, text=True,
                       env={**__import__("os").environ, "JAX_ENABLE_X64": "1"})
  assert out.stdout.strip() == "int64"


def test_devices_and_transfers():
  assert repr(jax.devices()) == "[CpuDevice(id=0)]" and jax.default_backend() == "cpu"
  assert jax.device_count() == 1
  x = jax.device_put(np.arange(3))
  assert isinstance(x, jax.Array) and x.dtype == np.int32
  tree = jax.device_get({"a": jnp.ones(2), "b": 1})
  assert isinstance(tree["a"], np.ndarray) and tree["b"] == 1
  pair = (jnp.ones(1), 2)
  assert jax.block_until_ready(pair) is pair
  assert jnp.ones(2).device == jax.devices()[0]


def test_deprecated_index_update_warns_and_works():
  x = jnp.array([1, 2, 3])
  with pytest.warns(DeprecationWarning, match=r"x.at\[idx\].set"):
    y = jax.ops.index_update(x, 0, 123)
  assert y.tolist() == [123, 2, 3] and x.tolist() == [1, 2, 3]


def test_long_dot_product_like_the_tutorial():
  v = jnp.arange(int(1e5))
  expected = np.dot(np.arange(int(1e5), dtype=np.int64), np.arange(int(1e5))) % 2**32
  got = int(jnp.dot(v, v).block_until_ready()) % 2**32
  assert got == expected   # int32 wraps around, as in JAX


def test_array_api_namespace():
  x = jnp.ones(3)
  xp = x.__array_namespace__()
  assert xp is jnp and float(xp.sum(x)) == 3.0
  assert float(jax.jit(lambda v: v.__array_namespace__().sum(v))(x)) == 3.0


def test_arrays_tracers_and_keys_are_not_hashable_types_as_in_jax():
  """JAX sets their ``__hash__`` to None, so ``collections.abc.Hashable`` says no (funsor
  keys its cons cache by ``id`` for such values) and ``hash`` raises TypeError."""
  import collections.abc
  seen = []
  jax.jit(lambda x: seen.append(isinstance(x, collections.abc.Hashable)) or x)(1.0)
  jax.grad(lambda x: seen.append(isinstance(x, collections.abc.Hashable)) or x)(1.0)
  for value in (jnp.ones(3), jax.random.key(0)):
    seen.append(isinstance(value, collections.abc.Hashable))
    with pytest.raises(TypeError, match="unhashable type"):
      hash(value)
  assert seen == [False] * 4



def test_byteswap_tobytes_addressable_data_and_astype_keywords():
  # Recorded from JAX 0.10.2 (its Array methods; astype takes dtype by keyword).
  x = jnp.arange(5, dtype="int32")
  np.testing.assert_array_equal(x.byteswap(), [0, 16777216, 33554432, 50331648, 67108864])
  np.testing.assert_array_equal(x.byteswap().byteswap(), x)
  np.testing.assert_array_equal(jax.jit(lambda v: v.byteswap())(x), x.byteswap())
  assert np.asarray(jnp.array([1.5, -2.0]).byteswap()).tobytes() == \
      np.array([1.5, -2.0], np.float32).byteswap().tobytes()
  z = jnp.array([1 + 2j], jnp.complex64).byteswap()
  assert z.dtype == jnp.complex64 and np.asarray(z).tobytes() == \
      np.array([1 + 2j], np.complex64).byteswap().tobytes()
  np.testing.assert_array_equal(jnp.array([1, 2], jnp.int8).byteswap(), [1, 2])
  assert jnp.arange(3.0).tobytes() == b"\x00\x00\x00\x00\x00\x00\x80?\x00\x00\x00@"
  assert jnp.arange(4).reshape(2, 2).tobytes("F") == np.arange(4, dtype=np.int32).reshape(
      2, 2).tobytes("F")
  np.testing.assert_array_equal(jnp.arange(3.0).addressable_data(0), [0.0, 1.0, 2.0])
  y = jnp.arange(3.0).astype(dtype=jnp.int16)
  assert y.dtype == jnp.int16
  assert jnp.arange(3).astype(jnp.float32, copy=True).dtype == jnp.float32


# Recorded with JAX 0.10.2 (x64 off): a NumPy operand of a lax function is transferred as
# an Array of its canonical dtype, so int64 and float64 values compute as int32 and float32,
# also where the function has nothing to do (an identity reshape, transpose or broadcast).
_N64 = np.array([10, 12])


@pytest.mark.parametrize("fun,shape,dtype,weak", [
    (lambda: jax.lax.neg(_N64), (2,), "int32", False),
    (lambda: jax.lax.add(_N64, _N64), (2,), "int32", False),
    (lambda: jax.lax.broadcast_in_dim(_N64, (2, 2), (1,)), (2, 2), "int32", False),
    (lambda: jax.lax.broadcast_in_dim(np.float64(1.5), (2,), ()), (2,), "float32", False),
    (lambda: jax.lax.reshape(_N64, (2, 1)), (2, 1), "int32", False),
    (lambda: jax.lax.broadcast_in_dim(_N64, (2,), (0,)), (2,), "int32", False),
    (lambda: jax.lax.reshape(_N64, (2,)), (2,), "int32", False),
    (lambda: jax.lax.transpose(_N64, (0,)), (2,), "int32", False),
    (lambda: jax.lax.transpose(2.0, ()), (), "float32", True),
    # vmap broadcasts an output that no example changes (numpyro's BetaBinomial total_count)
    (lambda: jax.vmap(lambda x: _N64)(jnp.ones(3)), (3, 2), "int32", False),
    (lambda: jax.vmap(lambda x: np.float64(1.5))(jnp.ones(3)), (3,), "float32", False),
])
def test_numpy_operands_of_lax_become_arrays_of_their_canonical_dtype(fun, shape, dtype, weak):
  out = fun()
  assert isinstance(out, jax.Array)
  assert (out.shape, out.dtype, out.weak_type) == (shape, np.dtype(dtype), weak)
  assert np.asarray(out).dtype == np.dtype(dtype)
