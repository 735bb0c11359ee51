"""Benchmark worker for JAX and for jaxlite, which share one API and so one workload code.

    python jax_api.py --lib jax --job heavy
    python jax_api.py --lib jaxlite --backend numpy|xla|auto --job heavy

``--backend`` is jaxlite's jit tier: ``auto`` passes no ``backend=`` (the default policy);
any other value is passed as ``jax.jit(f, backend=...)``. A tier that jit rejects makes
every metric of the job "unavailable" with jit's error message.
"""
import functools
import os
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

from _common import (Worker, once, first_calls_p99, window_median, timed_import, SHAPES,
                     HEAVY_SIZE,
                     STALL_HEAVY_SIZE, heavy_fn, mlp_data, sgd_step_fn, small_mlp_data,
                     per_example_loss_fn, hessian_input, SMALL_STEADY)

w = Worker()
lib = w.args.lib
jax, jnp, lax = timed_import(w, lib, f"{lib}.numpy", f"{lib}.lax")
import numpy as np  # noqa: E402 (after the timed import)

w.versions(**{lib: jax.__version__, "numpy": np.__version__})
pinned = lib == "jaxlite" and w.args.backend != "auto"
jit = functools.partial(jax.jit, backend=w.args.backend) if pinned else jax.jit
try:
  jit(lambda x: x)  # a tier that jit rejects fails here, before any timing
except Exception as e:
  w.unavailable(f"{type(e).__name__}: {e}")
  raise SystemExit(0)
block = jax.block_until_ready
settles = lib == "jaxlite" and not pinned


def steady(fn, jitted=(), **kwargs):
  """Steady-state time. jaxlite's auto policy first settles: calls repeat until the
  ``jitted`` functions have chosen their tiers (XLA compile and tier race are warm-up)."""
  if settles and jitted:
    from jaxlite._src import tiers
    deadline = time.perf_counter() + 30
    while not tiers.settled(*jitted) and time.perf_counter() < deadline:
      fn()
      time.sleep(0.001)
  return w.steady(fn, **kwargs)


def warm_up():
  """Pay the library's one-time costs (first jit in the process) outside the timings."""
  block(jit(lambda v: v + 1)(jnp.ones(7, jnp.float32)))


def job_small():
  x = jnp.arange(4, dtype=jnp.float32)
  w.emit("w1_eager_sin", steady(lambda: block(jnp.sin(x)), number=200))
  f = jit(lambda x: x ** 2 + 1)
  w.emit("w2_jit_cached", steady(lambda: block(f(x)), (f,), number=200))


heavy = heavy_fn(jnp)


def job_heavy():
  x = block(jnp.arange(HEAVY_SIZE, dtype=jnp.float32))
  f = jit(heavy)
  w.emit("w3_heavy_first", once(lambda: block(f(x))))
  w.emit("w4_heavy_steady", steady(lambda: block(f(x)), (f,), warmup=1))


sgd_step = sgd_step_fn(jax, jnp)


def job_mlp():
  params, x, y = jax.tree_util.tree_map(jnp.asarray, mlp_data(np))
  step = jit(sgd_step)
  w.emit("w5_mlp_first", once(lambda: block(step(params, x, y))))
  w.emit("w5_mlp_steady", steady(lambda: block(step(params, x, y)), (step,)))


def scan_loop(n):
  """W6's loop as an ``n``-step ``lax.scan``."""
  def f(y):
    return lax.scan(lambda y, _: (jnp.sin(y) + 0.01 * y, None), y, xs=None, length=n)[0]
  return f


def job_loops():
  x = jnp.ones((1024,), dtype=jnp.float32)
  warm_up()
  for n, kind in [(200, "loop"), (200, "scan"), (2000, "scan"), (2000, "loop")]:
    def python_loop(y):
      for _ in range(n):
        y = jnp.sin(y) + 0.01 * y
      return y

    f = jit(python_loop if kind == "loop" else scan_loop(n))
    w.emit(f"w6_{kind}{n}_first", once(lambda: block(f(x))))


per_example_loss = per_example_loss_fn(jnp)


def job_transforms():
  warm_up()
  try:
    params, xs, ys = jax.tree_util.tree_map(jnp.asarray, small_mlp_data(np))
    f = jit(jax.vmap(jax.grad(per_example_loss), in_axes=(None, 0, 0)))
    w.emit("w7_vmap_grad_first", once(lambda: block(f(params, xs, ys))))
    w.emit("w7_vmap_grad_steady", steady(lambda: block(f(params, xs, ys)), (f,),
                                         **SMALL_STEADY))
  except Exception as e:
    w.unavailable(f"{type(e).__name__}: {e}", ["w7_vmap_grad_first", "w7_vmap_grad_steady"])
  x = jnp.asarray(hessian_input(np))
  h = jit(jax.hessian(lambda x: jnp.sum(jnp.tanh(x) ** 3)))
  w.emit("w8_hessian_first", once(lambda: block(h(x))))
  w.emit("w8_hessian_steady", steady(lambda: block(h(x)), (h,), **SMALL_STEADY))


def job_shapes():
  warm_up()
  f = jit(lambda x: jnp.sum(x ** 2))
  for i, s in enumerate(SHAPES):
    x = block(jnp.ones(s, dtype=jnp.float32))
    w.emit(f"w9_call{i + 1}_{s[0]}", once(lambda: block(f(x))))


def fresh_workloads():
  """W11's and W12's workloads, each a fresh jitted function: (name, call, function)."""
  x = jnp.ones((1024,), dtype=jnp.float32)
  scan = jit(scan_loop(2000))
  yield "scan2000", lambda: block(scan(x)), scan
  xh = block(jnp.arange(STALL_HEAVY_SIZE, dtype=jnp.float32))
  f = jit(heavy)
  yield "heavy", lambda: block(f(xh)), f
  params, xm, ym = jax.tree_util.tree_map(jnp.asarray, mlp_data(np))
  step = jit(sgd_step)
  yield "mlp", lambda: block(step(params, xm, ym)), step
  small, xs, ys = jax.tree_util.tree_map(jnp.asarray, small_mlp_data(np))
  g = jit(jax.vmap(jax.grad(per_example_loss), in_axes=(None, 0, 0)))
  yield "vmap_grad", lambda: block(g(small, xs, ys)), g
  xq = jnp.asarray(hessian_input(np))
  h = jit(jax.hessian(lambda x: jnp.sum(jnp.tanh(x) ** 3)))
  yield "hessian", lambda: block(h(xq)), h


def job_stalls():
  """W11: each workload freshly jitted, the p99 of its first calls (under ``auto`` these
  span the probe, the background XLA compile and the tier race)."""
  warm_up()
  for name, call, _ in fresh_workloads():
    w.emit(f"w11_{name}_p99", first_calls_p99(call))


def job_policy():
  """W12: the tier each system serves from the 2nd second of a fresh function's calls on
  (under auto: whichever the policy has chosen by then), and W5's XLA compile beside a
  caller that keeps the CPUs busy (auto: the race's background compile while tier 0 runs
  the step) against one alone (xla: the first call's). The persistent cache is off here:
  every compile compiles."""
  if lib == "jaxlite":
    jax.config.update("jaxlite_persistent_cache", False)
  warm_up()
  compiled = {}
  for name, call, fn in fresh_workloads():
    if name == "scan2000":
      continue
    w.emit(f"w12_{name}_window", window_median(call))
    if name == "mlp" and lib == "jaxlite":
      compiled = fn.stats()[0]["compile_ms"]
  busy = w.args.backend == "auto" and "xla" in compiled
  alone = w.args.backend == "xla" and "xla" in compiled
  for metric, ok in (("w12_mlp_compile_busy", busy), ("w12_mlp_compile_alone", alone)):
    if ok:
      w.emit(metric, compiled["xla"] / 1e3)
    else:
      w.emit(metric, unavailable="auto's background compile (busy) or xla's first call's "
                                 "(alone) only")


w.run({"small": job_small, "heavy": job_heavy, "mlp": job_mlp, "loops": job_loops,
       "transforms": job_transforms, "shapes": job_shapes, "stalls": job_stalls,
       "policy": job_policy})
