"""Train an equinox MLP with optax, written for JAX and run on jaxlite unchanged.

The program imports ``jax``, ``equinox`` and ``optax`` as any JAX user would; started with
``python -m jaxlite`` every ``jax`` module resolves to jaxlite. It fits ``eqx.nn.MLP`` to
a small synthetic regression problem: the model is applied to one example and mapped over
the batch with ``eqx.filter_vmap``, the loss is differentiated with ``eqx.filter_grad``
(only the model's arrays are differentiated, its activation functions are left alone),
and one ``eqx.filter_jit`` step applies ``optax.adam``'s update with
``eqx.apply_updates``. It prints the loss as it falls.

Run:  pip install equinox==0.13.8 optax==0.2.8
      python -m jaxlite examples/equinox_mlp.py [--steps 30]

On the real JAX (``python examples/equinox_mlp.py``) it prints the same numbers, up to
float32 rounding.
"""
import argparse
import sys

try:
  import equinox as eqx
  import optax
except ImportError as e:
  sys.exit(f"This example needs equinox and optax ({e}).\n"
           "Install them with: pip install equinox==0.13.8 optax==0.2.8")

import jax
import jax.numpy as jnp


def make_data(key, n=64, din=4):
  """Inputs x ~ N(0, 1) and targets y = sin(x @ w) + 0.05 noise, for a fixed w."""
  kx, kw, kn = jax.random.split(key, 3)
  x = jax.random.normal(kx, (n, din))
  w = jax.random.normal(kw, (din, 1))
  y = jnp.sin(x @ w) + 0.05 * jax.random.normal(kn, (n, 1))
  return x, y


def loss_fn(model, x, y):
  # The model maps one example; filter_vmap maps it over the batch.
  return jnp.mean((eqx.filter_vmap(model)(x) - y) ** 2)


def make_step(optimizer):
  @eqx.filter_jit
  def step(model, opt_state, x, y):
    loss = loss_fn(model, x, y)
    grads = eqx.filter_grad(loss_fn)(model, x, y)
    updates, opt_state = optimizer.update(grads, opt_state, eqx.filter(model, eqx.is_array))
    return eqx.apply_updates(model, updates), opt_state, loss
  return step


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--steps", type=int, default=30)
  parser.add_argument("--lr", type=float, default=0.01)
  args = parser.parse_args(argv)

  x, y = make_data(jax.random.key(0))
  model = eqx.nn.MLP(4, 1, width_size=16, depth=2, activation=jax.nn.tanh,
                     key=jax.random.key(1))
  optimizer = optax.adam(args.lr)
  opt_state = optimizer.init(eqx.filter(model, eqx.is_array))
  step = make_step(optimizer)

  for i in range(args.steps):
    model, opt_state, loss = step(model, opt_state, x, y)
    if i % 5 == 0 or i == args.steps - 1:
      print(f"step {i:3d}: loss {float(loss):.6f}")
  print(f"final loss: {float(loss_fn(model, x, y)):.6f}")


if __name__ == "__main__":
  main()
