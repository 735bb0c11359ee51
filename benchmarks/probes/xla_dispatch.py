"""Probe: cached jit call (x*2+1 on a device-resident f32[4]), a call on a parameter tree
and the MLP step, pinned to XLA.

    python benchmarks/probes/xla_dispatch.py jaxlite|jax small|pytree|mlp
    python benchmarks/probes/xla_dispatch.py jaxlite floor

``pytree``: ``instructions.py``'s pytree workload, f(params, x) with 3 (f32[4,4],
f32[4]) pairs and 6 outputs.

``floor``: the four PJRT C calls one cached, waited-for call of ``small`` makes (execute,
await and destroy its completion event, destroy the previous output buffer), through
jaxlite's prebuilt ctypes structs with no other Python: what the Python-over-ctypes design
cannot go under.

Run jaxlite and JAX alternately in the same time window; compare medians."""
import os, sys, time, statistics
os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workers"))
lib, job = sys.argv[1], sys.argv[2]
import importlib
jax = importlib.import_module(lib); jnp = importlib.import_module(lib + ".numpy")
import numpy as np
from _common import mlp_data, sgd_step_fn
jit = (lambda f: jax.jit(f, backend="xla")) if lib == "jaxlite" else jax.jit
block = jax.block_until_ready

def med(fn, number, repeat):
  for _ in range(number): fn()
  ts = []
  for _ in range(repeat):
    t0 = time.perf_counter()
    for _ in range(number): fn()
    ts.append((time.perf_counter() - t0) / number)
  ts.sort()
  global P10
  P10 = ts[len(ts) // 10]
  return statistics.median(ts)

if job == "floor":
  from jaxlite._src.backends.xla import pjrt
  f = jit(lambda x: x * 2 + 1)
  x = block(f(jnp.arange(4, dtype=jnp.float32)))
  loaded = next(iter(f._cache.values())).run.executable.loaded
  api, structs = loaded.api, loaded._structs
  arg_list, out_list, events, ex_ref = structs[1], structs[2], structs[3], structs[5]
  arg_list[0] = x._buf.handle
  execute, await_, destroy_event, destroy_buffer = (
      api.LoadedExecutable_Execute, api.Event_Await, api.Event_Destroy, api.Buffer_Destroy)
  ev, ev_ref = pjrt._borrow(pjrt._event_args, pjrt.EventArgs)
  ba, ba_ref = pjrt._borrow(pjrt._buffer_args, pjrt.BufferArgs)

  def call():
    execute(ex_ref)
    ev.event = events[0]
    await_(ev_ref)
    destroy_event(ev_ref)
    ba.buffer = out_list[0]
    destroy_buffer(ba_ref)
  m = med(call, 200, 101)
  print(f"{lib} floor_us {m*1e6:.2f} p10 {P10*1e6:.2f}")
elif job == "small":
  f = jit(lambda x: x * 2 + 1)
  x = block(f(jnp.arange(4, dtype=jnp.float32)))
  m = med(lambda: block(f(x)), 200, 101)
  print(f"{lib} small_cached_us {m*1e6:.2f} p10 {P10*1e6:.2f}")
  m = med(lambda: f(x), 200, 101)
  print(f"{lib} small_nowait_us {m*1e6:.2f} p10 {P10*1e6:.2f}")
elif job == "pytree":
  params = [(jnp.ones((4, 4)), jnp.ones((4,))) for _ in range(3)]
  f = jit(lambda p, x: [(w * 0.5, c + x.sum()) for w, c in p])
  x = jnp.ones((4,))
  block(f(params, x))
  m = med(lambda: block(f(params, x)), 200, 101)
  print(f"{lib} pytree_cached_us {m*1e6:.2f} p10 {P10*1e6:.2f}")
else:
  params, x, y = jax.tree_util.tree_map(jnp.asarray, mlp_data(np))
  step = jit(sgd_step_fn(jax, jnp))
  block(step(params, x, y))
  print(f"{lib} mlp_ms {med(lambda: block(step(params, x, y)), 5, int(sys.argv[3]) if len(sys.argv)>3 else 41)*1e3:.3f}")
