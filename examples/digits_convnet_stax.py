"""A small convnet built with `stax` on scikit-learn's 8x8 digits (NHWC images).

Shows `jaxlite.example_libraries.stax` as in JAX's examples: layers as (init_fun,
apply_fun) pairs composed with `stax.serial` (Conv, Relu, AvgPool, Flatten, Dense,
LogSoftmax), one jitted training step that calls `jax.value_and_grad` and the optimizer's
update, and Adam from `jaxlite.example_libraries.optimizers`. Prints the held-out accuracy.

Run:  pip install -e '.[examples]'
      python examples/digits_convnet_stax.py [--epochs 8] [--quick]
"""
import argparse
import sys
import time

try:
  from sklearn.datasets import load_digits
  from sklearn.model_selection import train_test_split
except ImportError as e:
  sys.exit(f"This example needs scikit-learn ({e}).\n"
           "Install it with: pip install -e '.[examples]'")

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.example_libraries import optimizers, stax


def load_images(seed=0):
  """Digits as NHWC images (N, 8, 8, 1) scaled to [0, 1], split 75/25 with a fixed seed."""
  X, y = load_digits(return_X_y=True)
  X = (X / 16.0).reshape(-1, 8, 8, 1)
  X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=seed,
                                            stratify=y)
  return (jnp.asarray(X_tr, dtype=jnp.float32), jnp.asarray(X_te, dtype=jnp.float32),
          jnp.asarray(y_tr), jnp.asarray(y_te))


init_fun, apply_fun = stax.serial(
    stax.Conv(16, (3, 3), padding="SAME"), stax.Relu,   # (N, 8, 8, 16)
    stax.Conv(32, (3, 3), padding="SAME"), stax.Relu,   # (N, 8, 8, 32)
    stax.AvgPool((2, 2), strides=(2, 2)),               # (N, 4, 4, 32)
    stax.Flatten,                                       # (N, 512)
    stax.Dense(64), stax.Relu,
    stax.Dense(10), stax.LogSoftmax)


def loss(params, x, y):
  return -jnp.mean(jnp.sum(apply_fun(params, x) * jax.nn.one_hot(y, 10), axis=-1))


@jax.jit
def accuracy(params, x, y):
  return jnp.mean(jnp.argmax(apply_fun(params, x), axis=-1) == y)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--epochs", type=int, default=8)
  parser.add_argument("--batch-size", type=int, default=32)
  parser.add_argument("--lr", type=float, default=3e-3)
  parser.add_argument("--quick", action="store_true", help="fewer epochs (for the tests)")
  args = parser.parse_args()
  epochs = min(args.epochs, 4) if args.quick else args.epochs

  X_tr, X_te, y_tr, y_te = load_images()
  key, init_key = jax.random.split(jax.random.PRNGKey(0))
  out_shape, params = init_fun(init_key, (-1, 8, 8, 1))
  n_params = sum(p.size for p in jax.tree_util.tree_leaves(params))
  print(f"convnet: input (-1, 8, 8, 1) -> output {out_shape}, {n_params} parameters")
  opt_init, opt_update, get_params = optimizers.adam(args.lr)

  @jax.jit
  def step(i, opt_state, x, y):
    value, grads = jax.value_and_grad(loss)(get_params(opt_state), x, y)
    return value, opt_update(i, grads, opt_state)

  opt_state, n_batches, i = opt_init(params), X_tr.shape[0] // args.batch_size, 0
  t0 = time.perf_counter()
  for epoch in range(epochs):
    key, perm_key = jax.random.split(key)
    perm = jax.random.permutation(perm_key, X_tr.shape[0])
    total = 0.0
    for b in range(n_batches):
      idx = perm[b * args.batch_size:(b + 1) * args.batch_size]
      value, opt_state = step(i, opt_state, X_tr[idx], y_tr[idx])
      total, i = total + float(value), i + 1
    print(f"epoch {epoch + 1}: loss {total / n_batches:.4f}  "
          f"test accuracy {float(accuracy(get_params(opt_state), X_te, y_te)) * 100:.2f}%  "
          f"({time.perf_counter() - t0:.1f} s)")
  print(f"test accuracy: {float(accuracy(get_params(opt_state), X_te, y_te)) * 100:.2f}%")


if __name__ == "__main__":
  main()
