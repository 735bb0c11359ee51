"""Run a JAX program on jaxlite, unchanged: ``import jax`` resolves to jaxlite.

    python -m jaxlite SCRIPT [ARGS...]
    python -m jaxlite -m MODULE [ARGS...]      # e.g. python -m jaxlite -m pytest tests/

As ``python SCRIPT`` and ``python -m MODULE`` do, the program runs as ``__main__`` with
``sys.argv`` set to its own arguments, and the script's directory (for a script) or the
current directory (for a module) first on ``sys.path``.
"""
import os
import runpy
import sys

USAGE = ("usage: python -m jaxlite SCRIPT [ARGS...]\n"
         "       python -m jaxlite -m MODULE [ARGS...]\n"
         "Runs a JAX program with 'import jax' (and every jax.* module) resolving to jaxlite.")


def main(argv):
  if not argv or argv[0] in ("-h", "--help") or (argv[0] == "-m" and len(argv) < 2):
    print(USAGE, file=sys.stderr if not argv or argv[0] == "-m" else sys.stdout)
    return 0 if argv and argv[0] in ("-h", "--help") else 2
  import jaxlite
  jaxlite.install_as_jax()
  if argv[0] == "-m":   # 'python -m jaxlite' already put the current directory first
    sys.argv = [argv[1], *argv[2:]]
    runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
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
