"""Record JAX's answers for the ``jax.ds`` indexing cases as tests/data/ds_reference.json.

Run with the reference venv: /work/jaxref/bin/python tests/data/make_ds_reference.py
The cases are defined in ds_cases.py, shared with tests/test_ds_indexing.py.
"""
import json
import os
import sys

import jax
import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from ds_cases import error_cases, jaxpr_cases, value_cases  # noqa: E402


def error_class(f, args):
  try:
    f(*args)
  except Exception as e:  # noqa: BLE001 - the class is what is recorded
    return type(e).__name__
  return None


out = {
    "jax_version": jax.__version__,
    "values": {k: np.asarray(f(*a)).tolist() for k, (f, a) in value_cases(jax).items()},
    "jaxprs": {k: str(jax.make_jaxpr(f)(*a)) for k, (f, a) in jaxpr_cases(jax).items()},
    "errors": {k: error_class(f, a) for k, (f, a) in error_cases(jax).items()},
}
with open(os.path.join(os.path.dirname(__file__), "ds_reference.json"), "w") as f:
  json.dump(out, f, indent=1, sort_keys=True)
  f.write("\n")
