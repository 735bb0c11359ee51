"""Record JAX 0.10.2's jnp.linspace and jnp.pad(mode='linear_ramp') for
tests/test_linear_ramp.py (run with the reference interpreter):

  /work/jaxref/bin/python tests/data/make_linear_ramp_reference.py

Writes linear_ramp_reference.json next to this script: each case of linear_ramp_cases.py
with its dtype and values.
"""
import json
import os
import sys

import numpy as np

import jax.numpy as jnp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import linear_ramp_cases  # noqa: E402


def main():
  out = {}
  for key, src in linear_ramp_cases.cases().items():
    value = np.asarray(eval(src, {"jnp": jnp, "np": np}))
    out[key] = {"dtype": value.dtype.name, "shape": list(value.shape),
                "values": value.astype(np.float64).ravel().tolist()}
  path = os.path.join(HERE, "linear_ramp_reference.json")
  with open(path, "w") as fh:
    json.dump(out, fh, indent=0, sort_keys=True)
  print(f"wrote {len(out)} cases to {path}")


if __name__ == "__main__":
  main()
