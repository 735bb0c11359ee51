"""Record the public names of JAX 0.10's modules (run with real JAX installed).

  /path/to/jax-venv/bin/python docs/tools/record_jax_names.py > docs/tools/jax_names.json
"""
import importlib
import json

import jax

MODULES = ["jax", "jax.numpy", "jax.numpy.linalg", "jax.numpy.fft", "jax.lax", "jax.lax.linalg",
           "jax.nn", "jax.nn.initializers", "jax.random", "jax.scipy.special",
           "jax.scipy.linalg", "jax.scipy.stats.norm", "jax.tree_util", "jax.tree"]

names = {}
for name in MODULES:
  module = importlib.import_module(name)
  public = sorted(n for n in dir(module) if not n.startswith("_"))
  names[name] = [n for n in public
                 if not type(getattr(module, n, None)).__name__ == "module"]
print(json.dumps({"jax_version": jax.__version__, "modules": names}, indent=1))
