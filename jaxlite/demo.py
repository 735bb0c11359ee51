"""The tutorials' walkthrough: ``python -m jaxlite.demo``.

Each section reproduces a scenario of the tutorials with jaxlite in place of JAX, and
prints what the tutorial prints.
"""
import warnings

import jaxlite as jax
import jaxlite.numpy as jnp


def section(title):
  print(f"\n== {title} " + "=" * max(0, 70 - len(title)))


def array_library():
  section("A1. A NumPy-like array library")
  x = jnp.arange(10)
  print(x)
  print("dtype:", x.dtype, "(64-bit types are off by default, as in JAX)")

  section("A2. A long dot product")
  long_vector = jnp.arange(int(1e7))
  print(jnp.dot(long_vector, long_vector).block_until_ready())

  section("A3. Arrays are immutable")
  x = jnp.array([1, 2, 3])
  try:
    x[0] = 123
  except TypeError as e:
    print("TypeError:", str(e).split(". ")[0] + ".")
  y = x.at[0].set(123)
  print("x.at[0].set(123) ->", y, " x is still", x)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    z = jax.ops.index_update(x, 0, 123)
  print("jax.ops.index_update(x, 0, 123) ->", z, " x is still", x)


def tracing():
  section("B5. make_jaxpr shows what was traced")
  global_list = []

  def log2(x):
    global_list.append(x)
    return jnp.log(x) / jnp.log(2.0)

  print(jax.make_jaxpr(log2)(3.0))
  print("the side effect ran once, during tracing:", len(global_list), "item(s)")

  section("B6. print inside a traced function shows the tracer")

  def show(x):
    print("x =", x)
    return x
  jax.make_jaxpr(show)(3.0)

  section("B7. Pytrees in and out")
  params = {"w": jnp.ones((2, 3)), "b": (jnp.zeros(3), None)}
  print(jax.tree_util.tree_structure(params))
  print(jax.eval_shape(lambda p: {"y": p["w"].sum(0) + p["b"][0]}, params))

  section("C5. Python control flow on traced values")

  def relu_bad(x):
    if x > 0:
      return x
    return 0.0
  try:
    jax.make_jaxpr(relu_bad)(1.0)
  except jax.errors.TracerBoolConversionError as e:
    print(type(e).__name__ + ":", str(e).splitlines()[0])
  print(jax.make_jaxpr(lambda x: jnp.where(x > 0, x, 0.0))(jnp.array([-1.0, 2.0])))


def devices():
  section("C11. Devices")
  print("devices:", jax.devices(), " default backend:", jax.default_backend())


def main():
  print(f"jaxlite {jax.__version__}")
  array_library()
  tracing()
  devices()


if __name__ == "__main__":
  main()
