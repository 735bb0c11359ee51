"""Which constants a jaxpr writes inline, and the typed values its literals hold.

Every expected value here was recorded from JAX 0.10.2 (/work/jaxref). JAX writes a
Python or NumPy scalar inline as a literal, and stages a ``jax.Array`` that existed before
the trace (an eager result, or a value made under an enclosing trace) as a constvar; a
literal's ``.val`` is a ``TypedInt``/``TypedFloat``/``TypedComplex`` (a Python number
that carries its dtype), a ``bool``, or a ``TypedNdArray``. The printed forms of these
cases are in tests/data/jaxpr_print_cases.py (``closed_*``).
"""
import pickle

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite.extend.core import Literal
from jaxlite._src.core.core import ShapedArray
from jaxlite._src.core.literals import TypedFloat, TypedInt, TypedNdArray


def _literals(closed):
  atoms = [a for e in closed.jaxpr.eqns for a in e.invars] + list(closed.jaxpr.outvars)
  return [a for a in atoms if isinstance(a, Literal)]


# closed-over value -> (constvars, literal values' types), from JAX 0.10.2's make_jaxpr of
# `lambda x: x * c` at x = 1.0
_CLOSED_OVER = [
    ("py_float", lambda: 2.0, 0, "TypedFloat"),
    ("np_f32", lambda: np.float32(2.5), 0, "TypedNdArray"),
    ("np_0d", lambda: np.array(2.5), 0, "TypedNdArray"),
    ("np_int", lambda: np.int32(4), 0, "TypedNdArray"),
    ("jnp_f32", lambda: jnp.float32(2.5), 1, None),
    ("jnp_array", lambda: jnp.array(2.5), 1, None),
    ("jnp_sin", lambda: jnp.sin(1.0), 1, None),
    ("jnp_int", lambda: jnp.array(3), 1, None),
    ("jnp_bool", lambda: jnp.array(True), 1, None),
]


@pytest.mark.parametrize("name,make,n_consts,lit_type", _CLOSED_OVER,
                         ids=[c[0] for c in _CLOSED_OVER])
def test_closed_over_scalar_is_a_literal_only_when_jax_writes_one(name, make, n_consts,
                                                                  lit_type):
  c = make()
  closed = jax.make_jaxpr(lambda x: x * c)(1.0)
  assert len(closed.jaxpr.constvars) == n_consts
  if n_consts:
    assert closed.consts[0] is c and not _literals(closed)
  elif name != "py_float":   # (jnp's promotion folds it: see the test below)
    assert [type(l.val).__name__ for l in _literals(closed)] == [lit_type]


def test_array_made_under_an_enclosing_trace_is_a_const_of_an_inner_one():
  # JAX 0.10.2: [1, 1, 1], whether the 0-d array was made eagerly, computed in the jit
  # trace or made from a constant in it (then a literal tracer of the jit trace); jaxlite
  # counted [0, 1, 0], so equinox's closure conversion gave the two branches of
  # optimistix's LBFGS cond different consts
  idx0 = jnp.array(0)
  counts = []

  def f(x):
    for idx in (idx0, idx0 + 1, jnp.array(0)):
      counts.append(len(jax.make_jaxpr(lambda y: y * idx)(1.0).consts))
    return x
  jax.jit(f)(1.0)
  assert counts == [1, 1, 1]


def test_literal_values_are_typed_as_jax_types_them():
  add_float = _literals(jax.make_jaxpr(lambda x: lax.add(x, 2.0))(1.0))[0]
  assert type(add_float.val) is TypedFloat
  assert repr(add_float.val) == "TypedFloat(2.0, dtype=float32)"
  assert str(add_float.val) == "2.0" and repr(add_float) == "Literal(2.0)"
  assert add_float.hash == 2
  outs = _literals(jax.make_jaxpr(lambda x: (3, True, 2.5, 1j, np.float32(1.5),
                                             np.array(2)))(1.0))
  assert [repr(l.val) for l in outs] == [
      "TypedInt(3, dtype=int32)", "True", "TypedFloat(2.5, dtype=float32)",
      "TypedComplex(1j, dtype=complex64)", "TypedNdArray(1.5, dtype=float32)",
      "TypedNdArray(2, dtype=int32)"]
  assert [repr(l) for l in outs[:2]] == ["Literal(TypedInt(3, dtype=int32))", "Literal(True)"]
  assert [l.hash for l in outs[:4]] == [3, 1, 1152921504606846978, 1000003]
  made = _literals(jax.make_jaxpr(lambda x: x + jnp.float32(3.0))(1.0))[0]
  assert repr(made.val) == "TypedNdArray(3., dtype=float32)"
  with jax.enable_x64():
    lits = _literals(jax.make_jaxpr(lambda x: (lax.add(x, 2.0), 3))(1.0))
    assert [repr(l.val) for l in lits] == ["TypedFloat(2.0, dtype=float64)",
                                           "TypedInt(3, dtype=int64)"]


def test_jnp_promotion_folds_a_python_scalar_to_a_typed_array():
  # JAX 0.10.2 stages `x * 2.0`'s scalar as it is (TypedFloat); jaxlite folds its
  # conversion, so the value is the same number in the same weak dtype, as a TypedNdArray
  lit = _literals(jax.make_jaxpr(lambda x: x * 2.0)(1.0))[0]
  assert lit.val == 2.0 and str(lit.val) == "2.0" and repr(lit) == "Literal(2.0)"
  assert lit.val.aval == ShapedArray((), np.float32, weak_type=True)


def test_eval_jaxpr_gives_the_literal_values_and_jit_gives_arrays():
  closed = jax.make_jaxpr(lambda x: (3, 2.0, True))(1.0)
  outs = jax.core.eval_jaxpr(closed.jaxpr, closed.consts, 1.0)
  assert [repr(o) for o in outs] == ["TypedInt(3, dtype=int32)",
                                     "TypedFloat(2.0, dtype=float32)", "True"]
  assert repr(jax.jit(lambda x: (3, 2.0))(1.0)) == (
      "(Array(3, dtype=int32, weak_type=True), Array(2., dtype=float32, weak_type=True))")


def test_typed_values_behave_as_numbers_and_arrays():
  assert repr(pickle.loads(pickle.dumps(TypedFloat(2.0, np.dtype("float32"))))) == (
      "TypedFloat(2.0, dtype=float32)")
  i = TypedInt(3, np.dtype("int32")) + 1
  assert type(i) is int and i == 4
  t = TypedNdArray(np.array(2.5, np.float32), ShapedArray((), np.float32, weak_type=True))
  assert repr(t) == "TypedNdArray(2.5, dtype=float32, weak_type=True)"
  assert str(t.aval) == "~float32[]" and t.weak_type
  s = t + 1   # NumPy arithmetic gives plain NumPy values
  assert type(s) is np.float32 and s == 3.5
  assert repr(jnp.asarray(t)) == "Array(2.5, dtype=float32, weak_type=True)"
  assert repr(jnp.asarray(TypedFloat(2.0, np.dtype("float32")))) == (
      "Array(2., dtype=float32, weak_type=True)")
  # (JAX 0.10.2's own reduce passes the weak type where the aval goes, so its unpickled
  # aval is a bool; jaxlite's keeps the aval)
  assert pickle.loads(pickle.dumps(t)).aval == t.aval


def test_a_jaxpr_staged_again_keeps_its_literals_inline():
  # the weak carry makes scan stage its body's jaxpr again with strong types; JAX 0.10.2
  # keeps 2.0, 3.0 and 1.5 inline there, with no consts
  closed = jax.make_jaxpr(lambda x: lax.scan(
      lambda c, _: (c * jnp.float32(2.0) + np.float32(3.0) + 1.5, None), x, None,
      length=2)[0])(1.0)
  eqn = closed.eqns[-1]
  body = eqn.params["jaxpr"]
  assert eqn.params["num_consts"] == 0 and not closed.consts
  assert [repr(a) for e in body.eqns for a in e.invars if isinstance(a, Literal)] == [
      "Literal(2.0)", "Literal(3.0)", "Literal(1.5)"]


def test_compile_time_eval_results_are_consts():
  # JAX 0.10.2: an eagerly computed Array, not a literal (`{ lambda a:f32[]; b:f32[]. ...`)
  def f(x):
    with jax.ensure_compile_time_eval():
      k = jnp.sin(jnp.float32(1.0))
    return x * k
  closed = jax.make_jaxpr(f)(1.0)
  assert len(closed.consts) == 1 and not _literals(closed)


def test_values_transformations_forward_are_typed_and_known_zero_tangents_are_arrays():
  # JAX 0.10.2: stop_gradient, checkpoint and vjp's primal return a Python float input as
  # bind canonicalizes it, TypedFloat(1.0, dtype=float32); linearize's function returns
  # the tangent given (the float 1.0) and the known zero tangent of the constant output
  # as an Array, Array(0., dtype=float32, weak_type=True)
  assert repr(lax.stop_gradient(1.0)) == "TypedFloat(1.0, dtype=float32)"
  assert repr(jax.checkpoint(lambda x: x)(1.0)) == "TypedFloat(1.0, dtype=float32)"
  assert repr(jax.vjp(lambda x: x, 1.0)[0]) == "TypedFloat(1.0, dtype=float32)"
  assert repr(jax.checkpoint(lambda x: x)(np.float32(2))) == "TypedNdArray(2., dtype=float32)"
  _, f = jax.linearize(lambda x: (x, 2.0), 1.0)
  t, zero = f(1.0)
  assert type(t) is float and t == 1.0
  assert repr(zero) == "Array(0., dtype=float32, weak_type=True)"


@pytest.mark.parametrize("fun,dtype,weak", [
    # JAX 0.10.2 (recorded): a literal's typed number is a weak Python number to jnp
    (lambda t, i: jnp.ones(2) * t, "float32", False),
    (lambda t, i: t * jnp.ones(2), "float32", False),
    (lambda t, i: jnp.multiply(jnp.ones(2), t), "float32", False),
    (lambda t, i: jax.jit(lambda a: a * t)(jnp.ones(2)), "float32", False),
    (lambda t, i: jax.grad(lambda a: a * t)(1.0), "float32", True),
    (lambda t, i: jnp.add(jnp.ones(2, jnp.int32), i), "int32", False),
    (lambda t, i: jnp.ones(2, jnp.bfloat16) * t, "bfloat16", False),
    (lambda t, i: jnp.result_type(t, jnp.bfloat16), "bfloat16", None),
])
def test_typed_literal_numbers_promote_as_weak_python_numbers(fun, dtype, weak):
  out = fun(TypedFloat(0.0, np.float32), TypedInt(3, np.int32))
  if weak is None:
    assert out == np.dtype(dtype)
  else:
    assert (out.dtype, out.weak_type) == (np.dtype(dtype), weak)
