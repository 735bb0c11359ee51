"""Record JAX's CPU Cholesky, eigh and SVD, which tests/test_linalg.py compares with to rounding:

  /work/jaxref/bin/python tests/data/make_linalg_reference.py

Writes linalg_reference.npz next to this script (recorded with JAX 0.10.2 on x86-64). jaxlib
computes these with LAPACK, whose last bits depend on the BLAS build and the CPU kernel it
picks (OPENBLAS_CORETYPE), so the recording holds to rounding, not bit for bit.
"""
import os

import numpy as np

import jax

SHAPES = ((3, 3), (8, 8), (2, 5, 5), (4, 7), (7, 4), (0, 0), (2, 0, 3))
# gesdd takes a workspace-dependent path from n = 33 on; one dtype is enough for it
LARGE = ((33, 33), (40, 20))


def inputs(dtype, shape, rng):
  a = rng.standard_normal(shape).astype(dtype)
  if np.iscomplexobj(a):
    a = a + 1j * rng.standard_normal(shape).astype(dtype)
  return a


def record(dtypes, out):
  import jax.numpy as jnp
  rng = np.random.default_rng(2)
  for dtype in dtypes:
    for shape in SHAPES + (LARGE if dtype == np.float32 else ()):
      a = inputs(dtype, shape, rng)
      tag = f"{np.dtype(dtype).name}_{'x'.join(map(str, shape))}"
      out[tag + "|a"] = a
      for full in (True, False):
        for i, t in enumerate(jnp.linalg.svd(a, full_matrices=full)):
          out[f"{tag}|svd{int(full)}{i}"] = np.asarray(t)
      out[tag + "|svdvals"] = np.asarray(jnp.linalg.svd(a, compute_uv=False))
      if shape[-1] == shape[-2]:
        spd = a @ np.swapaxes(a, -1, -2).conj() + np.eye(shape[-1], dtype=dtype)
        out[tag + "|spd"] = spd
        out[tag + "|cholesky"] = np.asarray(jnp.linalg.cholesky(spd))
        out[tag + "|cholesky_indefinite"] = np.asarray(jnp.linalg.cholesky(
            a - 5 * np.eye(shape[-1], dtype=dtype)))
        for i, t in enumerate(jnp.linalg.eigh(spd)):
          out[f"{tag}|eigh{i}"] = np.asarray(t)
        for i, t in enumerate(jnp.linalg.eigh(a)):      # symmetrised first, as JAX does
          out[f"{tag}|eigh_nonsym{i}"] = np.asarray(t)


if __name__ == "__main__":
  out = {}
  record((np.float32, np.complex64), out)
  jax.config.update("jax_enable_x64", True)
  record((np.float64, np.complex128), out)
  path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "linalg_reference.npz")
  np.savez_compressed(path, **out)
  print(f"wrote {len(out)} arrays to {path}")
