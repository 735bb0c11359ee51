"""Record JAX 0.10.2's outcomes of the cases in surface_params_cases.py as
tests/data/surface_params_reference.json. Run with the reference venv:

    /work/jaxref/bin/python tests/data/make_surface_params_reference.py
"""
import json
import os
import sys

import jax

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from surface_params_cases import cases, outcome  # noqa: E402

out = {"jax_version": jax.__version__,
       "cases": {name: outcome(thunk) for name, thunk in cases(jax).items()}}
with open(os.path.join(HERE, "surface_params_reference.json"), "w") as f:
  json.dump(out, f, indent=1, sort_keys=True)
  f.write("\n")
