"""``jax.debug.inspect_array_sharding`` eagerly and under jit/vmap/grad against JAX 0.10.2's
callbacks and jaxpr, recorded in tests/data/inspect_sharding_reference.json by
make_inspect_sharding_reference.py from the cases in inspect_sharding_cases.py.

The cases marked below differ from JAX (strict xfails, so a fix shows up): under jit, JAX
stages an ``inspect_sharding`` equation and calls back when XLA compiles, with the
sharding XLA's partitioner chose; jaxlite calls back while tracing with the sharding the
value's type gives. That lives in jaxlite/_src/sharding.py (inspect_array_sharding)."""
import json
import os
import sys

import pytest

import jaxlite

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "data"))
from inspect_sharding_cases import report  # noqa: E402

with open(os.path.join(os.path.dirname(__file__), "data",
                       "inspect_sharding_reference.json")) as _f:
  JAX = json.load(_f)["report"]

_STAGED = "JAX stages inspect_sharding and calls back at XLA compile time with XLA's choice"
DIFFERS = {
    "jaxpr": _STAGED,
    "jit": _STAGED + " (GSPMDSharding({replicated}) for an unsharded program)",
    "jit_named": _STAGED + " (the mesh's axes Auto inside jit, the spec P())",
    "jit_in_shardings": _STAGED,
}


@pytest.fixture(scope="module")
def ours():
  return report(jaxlite)


@pytest.mark.parametrize("key", [
    pytest.param(k, marks=pytest.mark.xfail(reason=DIFFERS[k], strict=True))
    if k in DIFFERS else k for k in sorted(JAX)])
def test_inspect_array_sharding_reports_as_jax(ours, key):
  assert ours[key] == JAX[key]
