"""Record what JAX's host callbacks do under vmap as tests/data/callbacks_vmap.json.

Run once with a Python that has real JAX installed (the reference), e.g.

  /work/jaxref/bin/python tests/data/make_callbacks_vmap.py

The cases are defined in callback_cases.py, shared with tests/test_callbacks_vmap.py.
For each case and mode (eager; jit) it records the calls the callbacks saw (in order),
the printed text, the outputs, or the error, plus the jaxpr of the function.
"""
import contextlib
import io
import json
import os
import re
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

sys.path.insert(0, os.path.dirname(__file__))
from callback_cases import cases  # noqa: E402

def _error(e):
  """[class, message, inner]: ``inner`` is [class, message] of the exception the host
  callback raised, which JAX reports wrapped in a JaxRuntimeError."""
  message = str(e)
  inner = re.findall(r"^(\w+): (.*)$", message.split("\n-----")[0], re.M)
  first = message.split("\n")[0]
  return [type(e).__name__, first, list(inner[-1]) if inner and first != message else None]


def _leaves(out):
  return [[list(np.shape(x)), np.asarray(x).dtype.name, np.asarray(x).tolist()]
          for x in jax.tree_util.tree_leaves(out)]


def run(make, args, wrap):
  calls, text = [], io.StringIO()
  result = {}
  with contextlib.redirect_stdout(text):
    try:
      result["out"] = _leaves(wrap(make(calls.append))(*args))
    except Exception as e:  # noqa: BLE001  (recorded)
      result["error"] = _error(e)
    jax.effects_barrier()
  result["calls"], result["stdout"] = calls, text.getvalue()
  return result


def jaxpr(make, args):
  try:
    return str(jax.make_jaxpr(make(lambda *_: None))(*args))
  except Exception:  # noqa: BLE001  (a case that fails to trace has no jaxpr)
    return None


def main():
  recorded = {}
  for name, (make, args) in cases(jax, jnp, io_callback, jax.jit).items():
    recorded[name] = {"eager": run(make, args, lambda f: f),
                      "jit": run(make, args, jax.jit),
                      "jaxpr": jaxpr(make, args)}
  path = os.path.join(os.path.dirname(__file__), "callbacks_vmap.json")
  with open(path, "w") as f:
    json.dump({"jax_version": jax.__version__, "cases": recorded}, f, indent=1,
              sort_keys=True)
    f.write("\n")


if __name__ == "__main__":
  main()
