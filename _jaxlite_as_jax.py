"""Serves ``import jax`` from jaxlite in the child interpreters of a program that runs on
jaxlite (``python -m jaxlite``, ``jaxlite.install_as_jax()``).

``install_as_jax()`` sets ``JAXLITE_AS_JAX=1``, which child processes inherit. The
``jaxlite-as-jax.pth`` file that installing jaxlite puts in site-packages runs, in every
Python interpreter of that environment as it starts::

    import os; os.environ.get("JAXLITE_AS_JAX", "").strip() not in ("", "0") and ...startup()

so that an interpreter without the variable (or with ``JAXLITE_AS_JAX=0``) imports nothing
of jaxlite's. With it, ``startup()`` puts ``DeferredAlias`` first on ``sys.meta_path``;
jaxlite itself is imported only when the program first imports ``jax`` (or ``jaxlib``),
and then its alias finder (``jaxlite._src.jax_alias``) takes over, as under
``install_as_jax()``. This is a top-level module of its own so that the check costs one
small import, not jaxlite's.
"""
import sys

ENV_VAR = "JAXLITE_AS_JAX"


class DeferredAlias:
  """A meta-path finder that installs jaxlite's alias on the first ``import jax``."""

  def find_spec(self, fullname, path=None, target=None):
    if fullname.partition(".")[0] not in ("jax", "jaxlib"):
      return None
    from jaxlite._src import jax_alias   # imports jaxlite
    jax_alias.install()                  # raises ImportError if the real jax is imported
    return jax_alias._finder.find_spec(fullname, path, target)

  def __repr__(self):
    return "<jaxlite: import jax served by jaxlite (JAXLITE_AS_JAX=1)>"


def startup():
  """Run by ``jaxlite-as-jax.pth`` when ``JAXLITE_AS_JAX`` is set and not ``0``.

  Refuses, as ``install_as_jax()`` does, when the real jax is already imported (an earlier
  startup file imported it): the ImportError is printed by ``site``, and ``import jax``
  then gives the real jax."""
  if any(isinstance(f, DeferredAlias) for f in sys.meta_path):
    return
  if any(name in ("jax", "jaxlib") or name.startswith(("jax.", "jaxlib."))
         for name in list(sys.modules)):
    from jaxlite._src import jax_alias
    jax_alias.refuse_if_real_jax_imported()
  sys.meta_path.insert(0, DeferredAlias())
