"""The signatures of the public functions of jaxlite (the modules listed in
tests/data/make_signatures_reference.py: ``jax``, ``jax.numpy``, ``jax.lax``,
``jax.random``, ``jax.nn``, ``jax.scipy.*``, ``jax.tree_util``, ..., an array's methods and
those of ``x.at[i]``) against JAX 0.10.2's: parameter names, kinds and defaults, which
libraries depend on when they call by keyword. JAX's are recorded in
tests/data/signatures.json by make_signatures_reference.py. (``jax.ad_checkpoint`` is left
out: jaxlite has no such module, nor ``checkpoint_name``.)
"""
import json
import os
import sys

import pytest

import jaxlite

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "data"))
from make_signatures_reference import record  # noqa: E402

with open(os.path.join(os.path.dirname(__file__), "data", "signatures.json")) as _f:
  JAX = json.load(_f)["signatures"]

# Functions whose signatures may differ from JAX's, and why.
EXCEPTIONS = {
    "jax.lax.random_gamma_grad": "JAX's is wrapped by a decorator taking (*args); the "
                                 "parameters it forwards to are (a, x), as jaxlite's",
    "jax.numpy.set_printoptions": "NumPy's own function, whose signature depends on the "
                                  "NumPy version installed",
}
# Public functions of JAX that jaxlite does not have (or has as something else), and why.
ABSENT = {
    "jax.lax.ConvGeneralDilatedDimensionNumbers": "a NamedTuple class in jaxlite (a "
                                                  "typing alias in JAX)",
    "jax.lax.PrecisionLike": "a typing alias; jaxlite exports none",
    "jax.lax.after_all": "tokens are not implemented",
    "jax.lax.create_token": "tokens are not implemented",
    "jax.lax.dce_sink": "not implemented",
    "jax.lax.psend": "point-to-point collectives are not implemented",
    "jax.lax.precv": "point-to-point collectives are not implemented",
    "jax.lax.ragged_all_to_all": "not implemented",
    "jax.lax.rng_uniform": "not implemented (XLA's stateful RngUniform)",
    "jax.experimental.primal_tangent_dtype": "not implemented",
    "jax.example_libraries.optimizers.unzip2": "a helper JAX's module imports from "
                                               "jax._src.util, not part of the optimizers",
}


@pytest.fixture(scope="module")
def ours():
  return record(jaxlite)


def _cases():
  return [(module, name) for module, functions in sorted(JAX.items())
          for name in sorted(functions)]


@pytest.mark.parametrize("module,name", _cases())
def test_signature_matches_jax(ours, module, name):
  full = f"{module}.{name}"
  if full in ABSENT:
    pytest.skip(ABSENT[full])
  assert name in ours[module], f"{full} is missing from jaxlite"
  if full in EXCEPTIONS:
    pytest.skip(EXCEPTIONS[full])
  assert ours[module][name] == JAX[module][name]


def test_exceptions_are_still_needed(ours):
  """An exception that no longer differs from JAX is dropped from the lists above."""
  for full in EXCEPTIONS:
    module, name = full.rsplit(".", 1)
    assert ours[module].get(name) != JAX[module][name], f"{full} matches JAX now"
  for full in ABSENT:
    module, name = full.rsplit(".", 1)
    assert name not in ours[module], f"{full} is in jaxlite now"
