"""Tutorial 000: what JAX traces (make_jaxpr), with jaxlite as the JAX.

Runs unchanged from the tutorial apart from the import lines.
"""
import jaxlite as jax
import jaxlite.numpy as jnp

global_list = []


def log2(x):
  global_list.append(x)
  ln_x = jnp.log(x)
  ln_2 = jnp.log(2.0)
  return ln_x / ln_2


print(jax.make_jaxpr(log2)(3.0))


def log2_with_print(x):
  print("printed x:", x)
  ln_x = jnp.log(x)
  ln_2 = jnp.log(2.0)
  return ln_x / ln_2


print(jax.make_jaxpr(log2_with_print)(3.))
