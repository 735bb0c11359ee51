"""Benchmark worker for PyTorch (CPU), eager or under ``torch.compile``.

    python torch_api.py --mode eager|compile --job heavy

Eager "first call" figures are the first call of the plain function in a fresh process.
Under ``--mode compile`` every workload function is wrapped in ``torch.compile``; the MLP
compiles the loss and lets AOTAutograd compile its backward (the usual training setup).
PyTorch has no public ``scan``, so W6's scan rows are "n/a".
"""
from _common import (Worker, once, timed_import, SHAPES, HEAVY_SIZE, LR, heavy_fn, mlp_data,
                     small_mlp_data, per_example_loss_fn, hessian_input, SMALL_STEADY)

w = Worker()
(torch,) = timed_import(w, "torch")
import numpy as np  # noqa: E402 (after the timed import)

w.versions(torch=torch.__version__, numpy=np.__version__)
compiled = w.args.mode == "compile"
maybe_compile = torch.compile if compiled else (lambda f: f)


def job_small():
  x = torch.arange(4, dtype=torch.float32)
  if compiled:
    w.emit("w1_eager_sin", unavailable="n/a (eager op: see torch)")
  else:
    w.emit("w1_eager_sin", w.steady(lambda: torch.sin(x), number=200))
  f = maybe_compile(lambda x: x ** 2 + 1)
  w.emit("w2_jit_cached", w.steady(lambda: f(x), number=200))


heavy = heavy_fn(torch)


def job_heavy():
  x = torch.arange(HEAVY_SIZE, dtype=torch.float32)
  f = maybe_compile(heavy)
  w.emit("w3_heavy_first", once(lambda: f(x)))
  w.emit("w4_heavy_steady", w.steady(lambda: f(x), warmup=1))


def mlp_loss(params, x, y):
  h = x
  for W, b in params[:-1]:
    h = torch.tanh(h @ W + b)
  W, b = params[-1]
  return -(torch.log_softmax(h @ W + b, dim=1) * y).sum(dim=1).mean()


def job_mlp():
  params, x, y = mlp_data(np)
  params = [(torch.tensor(W, requires_grad=True), torch.tensor(b, requires_grad=True))
            for W, b in params]
  x, y = torch.tensor(x), torch.tensor(y)
  loss_fn = maybe_compile(mlp_loss)
  flat = [p for layer in params for p in layer]

  def step():  # gradient + SGD update, applied out of place to keep the work constant
    for p in flat:
      p.grad = None
    loss_fn(params, x, y).backward()
    with torch.no_grad():
      return [p - LR * p.grad for p in flat]

  w.emit("w5_mlp_first", once(step))
  w.emit("w5_mlp_steady", w.steady(step))


def job_loops():
  x = torch.ones(1024, dtype=torch.float32)
  for n in (200, 2000):
    w.emit(f"w6_scan{n}_first", unavailable="n/a (no public scan in torch)")

  for n in (200, 2000):
    def python_loop(y):
      for _ in range(n):
        y = torch.sin(y) + 0.01 * y
      return y
    f = maybe_compile(python_loop)
    w.emit(f"w6_loop{n}_first", once(lambda: f(x)))


per_example_loss = per_example_loss_fn(torch)


def job_transforms():
  from torch.func import grad, hessian, vmap
  params, xs, ys = small_mlp_data(np)
  params, xs, ys = tuple(map(torch.tensor, params)), torch.tensor(xs), torch.tensor(ys)
  f = maybe_compile(vmap(grad(per_example_loss), in_dims=(None, 0, 0)))
  w.emit("w7_vmap_grad_first", once(lambda: f(params, xs, ys)))
  w.emit("w7_vmap_grad_steady", w.steady(lambda: f(params, xs, ys), **SMALL_STEADY))
  x = torch.tensor(hessian_input(np))
  h = maybe_compile(hessian(lambda x: (torch.tanh(x) ** 3).sum()))
  w.emit("w8_hessian_first", once(lambda: h(x)))
  w.emit("w8_hessian_steady", w.steady(lambda: h(x), **SMALL_STEADY))


def job_shapes():
  f = maybe_compile(lambda x: (x ** 2).sum())
  for i, s in enumerate(SHAPES):
    x = torch.ones(s, dtype=torch.float32)
    w.emit(f"w9_call{i + 1}_{s[0]}", once(lambda: f(x)))


w.run({"small": job_small, "heavy": job_heavy, "mlp": job_mlp, "loops": job_loops,
       "transforms": job_transforms, "shapes": job_shapes,
       "stalls": lambda: w.unavailable("n/a (W11 measures the jit tiers' first calls)")})
