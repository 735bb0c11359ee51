"""The tutorials' walkthrough: ``python -m jaxlite.demo``.

Each section reproduces a scenario of the tutorials (shared/SCENARIOS.md) with jaxlite
in place of JAX and prints what the tutorial prints; section D shows what JAX does not
do: a first call that never waits for an optimising compiler, a one-line reason for
every retrace, and trace / compile / execute statistics without timing code.
"""
import logging
import sys
import time
import warnings
from functools import partial

import numpy as np

import jaxlite as jax
import jaxlite.numpy as jnp


def section(title):
  print(f"\n== {title} " + "=" * max(0, 74 - len(title)))


def ms(seconds):
  return f"{seconds * 1e3:8.2f} ms"


# ----------------------------------------------------------------------------- A

def array_library():
  section("A1. A NumPy-like array library")
  x = jnp.arange(10)
  print(x)
  print("dtype:", x.dtype, "(64-bit types are off by default, as in JAX)")

  section("A2. A long dot product, waited for with block_until_ready()")
  long_vector = jnp.arange(int(1e7))
  t0 = time.perf_counter()
  result = jnp.dot(long_vector, long_vector).block_until_ready()
  print(result, f"(int32 wraps around, as in JAX) in {ms(time.perf_counter() - t0)}")

  section("A3. Arrays are immutable")
  x = np.array([1, 2, 3])
  x[0] = 123
  print("NumPy allows x[0] = 123:", x)
  y = jnp.array([1, 2, 3])
  try:
    y[0] = 123
  except TypeError as e:
    print("TypeError:", str(e).split(" Instead")[0])
  print("y.at[0].set(123) ->", y.at[0].set(123), "  y is still", y)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    print("jax.ops.index_update(y, 0, 123) ->", jax.ops.index_update(y, 0, 123),
          "  y is still", y)


# ----------------------------------------------------------------------------- B

def transformations():
  section("B1. grad of a pure function")

  def sum_of_squares(x):
    return jnp.sum(x ** 2)
  sum_of_squares_dx = jax.grad(sum_of_squares)
  x = jnp.asarray([1.0, 2.0, 3.0, 4.0])
  print(sum_of_squares(x))
  print(sum_of_squares_dx(x))

  section("B2. argnums and value_and_grad")

  def sum_squared_error(x, y):
    return jnp.sum((x - y) ** 2)
  y = jnp.asarray([1.1, 2.1, 3.1, 4.1])
  print(jax.grad(sum_squared_error)(x, y))
  print(jax.grad(sum_squared_error, argnums=(0, 1))(x, y))
  print(jax.value_and_grad(sum_squared_error)(x, y))

  section("B3. Auxiliary outputs need has_aux=True")

  def squared_error_with_aux(x, y):
    return sum_squared_error(x, y), x - y
  try:
    jax.grad(squared_error_with_aux)(x, y)
  except TypeError as e:
    print("TypeError:", e)
  print(jax.grad(squared_error_with_aux, has_aux=True)(x, y))

  section("B4. grad needs a scalar output")
  try:
    jax.grad(lambda x: x ** 2)(x)
  except TypeError as e:
    print("TypeError:", e)

  section("B5. make_jaxpr shows what was traced; side effects are not traced")
  global_list = []

  def log2(x):
    global_list.append(x)
    ln_x = jnp.log(x)
    ln_2 = jnp.log(2.0)
    return ln_x / ln_2
  print(jax.make_jaxpr(log2)(3.0))
  print("global_list after tracing:", global_list)

  section("B6. print inside a traced function shows the tracer")

  def log2_with_print(x):
    print("printed x:", x)
    return jnp.log(x) / jnp.log(2.0)
  print(jax.make_jaxpr(log2_with_print)(3.0))

  section("B7. Pytrees in and out")
  params = {"w": jnp.ones((2, 3)), "b": (jnp.zeros(3), None)}
  print(jax.tree_util.tree_structure(params))
  loss = lambda p, x: jnp.sum(jnp.tanh(x @ p["w"] + p["b"][0]))
  grads = jax.grad(loss)(params, jnp.ones((4, 2)))
  print(jax.tree_util.tree_map(lambda g: g.shape, grads))


# ----------------------------------------------------------------------------- C

def jit_scenarios():
  section("C1. The body runs once per new signature")

  @jax.jit
  def f(x):
    print(f"  tracing with shape={x.shape} dtype={x.dtype}")
    return x ** 2 + 1
  for label, n in (("Call 1 (new shape):", 4), ("Call 2 (same shape):", 4),
                   ("Call 3 (new shape):", 5)):
    print(label)
    _ = f(jnp.arange(n, dtype=jnp.float32)).block_until_ready()

  section("C2. First call = trace + compile + execute; cached call = execute")

  def heavy(x):
    y = x
    for _ in range(20):
      y = jnp.sin(y) * jnp.cos(y) + jnp.tanh(y)
    return y
  heavy_jit = jax.jit(heavy)
  x = jnp.arange(1_000_000, dtype=jnp.float32)
  jax.clear_caches()
  t0 = time.perf_counter()
  _ = heavy_jit(x).block_until_ready()
  first = time.perf_counter() - t0
  t0 = time.perf_counter()
  for _ in range(20):
    _ = heavy_jit(x).block_until_ready()
  cached = (time.perf_counter() - t0) / 20
  print(f"First call (trace + compile + execute): {ms(first)}")
  print(f"Cached call (execute only):             {ms(cached)}")
  row = heavy_jit.stats()[0]
  print(f"Measured by jaxlite itself: trace {row['trace_ms']:.2f} ms, compile "
        f"{', '.join(f'{t} {v:.2f} ms' for t, v in row['compile_ms'].items())}, "
        f"execute median {row['execute_ms_median']:.2f} ms")

  section("C3. The cache key is the structural signature: 5 shapes, 3 compiles")

  @jax.jit
  def g(x):
    return jnp.sum(x ** 2)
  jax.clear_caches()
  for s in [(100,), (200,), (100,), (200,), (300,)]:
    x = jnp.ones(s, dtype=jnp.float32)
    t0 = time.perf_counter()
    _ = g(x).block_until_ready()
    print(f"shape={str(s):8s} {ms(time.perf_counter() - t0)}")
  print(f"traces: {g.stats().traces}, calls: {g.stats().calls}")

  section("C4. clear_caches() empties the cache")
  jax.clear_caches()
  _ = g(jnp.ones(100))
  print("after clear_caches, traces:", g.stats().traces)

  section("C5. Python control flow on a traced value")

  @jax.jit
  def relu_bad(x):
    if x > 0:
      return x
    return jnp.zeros_like(x)
  try:
    print(relu_bad(jnp.array(1.0)))
  except Exception as e:
    print(f"{type(e).__name__}: {str(e).splitlines()[0]}")

  section("C6. Choose with jnp.where, or branch with lax.cond")

  @jax.jit
  def relu(x):
    return jnp.where(x > 0, x, 0.0)
  print(relu(jnp.array([-1.0, -0.5, 0.0, 0.5, 1.0])))

  @jax.jit
  def soft_or_sharp(x, sharp):
    return jax.lax.cond(sharp, lambda x: jnp.where(x > 0, x, 0.0),
                        lambda x: jax.nn.softplus(x), x)
  x = jnp.array([-1.0, 0.5, 2.0])
  print(f"sharp=True: {soft_or_sharp(x, jnp.array(True))}")
  print(f"sharp=False: {soft_or_sharp(x, jnp.array(False))}")

  section("C7. Loops stay loops with lax.scan")
  for num_steps in (200, 2000):
    def python_for_loop(x, n=num_steps):
      y = x
      for _ in range(n):
        y = jnp.sin(y) + 0.01 * y
      return y

    def scan_loop(x, n=num_steps):
      def body(y, _):
        return jnp.sin(y) + 0.01 * y, None
      return jax.lax.scan(body, x, xs=None, length=n)[0]
    x = jnp.ones((1024,), dtype=jnp.float32)
    times = {}
    for name, fn in (("Python for loop", python_for_loop), ("lax.scan", scan_loop)):
      jitted = jax.jit(fn)
      t0 = time.perf_counter()
      _ = jitted(x).block_until_ready()
      times[name] = time.perf_counter() - t0
    print(f"NUM_STEPS={num_steps}: Python for loop first call {ms(times['Python for loop'])}"
          f", lax.scan first call {ms(times['lax.scan'])}")

  section("C8. Padding and masking: one program for many lengths")
  MAX_LEN = 16

  @jax.jit
  def masked_mean(x, mask):
    return jnp.sum(x * mask) / jnp.maximum(jnp.sum(mask), 1.0)

  def pad(seq):
    pad_len = MAX_LEN - len(seq)
    x = jnp.concatenate([jnp.asarray(seq, dtype=jnp.float32),
                         jnp.zeros(pad_len, dtype=jnp.float32)])
    mask = jnp.concatenate([jnp.ones(len(seq), dtype=jnp.float32),
                            jnp.zeros(pad_len, dtype=jnp.float32)])
    return x, mask
  for seq in [[1.0, 2.0, 3.0], [10.0] * 8, [5.0, -2.0]]:
    x, mask = pad(seq)
    print(f"len={len(seq):2d} mean={masked_mean(x, mask):.3f}")
  print("compiled programs:", masked_mean.stats().traces)

  section("C9. static_argnums: one program per static value")

  @partial(jax.jit, static_argnums=0)
  def power(n: int, x):
    y = x
    for _ in range(n):
      y = y * y
    return y
  jax.clear_caches()
  for n in (2, 3, 2):
    t0 = time.perf_counter()
    _ = power(n, jnp.arange(4, dtype=jnp.float32)).block_until_ready()
    print(f"n={n}: {ms(time.perf_counter() - t0)}")
  try:
    power([2], jnp.ones(2))
  except ValueError as e:
    print("ValueError:", str(e).splitlines()[0])

  section("C10. What was traced and what it was lowered to")
  fn = lambda x: jnp.tanh(x) * jnp.sin(x) + jnp.log1p(x * x)
  print(jax.make_jaxpr(fn)(jnp.arange(4, dtype=jnp.float32)))
  lowered = jax.jit(fn).lower(jnp.arange(4, dtype=jnp.float32))
  print(lowered.as_text())
  compiled = lowered.compile()
  print("compiled(x) =", compiled(jnp.arange(4, dtype=jnp.float32)))

  section("C11. Devices")
  print(f"JAX version: {jax.__version__} (jaxlite)")
  print(f"Default backend: {jax.default_backend()}")
  print(f"Devices: {jax.devices()}")

  section("C12. jnp.where can leak NaN into gradients (as in JAX)")
  unsafe = lambda x: jnp.where(x > 0, jnp.sqrt(x), 0.0)
  safe = lambda x: jnp.where(x > 0, jnp.sqrt(jnp.where(x > 0, x, 1.0)), 0.0)
  print("grad of where(x > 0, sqrt(x), 0) at -1:", jax.grad(unsafe)(-1.0))
  print("with the double-where fix:            ", jax.grad(safe)(-1.0))


# ----------------------------------------------------------------------------- D

def beyond_jax():
  section("D1. Every retrace explained in one line (logger 'jaxlite')")
  handler = logging.StreamHandler(sys.stdout)
  handler.setFormatter(logging.Formatter("  [jaxlite] %(message)s"))
  logger = logging.getLogger("jaxlite")
  logger.addHandler(handler)
  logger.setLevel(logging.INFO)
  try:
    @jax.jit
    def f(x):
      return jnp.sum(x ** 2)
    for s in [(100,), (200,), (100,), (200,), (300,)]:
      f(jnp.ones(s, dtype=jnp.float32))
    f(jnp.ones(100, dtype=jnp.int32))

    @partial(jax.jit, static_argnums=0)
    def power(n, x):
      return x ** n
    power(2, 1.0)
    power(3, 1.0)
  finally:
    logger.removeHandler(handler)
    logger.setLevel(logging.NOTSET)

  section("D2. The first call never waits for an optimising compiler")
  from jaxlite._src import tiers

  def heavy(x):
    y = x
    for _ in range(20):
      y = jnp.sin(y) * jnp.cos(y) + jnp.tanh(y)
    return y
  heavy_auto = jax.jit(heavy)
  x = jnp.arange(200_000, dtype=jnp.float32)
  t0 = time.perf_counter()
  heavy_auto(x).block_until_ready()
  print(f"first call (trace + tier-0 compile + run, no XLA wait): "
        f"{ms(time.perf_counter() - t0)}")
  calls, deadline = 1, time.perf_counter() + 30
  while not tiers.settled(heavy_auto) and time.perf_counter() < deadline:
    heavy_auto(x).block_until_ready()
    calls += 1
  print(f"meanwhile XLA compiled it in the background; after {calls} calls the faster tier "
        f"was kept:")
  print(heavy_auto.stats())

  section("D3. Trace / compile / execute statistics, no timing code needed")
  print(f.stats())


def main():
  print(f"jaxlite {jax.__version__}")
  array_library()
  transformations()
  jit_scenarios()
  beyond_jax()


if __name__ == "__main__":
  main()
