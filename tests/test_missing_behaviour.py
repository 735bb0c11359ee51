"""One-argument ``jnp.where`` and ``nonzero``/``argwhere``/``flatnonzero`` with ``size``,
``reshape``/``ravel`` with ``order``, ``jax.ops.segment_*``, reductions with ``where=``,
and ``lax.reduce`` / ``lax.reduce_window`` with any computation.

The oracle is JAX 0.10 itself: ``data/make_missing_behaviour.py`` ran the cases of
``data/missing_cases.py`` with real JAX and recorded values, dtypes, weak types, tree
structures, printed jaxprs and exception classes. Each case runs here eagerly, under
``jit`` on both tiers, and under the ``vmap`` / ``grad`` / ``jvp`` it was recorded with
(eagerly and jitted on both tiers). A few further tests check how the general reductions
are compiled, and derivatives that jaxlite supports where JAX fails.
"""
import json
import os
import sys
import warnings

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax, ops
from jaxlite._src.core.core import ShapedArray
from jaxlite._src.lax import reductions as lax_red

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "data"))
from missing_cases import E, J, P, as_arrays, cases, transformed, unpack  # noqa: E402

with open(os.path.join(os.path.dirname(__file__), "data", "missing_behaviour.json")) as _f:
  RECORD = json.load(_f)["results"]
CASES = cases(jax, jnp, lax, ops)


def _runs():
  for name in sorted(CASES):
    for mode in unpack(CASES[name])[2]:
      backends = {E: [None], P: [None], J: ["numpy", "xla"]}.get(mode,
                                                                  [None, "numpy", "xla"])
      for backend in backends:
        yield pytest.param(name, mode, backend, id=f"{name}-{mode}-{backend or 'eager'}")


def _check_leaf(got, want):
  value = np.asarray(got)
  assert list(value.shape) == want["shape"]
  assert value.dtype.name == want["dtype"]
  assert bool(got.weak_type) == want["weak_type"]
  if value.dtype.kind == "c":
    expected = np.array(want["value"][0]) + 1j * np.array(want["value"][1])
  else:
    expected = np.array(want["value"], dtype=value.dtype).reshape(value.shape)
  if value.dtype.kind in "fc":
    rtol = 2e-3 if value.dtype.itemsize <= 2 else 1e-5
    np.testing.assert_allclose(value, expected, rtol=rtol, atol=rtol * 1e-2)
  else:
    np.testing.assert_array_equal(value, expected)


@pytest.mark.parametrize("name,mode,backend", list(_runs()))
def test_matches_jax(name, mode, backend):
  case, want = CASES[name], RECORD[name][mode]
  fn, args, _, _ = unpack(case)
  args = as_arrays(jnp, args)
  if mode == P:
    assert str(jax.make_jaxpr(fn)(*args)) == want["jaxpr"]
    return
  f = transformed(jax, jnp, case, mode)
  if backend is not None:
    f = jax.jit(f, backend=backend)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    if "error" in want:
      with pytest.raises(Exception) as info:
        f(*args)
      assert type(info.value).__name__ == want["error"], info.value
      return
    out = f(*args)
  leaves, tree = jax.tree_util.tree_flatten(out)
  assert str(tree) == want["tree"]
  assert len(leaves) == len(want["leaves"])
  for got, expected in zip(leaves, want["leaves"]):
    _check_leaf(got, expected)


# -- how the general reductions compile

X = (np.arange(12, dtype=np.float32).reshape(3, 4) / 3 - 1.2).astype(np.float32)


def _argmax(a, b):
  pick = (a[0] > b[0]) | ((a[0] == b[0]) & (a[1] < b[1]))
  return jnp.where(pick, a[0], b[0]), jnp.where(pick, a[1], b[1])


def test_general_reduce_lowers_to_one_stablehlo_reduce_with_a_region():
  idx = np.tile(np.arange(4, dtype=np.int32), (3, 1))
  f = lambda a, i: lax.reduce((a, i), (-np.inf, np.int32(0)), _argmax, (1,))
  text = jax.jit(f, backend="xla").lower(X, idx).as_text()
  assert text.count('"stablehlo.reduce"') == 1
  assert "stablehlo.while" not in text and "^bb0" in text


def test_general_reduce_window_lowers_to_one_stablehlo_reduce_window():
  f = lambda a: lax.reduce_window(a, 1., lax.mul, (2, 2), (1, 1), "SAME")
  text = jax.jit(f, backend="xla").lower(X).as_text()
  assert text.count('"stablehlo.reduce_window"') == 1
  assert "stablehlo.while" not in text


@pytest.mark.parametrize("n", [1, 2, 7, 1000, 4096])
def test_tier0_reduces_as_a_tree_of_vectorised_steps(n):
  # no loop over elements: about log2(n) levels, each a fixed number of equations
  closed = lax_red.reduce_as_tree_jaxpr(
      [ShapedArray((n, 3), np.float32), ShapedArray((), np.float32)],
      lax_red.reduction_jaxpr(lambda p, q: p * q, [np.float32(1)], jax.tree_util.
                              tree_structure(0), "reduce").jaxpr, [], (0,))
  names = {e.primitive.name for e in closed.jaxpr.eqns}
  assert not names & {"while", "scan", "cond", "reduce"}
  assert len(closed.jaxpr.eqns) <= 12 * (int(np.log2(n + 1)) + 2)


def test_tier0_general_reduce_matches_numpy_on_a_large_array():
  x = np.random.default_rng(0).uniform(0.999, 1.001, (20001, 3)).astype(np.float32)
  f = lambda a: lax.reduce(a, np.float32(1), lambda p, q: p * q, (0,))
  got = jax.jit(f, backend="numpy")(x)
  np.testing.assert_allclose(got, np.prod(x.astype(np.float64), 0), rtol=1e-4)


def test_general_reduce_keeps_the_order_of_non_commutative_computations():
  # keep-the-left-operand is associative but not commutative: the first element wins
  x = np.arange(1, 10, dtype=np.float32).reshape(9, 1)
  first = lambda a: lax.reduce(a, np.float32(np.nan), lambda p, q: jnp.where(
      jnp.isnan(p), q, p), (0,))
  for f in (first, jax.jit(first, backend="numpy"), jax.jit(first, backend="xla")):
    np.testing.assert_array_equal(f(x), [1.])


# -- derivatives jaxlite supports where JAX 0.10 fails

def test_grad_of_variadic_reduce_with_an_integer_operand():
  # JAX 0.10 fails to reshape the float0 tangent of the index operand
  xt = np.array([[1., 3., 3., 0.], [5., 5., 1., 5.]], np.float32)
  idx = np.tile(np.arange(4, dtype=np.int32), (2, 1))
  f = lambda a: lax.reduce((a, idx), (-np.inf, np.int32(0)), _argmax, (1,))[0].sum()
  for g in (jax.grad(f), jax.jit(jax.grad(f), backend="xla")):
    np.testing.assert_array_equal(g(xt), [[0, 1, 0, 0], [1, 0, 0, 0]])


def test_jvp_of_variadic_reduce_window_with_an_integer_operand():
  xt = np.array([[1., 3., 3., 0., 2.], [5., 5., 1., 5., 2.]], np.float32)
  idx = np.arange(10, dtype=np.int32).reshape(2, 5)
  f = lambda a: lax.reduce_window((a, idx), (-np.inf, np.int32(0)), _argmax, (1, 2),
                                  (1, 1), "VALID")
  t = np.arange(10, dtype=np.float32).reshape(2, 5)
  (values, where), (tv, ti) = jax.jvp(f, (xt,), (t,))
  np.testing.assert_array_equal(where, [[1, 1, 2, 4], [5, 6, 8, 8]])
  np.testing.assert_array_equal(tv, t.reshape(-1)[np.asarray(where)])


def test_grad_of_max_pool_with_window_dilation():
  # JAX 0.10 has no VJP for select_and_gather with window dilation
  f = lambda a: lax.reduce_window(a, -np.inf, lax.max, (2, 2), (1, 1), "VALID",
                                  window_dilation=(1, 2)).sum()
  x = np.random.default_rng(1).standard_normal((4, 5)).astype(np.float32)
  eps, g = 1e-2, jax.grad(f)(x)
  for i, j in [(0, 0), (1, 2), (3, 4)]:
    dx = np.zeros_like(x)
    dx[i, j] = eps
    np.testing.assert_allclose(g[i, j], (f(x + dx) - f(x - dx)) / (2 * eps), atol=1e-3)
