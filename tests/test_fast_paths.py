"""Every fast path gives what the slow path it skips gives, on the same inputs.

The slow paths are the general ones: the promotion function of a ``jnp`` ufunc, the shape
rule of eager dispatch, tier 0 without buffer reuse. The expected values come from NumPy.
"""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite._src.numpy import ufuncs

_BINARY = ["add", "subtract", "multiply", "true_divide", "divide", "maximum", "minimum",
           "arctan2", "nextafter", "bitwise_and", "bitwise_or", "bitwise_xor",
           "logical_and", "logical_or", "logical_xor", "equal", "not_equal", "less",
           "less_equal", "greater", "greater_equal"]
_DTYPES = ["bool", "int8", "int32", "uint8", "uint32", "float16", "float32"]


def _operands(dtype):
  x = np.array([[7, -7, 3], [0, 5, 2]]).astype(dtype)
  y = np.array([[2, 2, -3], [1, 4, 1]]).astype(dtype)
  return x, y


def _result_or_error(fn, *args):
  try:
    out = fn(*args)
  except Exception as e:   # the class is compared, the message is not
    return type(e)
  return (np.asarray(out), out.dtype, out.weak_type)


@pytest.mark.parametrize("name", _BINARY)
@pytest.mark.parametrize("dtype", _DTYPES)
def test_ufunc_hot_path_promotes_as_the_slow_path(name, dtype):
  """Two Arrays of one dtype skip the promotion function; NumPy operands take it."""
  fn = getattr(jnp, name)
  x, y = _operands(dtype)
  fast = _result_or_error(fn, jnp.asarray(x), jnp.asarray(y))
  slow = _result_or_error(fn, x, y)
  if isinstance(slow, type):
    assert fast is slow
    return
  np.testing.assert_array_equal(fast[0], slow[0])
  assert fast[1:] == slow[1:]


@pytest.mark.parametrize("name", ["add", "true_divide", "arctan2", "subtract", "maximum"])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "float16", "float32"])
@pytest.mark.parametrize("scalar", [3, -1, 300, 2.5])
def test_ufunc_scalar_hot_path_promotes_as_the_slow_path(name, dtype, scalar):
  fn = getattr(jnp, name)
  x, _ = _operands(dtype)
  fast = _result_or_error(fn, jnp.asarray(x), scalar)
  slow = _result_or_error(lambda a, s: fn(jnp.asarray(a), jnp.asarray(s)), x, scalar)
  if isinstance(slow, type):
    assert fast is slow
    return
  np.testing.assert_array_equal(fast[0], slow[0])
  assert fast[1:] == slow[1:]


def test_integer_true_divide_is_float_as_in_jax():
  out = jnp.asarray([7, -7]) / jnp.asarray([2, 2])
  assert out.dtype == np.float32
  np.testing.assert_array_equal(out, [3.5, -3.5])
  assert jnp.true_divide(jnp.asarray([7], np.int8), jnp.asarray([2], np.int8)).dtype == \
      np.float32
  np.testing.assert_allclose(jnp.arctan2(jnp.asarray([1, -1]), jnp.asarray([1, 1])),
                             np.arctan2([1.0, -1.0], [1.0, 1.0]), rtol=1e-6)


_VIEWS = {
    "reshape": lambda a: a.reshape(-1),
    "transpose": lambda a: a.T,
    "slice": lambda a: a[:, 1:],
    "squeeze": lambda a: jnp.squeeze(a[:1]),
    "rev": lambda a: a[::-1],
    "broadcast_to": lambda a: jnp.broadcast_to(a, (3,) + a.shape),
    "expand_dims": lambda a: jnp.expand_dims(a, 0),
    "stop_gradient": jax.lax.stop_gradient,
    "astype_same": lambda a: a.astype(a.dtype),
}
_NUMPY_VIEWS = {
    "reshape": lambda a: a.reshape(-1), "transpose": lambda a: a.T,
    "slice": lambda a: a[:, 1:], "squeeze": lambda a: np.squeeze(a[:1]),
    "rev": lambda a: a[::-1], "broadcast_to": lambda a: np.broadcast_to(a, (3,) + a.shape),
    "expand_dims": lambda a: np.expand_dims(a, 0), "stop_gradient": lambda a: a,
    "astype_same": lambda a: a,
}


@pytest.mark.parametrize("view", sorted(_VIEWS))
def test_tier0_buffer_reuse_never_overwrites_a_live_view(view):
  """Tier 0 writes an elementwise result into a dying operand's buffer only when no live
  value is a view of it (the slow path: NumPy allocating every result)."""
  def f(x, view_fn=_VIEWS[view]):
    a = jnp.sin(x)
    b = view_fn(a)
    c = a + 1.0
    return b, c

  x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
  a = np.sin(x)
  expected = (_NUMPY_VIEWS[view](a), a + 1)
  for out, want in zip(jax.jit(f, backend="numpy")(x), expected):
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)


def test_tier0_buffer_reuse_still_happens_for_private_temporaries():
  """The reuse is kept where it is safe: a chain of elementwise ops on a private value."""
  from jaxlite._src.backends.numpy.codegen import compile_jaxpr

  def f(x):
    return jnp.tanh(jnp.cos(jnp.sin(x) * 2.0) + 1.0)

  x = np.linspace(-1, 1, 8, dtype=np.float32)
  np.testing.assert_allclose(jax.jit(f, backend="numpy")(x), np.tanh(np.cos(np.sin(x) * 2) + 1),
                             rtol=1e-6)
  assert "out=" in compile_jaxpr(jax.make_jaxpr(f)(x))[1]
  np.testing.assert_array_equal(x, np.linspace(-1, 1, 8, dtype=np.float32))
