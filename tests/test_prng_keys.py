"""Typed PRNG keys (``jax.random.key``): dtype ``key<fry>``, their data, printing, errors,
the array operations JAX allows on them, and the same draws as raw keys of the same data,
eagerly and under jit on both tiers, vmap, scan and fori_loop.

The expected values and messages were recorded from JAX 0.10.2 with
``/work/jaxref/bin/python -c "<the expression>"`` (``import jax, jax.numpy as jnp;
from jax import random``); comments give the expression where it is not the test's own.
"""
import pickle

import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import lax, random
from jaxlite._src import tiers

MODES = ["eager", "numpy", "xla"]
K0 = random.key(0)
KEYS = random.split(K0, 3)
SPLIT3 = [[1797259609, 2579123966], [928981903, 3453687069], [4146024105, 2718843009]]


def _run(f, mode, *args):
  if mode == "eager":
    return f(*args)
  if mode == "xla" and not tiers.xla_available():
    pytest.skip("no XLA backend")
  return jax.jit(f, backend=mode)(*args)


def _data(keys):
  return np.asarray(random.key_data(keys)).tolist()


# -- the dtype and the data

def test_key_is_a_scalar_array_of_dtype_key_fry():
  assert K0.shape == () and K0.ndim == 0 and K0.size == 1
  assert str(K0.dtype) == K0.dtype.name == "key<fry>" and K0.dtype.itemsize == 8
  assert jnp.issubdtype(K0.dtype, jax.dtypes.prng_key)
  assert jnp.issubdtype(K0.dtype, jax.dtypes.extended)
  assert not jnp.issubdtype(K0.dtype, jnp.integer)
  assert K0.dtype == random.key_dtype() and K0.dtype != jnp.uint32
  assert isinstance(K0, jax.Array)
  assert str(jax.typeof(random.split(K0, 3))) == "key<fry>[3]"


def test_prngkey_stays_raw_uint32():
  raw = random.PRNGKey(0)
  assert raw.dtype == jnp.uint32 and raw.shape == (2,)
  assert random.split(raw).dtype == jnp.uint32


def test_key_data_wrap_key_data_and_key_impl():
  assert _data(K0) == [0, 0]
  assert _data(random.key(2 ** 40 + 5)) == [0, 5]   # x64 off: the seed is cast to int32
  wrapped = random.wrap_key_data(np.array(SPLIT3, np.uint32))
  assert wrapped.shape == (3,) and _data(wrapped) == SPLIT3
  assert random.key_impl(K0) == random.key_impl(random.PRNGKey(0)) == "threefry2x32"
  assert random.key_data(random.PRNGKey(3)).tolist() == [0, 3]


def test_64_bit_seed_with_x64(x64):
  x64()
  assert _data(random.key(2 ** 40 + 5)) == [256, 5]


# -- printing

def test_repr_and_str_show_the_data_as_jax_does():
  # repr(random.split(random.key(0), 3))
  want = ("Array((3,), dtype=key<fry>) overlaying:\n"
          "[[1797259609 2579123966]\n [ 928981903 3453687069]\n [4146024105 2718843009]]")
  assert repr(random.split(K0, 3)) == str(random.split(K0, 3)) == want
  assert repr(K0) == "Array((), dtype=key<fry>) overlaying:\n[0 0]"


JAXPRS = {
    "split": (lambda k: random.split(k), K0,
              "{ lambda ; a:key<fry>[]. let\n    b:key<fry>[2] = random_split[shape=(2,)] a\n"
              "  in (b,) }"),
    "seed": (lambda s: random.key(s), 0,
             "{ lambda ; a:i32[]. let b:key<fry>[] = random_seed[impl=fry] a in (b,) }"),
    "unwrap": (random.key_data, K0,
               "{ lambda ; a:key<fry>[]. let b:u32[2] = random_unwrap a in (b,) }"),
    "wrap": (random.wrap_key_data, random.PRNGKey(0),
             "{ lambda ; a:u32[2]. let b:key<fry>[] = random_wrap[impl=fry] a in (b,) }"),
    "fold_in": (lambda k: random.fold_in(k, 3), K0,
                "{ lambda ; a:key<fry>[]. let b:key<fry>[] = random_fold_in a 3:u32[] in (b,) }"),
    "bits": (lambda k: random.bits(k, (3,)), K0,
             "{ lambda ; a:key<fry>[]. let\n    b:u32[3] = random_bits[bit_width=32 shape=(3,)] a"
             "\n  in (b,) }"),
    "bits8": (lambda k: random.bits(k, (2,), jnp.uint8), K0,
              "{ lambda ; a:key<fry>[]. let\n    b:u8[2] = random_bits[bit_width=8 shape=(2,)] a"
              "\n  in (b,) }"),
    "clone": (random.clone, K0,
              "{ lambda ; a:key<fry>[]. let b:key<fry>[] = random_clone a in (b,) }"),
    "eq": (lambda k: k == k, K0, "{ lambda ; a:key<fry>[]. let b:bool[] = eq a a in (b,) }"),
    # jax.make_jaxpr(lambda k: ks[1])(k) with ks = random.split(random.key(0), 3)
    "closed_over": (lambda k: KEYS[1], K0,
                    "{ lambda a:key<fry>[3]; b:key<fry>[]. let\n"
                    "    c:key<fry>[1] = slice[limit_indices=(2,) start_indices=(1,) "
                    "strides=None] a\n    d:key<fry>[] = squeeze[dimensions=(0,)] c\n"
                    "  in (d,) }"),
}


@pytest.mark.parametrize("name", sorted(JAXPRS))
def test_jaxprs_print_key_avals_and_key_primitives_as_jax(name):
  f, arg, want = JAXPRS[name]
  assert str(jax.make_jaxpr(f)(arg)) == want


def test_raw_key_jaxprs_keep_the_threefry_operations():
  text = str(jax.make_jaxpr(lambda k: random.split(k))(random.PRNGKey(0)))
  assert "threefry2x32" in text and "key<fry>" not in text


# -- draws: typed keys draw what raw keys of the same data draw (and JAX's)

SAMPLERS = {
    "split": lambda k: random.key_data(random.split(k, 3)) if _typed(k) else random.split(k, 3),
    "fold_in": lambda k: random.key_data(random.fold_in(k, 5)) if _typed(k)
    else random.fold_in(k, 5),
    "bits": lambda k: random.bits(k, (3,)),
    "bits8": lambda k: random.bits(k, (3,), jnp.uint8),
    "uniform": lambda k: random.uniform(k, (4,)),
    "normal": lambda k: random.normal(k, (2, 3)),
    "randint": lambda k: random.randint(k, (5,), 0, 10),
    "choice": lambda k: random.choice(k, 7, (3,), replace=False),
    "categorical": lambda k: random.categorical(k, jnp.zeros(4), shape=(3,)),
    "gamma": lambda k: random.gamma(k, 2., (2,)),
    "poisson": lambda k: random.poisson(k, 3., (3,)),
    "bernoulli": lambda k: random.bernoulli(k, 0.3, (4,)),
    "binomial": lambda k: random.binomial(k, 5, 0.3, (3,)),
}


def _typed(k):
  return jnp.issubdtype(k.dtype, jax.dtypes.prng_key)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_typed_and_raw_keys_of_the_same_data_draw_the_same(name, mode):
  f = SAMPLERS[name]
  typed = _run(f, mode, random.key(42))
  raw = _run(f, mode, random.PRNGKey(42))
  np.testing.assert_array_equal(np.asarray(typed), np.asarray(raw))


@pytest.mark.parametrize("mode", MODES)
def test_draws_match_jax(mode):
  assert _data(_run(lambda k: random.split(k, 3), mode, K0)) == SPLIT3
  # random.key_data(random.fold_in(random.key(7), 3))
  assert _data(_run(lambda k: random.fold_in(k, 3), mode, random.key(7))) == [
      276534068, 1641862660]
  assert _run(lambda k: random.bits(k, (4,)), mode, random.key(1)).tolist() == [
      1883912375, 2292451390, 1915204986, 1882898417]
  assert _run(lambda k: random.randint(k, (5,), 0, 100), mode, random.key(2)).tolist() == [
      99, 92, 13, 3, 17]
  assert _run(lambda k: random.permutation(k, 8), mode, random.key(3)).tolist() == [
      0, 5, 6, 7, 4, 2, 1, 3]
  assert _data(_run(lambda: random.key(3), mode)) == [0, 3]


def test_split_of_a_typed_key_is_typed_and_of_a_raw_key_raw():
  keys = random.split(K0, (2, 3))
  assert _typed(keys) and keys.shape == (2, 3)
  assert random.split(random.PRNGKey(0), (2, 3)).shape == (2, 3, 2)


# -- transformations and control flow

@pytest.mark.parametrize("mode", MODES)
def test_vmap_over_typed_keys(mode):
  keys = random.split(K0, 3)
  # jax.vmap(lambda k: random.bits(k))(random.split(random.key(0), 3))
  bits = _run(jax.vmap(lambda k: random.bits(k)), mode, keys)
  assert bits.tolist() == [3617712097, 31327077, 3875991361]
  normal = _run(jax.vmap(lambda k: random.normal(k, ())), mode, keys)
  raw = _run(jax.vmap(lambda k: random.normal(k, ())), mode, random.key_data(keys))
  np.testing.assert_array_equal(np.asarray(normal), np.asarray(raw))
  # random.key_data(jax.vmap(random.key)(jnp.arange(3)))
  assert _data(_run(jax.vmap(random.key), mode, jnp.arange(3))) == [[0, 0], [0, 1], [0, 2]]
  assert _run(jax.vmap(lambda k: random.split(k)), mode, keys).shape == (3, 2)
  folded = _run(jax.vmap(random.fold_in), mode, keys, jnp.arange(3))
  assert _data(folded) == [_data(random.fold_in(k, i)) for i, k in enumerate(keys)]


@pytest.mark.parametrize("mode", MODES)
def test_keys_as_scan_and_fori_loop_carries(mode):
  def body(c, _):
    return random.split(c)[0], random.bits(c)
  carry, bits = _run(lambda k: lax.scan(body, k, None, length=3), mode, K0)
  # jax.lax.scan(body, random.key(0), None, length=3)
  assert _data(carry) == [683029726, 1624662641]
  assert bits.tolist() == [4070199207, 3617712097, 1214273199]
  out = _run(lambda k: lax.fori_loop(0, 3, lambda i, c: random.fold_in(c, i), k), mode, K0)
  assert _data(out) == [276444683, 838309524]


def test_keys_are_pytree_leaves_and_jit_arguments_in_containers():
  tree = {"a": K0, "b": [random.split(K0)]}
  assert len(jax.tree.leaves(tree)) == 2 and jax.tree.leaves(tree)[0] is K0
  out = jax.jit(lambda t: {"k": random.split(t["a"])[1], "x": random.uniform(t["b"][0][0])})(
      tree)
  assert _data(out["k"]) == SPLIT3[1]
  assert float(out["x"]) == float(random.uniform(random.split(K0)[0]))


def test_grad_of_a_function_of_a_key_argument():
  g = jax.grad(lambda x, k: x * random.normal(k))(1.0, K0)
  assert float(g) == float(random.normal(K0))


def test_eval_shape_and_shape_dtype_struct():
  out = jax.eval_shape(lambda k: random.split(k), K0)
  assert out.shape == (2,) and out.dtype == K0.dtype
  assert repr(out) == "ShapeDtypeStruct(shape=(2,), dtype=key<fry>)"
  assert jax.eval_shape(random.key, 0).dtype == K0.dtype


def test_jit_caches_typed_key_signatures():
  f = jax.jit(lambda k: random.bits(k))
  assert int(f(K0)) == int(random.bits(K0)) and int(f(random.key(1))) == int(
      random.bits(random.key(1)))
  assert f._cache_size() == 1


# -- array operations JAX allows on keys

OPS = {
    "index": (lambda ks: ks[1], [SPLIT3[1]]),
    "slice": (lambda ks: ks[1:], SPLIT3[1:]),
    "reversed": (lambda ks: ks[::-1], SPLIT3[::-1]),
    "mask": (lambda ks: ks[jnp.array([True, False, True])], [SPLIT3[0], SPLIT3[2]]),
    "traced_index": (lambda ks: ks[jnp.int32(2)], [SPLIT3[2]]),
    "dynamic_slice": (lambda ks: lax.dynamic_slice(ks, (1,), (2,)), SPLIT3[1:]),
    "reshape": (lambda ks: ks.reshape(3, 1), [[s] for s in SPLIT3]),
    "expand": (lambda ks: ks[None], [SPLIT3]),
    "transpose": (lambda ks: ks.reshape(1, 3).T, [[s] for s in SPLIT3]),
    "stack": (lambda ks: jnp.stack([ks[0], ks[2]]), [SPLIT3[0], SPLIT3[2]]),
    "concatenate": (lambda ks: jnp.concatenate([ks, ks[:1]]), SPLIT3 + SPLIT3[:1]),
    "where": (lambda ks: jnp.where(jnp.array([True, False, True]), ks, ks[0]),
              [SPLIT3[0], SPLIT3[0], SPLIT3[2]]),
    "broadcast": (lambda ks: jnp.broadcast_to(ks[0], (2,)), [SPLIT3[0]] * 2),
    # jnp.take(ks, jnp.array([1, 5])): out of bounds fills every word with 2**32 - 1
    "take": (lambda ks: jnp.take(ks, jnp.array([1, 5])), [SPLIT3[1], [4294967295] * 2]),
    "at_set": (lambda ks: ks.at[0].set(random.key(1)), [[0, 1]] + SPLIT3[1:]),
    "flip": (lambda ks: jnp.flip(ks), SPLIT3[::-1]),
    "zeros_like": (lambda ks: jnp.zeros_like(ks), [[0, 0]] * 3),
    "zeros": (lambda ks: jnp.zeros((2,), ks.dtype), [[0, 0]] * 2),
    "cond": (lambda ks: lax.cond(True, lambda: ks[2], lambda: ks[0]), [SPLIT3[2]]),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(OPS))
def test_array_operations_on_keys(name, mode):
  f, want = OPS[name]
  out = _run(f, mode, KEYS)
  assert _typed(out)
  data = np.asarray(random.key_data(out)).reshape(-1, 2).tolist()
  assert data == np.asarray(want).reshape(-1, 2).tolist()


@pytest.mark.parametrize("mode", MODES)
def test_keys_compare_equal(mode):
  assert _run(lambda ks: ks == ks[::-1], mode, KEYS).tolist() == [False, True, False]
  assert _run(lambda ks: ks != ks[0], mode, KEYS).tolist() == [False, True, True]


def test_len_iteration_and_pickling():
  assert len(KEYS) == 3
  assert [_data(k) for k in KEYS] == SPLIT3
  assert _data(pickle.loads(pickle.dumps(KEYS))) == SPLIT3
  assert jax.device_get(K0) is K0


# -- errors, with JAX's classes and messages

ERRORS = {
    "add": (lambda: K0 + 1, TypeError, "add does not accept dtypes key<fry>, int32."),
    "mul": (lambda: K0 * K0, TypeError, "mul does not accept dtype key<fry>"),
    "sin": (lambda: jnp.sin(K0), TypeError, "Cannot interpret 'key<fry>' as a data type"),
    "numpy": (lambda: np.asarray(K0), TypeError,
              "JAX array with PRNGKey dtype cannot be converted to a NumPy array. Use "
              "jax.random.key_data(arr) if you wish to extract the underlying integer array."),
    "convert": (lambda: jnp.asarray(KEYS, dtype=jnp.float32), ValueError,
                "Cannot convert_element_type from key<fry> to float32"),
    "promote": (lambda: jnp.result_type(K0, 1), ValueError,
                "dtype=key<fry> is not a valid dtype for JAX type promotion."),
    "len": (lambda: len(K0), TypeError, "len() of unsized object"),
    "iter": (lambda: iter(K0), TypeError, "iteration over a 0-d key array"),
    "astype": (lambda: K0.astype(jnp.float32), NotImplementedError,
               "Cannot call abstract method astype"),
    "batched_split": (lambda: random.split(KEYS), ValueError,
                      "split accepts a single key, but was given a key array of shape (3,) "
                      "!= (). Use jax.vmap for batching."),
    "batched_normal": (lambda: random.normal(KEYS), ValueError,
                       "normal accepts a single key, but was given a key array of shape "
                       "(3,) != (). Use jax.vmap for batching."),
    "key_of_key": (lambda: random.key(K0), TypeError,
                   "key accepts a scalar seed, but was given a PRNG key."),
    "wrap_shape": (lambda: random.wrap_key_data(jnp.zeros((3,), jnp.uint32)), TypeError,
                   "JAX encountered invalid PRNG key data: expected key_data.shape to end "
                   "with (2,); got shape=(3,)"),
    "wrap_dtype": (lambda: random.wrap_key_data(jnp.zeros((2,), jnp.int32)), TypeError,
                   "JAX encountered invalid PRNG key data: expected key_data.dtype = uint32; "
                   "got dtype=int32"),
    "hash": (lambda: hash(K0), TypeError, "unhashable type: 'PRNGKeyArray'"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_are_jax_s(name):
  f, error, message = ERRORS[name]
  with pytest.raises(error) as info:
    f()
  assert str(info.value).startswith(message)


def test_arithmetic_on_keys_fails_under_jit_too():
  with pytest.raises(TypeError, match="add does not accept dtypes key<fry>, int32."):
    jax.jit(lambda k: k + 1)(K0)


def test_jit_calls_with_typed_keys_take_the_fast_path():
  f = jax.jit(lambda k, d: random.bits(k, (2,)) + random.bits(d["k"], (2,)))
  raw = jax.jit(lambda k, d: random.bits(k, (2,)) + random.bits(d["k"], (2,)))
  want = raw(random.PRNGKey(0), {"k": random.PRNGKey(1)})
  for _ in range(2):
    got = f(K0, {"k": random.key(1)})
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
  assert len(f._fast_cache) == 1 and f._cache_size() == 1
  # a raw key of the same data is another signature
  f(random.PRNGKey(0), {"k": random.key(1)})
  assert f._cache_size() == 2


def test_isclose_of_typed_keys_is_equality():
  """JAX 0.10.2: keys have no distance, so ``isclose`` is ``==`` (nnx's rngs tests call
  ``jnp.allclose`` on keys): True, False, False, True below."""
  k0, k1 = jax.random.key(0), jax.random.key(1)
  assert bool(jnp.isclose(k0, k0)) and not bool(jnp.isclose(k0, k1))
  assert not bool(jnp.allclose(jnp.stack([k0, k1]), k0))
  assert bool(jnp.isclose(k0, k0, equal_nan=True))


def test_a_typed_key_and_an_array_copy_as_jaxs_do():
  # JAX 0.10.2: each copy of key(0) is a PRNGKeyArray key<fry>[] over [0, 0]; an array's
  # copy (copy.copy, copy.deepcopy, __copy__, __deepcopy__) is a new weak float32 1.5
  import copy
  k = jax.random.key(0)
  for c in (k.copy(), jnp.array(k), jnp.copy(k), copy.deepcopy(k), copy.copy(k)):
    assert type(c).__name__ == "PRNGKeyArray" and str(c.dtype) == "key<fry>"
    assert c.shape == ()
    np.testing.assert_array_equal(np.asarray(jax.random.key_data(c)), [0, 0])
  x = jnp.asarray(1.5)
  for c in (copy.copy(x), copy.deepcopy(x), x.__deepcopy__({}), x.__copy__()):
    assert c is not x and c.dtype == np.float32 and c.weak_type and float(c) == 1.5
  assert float(jax.jit(lambda x: copy.deepcopy(x) * 2)(jnp.float32(1))) == 2.0


def test_copying_a_key_array_copies_its_data():
  """``k.copy()`` and ``jnp.array(k, copy=True)`` give a new key array over a copy of the
  data (JAX 0.10.2: key<fry>[] with data [0 0], not the same object); flax's
  ``Rngs.fork`` tests copy keys so."""
  k = jax.random.key(0)
  copies = [k.copy(), jnp.array(k, copy=True), jnp.array(jax.random.split(k, 3), copy=True)]
  assert [str(jax.typeof(c)) for c in copies] == ["key<fry>[]", "key<fry>[]", "key<fry>[3]"]
  assert all(c is not k for c in copies) and jnp.asarray(k) is k
  np.testing.assert_array_equal(jax.random.key_data(copies[0]), [0, 0])
  assert copies[0]._physical is not k._physical
