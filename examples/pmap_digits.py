"""Data-parallel training of the digits MLP on 4 CPU devices: pmap, then sharded jit.

The same SGD run three ways, from the same initial parameters and the same batches:

1. one device: ``jax.jit`` of the step on the whole batch;
2. ``jax.pmap``: the batch split into 4 per-device slices, each device computes the
   gradient of its slice and ``lax.pmean`` averages them across devices (one XLA program
   with 4 replicas and an all-reduce);
3. ``jax.jit`` with ``NamedSharding``: the batch laid out over a 4-device mesh, the
   parameters replicated; XLA's SPMD partitioner splits the program itself.

The three loss curves agree to float32 rounding (the script checks it). The devices are
CPU devices that XLA's CPU client creates on request (``jax_num_cpu_devices``).

Run:  pip install -e '.[examples]'
      python examples/pmap_digits.py [--steps 200] [--quick]
"""
import argparse
import sys
import time

try:
  from sklearn.datasets import load_digits
except ImportError as e:
  sys.exit(f"This example needs scikit-learn ({e}).\n"
           "Install it with: pip install -e '.[examples]'")

import numpy as np

import jaxlite as jax

jax.config.update("jax_num_cpu_devices", 4)   # before the devices are first used

import jaxlite.numpy as jnp  # noqa: E402
from jaxlite import lax  # noqa: E402
from jaxlite.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

N_DEV = 4


def init_mlp(key, sizes):
  keys = jax.random.split(key, len(sizes) - 1)
  return [(jax.random.normal(k, (m, n)) * jnp.sqrt(2.0 / m), jnp.zeros(n))
          for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def loss(params, x, y):
  for W, b in params[:-1]:
    x = jnp.tanh(x @ W + b)
  W, b = params[-1]
  logp = jax.nn.log_softmax(x @ W + b)
  return -jnp.mean(jnp.sum(logp * jax.nn.one_hot(y, 10), axis=-1))


def sgd(params, grads, lr):
  return jax.tree.map(lambda p, g: p - lr * g, params, grads)


def single_step(params, x, y, lr):
  value, grads = jax.value_and_grad(loss)(params, x, y)
  return sgd(params, grads, lr), value


def pmap_step(params, x, y, lr):
  # each device: the gradient of its quarter of the batch; pmean: the whole batch's
  value, grads = jax.value_and_grad(loss)(params, x, y)
  grads, value = lax.pmean((grads, value), "batch")
  return sgd(params, grads, lr), value


def batches(X, y, steps, batch, seed=0):
  rng = np.random.RandomState(seed)
  for _ in range(steps):
    idx = rng.choice(len(X), batch, replace=False)
    yield X[idx], y[idx]


def train(step, params, data, place=lambda p, x, y: (p, x, y)):
  losses = []
  t0 = time.perf_counter()
  for x, y in data:
    params, x, y = place(params, x, y)
    params, value = step(params, x, y)
    losses.append(np.asarray(value).reshape(-1)[0])
  return np.array(losses), time.perf_counter() - t0, params


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--steps", type=int, default=200)
  parser.add_argument("--batch", type=int, default=256)
  parser.add_argument("--lr", type=float, default=0.1)
  parser.add_argument("--quick", action="store_true", help="fewer steps (for the tests)")
  args = parser.parse_args()
  steps = min(args.steps, 40) if args.quick else args.steps

  X, y = load_digits(return_X_y=True)
  X = ((X - X.mean(0)) / (X.std(0) + 1e-6)).astype(np.float32)
  y = y.astype(np.int32)
  params = init_mlp(jax.random.PRNGKey(0), [64, 128, 10])
  print(f"devices: {jax.devices()}")

  one = jax.jit(lambda p, x, y: single_step(p, x, y, args.lr))
  curve1, t1, _ = train(one, params, batches(X, y, steps, args.batch))

  par = jax.pmap(lambda p, x, y: pmap_step(p, x, y, args.lr), axis_name="batch",
                 in_axes=(None, 0, 0), out_axes=(None, 0))

  def split(p, x, y):
    return p, x.reshape(N_DEV, -1, 64), y.reshape(N_DEV, -1)
  curve2, t2, _ = train(par, params, batches(X, y, steps, args.batch), split)

  mesh = jax.make_mesh((N_DEV,), ("batch",))
  data_sharding = NamedSharding(mesh, P("batch"))
  replicated = NamedSharding(mesh, P())
  sharded = jax.jit(lambda p, x, y: single_step(p, x, y, args.lr),
                    in_shardings=(replicated, data_sharding, data_sharding),
                    out_shardings=(replicated, replicated))
  curve3, t3, _ = train(sharded, params, batches(X, y, steps, args.batch))

  print(f"{steps} steps of batch {args.batch}: one device {t1:.2f} s, pmap {t2:.2f} s, "
        f"sharded jit {t3:.2f} s")
  print(f"loss: first {curve1[0]:.4f}, last {curve1[-1]:.4f}")
  d_pmap = float(np.max(np.abs(curve2 - curve1) / curve1))
  d_jit = float(np.max(np.abs(curve3 - curve1) / curve1))
  print(f"max relative loss difference, pmap vs one device: {d_pmap:.2e}")
  print(f"max relative loss difference, sharded jit vs one device: {d_jit:.2e}")
  assert curve1[-1] < 0.5 * curve1[0], "the loss did not fall"
  assert d_pmap < 1e-4 and d_jit < 1e-4, "the data-parallel runs diverged from one device"
  print("the three loss curves agree to float32 rounding")


if __name__ == "__main__":
  main()
