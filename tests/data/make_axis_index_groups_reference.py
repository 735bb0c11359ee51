"""Record JAX 0.10.2's collectives with axis_index_groups (axis_index_groups_cases.py).

Run with the reference venv: /work/jaxref/bin/python tests/data/make_axis_index_groups_reference.py
(it starts one process per device count, 4 and 8). Never imported by the tests.
"""
import json
import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).parent
OUT = HERE / "axis_index_groups_reference.json"

CHILD = r'''
import json, sys
import numpy as np, jax, jax.numpy as jnp
from jax import lax
sys.path.insert(0, sys.argv[1])
import axis_index_groups_cases as C

def encode(value):
  if isinstance(value, str):
    return value
  return jax.tree.map(lambda a: {"dtype": str(np.asarray(a).dtype),
                                 "value": np.asarray(a).tolist()}, value)

def record(thunks):
  out = {}
  for name, thunk in thunks.items():
    try:
      out[name] = {"ok": encode(thunk())}
    except Exception as e:   # recorded: the tests expect the same failure
      out[name] = {"error": type(e).__name__, "message": str(e).splitlines()[0]}
  return out

n = jax.device_count()
res = {"cases": record(C.cases(jax, jnp, lax, n)),
       "errors": record(C.error_cases(jax, jnp, lax, n))}
if n == 4:
  res["vmap"] = record(C.vmap_cases(jax, jnp, lax))
print(json.dumps(res))
'''


def main():
  ref = {}
  for n in (4, 8):
    env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={n}",
               TF_CPP_MIN_LOG_LEVEL="3")
    proc = subprocess.run([sys.executable, "-c", CHILD, str(HERE)], env=env,
                          capture_output=True, text=True, check=True)
    ref[str(n)] = json.loads(proc.stdout.strip().splitlines()[-1])
  vmap = ref["4"].pop("vmap")
  OUT.write_text(json.dumps({"vmap": vmap, **ref}, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
  main()
