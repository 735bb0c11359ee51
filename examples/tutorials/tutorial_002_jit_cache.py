"""Tutorial 002: tracing, the compile cache, recompiles and structured control flow.

Runs unchanged from the tutorial apart from the import lines, except for its GPU check:
this script reports the devices instead of asserting that one is a GPU.
"""
import time
from functools import partial

import jaxlite as jax
import jaxlite.numpy as jnp

devices = jax.devices()
gpu_devices = [d for d in devices if d.platform == "gpu"]
print(f"JAX version: {jax.__version__}")
print(f"Default backend: {jax.default_backend()}")
print(f"Devices: {devices}")
print(f"GPU devices: {gpu_devices}")


@jax.jit
def f(x):
  """Jitted demo function that prints during tracing so we can see exactly when JAX retraces."""
  # This print runs during tracing only not on every GPU execution.
  print(f" tracing with shape={x.shape} dtype={x.dtype}")
  return x ** 2 + 1


print("Call 1 (new shape):")
_ = f(jnp.arange(4, dtype=jnp.float32)).block_until_ready()
print("Call 2 (same shape):")
_ = f(jnp.arange(4, dtype=jnp.float32)).block_until_ready()
print("Call 3 (new shape):")
_ = f(jnp.arange(5, dtype=jnp.float32)).block_until_ready()


def heavy(x):
  """20 chained nonlinearities so the first-call compilation is visibly more expensive than the cached execution."""
  y = x
  for _ in range(20):
    y = jnp.sin(y) * jnp.cos(y) + jnp.tanh(y)
  return y


heavy_jit = jax.jit(heavy)
x = jnp.arange(1_000_000, dtype=jnp.float32)
# Empty in-process cache so a re-run shows the first-call compile cost again.
jax.clear_caches()
t0 = time.perf_counter()
_ = heavy_jit(x).block_until_ready()
first_ms = (time.perf_counter() - t0) * 1000
t0 = time.perf_counter()
for _ in range(20):
  _ = heavy_jit(x).block_until_ready()
cached_ms = (time.perf_counter() - t0) * 1000 / 20
print(f"First call (compile + execute): {first_ms:8.2f} ms")
print(f"Cached call (execute only): {cached_ms:8.2f} ms")
print(f"Compilation cost (approx): {first_ms - cached_ms:8.2f} ms")


@jax.jit
def f(x):
  """Simple jitted scalar function used to demonstrate one compile per new input shape (a new dtype would trigger the same recompile)."""
  return jnp.sum(x ** 2)


# clear JAX's in-process compilation cache.
jax.clear_caches()
# Feed in a few different shapes and measure each call.
shapes = [(100,), (200,), (100,), (200,), (300,)]
for s in shapes:
  x = jnp.ones(s, dtype=jnp.float32)
  t0 = time.perf_counter()
  _ = f(x).block_until_ready()
  dt = (time.perf_counter() - t0) * 1000
  print(f"shape={str(s):8s} {dt:7.2f} ms")


@jax.jit
def relu_bad(x):
  """ReLU using a Python `if` on a traced value with JIT errors out at trace time."""
  if x > 0:
    return x
  return jnp.zeros_like(x)


try:
  print(relu_bad(jnp.array(1.0)))
except Exception as e:
  print(f"{type(e).__name__}: {str(e).splitlines()[0]}")


@jax.jit
def relu(x):
  """ReLU using `jnp.where` with both branches are computed so tracing works."""
  return jnp.where(x > 0, x, 0.0)


print(relu(jnp.array([-1.0, -0.5, 0.0, 0.5, 1.0])))


@jax.jit
def soft_or_sharp(x, sharp):
  """Switch between hard ReLU and softplus inside the compiled graph via `lax.cond`, controlled by a traced bool."""
  # `sharp` is a scalar bool and lax.cond compiles to a real if-then-else
  return jax.lax.cond(
      sharp,
      lambda x: jnp.where(x > 0, x, 0.0),
      lambda x: jax.nn.softplus(x),
      x,
  )


x = jnp.array([-1.0, 0.5, 2.0])
print(f"sharp=True: {soft_or_sharp(x, jnp.array(True))}")
print(f"sharp=False: {soft_or_sharp(x, jnp.array(False))}")

# python_for_loop compile time scales with NUM_STEPS while scan_loop compile time stays roughly constant. Try NUM_STEPS = 2000 to see the gap widen.
NUM_STEPS = 200


@jax.jit
def python_for_loop(x):
  """Python `for` loop inside jit."""
  y = x
  for _ in range(NUM_STEPS):
    y = jnp.sin(y) + 0.01 * y
  return y


@jax.jit
def scan_loop(x):
  """Same logic expressed with `lax.scan`."""
  def body(y, _):
    y = jnp.sin(y) + 0.01 * y
    return y, None
  y, _ = jax.lax.scan(body, x, xs=None, length=NUM_STEPS)
  return y


x = jnp.ones((1024,), dtype=jnp.float32)
jax.clear_caches()
t0 = time.perf_counter()
_ = python_for_loop(x).block_until_ready()
python_for_ms = (time.perf_counter() - t0) * 1000
jax.clear_caches()
t0 = time.perf_counter()
_ = scan_loop(x).block_until_ready()
scan_ms = (time.perf_counter() - t0) * 1000
print(f"Python for loop first call: {python_for_ms:8.2f} ms")
print(f"lax.scan first call: {scan_ms:8.2f} ms")

MAX_LEN = 16


@jax.jit
def masked_mean(x, mask):
  """Mean of `x` ignoring positions where `mask==0`."""
  # Always called with shape (MAX_LEN,) - no recompile when actual length varies
  return jnp.sum(x * mask) / jnp.maximum(jnp.sum(mask), 1.0)


def pad(seq):
  """Right-pad a variable-length list of floats to `MAX_LEN` and return the padded array plus a 0/1 mask."""
  actual_len = len(seq)
  if actual_len > MAX_LEN:
    raise ValueError(f"sequence length {actual_len} exceeds MAX_LEN={MAX_LEN}")
  pad_len = MAX_LEN - actual_len
  x = jnp.concatenate([
      jnp.asarray(seq, dtype=jnp.float32),
      jnp.zeros(pad_len, dtype=jnp.float32),
  ])
  mask = jnp.concatenate([
      jnp.ones(actual_len, dtype=jnp.float32),
      jnp.zeros(pad_len, dtype=jnp.float32),
  ])
  return x, mask


# Several different sequence lengths, but a single compiled function handles them all
for seq in [[1.0, 2.0, 3.0], [10.0] * 8, [5.0, -2.0]]:
  x, mask = pad(seq)
  print(f"len={len(seq):2d} mean={masked_mean(x, mask):.3f}")


@partial(jax.jit, static_argnums=0)
def power(n: int, x):
  """Repeated squaring with `n` is static so JAX unrolls the loop and compiles a fresh program per value of `n`."""
  # `n` is a Python int and JAX bakes it into the trace and unrolls the loop
  y = x
  for _ in range(n):
    y = y * y
  return y


jax.clear_caches()
for n in (2, 3, 2):  # n=2 reuses the cache the second time
  t0 = time.perf_counter()
  _ = power(n, jnp.arange(4, dtype=jnp.float32)).block_until_ready()
  print(f"n={n}: {(time.perf_counter() - t0) * 1000:7.2f} ms")


def f(x):
  return jnp.tanh(x) * jnp.sin(x) + jnp.log1p(x * x)


print(jax.make_jaxpr(f)(jnp.arange(4, dtype=jnp.float32)))
print(jax.jit(f).lower(jnp.arange(4, dtype=jnp.float32)).as_text())
