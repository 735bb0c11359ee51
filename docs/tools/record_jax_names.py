"""Record the public names of JAX 0.10's modules (run with real JAX installed).

  /path/to/jax-venv/bin/python docs/tools/record_jax_names.py > docs/tools/jax_names.json
"""
import importlib
import json
import warnings

import jax

MODULES = [
    "jax", "jax.numpy", "jax.numpy.linalg", "jax.numpy.fft", "jax.lax", "jax.lax.linalg",
    "jax.nn", "jax.nn.initializers", "jax.random", "jax.tree_util", "jax.tree", "jax.dtypes",
    "jax.typing", "jax.errors", "jax.debug", "jax.stages", "jax.sharding", "jax.monitoring",
    "jax.flatten_util", "jax.test_util", "jax.image", "jax.ops", "jax.profiler",
    "jax.distributed", "jax.core", "jax.custom_derivatives", "jax.ad_checkpoint", "jax.api_util",
    "jax.scipy.special", "jax.scipy.linalg", "jax.scipy.fft", "jax.scipy.signal",
    "jax.scipy.ndimage", "jax.scipy.integrate", "jax.scipy.optimize", "jax.scipy.sparse.linalg",
    "jax.scipy.stats", "jax.scipy.stats.norm", "jax.scipy.stats.multivariate_normal",
    "jax.scipy.cluster.vq", "jax.scipy.interpolate", "jax.scipy.spatial.transform",
    "jax.extend", "jax.extend.core", "jax.extend.linear_util", "jax.interpreters.ad",
    "jax.interpreters.batching", "jax.interpreters.mlir", "jax.interpreters.partial_eval",
    "jax.interpreters.xla", "jax.experimental", "jax.experimental.checkify",
    "jax.experimental.multihost_utils", "jax.experimental.sparse", "jax.experimental.pjit",
    "jax.experimental.shard_map", "jax.experimental.mesh_utils", "jax.experimental.ode",
    "jax.experimental.jet", "jax.example_libraries.optimizers", "jax.example_libraries.stax"]

names = {}
with warnings.catch_warnings():
  warnings.simplefilter("ignore")   # reading a deprecated name warns; it still counts
  for name in MODULES:
    module = importlib.import_module(name)
    # dir() also lists names JAX removed (reading them raises AttributeError): left out.
    # A module's __all__, where it has one, leaves out what it merely imports.
    listed = getattr(module, "__all__", None) or dir(module)
    public = sorted(n for n in listed if not n.startswith("_") and hasattr(module, n))
    names[name] = [n for n in public
                   if not type(getattr(module, n)).__name__ == "module"]
print(json.dumps({"jax_version": jax.__version__, "modules": names}, indent=1))
