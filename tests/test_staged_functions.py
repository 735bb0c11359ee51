"""jax.random's samplers and jnp.linalg's functions are staged as JAX jits them
(``_uniform``, ``_normal``, ``norm``, ...): one ``jit`` equation each in a jaxpr, printed
as JAX prints it, and one executable eagerly on a device. Also gumbel's ``'highest'`` mode and ``jax_high_dynamic_range_gumbel``, the
rows a traced array iterates into, and the dtype errors of n-ary operations.

Expected jaxprs, values and messages were recorded from JAX 0.10.2."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax

from data.staged_jaxprs import CASES, LINALG_CASES

R = jax.random
L = jnp.linalg   # (the recorded sources name both)


@pytest.mark.parametrize("name", sorted(CASES))
def test_sampler_jaxprs_are_jaxs(name):
  source, expected = CASES[name]
  assert str(jax.make_jaxpr(eval(source))(R.key(0))) == expected


@pytest.mark.parametrize("name", sorted(LINALG_CASES))
def test_linalg_jaxprs_are_jaxs(name):
  source, expected = LINALG_CASES[name]
  assert str(jax.make_jaxpr(eval(source))(jnp.eye(3) * 2.0 + 0.1)) == expected


def test_staged_samplers_give_the_values_they_give_eagerly():
  # the staged (jit equation) and the eager (op by op on the host) forms of a draw agree;
  # the values themselves are checked against JAX's in test_random.py
  key = R.key(11)
  for draw in (lambda k: R.normal(k, (5,)), lambda k: R.gumbel(k, (5,)),
               lambda k: R.laplace(k, (5,)), lambda k: R.bernoulli(k, 0.3, (5,)),
               lambda k: R.truncated_normal(k, -1., 1., (5,)),
               lambda k: R.permutation(k, 7)):
    np.testing.assert_array_equal(np.asarray(jax.jit(draw)(key)), np.asarray(draw(key)))


def test_gumbel_highest_mode_and_the_high_range_flag():
  # JAX 0.10.2 on CPU; float32 logs may differ from XLA's in the last bits
  np.testing.assert_allclose(
      np.asarray(R.gumbel(R.key(3), (5,), mode="highest")),
      [2.5647566318511963, -1.023512363433838, -0.04578254744410515, -1.312118411064148,
       1.1200802326202393], rtol=2e-6)
  np.testing.assert_allclose(
      np.asarray(R.gumbel(R.key(7), (2, 3), mode="highest")),
      [[-0.11434070765972137, -1.3011914491653442, 1.0195822715759277],
       [0.5328795313835144, -0.27202725410461426, 0.003237116849049926]], rtol=2e-6,
      atol=1e-7)   # (near 0 the two logs' last bits show)
  # below float32 'highest' is 'high'
  np.testing.assert_array_equal(
      np.asarray(R.gumbel(R.key(3), (5,), jnp.float16, mode="highest"), np.float32),
      np.asarray(R.gumbel(R.key(3), (5,), jnp.float16, mode="high"), np.float32))
  assert R.gumbel(R.key(3), (5,), jnp.float16, mode="highest").tolist() == [
      2.10546875, 1.33984375, 2.966796875, 1.041015625, -0.3896484375]
  with jax.config.override("jax_high_dynamic_range_gumbel", True):   # default: 'high'
    np.testing.assert_allclose(
        np.asarray(R.gumbel(R.key(3), (3,))),
        [2.564755916595459, -1.0235120058059692, -0.045782435685396194], rtol=2e-6)
  with pytest.raises(ValueError, match="Must provide valid mode for gumbel got: higher"):
    R.gumbel(R.key(3), (3,), mode="higher")


def test_a_traced_array_iterates_into_unit_stride_slices():
  expected = (
      "{ lambda ; a:f32[2,3]. let\n"
      "    b:f32[1,3] = slice[limit_indices=(1, 3) start_indices=(0, 0) strides=(1, 1)] a\n"
      "    c:f32[3] = squeeze[dimensions=(0,)] b\n"
      "    d:f32[1,3] = slice[limit_indices=(2, 3) start_indices=(1, 0) strides=(1, 1)] a\n"
      "    e:f32[3] = squeeze[dimensions=(0,)] d\n"
      "    f:f32[3] = add c e\n"
      "  in (f,) }")

  def total(x):
    a, b = x
    return a + b
  assert str(jax.make_jaxpr(total)(jnp.ones((2, 3)))) == expected
  with pytest.raises(TypeError, match="iteration over a 0-d array"):
    jax.make_jaxpr(lambda x: list(x))(1.0)


@pytest.mark.parametrize("call,message", [
    (lambda k: lax.add(k, k), "add does not accept dtype key<fry> at position 0. Accepted "
     "dtypes at position 0 are subtypes of integer, floating, complexfloating."),
    (lambda k: lax.neg(k), "neg does not accept dtype key<fry>. Accepted dtypes are "
     "subtypes of integer, floating, complexfloating."),
    (lambda k: lax.bitwise_and(jnp.ones(2), jnp.ones(2)), "and does not accept dtype "
     "float32 at position 0. Accepted dtypes at position 0 are subtypes of integer, bool."),
    (lambda k: lax.max(k, k), "max does not accept dtype key<fry> at position 0. Accepted "
     "dtypes at position 0 are subtypes of integer, bool, floating, complexfloating."),
])
def test_nary_dtype_errors_name_the_position(call, message):
  with pytest.raises(TypeError) as e:
    call(R.key(0))
  assert str(e.value) == message
