"""Record JAX's (XLA CPU's) float32 exp, log, log1p, tan, erf and pow for jaxlite's bit-exactness
tests, so they can run without JAX:

  /work/jaxref/bin/python tests/data/make_xla_math_reference.py

Writes xla_math_f32_reference.npz next to this script: for each function ``NAME_x`` (and
``pow_y``) with the inputs and ``NAME_out`` with ``jax.jit(fn)`` of them, 2,000 inputs per
function, special values included. Inputs are evaluated as one array (the vectorised path).
Recorded with JAX 0.10.2 on x86-64 with FMA, glibc 2.36 (tan and pow come from the C library).
"""
import os

import numpy as np

import jax
import jax.numpy as jnp

F32 = np.float32
SPECIAL = [0, -0.0, 1e-40, -1e-40, 1e-38, -1e-38, 1.17549435e-38, np.inf, -np.inf, np.nan,
           1, -1, 0.5, -0.5, 2, -2, 3.4e38, -3.4e38, 1e-30, -1e-30]


def sample(rng, name):
  u, e = rng.uniform, lambda lo, hi, n: np.exp(rng.uniform(lo, hi, n))
  parts = {
    "exp": [u(-104, 89, 1500), u(-89, -86, 200), u(87, 89, 200), [88.72283, -87.3365, -103.97]],
    "log": [u(0, 1, 1000), u(0, 10, 400), e(-87, 88.7, 500)],
    "log1p": [u(-1, 1, 1000), -1 + e(-17, 0, 300), e(-30, 0, 300), e(0, 88.7, 300)],
    "tan": [u(-np.pi / 2, np.pi / 2, 1200), u(-119.9, 119.9, 400),
            e(np.log(120), np.log(3e38), 300) * rng.choice([-1, 1], 300)],
    "erf": [u(-5, 5, 1400), u(-1e-3, 1e-3, 200), e(-80, 1.5, 400) * rng.choice([-1, 1], 400)],
  }[name]
  x = np.concatenate([np.asarray(p, np.float64).ravel() for p in parts])
  return np.concatenate([x[:2000 - len(SPECIAL)], SPECIAL]).astype(F32)


def main():
  rng = np.random.default_rng(2024)
  data = {}
  for name in ["exp", "log", "log1p", "tan", "erf"]:
    x = sample(rng, name)
    fn = jax.lax.erf if name == "erf" else getattr(jnp, name)
    data[f"{name}_x"], data[f"{name}_out"] = x, np.asarray(jax.jit(fn)(x))
  sp = np.array(SPECIAL + [3, -3, 127, -150], F32)
  a, b = (v.ravel() for v in np.meshgrid(sp, sp))
  n = 2000 - a.size
  x = np.concatenate([rng.uniform(0, 1, n // 2), rng.uniform(-10, 10, n - n // 2), a]).astype(F32)
  y = np.concatenate([1 / rng.uniform(0.01, 10, n // 2), np.round(rng.uniform(-20, 20, n - n // 2)),
                      b]).astype(F32)
  data["pow_x"], data["pow_y"] = x, y
  data["pow_out"] = np.asarray(jax.jit(lambda p, q: p ** q)(x, y))
  path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "xla_math_f32_reference.npz")
  np.savez_compressed(path, **data)
  print(f"wrote {path}: {os.path.getsize(path)} bytes")


if __name__ == "__main__":
  main()
