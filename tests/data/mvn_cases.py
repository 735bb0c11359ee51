"""The multivariate_normal draws recorded from JAX (make_random_reference.py) and replayed
by tests/test_random.py.

XLA's dot takes a different code path by size: its own loops when every dimension is below
8, YNNPACK's kernels from 8 on, a multiply fused into the normal sampler for n = 1, and
matrix-vector loops for a single draw or a batch of covariances; the cases visit each.
"""
import numpy as np

N = (1, 2, 3, 5, 7, 8, 9, 16, 17, 33, 64)
SHAPES = ((), (1,), (2,), (7,), (10,), (3, 5), (100,))


def _name(method, n, batch, shape):
  return f"mvn@{method}@{n}@{'x'.join(map(str, batch))}_{'x'.join(map(str, shape))}"


CASES = {_name(*case): case for case in (
    [("cholesky", n, (), shape) for n in N for shape in SHAPES]
    + [(m, n, (), shape) for m in ("eigh", "svd") for n in (3, 8, 17) for shape in ((4,), (10,))]
    + [("cholesky", n, (3,), shape) for n in (1, 4, 9) for shape in ((3,), (2, 3))])}


def inputs(n, batch=()):
  """A mean and an SPD covariance built exactly (small dyadic integers, one division), so
  that the recording and the test construct the same float32 values."""
  a = (np.arange(int(np.prod(batch, dtype=int)) * n * (n + 2)) % 7 - 3.0) / 4
  a = a.reshape(batch + (n, n + 2))
  cov = a @ np.swapaxes(a, -1, -2) / n + 0.5 * np.eye(n)
  mean = np.arange(n) / 4 - 1
  return mean.astype(np.float32), cov.astype(np.float32)
