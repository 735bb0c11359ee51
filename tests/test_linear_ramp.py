"""jnp.linspace and jnp.pad(mode='linear_ramp') against JAX 0.10.2's values
(tests/data/make_linear_ramp_reference.py), eagerly and on both tiers.

JAX's rule: the values ``start * (1 - t) + stop * t`` in the requested dtype's inexact
type (float32 for the integer types, float64 for 64-bit ones), and for an integer dtype
their floor (NumPy truncates, and in float64). ``pad`` ramps from each end value to the
edge with ``linspace(end, edge, width, endpoint=False, dtype=x.dtype)``, one axis after the
other. Integer results must agree exactly; float ones to a few ulps of the ramp's range
(XLA fuses the arithmetic, so last bits depend on the shape and the CPU).
"""
import json
import os
import sys

import ml_dtypes
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp

DATA = os.path.join(os.path.dirname(__file__), "data")
sys.path.insert(0, DATA)
import linear_ramp_cases  # noqa: E402

with open(os.path.join(DATA, "linear_ramp_reference.json")) as _fh:
  REFERENCE = json.load(_fh)
CASES = linear_ramp_cases.cases()


@pytest.mark.parametrize("mode", ["eager", "numpy", "xla"])
@pytest.mark.parametrize("key", sorted(CASES))
def test_matches_jax(key, mode):
  want = REFERENCE[key]
  make = lambda: eval(CASES[key], {"jnp": jnp, "np": np})
  got = make() if mode == "eager" else jax.jit(make, backend=mode)()
  assert got.dtype == np.dtype(want["dtype"])
  expected = np.array(want["values"]).reshape(want["shape"])
  got = np.asarray(got).astype(np.float64)
  if got.dtype.kind in "iu" or np.dtype(want["dtype"]).kind in "iu":
    np.testing.assert_array_equal(got, expected)
  else:
    eps = float(ml_dtypes.finfo(np.dtype(want["dtype"])).eps)
    np.testing.assert_allclose(got, expected, rtol=4 * eps,
                               atol=4 * eps * np.abs(expected).max())


def test_integer_ramps_floor_where_numpy_truncates():
  # -7 + 12 * i / 9 for i = 1, 2 is -5.67 and -4.33: floored (NumPy gives -5 and -4)
  np.testing.assert_array_equal(jnp.linspace(-7, 5, 9, endpoint=False, dtype=np.int32)[:3],
                                [-7, -6, -5])
  # from 2 down to -7 in thirds: -1 and -4 in NumPy
  np.testing.assert_array_equal(
      jnp.pad(np.array([-7], np.int32), (3, 0), "linear_ramp", end_values=2), [2, -2, -5, -7])
