"""Run tests/spmd_cases.py in a process with N CPU devices (the count is fixed per
process): the helper tests/test_sharding.py and tests/test_pmap.py share."""
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def run_cases(n: int, selection: str, xla: bool = True, cases: str = "spmd_cases.py"):
  """Run the selected cases of ``tests/<cases>`` with ``n`` devices; ``xla=False`` as if
  no plugin were installed (an unknown JAXLITE_PLATFORM finds none): tier 0 alone."""
  env = dict(os.environ, JAX_NUM_CPU_DEVICES=str(n), TF_CPP_MIN_LOG_LEVEL="2")
  if not xla:
    env["JAXLITE_PLATFORM"] = "none"
  env.pop("XLA_FLAGS", None)
  proc = subprocess.run(
      # in this one process (the project's addopts spread a run over one worker per CPU)
      [sys.executable, "-m", "pytest", "-q", "-o", "addopts=", "-p", "no:cacheprovider", "-x",
       str(ROOT / "tests" / cases), "-k", selection],
      cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
  assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-3000:]
  assert " passed" in proc.stdout
