"""``import jax`` served by jaxlite: a meta-path finder that aliases ``jax.*`` to ``jaxlite.*``.

``install_as_jax()`` puts the finder first on ``sys.meta_path``. From then on ``import jax``
returns the ``jaxlite`` module itself, ``jax.numpy`` is ``jaxlite.numpy`` (the same object,
so ``isinstance`` checks and registries are shared), and so on for every public
submodule. A public submodule jaxlite lacks raises ImportError naming it. JAX's private
modules (``jax._src.*``) are not jaxlite's private modules: only the few that JAX libraries
import at module level are served, from ``_PRIVATE``; any other raises ImportError too.
"""
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys

# JAX's private modules that libraries use (chex's restrict_backends imports
# jax._src.compiler; its set_n_cpu_devices reads jax._src.xla_bridge._backends without
# importing it, since `import jax` loads it), mapped to the jaxlite modules that play
# their part.
_PRIVATE = {
    "jax._src": "jaxlite._src",
    "jax._src.compiler": "jaxlite._src.compiler",
    "jax._src.xla_bridge": "jaxlite._src.xla_bridge",
    "jax._src.ad_util": "jaxlite._src.ad_util",   # lineax gives stop_gradient_p a rule
}


def target_name(fullname):
  """The jaxlite module that serves ``fullname``, "" for a ``jaxlib`` module (jaxlite has
  no separate compiled half; optax and chex never import it), or None when the name is
  not a ``jax`` or ``jaxlib`` module."""
  if fullname in _PRIVATE:
    return _PRIVATE[fullname]
  if fullname == "jax" or fullname.startswith("jax."):
    return "jaxlite" + fullname[len("jax"):]
  if fullname == "jaxlib" or fullname.startswith("jaxlib."):
    return ""
  return None


def _not_provided(fullname, private):
  what = "JAX's private module" if private else "the JAX module"
  return ModuleNotFoundError(
      f"jaxlite does not provide {what} {fullname!r}. jaxlite stands in for jax in this "
      "program and implements jax's public API, not this module: run the program with the "
      "real jax to use it.", name=fullname)


class _AliasLoader(importlib.abc.Loader):
  """Hands out the already-imported jaxlite module; executes nothing."""

  def __init__(self, target):
    self.target = target

  def create_module(self, spec):
    module = importlib.import_module(self.target)
    # The import system overwrites __spec__ of the module it creates; keep jaxlite's
    # own spec so the module still knows its real name (exec_module restores it).
    self.saved_spec = module.__spec__
    return module

  def exec_module(self, module):
    module.__spec__ = self.saved_spec


class JaxAliasFinder(importlib.abc.MetaPathFinder):
  """Resolves ``jax`` and ``jax.*`` to the jaxlite modules; ``jaxlib`` raises ImportError."""

  def find_spec(self, fullname, path=None, target=None):
    if fullname.startswith("jaxlite."):
      return self._missing_jaxlite_submodule(fullname, path)
    name = target_name(fullname)
    if name is None:
      return None
    private = fullname.startswith("jax._src.")
    if not name or (private and fullname not in _PRIVATE) or importlib.util.find_spec(name) is None:
      raise _not_provided(fullname, private)
    spec = importlib.machinery.ModuleSpec(fullname, _AliasLoader(name))
    return spec


  @staticmethod
  def _missing_jaxlite_submodule(fullname, path):
    """``from jax.experimental import X`` imports ``jaxlite.experimental.X`` by its real
    name (the package is jaxlite's), bypassing the alias; when no such module exists,
    say that jaxlite does not provide ``jax.experimental.X`` rather than Python's bare
    "cannot import name". Existing modules are left to the usual finders."""
    if path is None or importlib.machinery.PathFinder.find_spec(fullname, path) is not None:
      return None
    jax_name = "jax" + fullname[len("jaxlite"):]
    raise _not_provided(jax_name, jax_name.startswith("jax._src."))


_finder = JaxAliasFinder()


def _real_jax_modules():
  return sorted(name for name, module in sys.modules.items()
                if (name in ("jax", "jaxlib") or name.startswith(("jax.", "jaxlib.")))
                and not getattr(module, "__name__", "").startswith("jaxlite"))


def install_as_jax():
  """Make ``import jax`` (and every ``jax.*`` submodule) resolve to jaxlite in this process.

  Call it before anything imports jax. Afterwards ``import jax`` returns the ``jaxlite``
  module itself and ``jax.numpy is jaxlite.numpy``; a JAX submodule that jaxlite does not
  implement raises ImportError naming it. Calling it again does nothing.

  Raises
  ------
  ImportError
    If the real ``jax`` (or ``jaxlib``) is already imported: two different ``jax``
    implementations in one process would mix arrays and registries.
  """
  real = _real_jax_modules()
  if real:
    raise ImportError(
        f"The real jax is already imported ({', '.join(real[:3])}"
        f"{', ...' if len(real) > 3 else ''}); jaxlite cannot stand in for it now. Call "
        "jaxlite.install_as_jax() before anything imports jax, or run the program with "
        "'python -m jaxlite script.py'.")
  if _finder not in sys.meta_path:
    sys.meta_path.insert(0, _finder)
  importlib.import_module("jax")
  for private in _PRIVATE.values():   # attributes of jax._src, as after JAX's `import jax`
    importlib.import_module(private)
