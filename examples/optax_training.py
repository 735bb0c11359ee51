"""Train a small MLP with optax, written for JAX and run on jaxlite unchanged.

The program imports ``jax``, ``jax.numpy`` and ``optax`` as any JAX user would; started with
``python -m jaxlite`` every ``jax`` module resolves to jaxlite. It fits a two-layer network
to a noisy sine curve with ``optax.chain(clip_by_global_norm, adamw)`` and a cosine decay
schedule, inside one jitted training step, and prints the loss as it falls.

Run:  pip install --no-deps optax==0.2.8 && pip install absl-py toolz typing_extensions
      python -m jaxlite examples/optax_training.py [--steps 300] [--lr 0.01]
"""
import argparse
import sys

try:
  import optax
except ImportError as e:
  sys.exit(f"This example needs optax ({e}).\nInstall it with: pip install --no-deps "
           "optax==0.2.8 && pip install absl-py toolz typing_extensions")

import jax
import jax.numpy as jnp


def init_params(key, sizes=(1, 32, 1)):
  """Weights with 1/sqrt(fan_in) scale and zero biases, one (w, b) pair per layer."""
  params = []
  for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
    key, sub = jax.random.split(key)
    params.append({"w": jax.random.normal(sub, (fan_in, fan_out)) / jnp.sqrt(fan_in),
                   "b": jnp.zeros(fan_out)})
  return params


def predict(params, x):
  for layer in params[:-1]:
    x = jnp.tanh(x @ layer["w"] + layer["b"])
  return x @ params[-1]["w"] + params[-1]["b"]


def loss_fn(params, x, y):
  return jnp.mean(optax.losses.squared_error(predict(params, x), y))


def make_data(key, n=256):
  kx, kn = jax.random.split(key)
  x = jax.random.uniform(kx, (n, 1), minval=-3.0, maxval=3.0)
  return x, jnp.sin(x) + 0.05 * jax.random.normal(kn, (n, 1))


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--steps", type=int, default=300)
  parser.add_argument("--lr", type=float, default=0.01)
  args = parser.parse_args(argv)

  key = jax.random.PRNGKey(0)
  x, y = make_data(key)
  params = init_params(jax.random.PRNGKey(1))
  schedule = optax.cosine_decay_schedule(args.lr, decay_steps=args.steps, alpha=0.1)
  optimizer = optax.chain(optax.clip_by_global_norm(1.0),
                          optax.adamw(schedule, weight_decay=1e-4))
  opt_state = optimizer.init(params)

  @jax.jit
  def step(params, opt_state):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss

  first = None
  for i in range(args.steps):
    params, opt_state, loss = step(params, opt_state)
    first = float(loss) if first is None else first
    if i % max(1, args.steps // 5) == 0:
      print(f"step {i:4d}  loss {float(loss):.4f}")
  final = float(loss_fn(params, x, y))
  print(f"final loss {final:.4f} (from {first:.4f})")
  if not final < first / 2:
    sys.exit("the loss did not fall: training failed")


if __name__ == "__main__":
  main()
