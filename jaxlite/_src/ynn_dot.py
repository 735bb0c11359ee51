"""The float32 dot that JAX's XLA CPU backend hands to YNNPACK, in YNNPACK's order.

XLA CPU (JAX 0.10.2) sends an f32 ``dot_general`` with row-major layouts, both output
dimensions >= 2 and some dimension >= 8 to a ``__ynn_fusion``. YNNPACK then runs an
AVX-512 kernel whose summation order depends on the kernel's ``tile_k``:

* each output keeps ``tile_k`` FMA accumulators; accumulator ``l`` sums the products with
  ``j % tile_k == l``, in ascending ``j``, starting from +0;
* the accumulators are folded pairwise: ``a0`` (1), ``a0+a1`` (2), ``(a0+a1)+(a2+a3)`` (4);
* the ``k % tile_k`` tail runs through the same kernel on zero-padded operands, and its
  folded result is added to the main one.

``tile_k`` is chosen by YNNPACK's cost model while the graph is built, when m is still
unknown, so it depends only on (n, k); ``_tile_k`` replays that model over the kernels an
AVX-512 host offers. A host without AVX-512 (or another YNNPACK) picks differently: the
bits are host dependent, like JAX's. Checked on 1,464 shapes with k up to 300
(benchmarks/probes/ynn_dot_bits.py); for much larger k YNNPACK may split k into blocks,
which is not modelled.

The accumulation loop runs on jaxlite's XLA CPU backend, which contracts ``acc + a * b``
into one FMA as YNNPACK's kernels do: replayed in NumPy, every product needs a correctly
rounded FMA (``xla_math.fma``), 50-100x slower.
"""
import functools

import numpy as np

from jaxlite._src.lax import control_flow as lcf


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


def _fold(lanes):
  """Pairwise fold of the accumulators, as the kernel's shuffles do it."""
  while len(lanes) > 1:
    lanes = [lanes[i] + lanes[i + 1] for i in range(0, len(lanes), 2)]
  return lanes[0]


def _accumulate(lanes, a_steps, b_steps):
  """``lanes[l] += a_steps[i, l] (x) b_steps[i, l]`` for each step i, one FMA per product."""
  def step(i, acc):
    return acc + a_steps[i][:, :, None] * b_steps[i][:, None, :]
  return lcf.fori_loop(0, a_steps.shape[0], step, lanes)


@functools.cache
def _compiled_accumulate():
  from jaxlite._src.jit import jit
  return jit(_accumulate, backend="cpu")


def _kernel(a, b, tk):
  """One kernel over a (m, K) and b (n, K), K a multiple of tk: tk FMA lanes, folded.

  The FMAs run on XLA (compiled, it contracts ``acc + a * b`` into one FMA); the first
  product and the folds run in NumPy, where XLA would fold ``0 + a * b`` to ``a * b`` and
  contract the folding adds with the products they add.
  """
  (m, k), n = a.shape, b.shape[0]
  a_steps = a.reshape(m, k // tk, tk).transpose(1, 2, 0)   # (steps, tk, m)
  b_steps = b.reshape(n, k // tk, tk).transpose(1, 2, 0)   # (steps, tk, n)
  # the first FMA onto +0: the product rounded once, and -0 becomes +0
  lanes = a_steps[0][:, :, None] * b_steps[0][:, None, :] + np.float32(0)
  if len(a_steps) > 1:
    lanes = np.asarray(_compiled_accumulate()(lanes, a_steps[1:], b_steps[1:]))
  return _fold(list(lanes))


def ynn_dot_f32(a, b):
  """``dot_general(a, b, (((1,), (1,)), ((), ())))`` as XLA's YNN fusion computes it.

  Parameters
  ----------
  a : (m, k) float32 array
  b : (n, k) float32 array

  Returns
  -------
  numpy.ndarray
    (m, n) float32, bit-identical to JAX 0.10.2 on an AVX-512 host. Needs the XLA CPU
    backend (the caller checks that it is there).
  """
  a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
  (m, k), n = a.shape, b.shape[0]
  tk = _tile_k(n, k)
  whole = k - k % tk
  out = _kernel(a[:, :whole], b[:, :whole], tk) if whole else None
  if whole < k:
    pad = ((0, 0), (0, tk - (k - whole)))
    tail = _kernel(np.pad(a[:, whole:], pad), np.pad(b[:, whole:], pad), tk)
    out = tail if out is None else out + tail
  return np.zeros((m, n), np.float32) if out is None else out
