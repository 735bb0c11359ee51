"""A digit classifier trained from scratch: an MLP on scikit-learn's 8x8 digits.

Shows the everyday JAX training loop with jaxlite: parameters as a pytree (a list of
(W, b) pairs), `jax.nn` activations, a `jax.nn.log_softmax` cross-entropy,
`jax.jit(jax.value_and_grad(loss))`, Adam from `jaxlite.example_libraries.optimizers`,
and minibatches drawn with `jax.random.permutation`. The data ships with scikit-learn
(1797 images, nothing to download). Prints the held-out accuracy and saves a PNG of the
loss curve.

Run:  pip install -e '.[examples]'
      python examples/mnist_digits_mlp.py [--epochs 30] [--quick] [--out PNG]
(the loss curve goes to examples/out/digits_loss.png unless --out says otherwise)
"""
import argparse
import os
import sys
import time

try:
  import matplotlib
  import tqdm
  from sklearn.datasets import load_digits
  from sklearn.model_selection import train_test_split
except ImportError as e:
  sys.exit(f"This example needs scikit-learn, tqdm and matplotlib ({e}).\n"
           "Install them with: pip install -e '.[examples]'")

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.example_libraries import optimizers


def load_data(seed=0):
  """Standardized digits, split 75/25 (stratified) with a fixed seed."""
  X, y = load_digits(return_X_y=True)
  X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25, random_state=seed,
                                            stratify=y)
  mean, std = X_tr.mean(0), X_tr.std(0) + 1e-6  # statistics of the training set only
  X_tr, X_te = [jnp.asarray((X - mean) / std, dtype=jnp.float32) for X in (X_tr, X_te)]
  return X_tr, X_te, jnp.asarray(y_tr), jnp.asarray(y_te)


def init_mlp(key, sizes):
  """A list of (W, b) pairs with He-normal weights: a pytree the optimizer walks."""
  keys = jax.random.split(key, len(sizes) - 1)
  return [(jax.random.normal(k, (m, n)) * jnp.sqrt(2.0 / m), jnp.zeros(n))
          for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def predict(params, x):
  """Log-probabilities of the 10 classes."""
  for W, b in params[:-1]:
    x = jax.nn.gelu(x @ W + b)
  W, b = params[-1]
  return jax.nn.log_softmax(x @ W + b)


def loss(params, x, y):
  """Mean cross-entropy of the labels under the model."""
  return -jnp.mean(jnp.sum(predict(params, x) * jax.nn.one_hot(y, 10), axis=-1))


@jax.jit
def accuracy(params, x, y):
  return jnp.mean(jnp.argmax(predict(params, x), axis=-1) == y)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--epochs", type=int, default=30)
  parser.add_argument("--batch-size", type=int, default=64)
  parser.add_argument("--lr", type=float, default=2e-3)
  parser.add_argument("--quick", action="store_true", help="fewer epochs (for the tests)")
  parser.add_argument("--out", default=os.path.join("examples", "out", "digits_loss.png"))
  args = parser.parse_args()
  epochs = min(args.epochs, 10) if args.quick else args.epochs

  X_tr, X_te, y_tr, y_te = load_data()
  print(f"train {X_tr.shape}, test {X_te.shape}, backend {jax.default_backend()}")
  key, init_key = jax.random.split(jax.random.PRNGKey(0))
  opt_init, opt_update, get_params = optimizers.adam(args.lr)
  opt_state = opt_init(init_mlp(init_key, [64, 128, 64, 10]))
  loss_and_grad = jax.jit(jax.value_and_grad(loss))
  opt_update = jax.jit(opt_update)  # the update of every leaf in one compiled call

  # Whole batches only: every step sees the same shapes, so each function compiles once.
  n_batches = X_tr.shape[0] // args.batch_size
  losses, step, t0 = [], 0, time.perf_counter()
  for epoch in (bar := tqdm.trange(epochs, desc="epochs")):
    key, perm_key = jax.random.split(key)
    perm = jax.random.permutation(perm_key, X_tr.shape[0])
    for i in range(n_batches):
      idx = perm[i * args.batch_size:(i + 1) * args.batch_size]
      value, grads = loss_and_grad(get_params(opt_state), X_tr[idx], y_tr[idx])
      opt_state = opt_update(step, grads, opt_state)
      losses.append(float(value))
      step += 1
    bar.set_postfix(loss=f"{sum(losses[-n_batches:]) / n_batches:.4f}")
  params = get_params(opt_state)
  print(f"trained {epochs} epochs ({step} steps) in {time.perf_counter() - t0:.1f} s")
  print(f"train accuracy: {float(accuracy(params, X_tr, y_tr)) * 100:.2f}%")
  print(f"test accuracy: {float(accuracy(params, X_te, y_te)) * 100:.2f}%")

  matplotlib.use("Agg")
  import matplotlib.pyplot as plt
  fig, ax = plt.subplots(figsize=(6, 4))
  ax.plot(losses, lw=0.8)
  ax.set(xlabel="step", ylabel="cross-entropy", yscale="log",
         title="MLP on sklearn digits (jaxlite)")
  os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
  fig.savefig(args.out, dpi=100, bbox_inches="tight")
  print(f"saved loss curve to {args.out}")


if __name__ == "__main__":
  main()
