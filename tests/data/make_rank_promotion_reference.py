"""Record JAX 0.10.2's values of rank_promotion_cases.py under
``jax_numpy_rank_promotion='raise'`` for tests/test_rank_promotion_raise.py (run with the
reference interpreter):

  /work/jaxref/bin/python tests/data/make_rank_promotion_reference.py

Writes rank_promotion_reference.json next to this script: for each case, its leaves'
dtypes, shapes and values.
"""
import json
import os
import sys

import numpy as np

import jax
import jax.numpy as jnp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import rank_promotion_cases  # noqa: E402


def main():
  env = {"jax": jax, "jnp": jnp}
  exec(rank_promotion_cases.ARRAYS, env)
  out = {}
  with jax.numpy_rank_promotion("raise"):
    for name, src in rank_promotion_cases.CASES.items():
      leaves = [np.asarray(v) for v in jax.tree.leaves(eval(src, env))]
      out[name] = [{"dtype": v.dtype.name, "shape": list(v.shape),
                    "real": v.real.astype(np.float64).ravel().tolist(),
                    "imag": v.imag.astype(np.float64).ravel().tolist()} for v in leaves]
  path = os.path.join(HERE, "rank_promotion_reference.json")
  with open(path, "w") as fh:
    json.dump(out, fh, indent=0, sort_keys=True)
  print(f"wrote {len(out)} cases to {path}")


if __name__ == "__main__":
  main()
