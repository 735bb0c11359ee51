"""Every fast path gives what the slow path it skips gives, on the same inputs.

The slow paths are the general ones: the promotion function of a ``jnp`` ufunc, the shape
rule of eager dispatch, tier 0 without buffer reuse, the full jit cache key, a jaxpr
without the optimization passes, a pinned tier. The expected values come from NumPy, or
from JAX 0.10.2 where a docstring says so.
"""
import collections
import itertools
import operator
import time
import warnings

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite._src import tiers
from jaxlite._src.core.array import Array
from jaxlite._src.lax import elementwise as ew
from jaxlite._src.libraries.numpy import ufuncs

_TIERS = ("numpy",) + (("xla",) if tiers.xla_available() else ())
_BINARY = ["add", "subtract", "multiply", "true_divide", "divide", "maximum", "minimum",
           "arctan2", "nextafter", "bitwise_and", "bitwise_or", "bitwise_xor",
           "logical_and", "logical_or", "logical_xor", "equal", "not_equal", "less",
           "less_equal", "greater", "greater_equal"]
_DTYPES = ["bool", "int8", "int32", "uint8", "uint32", "float16", "float32"]


def _operands(dtype):
  x = np.array([[7, -7, 3], [0, 5, 2]]).astype(dtype)
  y = np.array([[2, 2, -3], [1, 4, 1]]).astype(dtype)
  return x, y


def _result_or_error(fn, *args):
  try:
    out = fn(*args)
  except Exception as e:   # the class is compared, the message is not
    return type(e)
  return (np.asarray(out), out.dtype, out.weak_type)


@pytest.mark.parametrize("name", _BINARY)
@pytest.mark.parametrize("dtype", _DTYPES)
def test_ufunc_hot_path_promotes_as_the_slow_path(name, dtype):
  """Two Arrays of one dtype skip the promotion function; NumPy operands take it."""
  fn = getattr(jnp, name)
  x, y = _operands(dtype)
  fast = _result_or_error(fn, jnp.asarray(x), jnp.asarray(y))
  slow = _result_or_error(fn, x, y)
  if isinstance(slow, type):
    assert fast is slow
    return
  np.testing.assert_array_equal(fast[0], slow[0])
  assert fast[1:] == slow[1:]


@pytest.mark.parametrize("name", ["add", "true_divide", "arctan2", "subtract", "maximum"])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "float16", "float32"])
@pytest.mark.parametrize("scalar", [3, -1, 300, 2.5])
def test_ufunc_scalar_hot_path_promotes_as_the_slow_path(name, dtype, scalar):
  fn = getattr(jnp, name)
  x, _ = _operands(dtype)
  fast = _result_or_error(fn, jnp.asarray(x), scalar)
  slow = _result_or_error(lambda a, s: fn(jnp.asarray(a), jnp.asarray(s)), x, scalar)
  if isinstance(slow, type):
    assert fast is slow
    return
  np.testing.assert_array_equal(fast[0], slow[0])
  assert fast[1:] == slow[1:]


def test_integer_true_divide_is_float_as_in_jax():
  out = jnp.asarray([7, -7]) / jnp.asarray([2, 2])
  assert out.dtype == np.float32
  np.testing.assert_array_equal(out, [3.5, -3.5])
  assert jnp.true_divide(jnp.asarray([7], np.int8), jnp.asarray([2], np.int8)).dtype == \
      np.float32
  np.testing.assert_allclose(jnp.arctan2(jnp.asarray([1, -1]), jnp.asarray([1, 1])),
                             np.arctan2([1.0, -1.0], [1.0, 1.0]), rtol=1e-6)


_VIEWS = {
    "reshape": lambda a: a.reshape(-1),
    "transpose": lambda a: a.T,
    "slice": lambda a: a[:, 1:],
    "squeeze": lambda a: jnp.squeeze(a[:1]),
    "rev": lambda a: a[::-1],
    "broadcast_to": lambda a: jnp.broadcast_to(a, (3,) + a.shape),
    "expand_dims": lambda a: jnp.expand_dims(a, 0),
    "stop_gradient": jax.lax.stop_gradient,
    "astype_same": lambda a: a.astype(a.dtype),
}
_NUMPY_VIEWS = {
    "reshape": lambda a: a.reshape(-1), "transpose": lambda a: a.T,
    "slice": lambda a: a[:, 1:], "squeeze": lambda a: np.squeeze(a[:1]),
    "rev": lambda a: a[::-1], "broadcast_to": lambda a: np.broadcast_to(a, (3,) + a.shape),
    "expand_dims": lambda a: np.expand_dims(a, 0), "stop_gradient": lambda a: a,
    "astype_same": lambda a: a,
}


@pytest.mark.parametrize("view", sorted(_VIEWS))
def test_tier0_buffer_reuse_never_overwrites_a_live_view(view):
  """Tier 0 writes an elementwise result into a dying operand's buffer only when no live
  value is a view of it (the slow path: NumPy allocating every result)."""
  def f(x, view_fn=_VIEWS[view]):
    a = jnp.sin(x)
    b = view_fn(a)
    c = a + 1.0
    return b, c

  x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
  a = np.sin(x)
  expected = (_NUMPY_VIEWS[view](a), a + 1)
  for out, want in zip(jax.jit(f, backend="numpy")(x), expected):
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)


def test_tier0_buffer_reuse_still_happens_for_private_temporaries():
  """The reuse is kept where it is safe: a chain of elementwise ops on a private value."""
  from jaxlite._src.backends.numpy.codegen import compile_jaxpr

  def f(x):
    return jnp.tanh(jnp.cos(jnp.sin(x) * 2.0) + 1.0)

  x = np.linspace(-1, 1, 8, dtype=np.float32)
  np.testing.assert_allclose(jax.jit(f, backend="numpy")(x), np.tanh(np.cos(np.sin(x) * 2) + 1),
                             rtol=1e-6)
  assert "out=" in compile_jaxpr(jax.make_jaxpr(f)(x))[1]
  np.testing.assert_array_equal(x, np.linspace(-1, 1, 8, dtype=np.float32))


# -- eager elementwise dispatch: core.EvalTrace's hot path skips the shape rule

_SHAPES = {1: [((2, 3),), ((),)],
           2: [((2, 3), (2, 3)), ((), (2, 3)), ((2, 3), ()), ((), ())]}


def _sample(dtype, shape, shift=0):
  """Signs, zeros and halves; a 0-d value is a NumPy scalar, as eager values are."""
  dtype = np.dtype(dtype)
  integral = dtype == np.bool_ or np.issubdtype(dtype, np.integer)
  base = np.roll([-3, 0, 1, 7, -1, 2] if integral else [-2.5, 0.0, 1.0, 3.0, -1.0, 0.5],
                 shift)
  value = np.resize(np.asarray(base), shape)
  if np.issubdtype(dtype, np.complexfloating):
    value = value + 0.5j
  value = value.astype(dtype)
  return value[()] if not shape else value


def _outcome(fn):
  """What a call gives: its error class, or its dtype, weak type, shape, the type of its
  stored value and the value."""
  try:
    out = fn()
  except Exception as e:   # the class is compared, the message is not
    return type(e)
  return out.dtype, out.weak_type, out.shape, type(out._value), np.asarray(out)


def _elementwise_primitives():
  return [pytest.param(prim, id=name) for name, prim in sorted(ew.elementwise_primitives.items())]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # tier 0's nan/inf, as XLA's
@pytest.mark.parametrize("prim", _elementwise_primitives())
def test_eager_elementwise_hot_path_matches_the_shape_rule_path(prim, monkeypatch):
  """Every accepted dtype (bfloat16, float16, bool and complex among them), strong and
  weak operands, n-d with n-d, 0-d with n-d and 0-d with 0-d: the hot path gives the
  dtype, weak type, shape and bits of the general path, which runs the shape rule; tier 0
  gives the same dtype, weak type and shape."""
  arity = ew.specs[prim].arity
  params = {"y": 3} if prim.name == "integer_pow" else {}
  tier0 = jax.jit(lambda *a: prim.bind(*a, **params), backend="numpy")
  for dtype in sorted(prim.elementwise_dtypes, key=str):
    for shapes, weaks in itertools.product(_SHAPES[arity],
                                           itertools.product([False, True], repeat=arity)):
      args = [Array(_sample(dtype, s, k), w) for k, (s, w) in enumerate(zip(shapes, weaks))]
      hot = _outcome(lambda: prim.bind(*args, **params))
      direct = ew.direct_functions.get(prim)   # lax.sin etc.: the kernel without bind
      direct = hot if direct is None else _outcome(lambda: direct(*args))
      with monkeypatch.context() as m:
        m.setattr(prim, "elementwise_dtypes", None)
        general = _outcome(lambda: prim.bind(*args, **params))
      case = f"{prim.name} {np.dtype(dtype).name} {shapes} weak={weaks}"
      if isinstance(general, type):
        assert hot is general and direct is general, case
        continue
      assert hot[:4] == general[:4] == direct[:4], case
      np.testing.assert_array_equal(hot[4], general[4], err_msg=case)
      np.testing.assert_array_equal(direct[4], general[4], err_msg=case)
      compiled = _outcome(lambda: tier0(*args))
      assert compiled[:3] == general[:3], case


def test_comparisons_of_weak_operands_are_weak_as_in_jax():
  """JAX 0.10.2: a comparison (or is_finite) of weakly typed operands is a weak bool, on
  the hot path, the shape-rule path and under jit alike."""
  x = jax.lax.broadcast_in_dim(jnp.asarray(2.0), (3,), ())
  assert x.weak_type
  for out in (x < 1, jax.lax.lt(x, x), jnp.isfinite(x), jax.jit(lambda x: x < 1)(x),
              jnp.asarray(2.0) == 2.0):
    assert out.dtype == np.bool_ and out.weak_type
  assert not (jnp.ones(3) < 1).weak_type


# -- jnp ufuncs: a Python scalar converts as JAX converts it

@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_float_scalar_rounds_through_float32_as_in_jax(dtype):
  """JAX (x64 off) makes a Python float a weak float32 first, then converts it to the
  array's dtype: two roundings, which a direct conversion does not reproduce."""
  y = 1 + 2.0 ** -11 + 2.0 ** -30 if dtype == "float16" else 1 + 2.0 ** -8 + 2.0 ** -30
  want = np.full(3, np.float32(y)).astype(jnp.dtype(dtype))   # 1.0, as JAX 0.10.2 gives
  x = jnp.zeros(3, dtype)
  for out in (x + y, jnp.add(x, y), y + x, jax.jit(lambda x: x + y)(x)):
    assert out.dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(out).astype(np.float32), want.astype(np.float32))


@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
@pytest.mark.parametrize("dtype", ["float16", "float32", "complex64", "int8", "int32"])
def test_int_scalar_beyond_int32_raises_as_in_jax(dtype):
  """A Python int becomes a weak int32 first: beyond its range JAX raises OverflowError,
  whatever the array's dtype; inside it, a narrower integer dtype wraps."""
  x = jnp.ones(2, dtype)
  for y in (2 ** 31, -2 ** 31 - 1, 2 ** 40):
    for fn in (lambda: x + y, lambda: jnp.multiply(x, y), lambda: y - x):
      with pytest.raises(OverflowError):
        fn()
  wrapped = {"int8": 0, "int32": -2 ** 31}   # 1 + (2**31 - 1) after the wrap
  with np.errstate(over="ignore"):
    want = np.full(2, wrapped[dtype] if dtype in wrapped else 2.0 ** 31).astype(dtype)
  np.testing.assert_array_equal(x + (2 ** 31 - 1), want)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # tier 0's nan/inf, as XLA's
@pytest.mark.parametrize("name", ["sin", "exp", "sqrt", "log1p", "tanh", "arctan"])
def test_inexact_unary_hot_path_matches_the_promoting_path(name):
  """An inexact Array skips the promotion; traced (never hot) and NumPy operands take it."""
  fn = getattr(jnp, name)
  traced = jax.jit(fn, backend="numpy")
  for dtype in ["float16", "bfloat16", "float32", "complex64", "int8", "uint8", "bool"]:
    for weak in (False, True):
      x = Array(np.abs(_sample(dtype, (2, 3))), weak)
      fast, slow = _outcome(lambda: fn(x)), _outcome(lambda: traced(x))
      assert fast[:3] == slow[:3], (name, dtype, weak)
      np.testing.assert_allclose(fast[4].astype(np.complex128), slow[4].astype(np.complex128),
                                 rtol=1e-2 if dtype in ("float16", "bfloat16") else 1e-6)
      if not weak:
        numpy_operand = _outcome(lambda: fn(np.asarray(x)))
        assert numpy_operand[:3] == fast[:3], (name, dtype)


# -- Array operators: the methods call the jnp functions (and their hot paths)

_OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul,
              "/": operator.truediv, "//": operator.floordiv, "%": operator.mod,
              "**": operator.pow, "<": operator.lt, "==": operator.eq, "&": operator.and_,
              "|": operator.or_, "^": operator.xor}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # tier 0's nan/inf, as XLA's
@pytest.mark.parametrize("op", sorted(_OPERATORS))
def test_array_operators_match_the_traced_slow_path(op):
  """``x op other`` and ``other op x`` on Arrays (strong and weak), with Python scalars,
  NumPy scalars and arrays and other Arrays, give what the same expression gives traced
  under jit (where no hot path applies): dtype, weak type, values, or the error class."""
  for dtype in ["bool", "int8", "uint8", "int32", "float16", "float32", "complex64"]:
    for weak in (False, True):
      x = Array(_sample(dtype, (2, 3)), weak)
      others = [3, -2, 2.5, 1 + 1j, True, np.float32(2), np.int8(3), _sample(dtype, (2, 3), 1),
                Array(_sample(dtype, (2, 3), 2)), Array(_sample(dtype, (2, 3), 3), True),
                Array(_sample("float32", (3,), 1), True)]
      for other in others:
        for reflected in (False, True):
          fn = _OPERATORS[op]
          run = (lambda a, b: fn(b, a)) if reflected else fn
          case = (op, dtype, weak, other, reflected)
          fast = _outcome(lambda: run(x, other))
          slow = _outcome(lambda: jax.jit(lambda a: run(a, other), backend="numpy")(x))
          if isinstance(slow, type) or isinstance(fast, type):
            assert fast is slow, case
            continue
          assert fast[:3] == slow[:3], case
          np.testing.assert_allclose(fast[4].astype(np.complex128),
                                     slow[4].astype(np.complex128), rtol=2e-3, err_msg=str(case))


def test_iterating_an_array_matches_indexing_it():
  for weak in (False, True):
    x = Array(_sample("float32", (3, 2)), weak)
    for i, row in enumerate(x):
      assert (row.dtype, row.weak_type, row.shape) == (x[i].dtype, x[i].weak_type, x[i].shape)
      np.testing.assert_array_equal(row, x[i])


# -- jit: the cache-hit path (positional Arrays, a signature seen before) skips flattening
# and the full key; it must answer as the first call did and as eager evaluation does

def _cached_and_first_agree(fn, *args):
  """Three calls (the first traces; positional Arrays then take the cache-hit path) give
  the pytree, dtypes, weak types and values that eager evaluation gives."""
  want = jax.tree_util.tree_leaves(fn(*args))
  for backend in _TIERS:
    jitted = jax.jit(fn, backend=backend)
    for call in range(3):
      got = jitted(*args)
      case = f"{backend}, call {call}"
      assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(fn(*args)), case
      for g, w in zip(jax.tree_util.tree_leaves(got), want):
        assert (g.dtype, g.weak_type, g.shape) == (w.dtype, w.weak_type, w.shape), case
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, err_msg=case)


def test_cached_calls_agree_with_eager_for_weak_strong_and_0d_arguments():
  fn = lambda x, y: {"sum": x + y, "scaled": (x * 2, y < 1), "x": x}
  weak = jax.lax.broadcast_in_dim(jnp.asarray(2.0), (3,), ())
  strong = jnp.full(3, 2.0)
  for x, y in [(weak, weak), (strong, weak), (weak, strong), (strong, strong),
               (Array(np.float32(1.5), True), strong),         # a 0-d NumPy scalar value
               (Array(np.array(1.5, np.float32)), strong),      # a 0-d ndarray value
               (jnp.asarray(3), jnp.arange(3))]:
    _cached_and_first_agree(fn, x, y)


def test_arguments_held_on_the_device_take_the_same_cached_entry():
  if not tiers.xla_available():
    pytest.skip("no XLA plugin installed")
  make = jax.jit(lambda: (jnp.arange(6.0).reshape(2, 3), jnp.asarray(2.0)), backend="xla")
  on_device = make()
  assert on_device[0]._on_device
  f = jax.jit(lambda a, s: a * s + 1, backend="numpy")
  host = (jnp.arange(6.0).reshape(2, 3), jnp.asarray(2.0))
  first = f(*host)
  for args in (on_device, host, on_device):
    out = f(*args)
    assert (out.dtype, out.weak_type) == (first.dtype, first.weak_type)
    np.testing.assert_array_equal(out, first)
  assert f.stats().traces == 1


def test_cached_call_follows_the_dtype_promotion_mode():
  """jax_numpy_dtype_promotion changes what tracing produces, so it is part of the key:
  a signature traced under 'standard' must not serve a call under 'strict' (JAX raises)."""
  from jaxlite._src.base.dtypes import TypePromotionError
  f = jax.jit(lambda a, b: a + b, backend="numpy")
  a, b = jnp.ones(2, jnp.int32), jnp.ones(2, jnp.float32)
  assert f(a, b).dtype == np.float32
  with jax.numpy_dtype_promotion("strict"):
    with pytest.raises(TypePromotionError, match="strict"):
      f(a, b)
    np.testing.assert_array_equal(f(a, a), [2, 2])
  assert f(a, b).dtype == np.float32
  assert f.stats().traces == 2   # the strict trace of (int32, float32) failed, uncached


def test_cached_call_follows_the_x64_flag(x64):
  f = jax.jit(lambda x: x + jnp.arange(3.0), backend="numpy")
  x = jnp.ones(3)
  assert f(x).dtype == np.float32 and f(x).dtype == np.float32
  x64(True)
  assert f(x).dtype == np.float64 and f(x).dtype == np.float64
  x64(False)
  assert f(x).dtype == np.float32


def test_static_arguments_and_pytrees_are_never_served_by_another_signature():
  f = jax.jit(lambda x, n: x * n, static_argnums=1, backend="numpy")
  x = jnp.arange(3.0)
  for n in (2, 3, 2, 3):
    np.testing.assert_array_equal(f(x, n), np.arange(3.0) * n)
  g = jax.jit(lambda t: jax.tree_util.tree_map(lambda v: v + 1, t), backend="numpy")
  for tree in ((x, x), [x, x], {"a": x, "b": x}, (x, (x,)), (x, x)):
    out = g(tree)
    assert jax.tree_util.tree_structure(out) == jax.tree_util.tree_structure(tree)


class _Pair(collections.namedtuple("_Pair", "w b")):
  pass


_Point = collections.namedtuple("_Point", "x y")


def _trees(x, y):
  """Argument trees that differ from one another only in structure or in one leaf's
  signature: no two may share a fast-cache entry."""
  return [
      (x, y), [x, y], (x, (y,)), ((x,), y), {"a": x, "b": y}, {"a": x, "c": y}, (x, None, y), (x, y, None), _Point(x, y), _Pair(x, y),
      (x, y.astype(jnp.int32)), (x, y[:2]), (x, jax.lax.broadcast_in_dim(2.0, (3,), ())),
      {"a": [x, {"z": y}], "b": None}, {"a": [x, {"y": y}], "b": None},
  ]


@pytest.mark.parametrize("backend", ["numpy", "xla"])
def test_nested_argument_trees_hit_only_their_own_entry(backend):
  """The hot path for Arrays nested in containers keys on the tree's structure and the
  leaves' signatures: every call answers as a fresh trace on the slow path does."""
  if backend == "xla" and not tiers.xla_available():
    pytest.skip("no XLA plugin installed")
  fn = lambda t: jax.tree_util.tree_map(lambda v: v * 2 + jnp.ones_like(v), t)
  f = jax.jit(fn, backend=backend)
  x, y = jnp.arange(3.0), jnp.asarray([5.0, 6.0, 7.0])
  trees = _trees(x, y)
  for _ in range(2):   # the second round is served by the fast cache
    for t in trees:
      got = f(t)
      assert (jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(t)), t
      for g, v in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(t)):
        want = np.asarray(v) * 2 + 1
        assert (g.dtype, g.weak_type, g.shape) == (v.dtype, v.weak_type, want.shape), t
        np.testing.assert_array_equal(np.asarray(g), want)
  assert f.stats().traces == len(trees)
  assert len(f._fast_cache) == len(trees)
  assert sum(row["cache_hits"] for row in f.stats().rows) == len(trees)


def test_nested_fast_key_is_the_slow_paths_signature():
  """Equal fast keys exactly when the slow path's cache keys (tree structure and leaf
  signatures) are equal; trees with other leaves or custom nodes have no fast key."""
  from jaxlite._src import arguments
  from jaxlite._src.base import tree
  from jaxlite._src import jit as jit_module

  def keys(t):
    leaves, key = [], []
    ok = arguments.nested_key((t,), leaves, key)
    flat, treedef = tree.tree_flatten(((t,), {}))
    slow = jit_module._cache_key(treedef, tuple(map(arguments.leaf_signature, flat)), ())
    return (tuple(key) if ok else None), slow, leaves, flat

  x, y = jnp.arange(3.0), jnp.asarray([5.0, 6.0, 7.0])
  trees = _trees(x, y) + [{"b": y, "a": x}, (y, x)]
  seen = {}
  for t in trees:
    fast, slow, leaves, flat = keys(t)
    assert fast is not None and [id(a) for a in leaves] == [id(a) for a in flat], t
    assert seen.setdefault(fast, slow) == slow, t
  assert len(set(seen.values())) == len(seen)
  jax.tree_util.register_pytree_node(
      _Pair, lambda p: ((p.w, p.b), None), lambda _, c: _Pair(*c))
  try:
    for t in (_Pair(x, y), (x, np.ones(3, np.float32)), (x, 2.0), [x, "s"]):
      assert keys(t)[0] is None, t
  finally:
    tree._registry.pop(_Pair)


def test_dict_arguments_in_any_insertion_order_share_an_entry():
  f = jax.jit(lambda d: d["a"] - d["b"], backend="numpy")
  a, b = jnp.arange(3.0), jnp.ones(3)
  np.testing.assert_array_equal(f({"a": a, "b": b}), np.arange(3.0) - 1)
  np.testing.assert_array_equal(f({"b": b, "a": a}), np.arange(3.0) - 1)
  assert f.stats().traces == 1


# -- passes: constant folding, CSE and DCE must not change what a program does

def test_dce_and_cse_keep_effects_inside_control_flow():
  """A cond, while or scan whose results are unused still runs its debug callbacks (as in
  JAX), and two identical effectful conds both run: passes look into nested jaxprs."""
  seen = []
  log = lambda tag: lambda v: seen.append(tag)

  def branch(x):
    jax.debug.callback(log("cond"), x)
    return x

  def f(x):
    jax.lax.cond(x > 0, branch, branch, x)    # results unused
    jax.lax.cond(x > 0, branch, branch, x)    # identical to the first
    jax.lax.while_loop(lambda c: c < 2, lambda c: (jax.debug.callback(log("while"), c),
                                                   c + 1)[1], x)
    jax.lax.scan(lambda c, _: (jax.debug.callback(log("scan"), c), (c, None))[1], x, None,
                 length=2)
    return x + 1
  for backend in _TIERS:
    seen.clear()
    np.testing.assert_array_equal(jax.jit(f, backend=backend)(1.0), 2.0)
    jax.effects_barrier()
    assert sorted(seen) == ["cond", "cond", "scan", "scan", "while"], backend


def test_cse_merges_only_equations_that_compute_the_same_value():
  """Literals of one value but different weak types stay apart (the results' weak types
  differ), and so do random draws from different keys; identical equations merge."""
  from jaxlite._src import passes
  fn = lambda x: (jax.lax.add(x, 1.0), jax.lax.add(x, np.float32(1)), jax.lax.add(x, 1.0))
  x = jnp.asarray(2.0)   # weak
  eager = fn(x)
  assert [o.weak_type for o in eager] == [True, False, True]
  for got, want in zip(jax.jit(fn, backend="numpy")(x), eager):
    assert (got.dtype, got.weak_type) == (want.dtype, want.weak_type)
  assert len(passes.optimize(jax.make_jaxpr(fn)(x)).eqns) == 2
  k1, k2 = jax.random.PRNGKey(0), jax.random.PRNGKey(1)
  draws = jax.jit(lambda a, b: (jax.random.uniform(a, (4,)), jax.random.uniform(b, (4,)),
                                jax.random.uniform(a, (4,))), backend="numpy")(k1, k2)
  np.testing.assert_array_equal(draws[0], jax.random.uniform(k1, (4,)))
  np.testing.assert_array_equal(draws[1], jax.random.uniform(k2, (4,)))
  np.testing.assert_array_equal(draws[2], draws[0])
  assert not np.array_equal(draws[0], draws[1])


def test_constant_folding_keeps_dtypes_weak_types_and_values():
  from jaxlite._src import passes
  consts = lambda: (jnp.float16(2) * 3, jnp.arange(3) * 2.5, jnp.asarray(3) + 1,
                    jnp.asarray(7, jnp.int8) * 40, jnp.asarray(2.0) < 3,
                    jnp.sqrt(jnp.asarray(2.0, jnp.bfloat16)), jnp.asarray(1 + 2j) * 1j,
                    jnp.ones((2, 2), jnp.uint8) - 2)
  eager = consts()
  # everything folds but what depends on iota (no operands: never folded)
  assert len(passes.optimize(jax.make_jaxpr(consts)()).eqns) == 3
  for backend in _TIERS:
    for got, want in zip(jax.jit(consts, backend=backend)(), eager):
      assert (got.dtype, got.weak_type, got.shape) == (want.dtype, want.weak_type, want.shape)
      np.testing.assert_allclose(np.asarray(got).astype(np.complex128),
                                 np.asarray(want).astype(np.complex128), rtol=1e-2)


# -- tiers: whichever tier serves a call (the probe, the race, the winner), it answers alike

@pytest.mark.skipif(not tiers.xla_available(), reason="no XLA plugin installed")
def test_auto_tiers_answer_alike_whichever_serves_the_call(monkeypatch):
  monkeypatch.setattr(tiers.Probe, "BUDGET", 0.0)   # every execution earns a compile
  x = jnp.linspace(-2.0, 2.0, 256).reshape(16, 16)
  fn = lambda x, n: {"f": (jnp.tanh(x) @ x.T, n + 1), "i": (x > 0).sum(0),
                     "view": x[::2].T, "x": x}
  n = jnp.asarray(3)   # a weak int32
  reference = jax.jit(fn, backend="numpy")(x, n)
  auto = jax.jit(fn, backend="auto")
  deadline = time.time() + 120
  calls = 0
  while calls < 8 or not tiers.settled(auto):
    # Arrays only: the cache-hit path; a NumPy argument: the general call path
    got = auto(x, n) if calls % 2 else auto(np.asarray(x), n)
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(reference)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(reference)):
      assert (g.dtype, g.weak_type, g.shape) == (w.dtype, w.weak_type, w.shape)
      np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-5)
    calls += 1
    assert time.time() < deadline, "the tiers never settled"
    time.sleep(0.002)
  assert set(auto.stats()[0]["tier_ms"]) == {"numpy", "xla"}


@pytest.mark.skipif(not tiers.xla_available(), reason="no XLA plugin installed")
def test_xla_reads_arrays_that_are_views_of_other_buffers():
  """Tier 0 returns views (transposes, broadcasts, reversed strides, reshapes of an
  input); the XLA tier takes them as arguments, and nothing writes through them."""
  x = jnp.arange(12.0).reshape(3, 4)
  views = jax.jit(lambda x: (x.T, jnp.broadcast_to(x[:, :1], (3, 4)), x[::-1, ::2],
                             x.reshape(-1)), backend="numpy")(x)
  expected = [np.asarray(v).copy() for v in views]
  doubled = jax.jit(lambda *a: [b * 2 for b in a], backend="xla")(*views)
  for got, view, want in zip(doubled, views, expected):
    np.testing.assert_array_equal(got, want * 2)
    np.testing.assert_array_equal(view, want)
  np.testing.assert_array_equal(x, np.arange(12.0).reshape(3, 4))


def test_direct_lax_functions_defer_to_debug_nans_checks():
  """Under jax_debug_nans every eager op goes through the checking bind: the direct
  kernel call of lax.log must not skip it."""
  x = jnp.array([-1.0, 2.0])
  with jax.debug_nans(True):
    with pytest.raises(FloatingPointError, match="encountered in log"):
      jax.lax.log(x)
  assert np.isnan(np.asarray(jax.lax.log(x))[0])


def test_kernels_without_a_dtype_wrapper_keep_every_accepted_dtype():
  """A spec's ``keeps_dtype`` spares its kernel the cast after it: the kernel must then
  give the shape rule's dtype for every dtype the primitive accepts."""
  from jaxlite._src.core import core
  from jaxlite._src.backends.numpy import impls
  jnp.bfloat16   # noqa: B018  (loads ml_dtypes: its dtypes join the accepted sets)
  for prim, spec in ew.specs.items():
    if not spec.keeps_dtype:
      continue
    params = {"y": 3} if prim.name == "integer_pow" else {}
    for dtype in prim.elementwise_dtypes:
      args = [_sample(dtype, (2, 3), 0)] * spec.arity
      with np.errstate(all="ignore"):
        out = impls.impl_rules[prim](*args, **params)
      avals = [core.ShapedArray(a.shape, a.dtype) for a in args]   # (64-bit ones too)
      want = core.abstract_eval(prim, avals, params)[0].dtype
      assert out.dtype == want, (prim.name, dtype)


def test_eager_nan_and_inf_are_silent_as_in_xla():
  """NumPy warns where XLA computes nan/inf silently; the library filters the warnings of
  every module that runs a kernel (the direct lax calls included), in a fresh interpreter
  where only the library's filters apply."""
  import subprocess
  import sys
  code = ("import jaxlite.numpy as jnp, jaxlite.lax as lax\n"
          "x = jnp.array([float('inf'), -1.0, 0.0])\n"
          "jnp.sin(x); jnp.log(x); x - x; x * 0; lax.sqrt(x); x / 0\n")
  proc = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c", code],
                        capture_output=True, text=True, timeout=120)
  assert proc.returncode == 0, proc.stderr


def test_eager_everywhere_flags_follow_the_traces_open_in_every_thread():
  """bind, the jit cache hit and lax's direct kernels skip reading the thread's trace
  while ``core.eager_everywhere`` says no thread has another trace open; they must read
  it (the slow path) while one does, and a thread that is tracing must always see False."""
  import threading
  from jaxlite._src.core import core
  assert core.eager_everywhere and core.direct_everywhere
  seen = []

  def traced(x):
    seen.append((core.eager_everywhere, core.direct_everywhere))
    return x * 2
  jax.jit(traced)(jnp.ones(2))
  jax.grad(lambda x: traced(x).sum())(jnp.ones(2))
  assert seen == [(False, False), (False, False)]
  assert core.eager_everywhere and core.direct_everywhere
  with pytest.raises(ZeroDivisionError):
    jax.jit(lambda x: 1 / 0)(jnp.ones(2))   # an error while tracing closes the trace
  assert core.eager_everywhere and core.direct_everywhere

  # another thread stays inside a trace while this one computes eagerly
  inside, release = threading.Event(), threading.Event()

  def held(x):
    inside.set()
    release.wait(30)
    return x + 1
  worker = threading.Thread(target=lambda: jax.jit(held)(jnp.ones(3)))
  cached = jax.jit(lambda x: jnp.cos(x) * 3)
  x = jnp.arange(3.0)
  cached(x)
  worker.start()
  try:
    assert inside.wait(30)
    assert not core.eager_everywhere and not core.direct_everywhere
    for out, want in [(jnp.sin(x), np.sin(np.arange(3.0))), (lax_add(x, x), 2 * np.arange(3.0)),
                      (cached(x), np.cos(np.arange(3.0)) * 3), (x * x, np.arange(3.0) ** 2)]:
      assert type(out) in (Array,) or isinstance(out, Array)   # values, not tracers
      np.testing.assert_allclose(out, want, rtol=1e-6)
  finally:
    release.set()
    worker.join(30)
  assert core.eager_everywhere and core.direct_everywhere

  # a checking trace (jax_debug_nans) turns the direct kernels off, not bind's shortcut
  with jax.debug_nans(True):
    assert core.eager_everywhere and not core.direct_everywhere
    with pytest.raises(FloatingPointError):
      jnp.log(-jnp.ones(2))
  assert core.direct_everywhere


def lax_add(x, y):
  return jax.lax.add(x, y)


def test_nan_and_inf_stay_silent_under_a_warnings_error_filter(capfd):
  """XLA computes nan and inf without a word, so JAX 0.10.2 gives these values with
  ``warnings.simplefilter("error")`` in force (pytest's ``filterwarnings = error``, as in
  flax's tests): eager ops on the hot and general paths, tier 0 with its blocked regions
  on helper threads, and a jitted function with an effect, whose print runs once."""
  zeros, big = jnp.zeros(3), jnp.zeros(1 << 17)
  effectful = jax.jit(lambda a: (jax.debug.print("once"), jnp.sqrt(a - 1.0) / a)[1],
                      backend="numpy")
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    np.testing.assert_array_equal(zeros / zeros, np.full(3, np.nan))          # hot path
    np.testing.assert_array_equal(jnp.log(-jnp.ones(2)), [np.nan, np.nan])
    assert float(jnp.sum(jnp.array([3e38, 3e38], jnp.float32))) == np.inf    # general path
    assert float(jnp.mean(jnp.zeros((0,)))) != float(jnp.mean(jnp.zeros((0,))))
    assert float(jax.grad(jnp.sqrt)(0.0)) == np.inf
    np.testing.assert_array_equal(jax.vmap(lambda a: a / 0.0)(zeros), np.full(3, np.nan))
    with jax.config.override("jaxlite_tier0_threads", 3):
      blocked = jax.jit(lambda a: jnp.sqrt(a - 1.0) * 2.0 + a, backend="numpy")(big)
    assert np.isnan(np.asarray(blocked)).all()
    np.testing.assert_array_equal(effectful(zeros), np.full(3, np.nan))
  assert capfd.readouterr().out == "once\n"
