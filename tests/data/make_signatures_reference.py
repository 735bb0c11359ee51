"""Record the signatures of JAX 0.10.2's public functions as tests/data/signatures.json.

For each module in MODULES, and for an array's methods, every public callable but a
submodule (a class by its constructor, when the package defines it) is recorded as a list of ``[name, kind, default]`` parameters,
the default as its ``repr`` (or ``null`` when there is none). tests/test_signatures.py
compares jaxlite's signatures with these. Run with the reference venv:

    /work/jaxref/bin/python tests/data/make_signatures_reference.py
"""
import importlib
import inspect
import json
import os
import re

MODULES = ("jax", "jax.numpy", "jax.lax", "jax.random", "jax.nn", "jax.nn.initializers",
           "jax.scipy.special", "jax.numpy.linalg", "jax.numpy.fft", "jax.scipy.linalg",
           "jax.scipy.signal", "jax.scipy.stats", "jax.scipy.stats.norm",
           "jax.scipy.stats.gamma", "jax.scipy.stats.beta", "jax.scipy.stats.t",
           "jax.scipy.stats.multivariate_normal", "jax.scipy.fft", "jax.scipy.integrate",
           "jax.scipy.ndimage", "jax.scipy.optimize", "jax.scipy.sparse.linalg",
           "jax.scipy.cluster.vq", "jax.tree_util", "jax.tree", "jax.debug", "jax.ops",
           "jax.dtypes", "jax.image", "jax.flatten_util", "jax.custom_derivatives",
           "jax.profiler", "jax.sharding", "jax.experimental", "jax.experimental.checkify",
           "jax.example_libraries.optimizers")


def default(value):
  """A default as recorded: its ``repr``, where a sentinel object (``<... object at 0x..>``)
  is ``<sentinel>``, other addresses are left out (``<function dot_general>``) and a module
  path names the package ``jax``."""
  text = re.sub(r"\bjaxlite\.", "jax.", repr(value))   # (a class's module path)
  if re.fullmatch(r"<[\w.]+ object at 0x[0-9a-f]+>", text):
    return "<sentinel>"
  return re.sub(r" at 0x[0-9a-f]+", "", text)


def parameters(fn):
  """``fn``'s parameters as ``[name, kind, default or None]``, or None where Python cannot
  tell its signature."""
  try:
    sig = inspect.signature(fn)
  except (TypeError, ValueError):
    return None
  return [[p.name, p.kind.name,
           None if p.default is inspect.Parameter.empty else default(p.default)]
          for p in sig.parameters.values()]


def public_functions(namespace, names=None, package=None):
  """The public functions of ``namespace`` (a module or an object, whose methods are then
  recorded bound), by name; submodules are left out, and classes unless ``package`` is
  given: then the classes defined in that package are recorded by their constructor's
  signature (not those a module merely imports, such as ``typing.Any``)."""
  names = names or getattr(namespace, "__all__", None) or dir(namespace)
  out = {}
  for name in sorted(names):
    if name.startswith("_"):
      continue
    try:
      value = getattr(namespace, name)
    except Exception:  # noqa: BLE001 - a property that needs a device or a concrete value
      continue
    if inspect.ismodule(value) or not callable(value):
      continue
    if inspect.isclass(value) and (package is None or not (
        getattr(value, "__module__", "") or "").startswith(package)):
      continue
    params = parameters(value)
    if params is not None:
      out[name] = params
  return out


def record(jax):
  """The signatures of ``jax``'s (JAX's or jaxlite's top-level package's) public functions,
  keyed by JAX's module names; ``jax.Array`` holds an array's methods and ``jax.Array.at``
  those of ``x.at[i]``."""
  def module(name):
    return importlib.import_module(jax.__name__ + name[len("jax"):])
  out = {name: public_functions(module(name), package=jax.__name__) for name in MODULES}
  x = jax.numpy.zeros(3)
  out["jax.Array"] = public_functions(x)
  out["jax.Array.at"] = public_functions(x.at[0])
  return out


if __name__ == "__main__":
  import jax
  out = {"jax_version": jax.__version__, "signatures": record(jax)}
  with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "signatures.json"),
            "w") as f:
    json.dump(out, f, indent=0, sort_keys=True)
    f.write("\n")
