"""Record what JAX's checkify does as tests/data/checkify.json.

Run once with a Python that has real JAX installed (the reference):

  /work/jaxref/bin/python tests/data/make_checkify.py

The cases are defined in checkify_cases.py, shared with tests/test_checkify.py. For each
it records ``err.get()`` and the output leaves, or the class and first line of the error;
and the printed jaxprs of ``jaxpr_cases``.
"""
import json
import os
import sys

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import checkify

sys.path.insert(0, os.path.dirname(__file__))
from checkify_cases import cases, jaxpr_cases, masked_jaxpr, run  # noqa: E402


def main():
  recorded = {name: run(jax, case)
              for name, case in cases(jax, jnp, lax, checkify, jax.jit).items()}
  jaxprs = {name: masked_jaxpr(make())
            for name, make in jaxpr_cases(jax, jnp, checkify).items()}
  path = os.path.join(os.path.dirname(__file__), "checkify.json")
  with open(path, "w") as f:
    json.dump({"jax_version": jax.__version__, "cases": recorded, "jaxprs": jaxprs}, f, indent=1,
              sort_keys=True)
    f.write("\n")
  print(f"wrote {len(recorded)} cases to {path}")


if __name__ == "__main__":
  main()
