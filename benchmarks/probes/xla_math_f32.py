"""Probe: do jaxlite's float32 ``xla_math`` functions give JAX's (XLA CPU's) results bit for bit?

Run with the reference JAX venv (this script imports real JAX; jaxlite never does):

  /work/jaxref/bin/python benchmarks/probes/xla_math_f32.py

For each function it prints how many of ~400k inputs (plus special values) differ from
``jax.jit(fn)``, for jaxlite's emulation and for plain NumPy. NaN counts equal to NaN.
Arrays are passed whole (sizes >= 16), which is what XLA's vectorised code path sees: for
1-D arrays of fewer than 16 elements whose size mod 8 is 3, 5, 6 or 7, XLA evaluates exp and
log of the leftover elements with the C library's expf/logf instead (see xla_math's
docstring); the last section shows that.
"""
import os
import sys

import numpy as np

import jax
import jax.numpy as jnp

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", ".."))
from jaxlite._src.backends.numpy import xla_math  # noqa: E402

F32 = np.float32
SPECIAL = [0, -0.0, 1e-40, -1e-40, 1e-38, -1e-38, 1.17549435e-38, np.inf, -np.inf, np.nan,
           1, -1, 0.5, -0.5, 2, -2, 3.4e38, -3.4e38, 1e-30, -1e-30]


def same(a, b):
  return (a.view(np.int32) == b.view(np.int32)) | (np.isnan(a) & np.isnan(b))


def report(name, ours, numpy_, ref):
  bad = np.flatnonzero(~same(ours, ref))
  print(f"{name:6s} {ref.size:7d} inputs: xla_math differs on {bad.size}, "
        f"NumPy on {np.sum(~same(numpy_, ref))}")
  return bad.size


def inputs(rng):
  u = rng.uniform
  e = lambda lo, hi, n: np.exp(u(lo, hi, n))
  return {
    "exp": [u(-104, 89, 300000), u(-89, -86, 40000), u(87, 89, 40000), u(-1, 1, 20000),
            [88.72283, 88.7228394, 88.8, 88.9, -87.8, -87.3365, -87.33655, -103.97, -104]],
    "log": [u(0, 1, 200000), u(0, 10, 100000), e(-87, 88.7, 100000)],
    "log1p": [u(-1, 1, 200000), u(-0.5, 0.5, 50000), -1 + e(-17, 0, 20000),
              e(-30, 0, 30000), -e(-30, -1, 30000), u(0, 10, 30000), e(0, 88.7, 50000),
              [-1.0000001, 0.41421357, -0.41421357, 0.4142135, 5.9604645e-08]],
    "tan": [u(-np.pi / 2, np.pi / 2, 250000),
            np.pi * (u(0, 1, 50000).astype(F32) - F32(0.5)), u(-119.9, 119.9, 80000),
            e(-30, 0, 20000), e(np.log(120), np.log(3e38), 20000) * rng.choice([-1, 1], 20000),
            [1.5707963, -1.5707963, 1.5707964, 0.7853982, 0.78539814, 0.6744, 119.99, 120,
             1e-4, 1.2207031e-4]],
  }


def pow_inputs(rng):
  u = rng.uniform
  x = np.concatenate([u(0, 1, 150000), np.exp(u(-80, 0, 50000)), u(0, 10, 50000),
                      -u(0, 10, 50000), np.exp(u(-87, 88, 100000))])
  y = np.concatenate([1 / u(0.01, 10, 100000), u(-10, 10, 100000),
                      np.round(u(-30, 30, 100000)), u(-3, 3, 100000)])
  rng.shuffle(y)
  sp = np.array(SPECIAL + [3, -3, 0.999, 1.001, 127, 128, -149, -150, -126, 16777216,
                           16777217], F32)
  a, b = np.meshgrid(sp, sp)
  return (np.concatenate([x, a.ravel()]).astype(F32),
          np.concatenate([y, b.ravel()]).astype(F32))


def main():
  rng = np.random.default_rng(0)
  bad = 0
  with np.errstate(all="ignore"):
    for name, parts in inputs(rng).items():
      x = np.concatenate([np.asarray(p, np.float64).ravel() for p in parts] + [SPECIAL])
      x = x.astype(F32)
      ref = np.asarray(jax.jit(getattr(jnp, name))(x))
      bad += report(name, getattr(xla_math, name)(x), getattr(np, name)(x), ref)
    x, y = pow_inputs(rng)
    ref = np.asarray(jax.jit(lambda a, b: a ** b)(x, y))
    bad += report("pow", xla_math.pow(x, y), np.power(x, y), ref)
    # 0-d arrays and the small-array path
    ops = {"exp": jnp.exp, "log": jnp.log, "log1p": jnp.log1p, "tan": jnp.tan,
           "pow": lambda a: a ** F32(0.3)}
    for name, fn in ops.items():
      ours = (lambda a: xla_math.pow(a, F32(0.3))) if name == "pow" else getattr(xla_math, name)
      x = np.asarray(F32(0.37))
      ok = same(np.asarray(ours(x)), np.asarray(jax.jit(fn)(x)))
      print(f"{name:6s} 0-d: {'same' if ok else 'DIFFERENT'}")
      bad += int(not ok)
    x = rng.uniform(0.1, 10, 40).astype(F32)
    for n in [1, 2, 3, 4, 5, 8, 11, 16, 17]:
      row = []
      for name in ["exp", "log", "log1p", "tan"]:
        diff = ~same(getattr(xla_math, name)(x[:n]), np.asarray(jax.jit(getattr(jnp, name))(x[:n])))
        row.append(f"{name} {diff.sum()}")
      print(f"size {n:2d}: differing elements " + ", ".join(row))
  print("total mismatches (large arrays and 0-d):", bad)


if __name__ == "__main__":
  main()
