"""Record how JAX 0.10.2 lays out the results of operations on arrays split over a mesh,
Auto and Explicit axes, eagerly and under jit: for tests/spmd_cases.py
(``test_results_are_laid_out_as_jax``).

Run with the reference venv: /work/jaxref/bin/python tests/data/make_partitioning_reference.py
Each case is an expression over the arrays below; the test evaluates the same text with
jaxlite. Never imported by the tests.
"""
import json
import os
import pathlib
import subprocess
import sys

OUT = pathlib.Path(__file__).parent / "partitioning_reference.json"

OPERANDS = {"y": [[8, 4], ["x", None]], "z": [[8, 4], [None, "y"]], "w": [[8, 4], ["x", "y"]],
            "v": [[8], ["y"]], "b": [[2, 8, 4], ["x", None, None]], "c": [[2, 4, 6], [None, None, None]],
            "r": [[4, 6], [None, "y"]], "s": [[8, 4], [["x", "y"], None]]}
EXPRESSIONS = [
    "y.sum(1)", "y.sum(0)", "y[None]", "y.reshape(32)", "y.reshape(2, 4, 4)", "z.reshape(32)",
    "s.reshape(2, 4, 4)", "s.reshape(4, 2, 4)", "w.reshape(2, 4, 2, 2)", "y + 1", "y + z",
    "z + y", "y.T", "w.T", "y @ y.T", "y.T @ y", "z @ z.T", "w @ w.T", "y @ r", "w @ r",
    "z @ r", "y + v[:, None]", "jnp.concatenate([y, y])", "jnp.concatenate([y, z], 1)",
    "jnp.sort(y, axis=0)", "jnp.sort(y, axis=1)", "jnp.cumsum(y, 1)", "jnp.broadcast_to(v, (3, 8))",
    "y.astype(jnp.int32)", "jnp.where(y > 0, y, z)", "y.max()", "jnp.dot(v, v)",
    "jnp.outer(v, v)", "jnp.sin(y) * 2", "(y * 2)[:, :2]", "b @ c", "jnp.exp(w).mean(0)",
    "jnp.linalg.norm(y)", "jnp.zeros_like(y)", "jnp.transpose(b, (1, 0, 2))",
    "lax.fori_loop(0, 3, lambda i, a: a * 2, y)", "lax.scan(lambda a, t: (a + t, t * 2), y[0], y)[1]",
    "lax.scan(lambda a, t: (a + t, t * 2), y, b)[0]", "lax.cond(True, lambda a: a.T, lambda a: a.T * 2, y)",
]

CHILD = r'''
import json, sys, jax, jax.numpy as jnp
from jax import lax
from jax.sharding import NamedSharding, PartitionSpec as P, AxisType
operands, expressions = json.loads(sys.argv[1]), json.loads(sys.argv[2])
out = {}
for kind in ("Auto", "Explicit"):
  m = jax.make_mesh((2, 2), ("x", "y"), axis_types=(getattr(AxisType, kind),) * 2)
  env = {}
  for name, (shape, spec) in operands.items():
    spec = [tuple(e) if isinstance(e, list) else e for e in spec]
    env[name] = jax.device_put(jnp.ones(shape), NamedSharding(m, P(*spec)))
  names = list(operands)
  for text in expressions:
    f = eval("lambda " + ", ".join(names) + ": " + text, {"jnp": jnp, "lax": lax})
    for how in ("eager", "jit"):
      try:
        r = f(*env.values()) if how == "eager" else jax.jit(f)(*env.values())
        s = r.sharding
        result = [str(jax.typeof(r)), repr(s.spec) if hasattr(s, "spec") else type(s).__name__]
      except Exception as e:
        result = [type(e).__name__, str(e).splitlines()[0][:80]]
      out[f"{kind}|{how}|{text}"] = result
print(json.dumps(out))
'''

if __name__ == "__main__":
  env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4",
             JAX_PLATFORMS="cpu")
  proc = subprocess.run([sys.executable, "-c", CHILD, json.dumps(OPERANDS),
                         json.dumps(EXPRESSIONS)], env=env, capture_output=True, text=True,
                        check=True)
  cases = json.loads(proc.stdout.strip().splitlines()[-1])
  OUT.write_text(json.dumps({"operands": OPERANDS, "cases": cases}, indent=1) + "\n")
  print("wrote", OUT, len(cases), "cases")
