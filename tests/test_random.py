"""jaxlite.random against draws recorded from JAX 0.10.2 (tests/data/random_reference.npz,
made by tests/data/make_random_reference.py from the calls in tests/data/random_cases.py),
eagerly and under jit on both tiers, plus moments, shapes, dtypes and errors."""
import inspect
import os
import sys

import ml_dtypes
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import random
from jaxlite._src import tiers

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "data"))
import random_cases  # noqa: E402

REF = np.load(os.path.join(os.path.dirname(__file__), "data", "random_reference.npz"))
K, K42 = random.PRNGKey(0), random.PRNGKey(42)
P = jnp.array([0.1, 0.2, 0.3, 0.4])
CASES = random_cases.cases(random, jnp)
X64_CASES = random_cases.x64_cases(random, jnp)

# Draws that are not exact agree with JAX's to rounding: a few ulps of the result, more
# where a sampler amplifies its inputs' rounding (pow in gamma for small a, ratios in beta).
# Integers computed from floats (categorical, poisson, binomial, ...) must be equal: they
# could differ only where a draw lies within rounding of a boundary, and none here does.
RTOL = {np.dtype(np.float16): 2e-3, np.dtype(ml_dtypes.bfloat16): 1.6e-2,
        np.dtype(np.float32): 2e-5, np.dtype(np.complex64): 2e-5,
        np.dtype(np.float64): 1e-12}
MODES = ["eager", "numpy", "xla"]


def _expected(prefix, name):
  want = REF[f"{prefix}/{name}"]
  dtype = str(REF[f"dtype:{prefix}/{name}"])
  return want.view(ml_dtypes.bfloat16) if dtype == "bfloat16" else want


def _draw(draw, mode):
  if mode == "eager":
    return draw(K42)
  if mode == "xla" and not tiers.xla_available():
    pytest.skip("no XLA backend")
  return jax.jit(draw, backend=mode)(K42)


def _eigenspace_norms(x, name):
  """The length of ``x - mean`` in each eigenspace of the covariance: multivariate_normal's
  'eigh' and 'svd' factors are eigenvectors in whatever orthonormal basis of each eigenspace
  LAPACK picks (a sign per vector, for a simple eigenvalue), which these lengths ignore."""
  _, n, batch, _ = random_cases.MVN_CASES[name]
  mean, cov = random_cases.mvn_inputs(n, batch)
  w, v = np.linalg.eigh(cov.astype(np.float64))
  coords = (x.astype(np.float64) - mean) @ v
  clusters = np.split(coords, np.flatnonzero(np.diff(w) > 1e-4 * w[-1]) + 1, axis=-1)
  return np.stack([np.linalg.norm(c, axis=-1) for c in clusters], -1).astype(x.dtype)


def _assert_matches_jax(got, want, exact, name=None):
  got = np.asarray(got)
  assert got.dtype == want.dtype and got.shape == want.shape
  if random_cases.MVN_CASES.get(name, ("cholesky",))[0] != "cholesky":
    got, want = _eigenspace_norms(got, name), _eigenspace_norms(want, name)
  if exact or got.dtype not in RTOL:
    np.testing.assert_array_equal(got, want)
  else:   # in a wide type: assert_allclose cannot subtract bfloat16
    wide, tol = (np.complex128 if got.dtype.kind == "c" else np.float64), RTOL[got.dtype]
    np.testing.assert_allclose(got.astype(wide), want.astype(wide), rtol=tol, atol=tol)


def test_reference_covers_every_case():
  assert {f"x32/{n}" for n in CASES} | {f"x64/{n}" for n in X64_CASES} == {
      k for k in REF.files if k.startswith(("x32/", "x64/"))}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_draws_match_jax(name, mode):
  """Eagerly, under jit on tier 0 and on XLA: bit for bit where JAX's result is the same on
  every machine (``exact`` in random_cases.py), else to rounding."""
  draw, exact = CASES[name]
  _assert_matches_jax(_draw(draw, mode), _expected("x32", name), exact, name)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(X64_CASES))
def test_draws_match_jax_with_x64(name, mode):
  draw, exact = X64_CASES[name]
  with jax.config.override("jax_enable_x64", True):
    _assert_matches_jax(_draw(draw, mode), _expected("x64", name), exact)


# jaxlite writes out the key handling that JAX hides in random_bits / random_split /
# random_fold_in / random_wrap (threefry2x32 on the key's words, 8 and 16 bits truncated
# from 32), with these primitives
_KEY_HANDLING = {"threefry2x32", "iota", "xor", "slice", "squeeze", "concatenate", "reshape",
                 "broadcast_in_dim", "convert_element_type"}
# the samplers: the cases that do not only make a key (JAX's random_seed)
_SAMPLERS = [n for n in sorted(CASES) if "random_seed" not in str(REF[f"jaxpr/{n}"])]
# where jaxlite's jnp functions are not yet written as JAX's
_NOT_JAXS = {"choice(k,4,(6,),p=p)": "jnp.searchsorted compares all pairs, JAX's scans"}


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(reason=_NOT_JAXS[n], strict=True))
    if n in _NOT_JAXS else n for n in _SAMPLERS])
def test_jaxprs_apply_only_primitives_jax_applies(name):
  """No jaxlite-only primitive (such as a fused multiply-add) in a sampler's jaxpr."""
  text = str(jax.make_jaxpr(CASES[name][0])(K42))
  jax_prims = set(str(REF[f"jaxpr/{name}"]).split())
  assert random_cases.primitive_names(text) - _KEY_HANDLING <= jax_prims


def test_vmap_over_keys_matches_a_loop():
  keys = random.split(K42, 4)
  batched = jax.vmap(lambda k: random.normal(k, (3,)))(keys)
  for i in range(4):
    np.testing.assert_array_equal(np.asarray(batched[i]),
                                  np.asarray(random.normal(keys[i], (3,))))


def test_threefry_primitive_is_elementwise_over_counts():
  from jaxlite._src.backends.numpy.rng_impls import threefry2x32 as threefry2x32_numpy
  k1, k2 = np.uint32(13), np.uint32(7)
  x1, x2 = np.arange(6, dtype=np.uint32), np.arange(6, 12, dtype=np.uint32)
  full = threefry2x32_numpy(k1, k2, x1, x2)
  for i in range(6):
    one = threefry2x32_numpy(k1, k2, x1[i:i + 1], x2[i:i + 1])
    assert full[0][i] == one[0][0] and full[1][i] == one[1][0]


@pytest.mark.parametrize("sampler, mean, var", [
    (lambda k, n: random.uniform(k, (n,)), 0.5, 1 / 12),
    (lambda k, n: random.normal(k, (n,)), 0., 1.),
    (lambda k, n: random.exponential(k, (n,)), 1., 1.),
    (lambda k, n: random.laplace(k, (n,)), 0., 2.),
    (lambda k, n: random.logistic(k, (n,)), 0., np.pi ** 2 / 3),
    (lambda k, n: random.gumbel(k, (n,)), np.euler_gamma, np.pi ** 2 / 6),
    (lambda k, n: random.gamma(k, 3., (n,)), 3., 3.),
    (lambda k, n: random.gamma(k, 0.5, (n,)), 0.5, 0.5),
    (lambda k, n: random.beta(k, 2., 3., (n,)), 0.4, 0.04),
    (lambda k, n: random.poisson(k, 4., (n,)).astype(jnp.float32), 4., 4.),
    (lambda k, n: random.poisson(k, 25., (n,)).astype(jnp.float32), 25., 25.),
    (lambda k, n: random.bernoulli(k, 0.3, (n,)).astype(jnp.float32), 0.3, 0.21),
    (lambda k, n: random.randint(k, (n,), 0, 10).astype(jnp.float32), 4.5, 8.25),
], ids=["uniform", "normal", "exponential", "laplace", "logistic", "gumbel", "gamma3",
        "gamma_half", "beta", "poisson4", "poisson25", "bernoulli", "randint"])
def test_sample_moments(sampler, mean, var):
  n = 4000
  x = np.asarray(sampler(random.PRNGKey(1), n), np.float64)
  assert abs(x.mean() - mean) < 5 * np.sqrt(var / n)
  assert abs(x.var() - var) < 0.15 * var


def test_truncated_normal_stays_in_bounds():
  x = np.asarray(random.truncated_normal(K, -0.5, 1.5, (2000,)))
  assert x.min() > -0.5 and x.max() < 1.5


def test_dirichlet_rows_sum_to_one():
  x = random.dirichlet(K, jnp.array([1., 2., 3.]), (5,))
  assert x.shape == (5, 3)
  np.testing.assert_allclose(np.asarray(x).sum(-1), 1., rtol=1e-5)


def test_categorical_frequencies_follow_the_logits():
  x = np.asarray(random.categorical(K, jnp.log(P), shape=(4000,)))
  np.testing.assert_allclose(np.bincount(x, minlength=4) / 4000, P, atol=0.03)


def test_choice_without_replacement_has_no_repeats():
  x = np.asarray(random.choice(K, 20, (20,), replace=False))
  assert sorted(x.tolist()) == list(range(20))
  y = np.asarray(random.choice(K, jnp.arange(10) * 10, (5,), replace=False, p=jnp.ones(10)))
  assert len(set(y.tolist())) == 5


def test_permutation_of_a_large_range_uses_several_rounds_and_is_a_permutation():
  x = np.asarray(random.permutation(K, 2000))
  assert sorted(x.tolist()) == list(range(2000)) and (x != np.arange(2000)).any()


def test_multivariate_normal_promotes_like_jax_and_traces():
  # mean and cov promote together (JAX's promote_dtypes_inexact); dtype= sets only the draws
  x = random.multivariate_normal(K, jnp.zeros(3, jnp.float16), jnp.eye(3), (2,))
  assert x.dtype == jnp.float32 and x.shape == (2, 3)
  assert random.multivariate_normal(K, jnp.zeros(2, int), jnp.eye(2, dtype=int)).dtype == \
      jnp.float32
  assert random.multivariate_normal(K, jnp.zeros(1), jnp.eye(1), (3,), jnp.float16).dtype == \
      jnp.float32
  with pytest.raises(ValueError, match="must be a float dtype"):
    random.multivariate_normal(K, jnp.zeros(2), jnp.eye(2), dtype=jnp.int32)
  # traced, the same draws up to rounding
  mean, cov = random_cases.mvn_inputs(9, (3,))
  for shape in [(2, 3), (3,)]:
    eager = random.multivariate_normal(K, mean, cov, shape)
    traced = jax.jit(lambda k: random.multivariate_normal(k, mean, cov, shape))(K)
    np.testing.assert_allclose(traced, eager, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [1, 9])
def test_multivariate_normal_differentiates_and_batches_on_every_path(n):
  # d(sum of draws)/d(mean) counts the draws; vmap over keys gives each key's draws
  mean, cov = random_cases.mvn_inputs(n)
  grad = jax.grad(lambda m: random.multivariate_normal(K42, m, cov, (10,)).sum())(mean)
  np.testing.assert_array_equal(grad, np.full(n, 10.0))
  keys = random.split(K42, 3)
  batched = jax.vmap(lambda k: random.multivariate_normal(k, mean, cov, (10,)))(keys)
  for k, draws in zip(keys, batched):
    np.testing.assert_allclose(draws, random.multivariate_normal(k, mean, cov, (10,)),
                               rtol=1e-5, atol=1e-5)


def test_multivariate_normal_covariance():
  cov = jnp.array([[2., 0.5], [0.5, 1.]])
  x = np.asarray(random.multivariate_normal(K, jnp.zeros(2), cov, (4000,)))
  np.testing.assert_allclose(np.cov(x.T), cov, atol=0.15)


@pytest.mark.parametrize("dtype", [jnp.float16, jnp.bfloat16, jnp.float32])
def test_float_samplers_keep_the_requested_dtype(dtype):
  for f in (random.uniform, random.normal, random.exponential, random.gumbel):
    assert f(K, (3,), dtype).dtype == dtype


def test_default_dtypes_follow_x64():
  assert random.uniform(K).dtype == jnp.float32
  assert random.randint(K, (), 0, 3).dtype == jnp.int32
  with jax.config.override("jax_enable_x64", True):
    assert random.uniform(K).dtype == np.float64
    assert random.bits(K).dtype == np.uint64


def test_bad_key_shapes_raise_like_jax():
  with pytest.raises(TypeError, match="expected key_data.shape to end with"):
    random.uniform(jnp.zeros(3, jnp.uint32))
  with pytest.raises(TypeError, match="expected key_data.dtype = uint32"):
    random.uniform(jnp.zeros(2, jnp.int32))
  with pytest.raises(ValueError, match="accepts a single key"):
    random.normal(random.split(K, 3))
  with pytest.raises(TypeError, match="scalar seed"):
    random.PRNGKey(jnp.arange(2))


def test_bad_arguments_raise():
  with pytest.raises(ValueError, match="must be a float dtype"):
    random.uniform(K, (2,), jnp.int32)
  with pytest.raises(ValueError, match="larger sample"):
    random.choice(K, 3, (5,), replace=False)
  with pytest.raises(ValueError, match="broadcast-compatible"):
    random.uniform(K, (3,), minval=jnp.zeros((2, 3)))


# ----------------------------------------------------------------------------- gamma as a primitive

def test_gamma_is_one_primitive_in_jaxprs():
  text = str(jax.make_jaxpr(lambda k, a: random.gamma(k, a, (3,)))(K, 2.))
  assert "random_gamma[log_space=False]" in text and "while" not in text


def test_gamma_gradient_in_a_matches_jax_and_the_mean():
  # values from JAX 0.10.2: jax.grad(lambda a: jax.random.gamma(PRNGKey(0), a, (3,)).sum())
  for a, want in [(2.0, 2.7869484), (0.3, 4.746428)]:
    got = jax.grad(lambda a: random.gamma(K, a, (3,)).sum())(a)
    np.testing.assert_allclose(float(got), want, rtol=1e-5)
  # E[x] = a for Gamma(a, 1), so the mean derivative of the samples is 1
  for a in (0.5, 3.0):
    g = jax.grad(lambda a: random.gamma(K42, a, (20000,)).mean())(a)
    assert abs(float(g) - 1) < 0.05, g
  g = jax.grad(lambda a: random.loggamma(K42, a, (20000,)).mean())(4.0)
  np.testing.assert_allclose(float(g), 0.2840, rtol=0.05)   # digamma'(4) = 0.2838


def test_gamma_vmaps_over_keys_and_alphas():
  keys = random.split(K42, 3)
  alphas = jnp.array([0.5, 2.0, 7.0])
  got = jax.vmap(lambda k, a: random.gamma(k, a, (4,)))(keys, alphas)
  want = jnp.stack([random.gamma(k, a, (4,)) for k, a in zip(keys, alphas)])
  np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


# ----------------------------------------------------------------------------- out_sharding

# The samplers that take JAX 0.10.2's keyword-only out_sharding, listed with
# [n for n in dir(jax.random) if 'out_sharding' in inspect.signature(...).parameters]
OUT_SHARDING_SAMPLERS = [
    "ball", "bernoulli", "beta", "bits", "categorical", "cauchy", "chisquare", "dirichlet",
    "exponential", "f", "gamma", "generalized_normal", "geometric", "gumbel", "laplace",
    "loggamma", "logistic", "lognormal", "maxwell", "multivariate_normal", "normal",
    "orthogonal", "pareto", "permutation", "poisson", "rademacher", "randint", "rayleigh",
    "t", "triangular", "truncated_normal", "uniform", "wald"]


@pytest.mark.parametrize("name", OUT_SHARDING_SAMPLERS)
def test_samplers_take_a_keyword_only_out_sharding(name):
  parameter = inspect.signature(getattr(random, name)).parameters["out_sharding"]
  assert parameter.kind is inspect.Parameter.KEYWORD_ONLY and parameter.default is None


def test_out_sharding_lays_out_the_draw_and_changes_no_value():
  want = np.asarray(random.normal(K, (3,)))
  type_sharding = jax.typeof(jnp.ones(3)).sharding   # over the empty mesh (flax passes it)
  mesh = jax.sharding.NamedSharding(jax.make_mesh((1,), ("x",)), jax.sharding.PartitionSpec())
  for sharding in (None, type_sharding, mesh):
    got = random.normal(K, (3,), out_sharding=sharding)
    np.testing.assert_array_equal(np.asarray(got), want)
    jitted = jax.jit(lambda k, s=sharding: random.normal(k, (3,), out_sharding=s))(K)
    np.testing.assert_allclose(np.asarray(jitted), want, rtol=1e-6)


# JAX 0.10.2's messages, recorded from jax.random.X(key, ..., out_sharding=...).
JAX_NOT_NAMED = ("`out_sharding` argument of {name} only supports instances of `NamedSharding` "
                 "or `PartitionSpec`. Got {value} of type: ")


@pytest.mark.parametrize("name", ["normal", "uniform", "bits", "chisquare", "permutation"])
def test_out_sharding_other_than_a_named_sharding_raises_jax_errors(name):
  args = {"permutation": (jnp.arange(4),), "chisquare": (3.0,)}.get(name, ())
  device = jax.sharding.SingleDeviceSharding(jax.devices()[0])
  for bad in (device, "x", 3):
    with pytest.raises(TypeError) as info:
      getattr(random, name)(K, *args, out_sharding=bad)
    assert str(info.value).startswith(JAX_NOT_NAMED.format(name=name, value=bad))
  with pytest.raises(ValueError, match="Using PartitionSpec when you are not under a mesh "
                                       "context is not allowed"):
    jax.jit(lambda k: getattr(random, name)(k, *args, out_sharding=jax.sharding.PartitionSpec()))(K)


def test_threefry_partitionable_off_gives_jaxs_original_bits():
  # Recorded from JAX 0.10.2 with jax_threefry_partitionable=False (distrax's von Mises
  # tests set it): the original scheme hashes the counters 0..n-1 split in two halves
  key = jax.random.PRNGKey(7)
  f = jax.jit(lambda k: jax.random.bits(k, (3,)))
  np.testing.assert_array_equal(f(key), [2895194379, 4185947648, 1300703658])
  with jax.threefry_partitionable(False):
    np.testing.assert_array_equal(f(key), [966301609, 1830345032, 1948237315])  # retraced
    np.testing.assert_array_equal(
        jax.random.bits(key, (5,)), [276534068, 861967409, 2793701230, 1641862660, 2900896126])
    np.testing.assert_array_equal(jax.random.bits(key, (3,), jnp.uint16), [10431, 2976, 22207])
    np.testing.assert_array_equal(jax.random.bits(key, (2, 3), jnp.uint8),
                                  [[191, 40, 160], [11, 191, 86]])
    np.testing.assert_array_equal(jax.random.split(key, 3), [[276534068, 861967409],
                                                             [1905761346, 1641862660],
                                                             [2900896126, 1402713516]])
    keys = jax.random.split(key, 2)
    np.testing.assert_array_equal(jax.vmap(lambda k: jax.random.bits(k, (3,)))(keys),
                                  [[3874823782, 1020509012, 2076423625],
                                   [333915798, 749275546, 3576188743]])
    np.testing.assert_array_equal(
        jax.vmap(lambda k: jax.random.split(k, 3))(keys)[1],
        [[2668261764, 1159766884], [3545930868, 3484544584], [1752612373, 830124005]])
    typed = jax.random.key(3)
    np.testing.assert_array_equal(jax.random.key_data(jax.random.split(typed, 2)),
                                  [[1024511538, 47757680], [2603795180, 1437962712]])
    np.testing.assert_array_equal(jax.random.randint(typed, (4,), 0, 100), [38, 0, 53, 1])
    np.testing.assert_allclose(jax.random.uniform(key, (3,)),
                               [0.22498453, 0.42616034, 0.45360935], rtol=1e-6)
    np.testing.assert_array_equal(jax.random.permutation(key, 6), [5, 1, 4, 0, 3, 2])
  np.testing.assert_array_equal(f(key), [2895194379, 4185947648, 1300703658])


def test_multivariate_normal_broadcasts_its_mean_under_rank_promotion_raise():
  # JAX 0.10.2 adds the mean under numpy_rank_promotion('allow'): these values and the
  # (0, 3) shape are JAX's with jax_numpy_rank_promotion='raise' (diffrax's
  # VirtualBrownianTree of SpaceTimeTimeLevyArea)
  k = jax.random.key(0)
  with jax.numpy_rank_promotion("raise"):
    x = jax.random.multivariate_normal(k, jnp.arange(3.0), jnp.eye(3), shape=(2,))
    empty = jax.random.multivariate_normal(k, jnp.arange(3.0), jnp.eye(3), shape=(0,))
  np.testing.assert_allclose(x, [[1.622642159461975, 3.0252647399902344, 1.5664055347442627],
                                 [-0.07861734926700592, 1.176090955734253, 1.0279107093811035]],
                             rtol=1e-6)
  assert empty.shape == (0, 3)
