"""lax collectives with axis_index_groups: pmap and shard_map on 4 and 8 CPU devices on
both tiers (tests/axis_index_groups_spmd.py, in a subprocess), and vmap, which rejects
groups as JAX does; all against values and errors recorded from JAX 0.10.2."""
import json
import pathlib
import sys

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax

from spmd_subprocess import run_cases

DATA = pathlib.Path(__file__).parent / "data"
sys.path.insert(0, str(DATA))
import axis_index_groups_cases as C  # noqa: E402

VMAP = C.vmap_cases(jax, jnp, lax)
REF = json.loads((DATA / "axis_index_groups_reference.json").read_text())["vmap"]


@pytest.mark.parametrize("n", [4, 8])
def test_groups_on_n_devices(n):
  run_cases(n, "groups", cases="axis_index_groups_spmd.py")


@pytest.mark.parametrize("name", sorted(VMAP))
def test_groups_under_vmap(name):
  want = REF[name]
  if "error" in want:
    with pytest.raises(Exception) as info:
      VMAP[name]()
    assert type(info.value).__name__ == want["error"]
    assert str(info.value) == want["message"]
    return
  got = VMAP[name]()
  if isinstance(got, str):
    assert got == want["ok"]
    return
  assert str(np.asarray(got).dtype) == want["ok"]["dtype"]
  np.testing.assert_array_equal(np.asarray(got), want["ok"]["value"])
