"""Does work on the other CPU slow tier 0's calls? (Issue 19, eighth pass.)

    .venv/bin/python benchmarks/probes/other_cpu_load.py

Tier 0's vmap(grad) (W7, about 0.3 ms) and heavy (100k f32) run pinned to CPU 1, one
thread, while a separate process pinned to CPU 0 runs each load in turn: nothing, a
Python spin, XLA compiling heavy with no cache, a NumPy matmul, a 64 MB copy. Prints the
median ms per call of each round. Needs Linux and two CPUs; run from the repository root.
"""
import os, sys, time, subprocess
for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"): os.environ[v] = "1"
os.sched_setaffinity(0, {1})
sys.argv = [sys.argv[0], "--job", "stalls", "--lib", "jaxlite", "--backend", "numpy"]
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "workers"))
import _common
_common.Worker.run = lambda self, jobs: None
import jax_api as J, numpy as np
jax, jnp = J.jax, J.jnp
ps, xs, ys = jax.tree_util.tree_map(jnp.asarray, _common.small_mlp_data(np))
f = J.jit(jax.vmap(jax.grad(J.per_example_loss), in_axes=(None, 0, 0)))
xh = jnp.arange(100_000, dtype=jnp.float32)
g = J.jit(J.heavy)
def measure(fn, n):
  ts = []
  for _ in range(n):
    t = time.perf_counter(); J.block(fn()); ts.append(time.perf_counter() - t)
  ts.sort(); return ts[n // 2] * 1e3
pre = "import os; os.sched_setaffinity(0, {0})\n"
loads = {
 "idle": None,
 "spin": "while True: pass",
 "xla compile": "import os; os.environ['JAXLITE_PERSISTENT_CACHE']='0'\nimport sys; sys.path.insert(0,'benchmarks/workers'); import _common, jaxlite as jax, jaxlite.numpy as jnp\nfrom jaxlite._src.backends import xla\nfrom jaxlite._src import passes\nx=jnp.arange(100000,dtype=jnp.float32); c=passes.optimize(jax.make_jaxpr(_common.heavy_fn(jnp))(x))\nwhile True: xla.compile(c, 'h')",
 "numpy matmul": "import numpy as np\na=np.ones((300,300),np.float32)\nwhile True: a@a",
 "memcpy 64MB": "import numpy as np\na=np.ones(16_000_000,np.float32); b=a.copy()\nwhile True: np.copyto(b,a)",
}
res = {k: ([], []) for k in loads}
f(ps, xs, ys); g(xh)
for rnd in range(3):
  for name, code in loads.items():
    p = subprocess.Popen([sys.executable, "-c", pre + code], stderr=subprocess.DEVNULL) if code else None
    time.sleep(1.5 if name == "xla compile" else 0.3)
    res[name][0].append(measure(lambda: f(ps, xs, ys), 400))
    res[name][1].append(measure(lambda: g(xh), 60))
    if p: p.kill(); p.wait()
for name, (a, b) in res.items():
  print(f"{name:14s} vmap(grad) median ms {sorted(a)[1]:.3f} {['%.3f' % v for v in a]}   heavy {sorted(b)[1]:.2f} {['%.2f' % v for v in b]}")
