"""Seconds to import, open the default device and run the first eager jax.random calls,
under JAX or jaxlite (one fresh process each; run it twice to see the persistent cache):

  python3 benchmarks/probes/eager_first_calls.py jax
  python3 benchmarks/probes/eager_first_calls.py jaxlite   # also prints a cProfile

On an accelerator each first eager call compiles; JAX jits its samplers, so a sampler is
one executable there, not one per primitive.
"""
import sys, time, cProfile, pstats, io
t = time.perf_counter()
marks = []
def mark(label):
  global t
  now = time.perf_counter(); marks.append((label, now - t)); t = now
prof = cProfile.Profile() if sys.argv[1] == "jaxlite" else None
if prof: prof.enable()
if sys.argv[1] == "jax":
  import jax, jax.numpy as jnp
else:
  import jaxlite as jax, jaxlite.numpy as jnp
mark("import")
d = jax.devices()
mark("devices")
key = jax.random.key(0)
jax.block_until_ready(key); mark("key")
x = jax.random.normal(key, (1024, 1024)); jax.block_until_ready(x); mark("normal")
y = jnp.zeros((1024, 2048)) + 1; jax.block_until_ready(y); mark("zeros+1")
k1, k2 = jax.random.split(key); jax.block_until_ready(k1); mark("split")
w = jax.random.normal(k1, (1024, 2048)) * 0.1; jax.block_until_ready(w); mark("normal*")
if prof: prof.disable()
print(sys.argv[1], " ".join(f"{l}={s:.2f}" for l, s in marks), f"total={sum(s for _, s in marks):.2f}")
if prof:
  s = io.StringIO(); pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(45); print(s.getvalue()[:9000])
  s = io.StringIO(); pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(20); print(s.getvalue()[:5000])
