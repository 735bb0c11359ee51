"""`import jaxlite` loads neither SciPy nor the XLA backend: each loads when first needed."""
import json
import subprocess
import sys

import numpy as np
import scipy.special


def _run(code):
  """Run ``code`` in a fresh interpreter and return what it prints."""
  out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
  assert out.returncode == 0, out.stderr
  return out.stdout


_LOADED = ("print(sorted({m.split('.')[0] if m.startswith('scipy') else m for m in sys.modules"
           " if m.startswith(('scipy', 'jaxlite._src.backends.xla'))}))")


def test_import_loads_neither_scipy_nor_the_xla_backend():
  out = _run("import sys, jaxlite, jaxlite.numpy, jaxlite.lax\n" + _LOADED)
  assert out.strip() == "[]"


def test_a_special_function_loads_scipy_on_first_use_and_agrees_with_it():
  x = np.linspace(-2, 2, 9, dtype=np.float32)
  out = _run("import sys, numpy as np, jaxlite, jaxlite.lax as lax\n"
             f"x = np.linspace(-2, 2, 9, dtype=np.float32)\n{_LOADED}\n"
             "y = jaxlite.jit(lambda v: lax.erf(v) + lax.lgamma(v + 3), backend='numpy')(x)\n"
             f"{_LOADED}\nprint(np.asarray(y).tolist())")
  before, after, values = out.splitlines()
  assert before == "[]" and after == "['scipy']"
  expected = scipy.special.erf(x) + scipy.special.gammaln(x + 3)
  np.testing.assert_allclose(json.loads(values), expected, rtol=1e-6)
