"""Tier 0 updates a loop's carry in place where a scatter or dynamic_update_slice writes
into it (O(update) a step, not a copy of the carry), and copies wherever a buffer could
be seen by something else. Expected values are analytic (NumPy)."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite._src.backends.numpy import codegen


def _body_jaxpr(body, *avals):
  return jax.make_jaxpr(body)(*avals)


def test_donated_carry_is_written_in_place():
  closed = _body_jaxpr(lambda i, xs: (i + 1, xs.at[i].set(1.0)), 0, jnp.zeros(5))
  fn = codegen.compiled(closed, donated=(1,))
  xs = np.zeros(5, np.float32)
  i, out = fn(np.int32(2), xs)
  assert out is xs and fn.fresh[1]
  np.testing.assert_array_equal(xs, [0, 0, 1, 0, 0])
  # without donation the argument is never touched
  xs = np.zeros(5, np.float32)
  _, out = codegen.compiled(closed)(np.int32(2), xs)
  assert not np.shares_memory(out, xs) and not xs.any()


def test_dynamic_update_slice_in_place_and_aliasing_outputs_are_not_fresh():
  closed = _body_jaxpr(lambda xs: (lax.dynamic_update_index_in_dim(xs, 7.0, 1, 0),) * 2,
                       jnp.zeros(3))
  fn = codegen.compiled(closed, donated=(0,))
  xs = np.zeros(3, np.float32)
  a, b = fn(xs)
  assert a is xs and b is xs and fn.fresh == [False, False]


@pytest.mark.parametrize("jit", [False, True])
def test_while_with_scatter_gives_numpy_values_and_leaves_inputs_alone(jit):
  def f(xs):
    def body(c):
      i, xs, ys = c
      xs = xs.at[i].set(i * 2.0)
      return i + 1, xs, xs   # two carries returned as one buffer
    return lax.while_loop(lambda c: c[0] < 4, body, (0, xs, xs))
  run = jax.jit(f, backend="numpy") if jit else f
  x0 = jnp.full(4, -1.0)
  i, xs, ys = run(x0)
  np.testing.assert_array_equal(np.asarray(xs), [0, 2, 4, 6])
  np.testing.assert_array_equal(np.asarray(ys), [0, 2, 4, 6])
  np.testing.assert_array_equal(np.asarray(x0), [-1, -1, -1, -1])
  i, xs, ys = run(x0)   # a second call of the compiled loop
  np.testing.assert_array_equal(np.asarray(xs), [0, 2, 4, 6])


def test_scan_carry_scatter_and_a_carry_returned_from_a_constant():
  const = np.arange(3.0, dtype=np.float32)

  def f(xs):
    def body(c, k):
      xs, zs = c
      xs = xs.at[k].add(1.0)
      zs = zs.at[k].set(5.0)
      return (xs, zs), xs.sum()
    return lax.scan(body, (xs, jnp.asarray(const)), jnp.array([0, 2, 2]))
  (xs, zs), sums = jax.jit(f, backend="numpy")(jnp.zeros(3))
  np.testing.assert_array_equal(np.asarray(xs), [1, 0, 2])
  np.testing.assert_array_equal(np.asarray(zs), [5, 1, 5])
  np.testing.assert_array_equal(np.asarray(sums), [1, 2, 3])
  np.testing.assert_array_equal(const, [0, 1, 2])


def test_fori_loop_over_a_long_buffer():
  def f(xs):
    return lax.fori_loop(0, xs.shape[0], lambda i, xs: xs.at[i].set(i.astype(xs.dtype)), xs)
  n = 20_000
  out = jax.jit(f, backend="numpy")(jnp.zeros(n))
  np.testing.assert_array_equal(np.asarray(out), np.arange(n, dtype=np.float32))


def test_carry_that_may_be_a_constant_is_copied_before_its_next_update():
  const = jnp.array([9.0, 9.0, 9.0])

  def f(xs):
    def body(c):
      i, xs = c
      xs = xs.at[i % 3].set(-1.0)
      xs = lax.cond(i == 1, lambda xs: const, lambda xs: xs, xs)   # may return const
      return i + 1, xs
    return lax.while_loop(lambda c: c[0] < 4, body, (0, xs))
  _, xs = jax.jit(f, backend="numpy")(jnp.zeros(3))
  # i=0: [-1,0,0]; i=1: const; i=2: [9,9,-1]; i=3: [-1,9,-1]
  np.testing.assert_array_equal(np.asarray(xs), [-1, 9, -1])
  np.testing.assert_array_equal(np.asarray(const), [9, 9, 9])
