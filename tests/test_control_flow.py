"""Structured control flow: results, printed jaxprs, errors, derivatives, loops staying loops."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.test_util import check_grads

rng = np.random.default_rng(0)

# Expected texts recorded from JAX 0.10.2.
COND_JAXPR = """{ lambda ; a:bool[] b:f32[]. let
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:f32[] = cond[
      branches=(
        { lambda ; e:f32[]. let f:f32[] = sin e in (f,) }
        { lambda ; g:f32[]. let h:f32[] = mul g 2.0:f32[] in (h,) }
      )
    ] c b
  in (d,) }"""

SWITCH_JAXPR = """{ lambda ; a:i32[] b:f32[]. let
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:i32[] = clamp 0:i32[] c 2:i32[]
    e:f32[] = cond[
      branches=(
        { lambda ; f:f32[]. let g:f32[] = mul f 2.0:f32[] in (g,) }
        { lambda ; h:f32[]. let i:f32[] = sin h in (i,) }
        { lambda ; j:f32[]. let  in (j,) }
      )
    ] d b
  in (e,) }"""

WHILE_JAXPR = """{ lambda ; a:f32[]. let
    b:f32[] = while[
      body_jaxpr={ lambda ; c:f32[]. let d:f32[] = mul c 2.0:f32[] in (d,) }
      body_nconsts=0
      cond_jaxpr={ lambda ; e:f32[]. let f:bool[] = lt e 10.0:f32[] in (f,) }
      cond_nconsts=0
    ] a
  in (b,) }"""

FORI_JAXPR = """{ lambda ; a:f32[]. let
    _:i32[] b:f32[] = scan[
      jaxpr={ lambda ; c:i32[] d:f32[]. let
          e:i32[] = add c 1:i32[]
          f:f32[] = mul d 2.0:f32[]
        in (e, f) }
      length=5
      num_carry=2
      num_consts=0
      reverse=False
      unroll=1
    ] 0:i32[] a
  in (b,) }"""

SCAN_CONSTS_JAXPR = """{ lambda ; a:f32[]. let
    b:f32[] = scan[
      jaxpr={ lambda ; c:f32[] d:f32[]. let
          e:f32[] = sin d
          f:f32[] = mul e c
        in (f,) }
      length=3
      num_carry=1
      num_consts=1
      reverse=False
      unroll=1
    ] a a
  in (b,) }"""


def test_jaxprs_print_like_jax():
  assert str(jax.make_jaxpr(lambda p, x: lax.cond(p, lambda x: x * 2, jnp.sin, x))(
      True, 1.0)) == COND_JAXPR
  branches = [lambda x: x * 2, jnp.sin, lambda x: x]
  assert str(jax.make_jaxpr(lambda i, x: lax.switch(i, branches, x))(1, 1.0)) == SWITCH_JAXPR
  assert str(jax.make_jaxpr(lambda x: lax.while_loop(lambda c: c < 10., lambda c: c * 2.,
                                                     x))(1.0)) == WHILE_JAXPR
  assert str(jax.make_jaxpr(lambda x: lax.fori_loop(0, 5, lambda i, c: c * 2., x))(
      1.0)) == FORI_JAXPR
  assert str(jax.make_jaxpr(lambda x: lax.scan(lambda c, _: (jnp.sin(c) * x, None), x, None,
                                               length=3))(1.0)) == SCAN_CONSTS_JAXPR


def test_cond_and_switch_results():
  assert float(lax.cond(True, lambda x: x + 1, lambda x: x - 1, 1.0)) == 2.0
  assert float(lax.cond(0, lambda x: x + 1, lambda x: x - 1, 1.0)) == 0.0
  assert float(lax.cond(True, 3.0, lambda x: x + 1, 4.0, lambda x: x - 1)) == 4.0  # old form
  branches = [lambda x: x, lambda x: x * 2, lambda x: x * 3]
  assert [float(lax.switch(i, branches, 1.0)) for i in (-3, 0, 1, 2, 7)] == [1, 1, 2, 3, 3]
  soft_or_sharp = jax.jit(lambda x, sharp: lax.cond(
      sharp, lambda x: jnp.where(x > 0, x, 0.0), lambda x: jnp.log1p(jnp.exp(x)), x))
  x = jnp.array([-1.0, 0.5, 2.0])
  np.testing.assert_allclose(soft_or_sharp(x, jnp.array(True)), [0, 0.5, 2])
  np.testing.assert_allclose(soft_or_sharp(x, jnp.array(False)), np.log1p(np.exp([-1, .5, 2])),
                             rtol=1e-6)


def test_cond_with_pytrees_and_closures():
  scale = jnp.array(3.0)

  def f(p, x):
    return lax.cond(p, lambda t: {"a": t[0] * scale, "b": t[1]},
                    lambda t: {"a": t[0], "b": t[1] + scale}, (x, x + 1))
  out = jax.jit(f)(True, jnp.ones(2))
  np.testing.assert_allclose(out["a"], [3, 3])
  np.testing.assert_allclose(jax.jit(f)(False, jnp.ones(2))["b"], [5, 5])


def test_loops_results_match_python():
  assert float(lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, 1.0)) == 16.0
  assert float(lax.fori_loop(0, 5, lambda i, c: c + i, 0)) == 10
  assert float(lax.fori_loop(0, jnp.array(5), lambda i, c: c + i, 0)) == 10
  assert float(jax.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c + i, 0))(5)) == 10
  carry, ys = lax.scan(lambda c, x: (c + x, c * x), 0.0, jnp.arange(4.0))
  assert float(carry) == 6.0 and ys.tolist() == [0, 0, 2, 9]
  carry, ys = lax.scan(lambda c, x: (c + x, c), 0.0, jnp.arange(4.0), reverse=True)
  assert float(carry) == 6.0 and ys.tolist() == [6, 5, 3, 0]
  _, ys = lax.scan(lambda c, _: (c + 1, c), 0, None, length=3)
  assert ys.tolist() == [0, 1, 2]
  c, ys = lax.scan(lambda c, x: ((c[0] + x["a"], c[1]), {"s": c[0]}), (0.0, jnp.ones(2)),
                   {"a": jnp.arange(3.0)})
  assert float(c[0]) == 3.0 and ys["s"].tolist() == [0, 0, 1]
  np.testing.assert_allclose(lax.map(lambda x: x ** 2, jnp.arange(4.0)), [0, 1, 4, 9])


def test_python_control_flow_on_tracer_points_to_structured_forms():
  @jax.jit
  def f(x):
    while x < 3:
      x = x + 1
    return x
  with pytest.raises(jax.errors.TracerBoolConversionError, match="while_loop"):
    f(1.0)


def test_branch_and_carry_type_errors_read_like_jax():
  with pytest.raises(TypeError, match="cond branch outputs must have the same pytree"):
    lax.cond(True, lambda x: x, lambda x: (x, x), 1.0)
  with pytest.raises(TypeError, match=r"(?s)cond branches must have equal output types.*"
                     r"true_fun has type float32\[\] but the corresponding output of "
                     r"false_fun has type int32\[\], so the dtypes do not match"):
    lax.cond(True, lambda x: x, lambda x: x.astype(jnp.int32), 1.0)
  with pytest.raises(TypeError, match="so the shapes do not match"):
    lax.cond(True, lambda x: x, lambda x: jnp.ones(2), 1.0)
  with pytest.raises(TypeError, match="Pred must be a scalar"):
    lax.cond(jnp.ones(2) > 0, lambda x: x, lambda x: x, 1.0)
  with pytest.raises(TypeError, match=r"(?s)scan body function carry input and carry output "
                     r"must have equal types.*The input carry c has type float32\[\] but the "
                     r"corresponding output carry component has type float32\[2\]"):
    lax.scan(lambda c, x: (jnp.ones(2) * c, x), 0.0, jnp.ones(3))
  with pytest.raises(TypeError, match="cond_fun must return a boolean scalar"):
    lax.while_loop(lambda c: jnp.ones(2) > 0, lambda c: c, 0.0)
  with pytest.raises(ValueError, match="disagrees with leading axis sizes"):
    lax.scan(lambda c, x: (c, x), 0.0, jnp.ones(3), length=4)
  with pytest.raises(ValueError, match="Empty branch sequence"):
    lax.switch(1, [], 1.0)


def test_reverse_mode_through_while_loop_gives_jax_error():
  with pytest.raises(ValueError, match="Reverse-mode differentiation does not work for "
                     "lax.while_loop"):
    jax.grad(lambda x: lax.while_loop(lambda c: c < 3.0, lambda c: c * 2.0, x))(1.0)


def test_derivatives_of_cond_match_finite_differences():
  f = lambda x: lax.cond(x[0] > 0, lambda x: jnp.sin(x) * x, lambda x: x ** 3, x)
  check_grads(f, (np.array([0.5, 1.0], np.float32),), order=2)
  check_grads(f, (np.array([-0.5, 1.0], np.float32),), order=2)
  g = lambda x, y: lax.switch(1, [lambda a: a[0], lambda a: a[0] * a[1], lambda a: a[0] + a[1]], (x, y))
  check_grads(g, (np.float32(0.3), np.float32(1.7)), order=2)


def test_derivatives_of_scan_match_finite_differences():
  def rnn(w, xs):
    h, ys = lax.scan(lambda h, x: (jnp.tanh(w @ h + x), h.sum()), jnp.zeros(3), xs)
    return jnp.sum(h) + jnp.sum(ys)
  w = (rng.random((3, 3)) * 0.5).astype(np.float32)
  xs = rng.random((5, 3)).astype(np.float32)
  check_grads(rnn, (w, xs), order=2, eps=1e-3)   # (float32 second derivatives)
  check_grads(lambda x: lax.scan(lambda c, y: (c * y, c), x, jnp.arange(1.0, 4.0),
                                 reverse=True)[1], (np.float32(0.7),), order=2)
  np.testing.assert_allclose(jax.jit(jax.grad(rnn))(w, xs), jax.grad(rnn)(w, xs), rtol=1e-5)


def test_fori_loop_with_static_bounds_supports_reverse_mode():
  assert float(jax.grad(lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, 1.0))(2.0)) == 12.0
  check_grads(lambda x: lax.fori_loop(0, 4, lambda i, c: jnp.sin(c) + x * i, x),
              (np.float32(0.3),), order=2)


def test_forward_mode_through_while_loop():
  f = lambda x: lax.while_loop(lambda c: c[1] < 3,
                               lambda c: (c[0] * 1.5 + jnp.sin(c[0]), c[1] + 1), (x, 0))[0]
  check_grads(f, (np.float32(0.7),), order=2, modes=["fwd"])


def test_scan_stays_a_loop_in_the_jaxpr_and_in_tier0():
  def body(c, _):
    return jnp.sin(c) + 0.01 * c, None

  def scanned(x, n):
    return lax.scan(body, x, None, length=n)[0]
  short = jax.make_jaxpr(lambda x: scanned(x, 2))(jnp.ones(4))
  long = jax.make_jaxpr(lambda x: scanned(x, 2000))(jnp.ones(4))
  assert len(short.eqns) == len(long.eqns) == 1
  source = jax.jit(lambda x: scanned(x, 2000)).lower(jnp.ones(4)).as_text("numpy")
  assert len(source.splitlines()) < 10
  x = np.ones(4, np.float32)
  expected = x
  for _ in range(2000):
    expected = np.sin(expected) + np.float32(0.01) * expected
  np.testing.assert_allclose(jax.jit(lambda x: scanned(x, 2000))(x), expected, rtol=1e-5)


def test_vmap_of_cond_with_batched_predicate_becomes_select():
  f = lambda x: lax.cond(x > 1.5, lambda x: x * 10, lambda x: x - 1, x)
  xs = jnp.arange(4.0)
  np.testing.assert_allclose(jax.vmap(f)(xs), [f(x) for x in xs])
  text = str(jax.make_jaxpr(jax.vmap(f))(xs))
  assert "select_n" in text and "cond" not in text
  g = lambda p, x: lax.cond(p, lambda x: x * 10, lambda x: x - 1, x)
  np.testing.assert_allclose(jax.vmap(g, in_axes=(None, 0))(True, xs), xs * 10)
  assert "cond[" in str(jax.make_jaxpr(jax.vmap(g, in_axes=(None, 0)))(True, xs))


def test_vmap_of_while_with_batched_predicate_runs_until_every_lane_is_done():
  w = lambda x: lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x)
  xs = jnp.array([1.0, 3.0, 11.0, 0.5])
  np.testing.assert_allclose(jax.vmap(w)(xs), [w(x) for x in xs])
  counted = jax.vmap(lambda n: lax.fori_loop(0, n, lambda i, c: c + i, 0))(jnp.array([3, 5]))
  assert counted.tolist() == [3, 10]


def test_vmap_of_scan_matches_a_python_loop():
  s = lambda x, ys: lax.scan(lambda c, y: (c * y + 1, c), x, ys)
  x, ys = jnp.arange(3.0), jnp.arange(12.0).reshape(3, 4) / 10
  carry, stacked = jax.vmap(s)(x, ys)
  for i in range(3):
    c_i, y_i = s(x[i], ys[i])
    np.testing.assert_allclose(carry[i], c_i, rtol=1e-6)
    np.testing.assert_allclose(stacked[i], y_i, rtol=1e-6)
  carry2, _ = jax.vmap(s, in_axes=(0, None))(x, ys[0])
  np.testing.assert_allclose(carry2, [s(v, ys[0])[0] for v in x], rtol=1e-6)


def test_per_example_gradients_through_loops():
  f = lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, 1.0)
  np.testing.assert_allclose(jax.vmap(jax.grad(f))(jnp.arange(1.0, 4.0)), [3, 12, 27])


def test_associative_scan_matches_sequential_scans():
  x = rng.standard_normal((3, 7)).astype(np.float32)
  np.testing.assert_allclose(lax.associative_scan(jnp.add, x, axis=1), np.cumsum(x, 1),
                             rtol=1e-5)
  np.testing.assert_allclose(lax.associative_scan(jnp.add, x, reverse=True),
                             np.cumsum(x[::-1], 0)[::-1], rtol=1e-5)
  np.testing.assert_allclose(lax.associative_scan(jnp.maximum, x, axis=1),
                             np.maximum.accumulate(x, 1))
  prods, sums = lax.associative_scan(lambda a, b: (a[0] * b[0], a[1] + b[1]),
                                     (jnp.arange(1.0, 6.0), jnp.ones(5)))
  assert prods.tolist() == [1, 2, 6, 24, 120] and sums.tolist() == [1, 2, 3, 4, 5]
  check_grads(lambda v: lax.associative_scan(jnp.multiply, v), (x[0] / 2,), order=1)
  assert jax.jit(lambda v: lax.associative_scan(jnp.add, v))(jnp.arange(7)).tolist() == \
      np.cumsum(np.arange(7)).tolist()


def test_map_with_batch_size_matches_map():
  xs = jnp.arange(7.0)
  np.testing.assert_allclose(lax.map(lambda x: x ** 2, xs, batch_size=3), np.arange(7.0) ** 2)


def test_bodies_are_traced_once_per_signature():
  # Trace counts recorded from JAX 0.10.2, which remembers a loop's or branch's jaxpr per
  # live function and argument types: a scan run twice with one body traces it once
  # (flax's nnx.scan counts on it), a weak carry that the body makes strong costs no
  # second trace, and other avals or the x64 flag trace again.
  n = {"scan": 0, "true": 0, "false": 0, "cond_fun": 0, "body_fun": 0}

  def body(c, x):
    n["scan"] += 1
    return c + x, c * x

  def t(x):
    n["true"] += 1
    return x + 1

  def f(x):
    n["false"] += 1
    return x - 1

  def cond_fun(c):
    n["cond_fun"] += 1
    return c < 10

  def body_fun(c):
    n["body_fun"] += 1
    return c + 3
  for _ in range(2):
    carry, ys = lax.scan(body, 0.0, jnp.arange(3.0))
    assert float(carry) == 3.0 and not carry.weak_type and ys.tolist() == [0.0, 0.0, 2.0]
    assert float(lax.cond(True, t, f, 1.0)) == 2.0 and float(lax.switch(1, [t, f], 2.0)) == 1.0
    assert int(lax.while_loop(cond_fun, body_fun, 0)) == 12
  assert n == {"scan": 1, "true": 2, "false": 2, "cond_fun": 1, "body_fun": 1}
  lax.scan(body, 0, jnp.arange(3))
  lax.while_loop(cond_fun, body_fun, 0.0)
  assert n == {"scan": 2, "true": 2, "false": 2, "cond_fun": 2, "body_fun": 2}
  with jax.config.override("jax_enable_x64", True):
    lax.scan(body, 0.0, jnp.arange(3.0))
  assert n["scan"] == 3
  # a body closing over an outer trace's values is traced again under each trace
  outer = {}

  def closing(c, x):
    return c + outer["a"], x

  def g(a):
    outer["a"] = a
    return lax.scan(closing, 0.0, jnp.arange(2.0))[0]
  assert float(jax.jit(g)(1.0)) == 2.0 and float(jax.jit(g)(jnp.float32(2.0))) == 4.0


# Recorded from JAX 0.10.2: the operand both branches return as it is leaves the cond.
COND_PASSTHROUGH_JAXPR = """{ lambda ; a:bool[] b:f32[] c:f32[3]. let
    d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    e:f32[3] = cond[
      branches=(
        { lambda ; f:f32[] g:f32[3]. let  in (g,) }
        { lambda ; h:f32[] i:f32[3]. let j:f32[3] = add i 1.0:f32[] in (j,) }
      )
    ] d b c
  in (b, e) }"""


def test_cond_outputs_passed_through_are_its_inputs():
  def f(p, a, b):
    return lax.cond(p, lambda a, b: (a, b + 1), lambda a, b: (a, b), a, b)
  assert str(jax.make_jaxpr(f)(True, 1.0, jnp.arange(3.0))) == COND_PASSTHROUGH_JAXPR
  # so a batched predicate leaves the passed-through operand unbatched (nnx.cond under
  # nnx.vmap returns broadcast Variables so): JAX 0.10.2 gives 2.0 (weak) and the rows
  a, b = jax.vmap(f, in_axes=(0, None, 0), out_axes=(None, 0))(
      jnp.array([True, False]), 2.0, jnp.ones((2, 3)))
  assert float(a) == 2.0 and a.weak_type
  np.testing.assert_array_equal(b, [[2.0, 2.0, 2.0], [1.0, 1.0, 1.0]])
  assert lax.switch(1, [lambda x: x, lambda x: x], 3.0) == 3.0   # no output left in the cond


def test_cond_outputs_take_the_first_branchs_weak_types():
  # Recorded from JAX 0.10.2: cond's results have false_fun's weak types, switch's branch
  # 0's, whichever branch runs (equinox's error_if relies on it: a weak int threaded
  # through it stays weak, so diffrax's `t * direction` passes strict promotion)
  s = jnp.float32(1.0)
  f = lambda p, x: lax.cond(p, lambda x: x * s, lambda x: x * 2.0, x)
  g = lambda p, x: lax.cond(p, lambda x: x * 2.0, lambda x: x * s, x)
  assert f(True, 3.0).weak_type and f(False, 3.0).weak_type
  assert not g(True, 3.0).weak_type and not g(False, 3.0).weak_type
  assert jax.jit(f)(True, 3.0).weak_type and jax.grad(f, 1)(True, 3.0).weak_type
  assert lax.switch(1, [lambda x: x * 2.0, lambda x: x * s], 3.0).weak_type
  assert all(o.weak_type for o in jax.jvp(lambda x: f(True, x), (3.0,), (1.0,)))
  # a batched predicate selects between both branches: weak only where both are
  assert not jax.vmap(f, (0, None))(jnp.array([True, False]), 3.0).weak_type
  assert jax.vmap(f, (None, 0))(True, jnp.array([3.0, 4.0])).tolist() == [3.0, 4.0]


def test_disable_jit_runs_control_flow_as_python():
  # Values, types and call sequences recorded from JAX 0.10.2: under disable_jit a cond
  # with a known predicate calls one branch, loops run in Python (fori_loop's index a
  # Python int), and a loop whose predicate is batched falls back to the staged loop.
  calls = []
  a = lambda x: (calls.append("a"), x + 1)[1]
  b = lambda x: (calls.append("b"), x - 1)[1]
  with jax.disable_jit():
    assert lax.cond(True, a, b, 1.0) == 2.0 and calls == ["a"]
    calls.clear()
    assert lax.switch(1, [a, b], 1.0) == 0.0 and calls == ["b"]
    assert lax.switch(7, [lambda: 1, lambda: 2]) == 2
    assert lax.switch(-3, [lambda: 1, lambda: 2]) == 1
    assert lax.cond(jnp.array(2), lambda: "a", lambda: "b") == "a"   # any Python value
    assert type(lax.cond(True, lambda: 1.0, lambda: 2.0)) is float
    calls.clear()
    out = lax.while_loop(lambda c: (calls.append("c"), c < 3)[1],
                         lambda c: (calls.append("w"), c + 1)[1], 0)
    assert calls == ["c", "w"] * 3 + ["c"] and isinstance(out, jax.Array)
    assert out == 3 and out.dtype == jnp.int32
    calls.clear()
    out = lax.fori_loop(0, 3, lambda i, c: (calls.append(type(i)), c + i)[1], 0)
    assert out == 3 and type(out) is int and calls == [int] * 3
    assert lax.fori_loop(0, 0, lambda i, c: c + 1, 5) == 5
    carry, ys = lax.scan(lambda c, x: (c + x, c * x), 0.0, jnp.arange(4.0), reverse=True)
    assert carry == 6.0
    np.testing.assert_array_equal(ys, [0.0, 5.0, 6.0, 0.0])
    carry, ys = lax.scan(lambda c, _: (c + 1, c), 0, None, length=3)
    assert carry == 3 and type(carry) is int
    assert ys.dtype == jnp.int32 and ys.weak_type
    np.testing.assert_array_equal(ys, [0, 1, 2])
    _, ys = lax.scan(lambda c, x: (c, {"a": x, "b": 2.0}), 0, jnp.arange(2))
    assert ys["b"].dtype == jnp.float32 and ys["b"].weak_type
    with pytest.raises(ValueError, match="zero-length scan is not supported in "
                                         "disable_jit"):
      lax.scan(lambda c, x: (c, x), 0, jnp.zeros((0,)))
    np.testing.assert_array_equal(lax.map(lambda x: x * 2, jnp.arange(3.0)), [0, 2, 4])
    f = lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x),
                                 (0, 1.0))[1]
    np.testing.assert_allclose(jax.vmap(f)(jnp.arange(3.0)), [0.0, 1.0, 8.0])
    np.testing.assert_array_equal(
        jax.vmap(lambda n: lax.while_loop(lambda c: c < n, lambda c: c + 1, 0))(
            jnp.arange(3)), [0, 1, 2])
    np.testing.assert_allclose(
        jax.vmap(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x))(jnp.array([-1.0, 1.0])),
        [0.5403023, 0.84147096], rtol=1e-6)
    np.testing.assert_allclose(
        jax.grad(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x))(1.0), 0.5403023,
        rtol=1e-6)
    assert jax.grad(lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, 1.0))(2.0) == 12.0
    assert jax.grad(lambda x: lax.scan(lambda c, _: (c * x, c), 1.0, None,
                                       length=3)[0])(2.0) == 12.0


def test_carry_type_errors_name_the_carry_as_jax_does():
  """Loop bodies that change their carry's type: JAX 0.10.2's messages (the body's first
  parameter names the carry, ``loop_carry`` in fori_loop; every mismatch listed)."""
  cases = [
      lambda: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1].astype(jnp.int32)),
                             (0, 1.)),
      lambda: lax.fori_loop(0, 3, lambda i, c: c.astype(jnp.int32), 0.),
      lambda: lax.scan(lambda c, x: ((c[0].astype(jnp.int32), c[1][None]), x), (1., 2.),
                       jnp.ones(3)),
      lambda: lax.scan(lambda *a: ((a[0].astype(jnp.int32)), None), 1., jnp.ones(3)),
      lambda: lax.while_loop(lambda c: c < 3, lambda c: c.astype(jnp.int32), 1.),
  ]
  want = [
      ('while_loop body function carry input and carry output must have equal types, but '
       'they differ:\n\nThe input carry component c[1] has type float32[] but the '
       'corresponding output carry component has type int32[], so the dtypes do not '
       'match.\n\nRevise the function so that all output types match the corresponding '
       'input types.'),
      ('scan body function carry input and carry output must have equal types, but they '
       'differ:\n\nThe input carry component loop_carry[1] has type float32[] but the '
       'corresponding output carry component has type int32[], so the dtypes do not '
       'match.\n\nRevise the function so that all output types match the corresponding '
       'input types.'),
      ('scan body function carry input and carry output must have equal types, but they '
       'differ:\n\n  * the input carry component c[0] has type float32[] but the '
       'corresponding output carry component has type int32[], so the dtypes do not '
       'match;\n  * the input carry component c[1] has type float32[] but the '
       'corresponding output carry component has type float32[1], so the shapes do not '
       'match.\n\nRevise the function so that all output types match the corresponding '
       'input types.'),
      ('scan body function carry input and carry output must have equal types, but they '
       'differ:\n\nThe input carry a has type float32[] but the corresponding output carry '
       'component has type int32[], so the dtypes do not match.\n\nRevise the function so '
       'that all output types match the corresponding input types.'),
      ('while_loop body function carry input and carry output must have equal types, but '
       'they differ:\n\nThe input carry c has type float32[] but the corresponding output '
       'carry component has type int32[], so the dtypes do not match.\n\nRevise the '
       'function so that all output types match the corresponding input types.'),
  ]
  got = []
  for f in cases:
    with pytest.raises(TypeError) as info:
      f()
    got.append(str(info.value))
  assert got == want
