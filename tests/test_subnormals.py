"""Subnormal operands count as zeros where XLA flushes them, on every tier.

XLA's CPU code (and TPUs and GPUs) flushes float32, float64 and bfloat16 subnormals to
zeros of their sign; tier 0 flushes the operands of the primitives whose results show it
(``backends/numpy/subnormals.py``). Each case of ``tests/data/subnormal_cases.py`` runs
eagerly, under ``jit`` on tier 0 and under ``jit`` on XLA, and is compared with JAX
0.10.2's answer recorded by ``tests/data/make_subnormal_reference.py``: integers,
booleans, infinities, NaNs and signs exactly, other floats as the replay compares them
(a subnormal-sized difference, from the quotients tier 0 leaves unflushed, passes).
"""
import json
import os
import sys

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite._src import backends

DATA = os.path.join(os.path.dirname(__file__), "data")
sys.path.insert(0, DATA)
import subnormal_cases  # noqa: E402

with open(os.path.join(DATA, "subnormal_reference.json")) as _fh:
  REFERENCE = json.load(_fh)
CASES = subnormal_cases.cases()
RTOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 4e-6, "float64": 1e-12}
# Where JAX's answer depends on how XLA's CPU code compiles a comparison, tier 0 keeps to
# the flush: XLA tests a bfloat16 for equality with a constant zero by its bits, so jnp's
# logical functions (jitted in JAX: their zero is a constant) see bfloat16 subnormals as
# nonzero, while ``x == 0`` of two arrays flushes them. (name, mode) of such cases:
_BFLOAT16_BITWISE_ZERO = {("logical_not", "eager"), ("logical_not", "numpy"),
                          ("count_nonzero", "eager"), ("count_nonzero", "numpy"),
                          ("where", "eager"), ("where", "numpy"), ("eq_zero", "numpy"),
                          ("ne_zero", "numpy")}


def _params():
  for key in sorted(CASES):
    name, dtype = key.split("|")
    for mode in ("eager", "numpy", "xla"):
      marks = []
      if dtype == "bfloat16" and (name, mode) in _BFLOAT16_BITWISE_ZERO:
        marks.append(pytest.mark.xfail(strict=True, reason="XLA's CPU code compares a "
                                       "bfloat16 with a constant zero by its bits"))
      yield pytest.param(key, mode, marks=marks, id=f"{key}-{mode}")


def _check(got, want):
  got = np.asarray(got)
  assert got.dtype == np.dtype(want["dtype"]) and list(got.shape) == want["shape"]
  expected = np.array(want["values"]).reshape(want["shape"])
  have = got.astype(np.float64)
  if got.dtype.kind in "biu":
    np.testing.assert_array_equal(have, expected)
    return
  nan = np.isnan(expected)
  np.testing.assert_array_equal(np.isnan(have), nan)
  have, expected = have[~nan], expected[~nan]
  np.testing.assert_array_equal(np.signbit(have), np.signbit(expected))
  np.testing.assert_array_equal(np.isinf(have), np.isinf(expected))
  # as the replay compares (tests/test_jax_replay.py): XLA's special functions differ from
  # SciPy's in the last bits, and a subnormal-sized difference passes
  with np.errstate(invalid="ignore"):   # inf - inf
    close = (have == expected) | (np.abs(have - expected)
                                  <= RTOL[got.dtype.name] * (1 + np.abs(expected)))
  assert close.all(), (have[~close], expected[~close])


@pytest.mark.parametrize("key,mode", list(_params()))
def test_subnormal_operands_give_what_jax_gives(key, mode, x64):
  if mode == "xla" and not backends.xla_available():
    pytest.skip("no XLA plugin")
  x64(True)
  source, kind = CASES[key]
  fn = eval(source, {"jnp": jnp, "lax": lax, "np": np})
  args = [jnp.asarray(a) for a in subnormal_cases.operands(kind, key.split("|")[1])]
  record = REFERENCE[key]["eager" if mode == "eager" else "jit"]
  record = REFERENCE[key]["eager"] if record == "=eager" else record
  got = fn(*args) if mode == "eager" else jax.jit(fn, backend=mode)(*args)
  _check(got, record)


@pytest.mark.parametrize("mode", ["eager", "numpy"])
def test_issue_examples_of_1e_45(mode):
  # JAX 0.10.2 on the CPU, eagerly and under jit: log -inf, sign 0, ceil 0, frexp
  # (0.5, -149), logical_not True (NumPy: -103.28, 1, 1, (0.5, -148), False)
  fn = lambda x: (jnp.log(x), jnp.sign(x), jnp.ceil(x), *jnp.frexp(x), jnp.logical_not(x))
  x = jnp.float32(1e-45)
  got = fn(x) if mode == "eager" else jax.jit(fn, backend=mode)(x)
  assert [float(v) for v in got] == [-np.inf, 0.0, 0.0, 0.5, -149, 1.0]


def test_blocked_regions_flush_as_the_eager_kernels():
  # 200k elements: tier 0 runs these ufuncs in blocks, writing into scratch buffers
  x, y = subnormal_cases.operands("xy", "float32")
  x, y = np.tile(x, 800), np.tile(y, 800)
  fn = lambda x, y: (x < y, x * 1.0 > 0, jnp.log(x * 1.0), (x * 1.0) / (y * 1.0),
                     jnp.sign(x * 1.0), jnp.sqrt(y * 1.0))
  for got, want in zip(jax.jit(fn, backend="numpy")(x, y), fn(jnp.asarray(x), jnp.asarray(y))):
    got, want = np.asarray(got), np.asarray(want)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
