"""What every worker shares: the job table, timing helpers and the JSON-line protocol.

A worker runs one job in a fresh process and prints one JSON object per line on stdout:
``{"metric": id, "value": seconds}`` or ``{"metric": id, "unavailable": reason}``, plus one
``{"versions": {...}}`` line. Everything else it prints is ignored by ``run.py``. This
module imports only the standard library, so that a worker can time its own library's
import before anything else is loaded.
"""
import argparse
import json
import math
import platform
import statistics
import sys
import time
import traceback

# job -> the metrics it emits, in the order it emits them. Every job also emits "import".
# A job is one fresh process, so its first metric is always a first call in a fresh process.
JOBS = {
  "small": ["w1_eager_sin", "w2_jit_cached"],
  "heavy": ["w3_heavy_first", "w4_heavy_steady"],
  "mlp": ["w5_mlp_first", "w5_mlp_steady"],
  "loops": ["w6_loop200_first", "w6_scan200_first", "w6_scan2000_first",
            "w6_loop2000_first"],
  "transforms": ["w7_vmap_grad_first", "w7_vmap_grad_steady", "w8_hessian_first",
                 "w8_hessian_steady"],
  "shapes": ["w9_call1_100", "w9_call2_200", "w9_call3_100", "w9_call4_200",
             "w9_call5_300"],
  "stalls": ["w11_scan2000_p99", "w11_heavy_p99", "w11_mlp_p99", "w11_vmap_grad_p99",
             "w11_hessian_p99"],
  "policy": ["w12_heavy_window", "w12_mlp_window", "w12_vmap_grad_window",
             "w12_hessian_window", "w12_mlp_compile_busy", "w12_mlp_compile_alone"],
}

SHAPES = [(100,), (200,), (100,), (200,), (300,)]  # the tutorial's W9 sequence
HEAVY_SIZE = 1_000_000
STALL_CALLS = 200   # W11: the first calls of each workload whose p99 is reported
STALL_HEAVY_SIZE = 100_000   # W11's heavy: 200 calls of the 1M version would take 15 s
# W7's and W8's steady calls take 0.01-0.3 ms: each timing averages 20 calls, after 20
# untimed ones. Timed one call at a time after two warm-up calls, W8's median moved by
# 20-50% between full runs (an XLA executable's first runs are slower than its later ones,
# and one pause of the machine's is a fifth of five samples).
SMALL_STEADY = {"number": 20, "warmup": 20}
MLP_SIZES = (784, 512, 512, 10)
MLP_BATCH = 128
LR = 0.01


class Worker:
  """Runs one job: parses the common arguments and keeps track of what was emitted."""

  def __init__(self):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--job", required=True, choices=sorted(JOBS))
    p.add_argument("--quick", action="store_true", help="fewer repetitions")
    p.add_argument("--lib", default="jax", help="jax_api.py: jax or jaxlite")
    p.add_argument("--backend", default="auto", help="jax_api.py: jaxlite's jit tier")
    p.add_argument("--mode", default="eager", help="torch_api.py: eager or compile")
    self.args = p.parse_args()
    self.job = self.args.job
    self.repeat = 3 if self.args.quick else 5
    self.emitted = set()

  def emit(self, metric, value=None, unavailable=None):
    """Print one measurement (seconds) or the reason it could not be taken."""
    rec = {"metric": metric}
    if unavailable is None:
      rec["value"] = value
    else:
      rec["unavailable"] = unavailable
    self.emitted.add(metric)
    print(json.dumps(rec), flush=True)

  def versions(self, **libs):
    print(json.dumps({"versions": {"python": platform.python_version(), **libs}}),
          flush=True)

  def unavailable(self, reason, metrics=None):
    """Mark every metric of this job not yet emitted as unavailable."""
    for m in metrics or JOBS[self.job]:
      if m not in self.emitted:
        self.emit(m, unavailable=reason)

  def run(self, jobs):
    """Call ``jobs[self.job]()``; an exception marks the metrics it did not reach."""
    try:
      jobs[self.job]()
    except Exception as e:  # a workload a system cannot run is a result, not a crash
      traceback.print_exc(file=sys.stderr)
      self.unavailable(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")

  # Seconds of back-to-back untimed calls at least, before a steady timing. After idle
  # time (jaxlite's auto policy settles with 1 ms sleeps between calls) a program XLA
  # shares out over its pool threads took 4.4, 4.2, 4.0, 3.9, 3.2, 2.8 and then 2.1 ms a
  # call for 20 ms (W5's MLP step; benchmarks/README.md, seventeenth pass).
  WARMUP_SECONDS = 0.05

  def steady(self, fn, number=1, warmup=2):
    """Median seconds per call of ``fn``, over ``repeat`` timings of ``number`` calls,
    after ``warmup`` untimed calls and at least ``WARMUP_SECONDS`` of them."""
    end = time.perf_counter() + self.WARMUP_SECONDS
    calls = 0
    while calls < warmup or time.perf_counter() < end:
      fn()
      calls += 1
    times = []
    for _ in range(self.repeat):
      t0 = time.perf_counter()
      for _ in range(number):
        fn()
      times.append((time.perf_counter() - t0) / number)
    return statistics.median(times)


def first_calls_p99(fn, calls=STALL_CALLS):
  """The 99th percentile of the seconds taken by the first ``calls`` calls of ``fn``
  (the first one, its compile included, among them): a call that waits for a background
  compiler or a tier race shows here, where a steady median hides it."""
  times = []
  for _ in range(calls):
    t0 = time.perf_counter()
    fn()
    times.append(time.perf_counter() - t0)
  return sorted(times)[math.ceil(0.99 * calls) - 1]


# W12: a fresh function's calls from the 2nd second after its first call to the 4th,
# whatever tier serves them then (under auto: after the probe, compile and race, or not)
WINDOW = (1.0, 4.0)


def window_median(fn, start=WINDOW[0], end=WINDOW[1]):
  """The median seconds of the calls of ``fn`` (a fresh function: the first call traces)
  made between ``start`` and ``end`` seconds after its first call."""
  first = time.perf_counter()
  times = []
  while True:
    t0 = time.perf_counter()
    if t0 - first >= end:
      return statistics.median(times)
    fn()
    if t0 - first >= start:
      times.append(time.perf_counter() - t0)


def once(fn):
  """Seconds taken by one call of ``fn``."""
  t0 = time.perf_counter()
  fn()
  return time.perf_counter() - t0


def timed_import(worker, *names):
  """Import ``names`` (the first is the library), emit the seconds it took as "import"."""
  import importlib
  t0 = time.perf_counter()
  try:
    mods = [importlib.import_module(n) for n in names]
  except Exception as e:
    why = f"cannot import {names[0]}: {type(e).__name__}: {e}"
    worker.emit("import", unavailable=why)
    worker.unavailable(why)
    sys.exit(0)
  worker.emit("import", time.perf_counter() - t0)
  return mods


def threads_env(n):
  """Environment variables giving every library ``n`` threads: BLAS, OpenMP, torch's
  compiler, jaxlite's tier 0 and, for one thread, XLA's CPU runtime (which still spreads
  large elementwise loops over its pool)."""
  n = str(n)
  env = dict(OMP_NUM_THREADS=n, OPENBLAS_NUM_THREADS=n, MKL_NUM_THREADS=n,
             TORCHINDUCTOR_COMPILE_THREADS=n, JAXLITE_TIER0_THREADS=n)
  if n == "1":   # (XLA has no thread-count flag: it aborts on `--intra_op_parallelism_threads`)
    env["XLA_FLAGS"] = "--xla_cpu_multi_thread_eigen=false"
  return env


def heavy_fn(m):
  """W3, W4 and W11's heavy for a library ``m`` with NumPy's ``sin``, ``cos`` and ``tanh``
  (jax.numpy, NumPy, torch): 20 rounds of ``sin(y) * cos(y) + tanh(y)``."""
  def heavy(x):
    y = x
    for _ in range(20):
      y = m.sin(y) * m.cos(y) + m.tanh(y)
    return y
  return heavy


def mlp_data(np):
  """The MLP's parameters and batch, identical for every system (float32, seeded)."""
  rng = np.random.default_rng(0)
  params = [(rng.standard_normal((m, n), np.float32) / np.float32(np.sqrt(m)),
             np.zeros(n, np.float32)) for m, n in zip(MLP_SIZES[:-1], MLP_SIZES[1:])]
  x = rng.standard_normal((MLP_BATCH, MLP_SIZES[0]), np.float32)
  y = np.eye(MLP_SIZES[-1], dtype=np.float32)[rng.integers(0, MLP_SIZES[-1], MLP_BATCH)]
  return params, x, y


def mlp_loss_fn(jnp):
  """W5's loss (tanh MLP, mean softmax cross-entropy) written against ``jnp``: JAX's or
  jaxlite's NumPy API, which share this code."""
  def mlp_loss(params, x, y):
    h = x
    for W, b in params[:-1]:
      h = jnp.tanh(h @ W + b)
    W, b = params[-1]
    logits = h @ W + b
    m = jnp.max(logits, axis=1, keepdims=True)
    logp = logits - m - jnp.log(jnp.sum(jnp.exp(logits - m), axis=1, keepdims=True))
    return -jnp.mean(jnp.sum(logp * y, axis=1))
  return mlp_loss


def sgd_step_fn(jax, jnp):
  """W5's step (the gradient of ``mlp_loss_fn``'s loss, then an SGD update with ``LR``)
  written against ``jax``: JAX or jaxlite."""
  loss = mlp_loss_fn(jnp)

  def sgd_step(params, x, y):
    grads = jax.grad(loss)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - LR * g, params, grads)
  return sgd_step


def small_mlp_data(np):
  """W7's 32-64-1 MLP and 256 examples (float32, seeded)."""
  rng = np.random.default_rng(1)
  params = (rng.standard_normal((32, 64), np.float32) / np.float32(np.sqrt(32)),
            np.zeros(64, np.float32),
            rng.standard_normal((64, 1), np.float32) / np.float32(8.0),
            np.zeros(1, np.float32))
  return params, rng.standard_normal((256, 32), np.float32), rng.standard_normal(256, np.float32)


def per_example_loss_fn(m):
  """W7's per-example loss (a 32-64-1 tanh MLP, squared error) for a library ``m`` with
  ``tanh`` (jax.numpy, torch)."""
  def per_example_loss(p, x, y):
    h = m.tanh(x @ p[0] + p[1])
    return ((h @ p[2] + p[3])[0] - y) ** 2
  return per_example_loss


def hessian_input(np):
  """W8's input: 100 points in [-1, 1]."""
  return np.linspace(-1.0, 1.0, 100, dtype=np.float32)
