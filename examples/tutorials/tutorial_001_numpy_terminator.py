"""Tutorial 001: a NumPy-like library with automatic differentiation.

Runs unchanged from the tutorial apart from the import lines; the notebook's `%timeit`
magic becomes a call to `timeit`.
"""
import timeit

import jaxlite as jax
import jaxlite.numpy as jnp

x = jnp.arange(10)
print(x)

long_vector = jnp.arange(int(1e7))
print(min(timeit.repeat(lambda: jnp.dot(long_vector, long_vector).block_until_ready(),
                        number=3, repeat=3)) / 3 * 1e3, "ms per dot")


def sum_of_squares(x):
  return jnp.sum(x**2)


sum_of_squares_dx = jax.grad(sum_of_squares)
x = jnp.asarray([1.0, 2.0, 3.0, 4.0])
print(sum_of_squares(x))
print(sum_of_squares_dx(x))


def sum_squared_error(x, y):
  return jnp.sum((x-y)**2)


sum_squared_error_dx = jax.grad(sum_squared_error)
y = jnp.asarray([1.1, 2.1, 3.1, 4.1])
print(sum_squared_error_dx(x, y))
print(jax.grad(sum_squared_error, argnums=(0, 1))(x, y))  # Find gradient wrt both x & y
print(jax.value_and_grad(sum_squared_error)(x, y))


def squared_error_with_aux(x, y):
  return sum_squared_error(x, y), x-y


try:
  jax.grad(squared_error_with_aux)(x, y)
except TypeError as e:
  print("TypeError:", e)
print(jax.grad(squared_error_with_aux, has_aux=True)(x, y))

import numpy as np  # noqa: E402

x = np.array([1, 2, 3])


def in_place_modify(x):
  x[0] = 123
  return None


in_place_modify(x)
print(x)

try:
  in_place_modify(jnp.array(x))
except TypeError as e:
  print("TypeError:", e)


def jax_in_place_modify(x):
  return jax.ops.index_update(x, 0, 123)


y = jnp.array([1, 2, 3])
print(jax_in_place_modify(y))
print(y)  # Array([1, 2, 3], dtype=int32)
