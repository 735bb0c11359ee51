"""Probe: instructions the main thread executes per call, counted by valgrind's callgrind.

    python benchmarks/probes/instructions.py [--python PY] [--lib jaxlite|jax] WORKLOAD...

Wall-clock times on a shared machine move by 10-30% from run to run; instruction counts
move by well under 1%, so a change of a few hundred instructions per call shows. Each
workload runs twice under callgrind, with 0 and with N calls after the same warm-up; the
difference of the main thread's totals over N is the cost of one call (other threads,
such as XLA's workers, are left out). Workloads:

  w2      block(f(x)) of a cached jit call pinned to XLA (jax: plain jit), x f32[4]
  pytree  the same for f(params, x): 6 parameter leaves and 6 outputs
  sin     eager jnp.sin on f32[10]
  add     eager x + x on f32[10]
  tier0   block(f(x)) of x*2+1 pinned to tier 0 (jaxlite only)
  w5first the first call of W5's MLP step (jaxlite: pinned to tier 0), after one jitted
          call has paid the process's one-time costs: N is 1, with no warm-up
  w5autofirst  the same under jaxlite's default policy (``auto``)

Needs valgrind. Run with ``env -u PYTHONDONTWRITEBYTECODE``: both counted runs then
load the bytecode that a first, uncounted run cached (the XLA backend's modules load
only when a workload uses them, so an import alone would not cache theirs).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

_SETUP = """
import os, sys
os.environ.setdefault("JAX_PLATFORMS", "cpu")
import importlib
lib, work, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
jax = importlib.import_module(lib); jnp = importlib.import_module(lib + ".numpy")
xla = {"backend": "xla"} if lib == "jaxlite" else {}
b = jax.block_until_ready
if work == "w2":
  f = jax.jit(lambda x: x * 2 + 1, **xla)
  x = b(f(jnp.arange(4, dtype=jnp.float32)))
  call = lambda: b(f(x))
elif work == "pytree":
  params = [(jnp.ones((4, 4)), jnp.ones((4,))) for _ in range(3)]
  f = jax.jit(lambda p, x: [(w * 0.5, c + x.sum()) for w, c in p], **xla)
  x = jnp.ones((4,))
  call = lambda: b(f(params, x))
elif work == "sin":
  x = jnp.ones((10,), jnp.float32)
  call = lambda: b(jnp.sin(x))
elif work == "add":
  x = jnp.ones((10,), jnp.float32)
  call = lambda: b(x + x)
elif work in ("w5first", "w5autofirst"):
  sys.path.insert(0, os.path.join(os.getcwd(), "benchmarks", "workers"))
  import numpy as np
  from _common import mlp_data, sgd_step_fn
  tier0 = {"backend": "numpy"} if lib == "jaxlite" and work == "w5first" else {}
  b(jax.jit(lambda v: v + 1, **tier0)(jnp.ones(7, jnp.float32)))
  params, x, y = jax.tree_util.tree_map(jnp.asarray, mlp_data(np))
  step = jax.jit(sgd_step_fn(jax, jnp), **tier0)
  call = lambda: b(step(params, x, y))
elif work == "tier0":
  f = jax.jit(lambda x: x * 2 + 1, backend="numpy")
  x = jnp.ones((10,), jnp.float32)
  call = lambda: b(f(x))
for _ in range(0 if work.endswith("first") else 200):
  call()
for _ in range(n):
  call()
"""


def main_thread_instructions(python, lib, work, n):
  with tempfile.TemporaryDirectory() as d:
    script = os.path.join(d, "work.py")
    with open(script, "w") as fh:
      fh.write(_SETUP)
    out = os.path.join(d, "cg.out")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
    subprocess.run(["valgrind", "--tool=callgrind", "--separate-threads=yes",
                    f"--callgrind-out-file={out}", python, script, lib, work, str(n)],
                   check=True, capture_output=True, env=env)
    with open(out + "-01") as fh:
      text = fh.read()
  return int(re.search(r"^(?:summary|totals): (\d+)", text, re.M).group(1))


def main():
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("workloads", nargs="+", choices=["w2", "pytree", "sin", "add", "tier0", "w5first",
                                                 "w5autofirst"])
  p.add_argument("--python", default=sys.executable)
  p.add_argument("--lib", default="jaxlite", choices=["jaxlite", "jax"])
  p.add_argument("--calls", type=int, default=3000)
  args = p.parse_args()
  for work in args.workloads:
    main_thread_instructions(args.python, args.lib, work, 0)   # caches every module's bytecode
    calls = 1 if work.endswith("first") else args.calls
    base = main_thread_instructions(args.python, args.lib, work, 0)
    more = main_thread_instructions(args.python, args.lib, work, calls)
    print(f"{args.lib} {work}: {(more - base) / calls:.0f} instructions per call")


if __name__ == "__main__":
  main()
