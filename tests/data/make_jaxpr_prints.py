"""Record JAX's printed jaxprs of the printing cases as tests/data/jaxpr_prints.json.

Run once with a Python that has real JAX installed (the reference), e.g.

  /work/jaxref/bin/python tests/data/make_jaxpr_prints.py

The cases are defined in jaxpr_print_cases.py, shared with tests/test_jaxpr_printing.py.
"jaxprs" holds ``str(jax.make_jaxpr(f)(*args))`` of each case, JAX's layout at its default
width of 80; "pretty_prints" holds ``pretty_print(**kwargs)`` of some of them at other
widths and without shapes.
"""
import json
import os
import sys

import jax
import jax.numpy as jnp
from jax import lax

sys.path.insert(0, os.path.dirname(__file__))
from jaxpr_print_cases import PRETTY_PRINTS, cases, pretty_print_key  # noqa: E402


def checked(text):
  assert "\x1b" not in text, "run with stdout not a terminal: JAX colours jaxprs there"
  return text


programs = cases(jax, jnp, lax)
jaxprs = {name: jax.make_jaxpr(f)(*args) for name, (f, args) in programs.items()}
out = {name: checked(str(closed)) for name, closed in jaxprs.items()}
pretty = {pretty_print_key(name, kwargs): checked(jaxprs[name].pretty_print(**kwargs))
          for name, kwargs in PRETTY_PRINTS}
path = os.path.join(os.path.dirname(__file__), "jaxpr_prints.json")
with open(path, "w") as f:
  json.dump({"jax_version": jax.__version__, "jaxprs": out, "pretty_prints": pretty}, f,
            indent=1, sort_keys=True)
  f.write("\n")
print(f"recorded {len(out)} jaxprs and {len(pretty)} pretty_prints in {path}")
