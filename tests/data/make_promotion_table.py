"""Record JAX's dtype promotion results as tests/data/promotion_table.json.

Run once with a Python that has real JAX installed (the reference), e.g.

  /work/jaxref/bin/python tests/data/make_promotion_table.py

Every single operand and every unordered pair of the operands below goes
through ``jax.dtypes.result_type(..., return_weak_type_flag=True)`` and JAX's
internal ``lattice_result_type`` (what jnp's binary ops promote with), under
x64 off/on and promotion 'standard'/'strict'. A result is a short dtype name
with a trailing '*' when weakly typed, or 'error:<ExceptionClass>'.
``promote_types`` is recorded over the strong dtypes and int/float/complex.

Layout, per mode and function: row "single" lists f(a) for each operand a in
order; row a lists f(a, b) for the operands b from a onwards (upper triangle).
"""
import itertools
import json
import os
import warnings

import jax
import jax.numpy as jnp
import numpy as np
from jax._src import dtypes as jdt
from jax._src.lax import lax as lax_internal

STRONG = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
          "uint64", "bfloat16", "float16", "float32", "float64", "complex64",
          "complex128"]
PYTHON = {"py_bool": True, "py_int": 1, "py_float": 1.0, "py_complex": 1j}
PY_TYPES = {"int": int, "float": float, "complex": complex}


def short(dt):
  return "bool" if dt == np.dtype(bool) else jdt.short_dtype_name(np.dtype(dt))


def operands():
  """Name -> operand; rebuilt per x64 mode because weak arrays depend on it."""
  ops = {name: np.dtype(jnp.dtype(name)) for name in STRONG}
  ops.update(PYTHON)
  for name in STRONG:
    # A weakly typed 0-d array of each dtype (under x64 off the 64-bit ones come
    # out 32-bit, exactly what jaxlite must reproduce from a weak int64 marker).
    ops["weak_" + name] = lax_internal._convert_element_type(
        np.zeros((), name), jnp.dtype(name), weak_type=True)
  return ops


def outcome(fn, *args):
  try:
    dt, weak = fn(*args)
  except Exception as e:  # noqa: BLE001 - the class name is the recorded result
    return "error:" + type(e).__name__
  return short(dt) + ("*" if weak else "")


def record():
  table = {"jax_version": jax.__version__, "modes": {}}
  for x64, promotion in itertools.product([False, True], ["standard", "strict"]):
    jax.config.update("jax_enable_x64", x64)
    jax.config.update("jax_numpy_dtype_promotion", promotion)
    ops = operands()
    names = list(ops)
    table["operands"] = names
    rt = lambda *a: jax.dtypes.result_type(*a, return_weak_type_flag=True)
    mode = {}
    for fn_name, fn in [("result_type", rt), ("lattice_result_type", jdt.lattice_result_type)]:
      rows = {"single": " ".join(outcome(fn, ops[a]) for a in names)}
      for i, a in enumerate(names):
        rows[a] = " ".join(outcome(fn, ops[a], ops[b]) for b in names[i:])
      mode[fn_name] = rows
    specs = {**{n: np.dtype(jnp.dtype(n)) for n in STRONG}, **PY_TYPES}
    pt = lambda x, y: (jnp.promote_types(x, y), False)
    spec_names = list(specs)
    mode["promote_types"] = {
        a: " ".join(outcome(pt, specs[a], specs[b]) for b in spec_names[i:])
        for i, a in enumerate(spec_names)}
    table["promote_types_operands"] = spec_names
    table["modes"][f"x64={x64} promotion={promotion}"] = mode
  return table


if __name__ == "__main__":
  with warnings.catch_warnings():
    # 64-bit dtype requests under x64 off warn; the truncated result is recorded.
    warnings.simplefilter("ignore")
    table = record()
  out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "promotion_table.json")
  with open(out, "w") as f:
    json.dump(table, f, indent=1)
    f.write("\n")
  print(f"wrote {out}")
