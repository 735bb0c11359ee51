"""Calls that use the parameters of JAX 0.10.2's public signatures that jaxlite took over
(keyword names, new keywords, ``out_sharding``, removed or deprecated arguments), against
JAX's outcomes recorded in tests/data/surface_params_reference.json from the cases in
surface_params_cases.py: the values and dtypes, or the error class and message.
"""
import json
import os
import sys

import numpy as np
import pytest

import jaxlite

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "data"))
from surface_params_cases import cases, outcome  # noqa: E402

with open(os.path.join(os.path.dirname(__file__), "data",
                       "surface_params_reference.json")) as _f:
  JAX = json.load(_f)["cases"]

# Messages compared by their error class only: those that name a private function of JAX's
# (its Array methods are _std, _argsort, ...; jaxlite's are named otherwise), and one more.
CLASS_ONLY = {"method_std_refuses_mean", "method_argsort_refuses_dtype",
              "method_dot_refuses_out_sharding", "at_apply_takes_no_out_sharding",
              # JAX's message shows a Python set, whose order changes with the hash seed
              "all_gather_bad_to"}


@pytest.mark.parametrize("name", sorted(JAX))
def test_outcome_matches_jax(name):
  want, got = JAX[name], outcome(cases(jaxlite)[name])
  if "error" in want:
    assert got.get("error") == want["error"], got
    if name not in CLASS_ONLY:
      assert got["message"] == want["message"]
    return
  assert "error" not in got, got
  assert got["dtype"] == want["dtype"]
  for a, b in zip(got["value"], want["value"]):
    np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), rtol=1e-6)
  assert got.get("warnings") == want.get("warnings")
