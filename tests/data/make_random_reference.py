"""Record the draws of random_cases.py from real JAX into random_reference.npz.

Run with a Python that has JAX installed (JAX 0.10.2 is the spec):
  /work/jaxref/bin/python tests/data/make_random_reference.py
For each case ``NAME`` of ``random_cases.cases`` the file holds ``x32/NAME`` (the draw for
PRNGKey(42); bfloat16 stored as its uint16 bits), ``dtype:x32/NAME`` (its dtype's name) and
``jaxpr/NAME`` (the primitives JAX's jaxpr of the call applies); ``x64/NAME`` likewise for
``random_cases.x64_cases``, drawn with ``jax_enable_x64`` on. Draws that are not ``exact``
depend on the machine in their last bits; recorded on x86-64 (AVX-512), Linux.
"""
import os

import jax
import jax.numpy as jnp
import numpy as np

import random_cases


def record(out, prefix, cases, jaxprs):
  key = jax.random.PRNGKey(42)
  for name, (draw, _) in cases.items():
    value = np.asarray(draw(key))
    out[f"dtype:{prefix}/{name}"] = np.array(value.dtype.name)
    out[f"{prefix}/{name}"] = value.view(np.uint16) if value.dtype == jnp.bfloat16 else value
    if jaxprs:
      prims = random_cases.primitive_names(str(jax.make_jaxpr(draw)(key)))
      out[f"jaxpr/{name}"] = np.array(" ".join(sorted(prims)))


if __name__ == "__main__":
  out = {"jax_version": np.array(jax.__version__)}
  record(out, "x32", random_cases.cases(jax.random, jnp), jaxprs=True)
  jax.config.update("jax_enable_x64", True)
  record(out, "x64", random_cases.x64_cases(jax.random, jnp), jaxprs=False)
  path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "random_reference.npz")
  np.savez_compressed(path, **out)
  print(f"wrote {sum(k.startswith(('x32/', 'x64/')) for k in out)} draws to {path}")
