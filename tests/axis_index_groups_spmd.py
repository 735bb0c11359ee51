"""Collectives with axis_index_groups on N CPU devices, both tiers, against JAX 0.10.2.

Not collected directly: tests/test_axis_index_groups.py runs this file with pytest in a
subprocess whose device count is fixed (JAX_NUM_CPU_DEVICES=4 or 8). The cases are in
tests/data/axis_index_groups_cases.py, the recorded answers beside them.
"""
import json
import os
import pathlib
import sys

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite._src import tiers

DATA = pathlib.Path(__file__).parent / "data"
sys.path.insert(0, str(DATA))
import axis_index_groups_cases as C  # noqa: E402

N = int(os.environ["JAX_NUM_CPU_DEVICES"])
REF = json.loads((DATA / "axis_index_groups_reference.json").read_text())[str(N)]
CASES = C.cases(jax, jnp, lax, N)
ERRORS = C.error_cases(jax, jnp, lax, N)
# errors whose message JAX words deliberately (the others fail inside XLA's lowering or
# verifier with messages about replica ids; jaxlite raises the same class, explained)
SAME_MESSAGE = {"psum_overlap", "pmean_gap", "all_gather_overlap", "all_to_all_uneven"}


@pytest.fixture(params=["numpy", "xla"])
def tier(request):
  if request.param == "xla" and not tiers.xla_available():
    pytest.skip("no XLA plugin")
  with jax.config.override("jaxlite_tier", request.param):
    yield request.param


def check(got, want):
  leaves = jax.tree.leaves(got)
  wanted = jax.tree.leaves(want, is_leaf=lambda d: isinstance(d, dict) and "dtype" in d)
  assert len(leaves) == len(wanted)
  for a, w in zip(leaves, wanted):
    a = np.asarray(a)
    assert str(a.dtype) == w["dtype"]
    # exact but for XLA's division by a constant (a multiplication by its reciprocal)
    np.testing.assert_allclose(a, np.asarray(w["value"], w["dtype"]), rtol=2e-7, atol=0)


@pytest.mark.parametrize("name", sorted(CASES))
def test_groups_collective(tier, name):
  check(CASES[name](), REF["cases"][name]["ok"])


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_groups_collective_error(tier, name):
  want = REF["errors"][name]
  with pytest.raises(Exception) as info:
    ERRORS[name]()
  assert type(info.value).__name__ == want["error"], info.value
  if name in SAME_MESSAGE:
    assert str(info.value).startswith(want["message"])


def test_groups_in_the_lowered_module():
  # the replica groups of the index groups of every group of the other mesh axis
  if not tiers.xla_available():
    pytest.skip("no XLA plugin")
  from jaxlite._src.backends.xla import stablehlo
  mesh_axes = (("x", N // 2), ("y", 2))
  assert stablehlo.index_groups(mesh_axes, ("x",), [[1, 0]] if N == 4 else
                                [[1, 0], [3, 2]]) == (
      [[2, 0], [3, 1]] if N == 4 else [[2, 0], [6, 4], [3, 1], [7, 5]])
