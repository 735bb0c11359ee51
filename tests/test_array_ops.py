"""Array helpers and einsum of jaxlite.numpy against NumPy, traced and differentiated."""
import numpy as np
import pytest

import jaxlite
import jaxlite.numpy as jnp
from jaxlite._src.test_util import check_grads

RNG = np.random.default_rng(0)
X = RNG.standard_normal((3, 4)).astype(np.float32)
X3 = RNG.standard_normal((2, 3, 4)).astype(np.float32)
V = np.arange(5, dtype=np.int32)


@pytest.fixture
def x64():
  old = jaxlite.config.jax_enable_x64
  jaxlite.config.update("jax_enable_x64", True)
  yield
  jaxlite.config.update("jax_enable_x64", old)

CASES = [
    ("tile", (X, (2, 1, 3)), {}), ("tile", (V, 2), {}),
    ("repeat", (X, 2), {"axis": 1}), ("repeat", (X, np.array([1, 0, 3])), {"axis": 0}),
    ("repeat", (V, 3), {}),
    ("roll", (X, 2), {}), ("roll", (X, -1), {"axis": 1}), ("roll", (X3, (1, 2), (0, 2)), {}),
    ("flip", (X3,), {}), ("flip", (X3, (0, 2)), {}), ("fliplr", (X,), {}), ("flipud", (X,), {}),
    ("rot90", (X,), {}), ("rot90", (X3, 2, (1, 2)), {}), ("rot90", (X3, -1, (0, 2)), {}),
    ("tril", (X3,), {}), ("triu", (X, 1), {}), ("tril", (X, -1), {}),
    ("diag", (X,), {}), ("diag", (X, 1), {}), ("diag", (X, -2), {}), ("diag", (V,), {}),
    ("diag", (V, 2), {}), ("diag", (V, -1), {}), ("diagflat", (X, 1), {}),
    ("diagonal", (X3,), {}), ("diagonal", (X3, 1, 1, 2), {}), ("diagonal", (X3, -1, 2, 0), {}),
    ("trace", (X,), {}), ("trace", (X3, 1, 1, 2), {}), ("kron", (X, X[:2, :2]), {}),
    ("kron", (V, X), {}), ("tensordot", (X3, X), {"axes": 2}),
    ("tensordot", (X3, X), {"axes": ([1, 2], [0, 1])}), ("tensordot", (X, X), {"axes": 0}),
    ("cross", (X[:, :3], X[::-1, 1:]), {}), ("cross", (X[:, :2], X[:, 2:]), {}),
    ("cross", (X.T[:3], X.T[1:]), {"axis": 0}), ("vander", (V.astype(np.float32),), {}),
    ("vander", (V, 3), {"increasing": True}),
    ("split", (X3, 2), {"axis": 2}), ("split", (X, [1, 3]), {"axis": 1}),
    ("array_split", (X, 3), {"axis": 1}), ("hsplit", (X, 2), {}), ("vsplit", (X, [1]), {}),
    ("dsplit", (X3, 2), {}), ("column_stack", ((V, V),), {}), ("column_stack", ((X, X),), {}),
    ("dstack", ((X, X),), {}), ("append", (X, X), {}), ("append", (X, X, 0), {}),
    ("delete", (X, 1, 1), {}), ("delete", (X, np.array([0, 2])), {}),
    ("delete", (X, slice(0, 3, 2), 1), {}), ("insert", (V, 2, 9), {}),
    ("insert", (X, 1, 7.0, 1), {}), ("insert", (V, np.array([1, 3]), np.array([8, 9])), {}),
    ("resize", (X, (5, 5)), {}), ("resize", (V, 3), {}), ("copy", (X,), {}),
    ("atleast_3d", (V,), {}), ("atleast_3d", (X,), {}), ("indices", ((2, 3),), {}),
    ("logspace", (0.0, 2.0, 5), {}), ("logspace", (1.0, 3.0, 4), {"base": 2.0}),
    ("geomspace", (1.0, 1000.0, 4), {}), ("geomspace", (-1.0, -16.0, 5), {"endpoint": False}),
    ("tri", (3, 4, 1), {}), ("meshgrid", (V, V[:3]), {}),
    ("meshgrid", (V, V[:3]), {"indexing": "ij"}), ("meshgrid", (V, V[:3], V[:2]), {"sparse": True}),
    ("unravel_index", (np.array([3, 7, 11]), (3, 4)), {}),
    ("ravel_multi_index", ((np.array([1, 2]), np.array([3, 0])), (3, 4)), {}),
    ("block", ([[X, X], [X, X]],), {}), ("block", ([V, V],), {}),
]


def _compare(got, want):
  if isinstance(want, (list, tuple)):
    assert len(got) == len(want)
    for g, w in zip(got, want):
      _compare(g, w)
    return
  want = np.asarray(want)
  got = np.asarray(got)
  assert got.shape == want.shape
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,args,kwargs", CASES, ids=[f"{c[0]}-{i}" for i, c in
                                                         enumerate(CASES)])
def test_matches_numpy(name, args, kwargs):
  _compare(getattr(jnp, name)(*args, **kwargs), getattr(np, name)(*args, **kwargs))


PAD_MODES = [("constant", {}), ("constant", {"constant_values": ((1, 2), (3, 4))}),
             ("edge", {}), ("reflect", {}), ("symmetric", {}), ("wrap", {}),
             ("reflect", {"reflect_type": "odd"}), ("symmetric", {"reflect_type": "odd"}),
             ("linear_ramp", {}), ("linear_ramp", {"end_values": (5, -2)}), ("maximum", {}),
             ("minimum", {"stat_length": 2}), ("mean", {}), ("mean", {"stat_length": (1, 3)})]


@pytest.mark.parametrize("mode,kw", PAD_MODES)
@pytest.mark.parametrize("width", [2, ((1, 2), (3, 0)), ((4, 7), (6, 9))])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_pad_matches_numpy(mode, kw, width, dtype):
  x = (RNG.standard_normal((3, 4)) * 5).astype(dtype)
  if kw.get("reflect_type") == "odd" and width == ((4, 7), (6, 9)):
    pytest.skip("odd reflection beyond one period is not supported")
  if mode == "linear_ramp" and dtype == np.int32:
    pytest.skip("JAX floors a float32 ramp where NumPy truncates a float64 one: "
                "tests/test_numpy_extra.py compares integer ramps with JAX")
  np.testing.assert_allclose(jnp.pad(x, width, mode, **kw), np.pad(x, width, mode, **kw),
                             rtol=1e-6, atol=1e-6)


def test_pad_traces_and_differentiates(x64):
  for mode in ("constant", "edge", "reflect", "symmetric", "wrap", "mean", "maximum"):
    f = lambda v: jnp.pad(v, ((1, 2), (2, 1)), mode)
    check_grads(f, (X.astype(np.float64),), order=1)
    assert jaxlite.jit(f)(X).shape == (6, 7)


def test_roll_with_traced_shift():
  f = jaxlite.jit(lambda x, s: jnp.roll(x, s, axis=1))
  for s in (-5, -1, 0, 3, 9):
    np.testing.assert_array_equal(f(X, s), np.roll(X, s, axis=1))


def test_apply_along_axis():
  for axis in (0, 1, 2):
    got = jnp.apply_along_axis(lambda v: jnp.sum(v * v), axis, X3)
    np.testing.assert_allclose(got, np.apply_along_axis(lambda v: np.sum(v * v), axis, X3),
                               rtol=1e-5)


def test_array_ops_gradients_and_vmap(x64):
  x = X.astype(np.float64)
  check_grads(lambda v: jnp.kron(v, v[:2, :2]), (x,), order=2)
  check_grads(lambda v: jnp.diag(jnp.diag(v)), (x,), order=1)
  check_grads(lambda v: jnp.trace(jnp.tril(v @ v.T)), (x,), order=2)
  check_grads(lambda v: jnp.rot90(jnp.tile(v, (2, 1)), 1), (x,), order=1)
  out = jaxlite.vmap(lambda v: jnp.diagonal(jnp.roll(v, 1, 0)))(X3)
  np.testing.assert_allclose(out, np.stack([np.diagonal(np.roll(m, 1, 0)) for m in X3]))


# ----------------------------------------------------------------------------- einsum

EINSUM_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
    ("ii->i", [(4, 4)]), ("ii", [(4, 4)]), ("ij->", [(3, 4)]), ("ij->ji", [(3, 4)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("i,i->", [(4,), (4,)]), ("i,j->ij", [(3,), (4,)]), ("ijk,kji->", [(2, 3, 4), (4, 3, 2)]),
    ("iij->j", [(3, 3, 4)]), ("ab,bc,cd,de->ae", [(2, 3), (3, 8), (8, 2), (2, 5)]),
    ("ij,ij,ij->i", [(3, 4), (3, 4), (3, 4)]), ("ij,kl", [(2, 3), (4, 5)]),
    ("i...,i...->...", [(3, 2, 2), (3, 2, 2)]), ("abc,cd,db->a", [(2, 3, 4), (4, 5), (5, 3)]),
]


@pytest.mark.parametrize("spec,shapes", EINSUM_CASES, ids=[c[0] for c in EINSUM_CASES])
def test_einsum_matches_numpy(spec, shapes):
  ops = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
  np.testing.assert_allclose(jnp.einsum(spec, *ops), np.einsum(spec, *ops), rtol=1e-4,
                             atol=1e-5)
  np.testing.assert_allclose(jaxlite.jit(lambda *a: jnp.einsum(spec, *a))(*ops),
                             np.einsum(spec, *ops), rtol=1e-4, atol=1e-5)


def test_einsum_lowers_to_dot_general_and_differentiates(x64):
  a, b, c = (RNG.standard_normal(s) for s in ((3, 4), (4, 5), (5, 2)))
  text = str(jaxlite.make_jaxpr(lambda *o: jnp.einsum("ij,jk,kl->il", *o))(a, b, c))
  assert text.count("dot_general") == 2
  check_grads(lambda *o: jnp.einsum("ij,jk,kl->il", *o), (a, b, c), order=2)
  check_grads(lambda x: jnp.einsum("ii->i", x), (a[:3, :3],), order=1)


def test_einsum_interleaved_path_and_integer_dtypes():
  a, b = RNG.standard_normal((2, 3)), RNG.standard_normal((3, 4))
  np.testing.assert_allclose(jnp.einsum(a, [0, 1], b, [1, 2], [0, 2]), a @ b, rtol=1e-5)
  path, report = jnp.einsum_path("ij,jk,kl->il", a, b, np.ones((4, 2)))
  # (opt_einsum's form of a path, as JAX 0.10.2 returns it: [(1, 2), (0, 1)] here)
  assert len(path) == 2 and all(len(p) == 2 for p in path) and "ij,jk,kl->il" in report
  np.testing.assert_allclose(jnp.einsum("ij,jk,kl->il", a, b, np.ones((4, 2)), optimize=path),
                             a @ b @ np.ones((4, 2)), rtol=1e-5)
  i = np.arange(6, dtype=np.int32).reshape(2, 3)
  out = jnp.einsum("ij,kj->ik", i, i)
  assert out.dtype == np.int32
  np.testing.assert_array_equal(out, i @ i.T)
  with pytest.raises(ValueError):
    jnp.einsum("ij,jk->ik", np.ones((2, 3)), np.ones((4, 5)))


# -- behaviour defined by JAX rather than NumPy: expected values below were recorded
# with JAX 0.10.2 where NumPy differs

MODES = {"eager": lambda f: f, "jit": lambda f: jaxlite.jit(f, backend="numpy")}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("src,dst", [("float32", "uint8"), ("int32", "int16"),
                                     ("uint8", "int32"), ("complex64", "float32"),
                                     ("bool", "uint8"), ("float32", "complex64"),
                                     ("int8", "bool")])
def test_view_reinterprets_bits_as_numpy(mode, src, dst):
  x = np.arange(24).reshape(2, 12) % 2 if "bool" in (src, dst) else RNG.integers(
      -50, 50, (2, 12))
  x = x.astype(src) if src != "complex64" else (x + 1j * x[::-1]).astype(src)
  got = MODES[mode](lambda v: v.view(dst))(x)
  np.testing.assert_array_equal(np.asarray(got), x.view(dst))


def test_repeat_with_total_repeat_length_traces():
  f = jaxlite.jit(lambda r: jnp.repeat(jnp.arange(3), r, total_repeat_length=5),
                  backend="numpy")
  np.testing.assert_array_equal(f(np.array([1, 2, 0])), [0, 1, 1, 2, 2])   # JAX's padding
  np.testing.assert_array_equal(f(np.array([2, 2, 2])), [0, 0, 1, 1, 2])
  with pytest.raises(TypeError):
    jnp.repeat(V, [1, 2, 0, 1, 1])   # a list, as in JAX


def test_insert_and_delete_take_traced_indices():
  ins = jaxlite.jit(lambda i: jnp.insert(V, i, jnp.array([8, 9])), backend="numpy")
  np.testing.assert_array_equal(ins(np.array([3, 1])), np.insert(V, [3, 1], [8, 9]))
  dele = jaxlite.jit(lambda i: jnp.delete(V, i, assume_unique_indices=True), backend="numpy")
  np.testing.assert_array_equal(dele(np.array([4, -5])), np.delete(V, [4, -5]))
  with pytest.raises(jaxlite.errors.ConcretizationTypeError):
    jaxlite.jit(lambda i: jnp.delete(V, i))(np.array([0, 1]))


def test_intersect1d_returns_first_indices_as_numpy():
  a, b = np.array([3, 1, 4, 1, 5, 9]), np.array([5, 9, 1, 1, 7])
  for got, want in zip(jnp.intersect1d(a, b, return_indices=True),
                       np.intersect1d(a, b, return_indices=True)):
    np.testing.assert_array_equal(got, want)
  vals, ia, ib = jaxlite.jit(lambda a, b: jnp.intersect1d(a, b, return_indices=True, size=4),
                             backend="numpy")(a, b)
  np.testing.assert_array_equal(vals, [1, 5, 9, 1])
  np.testing.assert_array_equal(ia, [1, 4, 5, 6])   # past the end: the sizes of a and b
  np.testing.assert_array_equal(ib, [2, 0, 1, 5])


def test_partition_and_top_k_use_the_float_total_order():
  x = np.array([1., -np.nan, np.nan, -np.inf, 0., -0., 2., 0.], np.float32)
  values, indices = jaxlite.lax.top_k(x, 8)
  np.testing.assert_array_equal(indices, [2, 6, 0, 4, 7, 5, 3, 1])   # -NaN last, -0 < 0
  np.testing.assert_array_equal(jnp.argpartition(x, 3), [1, 3, 5, 4, 0, 2, 6, 7])
  y = np.array([3, 1, 4, 1, 5, 9, 2, 6], np.uint8)
  np.testing.assert_array_equal(jnp.partition(y, 3), [1, 1, 2, 3, 9, 6, 5, 4])


def test_products_accumulate_like_xla():
  a, b = X.astype(jnp.bfloat16), X.T.astype(jnp.bfloat16)
  want = (np.asarray(a, np.float32) @ np.asarray(b, np.float32))
  np.testing.assert_allclose(np.asarray(jnp.dot(a, b), np.float32), want, rtol=1e-2)
  assert jnp.matmul(a, b, preferred_element_type=jnp.float32).dtype == np.float32
  c = (X + 1j * X[::-1]).astype(np.complex64)
  np.testing.assert_allclose(jnp.dot(c, c.T, preferred_element_type=jnp.float32),
                             (c @ c.T).real, rtol=1e-5)
  np.testing.assert_allclose(jnp.vdot(c, c), np.vdot(c, c), rtol=1e-5)
  assert jnp.dot(X > 0, X.T > 0, preferred_element_type=jnp.int32).dtype == np.int32
  with pytest.raises(TypeError):
    jnp.dot(X.astype(np.int8), 2)   # the 2 is an int32 operand, wider than the int8 result


@pytest.mark.parametrize("sa,sb", [((2, 3, 4), (4, 5)), ((4,), (2, 4, 5)), ((2, 1, 3, 4), (5, 4, 2)),
                                   ((1, 3, 4), (2, 4, 5)), ((2, 3, 4), (4,)), ((4,), (4,)),
                                   ((3, 1, 2, 4), (1, 5, 4, 3)), ((1, 1, 4), (4,)),
                                   ((2, 2, 3), (2, 3, 2))])
def test_matmul_broadcasts_batch_axes_as_numpy(sa, sb):
  rng = np.random.default_rng(0)
  a, b = rng.normal(size=sa).astype(np.float32), rng.normal(size=sb).astype(np.float32)
  want = np.matmul(a.astype(np.float64), b.astype(np.float64))
  for f in (jnp.matmul, jaxlite.jit(jnp.matmul)):
    got = f(a, b)
    assert got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
  # its gradient, against NumPy: sum(a @ b) is linear in a, so each entry of the
  # gradient is the sum of the product of b with that entry's unit array
  ga = jaxlite.grad(lambda p: jnp.sum(jnp.matmul(p, b)))(a)
  units = np.eye(a.size).reshape((a.size,) + a.shape)
  want_ga = np.array([np.matmul(u, b.astype(np.float64)).sum() for u in units]).reshape(a.shape)
  np.testing.assert_allclose(np.asarray(ga), want_ga, rtol=1e-5, atol=1e-5)
