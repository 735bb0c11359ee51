"""The algebraic simplification pass (``passes/algebraic.py``) and tier 0's view templates
(``codegen._VIEWS``) are fast paths: each case runs the same inputs through the rewritten
program on both tiers and through eager evaluation of the unrewritten jaxpr, and checks
the values against NumPy."""
import ml_dtypes
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite._src.core import core
from jaxlite._src import passes
from jaxlite._src.backends.numpy import codegen
from jaxlite._src.backends.numpy.impls import impl_rules

_TIERS = ("numpy", "xla")
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


def _primitives(closed):
  return [e.primitive.name for e in closed.jaxpr.eqns]


def _bits(a):
  a = np.ascontiguousarray(a)
  return a.view(np.uint8)


def _check_tiers(fn, args, want):
  """``fn`` on both tiers and eagerly gives ``want`` (a tree of NumPy arrays), bit for
  bit, with its dtypes and shapes."""
  closed = jax.make_jaxpr(fn)(*args)
  flat_args = jax.tree_util.tree_leaves(args)
  unrewritten = core.eval_jaxpr(closed.jaxpr, closed.consts, *flat_args)
  for got in [unrewritten] + [jax.tree_util.tree_leaves(jax.jit(fn, backend=b)(*args))
                              for b in _TIERS]:
    for g, w in zip(got, jax.tree_util.tree_leaves(want), strict=True):
      g = np.asarray(g)
      assert (g.dtype, g.shape) == (w.dtype, w.shape)
      np.testing.assert_array_equal(_bits(g), _bits(w))


_SPECIALS = [0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan, 1e-40]


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32, np.int32,
                                   np.uint8])
def test_multiplying_by_one_is_dropped_and_keeps_every_bit(dtype):
  x = np.array(_SPECIALS if np.dtype(dtype).kind == "f" else [0, 1, 3, 0], dtype)
  one = np.ones((), dtype)
  fn = lambda x: (lax.mul(x, one), lax.mul(one, x), x * 1)
  closed = passes.optimize(jax.make_jaxpr(fn)(x))
  assert "mul" not in _primitives(closed)
  _check_tiers(fn, (x,), (x, x, x))


def test_multiplying_by_one_keeps_complex_products_and_weak_types():
  # XLA's complex product of inf + 0j and 1 + 0j has a NaN imaginary part: not an identity
  z = np.array([np.inf + 0j, 1 + 2j], np.complex64)
  assert "mul" in _primitives(passes.optimize(jax.make_jaxpr(lambda z: z * 1)(z)))
  # a weak operand times a strong 1 has a strong type: the multiply stays
  weak = jax.make_jaxpr(lambda x: lax.mul(x, np.float32(1)))(jnp.asarray(2.0))
  assert "mul" in _primitives(passes.optimize(weak))
  out = jax.jit(lambda x: lax.mul(x, np.float32(1)))(jnp.asarray(2.0))
  assert not out.weak_type


# Recorded from JAX 0.10.2 on CPU: jax.jit(f)(x, b) with x = [inf, -inf, 1, -1] (float32)
# and b = [False, True, True, False]; XLA's simplifier makes x * convert(b) a select.
_X_TIMES_BOOL = {
    "x * b": [0.0, -np.inf, 1.0, 0.0],
    "convert(b) * x": [0.0, -np.inf, 1.0, 0.0],
    "inf * b": [0.0, np.inf, np.inf, 0.0],
    "x * b[0]": [np.nan, np.nan, 0.0, -0.0],           # b broadcast: a plain product
    "x * int32(b)": [np.nan, -np.inf, 1.0, -0.0],       # converted from int32: a product
    "x[:1] * b": [0.0, np.inf, np.inf, 0.0],           # x's size-1 axis broadcast
}


def _times_bool(name):
  return {"x * b": lambda x, b: x * b,
          "convert(b) * x": lambda x, b: lax.convert_element_type(b, np.float32) * x,
          "inf * b": lambda x, b: jnp.inf * b,
          "x * b[0]": lambda x, b: x * b[0],
          "x * int32(b)": lambda x, b: x * b.astype(np.int32),
          "x[:1] * b": lambda x, b: x[:1] * b}[name]


@pytest.mark.parametrize("name", list(_X_TIMES_BOOL))
def test_a_product_with_a_converted_bool_is_a_select_on_both_tiers(name):
  x = np.array([np.inf, -np.inf, 1.0, -1.0], np.float32)
  b = np.array([False, True, True, False])
  want = np.array(_X_TIMES_BOOL[name], np.float32)
  for tier in _TIERS:
    got = np.asarray(jax.jit(_times_bool(name), backend=tier)(x, b))
    np.testing.assert_array_equal(got, want)   # a NaN's sign bit was not recorded
    assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all()


def test_eager_multiply_by_a_bool_array_is_the_jitted_select():
  # JAX's jnp.multiply is jitted, so eagerly too (values recorded from JAX 0.10.2)
  b = jnp.array([False, True])
  assert float(jnp.inf * jnp.array(False)) == 0.0
  np.testing.assert_array_equal(jnp.inf * b, [0.0, np.inf])
  np.testing.assert_array_equal(jnp.multiply(np.array([True, False]), jnp.array([np.inf])),
                                [np.inf, 0.0])
  # a bool scalar broadcast against an array stays a product: nan, as in JAX
  np.testing.assert_array_equal(jnp.array(False) * jnp.array([np.inf, 1.0]), [np.nan, 0.0])
  assert (jnp.inf * b).weak_type and (b * 2).dtype == np.int32


def test_uniform_constants_are_read_as_scalars_with_every_bit_kept():
  x = np.array([_SPECIALS[:4], _SPECIALS[4:]], np.float32).T     # (4, 2)
  ones_row, twos = np.ones((1, 2), np.float32), np.full((4, 2), 2.0, np.float32)
  fn = lambda x: (x * ones_row, x - twos, jnp.maximum(twos, x))
  closed = passes.optimize(jax.make_jaxpr(fn)(x))
  assert not closed.consts                        # every constant became a literal
  assert _primitives(closed).count("mul") == 0    # and x * 1 is x
  _check_tiers(fn, (x,), (x, x - twos, np.maximum(twos, x)))
  i, b = np.array([[3, -1], [0, 7]], np.int32), np.array([[True, False]])
  int_fn = lambda i, b: (i + np.zeros((2, 2), np.int32), b & np.ones((1, 2), bool))
  assert not passes.optimize(jax.make_jaxpr(int_fn)(i, b)).consts
  _check_tiers(int_fn, (i, b), (i, b))


@pytest.mark.parametrize("const", [
    np.array([[0.0, -0.0]], np.float32),            # equal values, different bits
    np.array([[np.nan, np.nan]], np.float32),       # NumPy's loops may pick either NaN
    np.ones((3, 2), np.float32),                    # the other operand lacks the shape
])
def test_constants_that_are_not_splats_of_the_shape_stay_arrays(const):
  x = np.array([[-0.0, np.nan]], np.float32)
  fn = lambda x: (x + const, x * const)
  closed = passes.optimize(jax.make_jaxpr(fn)(x))
  assert closed.consts
  with np.errstate(invalid="ignore"):
    want = (x + const, x * const)
  _check_tiers(fn, (x,), want)


def test_reshape_chains_read_the_first_operand():
  x = np.arange(24, dtype=np.float32)
  fn = lambda x: (x.reshape(2, 12).reshape(4, 6).reshape(24), jnp.squeeze(
      x.reshape(1, 24, 1), (0, 2)).reshape(3, 8), x.reshape(6, 4).reshape(3, 8))
  closed = passes.optimize(jax.make_jaxpr(fn)(x))
  assert _primitives(closed) == ["reshape"]   # both (3, 8) reshapes of x, shared by CSE
  assert all(e.invars[0] is closed.jaxpr.invars[0] for e in closed.jaxpr.eqns)
  _check_tiers(fn, (x,), (x, x.reshape(3, 8), x.reshape(3, 8)))


_DOTS = [  # (lhs shape, rhs shape, dimension numbers), each free block non-empty
    ((256, 1, 32), (256, 1, 64), (((1,), (1,)), ((0,), (0,)))),    # vmap of an outer product
    ((5, 3), (3, 4), (((1,), (0,)), ((), ()))),
    ((2, 5, 3, 7), (2, 3, 4), (((2,), (1,)), ((0,), (0,)))),
    ((4, 3, 2), (2, 6, 3), (((1, 2), (2, 0)), ((), ()))),
]


@pytest.mark.parametrize("lhs_shape,rhs_shape,dims", _DOTS)
def test_a_transpose_of_a_dot_general_becomes_the_swapped_dot_general(lhs_shape, rhs_shape,
                                                                       dims):
  rng = np.random.default_rng(0)
  # small nonzero integers: exact sums in any order, and no product is a signed zero
  # (whether a one-term sum keeps -0.0 depends on the backend's dot, not on the pass)
  nonzero = lambda shape: (rng.integers(1, 5, shape) * rng.choice([-1, 1], shape)).astype(
      np.float32)
  lhs, rhs = nonzero(lhs_shape), nonzero(rhs_shape)
  (lc, rc), (lb, rb) = dims
  nb, nl = len(lb), len(lhs_shape) - len(lc) - len(lb)
  nr = len(rhs_shape) - len(rc) - len(rb)
  perm = (*range(nb), *range(nb + nl, nb + nl + nr), *range(nb, nb + nl))
  fn = lambda a, b: lax.transpose(lax.dot_general(a, b, dims), perm)
  closed = passes.optimize(jax.make_jaxpr(fn)(lhs, rhs))
  assert _primitives(closed) == ["dot_general"]
  assert closed.jaxpr.eqns[0].invars[0] is closed.jaxpr.invars[1]
  letters = "abcdefghij"
  lhs_axes = [letters[i] for i in range(len(lhs_shape))]
  rhs_axes = [letters[5 + i] for i in range(len(rhs_shape))]
  for a, b in list(zip(lc, rc)) + list(zip(lb, rb)):
    rhs_axes[b] = lhs_axes[a]
  batch = [lhs_axes[a] for a in lb]
  lfree = [s for i, s in enumerate(lhs_axes) if i not in lc + lb]
  rfree = [s for i, s in enumerate(rhs_axes) if i not in rc + rb]
  spec = f"{''.join(lhs_axes)},{''.join(rhs_axes)}->{''.join(batch + rfree + lfree)}"
  want = np.einsum(spec, lhs.astype(np.float64), rhs.astype(np.float64)).astype(np.float32)
  _check_tiers(fn, (lhs, rhs), (want,))


def test_transposes_the_swap_cannot_express_stay():
  lhs, rhs = np.ones((2, 3, 4), np.float32), np.ones((2, 4, 5), np.float32)
  dims = (((2,), (1,)), ((0,), (0,)))
  moves_batch = lambda a, b: lax.transpose(lax.dot_general(a, b, dims), (1, 0, 2))
  closed = passes.optimize(jax.make_jaxpr(moves_batch)(lhs, rhs))
  assert _primitives(closed) == ["dot_general", "transpose"]
  # the product is read twice: folding would compute it twice
  twice = lambda a, b: (lambda d: (lax.transpose(d, (0, 2, 1)), d))(lax.dot_general(a, b,
                                                                                    dims))
  closed = passes.optimize(jax.make_jaxpr(twice)(lhs, rhs))
  assert _primitives(closed) == ["dot_general", "transpose"]
  want = np.full((2, 3, 5), 4, np.float32)
  _check_tiers(twice, (lhs, rhs), (want.transpose(0, 2, 1), want))


def test_per_example_gradients_match_numpy_after_the_rewrites():
  """The pattern the pass is for (benchmarks' W7): all three rules fire."""
  rng = np.random.default_rng(1)
  params = [rng.standard_normal(s).astype(np.float32) for s in [(8, 16), (16,), (16, 1),
                                                                   (1,)]]
  xs, ys = rng.standard_normal((32, 8)).astype(np.float32), rng.standard_normal(32).astype(
      np.float32)

  def loss(p, x, y):
    h = jnp.tanh(x @ p[0] + p[1])
    return ((h @ p[2] + p[3])[0] - y) ** 2

  fn = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))
  before = jax.make_jaxpr(fn)(params, xs, ys)
  after = passes.optimize(before)
  assert "transpose" in _primitives(before) and "transpose" not in _primitives(after)
  w1, b1, w2, b2 = (p.astype(np.float64) for p in params)
  h = np.tanh(xs @ w1 + b1)
  r = 2 * ((h @ w2 + b2)[:, 0] - ys)
  dh = r[:, None] * w2[:, 0] * (1 - h ** 2)
  want = [xs[:, :, None] * dh[:, None, :], dh, h[:, :, None] * r[:, None, None], r[:, None]]
  for backend in _TIERS:
    got = jax.jit(fn, backend=backend)(params, xs, ys)
    for g, w in zip(got, want, strict=True):
      assert g.shape == w.shape and g.dtype == np.float32
      np.testing.assert_allclose(np.asarray(g), w, rtol=2e-5, atol=2e-5)


# -- tier 0's view templates against the implementation table
_VIEW_CASES = [
    (lambda x: x.reshape(4, 6), (24,)),
    (lambda x: jnp.squeeze(x, (0, 2)), (1, 5, 1)),
    (lambda x: x.reshape(()), (1, 1)),
    (lambda x: lax.transpose(x, (2, 0, 1)), (2, 3, 4)),
    (lambda x: lax.broadcast_in_dim(x, (1, 5, 1), (1,)), (5,)),       # a reshape
    (lambda x: lax.broadcast_in_dim(x, (4, 5, 3), (1,)), (5,)),       # a real broadcast
    (lambda x: lax.broadcast_in_dim(x, (3, 2), (0, 1)), (1, 2)),
    (lambda x: lax.broadcast_in_dim(x, (2, 3), ()), ()),              # of a 0-d value
    (lambda x: lax.broadcast_in_dim(x, (1, 1), ()), ()),
]


@pytest.mark.parametrize("case", range(len(_VIEW_CASES)))
def test_view_templates_compute_what_the_implementation_table_computes(case):
  fn, shape = _VIEW_CASES[case]
  x = np.arange(1, 1 + int(np.prod(shape)), dtype=np.float32).reshape(shape)
  closed = jax.make_jaxpr(fn)(x)
  (eqn,) = closed.jaxpr.eqns
  assert codegen._VIEWS[eqn.primitive](eqn) is not None
  compiled, _ = codegen.compile_jaxpr(closed)
  # 0-d operands reach generated code as NumPy scalars too
  for arg in ([x, x[()]] if x.ndim == 0 else [x]):
    (got,) = compiled(arg)
    want = impl_rules[eqn.primitive](arg, **eqn.params)
    assert got.shape == want.shape == eqn.outvars[0].aval.shape
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
