"""Cases for ``jax.ad_checkpoint`` and ``jax.checkpoint_policies``, shared by
make_ad_checkpoint_reference.py (run on JAX 0.10.2) and tests/test_ad_checkpoint.py.
Each function takes the ``jax`` module to run on (JAX, or jaxlite)."""
import numpy as np

W = np.arange(12, dtype=np.float32).reshape(3, 4) / 10 - .3
X = np.arange(6, dtype=np.float32).reshape(2, 3) / 7 + .1
XS = np.linspace(-1, 1, 5, dtype=np.float32)


def model(jax):
  """Two named values, a batched and two unbatched matrix products."""
  jnp, name = jax.numpy, jax.ad_checkpoint.checkpoint_name

  def f(w, x):
    a = name(jnp.sin(x @ w), "a")
    b = name(jnp.tanh(a * x[:, :1]), "b")
    c = jnp.einsum("ij,ij->i", b, a)[:, None] * b
    return jnp.sum(jnp.cos(c @ w.T))
  return f


def scalar_model(jax):
  jnp, name = jax.numpy, jax.ad_checkpoint.checkpoint_name

  def g(x):
    y = name(jnp.sin(x), "y")
    return jnp.cos(y) * y
  return g


def outer_model(jax):
  """A named value used twice, through a matrix product: for second derivatives."""
  jnp, name = jax.numpy, jax.ad_checkpoint.checkpoint_name

  def h(x):
    y = name(jnp.sin(x) * x, "y")
    return jnp.sum(jnp.cos(y) @ jnp.outer(x, y))
  return h


def policies(jax):
  """One of each of JAX 0.10.2's policies, by a readable name."""
  cp = jax.checkpoint_policies
  return {
      "default": None,
      "everything_saveable": cp.everything_saveable,
      "nothing_saveable": cp.nothing_saveable,
      "dots_saveable": cp.dots_saveable,
      "checkpoint_dots": cp.checkpoint_dots,
      "dots_with_no_batch_dims_saveable": cp.dots_with_no_batch_dims_saveable,
      "checkpoint_dots_with_no_batch_dims": cp.checkpoint_dots_with_no_batch_dims,
      "offload_dot_with_no_batch_dims": cp.offload_dot_with_no_batch_dims("device",
                                                                         "pinned_host"),
      "save_only_these_names(a)": cp.save_only_these_names("a"),
      "save_any_names_but_these(a)": cp.save_any_names_but_these("a"),
      "save_anything_except_these_names(a)": cp.save_anything_except_these_names("a"),
      "save_from_both_policies(dots, b)": cp.save_from_both_policies(
          cp.dots_saveable, cp.save_only_these_names("b")),
      "save_and_offload_only_these_names(a; b)": cp.save_and_offload_only_these_names(
          names_which_can_be_saved=["a"], names_which_can_be_offloaded=["b"],
          offload_src="device", offload_dst="pinned_host"),
  }


def jaxpr_cases(jax):
  jnp, name = jax.numpy, jax.ad_checkpoint.checkpoint_name
  f1 = lambda x: name(x * 2, "a")   # noqa: E731
  g = scalar_model(jax)
  only_y = jax.checkpoint_policies.save_only_these_names("y")
  return {
      "name": (f1, (1.,)),
      "grad_of_name": (jax.grad(lambda x: jnp.sin(name(x * 2, "a"))), (1.,)),
      "jvp_of_name": (lambda x, t: jax.jvp(f1, (x,), (t,)), (1., 1.)),
      "vmap_of_name": (jax.vmap(f1), (np.ones(3, np.float32),)),
      "name_of_pytree": (lambda d: name(d, "p"),
                         ({"u": 1., "v": np.ones(2, np.int32)},)),
      "grad_of_checkpoint_saving_y": (jax.grad(jax.checkpoint(g, policy=only_y)), (1.,)),
      "grad_of_checkpoint_saving_nothing": (jax.grad(jax.checkpoint(g)), (1.,)),
  }


def residual_cases(jax):
  """Functions for ``print_saved_residuals``."""
  jnp = jax.numpy
  f, g = model(jax), scalar_model(jax)
  cases = {f"model, {k}": (jax.checkpoint(f, policy=p), (W, X))
           for k, p in policies(jax).items() if "offload" not in k}
  cases.update({
      "scalar, save_only_these_names(y)": (
          jax.checkpoint(g, policy=jax.checkpoint_policies.save_only_these_names("y")),
          (1.,)),
      "product": (lambda x, y: x * y, (1., 2.)),
      "pytree argument": (lambda w, b: jnp.sum(jnp.tanh(w["k"] * b)),
                          ({"k": np.ones(3, np.float32)}, 2.)),
  })
  return cases


def error_cases(jax):
  cp = jax.checkpoint_policies
  f = scalar_model(jax)
  return {
      "overlapping names": lambda: cp.save_and_offload_only_these_names(
          names_which_can_be_saved=["a", "b"], names_which_can_be_offloaded=["b"],
          offload_src="device", offload_dst="pinned_host"),
      "both policies not booleans": lambda: jax.grad(jax.checkpoint(
          f, policy=cp.save_from_both_policies(
              cp.offload_dot_with_no_batch_dims("device", "pinned_host"),
              cp.nothing_saveable)))(1.),
      "policy answers a string": lambda: jax.grad(jax.checkpoint(
          f, policy=lambda *_, **__: "yes"))(1.),
      "policy answers the class Offloadable": lambda: jax.grad(jax.checkpoint(
          f, policy=lambda *_, **__: jax.ad_checkpoint.Offloadable))(1.),
      "jax.ad_checkpoint.checkpoint": lambda: jax.ad_checkpoint.checkpoint,
      "jax.ad_checkpoint.remat": lambda: jax.ad_checkpoint.remat,
  }
