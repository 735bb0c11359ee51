"""Record JAX's Array API answers as array_api_reference.json.

Run with a Python that has real JAX installed (the reference):

  /work/jaxref/bin/python tests/data/make_array_api_reference.py

It stores, with 64-bit types off and on: the signature of every function the standard
names (parameter names, kinds, defaults), ``__array_namespace_info__()``'s answers,
every ``finfo``/``iinfo`` attribute, and the result (value, dtype, shape) or the
exception class and first message line of each case in array_api_cases.py.
"""
import inspect
import json
import os
import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from array_api_cases import (FINFO_ATTRS, FLOAT_TYPES, IINFO_ATTRS, INFO_KINDS,  # noqa: E402
                             INT_TYPES, STANDARD_FUNCTIONS, cases)


def lookup(module, dotted):
  for part in dotted.split("."):
    module = getattr(module, part)
  return module


def signature(fn):
  return [[p.name, p.kind.name, "-" if p.default is p.empty else repr(p.default)]
          for p in inspect.signature(fn).parameters.values()]


def encode(x):
  """Arrays as {dtype, shape, value}; tuples element by element; other values by repr
  (numbers, booleans, strings, dtypes and tuples of them compare by repr)."""
  if isinstance(x, tuple):
    return {"tuple": [encode(v) for v in x]}
  if isinstance(x, (jax.Array, np.ndarray)):
    value = np.asarray(x)
    data = [value.real.tolist(), value.imag.tolist()] if value.dtype.kind == "c" else (
        value.astype(np.float64).tolist() if value.dtype.kind == "V" else value.tolist())
    return {"dtype": value.dtype.name, "shape": list(value.shape), "value": data}
  return {"repr": repr(x)}


def record_case(thunk):
  try:
    return encode(thunk())
  except Exception as e:  # noqa: BLE001  (the class is the record)
    return {"error": type(e).__name__, "message": str(e).split("\n")[0]}


def info_record():
  info = jnp.__array_namespace_info__()
  return {
      "capabilities": info.capabilities(),
      "default_device": repr(info.default_device()),
      "devices": [repr(d) for d in info.devices()],
      "default_dtypes": {k: v.name for k, v in info.default_dtypes().items()},
      "dtypes": [[repr(kind), sorted(info.dtypes(kind=kind))] for kind in INFO_KINDS],
  }


def number(v):
  return v if isinstance(v, (int, str)) else float(v)


def finfo_record():
  out = {}
  for name in FLOAT_TYPES:
    fi = jnp.finfo(getattr(jnp, name))
    out[name] = {a: (getattr(fi, a).name if a == "dtype" else number(getattr(fi, a)))
                 for a in FINFO_ATTRS}
    out[name]["scalar_types"] = {a: np.dtype(type(getattr(fi, a))).name
                                 for a in ("eps", "max", "min", "smallest_normal")}
  for name in INT_TYPES:
    ii = jnp.iinfo(getattr(jnp, name))
    out[name] = {a: (ii.dtype.name if a == "dtype" else getattr(ii, a)) for a in IINFO_ATTRS}
  return out


def main():
  warnings.simplefilter("ignore")
  reference = {"signatures": {name: signature(lookup(jnp, name))
                              for name in STANDARD_FUNCTIONS if "." in name
                              or hasattr(jnp, name)},
               "finfo": finfo_record()}
  for x64 in (False, True):
    jax.config.update("jax_enable_x64", x64)
    key = "x64" if x64 else "x32"
    reference[f"info_{key}"] = info_record()
    reference[f"cases_{key}"] = {name: record_case(thunk)
                                 for name, thunk in cases(jnp).items()}
  path = os.path.join(os.path.dirname(__file__), "array_api_reference.json")
  with open(path, "w") as f:
    json.dump(reference, f, indent=1, sort_keys=True)
    f.write("\n")
  print(f"wrote {path}")


if __name__ == "__main__":
  main()
