"""Accelerator benchmark: jaxlite against JAX on the same chip, in one device session.

    python benchmarks/tpu.py --out DIR             # both systems, one after the other
    python benchmarks/tpu.py --system jaxlite      # one system (a worker, JSON lines)

One process holds a TPU at a time, so each system runs in its own worker process, one
after the other; each row is the median of its repetitions, and the table gives jaxlite's
time as a ratio of JAX's (for TFLOP/s, JAX's rate over jaxlite's: under 1 is faster).
The same code runs on a GPU, and on the CPU for a smoke test (jaxlite then uses its PJRT
CPU device, the accelerator path). Rows:

- ``matmul_bf16``: a bf16 4096x4096 by 4096x4096 product, TFLOP/s;
- ``mlp_step``: value_and_grad plus SGD of a 1024x1024 -> 2048 -> 1 MLP;
- ``transformer_step``: a bf16 transformer block (attention and MLP) training step;
- ``scan_1000``: a 1,000-step ``lax.scan`` of a small recurrence;
- ``tiny_jit``: a jitted ``x + 1`` on 8 floats, dispatch and wait;
- ``eager_op``: ``jnp.sin`` of 8 floats outside jit, dispatch and wait;
- ``first_call``: trace, compile and run of a fresh function (the MLP step);
- ``first_call_cached``: the same in a second process whose persistent compile cache the
  first filled.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _lib(system):
  if system == "jax":
    import jax
  else:
    sys.path.insert(0, ROOT)
    import jaxlite as jax
  return jax


def _median_seconds(fn, repeat=7, number=10):
  fn()
  times = []
  for _ in range(repeat):
    t0 = time.perf_counter()
    for _ in range(number):
      fn()
    times.append((time.perf_counter() - t0) / number)
  return statistics.median(times)


def _mlp(jax, jnp, dtype):
  def init(key, sizes):
    keys = jax.random.split(key, len(sizes) - 1)
    return [(jax.random.normal(k, (m, n), dtype) * (1 / m ** 0.5), jnp.zeros(n, dtype))
            for k, m, n in zip(keys, sizes[:-1], sizes[1:])]

  def loss(params, x, y):
    for w, b in params[:-1]:
      x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return jnp.mean((x @ w + b - y) ** 2)

  @jax.jit
  def step(params, x, y):
    value, grads = jax.value_and_grad(loss)(params, x, y)
    return value, jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)
  return init, step


def _transformer(jax, jnp):
  d, heads, seq, batch = 512, 8, 256, 8
  bf16 = jnp.bfloat16

  def init(key):
    k = jax.random.split(key, 6)
    s = 1 / d ** 0.5
    return {"qkv": jax.random.normal(k[0], (d, 3 * d), bf16) * s,
            "out": jax.random.normal(k[1], (d, d), bf16) * s,
            "up": jax.random.normal(k[2], (d, 4 * d), bf16) * s,
            "down": jax.random.normal(k[3], (4 * d, d), bf16) * (s / 2),
            "ln1": jnp.ones(d, bf16), "ln2": jnp.ones(d, bf16)}

  def norm(x, g):
    x32 = x.astype(jnp.float32)
    x32 = (x32 - x32.mean(-1, keepdims=True)) * jax.lax.rsqrt(x32.var(-1, keepdims=True)
                                                             + 1e-6)
    return (x32 * g.astype(jnp.float32)).astype(bf16)

  def block(p, x):
    h = norm(x, p["ln1"])
    q, k, v = jnp.split(h @ p["qkv"], 3, axis=-1)
    split = lambda t: t.reshape(batch, seq, heads, d // heads).transpose(0, 2, 1, 3)
    q, k, v = split(q), split(k), split(v)
    logits = (q @ k.transpose(0, 1, 3, 2)).astype(jnp.float32) / (d // heads) ** 0.5
    mask = jnp.tril(jnp.ones((seq, seq), bool))
    att = jax.nn.softmax(jnp.where(mask, logits, -1e9), axis=-1).astype(bf16)
    y = (att @ v).transpose(0, 2, 1, 3).reshape(batch, seq, d)
    x = x + y @ p["out"]
    h = norm(x, p["ln2"])
    return x + jax.nn.gelu(h @ p["up"]) @ p["down"]

  def loss(p, x):
    return jnp.mean(block(p, x).astype(jnp.float32) ** 2)

  @jax.jit
  def step(p, x):
    value, grads = jax.value_and_grad(loss)(p, x)
    return value, jax.tree_util.tree_map(lambda a, g: a - 0.01 * g.astype(a.dtype), p, grads)
  return init, step, (batch, seq, d)


def worker(system, only_first=False):
  """Run every row for ``system``, printing one JSON line per row."""
  t_import = time.perf_counter()
  jax = _lib(system)
  jnp = jax.numpy
  emit = lambda row, value, unit: print(json.dumps(
      {"system": system, "row": row, "value": value, "unit": unit}), flush=True)
  key = jax.random.key(0)
  block = jax.block_until_ready
  init, step = _mlp(jax, jnp, jnp.float32)
  x = jax.random.normal(key, (1024, 1024))
  y = jax.random.normal(key, (1024, 1))
  params = init(key, [1024, 2048, 1])
  block(params)
  t0 = time.perf_counter()
  block(step(params, x, y))
  emit("first_call" + ("_cached" if only_first else ""), time.perf_counter() - t0, "s")
  emit("import" + ("_cached" if only_first else ""), t0 - t_import, "s")
  if only_first:
    return
  emit("platform", jax.devices()[0].device_kind, "")
  emit("mlp_step", _median_seconds(lambda: block(step(params, x, y))), "s")

  a = jax.random.normal(key, (4096, 4096), jnp.bfloat16)
  matmul = jax.jit(lambda p, q: p @ q)
  seconds = _median_seconds(lambda: block(matmul(a, a)), number=20)
  emit("matmul_bf16", 2 * 4096 ** 3 / seconds / 1e12, "TFLOP/s")

  init_t, step_t, shape = _transformer(jax, jnp)
  p = init_t(key)
  xt = jax.random.normal(key, shape, jnp.bfloat16)
  if os.environ.get("TPU_BENCH_DUMP"):   # the module, kept before a compile that may crash
    with open(os.path.join(os.environ["TPU_BENCH_DUMP"], f"transformer_{system}.mlir"),
              "w") as f:
      f.write(step_t.lower(p, xt).as_text())
  emit("transformer_step", _median_seconds(lambda: block(step_t(p, xt))), "s")

  def cell(h, u):
    h = jnp.tanh(h * 0.9 + u)
    return h, h.sum()
  scan = jax.jit(lambda h, us: jax.lax.scan(cell, h, us))
  h0, us = jnp.zeros(128), jax.random.normal(key, (1000, 128))
  emit("scan_1000", _median_seconds(lambda: block(scan(h0, us))), "s")

  small = jnp.arange(8.0)
  tiny = jax.jit(lambda v: v + 1)
  emit("tiny_jit", _median_seconds(lambda: block(tiny(small)), number=200), "s")
  emit("eager_op", _median_seconds(lambda: block(jnp.sin(small)), number=200), "s")


def _run_worker(system, python, env, only_first=False):
  cmd = [python, __file__, "--system", system] + (["--first-only"] if only_first else [])
  proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
  rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
  if proc.returncode:
    rows.append({"system": system, "row": "error", "value": proc.stderr[-2000:], "unit": ""})
  return rows


def main():
  parser = argparse.ArgumentParser()
  parser.add_argument("--system", choices=["jax", "jaxlite"])
  parser.add_argument("--first-only", action="store_true")
  parser.add_argument("--jax-python", default=sys.executable)
  parser.add_argument("--out", default=None)
  parser.add_argument("--rounds", type=int, default=1,
                      help="rounds, alternating which system goes first; each row keeps "
                           "its best round (the host beside a lent chip is shared)")
  args = parser.parse_args()
  if args.system:
    worker(args.system, args.first_only)
    return
  rows = []
  systems = [("jax", args.jax_python), ("jaxlite", sys.executable)]
  for r in range(args.rounds):
    for system, python in (systems if r % 2 == 0 else systems[::-1]):
      with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, JAX_COMPILATION_CACHE_DIR=cache, JAXLITE_CACHE_DIR=cache,
                   JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
                   JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="0")
        rows += [dict(row, round=r) for row in _run_worker(system, python, env)]
        rows += [dict(row, round=r) for row in _run_worker(system, python, env,
                                                           only_first=True)]
  table = _table(rows)
  print(table)
  if args.out:
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "tpu_bench.jsonl"), "w") as f:
      f.writelines(json.dumps(r) + "\n" for r in rows)
    with open(os.path.join(args.out, "tpu_bench.md"), "w") as f:
      f.write(table + "\n")


def _best(rows):
  """Per (system, row), the best round: the least time, the most TFLOP/s."""
  by = {}
  for r in rows:
    k = (r["system"], r["row"])
    old = by.get(k)
    if old is None or (isinstance(r["value"], float) and (
        r["value"] > old["value"] if r["unit"] == "TFLOP/s" else r["value"] < old["value"])):
      by[k] = r
  return by


def _table(rows):
  by = _best(rows)
  lines = ["| row | JAX | jaxlite | jaxlite / JAX |", "|---|---|---|---|"]
  for row in ["platform", "matmul_bf16", "mlp_step", "transformer_step", "scan_1000",
              "tiny_jit", "eager_op", "import", "first_call", "first_call_cached", "error"]:
    a, b = by.get(("jax", row)), by.get(("jaxlite", row))
    if a is None and b is None:
      continue
    show = lambda r: "-" if r is None else (
        r["value"] if isinstance(r["value"], str) else
        f"{r['value'] * 1e3:.3f} ms" if r["unit"] == "s" else f"{r['value']:.1f} {r['unit']}")
    ratio = ""
    if a and b and isinstance(a["value"], float) and isinstance(b["value"], float):
      ratio = f"{(a['value'] / b['value'] if row == 'matmul_bf16' else b['value'] / a['value']):.2f}"
    lines.append(f"| {row} | {show(a)} | {show(b)} | {ratio} |")
  return "\n".join(lines)


if __name__ == "__main__":
  main()
