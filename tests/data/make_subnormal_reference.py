"""Record JAX 0.10.2's answers on subnormal operands for tests/test_subnormals.py (run with
the reference interpreter, on the CPU, with 64-bit types on):

  JAX_PLATFORMS=cpu /work/jaxref/bin/python tests/data/make_subnormal_reference.py

Writes subnormal_reference.json next to this script: for each case of subnormal_cases.py,
its output's dtype, shape and values eagerly and under ``jax.jit`` (``"=eager"`` where
they agree bit for bit).
"""
import json
import os
import sys

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import subnormal_cases  # noqa: E402


def leaf(value):
  value = np.asarray(value)
  return {"dtype": value.dtype.name, "shape": list(value.shape),
          "values": value.astype(np.float64).ravel().tolist()}


def main():
  jax.config.update("jax_enable_x64", True)
  out = {}
  for key, (source, kind) in subnormal_cases.cases().items():
    fn = eval(source, {"jnp": jnp, "lax": lax, "np": np})
    args = [jnp.asarray(a) for a in subnormal_cases.operands(kind, key.split("|")[1])]
    eager, jitted = leaf(fn(*args)), leaf(jax.jit(fn)(*args))
    same = json.dumps(eager) == json.dumps(jitted)
    out[key] = {"eager": eager, "jit": "=eager" if same else jitted}
  path = os.path.join(HERE, "subnormal_reference.json")
  with open(path, "w") as fh:   # one case a line
    fh.write("{\n" + ",\n".join(f"{json.dumps(k)}: {json.dumps(out[k])}" for k in sorted(out))
             + "\n}\n")
  print(f"wrote {len(out)} cases to {path}")


if __name__ == "__main__":
  main()
