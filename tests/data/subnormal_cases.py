"""Cases of subnormal operands that make_subnormal_reference.py records from JAX and
tests/test_subnormals.py replays.

XLA flushes float32, float64 and bfloat16 subnormal operands to zeros of their sign (its
CPU code runs with denormals-are-zero and flush-to-zero); float16 it computes in float32,
where its subnormals are normal. Each case is a primitive class whose result changes
materially with the flush: a bool or an integer, a sign, an infinity or a NaN, a zero for
a +-1. The pairs also hold two of issue 43's other edges: max and min of 0 and -0, and
the quotients of the float maximum by itself. ``cases()`` maps a key ``name|dtype`` to
``(source, operands)``: the source of a function over ``jnp``, ``lax`` and ``np``, and
``"x"`` (``values(dtype)``) or ``"xy"`` (every pair of them, as two operands).

Arrays have 16 elements (256 for pairs): XLA's CPU log of a float32 subnormal is -inf in
vectors of 1 to 4 and of 8 or more elements, and -103.97 (log 2**-150) in vectors of 5 to
7, whose tail its code computes another way (measured).
"""
import ml_dtypes
import numpy as np

DTYPES = ("float32", "float64", "bfloat16", "float16")

UNARY = {
    "sign": "lax.sign", "floor": "jnp.floor", "ceil": "jnp.ceil", "log": "jnp.log",
    "sqrt": "jnp.sqrt", "rsqrt": "lax.rsqrt", "lgamma": "lax.lgamma",
    "digamma": "lax.digamma", "reciprocal": "lambda x: 1 / x",
    "half": "lambda x: x / 2", "integer_pow_m1": "lambda x: lax.integer_pow(x, -1)",
    "integer_pow_m2": "lambda x: lax.integer_pow(x, -2)",
    "to_bool": "lambda x: x.astype(bool)", "logical_not": "jnp.logical_not",
    "eq_zero": "lambda x: x == 0", "ne_zero": "lambda x: x != 0",
    "gt_zero": "lambda x: x > 0", "ge_zero": "lambda x: x >= 0",
    "lt_zero": "lambda x: x < 0", "le_zero": "lambda x: x <= 0",
    "zero_lt": "lambda x: lax.lt(jnp.zeros_like(x), x)",
    "frexp_mantissa": "lambda x: jnp.frexp(x)[0]",
    "frexp_exponent": "lambda x: jnp.frexp(x)[1]",
    "argmax": "lambda x: jnp.argmax(x[:8])", "argmin": "lambda x: jnp.argmin(x[:8])",
    "argsort": "jnp.argsort", "sort": "jnp.sort",
    "where": "lambda x: jnp.where(x, 1.0, 2.0)",
    "count_nonzero": "jnp.count_nonzero", "any": "lambda x: jnp.any(x[:8])",
    "heaviside": "lambda x: jnp.heaviside(x, 0.5)",
    "nextafter_zero": "lambda x: jnp.nextafter(x, jnp.zeros_like(x))",
    "complex_eq_zero": "lambda x: lax.complex(x, x) == 0",
}
BINARY = {
    "eq": "lax.eq", "ne": "lax.ne", "lt": "lax.lt", "le": "lax.le", "gt": "lax.gt",
    "ge": "lax.ge", "div": "lax.div", "rem": "lax.rem", "nextafter": "lax.nextafter",
    "floor_divide": "jnp.floor_divide", "remainder": "jnp.remainder",
    "max": "lax.max", "min": "lax.min",
}
# lax.complex takes float32 and float64 only
_ONLY = {"complex_eq_zero": ("float32", "float64")}


def values(dtype):
  """16 values of ``dtype``: subnormals (the smallest and largest of each sign and one
  between) and zeros, then normal numbers, an infinity and NaN."""
  info = ml_dtypes.finfo(dtype)
  s, t = float(info.smallest_subnormal), float(info.tiny)
  return np.array([s, -s, t - s, -(t - s), t / 4, -t / 4, 0.0, -0.0,
                   1.0, -1.0, t, -t, 2.5, float(info.max), np.inf, np.nan],
                  np.dtype(dtype))


def operands(kind, dtype):
  x = values(dtype)
  if kind == "x":
    return [x]
  i, j = np.meshgrid(np.arange(x.size), np.arange(x.size), indexing="ij")
  return [x[i.ravel()], x[j.ravel()]]


def cases():
  out = {}
  for table, kind in ((UNARY, "x"), (BINARY, "xy")):
    for name, source in table.items():
      for dtype in _ONLY.get(name, DTYPES):
        out[f"{name}|{dtype}"] = (source, kind)
  return out
