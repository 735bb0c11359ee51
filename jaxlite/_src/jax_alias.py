"""``import jax`` served by jaxlite: a meta-path finder that aliases ``jax.*`` to ``jaxlite.*``.

``install_as_jax()`` puts the finder first on ``sys.meta_path``. From then on
``jax.numpy`` is ``jaxlite.numpy`` (the same object, so ``isinstance`` checks and
registries are shared), and so on for every public submodule. ``jax`` itself is a small
module object of its own (``JaxModule``): every attribute it does not hold is read from
``jaxlite`` at the time of the read, and it holds only what differs between the two names,
the version: ``jax.__version__`` is the JAX API level jaxlite implements
(``jaxlite._src.base.version.jax_api_version``), ``jaxlite.__version__`` stays jaxlite's own.
A public submodule jaxlite lacks raises ImportError naming it. JAX's private modules
(``jax._src.*``) are not jaxlite's private modules: only the few that JAX libraries import
at module level are served, from ``_PRIVATE``; any other raises ImportError too.

Child interpreters: ``install_as_jax()`` sets the environment variable ``JAXLITE_AS_JAX=1``
(unless it is ``0``), which children inherit; the ``jaxlite-as-jax.pth`` file the package
installs runs ``_jaxlite_as_jax.startup()`` in every Python of the environment, which, when
the variable is set, puts a deferred finder first on ``sys.meta_path``: the first
``import jax`` imports jaxlite and calls ``install()`` here.
"""
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import types

from jaxlite._src.base.version import jax_api_version, jax_api_version_info

# The environment variable that carries the alias into child interpreters: "1" (set by
# install_as_jax) turns it on there, "0" keeps it off (and stops install_as_jax setting it).
ENV_VAR = "JAXLITE_AS_JAX"

# JAX's private modules that libraries use (chex's restrict_backends imports
# jax._src.compiler; its set_n_cpu_devices reads jax._src.xla_bridge._backends without
# importing it, since `import jax` loads it; numpyro's MCMC imports
# jax._src.core.trace_state_clean; flax.nnx imports the last four at module level), mapped
# to the jaxlite modules that play their part.
_PRIVATE = {
    "jax._src": "jaxlite._src",   # served as a package of its own (_PrivatePackage)
    "jax._src.compiler": "jaxlite._src.compiler",
    "jax._src.core": "jaxlite._src.private_core",
    "jax._src.xla_bridge": "jaxlite._src.xla_bridge",
    "jax._src.ad_util": "jaxlite._src.ad_util",  # lineax gives stop_gradient_p a rule
    "jax._src.dispatch": "jaxlite._src.dispatch",  # equinox: wait_for_tokens at exit
    "jax._src.dtypes": "jaxlite._src.base.dtypes",  # equinox: TypePromotionError
    "jax._src.traceback_util": "jaxlite._src.base.traceback_util",  # equinox, flax
    "jax._src.checkify": "jaxlite._src.checkify",  # nnx.checkify
    "jax._src.tree_util": "jaxlite._src.base.tree",  # nnx: `type(x) in _registry`
    "jax._src.state": "jaxlite._src.core.state",  # nnx: isinstance(..., AbstractRef)
    "jax._src.state.types": "jaxlite._src.core.state.types",
    "jax._src.distributed": "jaxlite._src.distributed",  # orbax: global_state.client
    "jax._src.earray": "jaxlite._src.core.extended",  # flax's fp8 rules: EArray
    "jax._src.interpreters": "jaxlite._src",   # a package of its own, as jax._src
    "jax._src.interpreters.pxla": "jaxlite._src.pxla",  # flax: global_result_handlers
    "jax._src.interpreters.ad": "jaxlite._src.private_ad",  # diffrax's tests: CustomVJPException
}
# Served when imported, but not loaded by `import jax` (JAX's does not load them either).
_IMPORTED_ON_DEMAND = {"jax._src.checkify"}
# served as packages of their own (_PrivatePackage) that hold only the modules served
_PRIVATE_PACKAGES = {"jax._src", "jax._src.interpreters"}


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


class JaxModule(types.ModuleType):
  """``jax`` under the alias: jaxlite's namespace under JAX's name and version.

  An attribute the module does not hold itself is read from ``jaxlite`` when it is read,
  so ``jax.jit is jaxlite.jit`` and ``jax.numpy is jaxlite.numpy``. It holds its module
  attributes (``__name__ == "jax"``, ``__path__``, ...), the version (``__version__``,
  ``__version_info__``, the ``version`` module), and whatever the program assigns to it:
  an assignment (``jax.jit = wrapper``, ``mock.patch("jax.jit")``) changes what ``jax.jit``
  reads, not jaxlite, as patching ``jax.jit`` leaves JAX's internals alone.
  """

  def __getattr__(self, name):
    return getattr(importlib.import_module("jaxlite"), name)

  def __dir__(self):
    return sorted(set(dir(importlib.import_module("jaxlite"))) | set(self.__dict__))

  def __repr__(self):
    return f"<module 'jax' (jaxlite {self.__jaxlite_version__}, JAX API {self.__version__})>"


class _VersionModule(types.ModuleType):
  """``jax.version`` under the alias."""


class _PrivatePackage(types.ModuleType):
  """``jax._src`` under the alias: a package holding only the private modules served
  (``_PRIVATE``), as attributes once imported. It is not ``jaxlite._src``: importing
  ``jax._src.core`` (served by ``jaxlite._src.private_core``) must not rebind
  ``jaxlite._src.core.core``."""


def _version_module():
  """``jax.version``: JAX's version module, with the API level jaxlite implements."""
  module = _VersionModule("jax.version", "The JAX API level jaxlite implements.")
  module._version = module.__version__ = jax_api_version
  module.__version_info__ = jax_api_version_info
  return module


class _JaxLoader(importlib.abc.Loader):
  """Makes the ``jax`` module (``JaxModule``) and ``jax.version``; imports what JAX's
  ``import jax`` imports that libraries read as attributes (``jax._src.xla_bridge``)."""

  def create_module(self, spec):
    if spec.name == "jax.version":
      return _version_module()
    if spec.name in _PRIVATE_PACKAGES:
      module = _PrivatePackage(spec.name, "JAX's private modules that jaxlite serves.")
      module.__path__ = []
      return module
    jaxlite = importlib.import_module("jaxlite")
    module = JaxModule("jax", jaxlite.__doc__)
    module.__file__ = jaxlite.__file__
    module.__path__ = list(jaxlite.__path__)
    module.__version__ = jax_api_version
    module.__version_info__ = jax_api_version_info
    module.__jaxlite_version__ = jaxlite.__version__
    return module

  def exec_module(self, module):
    if module.__name__ == "jax":
      for private in _PRIVATE.keys() - _IMPORTED_ON_DEMAND:  # attributes of jax._src,
        importlib.import_module(private)                     # as after JAX's import
      module.version = importlib.import_module("jax.version")


class JaxAliasFinder(importlib.abc.MetaPathFinder):
  """Resolves ``jax`` and ``jax.*`` to the jaxlite modules; ``jaxlib`` raises ImportError."""

  def find_spec(self, fullname, path=None, target=None):
    if fullname.startswith("jaxlite."):
      return self._missing_jaxlite_submodule(fullname, path)
    name = target_name(fullname)
    if name is None:
      return None
    private = fullname.startswith("jax._src.")
    if fullname == "jax.version":
      return importlib.machinery.ModuleSpec(fullname, _JaxLoader())
    if fullname in _PRIVATE_PACKAGES:
      return importlib.machinery.ModuleSpec(fullname, _JaxLoader(), is_package=True)
    if not name or (private and fullname not in _PRIVATE) or importlib.util.find_spec(name) is None:
      raise _not_provided(fullname, private)
    if fullname == "jax":
      return importlib.machinery.ModuleSpec(fullname, _JaxLoader(), is_package=True)
    return importlib.machinery.ModuleSpec(fullname, _AliasLoader(name))


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
                and not isinstance(module, (JaxModule, _VersionModule, _PrivatePackage))
                and not getattr(module, "__name__", "").startswith("jaxlite"))


def refuse_if_real_jax_imported():
  """Raises ImportError when the real ``jax`` (or ``jaxlib``) is already imported."""
  real = _real_jax_modules()
  if real:
    raise ImportError(
        f"The real jax is already imported ({', '.join(real[:3])}"
        f"{', ...' if len(real) > 3 else ''}); jaxlite cannot stand in for it now. Call "
        "jaxlite.install_as_jax() before anything imports jax, or run the program with "
        "'python -m jaxlite script.py'.")


def _is_deferred_finder(finder):
  # the startup hook's finder (_jaxlite_as_jax.DeferredAlias), known without importing it
  return type(finder).__module__ == "_jaxlite_as_jax"


def install():
  """Put the alias finder first on ``sys.meta_path`` (once), in place of the startup
  hook's deferred finder, and pass the alias on to child interpreters through
  ``JAXLITE_AS_JAX=1`` unless that variable is ``0``. Imports nothing under ``jax``."""
  refuse_if_real_jax_imported()
  sys.meta_path[:] = [f for f in sys.meta_path if not _is_deferred_finder(f)]
  if _finder not in sys.meta_path:
    sys.meta_path.insert(0, _finder)
  if os.environ.get(ENV_VAR, "").strip() != "0":
    os.environ[ENV_VAR] = "1"


def install_as_jax():
  """Make ``import jax`` (and every ``jax.*`` submodule) resolve to jaxlite in this process
  and in the Python interpreters it starts.

  Call it before anything imports jax. Afterwards ``jax.numpy is jaxlite.numpy`` (and so on
  for every submodule), and ``jax`` is a module whose attributes are jaxlite's
  (``jax.jit is jaxlite.jit``) except its version: ``jax.__version__`` is the JAX API level
  jaxlite implements, ``"0.10.2"``. A JAX submodule that jaxlite does not implement raises
  ImportError naming it. Calling it again does nothing.

  Child interpreters (``subprocess`` of ``sys.executable``, ``multiprocessing`` spawn,
  pytest-xdist workers) inherit the environment variable ``JAXLITE_AS_JAX=1`` that this
  sets, and the startup hook jaxlite installs (``jaxlite-as-jax.pth``) serves ``jax`` from
  jaxlite there too. ``JAXLITE_AS_JAX=0`` in the environment keeps children on the real
  jax: this function then leaves the variable as it is.

  Raises
  ------
  ImportError
    If the real ``jax`` (or ``jaxlib``) is already imported: two different ``jax``
    implementations in one process would mix arrays and registries.
  """
  install()
  importlib.import_module("jax")
