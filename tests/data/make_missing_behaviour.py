"""Record JAX's results for the cases in missing_cases.py as missing_behaviour.json.

Run with a Python that has real JAX installed (the reference):

  /work/jaxref/bin/python tests/data/make_missing_behaviour.py

For every case and mode it stores the output leaves (shape, dtype, weak type, values)
and tree structure, the printed jaxpr (mode ``jaxpr``), or the class of the exception.
"""
import json
import os
import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax, ops

sys.path.insert(0, os.path.dirname(__file__))
from missing_cases import J, P, as_arrays, cases, transformed, unpack  # noqa: E402


def encode_leaf(x):
  value = np.asarray(x)
  record = {"shape": list(value.shape), "dtype": value.dtype.name,
            "weak_type": bool(getattr(x, "weak_type", False))}
  if value.dtype.kind == "c":
    record["value"] = [value.real.tolist(), value.imag.tolist()]
  else:
    record["value"] = value.tolist()
  return record


def record(case, mode):
  fn, args, _, _ = unpack(case)
  args = as_arrays(jnp, args)
  try:
    if mode == P:
      return {"jaxpr": str(jax.make_jaxpr(fn)(*args))}
    f = transformed(jax, jnp, case, mode)
    out = jax.jit(f)(*args) if mode == J else f(*args)
    leaves, tree = jax.tree_util.tree_flatten(out)
    return {"tree": str(tree), "leaves": [encode_leaf(x) for x in leaves]}
  except Exception as e:  # noqa: BLE001  (the class is the record)
    return {"error": type(e).__name__, "message": str(e).split("\n")[0]}


def main():
  warnings.simplefilter("ignore")
  out = {name: {mode: record(case, mode) for mode in unpack(case)[2]}
         for name, case in cases(jax, jnp, lax, ops).items()}
  path = os.path.join(os.path.dirname(__file__), "missing_behaviour.json")
  lines = [f"{json.dumps(name)}: {json.dumps(out[name], sort_keys=True)}"
           for name in sorted(out)]   # one line per case
  with open(path, "w") as f:
    f.write(f'{{"jax_version": {json.dumps(jax.__version__)}, "results": {{\n')
    f.write(",\n".join(lines))
    f.write("\n}}\n")


if __name__ == "__main__":
  main()
