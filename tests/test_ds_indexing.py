"""``jax.ds`` slices as indices (``x[jax.ds(...)]`` and ``x.at[jax.ds(...)]``), eagerly and
under jit, vmap and grad, against JAX 0.10.2's values, jaxprs and error classes (recorded
in tests/data/ds_reference.json by make_ds_reference.py from the cases in ds_cases.py).
"""
import json
import os
import sys

import numpy as np
import pytest

import jaxlite as jax

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "data"))
from ds_cases import error_cases, jaxpr_cases, value_cases  # noqa: E402

with open(os.path.join(os.path.dirname(__file__), "data", "ds_reference.json")) as _f:
  REF = json.load(_f)


@pytest.mark.parametrize("name", sorted(REF["values"]))
def test_ds_index_value_matches_jax(name):
  f, args = value_cases(jax)[name]
  np.testing.assert_allclose(np.asarray(f(*args)), np.asarray(REF["values"][name]),
                             rtol=1e-6)


@pytest.mark.parametrize("name", sorted(REF["jaxprs"]))
def test_ds_index_jaxpr_matches_jax(name):
  f, args = jaxpr_cases(jax)[name]
  assert str(jax.make_jaxpr(f)(*args)) == REF["jaxprs"][name]


@pytest.mark.parametrize("name", sorted(REF["errors"]))
def test_ds_index_error_class_matches_jax(name):
  f, args = error_cases(jax)[name]
  with pytest.raises(Exception) as info:
    f(*args)
  assert type(info.value).__name__ == REF["errors"][name]
