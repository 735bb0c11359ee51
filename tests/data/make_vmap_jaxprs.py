"""Record JAX's jaxprs of the vmap cases as tests/data/vmap_jaxprs.json.

Run once with a Python that has real JAX installed (the reference), e.g.

  /work/jaxref/bin/python tests/data/make_vmap_jaxprs.py

The cases are defined in vmap_cases.py, shared with tests/test_vmap.py.
"""
import json
import os
import sys

import jax
import jax.numpy as jnp
from jax import lax

sys.path.insert(0, os.path.dirname(__file__))
from vmap_cases import cases  # noqa: E402

out = {name: str(jax.make_jaxpr(f)(*args)) for name, (f, args) in cases(jax, jnp, lax).items()}
path = os.path.join(os.path.dirname(__file__), "vmap_jaxprs.json")
with open(path, "w") as f:
  json.dump({"jax_version": jax.__version__, "jaxprs": out}, f, indent=1, sort_keys=True)
  f.write("\n")
