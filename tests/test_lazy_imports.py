"""`import jaxlite` loads neither ml_dtypes, SciPy nor the XLA backend: each loads when
first needed, and what it computes then is what it computed when loaded eagerly.

Each test runs in a fresh interpreter, since this test process has loaded all of them.
The promotion expectations are JAX 0.10.2's, recorded in tests/data/promotion_table.json
(see test_dtypes.py).
"""
import json
import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import scipy.special

TABLE_PATH = os.path.join(os.path.dirname(__file__), "data", "promotion_table.json")


def _run(code):
  """Run ``code`` in a fresh interpreter and return what it prints."""
  out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=300)
  assert out.returncode == 0, out.stderr
  return out.stdout


# prints the lazily loaded libraries present in sys.modules: 'ml_dtypes', 'scipy', 'xla'
_LOADED = ("print(sorted({'xla' if m.startswith('jaxlite') else m.split('.')[0]"
           " for m in sys.modules if m.startswith(('ml_dtypes', 'scipy',"
           " 'jaxlite._src.backends.xla'))}))")


def test_import_loads_neither_ml_dtypes_scipy_nor_the_xla_backend():
  out = _run("import sys, jaxlite, jaxlite.numpy, jaxlite.lax\n" + _LOADED)
  assert out.strip() == "[]"


def test_float32_work_and_dir_load_no_ml_dtypes():
  out = _run("import sys, jaxlite, jaxlite.numpy as jnp\n"
             "x = jnp.arange(5.0)\n"
             "y = jaxlite.jit(lambda v: jnp.log10(v + 1).sum() + jnp.std(v), backend='numpy')(x)\n"
             "z = jaxlite.grad(lambda v: jnp.mean(v ** 2))(x).astype('float16')\n"
             "names = dir(jnp)\n" + _LOADED + "\n"
             "print(all(n in names for n in ('bfloat16', 'finfo', 'dtype', 'float8_e4m3fn',"
             " 'int4')))\n"
             "print(sorted(n for n in ('finfo', 'bfloat16') if n in dir(jaxlite.dtypes)))\n"
             "print(float(y), z.dtype)")
  loaded, listed, dtypes_listed, values = out.splitlines()
  assert loaded == "[]"
  assert listed == "True"
  assert dtypes_listed == "['bfloat16', 'finfo']"
  x = np.arange(5.0)
  y = np.sum(np.log10(x + 1)) + np.std(x)
  np.testing.assert_allclose(float(values.split()[0]), y, rtol=1e-6)
  assert values.split()[1] == "float16"


def test_xla_compile_and_callbacks_load_no_ml_dtypes():
  """Compiling for XLA (often on the background compile thread under `auto`) must not
  import ml_dtypes: its extension holds the GIL for about 0.5 s while it loads, which
  would stall the caller's tier-0 calls."""
  out = _run("import sys, jaxlite as jax, jaxlite.numpy as jnp\n"
             "from jaxlite._src import tiers\n"
             "if tiers.xla_available():\n"
             "  f = jax.jit(lambda x: jax.pure_callback(lambda v: v * 3, x, x) + 1,"
             " backend='xla')\n"
             "  print(f(jnp.arange(3.0)))\n"
             "print('ml_dtypes' in sys.modules)\n")
  assert out.split()[-1] == "False"


def test_public_ml_dtypes_names_load_it_on_first_access():
  out = _run("import sys, jaxlite, jaxlite.numpy as jnp, ml_dtypes\n"
             "print(jnp.finfo is ml_dtypes.finfo, jnp.iinfo is ml_dtypes.iinfo,"
             " jnp.dtype is __import__('numpy').dtype, jnp.float8_e4m3fn is"
             " ml_dtypes.float8_e4m3fn, jnp.int4 is ml_dtypes.int4,"
             " jaxlite.dtypes.bfloat16 is ml_dtypes.bfloat16,"
             " jaxlite.dtypes.finfo is ml_dtypes.finfo, jnp.bfloat16.dtype =="
             " __import__('numpy').dtype(ml_dtypes.bfloat16))")
  assert out.split() == ["True"] * 8


def _bfloat16_code(first_use):
  return ("import sys, numpy as np, jaxlite, jaxlite.numpy as jnp\n"
          f"{first_use}\n" + _LOADED + "\n"
          "x = jnp.asarray([1.0, 2.5, 3.0]).astype('bfloat16')\n"
          "from jaxlite._src.lax.elementwise import add_p\n"
          "print(x.dtype, jnp.dtype('bfloat16') == x.dtype, x.dtype == jnp.bfloat16.dtype,"
          " x.dtype in add_p.elementwise_dtypes)\n"
          "print((x + 1).dtype, (x + 1).weak_type, (x * jnp.float16(2)).dtype,"
          " (x + jnp.int8(3)).dtype, jnp.promote_types('bfloat16', 'float16'),"
          " jnp.result_type(x, 1.0), jnp.issubdtype(x.dtype, jnp.floating))\n"
          "f = jnp.finfo(jnp.bfloat16)\n"
          "print(f.bits, float(f.eps), jnp.sum(x).dtype, jnp.sin(x).dtype,"
          " np.asarray(jnp.sin(x).astype('float32')).tolist())")


def _check_bfloat16_outputs(out):
  loaded, kinds, promoted, info = out.splitlines()
  assert "ml_dtypes" in loaded
  # the last: eager's fast path (a set built at import) took bfloat16 in when it loaded
  assert kinds == "bfloat16 True True True"
  # JAX 0.10.2 printed these lines for the same code
  assert promoted == "bfloat16 False float32 bfloat16 float32 bfloat16 True"
  bits, eps, sum_dtype, sin_dtype, sin = info.split(maxsplit=4)
  assert (int(bits), float(eps), sum_dtype, sin_dtype) == (16, 2.0 ** -7, "bfloat16",
                                                         "bfloat16")
  assert json.loads(sin) == [0.83984375, 0.59765625, 0.1416015625]
  want = np.sin(np.array([1.0, 2.5, 3.0], ml_dtypes.bfloat16)).astype(np.float32)
  np.testing.assert_array_equal(json.loads(sin), want)


def test_bfloat16_by_name_loads_ml_dtypes_and_promotes_as_jax():
  _check_bfloat16_outputs(_run(_bfloat16_code("y = jnp.zeros(2, 'bfloat16')")))


def test_bfloat16_array_of_the_users_ml_dtypes_is_admitted_and_promotes_as_jax():
  out = _run(_bfloat16_code("import ml_dtypes\n"
                            "y = jnp.sin(np.ones(2, ml_dtypes.bfloat16)) + 1\n"
                            "assert y.dtype == ml_dtypes.bfloat16, y.dtype"))
  _check_bfloat16_outputs(out)


def test_promotion_table_before_and_after_ml_dtypes_loads_is_jaxs():
  """JAX's recorded result_type table, every pair of operands in all four modes: first the
  pairs without bfloat16 (which leave ml_dtypes unloaded), then all of them."""
  code = f"""
import json, sys
import numpy as np
import jaxlite, jaxlite.numpy
from jaxlite._src.base import dtypes
from jaxlite._src.base.config import config
table = json.load(open({TABLE_PATH!r}))
names = table["operands"]
by_short = {{}}
for n in ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "bfloat16", "float16", "float32", "float64", "complex64", "complex128"]:
  short = n.replace("float", "f").replace("uint", "u").replace("int", "i").replace(
      "complex", "c") if n != "bool" else "bool"
  by_short[short] = n

class Weak:
  weak_type = True
  def __init__(self, name):
    self.dtype = dtypes.np_dtype(name)

def operand(name):
  py = {{"py_bool": True, "py_int": 1, "py_float": 1.0, "py_complex": 1j}}
  if name in py:
    return py[name]
  return Weak(name[5:]) if name.startswith("weak_") else name  # a dtype name

def outcome(args):
  try:
    dt, weak = dtypes.result_type(*args, return_weak_type_flag=True)
  except Exception as e:
    return "error:" + type(e).__name__
  return dtypes.short_name(dt) + ("*" if weak else "")

def expectation(e):
  if e.startswith("error:"):
    return e
  dt = dtypes.canonicalize_dtype(by_short[e.rstrip("*")])
  return dtypes.short_name(dt) + ("*" if e.endswith("*") else "")

def check(with_bfloat16):
  bad, n = [], 0
  for mode, rows in table["modes"].items():
    x64, promotion = (p.split("=")[1] for p in mode.split())
    config.update("jax_enable_x64", x64 == "True")
    config.update("jax_numpy_dtype_promotion", promotion)
    t = rows["result_type"]
    cases = [((a,), e) for a, e in zip(names, t["single"].split())]
    for i, a in enumerate(names):
      cases += [((a, b), e) for b, e in zip(names[i:], t[a].split())]
    for ops, e in cases:
      if any("bfloat16" in o for o in ops) != with_bfloat16:
        continue
      for order in (ops, ops[::-1]):
        n += 1
        got, want = outcome([operand(o) for o in order]), expectation(e)
        if got != want:
          bad.append(f"{{mode}} {{order}}: got {{got}}, JAX {{want}}")
  return n, bad

import warnings
warnings.simplefilter("ignore")
print(json.dumps([check(False), "ml_dtypes" in sys.modules, check(True),
                  "ml_dtypes" in sys.modules]))
"""
  (n_plain, bad_plain), loaded_before, (n_bf16, bad_bf16), loaded_after = json.loads(
      _run(code))
  assert bad_plain == [] and bad_bf16 == []
  assert not loaded_before and loaded_after
  assert n_plain + n_bf16 == 2 * 4 * (34 + 34 * 35 // 2) and n_bf16 > 0


def test_the_names_numpy_learns_from_ml_dtypes_are_known_to_jaxlite():
  # np.dtype('int4') parses only once ml_dtypes is imported; jaxlite loads it for these
  out = _run("import numpy as np\nbefore = set(np.sctypeDict)\nimport ml_dtypes\n"
             "from jaxlite._src.base import dtypes\n"
             "print(sorted(set(np.sctypeDict) - before - dtypes._ML_DTYPE_NAMES))")
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


def test_loading_an_executable_imports_no_lowering(tmp_path):
  # The race's winner, lowered and compiled by the compile server, is only loaded in the
  # caller's process: that needs pjrt, not stablehlo and the rules callbacks and linalg
  # add to it (2.2 ms of Python holding the GIL). The loaded program computes NumPy's
  # answer.
  from jaxlite._src import tiers
  if not tiers.xla_available():
    import pytest
    pytest.skip("no XLA plugin installed")
  import jaxlite as jax
  import jaxlite.numpy as jnp
  from jaxlite._src.backends import xla
  x = np.linspace(-1.0, 1.0, 7, dtype=np.float32)
  closed = jax.make_jaxpr(lambda v: jnp.tanh(v) * 2.0 + v)(x)
  path = tmp_path / "exe.bin"
  path.write_bytes(xla.compile(closed, "f").serialize())
  out = _run("import sys, numpy as np, jaxlite as jax, jaxlite.numpy as jnp\n"
             "from jaxlite._src.backends import xla\n"
             "x = np.linspace(-1.0, 1.0, 7, dtype=np.float32)\n"
             "closed = jax.make_jaxpr(lambda v: jnp.tanh(v) * 2.0 + v)(x)\n"
             f"exe = xla.deserialize(open({str(path)!r}, 'rb').read(), closed)\n"
             "print(exe(x)[0].tolist())\n"
             "print(sorted(m for m in sys.modules if m.startswith('jaxlite._src.backends.xla')))")
  values, modules = out.strip().splitlines()
  np.testing.assert_allclose(eval(values), np.tanh(x) * 2.0 + x, rtol=1e-6)
  assert eval(modules) == ["jaxlite._src.backends.xla", "jaxlite._src.backends.xla.pjrt"]
