"""Record JAX's answer to every replay case (run under real JAX, never by the tests).

    /path/to/jax-venv/bin/python tests/jax_replay/record.py [--x64] [--shards N]
    python tests/jax_replay/record.py --platform tpu [--x64] [--every 24] [--out DIR]

writes ``tests/jax_replay/x32.npz`` (or ``x64.npz``); with ``--platform`` (on a machine
with that accelerator and JAX), ``tpu-x32.npz`` and so on, of the one-in-``--every``
sample of cases the device mode replays (``cases.in_device_sample``), in one process (one
process holds the chip). For each case and mode (``eager``,
``jit``, ``vmap`` over a stacked leading axis of two) it stores either the exception class
JAX raised or the output leaves: kind (``A`` array, ``P`` Python value), dtype, shape, weak
type and bytes. ``jit`` and ``vmap`` entries that add nothing are stored as references.
Made with JAX 0.10.2 (``jax==0.10.2 jaxlib==0.10.2``) on CPU.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import cases as case_lib  # noqa: E402
import tables  # noqa: E402


def _namespace():
  import jax
  import jax.numpy as jnp
  import jax.scipy.special as special
  from types import SimpleNamespace
  return SimpleNamespace(jax=jax, jnp=jnp, lax=jax.lax, nn=jax.nn, special=special,
                         random=jax.random)


def flatten(out, leaves):
  """The structure of ``out`` as a string; its leaves are appended to ``leaves``."""
  import jax
  if isinstance(out, (tuple, list)):
    open_, close = ("(", ")") if isinstance(out, tuple) else ("[", "]")
    return open_ + ",".join(flatten(o, leaves) for o in out) + close
  if isinstance(out, jax.Array):
    leaves.append(("A", np.asarray(out), bool(jax.typeof(out).weak_type)))
    return "A"
  if isinstance(out, np.ndarray):
    leaves.append(("N", out, False))
    return "N"
  leaves.append(("P", repr(out), False))
  return "P"


def outcome(thunk):
  try:
    with warnings.catch_warnings():
      warnings.simplefilter("ignore")
      out = thunk()
  except Exception as e:  # the class is the record
    return {"err": type(e).__name__}, []
  leaves = []
  tree = flatten(out, leaves)
  return {"tree": tree}, leaves


def _same(a, b):
  if "err" in a or "err" in b:
    return a == b
  return a["tree"] == b["tree"] and len(a["_leaves"]) == len(b["_leaves"]) and all(
      x[0] == y[0] and (x[1] == y[1] if x[0] == "P" else (
          x[1].dtype == y[1].dtype and x[1].shape == y[1].shape and x[2] == y[2]
          and x[1].tobytes() == y[1].tobytes()))
      for x, y in zip(a["_leaves"], b["_leaves"]))


def record_case(ns, case, modes=("eager", "jit", "vmap")):
  import jax
  jnp = ns.jnp
  np_in = case_lib.inputs(case)
  entry = {"in": case_lib.input_checksum(np_in)}
  results = {}

  def run(mode):
    if mode == "eager":
      return case.call(ns, [jnp.asarray(a) for a in np_in])
    if mode == "jit":
      return jax.jit(lambda *arrs: case.call(ns, arrs))(*[jnp.asarray(a) for a in np_in])
    batched = case_lib.inputs(case, batch=2)
    return jax.vmap(lambda *arrs: case.call(ns, arrs))(*[jnp.asarray(a) for a in batched])

  modes = [m for m in modes if m != "vmap" or case.vmap and np_in]
  for mode in modes:
    rec, leaves = outcome(lambda: run(mode))
    rec["_leaves"] = leaves
    results[mode] = rec
  for mode in modes:
    if mode == "jit" and "eager" in results and _same(results["jit"], results["eager"]):
      entry[mode] = "=eager"
    else:
      entry[mode] = results[mode]
  return entry


HANG_SECONDS = 90
DEVICE_EVERY = 24   # the device mode's sample: one case in this many


def _shard_path(x64, shard, out=HERE):
  return os.path.join(out, f".record-{'x64' if x64 else 'x32'}-{shard}.pkl")


def _worker(args):
  """Record one shard, saving as it goes: a case that hangs JAX (its gcd loops forever on
  iinfo.min, for example) kills the worker, which is restarted and records it as hung."""
  x64, shard, nshards, platform, every, out, modes, budget = args
  import pickle
  import threading
  import time
  import jax
  jax.config.update("jax_platforms", platform)
  jax.config.update("jax_enable_x64", x64)
  ns = _namespace()
  path = _shard_path(x64, shard, out)
  done = {}
  if os.path.exists(path):
    with open(path, "rb") as f:
      done = pickle.load(f)
  current = {"id": None, "since": time.time()}

  def save():
    with open(path + ".tmp", "wb") as f:
      pickle.dump(done, f)
    os.replace(path + ".tmp", path)

  def watchdog():
    while True:
      time.sleep(5)
      if current["id"] is not None and time.time() - current["since"] > HANG_SECONDS:
        done[current["id"]] = {"hung": True}
        save()
        os._exit(3)
  threading.Thread(target=watchdog, daemon=True).start()
  todo = [c for i, c in enumerate(tables.all_cases(x64))
          if i % nshards == shard and c.id not in done
          and case_lib.in_device_sample(c.id, every)]
  deadline = time.time() + budget if budget else None
  for k, case in enumerate(todo):
    if deadline and time.time() > deadline:
      break
    current["id"], current["since"] = case.id, time.time()
    done[case.id] = record_case(ns, case, modes)
    if k % 200 == 199:
      save()
  current["id"] = None
  save()
  return path


def _run_shard(args):
  """Run ``_worker`` in fresh processes until the shard is complete."""
  import subprocess
  x64, shard, nshards, platform, every, out, modes, budget = args
  while True:
    code = subprocess.call([sys.executable, __file__, "--worker", str(int(x64)), str(shard),
                            str(nshards), platform, str(every), out, ",".join(modes),
                            str(budget or 0)])
    if code == 0:
      return _shard_path(x64, shard, out)
    if code != 3:
      raise RuntimeError(f"shard {shard} failed with exit code {code}")


def write_record(parts, x64, name):
  """Write the recorded shards ``parts`` ({case id: entry}) as one compressed file."""
  index, chunks, offset = {}, [], 0
  for part in parts:
    for cid, entry in part.items():
      if entry.get("hung"):
        index[cid] = entry
        continue
      entry = dict(entry)
      for mode in ("eager", "jit", "vmap"):
        rec = entry.get(mode)
        if not isinstance(rec, dict) or "_leaves" not in rec:
          continue
        rec = entry[mode] = dict(rec)
        stored = []
        for kind, value, weak in rec.pop("_leaves"):
          if kind == "P":
            stored.append(["P", value])
            continue
          data = np.ascontiguousarray(value).tobytes()
          stored.append([kind, value.dtype.name, list(value.shape), weak, offset, len(data)])
          chunks.append(data)
          offset += len(data)
        rec["leaves"] = stored
      index[cid] = entry
  import jax
  meta = {"jax": jax.__version__, "x64": x64, "platform": jax.default_backend(),
          "device_kind": jax.devices()[0].device_kind, "cases": index}
  blob = np.frombuffer(b"".join(chunks), np.uint8)
  np.savez_compressed(name, index=np.frombuffer(json.dumps(meta).encode(), np.uint8),
                      blob=blob)
  print(f"wrote {name}: {len(index)} cases, {offset} bytes of values")


def main():
  import pickle
  if sys.argv[1:2] == ["--worker"]:
    x64, shard, nshards = (int(v) for v in sys.argv[2:5])
    _worker((bool(x64), shard, nshards, sys.argv[5], int(sys.argv[6]), sys.argv[7],
             sys.argv[8].split(","), float(sys.argv[9])))
    return
  parser = argparse.ArgumentParser()
  parser.add_argument("--x64", action="store_true")
  parser.add_argument("--shards", type=int, default=1)
  parser.add_argument("--platform", default="cpu")
  parser.add_argument("--every", type=int, default=None)
  parser.add_argument("--out", default=HERE)
  parser.add_argument("--modes", default=None, help="comma-separated: eager,jit,vmap")
  parser.add_argument("--budget", type=float, default=None,
                      help="seconds after which no new case is started (per shard)")
  args = parser.parse_args()
  every = args.every or (1 if args.platform == "cpu" else DEVICE_EVERY)
  modes = (args.modes or ("eager,jit,vmap" if args.platform == "cpu" else "eager")).split(",")
  os.makedirs(args.out, exist_ok=True)
  from concurrent.futures import ThreadPoolExecutor
  with ThreadPoolExecutor(args.shards) as pool:
    paths = list(pool.map(_run_shard, [(args.x64, i, args.shards, args.platform, every,
                                        args.out, modes, args.budget)
                                       for i in range(args.shards)]))
  parts = []
  for path in paths:
    with open(path, "rb") as f:
      parts.append(pickle.load(f))
  suite = "x64.npz" if args.x64 else "x32.npz"
  name = os.path.join(args.out, suite if args.platform == "cpu" else
                      f"{args.platform}-{suite}")
  write_record(parts, args.x64, name)
  for path in paths:
    os.remove(path)


if __name__ == "__main__":
  main()
