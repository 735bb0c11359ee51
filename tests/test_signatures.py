"""The signatures of the public functions of jaxlite (the modules listed in
tests/data/make_signatures_reference.py: ``jax``, ``jax.numpy``, ``jax.lax``,
``jax.random``, ``jax.nn``, ``jax.scipy.*``, ``jax.tree_util``, ..., an array's methods and
those of ``x.at[i]``) against JAX 0.10.2's: parameter names, kinds and defaults, which
libraries depend on when they call by keyword. JAX's are recorded in
tests/data/signatures.json by make_signatures_reference.py. (``jax.ad_checkpoint``'s are
compared in tests/test_ad_checkpoint.py.)
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
    **{f"jax.numpy.{t}": "ml_dtypes' own scalar type: jaxlite's dtype table admits no "
                         "arrays of it, so it is exported as it is, not as a jnp type"
       for t in ("float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4",
                 "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz",
                 "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "int1", "int2", "int4",
                 "uint1", "uint2", "uint4")},
    "jax.Ref": "constructed by jax.new_ref, not by users; its arguments are internal",
    "jax.experimental.checkify.Error": "JAX's dataclass fields are private (_pred, _code, "
                                       "...); users get Errors from checkify, not build them",
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
    "jax.experimental.EArray": "hijax's extended arrays are not implemented",
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
  if full in ABSENT or full in EXCEPTIONS:
    pytest.skip(ABSENT.get(full) or EXCEPTIONS[full])
  assert name in ours[module], f"{full} is missing from jaxlite"
  assert ours[module][name] == JAX[module][name]


def test_exceptions_are_still_needed(ours):
  """An exception that no longer differs from JAX is dropped from the lists above."""
  for full in EXCEPTIONS:
    module, name = full.rsplit(".", 1)
    assert ours[module].get(name) != JAX[module][name], f"{full} matches JAX now"
  for full in ABSENT:
    module, name = full.rsplit(".", 1)
    assert name not in ours[module], f"{full} is in jaxlite now"
