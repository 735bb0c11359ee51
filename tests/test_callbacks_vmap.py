"""pure_callback (every vmap_method), io_callback, jax.debug.print and jax.debug.callback
under vmap, replayed on jaxlite against what JAX 0.10.2 did (tests/data/callbacks_vmap.json,
recorded by tests/data/make_callbacks_vmap.py from the cases in callback_cases.py).

Each case runs eagerly and under jit on each tier; what the callbacks saw (type, shape,
dtype and values of every argument, call by call), the printed text, the outputs and the
errors must be JAX's, and so must the jaxpr.
"""
import contextlib
import functools
import io
import json
import os
import re
import sys

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite.experimental import io_callback

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "data"))
from callback_cases import cases  # noqa: E402

with open(os.path.join(os.path.dirname(__file__), "data", "callbacks_vmap.json")) as _f:
  _REFERENCE = json.load(_f)["cases"]


def _xla_available():
  from jaxlite._src.backends import xla
  return xla.is_available() and xla.platform() == "cpu"


# mode -> (the jit the cases use inside vmap, how the case's function is run, JAX's record)
_MODES = {
    "eager": (jax.jit, lambda f: f, "eager"),
    "numpy": (functools.partial(jax.jit, backend="numpy"),
              functools.partial(jax.jit, backend="numpy"), "jit"),
    "xla": (functools.partial(jax.jit, backend="xla"),
            functools.partial(jax.jit, backend="xla"), "jit"),
}
# Cases whose calls XLA must make in program order: loops (sequential pure_callback and
# io_callback are a scan) and ordered effects. XLA may reorder the other debug effects, as
# it does in JAX, and the pure callbacks of an unrolled loop (JAX's come out of order even
# eagerly): for those only the multiset of calls is JAX's.
_IN_ORDER_ON_XLA = re.compile(r"pure_sequential_(?!unrolled)|io_unordered|print_ordered|"
                              r"print_two_call|print_jit_inside|callback_nested|"
                              r"callback_two_call")
_NEVER_IN_ORDER = re.compile(r"pure_sequential_unrolled")


def _leaves(out):
  return [[list(np.shape(x)), np.asarray(x).dtype.name, np.asarray(x)]
          for x in jax.tree_util.tree_leaves(out)]


def _run(name, mode):
  jit, wrap, _ = _MODES[mode]
  make, args = cases(jax, jnp, io_callback, jit)[name]
  calls, text, result = [], io.StringIO(), {}
  with contextlib.redirect_stdout(text):
    try:
      result["out"] = _leaves(wrap(make(calls.append))(*args))
    except Exception as e:  # noqa: BLE001  (compared below)
      result["error"] = e
    jax.effects_barrier()
  result["calls"], result["stdout"] = calls, text.getvalue()
  return result


def _canonical(calls):
  return json.loads(json.dumps(calls))   # tuples as lists, as JSON recorded them


def _check_order(got, want_in_order, want, in_order):
  """``got`` is ``want`` as a multiset, and in ``want_in_order``'s order if ``in_order``."""
  key = functools.partial(json.dumps, sort_keys=True)
  assert sorted(map(key, got)) == sorted(map(key, want))
  if in_order:
    assert got == want_in_order


def _check_error(error, want):
  cls, message, inner = want
  assert error is not None, f"JAX raised {cls}: {message}"
  if inner is None:   # raised while tracing: the same class and message
    assert (type(error).__name__, str(error)) == (cls, message)
    return
  # Raised by (or about) the host callback at run time: JAX, and jaxlite on every tier,
  # raise a JaxRuntimeError whose message ends with the callback's traceback
  assert type(error).__name__ == "JaxRuntimeError"
  assert str(error).startswith("INTERNAL: CpuCallback error calling callback: Traceback")
  assert str(error).endswith(f"{inner[0]}: {inner[1]}")


def _check_outputs(got, want):
  assert len(got) == len(want)
  for (shape, dtype, value), (want_shape, want_dtype, want_value) in zip(got, want):
    assert (shape, dtype) == (want_shape, want_dtype)
    np.testing.assert_allclose(value, np.asarray(want_value, dtype), rtol=1e-6)


@pytest.mark.parametrize("mode", list(_MODES))
@pytest.mark.parametrize("name", sorted(_REFERENCE))
def test_matches_jax(name, mode):
  if mode == "xla" and not _xla_available():
    pytest.skip("the XLA CPU backend is not available")
  ref = _REFERENCE[name]
  want, eager = ref[_MODES[mode][2]], ref["eager"]
  got = _run(name, mode)
  # the order of JAX's eager run is program order; tier 0 and eager runs keep it
  in_order = not _NEVER_IN_ORDER.match(name) and (
      mode != "xla" or bool(_IN_ORDER_ON_XLA.match(name)))
  _check_order(_canonical(got["calls"]), eager["calls"], want["calls"],
               in_order and len(want["calls"]) == len(eager["calls"]))
  _check_order(got["stdout"].splitlines(), eager["stdout"].splitlines(),
               want["stdout"].splitlines(), in_order)
  if "error" in want:
    _check_error(got.get("error"), want["error"])
  else:
    assert "error" not in got, got["error"]
    _check_outputs(got["out"], want["out"])


# Differences that are not the callbacks': function addresses, and NumPy integers that
# JAX prints in some params of the surrounding ops (np.int64(1) for 1).
_NORMALIZE = [(re.compile(r" at 0x[0-9a-fA-FX]+"), ""),
              (re.compile(r"np\.int64\((-?\d+)\)"), r"\1")]
# cases whose jaxprs differ from JAX's in parts that other modules print or batch
_JAXPR_DIFFERS_ELSEWHERE = {
    "print_jit_inside": "JAX hoists a jit's jaxpr into a `let`; jaxlite prints it inline",
    "print_ordered_nested": "JAX batches squeeze by moving the batch axis first (a "
                            "transpose); jaxlite's squeeze rule needs no transpose",
}


def _normalized(text):
  for pattern, replacement in _NORMALIZE:
    text = pattern.sub(replacement, text)
  return text


@pytest.mark.parametrize("name", sorted(k for k, v in _REFERENCE.items() if v["jaxpr"]))
def test_jaxpr_matches_jax(name):
  if name in _JAXPR_DIFFERS_ELSEWHERE:
    pytest.skip(_JAXPR_DIFFERS_ELSEWHERE[name])
  make, args = cases(jax, jnp, io_callback, jax.jit)[name]
  got = str(jax.make_jaxpr(make(lambda *_: None))(*args))
  assert _normalized(got) == _normalized(_REFERENCE[name]["jaxpr"])
