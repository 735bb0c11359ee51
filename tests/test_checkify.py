"""jax.experimental.checkify on jaxlite, against what JAX 0.10.2 did (tests/data/checkify.json,
recorded by tests/data/make_checkify.py from the cases in checkify_cases.py): the error
messages, the outputs and the errors raised, eagerly and under each jit backend."""
import functools
import json
import math
import os
import sys

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.experimental import checkify

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "data"))
from checkify_cases import cases, jaxpr_cases, masked_jaxpr, run  # noqa: E402

with open(os.path.join(os.path.dirname(__file__), "data", "checkify.json")) as _f:
  _RECORDED = json.load(_f)
_REFERENCE = _RECORDED["cases"]

_BACKENDS = ("numpy", "xla")

# tier 0 computes the NaNs the cases look for with NumPy, which warns about them
pytestmark = pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning",
                                        "ignore:divide by zero:RuntimeWarning")


def _same_values(got, want):
  if isinstance(want, list):
    return (isinstance(got, list) and len(got) == len(want)
            and all(_same_values(g, w) for g, w in zip(got, want)))
  if isinstance(want, float):
    return (math.isnan(want) and math.isnan(got)) or math.isclose(got, want, rel_tol=1e-5,
                                                                   abs_tol=1e-12)
  return got == want


def _compare(got, want):
  if "error" in want:
    assert "error" in got, f"JAX raised {want['error']}, jaxlite returned {got}"
    cls, message = want["error"]
    assert got["error"][0] == cls
    if cls == "TypeError" and "scalar pred" in message:
      # the tracer's repr after "got" is jaxlite's own
      message = message.split(", got")[0]
    assert got["error"][1].startswith(message)
    return
  assert "error" not in got, f"jaxlite raised {got['error']}"
  assert got["msg"] == want["msg"]
  assert len(got["out"]) == len(want["out"])
  for (gs, gd, gv), (ws, wd, wv) in zip(got["out"], want["out"]):
    assert (gs, gd) == (ws, wd)
    assert _same_values(gv, wv), (gv, wv)


@pytest.mark.parametrize("backend", _BACKENDS)
@pytest.mark.parametrize("name", sorted(_REFERENCE))
def test_matches_jax(name, backend):
  jit = functools.partial(jax.jit, backend=backend)
  case = cases(jax, jnp, lax, checkify, jit)[name]
  _compare(run(jax, case), _REFERENCE[name])


def test_public_names_are_jax():
  names = {"Error", "ErrorCategory", "JaxRuntimeError", "all_checks", "automatic_checks",
           "check", "check_error", "checkify", "debug_check", "div_checks", "float_checks",
           "index_checks", "init_error", "nan_checks", "user_checks"}
  assert names <= set(dir(checkify))
  assert issubclass(checkify.JaxRuntimeError, ValueError)
  assert checkify.all_checks == checkify.automatic_checks | checkify.user_checks
  assert checkify.float_checks == checkify.nan_checks | checkify.div_checks


def _positive(x):
  checkify.check(x > 0, "x must be positive, got {x}", x=x)
  return x * 2


def test_error_value():
  err, out = checkify.checkify(_positive)(jnp.float32(-1.0))
  assert str(err) == "Error(x must be positive, got -1.0 (`check` failed))"
  exc = err.get_exception()
  assert type(exc).__name__ == "FailedCheckError"
  with pytest.raises(checkify.JaxRuntimeError) as info:
    err.throw()
  assert type(info.value.__cause__) is type(exc)   # raised from the FailedCheckError
  err, _ = checkify.checkify(_positive)(jnp.float32(1.0))
  assert err.get() is None and err.get_exception() is None
  assert str(checkify.init_error) == "Error(None)"


def test_error_is_a_pytree_that_crosses_jit():
  # the error value itself is an argument of a jitted function and comes back whole
  err, _ = checkify.checkify(_positive)(jnp.float32(-3.0))
  leaves, treedef = jax.tree_util.tree_flatten(err)
  assert leaves and all(isinstance(x, jax.Array) for x in leaves)
  again = jax.jit(lambda e: e)(err)
  assert again.get() == err.get()


@pytest.mark.parametrize("backend", _BACKENDS)
def test_vmap_of_while_is_per_element(backend):
  # Each element of a batched error is the error that element alone gives (JAX itself
  # fails on this program with an internal error, so it is compared element by element).
  def f(x):
    def body(v):
      checkify.check(v < 5, "loop {}", v)
      return v + 1
    return lax.while_loop(lambda v: v < 10, body, x)
  xs = jnp.array([0, 6, 3, 12], dtype=jnp.int32)
  err, out = jax.jit(jax.vmap(checkify.checkify(f)), backend=backend)(xs)
  singles = [checkify.checkify(f)(x) for x in xs]
  expected = "\n".join(f"at mapped index {i}: {e.get()}"
                       for i, (e, _) in enumerate(singles) if e.get() is not None)
  assert err.get() == expected
  np.testing.assert_array_equal(out, [int(o) for _, o in singles])


def test_first_error_in_time_within_a_kind():
  # two checks of one kind in a loop: the first to fail at run time is reported
  def f(xs):
    def body(c, x):
      checkify.check(x < 3, "a {}", x)
      checkify.check(x < 2, "b {}", x)
      return c, x
    return lax.scan(body, 0, xs)
  err, _ = checkify.checkify(f)(jnp.arange(5))
  assert err.get() == "b 2 (`check` failed)"


def test_checkify_composes_under_grad():
  def f(x):
    checkify.check(x > 0, "neg {}", x)
    return jnp.sin(x) * x
  g = jax.grad(lambda x: checkify.checkify(f)(x)[1])(jnp.float32(0.5))
  np.testing.assert_allclose(g, math.cos(0.5) * 0.5 + math.sin(0.5), rtol=1e-6)
  err, dg = checkify.checkify(jax.grad(f))(jnp.float32(-0.5))
  assert err.get() == "neg -0.5 (`check` failed)"
  np.testing.assert_allclose(dg, math.cos(-0.5) * -0.5 + math.sin(-0.5), rtol=1e-6)


def test_checked_jaxpr_keeps_the_check():
  # jit's passes must not drop a check: it has no outputs but an effect
  jaxpr = jax.make_jaxpr(_positive)(jnp.float32(1.0))
  assert "check" in [e.primitive.name for e in jaxpr.eqns]


@pytest.mark.parametrize("name", sorted(_RECORDED["jaxprs"]))
def test_jaxprs_print_as_jax(name):
  make = jaxpr_cases(jax, jnp, checkify)[name]
  assert masked_jaxpr(make()) == _RECORDED["jaxprs"][name]


def test_check_in_scan_survives_grad():
  # JAX 0.10.2 loses this error (its reverse-mode split of the scan drops the check and
  # returns None), while its forward mode reports it (the recorded jacfwd_of_scan_check
  # case); jaxlite reports it in both.
  def f(x):
    def body(c, xi):
      checkify.check(xi < 10.0, "big {}", xi)
      return c * jnp.sin(xi) + jnp.log(xi), c
    return lax.scan(body, x, jnp.arange(1.0, 4.0) * x)[0]
  err, _ = checkify.checkify(jax.grad(f))(jnp.float32(20.0))
  assert err.get() == _REFERENCE["jacfwd_of_scan_check"]["msg"] == "big 20.0 (`check` failed)"


def test_checkify_carries_the_refs_the_function_writes():
  # recorded from JAX 0.10.2: (None, 2.0, [1, 1]), the check's message with 0.0 and the
  # ref unchanged, then under jit (None, 4.0, [2, 2])
  r = jax.new_ref(jnp.zeros(2))

  def f(x):
    checkify.check(x > 0, "x must be positive")
    r[...] = r[...] + x
    return r[0] * 2
  err, out = checkify.checkify(f)(1.0)
  assert err.get() is None and float(out) == 2.0
  np.testing.assert_array_equal(np.asarray(r[...]), [1.0, 1.0])
  err, out = checkify.checkify(f)(-1.0)
  assert err.get() == "x must be positive (`check` failed)" and float(out) == 0.0
  np.testing.assert_array_equal(np.asarray(r[...]), [0.0, 0.0])
  err, out = jax.jit(checkify.checkify(f))(2.0)
  assert err.get() is None and float(out) == 4.0
  np.testing.assert_array_equal(np.asarray(r[...]), [2.0, 2.0])
