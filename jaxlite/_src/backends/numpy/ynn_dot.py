"""XLA CPU's float32 dot through YNNPACK, bit for bit, in NumPy.

XLA:CPU (JAX 0.10.2) routes an f32 ``dot_general`` with row-major layouts,
output dims >= 2 and max(m, k, n) >= 8 to a ``__ynn_fusion``. YNNPACK then runs
an AVX-512 kernel whose summation order depends on the kernel's ``tile_k``:

* each output keeps ``tile_k`` FMA accumulators; accumulator ``l`` sums the
  products with ``j % tile_k == l``, in ascending ``j``, starting from +0;
* the accumulators are folded pairwise: ``a0`` (tk=1), ``a0+a1`` (tk=2),
  ``(a0+a1)+(a2+a3)`` (tk=4);
* the ``k % tile_k`` tail is run through the same kernel on a zero-padded copy
  of A and the folded tail is added onto the main result with one f32 add.

``tile_k`` is picked by YNNPACK's cost model when the graph is built; there
m is still unknown, so the choice depends only on (n, k). ``_tile_k`` replays
that model over the kernels an AVX-512 host offers; a host without AVX-512
(or another YNNPACK version) picks differently, so this is host dependent.
Checked over 1,464 shapes (benchmarks/probes/ynn_dot_bits.py) with k up to 300; for much
larger k YNNPACK may split k into blocks, which is not modelled.
"""
import numpy as np

from jaxlite._src.backends.numpy.xla_math import fma_f32


# (block_m, block_n, block_k, tile_n, tile_k) of the f32 kernels usable on an
# AVX-512 host, in YNNPACK's kernels.inc order (ties keep the first kernel):
# avx512 k1, avx512 k2, avx512 k4, fma3 k1, avx2+fma3 k2. All use FMA.
_KERNELS = (
    [(bm, 64, 1, 16, 1) for bm in (1, 2, 3, 4, 5)]
    + [(bm, 32, 1, 16, 1) for bm in (2, 3, 4, 5)] + [(5, 16, 1, 16, 1)]
    + [(bm, 32, 2, 8, 2) for bm in (1, 2, 3, 4, 5)]
    + [(1, 16, 2, 8, 2), (4, 16, 2, 8, 2), (4, 8, 2, 8, 2), (8, 8, 2, 8, 2)]
    + [(5, 16, 4, 4, 4), (6, 8, 4, 4, 4)]   # fitted to measurements, not read from source
    + [(1, 32, 1, 8, 1), (2, 32, 1, 8, 1)]
    + [(bm, 16, 1, 8, 1) for bm in (1, 2, 3, 4, 5, 6)] + [(8, 8, 1, 8, 1)]
    + [(1, 16, 2, 4, 2), (2, 16, 2, 4, 2), (1, 8, 2, 4, 2)]
    + [(bm, 8, 2, 4, 2) for bm in (3, 4, 5, 6)] + [(bm, 4, 2, 4, 2) for bm in (4, 5, 6, 8)])


def _tile_k(n, k, m=2048):
  """tile_k of the kernel YNNPACK's cost model picks for an (n, k) B operand.

  The kernel is chosen while building the graph, when only B's shape is known,
  so m is YNNPACK's "unknown extent" 2048. Cost per kernel (float32, as in C++):
  ceil(m/bm) * ceil(n/bn) * ceil(k/bk) * (5*loads_a + 11*loads_b + 9 + 1e-4*tile).
  """
  f = np.float32
  best, tk = None, 1
  for bm, bn, bk, tn, t in _KERNELS:
    blocks = f(-(-m // bm)) * f(-(-n // bn)) * f(-(-k // bk))
    block = f(bm * bk // t * 5 + bn * bk // (tn * t) * 11 + 9) + f(tn * t) * f(1e-4)
    cost = blocks * block
    if best is None or cost < best:
      best, tk = cost, t
  return tk


def _fold(acc):
  """Pairwise fold of the accumulators, as the kernel's shuffles do it."""
  while len(acc) > 1:
    acc = [acc[i] + acc[i + 1] for i in range(0, len(acc), 2)]
  return acc[0]


def _kernel(a, b, tk):
  """One kernel call: tk FMA lanes over a (m, k) and b (n, k), k % tk == 0."""
  m, k = a.shape
  acc = np.zeros((tk, m, b.shape[0]), np.float32)
  for t in range(0, k, tk):
    acc = fma_f32(a[:, t:t + tk].T[:, :, None], b[:, t:t + tk].T[:, None, :], acc)
  return _fold(list(acc))


def ynn_dot_f32(a, b, tile_k=None):
  """``dot_general(a, b, (((1,), (1,)), ((), ())))`` as XLA's YNN fusion computes it.

  Parameters
  ----------
  a : (m, k) float32 array.
  b : (n, k) float32 array.
  tile_k : optional override of the kernel's tile_k (1, 2 or 4).

  Returns
  -------
  (m, n) float32 array, bit-identical to JAX 0.10.2 on the measured host.
  """
  a = np.ascontiguousarray(a, np.float32)
  b = np.ascontiguousarray(b, np.float32)
  m, k = a.shape
  n = b.shape[0]
  tk = tile_k or _tile_k(n, k)
  k1 = k - k % tk
  out = _kernel(a[:, :k1], b[:, :k1], tk) if k1 else None
  if k1 < k:
    # the tail runs the same kernel on zero-padded A (and zero-padded packed B)
    pad = ((0, 0), (0, tk - (k - k1)))
    tail = _kernel(np.pad(a[:, k1:], pad), np.pad(b[:, k1:], pad), tk)
    out = tail if out is None else out + tail
  if out is None:
    out = np.zeros((m, n), np.float32)
  return out
