"""Train a flax.nnx MLP with Dropout and BatchNorm, written for JAX and run on jaxlite
unchanged.

The program imports ``jax``, ``flax.nnx`` and ``optax`` as any JAX user would; started with
``python -m jaxlite`` every ``jax`` module resolves to jaxlite. It fits a two-layer network
to a small synthetic regression problem with ``nnx.Optimizer(model, optax.adam(...))``,
one ``nnx.jit`` training step that draws dropout masks from ``nnx.Rngs`` and updates the
BatchNorm statistics in place, and prints the loss as it falls; then it evaluates the model
in eval mode (no dropout, running statistics).

Run:  pip install flax==0.12.8 optax==0.2.8
      python -m jaxlite examples/flax_nnx.py [--steps 30]

On the real JAX (``python examples/flax_nnx.py``) it prints the same numbers, up to float32
rounding.
"""
import argparse
import sys

try:
  import optax
  from flax import nnx
except ImportError as e:
  sys.exit(f"This example needs flax and optax ({e}).\n"
           "Install them with: pip install flax==0.12.8 optax==0.2.8")

import jax
import jax.numpy as jnp


class MLP(nnx.Module):
  """Linear -> BatchNorm -> relu -> Dropout -> Linear."""

  def __init__(self, din, dhidden, dout, *, rngs):
    # No bias before BatchNorm, which subtracts the mean: its gradient would be rounding
    # noise, which Adam scales up to full-size steps.
    self.linear1 = nnx.Linear(din, dhidden, use_bias=False, rngs=rngs)
    self.bn = nnx.BatchNorm(dhidden, rngs=rngs)
    self.dropout = nnx.Dropout(0.1, rngs=rngs)
    self.linear2 = nnx.Linear(dhidden, dout, rngs=rngs)

  def __call__(self, x):
    x = nnx.relu(self.bn(self.linear1(x)))
    return self.linear2(self.dropout(x))


def make_data(key, n=64, din=4):
  """Inputs x ~ N(0, 1) and targets y = sin(x @ w) + 0.05 noise, for a fixed w."""
  kx, kw, kn = jax.random.split(key, 3)
  x = jax.random.normal(kx, (n, din))
  w = jax.random.normal(kw, (din, 1))
  y = jnp.sin(x @ w) + 0.05 * jax.random.normal(kn, (n, 1))
  return x, y


def loss_fn(model, x, y):
  return jnp.mean((model(x) - y) ** 2)


@nnx.jit
def train_step(model, optimizer, x, y):
  loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
  optimizer.update(model, grads)
  return loss


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--steps", type=int, default=30)
  parser.add_argument("--lr", type=float, default=0.01)
  args = parser.parse_args(argv)

  x, y = make_data(jax.random.key(0))
  model = MLP(4, 16, 1, rngs=nnx.Rngs(params=1, dropout=2))
  optimizer = nnx.Optimizer(model, optax.adam(args.lr), wrt=nnx.Param)

  model.train()   # dropout on, BatchNorm from batch statistics
  for step in range(args.steps):
    loss = train_step(model, optimizer, x, y)
    if step % 5 == 0 or step == args.steps - 1:
      print(f"step {step:3d}: loss {float(loss):.6f}")

  model.eval()    # dropout off, BatchNorm from its running statistics
  print(f"eval loss: {float(loss_fn(model, x, y)):.6f}")
  print(f"optimizer steps: {int(optimizer.step[...])}")


if __name__ == "__main__":
  main()
