"""Every primitive has its rules, and the NumPy implementations produce exactly the
dtypes and shapes the shape rules promise, across dtypes."""
import numpy as np
import pytest

import jaxlite  # noqa: F401  (registers every primitive and backend rule)
# check_p (lax.callbacks) is only ever bound by checkify's check, which registers what
# running and batching it mean; import it so the tables are complete in any test order
import jaxlite.experimental.checkify  # noqa: F401
from jaxlite._src.core import core
from jaxlite._src.hijax import HiPrimitive
from jaxlite._src.base import dtypes
from jaxlite._src.backends.numpy.impls import impl_rules
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.transforms import ad

# (a library's hijax HiPrimitive, such as test_hijax's, runs by lowering to these: no
# kernel of its own)
ALL_PRIMITIVES = sorted((p for p in core.abstract_eval_rules
                         if not isinstance(p, HiPrimitive)), key=lambda p: p.name)


@pytest.mark.parametrize("prim", ALL_PRIMITIVES, ids=lambda p: p.name)
def test_every_primitive_has_a_numpy_implementation(prim):
  assert prim in impl_rules, f"no NumPy implementation for {prim.name}"


@pytest.mark.parametrize("prim", ALL_PRIMITIVES, ids=lambda p: p.name)
def test_every_primitive_has_a_jvp_rule(prim):
  assert prim in ad.jvp_rules, f"no JVP rule for {prim.name}"


DTYPES = [np.bool_, np.int8, np.int32, np.uint8, np.uint32, np.float16, dtypes.bfloat16,
          np.float32, np.complex64]


def _sample(dtype, shape=(2, 3)):
  rng = np.random.default_rng(0)
  if dtype == np.bool_:
    return rng.random(shape) > 0.5
  if np.dtype(dtype).kind in "iu":
    return rng.integers(1, 5, shape).astype(dtype)
  values = rng.uniform(0.2, 0.9, shape)
  if np.dtype(dtype).kind == "c":
    values = values + 0.5j * rng.uniform(0.2, 0.9, shape)
  return values.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", sorted(ew.elementwise_primitives))
def test_elementwise_implementations_keep_the_promised_dtype(name, dtype):
  prim = ew.elementwise_primitives[name]
  args = [_sample(dtype) for _ in range(ew.specs[prim].arity)]
  params = {"y": 3} if name == "integer_pow" else {}
  try:
    expected = core.abstract_eval(prim, [core.get_aval(a) for a in args], params)[0]
  except TypeError:
    return  # the shape rule rejects this dtype, as JAX's does
  out = np.asarray(impl_rules[prim](*args, **params))
  assert out.dtype == expected.dtype and out.shape == expected.shape


def test_every_elementwise_primitive_has_a_spec():
  assert set(ew.specs) == set(ew.elementwise_primitives.values())


# NumPy's function where it is not the primitive's namesake
_NUMPY_REFERENCE = {
    "neg": np.negative, "is_finite": np.isfinite, "logistic": lambda v: 1 / (1 + np.exp(-v)),
    "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "asinh": np.arcsinh,
    "acosh": np.arccosh, "atanh": np.arctanh, "rsqrt": lambda v: 1 / np.sqrt(v)}
_FLOAT_UNARY = sorted(spec.name for prim, spec in ew.specs.items()
                      if spec.arity == 1 and np.dtype(np.float32) in prim.elementwise_dtypes
                      and spec.name != "integer_pow")


@pytest.mark.parametrize("name", _FLOAT_UNARY)
def test_float_unary_primitives_match_numpy(name):
  import jaxlite.numpy as jnp
  x = _sample(np.float32) + (1 if name == "acosh" else 0)   # acosh: defined from 1
  out = ew.elementwise_primitives[name].bind(jnp.asarray(x))
  reference = _NUMPY_REFERENCE.get(name) or getattr(np, name)
  np.testing.assert_allclose(out, reference(x.astype(np.float64)), rtol=2e-6, atol=1e-7)


def test_integer_division_truncates_toward_zero_like_xla():
  import jaxlite.numpy as jnp
  x = jnp.array([7, -7, 7, -7], jnp.int32)
  y = jnp.array([2, 2, -2, -2], jnp.int32)
  assert ew.div(x, y).tolist() == [3, -3, -3, 3]
  assert ew.rem(x, y).tolist() == [1, -1, 1, -1]


def test_float_to_int_conversion_saturates_like_xla():
  import jaxlite.numpy as jnp
  x = jnp.array([np.nan, 1e10, -1e10, 2.7], jnp.float32)
  assert x.astype(jnp.int32).tolist() == [0, 2**31 - 1, -2**31, 2]


def test_lax_pow_takes_an_integer_exponent_as_jax_does():
  # values and messages from JAX 0.10.2 (JAX_PLATFORMS=cpu)
  import jaxlite as jax
  import jaxlite.numpy as jnp
  from jaxlite import lax
  from jaxlite._src import tiers
  x = jnp.array([0.5, -2.0, 3.0, 0.0])
  n = jnp.array([3, 2, -1, 0], jnp.int32)
  want = [0.125, 4.0, 1 / 3, 1.0]
  for tier in ("numpy", "xla") if tiers.xla_available() else ("numpy",):
    out = jax.jit(lax.pow, backend=tier)(x, n)
    assert out.dtype == jnp.float32
    np.testing.assert_allclose(out, want, rtol=1e-6)
  np.testing.assert_allclose(lax.pow(x, n), want, rtol=1e-6)
  np.testing.assert_allclose(jax.vmap(lax.pow)(x, n), want, rtol=1e-6)
  np.testing.assert_allclose(jax.grad(lambda a: lax.pow(a, n).sum())(x),
                             [0.75, -4.0, -1 / 9, 0.0], rtol=1e-6)
  assert str(jax.make_jaxpr(lax.pow)(x, n)) == (
      "{ lambda ; a:f32[4] b:i32[4]. let c:f32[4] = pow a b in (c,) }")
  with pytest.raises(TypeError, match=r"the first argument to pow must have an inexact "
                     r"dtype \(float or complex\), and the second argument must have an "
                     r"inexact or integer dtype, and two inexact dtypes must match, but got "
                     r"float32 and float16 respectively\."):
    lax.pow(x, jnp.ones(4, jnp.float16))
  with pytest.raises(TypeError, match=r"pow does not accept dtype int32 at position 0\. "
                     r"Accepted dtypes at position 0 are subtypes of floating, "
                     r"complexfloating\."):
    lax.pow(n, n)


# (lhs dtype, rhs dtype, preferred_element_type) -> (result dtype, result), from JAX
# 0.10.2 (JAX_PLATFORMS=cpu): the operands' "higher precision" type, as XLA's
_MIXED_DOTS = {
    ("float32", "bfloat16", None): ("float32", [[15.75, -5.5], [-8, 3.5]]),
    ("float32", "int32", None): ("float32", [[14.75, -5], [-6, 2.5]]),
    ("int8", "int32", None): ("int32", [[13, -5], [-7, 2]]),
    ("float16", "bfloat16", None): ("bfloat16", [[15.75, -5.5], [-8, 3.5]]),
    ("float8_e5m2", "float8_e4m3fn", "bfloat16"): ("bfloat16", [[15, -5], [-8, 3.5]]),
    ("float8_e5m2", "float8_e4m3fn", None): ("float8_e5m2", [[16, -5], [-8, 3.5]]),
    ("int32", "float16", None): ("float16", [[14, -5.5], [-9, 3]]),
    ("float32", "complex64", None): ("complex64", [[15.75, -5.5], [-8, 3.5]]),
}


@pytest.mark.parametrize("lhs_dtype, rhs_dtype, preferred", sorted(
    _MIXED_DOTS, key=str))
def test_dot_general_of_two_dtypes_as_jax(lhs_dtype, rhs_dtype, preferred):
  import jaxlite as jax
  import jaxlite.numpy as jnp
  from jaxlite._src import tiers
  a = np.array([[1.5, -2.0, 3.25], [0.5, 4.0, -1.0]], np.float32)
  b = np.array([[2.0, 1.0], [-1.5, 0.25], [3.0, -2.0]], np.float32)
  x, y = jnp.asarray(a).astype(lhs_dtype), jnp.asarray(b).astype(rhs_dtype)
  dn = (((1,), (0,)), ((), ()))
  want_dtype, want = _MIXED_DOTS[lhs_dtype, rhs_dtype, preferred]

  def dot(x, y):
    return jax.lax.dot_general(x, y, dn, preferred_element_type=preferred)
  runs = [dot] + [jax.jit(dot, backend=t) for t in ("numpy", "xla")
                  if t == "numpy" or tiers.xla_available()]
  for run in runs:
    out = run(x, y)
    assert out.dtype == np.dtype(want_dtype)
    np.testing.assert_array_equal(np.asarray(out).astype(np.complex128), want)
  if dtypes.is_inexact(x.dtype) and dtypes.is_inexact(y.dtype):
    # JAX's gradients: each in its operand's dtype
    gx, gy = jax.grad(lambda x, y: dot(x, y).astype(jnp.float32).real.sum(),
                      argnums=(0, 1))(x, y)
    assert (gx.dtype, gy.dtype) == (x.dtype, y.dtype)
    np.testing.assert_array_equal(np.asarray(gx).astype(np.float64).real,
                                  [[3.0, -1.25, 1.0]] * 2)
    np.testing.assert_array_equal(np.asarray(gy).astype(np.complex128).real,
                                  np.asarray(x).astype(np.float64).sum(0)[:, None]
                                  * np.ones((1, 2)))


def test_dot_general_of_two_dtypes_prints_as_jax():
  import jaxlite as jax
  import jaxlite.numpy as jnp
  dn = (((1,), (0,)), ((), ()))
  assert str(jax.make_jaxpr(lambda x, y: jax.lax.dot_general(x, y, dn))(
      jnp.ones((2, 3)), jnp.ones((3, 2), jnp.bfloat16))) == (
      "{ lambda ; a:f32[2,3] b:bf16[3,2]. let\n"
      "    c:f32[2,2] = dot_general[dimension_numbers=(([1], [0]), ([], []))] a b\n"
      "  in (c,) }")
