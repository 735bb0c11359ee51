"""Per-example gradients with `jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))`.

`jax.grad` gives the gradient of one example's loss; `vmap` maps it over the batch axis of
the data while sharing the parameters (`in_axes=None`), so one call returns a pytree
whose every leaf has a leading batch dimension. The script checks the result against a
Python loop over examples, computes per-example gradient norms and clips them as
differentially-private SGD (DP-SGD) does, and times the vmapped version against the loop.
Needs only jaxlite.

Run:  python examples/per_example_gradients.py [--batch 128] [--quick]
"""
import argparse
import time

import numpy as np

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.example_libraries import optimizers


def init_mlp(key, sizes):
  keys = jax.random.split(key, len(sizes) - 1)
  return [{"W": jax.random.normal(k, (m, n)) / jnp.sqrt(m), "b": jnp.zeros(n)}
          for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def loss(params, x, y):
  """Cross-entropy of ONE example: x has shape (features,), y is an integer label."""
  for layer in params[:-1]:
    x = jax.nn.relu(x @ layer["W"] + layer["b"])
  logits = x @ params[-1]["W"] + params[-1]["b"]
  return -jax.nn.log_softmax(logits)[y]


per_example_grads = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))
single_grad = jax.jit(jax.grad(loss))


def loop_grads(params, xs, ys):
  """The same thing, one example at a time, stacked leaf by leaf."""
  grads = [single_grad(params, x, y) for x, y in zip(xs, ys)]
  return jax.tree_util.tree_map(lambda *g: jnp.stack(g), *grads)


@jax.jit
def clipped_mean_grad(params, xs, ys, l2_clip):
  """DP-SGD's gradient: clip each example's gradient to norm <= l2_clip, then average.

  (Real DP-SGD then adds Gaussian noise of scale ~ l2_clip to the sum.)
  """
  grads = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(params, xs, ys)
  leaves = jax.tree_util.tree_leaves(grads)
  norms = jnp.sqrt(sum(jnp.sum(g.reshape(g.shape[0], -1) ** 2, axis=1) for g in leaves))
  scale = jnp.minimum(1.0, l2_clip / (norms + 1e-12))
  clipped = jax.tree_util.tree_map(
      lambda g: g * scale.reshape((-1,) + (1,) * (g.ndim - 1)), grads)
  return norms, jax.tree_util.tree_map(lambda g: jnp.mean(g, axis=0), clipped)


def best_of(f, repeat=3):
  times = []
  for _ in range(repeat):
    t0 = time.perf_counter()
    jax.block_until_ready(f())
    times.append(time.perf_counter() - t0)
  return min(times)


def main():
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--batch", type=int, default=128)
  parser.add_argument("--clip", type=float, default=4.0, help="the DP-SGD clipping norm")
  parser.add_argument("--quick", action="store_true", help="a smaller batch (for the tests)")
  args = parser.parse_args()
  batch = min(args.batch, 32) if args.quick else args.batch

  kp, kx, ky = jax.random.split(jax.random.PRNGKey(0), 3)
  params = init_mlp(kp, [20, 32, 32, 5])
  xs = jax.random.normal(kx, (batch, 20))
  ys = jax.random.randint(ky, (batch,), 0, 5)

  # The checks multiply in full float32: at the default precision a TPU multiplies float32
  # matrices in bf16 passes, and a batched product rounds differently from a looped one.
  with jax.default_matmul_precision("highest"):
    grads = per_example_grads(params, xs, ys)
    print("per-example gradient shapes:",
          jax.tree_util.tree_map(lambda g: g.shape, grads)[0])
    reference = loop_grads(params, xs, ys)
    err = max(float(jnp.max(jnp.abs(a - b))) for a, b in
              zip(jax.tree_util.tree_leaves(grads), jax.tree_util.tree_leaves(reference)))
    print(f"max |vmap - loop| = {err:.2e}")
    assert err < 1e-5, err
    # The mean of the per-example gradients is the gradient of the mean loss.
    batch_grad = jax.grad(lambda p: jnp.mean(jax.vmap(loss, (None, 0, 0))(p, xs, ys)))(params)
    err_mean = max(float(jnp.max(jnp.abs(jnp.mean(a, 0) - b))) for a, b in
                   zip(jax.tree_util.tree_leaves(grads), jax.tree_util.tree_leaves(batch_grad)))
  print(f"max |mean(per-example) - grad(mean loss)| = {err_mean:.2e}")
  assert err_mean < 1e-5, err_mean
  print("per-example gradients match the loop: OK")

  norms, clipped = clipped_mean_grad(params, xs, ys, args.clip)
  norms_np = np.asarray(norms)
  print(f"per-example gradient norms: min {norms_np.min():.3f}  median "
        f"{np.median(norms_np):.3f}  max {norms_np.max():.3f}")
  clipped_norm = float(optimizers.l2_norm(clipped))
  print(f"clipped to norm <= {args.clip}: {int((norms_np > args.clip).sum())} of {batch} "
        f"examples were scaled down; the norm of their mean is {clipped_norm:.3f}")

  t_vmap = best_of(lambda: per_example_grads(params, xs, ys))
  t_loop = best_of(lambda: loop_grads(params, xs, ys))
  print(f"batch {batch}: vmap {t_vmap * 1e3:.2f} ms, Python loop {t_loop * 1e3:.2f} ms "
        f"({t_loop / t_vmap:.0f}x)")


if __name__ == "__main__":
  main()
