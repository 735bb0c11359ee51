"""Record what JAX 0.10.2's stages report (stages_cases.py) as
tests/data/stages_reference.json. Run with the reference venv:

    /work/jaxref/bin/python tests/data/make_stages_reference.py
"""
import json
import os
import sys

import jax

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from stages_cases import report  # noqa: E402

with open(os.path.join(HERE, "stages_reference.json"), "w") as f:
  json.dump({"jax_version": jax.__version__, "report": report(jax)}, f, indent=1,
            sort_keys=True)
  f.write("\n")
