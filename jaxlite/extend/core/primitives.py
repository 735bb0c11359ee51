"""``jax.extend.core.primitives``: the primitive objects, by JAX's names (``add_p``,
``jit_p``, ``closed_call_p``, ...), for libraries that look for them in jaxprs."""
import importlib
import pkgutil

from jaxlite._src.core import core as _core
from jaxlite._src import lax as _lax
from jaxlite._src.transforms import ad as _ad


def _primitives() -> dict:
  """Every public ``<name>_p`` Primitive that a module of ``jaxlite._src.lax`` (or the
  autodiff module, for ``add_jaxvals_p``) defines."""
  modules = [importlib.import_module(f"{_lax.__name__}.{info.name}")
             for info in pkgutil.iter_modules(_lax.__path__)] + [_ad]
  found = {}
  for module in modules:
    for name, value in vars(module).items():
      if name.endswith("_p") and not name.startswith("_") and isinstance(
          value, _core.Primitive):
        found.setdefault(name, value)
  return found


globals().update(_primitives())
