"""An RNN written with `jax.lax.scan`, trained to predict a sine wave's next value.

`lax.scan(cell, h0, xs)` runs the recurrent cell over the time axis as one loop in the
compiled program (not one copy of the cell per time step), so compile time does not grow
with the sequence length, and `jax.grad` differentiates through the whole scan
(backpropagation through time). Each training sequence is a sine wave with a random
phase and frequency; the model reads it one value at a time and predicts the next one.
The script prints the loss as it falls and compares it with the "repeat the last value"
baseline. Needs only jaxlite.

Run:  python examples/scan_rnn.py [--steps 300] [--quick]
"""
import argparse
import time

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.example_libraries import optimizers

HIDDEN, SEQ_LEN, BATCH = 32, 40, 64


def init_params(key, hidden=HIDDEN):
  k1, k2, k3 = jax.random.split(key, 3)
  return {"W_xh": jax.random.normal(k1, (1, hidden)) * 0.5,
          "W_hh": jax.random.normal(k2, (hidden, hidden)) / jnp.sqrt(hidden),
          "b_h": jnp.zeros(hidden),
          "W_hy": jax.random.normal(k3, (hidden, 1)) / jnp.sqrt(hidden),
          "b_y": jnp.zeros(1)}


def rnn(params, xs):
  """xs: (time, batch, 1) -> predictions (time, batch, 1), one per input step."""
  def cell(h, x):
    h = jnp.tanh(x @ params["W_xh"] + h @ params["W_hh"] + params["b_h"])
    return h, h @ params["W_hy"] + params["b_y"]
  h0 = jnp.zeros((xs.shape[1], params["W_hh"].shape[0]))
  _, ys = jax.lax.scan(cell, h0, xs)
  return ys


def make_batch(key, batch=BATCH, seq_len=SEQ_LEN):
  """Sine waves with random phase and frequency, shaped (time, batch, 1)."""
  k1, k2 = jax.random.split(key)
  phase = jax.random.uniform(k1, (1, batch, 1), maxval=2 * jnp.pi)
  freq = jax.random.uniform(k2, (1, batch, 1), minval=0.1, maxval=0.3)
  t = jnp.arange(seq_len + 1, dtype=jnp.float32)[:, None, None]
  wave = jnp.sin(freq * t + phase)
  return wave[:-1], wave[1:]   # inputs, next-step targets


def loss(params, xs, targets):
  # Skip the first steps: the hidden state needs a few values to infer the frequency.
  return jnp.mean((rnn(params, xs) - targets)[5:] ** 2)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--steps", type=int, default=300)
  parser.add_argument("--lr", type=float, default=1e-2)
  parser.add_argument("--quick", action="store_true", help="fewer steps (for the tests)")
  args = parser.parse_args()
  steps = min(args.steps, 150) if args.quick else args.steps

  key, init_key, test_key = jax.random.split(jax.random.PRNGKey(0), 3)
  opt_init, opt_update, get_params = optimizers.adam(args.lr)

  @jax.jit
  def train_step(i, opt_state, xs, targets):
    value, grads = jax.value_and_grad(loss)(get_params(opt_state), xs, targets)
    return value, opt_update(i, grads, opt_state)

  jaxpr = jax.make_jaxpr(rnn)(init_params(init_key), jnp.zeros((SEQ_LEN, 2, 1))).jaxpr
  scan = next(e for e in jaxpr.eqns if e.primitive.name == "scan")
  print(f"the jaxpr of rnn: {len(jaxpr.eqns)} equations, one of them a scan of length "
        f"{scan.params['length']} whose body (the cell) has {len(scan.params['jaxpr'].eqns)}")
  test_xs, test_targets = make_batch(test_key, batch=256)
  baseline = float(jnp.mean((test_xs - test_targets)[5:] ** 2))
  opt_state, t0 = opt_init(init_params(init_key)), time.perf_counter()
  initial = float(loss(get_params(opt_state), test_xs, test_targets))
  print(f"step    0: test loss {initial:.5f}")
  for i in range(steps):
    key, batch_key = jax.random.split(key)
    value, opt_state = train_step(i, opt_state, *make_batch(batch_key))
    if (i + 1) % (steps // 6) == 0 or i + 1 == steps:
      test = float(loss(get_params(opt_state), test_xs, test_targets))
      print(f"step {i + 1:4d}: train loss {float(value):.5f}  test loss {test:.5f}  "
            f"({time.perf_counter() - t0:.1f} s)")
  final = float(loss(get_params(opt_state), test_xs, test_targets))
  print(f"baseline (predict the last value): {baseline:.5f}")
  print(f"final test loss: {final:.5f} ({initial / final:.0f}x lower than at the start, "
        f"{baseline / final:.1f}x lower than the baseline)")


if __name__ == "__main__":
  main()
