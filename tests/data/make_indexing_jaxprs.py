"""Record JAX's jaxprs of the indexing cases as tests/data/indexing_jaxprs.json.

Run once with a Python that has real JAX installed (the reference), e.g.

  /work/jaxref/bin/python tests/data/make_indexing_jaxprs.py

The cases are defined in indexing_cases.py, shared with tests/test_indexing.py.
"""
import json
import os
import sys
import warnings

import jax
import jax.numpy as jnp
from jax import lax

sys.path.insert(0, os.path.dirname(__file__))
from indexing_cases import cases  # noqa: E402

warnings.simplefilter("ignore")  # set_float_into_int warns, as it should
out = {name: str(jax.make_jaxpr(f)(*args)) for name, (f, args) in cases(jnp, lax).items()}
path = os.path.join(os.path.dirname(__file__), "indexing_jaxprs.json")
with open(path, "w") as f:
  json.dump({"jax_version": jax.__version__, "jaxprs": out}, f, indent=1, sort_keys=True)
  f.write("\n")
