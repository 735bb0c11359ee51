"""jaxlite answers as JAX does: JAX's recorded answers replayed in every mode.

``tests/jax_replay/record.py`` ran every case of ``tests/jax_replay/tables.py`` under JAX
0.10.2 and stored what came out: the exception class, or each output's dtype, shape, weak
type and values. Here every case runs in jaxlite eagerly, under ``jit`` on tier 0, under
``jit`` on XLA, and under ``vmap`` over a stacked leading axis, and each answer is compared
with JAX's for that mode. Values must match exactly for integers and booleans and to a few
ulps for floats (XLA's and NumPy's transcendental functions round differently); dtypes,
shapes, weak types and exception classes must match exactly.
"""
from __future__ import annotations

import functools
import json
import os
import sys
import warnings
from types import SimpleNamespace

import ml_dtypes
import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
import jaxlite.scipy.special
from jaxlite import config

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jax_replay")
sys.path.insert(0, HERE)
import cases as case_lib  # noqa: E402
import tables  # noqa: E402

NS = SimpleNamespace(jax=jaxlite, jnp=jnp, lax=jaxlite.lax, nn=jaxlite.nn,
                     special=jaxlite.scipy.special, random=jaxlite.random)
SUITES = ("x32", "x64")
# float tolerance per dtype: a few ulps (bfloat16 and float16 results are rounded from
# float32 computations, so two roundings may differ by one of their ulps)
RTOL = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 4e-6, "float64": 1e-12,
        "complex64": 4e-6, "complex128": 1e-12}
XLA_CHUNK = 4   # cases per XLA program: amortises the fixed cost, before compile time grows
XLA_BATCH = 400   # cases per test


@functools.lru_cache(maxsize=None)
def load(suite):
  """A recorded suite: ``x32`` / ``x64`` (JAX on the CPU), ``tpu-x32`` and so on (on that
  accelerator, the device sample only)."""
  with np.load(os.path.join(HERE, f"{suite}.npz")) as data:
    meta = json.loads(data["index"].tobytes())
    blob = data["blob"]
  return meta["cases"], blob


@functools.lru_cache(maxsize=None)
def suite_cases(suite):
  records, _ = load(suite)
  return [c for c in tables.all_cases(suite == "x64")
          if c.id in records and not records[c.id].get("hung")]


@functools.lru_cache(maxsize=None)
def groups(suite):
  out = {}
  for c in suite_cases(suite):
    out.setdefault(c.group, []).append(c)
  return out


def _available(case):
  """Whether jaxlite has the public function the case calls (the replay covers what
  jaxlite has; the API coverage list tracks the rest)."""
  if not isinstance(case.fn, str):
    return True
  try:
    case_lib.resolve(NS, case.fn)
  except AttributeError:
    return False
  return True


# ----------------------------------------------------------------------------- outcomes

def flatten(out, leaves):
  if isinstance(out, (tuple, list)):
    open_, close = ("(", ")") if isinstance(out, tuple) else ("[", "]")
    return open_ + ",".join(flatten(o, leaves) for o in out) + close
  if isinstance(out, jaxlite.Array):
    leaves.append(("A", np.asarray(out), bool(out.weak_type)))
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
  except Exception as e:  # compared with the class JAX raised
    return e, None
  leaves = []
  return flatten(out, leaves), leaves


def expected(suite, case, mode):
  """JAX's record for ``case`` in ``mode`` (``jit`` for both tiers), resolved."""
  records, blob = load(suite)
  entry = records[case.id]
  rec = entry.get("jit" if mode in ("tier0", "xla") else mode)
  if rec == "=eager":
    rec = entry["eager"]
  return rec, blob


def _leaf_value(leaf, blob):
  kind, dtype, shape, weak, offset, size = leaf
  dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
  return np.frombuffer(blob[offset:offset + size].tobytes(), dt).reshape(shape)


def compare(rec, blob, got, leaves, scale=1.0) -> str | None:
  """None if jaxlite's outcome matches JAX's record, else what differs."""
  if "err" in rec:
    if leaves is None:
      names = [k.__name__ for k in type(got).__mro__]
      return None if rec["err"] in names else (
          f"raised {type(got).__name__} ({_short(got)}); JAX raises {rec['err']}")
    return f"returned {got}; JAX raises {rec['err']}"
  if leaves is None:
    return f"raised {type(got).__name__}: {_short(got)}"
  if got != rec["tree"]:
    return f"output structure {got}; JAX's is {rec['tree']}"
  for k, (want, have) in enumerate(zip(rec["leaves"], leaves)):
    where = f"output {k}: " if len(leaves) > 1 else ""
    if want[0] == "P":
      if have[0] != "P" or have[1] != want[1]:
        return f"{where}{have[1]!r}; JAX gives {want[1]}"
      continue
    kind, dtype, shape, weak = want[:4]
    if have[0] != kind:
      return f"{where}a {'Python value' if have[0] == 'P' else 'NumPy array'}; JAX gives an array"
    value = have[1]
    problems = []
    if value.dtype.name != dtype:
      problems.append(f"dtype {value.dtype.name} (JAX: {dtype})")
    if list(value.shape) != shape:
      problems.append(f"shape {value.shape} (JAX: {tuple(shape)})")
    if have[2] != weak:
      problems.append(f"weak_type={have[2]} (JAX: {weak})")
    if problems:
      return where + ", ".join(problems)
    mismatch = _value_mismatch(_leaf_value(want, blob), value, scale)
    if mismatch:
      return where + mismatch
  return None


def _value_mismatch(want, have, scale):
  if want.dtype.kind in "biu" or want.size == 0:
    bad = want != have
  else:
    w = want.astype(np.complex128 if want.dtype.kind == "c" else np.float64)
    h = have.astype(w.dtype)
    rtol = RTOL[want.dtype.name] * scale
    with np.errstate(invalid="ignore", over="ignore"):
      parts = [(w.real, h.real), (w.imag, h.imag)] if w.dtype.kind == "c" else [(w, h)]
      bad = np.zeros(w.shape, bool)
      if w.dtype.kind == "c":
        # a complex NaN is any value with a NaN part: C99 (NumPy) and XLA put the NaN
        # in different parts for some special inputs
        nan_w, nan_h = np.isnan(w.real) | np.isnan(w.imag), np.isnan(h.real) | np.isnan(h.imag)
        bad |= nan_w != nan_h
        keep = ~(nan_w | nan_h)
        parts = [(np.where(keep, a, 0), np.where(keep, b, 0)) for a, b in parts]
      for a, b in parts:
        nan_differs = np.isnan(a) != np.isnan(b)
        inf = np.isinf(a) | np.isinf(b)
        finite_bad = ~np.isnan(a) & ~np.isnan(b) & ~inf & (
            np.abs(a - b) > rtol * (1 + np.abs(a)))
        bad |= nan_differs | (inf & (a != b)) | finite_bad
  if not np.any(bad):
    return None
  idx = np.argwhere(np.atleast_1d(bad))[:3]
  flat_w, flat_h = np.atleast_1d(want), np.atleast_1d(have)
  shown = ", ".join(f"[{','.join(map(str, i))}] {flat_h[tuple(i)]!r} vs {flat_w[tuple(i)]!r}"
                    for i in idx)
  return f"{int(np.sum(bad))} of {want.size} values differ (jaxlite vs JAX): {shown}"


def _short(e):
  text = str(e).strip().splitlines()
  return (text[0][:160] if text else "")


# ----------------------------------------------------------------------------- modes

def _arrays(case, batch=None):
  return [jnp.asarray(a) for a in case_lib.inputs(case, batch)]


def run_case(case, mode):
  """jaxlite's outcome for ``case`` in ``mode``."""
  if mode == "eager":
    return outcome(lambda: case.call(NS, _arrays(case)))
  if mode == "vmap":
    return outcome(lambda: jaxlite.vmap(lambda *a: case.call(NS, a))(*_arrays(case, 2)))
  backend = "numpy" if mode == "tier0" else "xla"
  return outcome(lambda: jaxlite.jit(lambda *a: case.call(NS, a), backend=backend)(
      *_arrays(case)))


def run_many_on_xla(cases):
  """Outcomes of ``cases`` under ``jit`` on XLA, compiled as one program where possible:
  XLA's compile time, not the cases, would dominate otherwise."""
  arrays = [_arrays(c) for c in cases]

  def program(*flat):
    outs, it = [], iter(flat)
    for c, arrs in zip(cases, arrays):
      outs.append(c.call(NS, [next(it) for _ in arrs]))
    return outs

  try:
    with warnings.catch_warnings():
      warnings.simplefilter("ignore")
      out = jaxlite.jit(program, backend="xla")(*[a for arrs in arrays for a in arrs])
  except Exception:   # some case fails: run each alone to see which
    return [run_case(c, "xla") for c in cases]
  results = []
  for o in out:
    leaves = []
    results.append((flatten(o, leaves), leaves))
  return results


# ----------------------------------------------------------------------------- tests

def _set_suite(suite):
  config.update("jax_enable_x64", suite == "x64")


@pytest.fixture
def suite_flag():
  old = config.jax_enable_x64
  yield _set_suite
  config.update("jax_enable_x64", old)


def rtol_scale(case):
  """How much looser than ``RTOL`` this case's float comparison is (``tables.LOOSE``)."""
  key = case.group.removeprefix("grad.").replace("scipy.special.", "special.")
  return max(1.0, tables.LOOSE.get(key, 0) / RTOL["float32"],
             (case.rtol or 0) / RTOL["float32"])


def _check(suite, pairs):
  failures = []
  for case, mode, (got, leaves) in pairs:
    rec, blob = expected(suite, case, mode)
    if rec is None:
      continue
    problem = compare(rec, blob, got, leaves, rtol_scale(case))
    if problem:
      failures.append(f"{mode:6} {case.id}: {problem}")
  assert not failures, f"{len(failures)} differ from JAX:\n" + "\n".join(failures[:40])


def _recorded(suite) -> bool:
  return os.path.exists(os.path.join(HERE, f"{suite}.npz"))


def test_every_suite_is_recorded():
  missing = [s for s in SUITES if not _recorded(s)]
  assert not missing, (f"no record for {missing}: run tests/jax_replay/record.py under "
                       "JAX 0.10.2 (see its docstring)")


def _group_params():
  params = []
  for suite in filter(_recorded, SUITES):
    for group in sorted(groups(suite)):
      params.append(pytest.param(suite, group, id=f"{suite}-{group}"))
  return params


@pytest.mark.parametrize("suite,group", _group_params())
@pytest.mark.parametrize("mode", ["eager", "tier0", "vmap"])
def test_replay(suite, group, mode, suite_flag):
  suite_flag(suite)
  cases = [c for c in groups(suite)[group] if _available(c)]
  records, _ = load(suite)
  for c in cases:
    assert records[c.id]["in"] == case_lib.input_checksum(case_lib.inputs(c)), (
        f"{c.id}: the inputs differ from the recorded ones (the generator changed)")
  _check(suite, [(c, mode, run_case(c, mode)) for c in cases
                 if mode != "vmap" or "vmap" in records[c.id]])


# XLA compiles each program in about 20 ms, so the XLA mode replays every case that
# raises (at trace time: no compile), every edge-value case, and a stable sample of the
# others; JAXLITE_REPLAY_XLA=all replays them all (about ten minutes).
XLA_SAMPLE = {"x32": 4, "x64": 8}


def xla_cases(suite):
  if os.environ.get("JAXLITE_REPLAY_XLA") == "all":
    return suite_cases(suite)
  every = XLA_SAMPLE[suite]
  return [c for c in suite_cases(suite)
          if "err" in (expected(suite, c, "xla")[0] or {}) or ":edge" in c.id
          or case_lib.seed_of(c.id, 0) % every == 0]


def _batches(select, size):
  """(suite, start) params covering each recorded suite's ``select(suite)`` in ``size``s."""
  params = []
  for suite in filter(_recorded, SUITES):
    for start in range(0, len(select(suite)), size):
      params.append(pytest.param(suite, start, id=f"{suite}-{start}"))
  return params


@pytest.mark.parametrize("suite,start", _batches(lambda s: xla_cases(s), XLA_BATCH))
def test_replay_xla(suite, start, suite_flag):
  from jaxlite._src import tiers
  if not tiers.xla_available():
    pytest.skip("no XLA plugin")
  suite_flag(suite)
  cases = [c for c in xla_cases(suite)[start:start + XLA_BATCH] if _available(c)]
  raising = [c for c in cases if "err" in (expected(suite, c, "xla")[0] or {})]
  running = [c for c in cases if c not in raising]
  pairs = []
  for k in range(0, len(running), XLA_CHUNK):
    chunk = running[k:k + XLA_CHUNK]
    pairs += [(c, "xla", r) for c, r in zip(chunk, run_many_on_xla(chunk))]
  pairs += [(c, "xla", run_case(c, "xla")) for c in raising]
  _check(suite, pairs)


# The device mode: the eager answers with every primitive run as an XLA executable on the
# resident device, as on an accelerator: there, against JAX's answers recorded on the same
# chip (``record.py --platform``); elsewhere on the CPU's PJRT device, against the CPU's.
# One case in DEVICE_EVERY (each new primitive signature is an XLA compile);
# JAXLITE_REPLAY_DEVICE=N replays one in N.
DEVICE_EVERY = 24
DEVICE_BATCH = 200


def device_record_name(suite):
  platform = jaxlite.default_backend()
  return suite if platform == "cpu" else f"{platform}-{suite}"


def device_cases(suite):
  every = int(os.environ.get("JAXLITE_REPLAY_DEVICE", DEVICE_EVERY))
  return [c for c in suite_cases(suite) if case_lib.in_device_sample(c.id, every)]


@pytest.mark.parametrize("suite,start", _batches(lambda s: device_cases(s), DEVICE_BATCH))
def test_replay_device(suite, start, suite_flag):
  from jaxlite._src import tiers
  if not tiers.xla_available():
    pytest.skip("no XLA plugin")
  record = device_record_name(suite)
  if not _recorded(record):
    pytest.skip(f"no answers recorded on {jaxlite.default_backend()} ({record}.npz): run "
                "tests/jax_replay/record.py --platform there (tools/accelerator_check.sh)")
  suite_flag(suite)
  records, _ = load(record)
  cases = [c for c in device_cases(suite)[start:start + DEVICE_BATCH]
           if _available(c) and c.id in records and not records[c.id].get("hung")]
  with config.override("jaxlite_cpu_backend", "pjrt"):   # (an accelerator is resident)
    pairs = [(c, "eager", run_case(c, "eager")) for c in cases]
  _check(record, pairs)


def test_replay_covers_the_public_api():
  """Every public elementwise, reduction and shape function jaxlite has is replayed, or
  listed in tables.NOT_REPLAYED with the reason."""
  covered = tables.covered_names(tables.all_cases(True))
  modules = {"numpy": jnp, "lax": jaxlite.lax, "nn": jaxlite.nn,
             "special": jaxlite.scipy.special}
  missing = []
  for prefix, module in modules.items():
    for name in dir(module):
      obj = getattr(module, name)
      if name.startswith("_") or not callable(obj) or isinstance(obj, type):
        continue
      path = f"{prefix}.{name}"
      if path not in covered and path not in tables.NOT_REPLAYED:
        missing.append(path)
  assert not missing, f"not replayed and not listed in NOT_REPLAYED: {missing}"
