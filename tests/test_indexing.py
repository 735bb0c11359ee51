"""NumPy indexing, ``.at[]`` updates, gather/scatter and their jaxprs.

NumPy is the oracle for values; JAX 0.10's jaxprs (recorded in tests/data by
make_indexing_jaxprs.py, a few written out below) are the oracle for lowering.
"""
import itertools
import json
import os
import sys
import warnings

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax
from jaxlite._src.core import core

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "data"))
from indexing_cases import cases as jaxpr_cases  # noqa: E402

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
A = np.array

# Index expressions checked against NumPy, eagerly and with traced index arrays.
INDICES = [
    0, -1, (1, 2), (1, 2, 3), (-1, -2, -3), slice(None), slice(1, None),
    slice(None, None, -1), (Ellipsis, 0), (None,), (Ellipsis, None), (0, None, slice(1, 3)),
    (slice(None), slice(None, None, 2)), (slice(None), slice(None, None, -2), slice(3, 0, -2)),
    (slice(5, 10),), (slice(None), slice(2, 1)), (slice(-100, 100),), (np.int64(1),),
    (np.uint8(1), slice(1, 2)), (),
    A([0, 1]), A([1, -1, 0]), (A([0, 1]), A([2, 0])), (A([0, 1]), slice(None), A([1, 2])),
    (slice(None), A([0, 1]), A([1, 2])), (0, slice(None), A([1, 2])),
    (None, 0, None, A([1, 2])), (A([[0], [1]]), A([0, 2, 1])), (Ellipsis, A([1, 3])),
    (1, A([0, 2]), slice(None, None, -1)), (A([0, 1]), slice(None, None, 2), A([3, 1])),
    (A([0, 1])[:, None], A([0, 1, 2])[None, :], A([3])), (A([[1, 0], [0, 1]], np.uint8),),
    (A([], int),), (slice(None), A([], int)), (A(1),), (A(-1), 1),
    (A([True, False]),), (slice(None), A([True, False, True])),
    (A([[True, False, True], [False, False, True]]),),
    (A([True, False]), slice(1, None), A([1, 2, 3])), (True,), (False,), (Ellipsis, True),
    (slice(None), False, 1),
]


def _as_jnp(idx):
  items = idx if isinstance(idx, tuple) else (idx,)
  return tuple(jnp.asarray(i.astype(np.int32) if i.dtype == np.int64 else i)
               if isinstance(i, np.ndarray) else i for i in items)


def _check(actual, expected):
  actual = np.asarray(actual)
  assert actual.shape == expected.shape and actual.dtype == expected.dtype
  np.testing.assert_array_equal(actual, expected)


# ----------------------------------------------------------------------------- x[idx]

@pytest.mark.parametrize("idx", INDICES, ids=repr)
def test_getitem_matches_numpy(idx):
  x = jnp.asarray(X)
  _check(x[idx], X[idx])
  _check(x[_as_jnp(idx)], X[idx])


@pytest.mark.parametrize("idx", [i for i in INDICES if any(
    isinstance(j, np.ndarray) and j.dtype != bool for j in (i if isinstance(i, tuple) else (i,)))],
    ids=repr)
def test_getitem_with_traced_index_arrays_matches_numpy(idx):
  items = idx if isinstance(idx, tuple) else (idx,)
  traced = lambda i: isinstance(i, np.ndarray) and i.dtype != bool   # masks stay concrete
  arrays = [i.astype(np.int32) if i.dtype == np.int64 else i for i in items if traced(i)]

  def f(x, *arrs):
    it = iter(arrs)
    return x[tuple(next(it) if traced(i) else i for i in items)]
  closed = jax.make_jaxpr(f)(X, *arrays)
  (out,) = core.eval_jaxpr(closed.jaxpr, closed.consts, X, *arrays)
  _check(out, X[idx])


@pytest.mark.parametrize("i", [0, 2, -1, -3, 5, -7])
def test_traced_scalar_index_wraps_negative_and_clamps(i):
  x = np.arange(12, dtype=np.float32).reshape(3, 4)
  for f, ref in [(lambda x, i: x[i], lambda i: x[min(max(i + 3 if i < 0 else i, 0), 2)]),
                 (lambda x, i: x[i, 1:3], lambda i: x[min(max(i + 3 if i < 0 else i, 0), 2), 1:3]),
                 (lambda x, i: x[:, i], lambda i: x[:, min(max(i + 4 if i < 0 else i, 0), 3)])]:
    closed = jax.make_jaxpr(f)(x, np.int32(0))
    assert "dynamic_slice" in str(closed)
    (out,) = core.eval_jaxpr(closed.jaxpr, closed.consts, x, np.int32(i))
    _check(out, ref(i))
    _check(f(jnp.asarray(x), jnp.asarray(i)), ref(i))


def test_out_of_bounds_reads_are_clamped():
  x = jnp.arange(3)
  assert int(x[5]) == 2 and int(x[-5]) == 0
  _check(x[jnp.array([5, -7, -1])], np.array([2, 0, 2], np.int32))


def test_getitem_on_a_tracer_and_iteration():
  closed = jax.make_jaxpr(lambda x: (x[1], list(x)[0]))(np.zeros((2, 3), np.float32))
  assert [str(a) for a in closed.out_avals] == ["float32[3]", "float32[3]"]


def test_getitem_keeps_weak_type():
  x = jnp.asarray(2.0) * jnp.ones(3, jnp.int32)
  assert x.weak_type and x[0].weak_type and x[jnp.array([0, 1])].weak_type


def test_int64_indices_under_x64(x64):
  x64(True)
  x = jnp.arange(10)
  assert x.dtype == np.int64
  _check(x[np.array([1, -1], np.int64)], np.array([1, 9], np.int64))
  closed = jax.make_jaxpr(lambda x, i, j: x[i, j])(np.zeros((3, 4)), np.int64(1), np.int32(2))
  (out,) = core.eval_jaxpr(closed.jaxpr, closed.consts, np.arange(12.).reshape(3, 4),
                           np.int64(-1), np.int32(2))
  assert float(out) == 10.0


# ----------------------------------------------------------------------------- errors

@pytest.mark.parametrize("idx, exc, match", [
    (1.0, TypeError, "Indexer must have integer or boolean type, got indexer with type float64"),
    (jnp.array([1.0]), TypeError, "Indexer must have integer or boolean type"),
    ((jnp.array([0]), [1.5]), TypeError, "Indexer must have integer or boolean type"),
    ("a", TypeError, "JAX does not support string indexing"),
    ((0, 0, 0), IndexError, "Too many indices: array is 2-dimensional, but 3 were indexed"),
    ((Ellipsis, 0, Ellipsis), IndexError, "an index can only have a single ellipsis"),
    ([0, 1], TypeError, r"use `arr\[array\(seq\)\]` instead of `arr\[seq\]`"),
    ([slice(None)], TypeError, r"use `arr\[tuple\(seq\)\]`"),
    (object(), IndexError, "only integers, slices"),
    ({}, IndexError, "only integers, slices"),
    (jnp.ones(3, bool), IndexError, "boolean index did not match shape"),
    (slice(None, None, 0), ValueError, "slice step cannot be zero"),
    (slice(1.0, None), TypeError, "Slice entries must be integers or None"),
    ((jnp.array([0, 1]), jnp.array([0, 1, 2])), ValueError, "Incompatible shapes"),
])
def test_bad_indices_raise_clear_errors(idx, exc, match):
  with pytest.raises(exc, match=match):
    jnp.zeros((2, 3))[idx]


def test_traced_boolean_mask_raises_nonconcrete_error():
  with pytest.raises(jax.errors.NonConcreteBooleanIndexError, match="bool\\[3\\]"):
    jax.make_jaxpr(lambda x: x[x > 0])(np.zeros(3, np.float32))
  with pytest.raises(jax.errors.NonConcreteBooleanIndexError):
    jax.make_jaxpr(lambda x, b: x[b])(np.zeros(3, np.float32), True)


def test_traced_slice_bounds_raise_index_error():
  with pytest.raises(IndexError, match="Slice entries must be static integers.*dynamic_slice"):
    jax.make_jaxpr(lambda x, i: x[i:])(np.zeros(3, np.float32), 1)


def test_item_assignment_raises_type_error_pointing_to_at():
  with pytest.raises(TypeError, match=r"x\.at\[idx\]\.set\(y\)"):
    jnp.zeros(3)[0] = 1.0

  def f(x):
    x[0] = 1.0
    return x
  with pytest.raises(TypeError, match=r"\.at\["):
    jax.make_jaxpr(f)(np.zeros(3, np.float32))


def test_empty_axis_and_empty_index():
  _check(jnp.zeros((3, 0))[1], np.zeros((0,), np.float32))
  _check(jnp.zeros(0)[jnp.array([], int)], np.zeros((0,), np.float32))
  with pytest.raises(IndexError, match="out of bounds for axis 1 with size 0"):
    jnp.zeros((3, 0))[:, 1]


# ----------------------------------------------------------------------------- .at[]

def test_at_set_and_friends_accumulate_repeated_indices():
  x = np.array([1., 2., 3., 4.], np.float32)
  idx = np.array([0, 0, 2, -1], np.int32)
  vals = np.array([5., 6., 7., 8.], np.float32)
  xj, ij, vj = jnp.asarray(x), jnp.asarray(idx), jnp.asarray(vals)
  for method, ufunc in [("add", np.add), ("subtract", np.subtract),
                        ("multiply", np.multiply), ("mul", np.multiply),
                        ("min", np.minimum), ("max", np.maximum)]:
    expected = x.copy()
    ufunc.at(expected, idx, vals)
    _check(getattr(xj.at[ij], method)(vj), expected)
  out = np.asarray(xj.at[ij].set(vj))
  assert out[0] in (5., 6.)          # one of the repeated updates wins
  np.testing.assert_array_equal(out[1:], [2., 7., 8.])
  _check(xj.at[ij].divide(vj), x / np.array([30., 1., 7., 8.], np.float32))
  _check(xj.at[ij].power(2.), x ** np.array([4., 1., 2., 2.], np.float32))


def test_at_apply_applies_once_per_occurrence():
  x = jnp.arange(5.)
  _check(x.at[jnp.array([4, 0, 4])].apply(lambda v: 2 * v + 1),
         np.array([1., 1., 2., 3., 19.], np.float32))
  _check(jnp.arange(3).at[jnp.array([0, 0, 1])].apply(lambda v: v * 2 + 1),
         np.array([3, 3, 2], np.int32))
  expected = np.arange(5, dtype=np.float32)
  expected[1:3] = np.sin(expected[1:3])
  _check(x.at[1:3].apply(jnp.sin), expected)


@pytest.mark.parametrize("mode, expected", [
    (None, [0, 9, 2]), ("drop", [0, 9, 2]), ("fill", [0, 9, 2]),
    ("promise_in_bounds", [0, 9, 2]), ("clip", [9, 9, 9]),
])
def test_at_set_out_of_bounds_in_each_mode(mode, expected):
  # -4 wraps to -1 (still out of bounds), 5 is out of bounds; clip clamps both
  out = jnp.arange(3).at[jnp.array([5, -4, 1])].set(9, mode=mode)
  _check(out, np.array(expected, np.int32))


def test_at_add_out_of_bounds_windows_are_dropped_whole():
  x = jnp.zeros((3, 2))
  out = x.at[jnp.array([0, 3, -1]), :].add(1.0)
  _check(out, np.array([[1, 1], [0, 0], [1, 1]], np.float32))
  _check(jnp.arange(5).at[3:].set(jnp.array([7, 8])), np.array([0, 1, 2, 7, 8], np.int32))


@pytest.mark.parametrize("dtype, fill", [
    (np.float32, np.nan), (np.int32, np.iinfo(np.int32).min), (np.uint8, 255),
    (np.bool_, True)])
def test_at_get_fill_defaults_by_dtype(dtype, fill):
  x = jnp.zeros(3, dtype)
  out = np.asarray(x.at[jnp.array([1, 3, -4])].get(mode="fill"))
  expected = np.array([0, fill, fill]).astype(dtype)
  np.testing.assert_array_equal(out, expected)
  assert out.dtype == dtype


def test_at_get_modes_and_fill_value():
  x = jnp.arange(6.).reshape(2, 3)
  _check(x.at[jnp.array([0, 2, -3])].get(mode="fill", fill_value=7),
         np.array([[0, 1, 2], [7, 7, 7], [7, 7, 7]], np.float32))
  _check(x.at[jnp.array([0, 2, -3]), 5].get(mode="clip"), np.array([2, 5, 2], np.float32))
  _check(x.at[1].get(mode="fill", fill_value=np.array(3.)), np.array([3, 4, 5], np.float32))
  _check(x.at[jnp.array([0, -1])].get(mode="fill", wrap_negative_indices=False),
         np.array([[0, 1, 2], [np.nan] * 3], np.float32))
  with pytest.raises(ValueError, match="must be a scalar"):
    x.at[0].get(mode="fill", fill_value=np.array([3.]))
  with pytest.raises(ValueError, match='Unknown gather mode "foo"'):
    x.at[0].get(mode="foo")
  with pytest.raises(ValueError, match='Unknown gather mode "foo"'):
    x.at[0].set(1., mode="foo")


def test_at_set_with_masks_slices_newaxis_and_reversed_steps():
  x = np.arange(6, dtype=np.float32).reshape(2, 3)
  xj = jnp.asarray(x)
  for idx, v in [(x > 2, 0.), ((slice(None), slice(None, None, -2)), A([[1., 2.]], np.float32)),
                 ((None, 1, None), np.arange(3, dtype=np.float32)), (True, 5.),
                 (Ellipsis, 5.), ((A([1, 0]), slice(1, None)), 9.)]:
    expected = x.copy()
    expected[idx] = v
    jidx = jnp.asarray(idx) if isinstance(idx, np.ndarray) else idx
    _check(xj.at[jidx].set(v), expected)
  _check(xj.at[xj > 2].add(jnp.array([10., 20., 30.])),
         np.array([[0, 1, 2], [13, 24, 35]], np.float32))


def test_at_update_casts_to_the_array_dtype():
  with pytest.warns(FutureWarning, match="cannot safely cast value from dtype=float32 to "
                    "dtype=int32"):
    _check(jnp.arange(3).at[0].set(1.7), np.array([1, 1, 2], np.int32))
  with pytest.warns(FutureWarning):
    _check(jnp.arange(3).at[0].add(1.5), np.array([1, 1, 2], np.int32))
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    _check(jnp.arange(3, dtype=jnp.uint8).at[0].set(300), np.array([44, 1, 2], np.uint8))
    _check(jnp.zeros(3).at[0].set(jnp.array(2)), np.array([2, 0, 0], np.float32))
  x = jnp.asarray(2.0) * jnp.ones(3, jnp.int32)   # weakly typed float32
  out = x.at[0].set(5)
  assert out.weak_type and out.dtype == np.float32
  assert not jnp.ones(3).at[0].set(5).weak_type


def test_at_update_shapes_follow_broadcasting():
  _check(jnp.zeros((2, 3)).at[:].set(jnp.array([1., 2., 3.])),
         np.array([[1, 2, 3], [1, 2, 3]], np.float32))
  with pytest.raises(ValueError, match=r"Incompatible types for broadcasting: input "
                     r"type=float32\[3\] and requested type=float32\[2\]"):
    jnp.zeros(3).at[:2].set(jnp.ones(3))
  with pytest.raises(ValueError, match="Cannot broadcast to shape with fewer dimensions"):
    jnp.zeros((2, 3)).at[0].set(jnp.ones((1, 3)))


def test_at_updates_trace_and_evaluate():
  x = np.arange(5, dtype=np.float32)
  i = np.array([1, 1, -1], np.int32)
  v = np.array([1., 2., 3.], np.float32)
  for method, ufunc in [("add", np.add), ("multiply", np.multiply), ("min", np.minimum),
                        ("max", np.maximum)]:
    closed = jax.make_jaxpr(lambda x, i, v: getattr(x.at[i], method)(v))(x, i, v)
    (out,) = core.eval_jaxpr(closed.jaxpr, closed.consts, x, i, v)
    expected = x.copy()
    ufunc.at(expected, i, v)
    _check(out, expected)
  closed = jax.make_jaxpr(lambda x, i: x.at[i].set(9.))(x, 0)
  (out,) = core.eval_jaxpr(closed.jaxpr, closed.consts, x, -2)
  _check(out, np.array([0, 1, 2, 9, 4], np.float32))


def test_at_repr_and_empty_updates():
  x = jnp.arange(3)
  assert repr(x.at[1]).startswith("_IndexUpdateRef(Array([0, 1, 2]")
  _check(x.at[jnp.array([], int)].set(5), np.arange(3, dtype=np.int32))
  _check(x.at[2:1].add(5), np.arange(3, dtype=np.int32))


def test_deprecated_ops_warn_and_update():
  x = jnp.arange(4.)
  idx = jnp.array([1, 1, 3])
  for name, method in [("index_update", "set"), ("index_add", "add"),
                       ("index_mul", "multiply"), ("index_min", "min"),
                       ("index_max", "max")]:
    with pytest.warns(DeprecationWarning, match=f"jax.ops.{name} is deprecated"):
      out = getattr(jax.ops, name)(x, idx, 2.)
    _check(out, np.asarray(getattr(x.at[idx], method)(2.)))
  with pytest.warns(DeprecationWarning):
    _check(jax.ops.index_add(x, idx, 2.), np.array([0, 5, 2, 5], np.float32))


# ----------------------------------------------------------------------------- jaxprs

STATIC_MIX_JAXPR = """\
{ lambda ; a:f32[3]. let
    b:f32[2] = slice[limit_indices=(3,) start_indices=(1,) strides=None] a
    c:f32[2] = slice[limit_indices=(3,) start_indices=(0,) strides=(2,)] a
    d:f32[3] = rev[dimensions=(0,)] a
    e:f32[3,1] = broadcast_in_dim[broadcast_dimensions=(0,)] a
    f:f32[1] = slice[limit_indices=(2,) start_indices=(1,) strides=None] a
    g:f32[] = squeeze[dimensions=(0,)] f
  in (b, c, d, e, g) }"""

TRACED_SCALAR_JAXPR = """\
{ lambda ; a:f32[3] b:i32[]. let
    c:bool[] = lt b 0:i32[]
    d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b
    e:i32[] = add d 3:i32[]
    f:i32[] = select_n c b e
    g:f32[1] = dynamic_slice[slice_sizes=(1,)] a f
    h:f32[] = squeeze[dimensions=(0,)] g
  in (h,) }"""

ADD_JAXPR = """\
{ lambda ; a:f32[3] b:i32[2]. let
    c:bool[2] = lt b 0:i32[]
    d:i32[2] = add b 3:i32[]
    e:i32[2] = select_n c b d
    f:i32[2,1] = broadcast_in_dim[broadcast_dimensions=(0,)] e
    g:f32[2] = broadcast_in_dim 5.0:f32[]
    h:f32[3] = scatter-add[
      dimension_numbers=ScatterDimensionNumbers(update_window_dims=(), \
inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,), operand_batching_dims=(), \
scatter_indices_batching_dims=())
      indices_are_sorted=False
      mode=GatherScatterMode.FILL_OR_DROP
      unique_indices=False
      update_consts=()
      update_jaxpr={ lambda ; i:f32[] j:f32[]. let k:f32[] = add i j in (k,) }
    ] a f g
  in (h,) }"""


def test_jaxpr_of_static_indexing_matches_jax():
  f = lambda x: (x[1:], x[::2], x[::-1], x[..., None], x[1])
  assert str(jax.make_jaxpr(f)(np.zeros(3, np.float32))) == STATIC_MIX_JAXPR


def test_jaxpr_of_traced_scalar_index_matches_jax():
  assert str(jax.make_jaxpr(lambda x, i: x[i])(np.zeros(3, np.float32), 1)) == \
      TRACED_SCALAR_JAXPR


def test_jaxpr_of_at_add_matches_jax():
  f = lambda x, i: x.at[i].add(5.)
  got = str(jax.make_jaxpr(f)(np.zeros(3, np.float32), np.array([0, 2], np.int32)))
  assert got == ADD_JAXPR


with open(os.path.join(os.path.dirname(__file__), "data", "indexing_jaxprs.json")) as _f:
  JAX_JAXPRS = json.load(_f)["jaxprs"]


@pytest.mark.parametrize("name", sorted(JAX_JAXPRS))
def test_jaxpr_matches_jax(name):
  f, args = jaxpr_cases(jnp, lax)[name]
  with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)
    assert str(jax.make_jaxpr(f)(*args)) == JAX_JAXPRS[name]


@pytest.mark.parametrize("name", sorted(JAX_JAXPRS))
def test_jaxpr_evaluates_like_eager_code(name):
  f, args = jaxpr_cases(jnp, lax)[name]
  with warnings.catch_warnings():
    warnings.simplefilter("ignore", FutureWarning)
    closed = jax.make_jaxpr(f)(*args)
    outs = core.eval_jaxpr(closed.jaxpr, closed.consts, *args)
    expected = f(*[jnp.asarray(a) if isinstance(a, (np.ndarray, np.generic)) else a
                   for a in args])
  expected = expected if isinstance(expected, tuple) else (expected,)
  for out, want in zip(outs, expected):
    _check(out, np.asarray(want))


# ----------------------------------------------------------------------------- lax

def _ref_gather(operand, indices, dn, slice_sizes, mode, fill_value):
  """XLA's gather, one window element at a time."""
  batch_shape = indices.shape[:-1]
  dropped = set(dn.collapsed_slice_dims) | set(dn.operand_batching_dims)
  out_rank = len(batch_shape) + len(dn.offset_dims)
  out = None
  for b in np.ndindex(*batch_shape):
    start = [0] * operand.ndim
    for k, d in enumerate(dn.start_index_map):
      start[d] = int(indices[b + (k,)])
    for od, bd in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
      start[od] = b[bd]
    oob = any(not 0 <= start[d] <= operand.shape[d] - slice_sizes[d]
              for d in dn.start_index_map)
    start = [min(max(s, 0), n - w) for s, n, w in zip(start, operand.shape, slice_sizes)]
    for w in np.ndindex(*slice_sizes):
      value = operand[tuple(s + o for s, o in zip(start, w))]
      if oob and mode == "fill":
        value = fill_value
      window = iter(o for d, o in enumerate(w) if d not in dropped)
      batch = iter(b)
      pos = tuple(next(window) if i in dn.offset_dims else next(batch)
                  for i in range(out_rank))
      if out is None:
        kept = [s for d, s in enumerate(slice_sizes) if d not in dropped]
        kept_it, batch_it = iter(kept), iter(batch_shape)
        out = np.zeros([next(kept_it) if i in dn.offset_dims else next(batch_it)
                        for i in range(out_rank)], operand.dtype)
      out[pos] = value
  return out


def _ref_scatter(operand, indices, updates, dn, mode, combine):
  """XLA's scatter, one update element at a time."""
  out = operand.copy()
  scatter_dims = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
  dropped = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
  window_dims = [d for d in range(operand.ndim) if d not in dropped]
  window = [1] * operand.ndim
  for d, u in zip(window_dims, dn.update_window_dims):
    window[d] = updates.shape[u]
  for b in np.ndindex(*indices.shape[:-1]):
    start = [0] * operand.ndim
    for k, d in enumerate(dn.scatter_dims_to_operand_dims):
      start[d] = int(indices[b + (k,)])
    for od, bd in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims):
      start[od] = b[bd]
    if mode == "clip":
      start = [min(max(s, 0), n - w) for s, n, w in zip(start, operand.shape, window)]
    elif any(not 0 <= s <= n - w for s, n, w in zip(start, operand.shape, window)):
      continue
    for w in np.ndindex(*[window[d] for d in window_dims]):
      u_pos = [0] * updates.ndim
      for d, bi in zip(scatter_dims, b):
        u_pos[d] = bi
      for u, wi in zip(dn.update_window_dims, w):
        u_pos[u] = wi
      full = dict(zip(window_dims, w))
      pos = tuple(s + full.get(d, 0) for d, s in enumerate(start))
      out[pos] = combine(out[pos], updates[tuple(u_pos)])
  return out


GATHER_CONFIGS = [
    # operand shape, indices shape (last axis = index vector), dnums, slice_sizes
    ((5,), (4, 1), lax.GatherDimensionNumbers((), (0,), (0,)), (1,)),
    ((5,), (4, 1), lax.GatherDimensionNumbers((1,), (), (0,)), (2,)),
    ((4, 5), (3, 2), lax.GatherDimensionNumbers((1,), (0,), (0, 1)), (1, 3)),
    ((4, 5), (3, 1), lax.GatherDimensionNumbers((0,), (1,), (1,)), (4, 1)),
    ((4, 5, 6), (2, 3, 2), lax.GatherDimensionNumbers((1, 2, 4), (), (2, 0)), (2, 5, 3)),
    ((3, 5), (3, 2, 1), lax.GatherDimensionNumbers((), (1,), (1,), (0,), (0,)), (1, 1)),
    ((3, 4, 5), (4, 3, 1), lax.GatherDimensionNumbers((2,), (1,), (1,), (0,), (1,)),
     (1, 1, 2)),
]


@pytest.mark.parametrize("config", GATHER_CONFIGS, ids=lambda c: str(c[:2]))
@pytest.mark.parametrize("mode", ["clip", "fill", "promise_in_bounds"])
def test_gather_matches_reference(config, mode):
  shape, ishape, dn, sizes = config
  rng = np.random.default_rng(0)
  operand = rng.standard_normal(shape).astype(np.float32)
  bound = max(shape) + 2
  indices = rng.integers(-2, bound, ishape).astype(np.int32)
  for bd in dn.start_indices_batching_dims:  # batching axes: indices fixed by position
    assert ishape[bd] == shape[dn.operand_batching_dims[
        dn.start_indices_batching_dims.index(bd)]]
  out = lax.gather(jnp.asarray(operand), jnp.asarray(indices), dn, sizes, mode=mode,
                   fill_value=-1.0 if mode == "fill" else None)
  expected = _ref_gather(operand, indices, dn, sizes, mode, -1.0)
  _check(out, expected)
  closed = jax.make_jaxpr(lambda o, i: lax.gather(o, i, dn, sizes, mode=mode))(operand,
                                                                                 indices)
  assert closed.out_avals[0].shape == expected.shape


SCATTER_CONFIGS = [
    # operand shape, indices shape, updates shape, dnums
    ((5,), (4, 1), (4,), lax.ScatterDimensionNumbers((), (0,), (0,))),
    ((6,), (3, 1), (3, 2), lax.ScatterDimensionNumbers((1,), (), (0,))),
    ((4, 5), (3, 2), (3, 2), lax.ScatterDimensionNumbers((1,), (0,), (0, 1))),
    ((4, 5), (2, 1), (4, 2), lax.ScatterDimensionNumbers((0,), (1,), (1,))),
    ((3, 5), (3, 2, 1), (3, 2), lax.ScatterDimensionNumbers((), (1,), (1,), (0,), (0,))),
]


@pytest.mark.parametrize("config", SCATTER_CONFIGS, ids=lambda c: str(c[:3]))
@pytest.mark.parametrize("mode", ["clip", "fill", "promise_in_bounds"])
@pytest.mark.parametrize("op, combine", [
    (lax.scatter, lambda a, b: b), (lax.scatter_add, np.add), (lax.scatter_sub, np.subtract),
    (lax.scatter_mul, np.multiply), (lax.scatter_min, np.minimum),
    (lax.scatter_max, np.maximum)], ids=lambda f: getattr(f, "__name__", ""))
def test_scatter_matches_reference(config, mode, op, combine):
  shape, ishape, ushape, dn = config
  rng = np.random.default_rng(1)
  operand = rng.integers(-5, 5, shape).astype(np.int32)
  # distinct in-range rows plus out-of-range ones, so set's winner is well defined
  indices = rng.permutation(max(shape) + 2)[:int(np.prod(ishape))].reshape(ishape) - 1
  indices = indices.astype(np.int32)
  updates = rng.integers(-5, 5, ushape).astype(np.int32)
  out = op(jnp.asarray(operand), jnp.asarray(indices), jnp.asarray(updates), dn, mode=mode)
  if op is not lax.scatter or mode != "clip":  # clip can make set's windows collide
    _check(out, _ref_scatter(operand, indices, updates, dn, mode, combine))


def test_scatter_add_accumulates_repeated_indices():
  dn = lax.ScatterDimensionNumbers((), (0,), (0,))
  out = lax.scatter_add(jnp.zeros(3), jnp.array([[1], [1], [1], [0]]), jnp.ones(4), dn)
  _check(out, np.array([1, 3, 0], np.float32))


@pytest.mark.parametrize("make, match", [
    (lambda: lax.gather(jnp.zeros(3), jnp.array([[0.5]]),
                        lax.GatherDimensionNumbers((), (0,), (0,)), (1,)),
     "indices must have an integer type"),
    (lambda: lax.gather(jnp.zeros((2, 3)), jnp.array([[0]]),
                        lax.GatherDimensionNumbers((1,), (0,), (0,)), (2, 3)),
     "can only collapse slice dims with bound 1"),
    (lambda: lax.gather(jnp.zeros((2, 3)), jnp.array([[0]]),
                        lax.GatherDimensionNumbers((1,), (0,), (0,)), (1,)),
     "must have one slice size for every input dimension"),
    (lambda: lax.gather(jnp.zeros((2, 3)), jnp.array([[0, 0]]),
                        lax.GatherDimensionNumbers((1,), (0,), (0,)), (1, 3)),
     "1 elements in start_index_map"),
    (lambda: lax.gather(jnp.zeros((2, 3)), jnp.array([[0]]),
                        lax.GatherDimensionNumbers((1,), (0,), (0,)), (1, 4)),
     "Slice size at index 1 in gather op is out of range"),
    (lambda: lax.scatter(jnp.zeros((2, 3)), jnp.array([[0]]), jnp.ones((1, 3), jnp.int32),
                         lax.ScatterDimensionNumbers((1,), (0,), (0,))),
     "requires arguments to have the same dtypes"),
    (lambda: lax.scatter(jnp.zeros((2, 3)), jnp.array([[0]]), jnp.ones(3),
                         lax.ScatterDimensionNumbers((1,), (0,), (0,))),
     "Updates tensor must be of rank 2"),
    (lambda: lax.scatter(jnp.zeros((2, 3)), jnp.array([[0]]), jnp.ones((1, 4)),
                         lax.ScatterDimensionNumbers((1,), (0,), (0,))),
     "Bounds of the window dimensions of updates must not exceed"),
    (lambda: lax.scatter(jnp.zeros((2, 3)), jnp.array([[0]]), jnp.ones((2, 3)),
                         lax.ScatterDimensionNumbers((1,), (0,), (0,))),
     "Bounds of the scatter dimensions of updates must be the same"),
])
def test_gather_scatter_shape_rules_raise(make, match):
  with pytest.raises((TypeError, ValueError), match=match):
    make()


def test_gather_scatter_mode_and_dimension_numbers_print_as_jax():
  mode = lax.GatherScatterMode
  assert str(mode.from_any("fill")) == "GatherScatterMode.FILL_OR_DROP"
  assert mode.from_any("drop") is mode.from_any(None) is mode.FILL_OR_DROP
  assert mode.from_any("clip") is mode.CLIP
  assert mode.from_any("promise_in_bounds") is mode.PROMISE_IN_BOUNDS
  with pytest.raises(ValueError, match='Unknown gather mode "wrap"'):
    mode.from_any("wrap")
  assert str(lax.GatherDimensionNumbers((0,), (1,), (1,))) == (
      "GatherDimensionNumbers(offset_dims=(0,), collapsed_slice_dims=(1,), "
      "start_index_map=(1,), operand_batching_dims=(), start_indices_batching_dims=())")


def test_dot_general_dimension_numbers_still_print_as_before():
  closed = jax.make_jaxpr(lambda a, b: lax.dot(a, b))(np.zeros((2, 3), np.float32),
                                                      np.zeros((3, 4), np.float32))
  assert "dimension_numbers=(([1], [0]), ([], []))" in str(closed)


def test_in_dim_helpers():
  x = np.arange(12, dtype=np.float32).reshape(3, 4)
  xj = jnp.asarray(x)
  _check(lax.index_in_dim(xj, -1, 1), x[:, -1:])
  _check(lax.index_in_dim(xj, 1, 0, keepdims=False), x[1])
  with pytest.raises(IndexError, match="index 5 is out of bounds for axis 1 with size 4"):
    lax.index_in_dim(xj, 5, 1)
  _check(lax.dynamic_index_in_dim(xj, jnp.array(-1), 1, keepdims=False), x[:, -1])
  _check(lax.dynamic_slice_in_dim(xj, -2, 2, 1), x[:, 2:])
  _check(lax.dynamic_slice_in_dim(xj, 3, 2, 1), x[:, 2:])   # clamped
  expected = x.copy()
  expected[:, 3:] = 1
  _check(lax.dynamic_update_slice_in_dim(xj, jnp.ones((3, 1)), -1, 1), expected)
  expected = x.copy()
  expected[-1] = 7
  _check(lax.dynamic_update_index_in_dim(xj, jnp.full(4, 7.), -1, 0), expected)


# ----------------------------------------------------------------------------- jnp

@pytest.mark.parametrize("mode", [None, "fill", "clip", "wrap"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_take_matches_numpy(mode, axis):
  x = np.arange(12, dtype=np.float32).reshape(3, 4)
  idx = np.array([[0, 2], [-1, 7]], np.int32)
  if mode in ("clip", "wrap"):
    expected = np.take(x, idx, axis=axis, mode=mode)
  else:  # out-of-bounds indices read NaN; negative ones wrap once
    flat, ax = (x.reshape(-1), 0) if axis is None else (x, axis % x.ndim)
    inside = (idx >= -flat.shape[ax]) & (idx < flat.shape[ax])
    expected = np.take(flat, np.where(inside, idx, 0), axis=ax)
    mask = inside.reshape((1,) * ax + idx.shape + (1,) * (flat.ndim - ax - 1))
    expected = np.where(mask, expected, np.nan).astype(np.float32)
  _check(jnp.take(jnp.asarray(x), jnp.asarray(idx), axis=axis, mode=mode), expected)


def test_take_errors_and_edge_cases():
  x = jnp.arange(6.).reshape(2, 3)
  with pytest.raises(NotImplementedError, match="'raise' mode"):
    jnp.take(x, jnp.array([0]), mode="raise")
  with pytest.raises(ValueError, match="Invalid mode 'foo' for np.take"):
    jnp.take(x, jnp.array([0]), mode="foo")
  with pytest.raises(IndexError, match="non-empty jnp.take"):
    jnp.take(jnp.zeros((0, 3)), jnp.array([0]), axis=0)
  _check(jnp.take(x, jnp.array([], int), axis=1), np.zeros((2, 0), np.float32))
  _check(jnp.take(x, jnp.array([5]), fill_value=-1.), np.array([5.], np.float32))
  _check(jnp.take(x, jnp.array([6]), fill_value=-1.), np.array([-1.], np.float32))


@pytest.mark.parametrize("shape, ishape, axis", [
    ((3, 4), (3, 2), 1), ((3, 4), (1, 4), 0), ((2, 3, 4), (1, 3, 2), 2),
    ((2, 3, 4), (2, 1, 4), 1), ((5,), (3,), None), ((2, 1, 4), (2, 3, 4), 2)])
def test_take_along_axis_matches_numpy(shape, ishape, axis):
  rng = np.random.default_rng(2)
  x = rng.standard_normal(shape).astype(np.float32)
  n = x.size if axis is None else shape[axis]
  idx = rng.integers(-n, n, ishape).astype(np.int32)
  expected = np.take_along_axis(x, idx, axis=axis)
  _check(jnp.take_along_axis(jnp.asarray(x), jnp.asarray(idx), axis=axis), expected)


def test_take_along_axis_out_of_bounds_and_errors():
  x = jnp.arange(6.).reshape(2, 3)
  _check(jnp.take_along_axis(x, jnp.array([[2, 0, 5]]), axis=1),
         np.array([[2, 0, np.nan], [5, 3, np.nan]], np.float32))
  _check(jnp.take_along_axis(x, jnp.array([[7, -4, 1]]), axis=1, mode="clip"),
         np.array([[2, 0, 1], [5, 3, 4]], np.float32))
  with pytest.raises(TypeError, match="must be of integer type"):
    jnp.take_along_axis(x, jnp.array([[1.]]), axis=1)
  with pytest.raises(ValueError, match="same number of dimensions"):
    jnp.take_along_axis(x, jnp.array([1]), axis=1)


def test_indexing_inside_make_jaxpr_with_all_index_kinds_runs_like_numpy():
  x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
  cases = [
      lambda x, i: x[i, ::2, -1],
      lambda x, i: x[1:, i, None],
      lambda x, i: x[..., i][::-1],
      lambda x, i: x.at[i, 1].get(mode="fill", fill_value=0.),
      lambda x, i: x.at[:, i].multiply(2.),
  ]
  for f, i in itertools.product(cases, [np.int32(1), np.array([2, 0, 2], np.int32)]):
    closed = jax.make_jaxpr(f)(x, i)
    (out,) = core.eval_jaxpr(closed.jaxpr, closed.consts, x, i)
    _check(out, np.asarray(f(jnp.asarray(x), jnp.asarray(i))))


# ----------------------------------------------------------------------------- autodiff

_I = np.array([0, 0, 2], np.int32)
GRAD_CASES = {
    "getitem_array": lambda x: x[:, _I],
    "getitem_reversed": lambda x: x[_I[:2], ::-1],
    "get_fill": lambda x: x.at[jnp.array([0, 5]), 1].get(mode="fill", fill_value=0.),
    "get_clip": lambda x: x.at[jnp.array([0, 5]), 1].get(mode="clip"),
    "set_repeated": lambda x: x.at[0, _I].set(x[1]),
    "set_unique": lambda x: x.at[_I[1:]].set(x[::-1] * 2, unique_indices=True),
    "add": lambda x: x.at[1, _I].add(x[0]),
    "subtract": lambda x: x.at[1, _I].subtract(x[0]),
    "min": lambda x: x.at[0, _I].min(x[1] * 0.5),
    "max": lambda x: x.at[0, _I].max(x[1]),
    "multiply_unique": lambda x: x.at[:, jnp.array([0, 2])].multiply(x[:, :2],
                                                                      unique_indices=True),
    "take_along_axis": lambda x: jnp.take_along_axis(x, jnp.array([[2, 0], [1, 1]]), axis=1),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradients_match_finite_differences(name):
  from jaxlite._src.test_util import check_grads
  x = np.array([[1.1, 2.3, 2.8], [4.05, 5.2, 6.4]], np.float32)
  check_grads(lambda x: GRAD_CASES[name](jnp.asarray(x)), (x,), order=2, eps=1e-3)


def test_gradient_of_repeated_set_and_max_goes_to_the_winners():
  x = jnp.arange(1., 7.).reshape(2, 3)
  grad_y = jax.grad(lambda y: (x.at[1, jnp.array([0, 0, 2])].set(y) ** 2).sum())
  out = np.asarray(grad_y(jnp.array([1., 2., 3.])))
  assert out[2] == 6. and sorted(out[:2]) == [0., 4.]   # one of the repeated updates won
  # a tie between the operand and an update splits the gradient, as JAX does
  g = jax.grad(lambda x: (x.at[0, jnp.array([0, 0, 2])].max(3.) ** 2).sum())(x)
  _check(g, np.array([[0, 4, 3], [8, 10, 12]], np.float32))


def test_multiply_gradient_needs_unique_indices():
  x = jnp.arange(1., 7.).reshape(2, 3)
  with pytest.raises(NotImplementedError, match="unique_indices=True"):
    jax.grad(lambda x: x.at[:, jnp.array([0, 2])].multiply(x[:, :2]).sum())(x)
