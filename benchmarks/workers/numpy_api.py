"""Benchmark worker for plain NumPy: the baseline with no tracing, compiling or autodiff.

    python numpy_api.py --job heavy

Gradients are written by hand (the MLP's backward pass, W7's per-example gradients, W8's
analytic Hessian). "First call" is the first call of the plain function in a fresh
process. NumPy has no scan, so W6's scan rows are "n/a".
"""
from _common import (Worker, once, timed_import, SHAPES, HEAVY_SIZE, LR, heavy_fn, mlp_data,
                     small_mlp_data, hessian_input, SMALL_STEADY)

w = Worker()
(np,) = timed_import(w, "numpy")
w.versions(numpy=np.__version__)


def job_small():
  x = np.arange(4, dtype=np.float32)
  w.emit("w1_eager_sin", w.steady(lambda: np.sin(x), number=200))
  f = lambda x: x ** 2 + 1  # noqa: E731
  w.emit("w2_jit_cached", w.steady(lambda: f(x), number=200))


heavy = heavy_fn(np)


def job_heavy():
  x = np.arange(HEAVY_SIZE, dtype=np.float32)
  w.emit("w3_heavy_first", once(lambda: heavy(x)))
  w.emit("w4_heavy_steady", w.steady(lambda: heavy(x), warmup=1))


def sgd_step(params, x, y):
  """Forward, hand-written backward of the mean softmax cross-entropy, SGD update."""
  hs = [x]
  for W, b in params[:-1]:
    hs.append(np.tanh(hs[-1] @ W + b))
  W, b = params[-1]
  logits = hs[-1] @ W + b
  p = np.exp(logits - logits.max(axis=1, keepdims=True))
  d = (p / p.sum(axis=1, keepdims=True) - y) / x.shape[0]
  new = []
  for i in reversed(range(len(params))):
    W, b = params[i]
    new.append((W - LR * (hs[i].T @ d), b - LR * d.sum(axis=0)))
    if i:
      d = (d @ W.T) * (1 - hs[i] ** 2)
  return new[::-1]


def job_mlp():
  params, x, y = mlp_data(np)
  w.emit("w5_mlp_first", once(lambda: sgd_step(params, x, y)))
  w.emit("w5_mlp_steady", w.steady(lambda: sgd_step(params, x, y)))


def job_loops():
  x = np.ones(1024, dtype=np.float32)
  for n in (200, 2000):
    w.emit(f"w6_scan{n}_first", unavailable="n/a (no scan in NumPy)")

  for n in (200, 2000):
    def python_loop(y):
      for _ in range(n):
        y = np.sin(y) + 0.01 * y
      return y
    w.emit(f"w6_loop{n}_first", once(lambda: python_loop(x)))


def per_example_grads(p, xs, ys):
  """Gradients of (mlp(x) - y)**2 for each example, batched by hand."""
  W1, b1, W2, b2 = p
  h = np.tanh(xs @ W1 + b1)
  r = 2 * ((h @ W2 + b2)[:, 0] - ys)
  dh = r[:, None] * W2[:, 0] * (1 - h ** 2)
  return xs[:, :, None] * dh[:, None, :], dh, h[:, :, None] * r[:, None, None], r[:, None]


def hessian(x):
  """Hessian of sum(tanh(x)**3): diagonal, (6t - 12t^3)(1 - t^2) with t = tanh(x)."""
  t = np.tanh(x)
  return np.diag((6 * t - 12 * t ** 3) * (1 - t ** 2))


def job_transforms():
  params, xs, ys = small_mlp_data(np)
  w.emit("w7_vmap_grad_first", once(lambda: per_example_grads(params, xs, ys)))
  w.emit("w7_vmap_grad_steady",
         w.steady(lambda: per_example_grads(params, xs, ys), **SMALL_STEADY))
  x = hessian_input(np)
  w.emit("w8_hessian_first", once(lambda: hessian(x)))
  w.emit("w8_hessian_steady", w.steady(lambda: hessian(x), **SMALL_STEADY))


def job_shapes():
  f = lambda x: (x ** 2).sum()  # noqa: E731
  for i, s in enumerate(SHAPES):
    x = np.ones(s, dtype=np.float32)
    w.emit(f"w9_call{i + 1}_{s[0]}", once(lambda: f(x)))


w.run({"small": job_small, "heavy": job_heavy, "mlp": job_mlp, "loops": job_loops,
       "transforms": job_transforms, "shapes": job_shapes,
       "stalls": lambda: w.unavailable("n/a (W11 measures the jit tiers' first calls)")})
