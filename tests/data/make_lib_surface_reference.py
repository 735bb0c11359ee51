"""Record JAX 0.10.2's results of tests/data/lib_surface_cases.py (run with
/work/jaxref/bin/python):

    /work/jaxref/bin/python tests/data/make_lib_surface_reference.py

Writes tests/data/lib_surface_reference.json, which tests/test_lib_surface.py compares
jaxlite with.
"""
import json
import os
import sys

import jax
import jax.experimental.multihost_utils  # noqa: F401
import jax.scipy.fft  # noqa: F401
import jax.scipy.optimize  # noqa: F401
import jax.scipy.sparse.linalg  # noqa: F401
import jax.scipy.stats  # noqa: F401

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import lib_surface_cases  # noqa: E402

if __name__ == "__main__":
  out = {"jax_version": jax.__version__, "cases": lib_surface_cases.run(jax)}
  with open(os.path.join(HERE, "lib_surface_reference.json"), "w") as f:
    json.dump(out, f, indent=1, sort_keys=True)
    f.write("\n")
