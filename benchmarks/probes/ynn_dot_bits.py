"""Check ynn_dot_f32 against JAX's YNNPACK f32 dot, bit for bit.

  /work/jaxref/bin/python benchmarks/probes/ynn_dot_bits.py record [out.npz]
  PYTHONPATH=. python benchmarks/probes/ynn_dot_bits.py compare [out.npz]

record draws float32 z (m, k) and L (n, k) at a few scales, runs
jnp.einsum('...ij,...j->...i', L, z) (i.e. dot_general(z, L, contract k)) under
jit, and saves inputs, outputs and whether the compiled HLO is a __ynn_fusion.
compare recomputes the YNN shapes with ynn_dot_f32 and counts differing bits.
"""
import os
import sys

import numpy as np

MS = [2, 3, 7, 8, 9, 16, 17, 64, 100, 1000]
SQUARE = list(range(1, 131)) + [200, 256, 300]
RECT = [(n, k) for n in (8, 17, 33, 50, 64, 65, 97, 130) for k in (1, 3, 5, 9, 31, 64, 97, 257)]
SCALES = [1.0, 1e-3, 1e3, 0]  # 0: mixed magnitudes per element


def shapes():
  for n in SQUARE:
    for m in MS:
      yield m, n, n
  for n, k in RECT:
    for m in (2, 9, 100):
      yield m, n, k


def draw(rng, shape, scale):
  x = rng.standard_normal(shape)
  x = x * (10.0 ** rng.uniform(-4, 4, shape) if scale == 0 else scale)
  return x.astype(np.float32)


def record(path):
  import jax
  import jax.numpy as jnp
  f = jax.jit(lambda L, z: jnp.einsum('...ij,...j->...i', L, z))
  rng = np.random.default_rng(0)
  out = {}
  for i, (m, n, k) in enumerate(shapes()):
    scale = SCALES[i % len(SCALES)]
    z, L = draw(rng, (m, k), scale), draw(rng, (n, k), scale)
    ynn = '__ynn_fusion' in f.lower(L, z).compile().as_text()
    key = f'{m}_{n}_{k}_{int(ynn)}'
    out[key + '_z'], out[key + '_L'] = z, L
    out[key + '_ref'] = np.asarray(f(L, z))
  np.savez(path, **out)
  print(f'saved {len(out) // 3} shapes to {path}')


def compare(path):
  from jaxlite._src.ynn_dot import ynn_dot_f32, _tile_k
  data = np.load(path)
  keys = sorted({k.rsplit('_', 1)[0] for k in data.files},
                key=lambda s: tuple(map(int, s.split('_'))))
  from jaxlite._src.random import _xla_cpu_contract
  xla_einsum = _xla_cpu_contract()
  nbad = nynn = nbad_xla = 0
  not_ynn = []
  for key in keys:
    m, n, k, ynn = map(int, key.split('_'))
    if not ynn:   # XLA's own loops: jaxlite's XLA CPU backend compiles them the same way
      not_ynn.append((m, n, k))
      got = np.asarray(xla_einsum(data[key + '_L'], data[key + '_z']))
      nbad_xla += int((got.view(np.int32) != data[key + '_ref'].view(np.int32)).any())
      continue
    nynn += 1
    ref = data[key + '_ref']
    got = ynn_dot_f32(data[key + '_z'], data[key + '_L'])
    bad = int((got.view(np.int32) != ref.view(np.int32)).sum())
    if bad:
      nbad += 1
      print(f'MISMATCH m={m} n={n} k={k} tile_k={_tile_k(n, k)}: {bad}/{ref.size} elements')
  print(f'not YNN (XLA emitter, run on jaxlite\'s XLA backend): {len(not_ynn)} shapes, '
        f'{nbad_xla} mismatching, e.g. {not_ynn[:6]}')
  print(f'YNN shapes: {nynn}, exact: {nynn - nbad}, mismatching: {nbad}')


if __name__ == '__main__':
  mode = sys.argv[1] if len(sys.argv) > 1 else 'compare'
  path = sys.argv[2] if len(sys.argv) > 2 else '/tmp/ynn_dot_bits.npz'
  if mode == 'compare':
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', '..'))
  {'record': record, 'compare': compare}[mode](path)
