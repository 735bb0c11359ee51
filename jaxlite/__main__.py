"""Run a JAX program on jaxlite, unchanged: ``import jax`` resolves to jaxlite.

    python -m jaxlite SCRIPT [ARGS...]
    python -m jaxlite -m MODULE [ARGS...]      # e.g. python -m jaxlite -m pytest tests/
    python -m jaxlite -c CODE [ARGS...]

As ``python SCRIPT``, ``python -m MODULE`` and ``python -c CODE`` do, the program runs as
``__main__`` with ``sys.argv`` set to its own arguments (``sys.argv[0]`` is ``'-c'`` for
code), and the script's directory (for a script) or the current directory (for a module or
code) first on ``sys.path``. The Python interpreters the program starts see jaxlite as
``jax`` too (``JAXLITE_AS_JAX=1``, see ``jaxlite.install_as_jax``).
"""
import os
import runpy
import sys
import types

USAGE = ("usage: python -m jaxlite SCRIPT [ARGS...]\n"
         "       python -m jaxlite -m MODULE [ARGS...]\n"
         "       python -m jaxlite -c CODE [ARGS...]\n"
         "Runs a JAX program with 'import jax' (and every jax.* module) resolving to jaxlite.")


def _run_code(code, argv):
  """``python -c CODE``: CODE runs in a fresh ``__main__`` module, named ``<string>``."""
  sys.argv = ["-c", *argv]
  main = types.ModuleType("__main__")
  main.__builtins__ = __builtins__
  sys.modules["__main__"] = main
  exec(compile(code, "<string>", "exec"), main.__dict__)


def main(argv):
  if not argv or argv[0] in ("-h", "--help") or (argv[0] in ("-m", "-c") and len(argv) < 2):
    print(USAGE, file=sys.stderr if not argv or argv[0] in ("-m", "-c") else sys.stdout)
    return 0 if argv and argv[0] in ("-h", "--help") else 2
  import jaxlite
  jaxlite.install_as_jax()
  if argv[0] == "-m":   # 'python -m jaxlite' already put the current directory first
    sys.argv = [argv[1], *argv[2:]]
    runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
  elif argv[0] == "-c":
    _run_code(argv[1], argv[2:])
  else:
    script = argv[0]
    if not os.path.exists(script):
      print(f"python -m jaxlite: can't open file {script!r}: no such file", file=sys.stderr)
      return 2
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    runpy.run_path(script, run_name="__main__")
  return 0


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:]))
