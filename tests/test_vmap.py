"""vmap: every batching rule against a Python loop over the batch, composition with grad,
jit and itself, the Jacobians, named-axis collectives, error messages, and jaxprs that
match JAX's and do not grow with the batch."""
import json
import os
import re
import sys

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite._src.core import core
from jaxlite._src.base import errors
from jaxlite._src.transforms import ad
from jaxlite._src.transforms import batching

rng = np.random.default_rng(0)
X = rng.standard_normal((3, 4, 5)).astype(np.float32)
Y = rng.standard_normal((4, 3, 5)).astype(np.float32)
IDX = np.array([0, 2, 1, 3, 0], np.int32)
IDX2 = np.array([[0, 2], [1, 1], [3, 0]], np.int32)


def _loop(f, args, in_axes, out_axes):
  """The reference: ``f`` applied example by example, results stacked at ``out_axes``."""
  size = next(np.shape(a)[ax] for a, ax in zip(args, in_axes) if ax is not None)
  # np.asarray first: np.take on an Array calls Array.take, which (as in JAX) has no 'raise'
  outs = [f(*[a if ax is None else np.take(np.asarray(a), i, axis=ax)
              for a, ax in zip(args, in_axes)]) for i in range(size)]
  return np.stack([np.asarray(o) for o in outs], axis=out_axes)


def check_batched(f, args, in_axes, out_axes=0, tol=1e-5):
  got = jax.vmap(f, in_axes=in_axes, out_axes=out_axes)(*args)
  want = _loop(f, args, in_axes, out_axes)
  assert np.asarray(got).dtype == want.dtype
  np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


# (function, args, in_axes, out_axes): one row per rule and placement of batch axes
RULE_CASES = {
    # elementwise: unary, binary with batched / unbatched / scalar / size-1 operands
    "sin": (jnp.sin, (X,), (1,), 2),
    "integer_pow": (lambda a: a ** 3, (X,), (2,), 0),
    "abs_sign": (lambda a: jnp.abs(a) * jnp.sign(a), (X,), (0,), 1),
    "not": (lambda a: ~a, (X > 0,), (1,), 0),
    "is_finite": (jnp.isfinite, (X,), (2,), 0),
    "convert": (lambda a: (a * 10).astype(jnp.int32), (X,), (1,), 1),
    "add_axes_differ": (lambda a, b: a + b, (X, Y), (0, 1), 0),
    "mul_unbatched_array": (lambda a, b: a * b, (X, Y[:, 0]), (0, None), 2),
    "max_unbatched_axis_2": (jnp.maximum, (X, Y[0, :, :4]), (2, None), 0),
    "pow_scalar_per_example": (lambda a, b: jnp.abs(a) ** b, (X, np.float32([1, 2, 3])),
                               (0, 0), 0),
    "atan2_size_1": (lambda a, b: jnp.arctan2(a, b), (X, X[:, :1]), (0, 0), 1),
    "compare": (lambda a, b: a < b, (X, Y[0]), (1, None), 0),
    "and_or": (lambda a, b: (a > 0) & (b > 0) | (a < b), (X, np.moveaxis(X, 0, 2)), (0, 2),
               0),
    "select_batched_pred": (lambda p, a, b: lax.select(p, a, b), (X > 0, X, Y[:, 0]),
                            (0, 0, None), 0),
    "select_scalar_pred": (lambda p, a, b: lax.select(p, a, b),
                           (X[:, 0, 0] > 0, X, Y[:, 0]), (0, 0, None), 1),
    "select_unbatched_pred": (lambda p, a, b: lax.select(p, a, b), (X[0] > 0, X, Y[:, 0]),
                              (None, 0, None), 0),
    "select_n_int": (lambda p, a, b: lax.select_n(p, a, b, a * 2),
                     (np.int32([0, 1, 2]), X, Y[:, 0]), (0, 0, None), 0),
    "clamp_scalar_bounds": (lambda a: lax.clamp(np.float32(-0.5), a, np.float32(0.5)),
                            (X,), (1,), 0),
    "clamp_batched_bound": (lambda lo, a: lax.clamp(lo, a, np.float32(0.5)),
                            (np.float32([-1, 0, .2]), X), (0, 0), 0),
    # reductions
    "sum": (lambda a: jnp.sum(a, axis=1), (X,), (1,), 1),
    "prod_max_min": (lambda a: jnp.prod(a, 0) + jnp.max(a, 1).sum() - jnp.min(a), (X,),
                     (2,), 0),
    "any_all": (lambda a: jnp.any(a > 1, axis=0) & jnp.all(a < 2, axis=0), (X,), (1,), 0),
    "argmax": (lambda a: jnp.argmax(a, axis=0), (X,), (2,), 0),
    "argmin": (lambda a: jnp.argmin(a, axis=1), (X,), (0,), 0),
    # dot_general: both, one or the other side batched, with and without batch dims
    "matmul_both": (lambda a, b: a @ b.T, (X, Y), (0, 1), 0),
    "matmul_lhs": (lambda a, b: a @ b.T, (X, Y[0]), (0, None), 1),
    "matmul_rhs": (lambda a, b: a @ b.T, (X[0], Y), (None, 1), 2),
    "dot_general_batch_dims": (
        lambda a, b: lax.dot_general(a, b, (((0,), (1,)), ((1,), (0,)))), (X, Y), (2, 2), 0),
    "dot_general_batch_dims_lhs": (
        lambda a, b: lax.dot_general(a, b, (((0,), (1,)), ((1,), (0,)))), (X, Y[..., 0]),
        (2, None), 1),
    "dot_general_batch_dims_rhs": (
        lambda a, b: lax.dot_general(a, b, (((0,), (1,)), ((1,), (0,)))), (X[..., 0], Y),
        (None, 2), 1),
    # shapes
    "broadcast_in_dim": (lambda a: lax.broadcast_in_dim(a, (2, 4, 3), (1, 2)), (X[..., :3],),
                         (0,), 1),
    "broadcast_scalar": (lambda a: jnp.broadcast_to(a, (2, 3)), (X[0, 0],), (0,), 1),
    "reshape": (lambda a: a.reshape(-1), (X,), (1,), 0),
    "transpose": (lambda a: a.T, (X,), (2,), 1),
    "squeeze_expand": (lambda a: jnp.squeeze(a[None, :, 1:2], (0, 2)), (X,), (1,), 0),
    "concatenate_unbatched": (lambda a: jnp.concatenate([a, jnp.ones((4, 5))]), (X,), (0,), 0),
    "concatenate_both": (lambda a, b: jnp.concatenate([a, b], axis=1), (X, Y), (0, 1), 0),
    "slice_rev_strides": (lambda a: a[::-1, ::2], (X,), (1,), 0),
    "pad": (lambda a, v: lax.pad(a, v, [(1, 2, 1), (-1, 0, 0)]), (X, np.float32(7)),
            (2, None), 0),
    "pad_batched_value": (lambda a, v: lax.pad(a, v, [(1, 2, 1), (-1, 0, 0)]),
                          (X, np.arange(5, dtype=np.float32)), (2, 0), 1),
    "pad_only_value_batched": (lambda a, v: lax.pad(a, v, [(1, 0, 0), (0, 1, 2)]),
                               (X[0], np.arange(5, dtype=np.float32)), (None, 0), 0),
    "iota": (lambda a: lax.iota(np.float32, 5) * a, (X,), (1,), 0),
    # dynamic slicing: batched operand, batched index, both
    "dynamic_slice_both": (lambda a, i: lax.dynamic_slice(a, (i, 1), (2, 2)),
                           (X, IDX[:3]), (0, 0), 0),
    "dynamic_slice_index": (lambda a, i: lax.dynamic_slice(a, (i, 1), (2, 2)),
                            (X[0], IDX), (None, 0), 1),
    "dynamic_slice_operand": (lambda a, i: lax.dynamic_slice(a, (i, 1), (2, 2)), (X, 1),
                              (2, None), 0),
    "dynamic_slice_clamps": (lambda a, i: lax.dynamic_slice(a, (i, i), (3, 3)),
                             (X, np.int32([3, 9, 1])), (0, 0), 0),
    "dynamic_update_slice_index": (
        lambda a, u, i: lax.dynamic_update_slice(a, u, (i, 1)),
        (X[0], np.ones((5, 2, 2), np.float32), IDX), (None, 0, 0), 0),
    "dynamic_update_slice_operand": (
        lambda a, u, i: lax.dynamic_update_slice(a, u, (i, 1)),
        (X, np.ones((2, 2), np.float32), 2), (2, None, None), 1),
    "dynamic_update_slice_all": (
        lambda a, u, i: lax.dynamic_update_slice(a, u, (i, 1)),
        (X, np.ones((3, 2, 2), np.float32), IDX[:3]), (0, 0, 0), 0),
    "dynamic_update_slice_update_unbatched": (
        lambda a, u, i: lax.dynamic_update_slice(a, u, (i, 1)),
        (X, np.ones((2, 2), np.float32), IDX[:3]), (0, None, 0), 0),
    # gather and scatter through jnp indexing
    "gather_both": (lambda a, i: a[i], (X, IDX2), (0, 0), 0),
    "gather_second_axis": (lambda a, i: a[:, i], (X, IDX2), (0, 0), 1),
    "gather_indices": (lambda a, i: jnp.asarray(a)[i], (X[0], IDX2), (None, 0), 0),
    "gather_operand": (lambda a, i: a[i], (X, IDX2[0]), (1, None), 0),
    "scatter_add_all": (lambda a, i, v: jnp.asarray(a).at[i].add(v), (X, IDX2, np.ones((3, 2, 5),
                                                                          np.float32)),
                        (0, 0, 0), 0),
    "scatter_set_operand_unbatched": (
        lambda a, i, v: jnp.asarray(a).at[i].set(v),
        (X[0], IDX2, np.ones((3, 2, 5), np.float32)), (None, 0, 0), 0),
    "scatter_mul_operand": (lambda a, i, v: jnp.asarray(a).at[i].mul(v), (X, IDX2[0], np.float32(2)),
                            (1, None, None), 0),
    "scatter_max_update": (lambda a, i, v: jnp.asarray(a).at[i].max(v), (X, IDX2[0], Y[0, 0]),
                           (1, None, None), 1),
    "scatter_min_index_update": (lambda a, i, v: jnp.asarray(a).at[i].min(v),
                                 (X[0], IDX2, rng.standard_normal((2, 3, 5)).astype(
                                     np.float32)), (None, 0, 1), 0),
    "scatter_apply": (lambda a: jnp.asarray(a).at[1].apply(jnp.sin), (X,), (2,), 0),
    # calls
    "jit": (jax.jit(lambda a, b: jnp.sin(a) @ b.T), (X, Y), (0, 1), 0),
    "jit_inside": (lambda a: jax.jit(lambda b: jnp.sum(b, 0))(a), (X,), (2,), 1),
}


@pytest.mark.parametrize("name", sorted(RULE_CASES))
def test_batching_rule_matches_a_loop_over_the_batch(name):
  f, args, in_axes, out_axes = RULE_CASES[name]
  args = tuple(jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args)
  check_batched(f, args, in_axes, out_axes)


@pytest.mark.parametrize("in_axes", [0, 1, -1])
@pytest.mark.parametrize("out_axes", [0, 1, -1])
def test_in_and_out_axes_including_negative(in_axes, out_axes):
  check_batched(lambda a: jnp.cos(a) @ a.T + 1.0, (jnp.asarray(X),), (in_axes,), out_axes)


def test_every_primitive_of_these_families_has_a_batching_rule():
  from jaxlite._src.lax import elementwise, indexing, parallel, reductions, shapes
  from jaxlite._src import jit as jit_module
  from jaxlite._src.lax import custom_derivatives
  # iota has no operands: it cannot depend on the batch and is bound on the parent trace.
  # custom_lin is only ever staged into a linear jaxpr and transposed, never evaluated.
  exempt = {shapes.iota_p, custom_derivatives.custom_lin_p}
  prims = [v for m in (elementwise, indexing, parallel, reductions, shapes, jit_module, ad,
                       custom_derivatives)
           for v in vars(m).values() if isinstance(v, core.Primitive)]
  missing = [p.name for p in prims if p not in exempt
             and p not in batching.batching_rules and p not in batching.axis_batching_rules]
  assert len(prims) > 80 and not missing


def test_add_any_with_different_batch_axes():
  x = jnp.asarray(X)
  f = lambda a, b: ad.add_any_p.bind(a, b)
  check_batched(f, (x, jnp.transpose(x, (1, 0, 2))), (0, 1), 0)
  check_batched(f, (x, x[0]), (0, None), 1)


def test_unbatched_values_stay_unbatched():
  seen = []

  def f(a, b):
    c = jnp.sin(b) * 2  # depends only on the unbatched argument
    seen.append(type(c).__name__)
    return a + c
  jax.vmap(f, in_axes=(0, None))(jnp.ones((3, 2)), jnp.ones(2))
  assert seen == ["Array"]


# ----------------------------------------------------------------------------- jaxprs

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "data"))
from vmap_cases import cases as _jaxpr_cases  # noqa: E402

with open(os.path.join(os.path.dirname(__file__), "data", "vmap_jaxprs.json")) as _f:
  JAX_JAXPRS = json.load(_f)["jaxprs"]


@pytest.mark.parametrize("name", sorted(JAX_JAXPRS))
def test_jaxpr_matches_jax(name):
  f, args = _jaxpr_cases(jax, jnp, lax)[name]
  # JAX 0.10 prints some axes as NumPy integers, e.g. `axes=(np.int64(1),)`
  want = re.sub(r"np\.int64\((-?\d+)\)", r"\1", JAX_JAXPRS[name])
  assert str(jax.make_jaxpr(f)(*args)) == want


def test_jaxpr_does_not_grow_with_the_batch():
  w = jnp.ones((4, 3))
  loss = lambda w, x, i: jnp.sum(jnp.tanh(x @ w)[i] ** 2) + jnp.max(x[::2])

  def count(n):
    f = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))
    return len(jax.make_jaxpr(f)(w, jnp.ones((n, 4)), jnp.zeros(n, jnp.int32)).eqns)
  assert count(2) == count(7) == count(300)
  assert count(2) < 40


def test_vmap_of_jit_keeps_one_nested_call_and_caches_it():
  f = jax.jit(lambda a: jnp.sin(a) * 2)
  jaxpr = jax.make_jaxpr(jax.vmap(f))(jnp.ones((5, 3)))
  assert [e.primitive.name for e in jaxpr.eqns] == ["jit"]
  inner = jaxpr.eqns[0].params["jaxpr"]
  assert inner.in_avals[0].shape == (5, 3)
  again = jax.make_jaxpr(jax.vmap(f))(jnp.zeros((5, 3)))
  assert again.eqns[0].params["jaxpr"] is inner  # batched once per (jaxpr, axes, size)


# ----------------------------------------------------------------------------- composition

W = rng.standard_normal((4, 3)).astype(np.float32)
XS = rng.standard_normal((6, 4)).astype(np.float32)
YS = rng.standard_normal((6, 3)).astype(np.float32)


def _loss(w, x, y):
  return jnp.sum((jnp.tanh(x @ w) - y) ** 2)


def _per_example_grads():
  return np.stack([np.asarray(jax.grad(_loss)(W, XS[i], YS[i])) for i in range(len(XS))])


def test_vmap_of_grad_gives_per_example_gradients():
  g = jax.vmap(jax.grad(_loss), in_axes=(None, 0, 0))(W, XS, YS)
  np.testing.assert_allclose(g, _per_example_grads(), rtol=1e-5, atol=1e-6)


def test_jit_of_vmap_of_grad():
  g = jax.jit(jax.vmap(jax.grad(_loss), in_axes=(None, 0, 0)))(W, XS, YS)
  np.testing.assert_allclose(g, _per_example_grads(), rtol=1e-5, atol=1e-6)


def test_grad_of_vmap_sums_per_example_gradients():
  g = jax.grad(lambda w: jax.vmap(_loss, in_axes=(None, 0, 0))(w, XS, YS).sum())(W)
  np.testing.assert_allclose(g, _per_example_grads().sum(0), rtol=1e-5, atol=1e-5)


def test_grad_of_vmap_through_indexing_and_jit():
  idx = jnp.array([2, 0, 1, 3, 3, 1])
  f = jax.jit(lambda x, i: jnp.sin(x)[i] * x[0])
  g = jax.grad(lambda xs: jax.vmap(f)(xs, idx).sum())(XS)
  want = np.stack([np.asarray(jax.grad(f)(XS[k], idx[k])) for k in range(len(XS))])
  np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6)


def test_vmap_of_vmap_matches_a_double_loop():
  a = rng.standard_normal((2, 3, 4)).astype(np.float32)
  f = lambda r: jnp.dot(r, r) * r
  got = jax.vmap(jax.vmap(f, in_axes=0), in_axes=1)(a)
  want = np.stack([np.stack([np.asarray(f(a[i, j])) for i in range(2)]) for j in range(3)])
  np.testing.assert_allclose(got, want, rtol=1e-5)
  got = jax.vmap(jax.vmap(lambda r, s: r @ s, in_axes=(None, 0)), in_axes=(0, None))(
      a[:, 0], a[0])
  np.testing.assert_allclose(got, np.einsum("ik,jk->ij", a[:, 0], a[0]), rtol=1e-5)


def test_vmap_closing_over_an_outer_vmap_tracer():
  xs, ys = jnp.arange(3.), jnp.arange(4.)
  got = jax.vmap(lambda x: jax.vmap(lambda y: x * 10 + y)(ys))(xs)
  np.testing.assert_allclose(got, np.arange(3.)[:, None] * 10 + np.arange(4.))


def test_jvp_and_vmap_commute():
  x, t = jnp.asarray(X[:, 0]), jnp.ones((3, 5))
  p1, t1 = jax.jvp(jax.vmap(jnp.sin), (x,), (t,))
  p2, t2 = jax.vmap(lambda a, b: jax.jvp(jnp.sin, (a,), (b,)))(x, t)
  np.testing.assert_allclose(p1, p2)
  np.testing.assert_allclose(t1, t2)
  np.testing.assert_allclose(t1, np.cos(X[:, 0]), rtol=1e-6)


def test_kwargs_are_batched_along_axis_0():
  got = jax.vmap(lambda a, b: a - b, in_axes=(1,))(jnp.asarray(X[0]), b=jnp.asarray(X[1].T))
  np.testing.assert_allclose(got, X[0].T - X[1].T)


def test_pytree_in_axes_dict_and_nested_tuple():
  d = {"a": jnp.arange(3.), "b": 2.0}
  got = jax.vmap(lambda d: d["a"] * d["b"], in_axes=({"a": 0, "b": None},))(d)
  np.testing.assert_allclose(got, [0., 2., 4.])
  pair = (jnp.ones((4, 3)), jnp.arange(3.))
  got = jax.vmap(lambda p, s: p[0].sum() + p[1] * s, in_axes=((1, 0), None))(pair, 2.0)
  np.testing.assert_allclose(got, 4 + 2 * np.arange(3.))
  got = jax.vmap(lambda xs: xs[0] + xs[1], in_axes=[[0, None]])([jnp.arange(3.), 1.0])
  np.testing.assert_allclose(got, [1., 2., 3.])


def test_pytree_out_axes_and_unbatched_outputs():
  f = lambda a, b: {"sum": a + b, "b2": b * 2.}
  out = jax.vmap(f, in_axes=(0, None), out_axes={"sum": 1, "b2": None})(
      jnp.ones((2, 3)), jnp.arange(3.))
  assert out["sum"].shape == (3, 2)
  np.testing.assert_allclose(out["b2"], [0., 2., 4.])
  out = jax.vmap(f, in_axes=(0, None))(jnp.ones((2, 3)), jnp.arange(3.))
  np.testing.assert_allclose(out["b2"], [[0., 2., 4.]] * 2)  # broadcast to the batch
  const = jax.vmap(lambda a: 1.0)(jnp.ones(4))
  assert const.shape == (4,) and const.weak_type
  assert jax.vmap(lambda a: 1.0, out_axes=None)(jnp.ones(4)) == 1.0


def test_axis_size_without_mapped_arguments():
  out = jax.vmap(lambda a: a * 2., in_axes=None, axis_size=3)(jnp.arange(2.))
  np.testing.assert_allclose(out, [[0., 2.]] * 3)
  assert jax.vmap(lambda: jnp.ones(2), axis_size=4)().shape == (4, 2)


def test_empty_batch():
  assert jax.vmap(jnp.sin)(jnp.zeros((0, 3))).shape == (0, 3)


def test_tracer_repr_and_bool_conversion():
  reprs = []
  jax.vmap(lambda a: reprs.append(repr(a)) or a)(jnp.arange(3.))
  assert reprs == ["VmapTracer(aval=float32[], batched=float32[3])"]
  with pytest.raises(errors.TracerBoolConversionError):
    jax.vmap(lambda a: 1 if a > 0 else 0)(jnp.arange(3.))


def test_escaped_tracer_is_an_error():
  leaked = []
  jax.vmap(lambda a: leaked.append(a) or a)(jnp.arange(3.))
  with pytest.raises(errors.UnexpectedTracerError, match="BatchTracer"):
    jnp.sin(leaked[0])
  with pytest.raises(errors.UnexpectedTracerError):
    jax.vmap(lambda a: a + leaked[0])(jnp.arange(3.))


# ----------------------------------------------------------------------------- errors

def _raises(exc, message, f, *args, **kwargs):
  with pytest.raises(exc) as info:
    f(*args, **kwargs)
  assert str(info.value) == message


def test_inconsistent_sizes_message_as_jax():
  _raises(ValueError, "vmap got inconsistent sizes for array axes to be mapped:\n"
          "  * one axis had size 3: axis 0 of argument x of type float32[3];\n"
          "  * one axis had size 4: axis 0 of argument y of type float32[4]",
          jax.vmap(lambda x, y: x + y), jnp.ones(3), jnp.ones(4))
  _raises(ValueError, "vmap got inconsistent sizes for array axes to be mapped:\n"
          "  * one axis had size 3: axis 0 of argument x of type float32[3,1];\n"
          "  * one axis had size 4: axis 0 of argument y['a'] of type float32[4];\n"
          "  * one axis had size 5: axis 0 of argument y['b'] of type float32[5]",
          jax.vmap(lambda x, y: x), jnp.ones((3, 1)), {"a": jnp.ones(4), "b": jnp.ones(5)})
  _raises(ValueError, "vmap got inconsistent sizes for array axes to be mapped:\n"
          "  * most axes (2 of them) had size 3, e.g. axis 0 of argument x of type "
          "float32[3];\n"
          "  * one axis had size 4: axis 0 of argument z of type float32[4]",
          jax.vmap(lambda x, y, z: x), jnp.ones(3), jnp.ones(3), jnp.ones(4))
  _raises(ValueError, "vmap got inconsistent sizes for array axes to be mapped:\n"
          "  * one axis had size 3: axis 0 of argument x of type float32[3];\n"
          "  * one axis had size 4: axis 0 of kwargs['y'] of type float32[4]",
          jax.vmap(lambda x, y: x + y), jnp.ones(3), y=jnp.ones(4))
  _raises(ValueError, "vmap got inconsistent sizes for array axes to be mapped:\n"
          "  * the `axis_size` argument was 4;\n"
          "  * one axis had size 3: axis 0 of argument x of type float32[3]",
          jax.vmap(lambda x: x, axis_size=4), jnp.ones(3))


def test_axis_out_of_range_messages_as_jax():
  _raises(ValueError, "vmap was requested to map its argument along axis 2, which implies "
          "that its rank should be at least 3, but is only 1 (its shape is (3,))",
          jax.vmap(lambda x: x, in_axes=2), jnp.ones(3))
  _raises(ValueError, "vmap was requested to map its argument along axis -3, which implies "
          "that its rank should be at least 3, but is only 2 (its shape is (2, 3))",
          jax.vmap(lambda x: x, in_axes=-3), jnp.ones((2, 3)))
  _raises(ValueError, "vmap was requested to map its argument along axis 0, which implies "
          "that its rank should be at least 1, but is only 0 (its shape is ())",
          jax.vmap(lambda x: x), 1.0)
  _raises(ValueError, "axis 3 is out of bounds for array of dimension 1",
          jax.vmap(lambda x: x, out_axes=3), jnp.ones(3))


def test_nothing_mapped_messages_as_jax():
  _raises(ValueError, "vmap must have at least one non-None value in in_axes or axis_size "
          "must be specified", jax.vmap(lambda x: x, in_axes=None), jnp.ones(3))
  _raises(ValueError, "vmap wrapped function must be passed at least one argument "
          "containing an array or axis_size must be specified, got empty *args=() and "
          "**kwargs={}", jax.vmap(lambda: 1.))


def test_out_axes_none_for_a_batched_output_messages_as_jax():
  _raises(ValueError, "at vmap out_axes, got axis spec None but output was batched on "
          "axis 0", jax.vmap(lambda x: x, out_axes=None), jnp.ones(3))
  _raises(ValueError, "at vmap out_axes['b'], got axis spec None but output was batched "
          "on axis 0", jax.vmap(lambda x: {"a": x, "b": x}, out_axes={"a": 0, "b": None}),
          jnp.ones((2, 3)))
  _raises(ValueError, "vmap has mapped output (axis_name=i) but out_axes is None",
          jax.vmap(lambda x: x, out_axes=None, axis_name="i"), jnp.ones(3))


def test_axes_spec_messages_as_jax():
  _raises(TypeError, "vmap in_axes must be an int, None, or a tuple of entries "
          "corresponding to the positional arguments passed to the function, but got "
          "{'a': 0}.", jax.vmap, lambda x: x, in_axes={"a": 0})
  _raises(TypeError, "vmap in_axes must be an int, None, or (nested) container with those "
          "types as leaves, but got (0.5,).", jax.vmap, lambda x: x, in_axes=(0.5,))
  _raises(TypeError, "vmap out_axes must be an int, None, or (nested) container with "
          "those types as leaves, but got 0.5.", jax.vmap, lambda x: x, out_axes=0.5)
  _raises(ValueError, "vmap in_axes must be an int, None, or a tuple of entries "
          "corresponding to the positional arguments passed to the function, but got "
          "len(in_axes)=2, len(args)=1", jax.vmap(lambda x: x, in_axes=(0, 0)), jnp.ones(3))
  _raises(TypeError, "Expected a callable value, got 3", jax.vmap, 3)
  with pytest.raises(ValueError, match="vmap in_axes specification must be a tree prefix "
                     "of the corresponding value"):
    jax.vmap(lambda x: x, in_axes=({"a": 0, "b": 1},))({"a": jnp.ones(3)})
  with pytest.raises(ValueError, match="vmap out_axes specification must be a tree prefix"):
    jax.vmap(lambda x: (x, x), out_axes=(0, 0, 0))(jnp.ones(3))


def test_invalid_argument_and_output_types():
  _raises(TypeError, "Argument 'abc' of type <class 'str'> is not a valid JAX type",
          jax.vmap(lambda x, y: x), jnp.ones(3), "abc")
  assert jax.vmap(lambda x, y: x, in_axes=(0, None))(jnp.ones(3), "abc").shape == (3,)
  _raises(TypeError, "Output from batched function 'abc' with type <class 'str'> is not a "
          "valid JAX type", jax.vmap(lambda x: "abc"), jnp.ones(3))


def test_missing_batching_rule_names_the_primitive():
  prim = core.Primitive("my_unbatchable")
  prim.def_abstract_eval(lambda a: a)
  with pytest.raises(NotImplementedError, match="Batching rule for 'my_unbatchable' not "
                     "implemented"):
    jax.vmap(lambda a: prim.bind(a))(jnp.ones(3))


# ----------------------------------------------------------------------------- Jacobians

def _numerical_jacobian(f, x, eps=1e-3):
  x = np.asarray(x, np.float64)
  cols = []
  for i in range(x.size):
    e = np.zeros(x.size)
    e[i] = eps
    plus = np.asarray(f(jnp.asarray((x.ravel() + e).reshape(x.shape), jnp.float32)))
    minus = np.asarray(f(jnp.asarray((x.ravel() - e).reshape(x.shape), jnp.float32)))
    cols.append(((plus.astype(np.float64) - minus) / (2 * eps)).ravel())
  out_shape = np.shape(f(jnp.asarray(x, jnp.float32)))
  return np.stack(cols, -1).reshape(out_shape + x.shape)


def _nonlinear(x):
  return jnp.sin(x) * jnp.sum(x ** 2) + jnp.tanh(x[::-1])


@pytest.mark.parametrize("jac", [jax.jacfwd, jax.jacrev], ids=["jacfwd", "jacrev"])
def test_jacobian_matches_finite_differences(jac):
  x = jnp.asarray([0.3, -1.2, 0.7, 2.0])
  np.testing.assert_allclose(jac(_nonlinear)(x), _numerical_jacobian(_nonlinear, x),
                             rtol=2e-2, atol=2e-3)
  m = jnp.asarray(rng.standard_normal((3, 2)).astype(np.float32))
  f = lambda a: a @ a.T
  j = jac(f)(m)
  assert j.shape == (3, 3, 3, 2)
  np.testing.assert_allclose(j, _numerical_jacobian(f, m), rtol=2e-2, atol=2e-3)


@pytest.mark.parametrize("jac", [jax.jacfwd, jax.jacrev], ids=["jacfwd", "jacrev"])
def test_jacobian_of_pytrees_and_argnums(jac):
  x = jnp.array([1., 2., 3.])
  out = jac(lambda d: {"p": d["a"] * d["b"].sum(), "s": jnp.sin(d["a"])})(
      {"a": x, "b": jnp.ones(2)})
  np.testing.assert_allclose(out["p"]["a"], 2 * np.eye(3))
  np.testing.assert_allclose(out["p"]["b"], np.stack([x, x], 1))
  np.testing.assert_allclose(out["s"]["a"], np.diag(np.cos(x)), rtol=1e-6)
  assert out["s"]["b"].shape == (3, 2) and not np.any(out["s"]["b"])
  jx, jy = jac(lambda a, b: a * b, argnums=(0, 1))(x, 2.0)
  np.testing.assert_allclose(jx, 2 * np.eye(3))
  np.testing.assert_allclose(jy, x)
  j, aux = jac(lambda a: (a ** 2, a.sum()), has_aux=True)(x)
  np.testing.assert_allclose(j, np.diag(2 * x))
  # a concrete array, not a leaked tracer (jax.Array admits tracers too, as in JAX)
  assert isinstance(aux, jax.Array) and not isinstance(aux, jax.core.Tracer) and float(aux) == 6.0


def test_jacobian_dtypes_as_jax():
  assert repr(jax.jacfwd(lambda x: x ** 2)(3.0)) == "Array(6., dtype=float32, weak_type=True)"
  assert repr(jax.jacrev(lambda x: x ** 2)(3.0)) == "Array(6., dtype=float32, weak_type=True)"
  assert jax.jacfwd(lambda x: x.astype(jnp.float16))(jnp.ones(2)).dtype == jnp.float16
  assert jax.jacrev(lambda x: x.astype(jnp.float16))(jnp.ones(2)).dtype == jnp.float32
  zeros = jax.jacrev(lambda x: x * 2., allow_int=True)(jnp.arange(3))
  assert zeros.dtype == jnp.int32 and zeros.shape == (3, 3) and not np.any(zeros)
  z = jnp.array([1 + 1j, 2j], jnp.complex64)
  np.testing.assert_allclose(jax.jacfwd(lambda v: v ** 2, holomorphic=True)(z),
                             np.diag(2 * np.asarray(z)))
  np.testing.assert_allclose(jax.jacrev(lambda v: v ** 2, holomorphic=True)(z),
                             np.diag(2 * np.asarray(z)))


def test_jacobian_dtype_errors_as_jax():
  _raises(TypeError, "jacfwd requires real-valued inputs (input dtype that is a sub-dtype "
          "of np.floating), but got int32. For holomorphic differentiation, pass "
          "holomorphic=True. For differentiation of non-holomorphic functions involving "
          "complex inputs or integer inputs, use jax.jvp directly.",
          jax.jacfwd(lambda x: x), jnp.arange(3))
  _raises(TypeError, "jacrev requires real- or complex-valued inputs (input dtype that is a "
          "sub-dtype of np.inexact), but got int32. If you want to use Boolean- or "
          "integer-valued inputs, use vjp or set allow_int to True.",
          jax.jacrev(lambda x: x), jnp.arange(3))
  _raises(TypeError, "jacrev requires real-valued outputs (output dtype that is a sub-dtype "
          "of np.floating), but got int32. For differentiation of functions with integer "
          "outputs, use jax.vjp directly.",
          jax.jacrev(lambda x: x.astype(jnp.int32)), jnp.ones(3))
  _raises(TypeError, "jacfwd with holomorphic=True requires inputs with complex dtype, but "
          "got float32.", jax.jacfwd(lambda x: x, holomorphic=True), jnp.ones(3))


def test_hessian_of_a_quadratic_form_and_of_pytrees():
  a = rng.standard_normal((3, 3)).astype(np.float32)
  h = jax.hessian(lambda x: x @ jnp.asarray(a) @ x)(jnp.ones(3))
  np.testing.assert_allclose(h, a + a.T, rtol=1e-5, atol=1e-6)
  x = jnp.array([1., 2., 3.])
  (hxx, hxy), (hyx, hyy) = jax.hessian(lambda x, y: jnp.sum(x ** 2 * y), argnums=(0, 1))(
      x, 2.0)
  np.testing.assert_allclose(hxx, 4 * np.eye(3))
  np.testing.assert_allclose(hxy, 2 * x)
  np.testing.assert_allclose(hyx, 2 * x)
  assert float(hyy) == 0.0


def test_hessian_and_jacobians_through_vmap():
  xs = jnp.asarray(rng.standard_normal((4, 3)).astype(np.float32))
  f = lambda x: jnp.sum(jnp.sin(x) * x[0])
  hs = jax.vmap(jax.hessian(f))(xs)
  want = np.stack([np.asarray(jax.hessian(f)(x)) for x in xs])
  np.testing.assert_allclose(hs, want, rtol=1e-5, atol=1e-6)
  np.testing.assert_allclose(jax.jit(jax.vmap(jax.jacrev(_nonlinear)))(xs),
                             np.stack([np.asarray(jax.jacfwd(_nonlinear)(x)) for x in xs]),
                             rtol=1e-5, atol=1e-5)


# ----------------------------------------------------------------------------- named axes

def test_collectives_over_a_vmap_axis():
  x = jnp.arange(12.).reshape(3, 4)
  total = np.asarray(x).sum(0)
  np.testing.assert_allclose(jax.vmap(lambda v: lax.psum(v, "i"), axis_name="i")(x),
                             np.broadcast_to(total, (3, 4)))
  np.testing.assert_allclose(jax.vmap(lambda v: v - lax.pmean(v, "i"), axis_name="i")(x),
                             np.asarray(x) - total / 3)
  np.testing.assert_allclose(jax.vmap(lambda v: lax.pmax(v, "i") - lax.pmin(v, "i"),
                                      axis_name="i", in_axes=1)(x), np.full((4, 3), 3.))
  np.testing.assert_allclose(jax.vmap(lambda v: lax.axis_index("i"), axis_name="i")(x),
                             [0, 1, 2])
  gathered = jax.vmap(lambda v: lax.all_gather(v, "i"), axis_name="i")(x)
  np.testing.assert_allclose(gathered, np.broadcast_to(x, (3, 3, 4)))
  tiled = jax.vmap(lambda v: lax.all_gather(v, "i", axis=1, tiled=True), axis_name="i")(
      jnp.arange(12.).reshape(3, 2, 2))
  np.testing.assert_allclose(tiled[1], np.concatenate(list(np.arange(12.).reshape(3, 2, 2)),
                                                       axis=1))


def test_collectives_of_unbatched_values_and_pytrees():
  x = jnp.arange(3.)
  np.testing.assert_array_equal(jax.vmap(lambda v: lax.psum(1, "i"), axis_name="i")(x),
                                [3, 3, 3])
  np.testing.assert_allclose(jax.vmap(lambda v: lax.pmean(2, "i"), axis_name="i")(x),
                             [2., 2., 2.])
  out = jax.vmap(lambda v: lax.psum({"a": v, "b": 2 * v}, "i"), axis_name="i")(x)
  np.testing.assert_allclose(out["b"], [6., 6., 6.])
  # a psum is the same for every example, so out_axes=None may keep it unmapped
  assert float(jax.vmap(lambda v: lax.psum(v, "i"), axis_name="i", out_axes=None)(x)) == 3.


def test_collectives_in_nested_vmaps():
  x = jnp.arange(6.).reshape(2, 3)
  inner = lambda f: jax.vmap(f, axis_name="j")
  np.testing.assert_allclose(jax.vmap(inner(lambda v: lax.psum(v, "i")), axis_name="i")(x),
                             [[3., 5., 7.]] * 2)
  np.testing.assert_allclose(
      jax.vmap(inner(lambda v: lax.psum(v, ("i", "j"))), axis_name="i")(x), [[15.] * 3] * 2)
  idx = jax.vmap(inner(lambda v: lax.axis_index("i") * 10 + lax.axis_index("j")),
                 axis_name="i")(x)
  np.testing.assert_array_equal(idx, [[0, 1, 2], [10, 11, 12]])
  assert jax.vmap(inner(lambda v: lax.all_gather(v, "i")), axis_name="i")(x).shape == (2, 3, 2)


def test_gradients_of_collectives_as_jax():
  x = jnp.arange(3.)
  vg = lambda f: jax.vmap(jax.grad(f), axis_name="i")(x)
  np.testing.assert_allclose(vg(lambda v: lax.psum(v ** 2, "i")), [0., 6., 12.])
  np.testing.assert_allclose(vg(lambda v: lax.pmean(v ** 2, "i")), [0., 2., 4.])
  np.testing.assert_allclose(vg(lambda v: lax.all_gather(v, "i").sum() * v), [6., 6., 6.])
  g = jax.grad(lambda v: jax.vmap(lambda y: lax.psum(y ** 2, "i"), axis_name="i")(v).sum())(x)
  np.testing.assert_allclose(g, [0., 6., 12.])
  t = jax.vmap(lambda v: jax.jvp(lambda y: lax.pmax(y, "i"), (v,), (v + 1,))[1],
               axis_name="i")(jnp.array([1., 3., 2.]))
  np.testing.assert_allclose(t, [4., 4., 4.])  # the tangent of the winning example


def test_collectives_inside_jit_inside_vmap():
  f = jax.jit(lambda v: lax.psum(v, "i") * v)
  np.testing.assert_allclose(jax.vmap(f, axis_name="i")(jnp.arange(3.)), [0., 3., 6.])
  g = jax.jit(lambda: lax.axis_index("i"))  # no batched operand, but uses the axis
  np.testing.assert_array_equal(jax.vmap(lambda v: g(), axis_name="i")(jnp.arange(3.)),
                                [0, 1, 2])
  np.testing.assert_allclose(
      jax.jit(jax.vmap(lambda v: lax.pmean(v, "i"), axis_name="i"))(jnp.arange(3.)), [1.] * 3)


def test_collectives_print_as_jax_with_axis_env():
  text = str(jax.make_jaxpr(lambda x: lax.pmean(x, "i"), axis_env=[("i", 3)])(1.))
  assert text == ("{ lambda ; a:f32[]. let\n"
                  "    b:f32[] = psum[axes=('i',) axis_index_groups=None] a\n"
                  "    c:f32[] = div b 3.0:f32[]\n"
                  "  in (c,) }")
  text = str(jax.make_jaxpr(lambda x: lax.all_gather(x, "i"), axis_env=[("i", 3)])(1.))
  assert "b:f32[3] = all_gather[\n      all_gather_dimension=0\n" in text


def test_unbound_axis_names_raise_name_error():
  with pytest.raises(NameError, match="unbound axis name: i"):
    lax.psum(1., "i")
  with pytest.raises(NameError, match="unbound axis name: i"):
    lax.axis_index("i")
  with pytest.raises(NameError, match="unbound axis name: j"):
    jax.vmap(lambda v: lax.psum(v, "j"), axis_name="i")(jnp.arange(3.))
  with pytest.raises(NameError, match="unbound axis name: i"):
    jax.jit(lambda v: lax.all_gather(v, "i"))(1.)
  f = jax.jit(lambda v: lax.psum(v, "i"))
  jax.vmap(f, axis_name="i")(jnp.arange(3.))
  with pytest.raises(NameError, match="unbound axis name: i"):
    f(1.)  # the signature traced inside the vmap, now called outside it


# ----------------------------------------------------------------------------- custom rules

@jax.custom_jvp
def _sin_twice_jvp(x, w):
  return jnp.sin(x) @ w


@_sin_twice_jvp.defjvp
def _sin_twice_jvp_rule(primals, tangents):
  (x, w), (tx, tw) = primals, tangents  # twice the true derivative: the rule must be used
  return _sin_twice_jvp(x, w), 2 * ((jnp.cos(x) * tx) @ w + jnp.sin(x) @ tw)


@jax.custom_vjp
def _sin_thrice_vjp(x, w):
  return jnp.sin(x) @ w


_sin_thrice_vjp.defvjp(lambda x, w: (_sin_thrice_vjp(x, w), (x, w)),
                       lambda res, ct: (3 * jnp.cos(res[0]) * (res[1] @ ct),
                                        3 * jnp.outer(jnp.sin(res[0]), ct)))


@pytest.mark.parametrize("fun", [_sin_twice_jvp, _sin_thrice_vjp], ids=["jvp", "vjp"])
def test_custom_rules_are_used_under_vmap(fun):
  xs, w = jnp.asarray(XS[:, :3]), jnp.asarray(W[:3, :2])
  loss = lambda w, x: jnp.sum(fun(x, w) ** 2)
  per_example = np.stack([np.asarray(jax.grad(loss)(w, x)) for x in xs])
  np.testing.assert_allclose(jax.vmap(fun, in_axes=(0, None))(xs, w),
                             np.sin(XS[:, :3]) @ W[:3, :2], rtol=1e-6)
  np.testing.assert_allclose(jax.vmap(jax.grad(loss), in_axes=(None, 0))(w, xs),
                             per_example, rtol=1e-5, atol=1e-6)
  # the operand shared by all examples gets the sum of their cotangents
  np.testing.assert_allclose(
      jax.grad(lambda w: jax.vmap(loss, in_axes=(None, 0))(w, xs).sum())(w),
      per_example.sum(0), rtol=1e-5, atol=1e-5)
  gx = jax.grad(lambda x: jax.vmap(loss, in_axes=(None, 0))(w, x).sum())(xs)
  np.testing.assert_allclose(gx, np.stack([np.asarray(jax.grad(loss, 1)(w, x)) for x in xs]),
                             rtol=1e-5, atol=1e-6)


def test_stop_gradient_and_checkpoint_under_vmap():
  xs = jnp.asarray(XS)
  f = lambda x: jnp.log(jnp.sum(jnp.exp(x - lax.stop_gradient(jnp.max(x))))) + jnp.sum(
      lax.stop_gradient(x) * x)
  np.testing.assert_allclose(jax.vmap(jax.grad(f))(xs),
                             np.stack([np.asarray(jax.grad(f)(x)) for x in xs]), rtol=1e-5)
  c = jax.checkpoint(lambda x: jnp.sin(jnp.sin(x)))
  np.testing.assert_allclose(jax.grad(lambda x: jax.vmap(c)(x).sum())(xs),
                             np.cos(np.sin(XS)) * np.cos(XS), rtol=1e-5)
  assert [e.primitive.name for e in jax.make_jaxpr(jax.vmap(c))(xs).eqns] == ["remat2"]
