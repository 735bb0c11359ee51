"""The interpreter of a reference JAX installation, for the tests that ask real JAX.

Tests that compare with JAX in a subprocess find its Python here: the environment variable
``JAXLITE_REFERENCE_JAX_PYTHON`` names it, and without it the path of the development
machine's installation is used if it exists. Where neither is found (or the one named is
not there), such a test is skipped with the reason, never failed.
"""
import os
import subprocess

import pytest

ENV_VAR = "JAXLITE_REFERENCE_JAX_PYTHON"
_FALLBACK = "/work/jaxref/bin/python"


def reference_python():
  """The reference JAX interpreter's path, or None where there is none."""
  named = os.environ.get(ENV_VAR)
  if named:
    return named if os.path.exists(named) else None
  return _FALLBACK if os.path.exists(_FALLBACK) else None


def require_reference_python():
  """The reference interpreter's path; skips the calling test where there is none."""
  path = reference_python()
  if path is None:
    named = os.environ.get(ENV_VAR)
    pytest.skip(f"reference JAX: {ENV_VAR}={named!r} does not exist" if named else
                f"reference JAX is not installed: set {ENV_VAR} to the Python of an "
                "environment with jax 0.10.2")
  return path


def run_reference(script, *, text=False, timeout=180):
  """Run ``script`` under the reference interpreter and return its stdout; skips the
  calling test where there is no interpreter or the script fails."""
  python = require_reference_python()
  out = subprocess.run([python, "-c", script], capture_output=True, text=text,
                       timeout=timeout)
  if out.returncode:
    pytest.skip(f"reference JAX failed: {out.stderr[-300:]!r}")
  return out.stdout
