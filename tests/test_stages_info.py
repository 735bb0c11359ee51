"""What ``jax.jit(f).trace/lower/compile`` objects report of their signature (args_info,
in_tree, in_avals, donate_argnums, out_avals, the shardings' types, the public attribute
names) against JAX 0.10.2's, recorded in tests/data/stages_reference.json by
make_stages_reference.py from the cases in stages_cases.py."""
import ast
import json
import os
import sys

import pytest

import jaxlite

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "data"))
from stages_cases import report  # noqa: E402

with open(os.path.join(os.path.dirname(__file__), "data", "stages_reference.json")) as _f:
  JAX = json.load(_f)["report"]

# JAX's Traced has ``lojax``, the low-level jaxpr of its hijax types; jaxlite's jaxpr is
# already the low-level one, and it has no such attribute.
NOT_IN_JAXLITE = {"dir.traced": {"lojax"}}


@pytest.fixture(scope="module")
def ours():
  return report(jaxlite)


@pytest.mark.parametrize("key", sorted(JAX))
def test_stage_reports_as_jax(ours, key):
  want = JAX[key]
  if key in NOT_IN_JAXLITE:
    want = repr(sorted(set(ast.literal_eval(want)) - NOT_IN_JAXLITE[key]))
  assert ours[key] == want
