"""ml_dtypes' narrow types (int4, uint4, int2, uint2, the 8-bit floats...) as array dtypes,
against JAX 0.10.2's results (recorded with JAX_PLATFORMS=cpu; the float8 values are
rounded to 3 or 2 mantissa bits, which no libm difference reaches)."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite._src import tiers

needs_xla = pytest.mark.skipif(not tiers.xla_available(), reason="no XLA plugin installed")

INT4 = [-3, -1, 0, 2, 7]
UINT4 = [0, 1, 5, 9, 15]
FLOAT8 = [-1.5, 0.3, 2.0, 7.0, 100.0]

OPS = {"neg": lambda a: -a, "add1": lambda a: a + 1, "mul": lambda a: a * a,
       "sub": lambda a: a - a[::-1], "max": jnp.max, "min": jnp.min,
       "floordiv": lambda a: a // 2, "rem": lambda a: a % 3, "shl": lambda a: a << 1,
       "sort": jnp.sort, "cumsum": jnp.cumsum, "astype32": lambda a: a.astype(jnp.int32),
       "div": lambda a: a / 3, "exp": jnp.exp, "sum": jnp.sum, "mean": jnp.mean,
       "round": jnp.round, "astypef": lambda a: a.astype(jnp.float32)}

# (dtype, values, op) -> (result dtype, values), from JAX 0.10.2: narrow integers wrap
# around in their width, 8-bit floats round every result to 8 bits
JAX_RESULTS = {
    ("int4", "neg"): ("int4", [3, 1, 0, -2, -7]),
    ("int4", "add1"): ("int4", [-2, 0, 1, 3, -8]),
    ("int4", "mul"): ("int4", [-7, 1, 0, 4, 1]),
    ("int4", "sub"): ("int4", [6, -3, 0, 3, -6]),
    ("int4", "max"): ("int4", 7),
    ("int4", "min"): ("int4", -3),
    ("int4", "floordiv"): ("int4", [-2, -1, 0, 1, 3]),
    ("int4", "rem"): ("int4", [0, 2, 0, 2, 1]),
    ("int4", "shl"): ("int4", [-6, -2, 0, 4, -2]),
    ("int4", "sort"): ("int4", [-3, -1, 0, 2, 7]),
    ("int4", "cumsum"): ("int4", [-3, -4, -4, -2, 5]),
    ("int4", "astype32"): ("int32", [-3, -1, 0, 2, 7]),
    ("uint4", "neg"): ("uint4", [0, 15, 11, 7, 1]),
    ("uint4", "add1"): ("uint4", [1, 2, 6, 10, 0]),
    ("uint4", "mul"): ("uint4", [0, 1, 9, 1, 1]),
    ("uint4", "sub"): ("uint4", [1, 8, 0, 8, 15]),
    ("uint4", "max"): ("uint4", 15),
    ("uint4", "floordiv"): ("uint4", [0, 0, 2, 4, 7]),
    ("uint4", "shl"): ("uint4", [0, 2, 10, 2, 14]),
    ("uint4", "cumsum"): ("uint4", [0, 1, 6, 15, 14]),
    ("float8_e4m3fn", "mul"): ("float8_e4m3fn", [2.25, 0.09375, 4.0, 48.0, np.nan]),
    ("float8_e4m3fn", "div"): ("float8_e4m3fn", [-0.5, 0.1015625, 0.6875, 2.25, 32.0]),
    ("float8_e4m3fn", "exp"): ("float8_e4m3fn", [0.21875, 1.375, 7.5, np.nan, np.nan]),
    # (no infinity in e4m3fn: max's identity is the lowest finite value, not NaN)
    ("float8_e4m3fn", "max"): ("float8_e4m3fn", 96.0),
    ("float8_e4m3fn", "sum"): ("float8_e4m3fn", 104.0),
    ("float8_e4m3fn", "mean"): ("float8_e4m3fn", 20.0),
    ("float8_e4m3fn", "round"): ("float8_e4m3fn", [-2.0, 0.0, 2.0, 7.0, 96.0]),
    ("float8_e4m3fn", "cumsum"): ("float8_e4m3fn", [-1.5, -1.25, 0.75, 8.0, 104.0]),
    ("float8_e4m3fn", "astypef"): ("float32", [-1.5, 0.3125, 2.0, 7.0, 96.0]),
    ("float8_e5m2", "mul"): ("float8_e5m2", [2.0, 0.09375, 4.0, 48.0, 8192.0]),
    ("float8_e5m2", "exp"): ("float8_e5m2", [0.21875, 1.25, 7.0, 1024.0, np.inf]),
    ("float8_e5m2", "max"): ("float8_e5m2", 96.0),
    ("float8_e5m2", "sum"): ("float8_e5m2", 96.0),
}
_VALUES = {"int4": INT4, "uint4": UINT4, "float8_e4m3fn": FLOAT8, "float8_e5m2": FLOAT8}


def _check(out, dtype, values):
  assert out.dtype == np.dtype(getattr(jnp, dtype))
  np.testing.assert_array_equal(np.asarray(out).astype(np.float64), np.array(values, float))


@pytest.mark.parametrize("dtype, op", sorted(JAX_RESULTS))
def test_narrow_dtypes_compute_as_in_jax_eagerly_and_on_tier_0(dtype, op):
  x = jnp.array(_VALUES[dtype], dtype=getattr(jnp, dtype))
  want = JAX_RESULTS[dtype, op]
  _check(OPS[op](x), *want)
  _check(jax.jit(OPS[op], backend="numpy")(x), *want)


@needs_xla
@pytest.mark.parametrize("dtype, op", sorted(k for k in JAX_RESULTS if "float8" in k[0]))
def test_eight_bit_floats_compute_as_in_jax_on_xla(dtype, op):
  x = jnp.array(_VALUES[dtype], dtype=getattr(jnp, dtype))
  _check(jax.jit(OPS[op], backend="xla")(x), *JAX_RESULTS[dtype, op])


def test_sub_byte_integers_stay_on_tier_0_under_auto_and_say_so_under_xla():
  x = jnp.array(INT4, dtype=jnp.int4)
  _check(jax.jit(lambda a: a * a)(x), "int4", [-7, 1, 0, 4, 1])
  if tiers.xla_available():
    with pytest.raises(NotImplementedError, match="does not support dtype int4"):
      jax.jit(lambda a: a * a, backend="xla")(x)


def test_narrow_dtypes_arrays_of_every_kind():
  # what jaxtyping's test_any_dtype makes; JAX 0.10.2 prints them as below
  for name, values in (("int2", [1, -2]), ("uint2", [3, 0]), ("int4", [7, -8]),
                       ("uint4", [15, 0]), ("float4_e2m1fn", [1.5, 6.0]),
                       ("float8_e8m0fnu", [0.25, 64.0])):
    x = jnp.array(values, dtype=getattr(jnp, name))
    assert x.dtype.name == name and repr(x).endswith(f"dtype={name})")
    np.testing.assert_array_equal(np.asarray(x).astype(float), values)


def test_narrow_dtypes_promote_only_with_weak_scalars():
  x = jnp.array(INT4, dtype=jnp.int4)
  assert (x + 1).dtype == jnp.int4 and (x * 2).weak_type is False
  f = jnp.array(FLOAT8, dtype=jnp.float8_e4m3fn)
  assert (f * 2.0).dtype == jnp.float8_e4m3fn
  assert jnp.promote_types(jnp.int4, jnp.int4) == jnp.int4
  # JAX 0.10.2's messages
  with pytest.raises(jax.dtypes.TypePromotionError,
                     match=r"Input dtypes \('int4', 'int8'\) have no available implicit dtype "
                           r"promotion path. To avoid unintended promotion, 1-bit, 2-bit and "
                           r"4-bit integers do not support implicit promotion. If you'd like "
                           r"your inputs to be promoted to another type, you can do so "
                           r"explicitly using e.g. x.astype\('int32'\)"):
    jnp.promote_types(jnp.int4, jnp.int8)
  with pytest.raises(jax.dtypes.TypePromotionError,
                     match=r"8-bit floats do not support implicit promotion.*"
                           r"x.astype\('float32'\)"):
    f + jnp.ones(5, jnp.float16)
  with pytest.raises(jax.dtypes.TypePromotionError, match="8-bit floats"):
    jnp.promote_types(jnp.float8_e4m3fn, jnp.int4)


def test_abs_refuses_narrow_integers_as_jax_does():
  x = jnp.array(INT4, dtype=jnp.int4)
  message = ("abs does not accept dtype int4. Support for narrow-width integers is "
             "platform-dependent and limited to a few specific operations, e.g. basic "
             "arithmetic and type casting.")
  for f in (jnp.abs, jax.jit(jnp.abs)):
    with pytest.raises(TypeError, match=message.replace(".", r"\.")):
      f(x)
