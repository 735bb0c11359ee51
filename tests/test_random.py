"""jaxlite.random against draws recorded from JAX 0.10 (tests/data/random_reference.json,
made by tests/data/make_random_reference.py), plus moments, shapes, dtypes and errors."""
import json
import os
import sys

import numpy as np
import pytest
import scipy

import jaxlite as jax
import jaxlite.numpy as jnp
from jaxlite import random

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "data"))
import mvn_cases  # noqa: E402

with open(os.path.join(os.path.dirname(__file__), "data", "random_reference.json")) as f:
  REF = json.load(f)

K, K42 = random.PRNGKey(0), random.PRNGKey(42)
P = jnp.array([0.1, 0.2, 0.3, 0.4])
# The same calls as the recording script, keyed by its case names.
CASES = {
    "PRNGKey(0)": lambda: random.PRNGKey(0),
    "PRNGKey(42)": lambda: K42,
    "PRNGKey(-1)": lambda: random.PRNGKey(-1),
    "PRNGKey(2**40+3)": lambda: random.PRNGKey(2**40 + 3),
    "key_data(key(7))": lambda: random.key_data(random.key(7)),
    "split(k42)": lambda: random.split(K42),
    "split(k42,5)": lambda: random.split(K42, 5),
    "split(k42,(2,3))": lambda: random.split(K42, (2, 3)),
    "fold_in(k42,3)": lambda: random.fold_in(K42, 3),
    "fold_in(k42,2**31+5)": lambda: random.fold_in(K42, 2**31 + 5),
    "bits(k42,(5,))": lambda: random.bits(K42, (5,)),
    "bits(k42,(3,),uint8)": lambda: random.bits(K42, (3,), jnp.uint8),
    "bits(k42,(3,),uint16)": lambda: random.bits(K42, (3,), jnp.uint16),
    "uniform(k42,(7,))": lambda: random.uniform(K42, (7,)),
    "uniform(k,(2,3),-2,5)": lambda: random.uniform(K, (2, 3), minval=-2., maxval=5.),
    "uniform(k42,(4,),float16)": lambda: random.uniform(K42, (4,), jnp.float16),
    "uniform(k42,(4,),bfloat16)": lambda: random.uniform(K42, (4,), jnp.bfloat16),
    "normal(k42,(8,))": lambda: random.normal(K42, (8,)),
    "normal(k,(3,2))": lambda: random.normal(K, (3, 2)),
    "randint(k42,(10,),0,10)": lambda: random.randint(K42, (10,), 0, 10),
    "randint(k,(6,),-5,5)": lambda: random.randint(K, (6,), -5, 5),
    "randint(k,(6,),0,256,uint8)": lambda: random.randint(K, (6,), 0, 256, jnp.uint8),
    "bernoulli(k42,0.3,(10,))": lambda: random.bernoulli(K42, 0.3, (10,)),
    "permutation(k42,10)": lambda: random.permutation(K42, 10),
    "permutation(k,arange(12).reshape(4,3))": lambda: random.permutation(
        K, jnp.arange(12).reshape(4, 3)),
    "permutation(k,arange(12).reshape(4,3),axis=1,independent=True)": lambda: (
        random.permutation(K, jnp.arange(12).reshape(4, 3), axis=1, independent=True)),
    "choice(k42,10,(4,))": lambda: random.choice(K42, 10, (4,)),
    "choice(k42,10,(4,),replace=False)": lambda: random.choice(K42, 10, (4,), replace=False),
    "choice(k42,4,(6,),p=p)": lambda: random.choice(K42, 4, (6,), p=P),
    "choice(k42,4,(3,),replace=False,p=p)": lambda: random.choice(K42, 4, (3,), False, P),
    "gamma(k42,[0.5,1,3,10])": lambda: random.gamma(K42, jnp.array([0.5, 1., 3., 10.])),
    "gamma(k,2.,(5,))": lambda: random.gamma(K, 2., (5,)),
    "beta(k42,2.,3.,(4,))": lambda: random.beta(K42, 2., 3., (4,)),
    "dirichlet(k42,[1,2,3])": lambda: random.dirichlet(K42, jnp.array([1., 2., 3.])),
    "exponential(k42,(5,))": lambda: random.exponential(K42, (5,)),
    "laplace(k42,(5,))": lambda: random.laplace(K42, (5,)),
    "logistic(k42,(5,))": lambda: random.logistic(K42, (5,)),
    "cauchy(k42,(5,))": lambda: random.cauchy(K42, (5,)),
    "gumbel(k42,(5,))": lambda: random.gumbel(K42, (5,)),
    "categorical(k42,log(p),shape=(6,))": lambda: random.categorical(
        K42, jnp.log(P), shape=(6,)),
    "truncated_normal(k42,-1.,2.,(6,))": lambda: random.truncated_normal(K42, -1., 2., (6,)),
    "poisson(k42,3.,(6,))": lambda: random.poisson(K42, 3., (6,)),
    "poisson(k42,30.,(4,))": lambda: random.poisson(K42, 30., (4,)),
}
# Every case matches JAX bit for bit: integer and bit outputs directly; uniform, normal and
# truncated_normal through XLA's fused multiply-adds and erf_inv polynomial; the samplers
# through log / log1p / tan / exp / pow with those functions computed as XLA computes them;
# the gamma family through a NumPy copy of XLA's compiled rejection loop.


def _expected(case):
  dtype = np.dtype(jnp.bfloat16 if case["dtype"] == "bfloat16" else case["dtype"])
  if dtype.kind == "f":  # recorded as float64, which holds every narrower float exactly
    return np.array(case["values"], np.float64).astype(dtype).reshape(case["shape"])
  return np.array(case["values"], dtype).reshape(case["shape"])


def test_reference_covers_every_case():
  assert set(CASES) == set(REF["x32"])


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_jax_reference_draw(name):
  want = _expected(REF["x32"][name])
  got = np.asarray(CASES[name]())
  assert got.dtype == want.dtype and got.shape == want.shape
  np.testing.assert_array_equal(got, want)


SHAPES_REF = np.load(os.path.join(os.path.dirname(__file__), "data",
                                  "random_reference_shapes.npz"))


def _sweep_draw(case):
  name, shape = case.rsplit("_", 1)
  shape = tuple(map(int, shape.split("x")))
  name, _, alpha = name.partition("@")
  if not alpha:
    return getattr(random, name)(K42, shape)
  a = float(alpha)
  if name == "dirichlet":
    return random.dirichlet(K42, jnp.array([a, 1.0, 2.0, 0.5]), shape)
  if name == "dirichlet10":
    return random.dirichlet(K42, jnp.arange(1, 11, dtype=jnp.float32) * a, shape)
  if name == "beta":
    return random.beta(K42, a, 2.0, shape)
  if name == "truncated_normal":
    return random.truncated_normal(K42, -a, 2.0, shape)
  return getattr(random, name)(K42, a, shape)


@pytest.mark.parametrize("case", sorted(f for f in SHAPES_REF.files
                                          if f.count("@") < 3 and f != "scipy_version"))
def test_samplers_match_jax_bit_for_bit_at_every_size(case):
  np.testing.assert_array_equal(np.asarray(_sweep_draw(case)), SHAPES_REF[case])


# multivariate_normal's factor comes from SciPy's LAPACK (as in jaxlib): the recorded bits
# hold for the SciPy build they were recorded with, and to rounding for others.
_SAME_LAPACK = str(SHAPES_REF["scipy_version"]) == scipy.__version__


@pytest.mark.parametrize("case", sorted(mvn_cases.CASES))
def test_multivariate_normal_matches_jax_bit_for_bit(case):
  method, n, batch, shape = mvn_cases.CASES[case]
  got = np.asarray(random.multivariate_normal(K42, *mvn_cases.inputs(n, batch), shape,
                                              method=method))
  want = SHAPES_REF[case]
  assert got.dtype == want.dtype and got.shape == want.shape
  if _SAME_LAPACK:
    np.testing.assert_array_equal(got, want)
  else:
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", ["mvn@cholesky@1@_100", "mvn@cholesky@3@_10",
                                  "mvn@cholesky@64@_", "mvn@cholesky@9@3_3",
                                  "mvn@cholesky@9@3_2x3", "mvn@cholesky@33@_100",
                                  "mvn@svd@17@_10"])
def test_multivariate_normal_numpy_path_is_close_but_not_bit_exact(case):
  # each XLA code path (fused FMA, small loops, matrix-vector, batched and plain YNNPACK)
  # differs from NumPy's summation: the emulation above is what makes the bits equal
  method, n, batch, shape = mvn_cases.CASES[case]
  with jax.config.override("jaxlite_bit_exact_random", False):
    got = np.asarray(random.multivariate_normal(K42, *mvn_cases.inputs(n, batch), shape,
                                                method=method))
  np.testing.assert_allclose(got, SHAPES_REF[case], rtol=1e-5, atol=1e-5)
  assert (got != SHAPES_REF[case]).any()


@pytest.mark.parametrize("case", ["gumbel_1000", "gamma@0.3_1000", "beta@2.5_1000",
                                  "dirichlet@0.3_6"])
def test_numpy_math_for_samplers_is_close_but_not_bit_exact(case):
  want = SHAPES_REF[case]
  with jax.config.override("jaxlite_bit_exact_random", False):
    got = np.asarray(_sweep_draw(case))
  np.testing.assert_allclose(got, want, rtol=5e-6, atol=1e-6)
  if case == "gumbel_1000":
    assert (got != want).mean() > 0.05   # NumPy's float32 log is not XLA's


X64_CASES = {
    "PRNGKey(2**40+3)": lambda: random.PRNGKey(2**40 + 3),
    "bits(k42,(3,))": lambda: random.bits(random.PRNGKey(42), (3,)),
    "uniform(k42,(5,))": lambda: random.uniform(random.PRNGKey(42), (5,)),
    "normal(k42,(5,))": lambda: random.normal(random.PRNGKey(42), (5,)),
    "randint(k42,(6,),0,100)": lambda: random.randint(random.PRNGKey(42), (6,), 0, 100),
}


@pytest.mark.parametrize("name", sorted(X64_CASES))
def test_matches_jax_reference_draw_with_x64(name):
  want = _expected(REF["x64"][name])
  with jax.config.override("jax_enable_x64", True):
    got = np.asarray(X64_CASES[name]())
  assert got.dtype == want.dtype and got.shape == want.shape
  if name.startswith("normal"):
    np.testing.assert_allclose(got, want, rtol=1e-12)
  else:
    np.testing.assert_array_equal(got, want)


def test_jit_and_eager_draws_agree():
  f = jax.jit(lambda k: (random.uniform(k, (5,)), random.randint(k, (4,), 0, 9),
                         random.split(k, 3)))
  for a, b in zip(f(K42), (random.uniform(K42, (5,)), random.randint(K42, (4,), 0, 9),
                           random.split(K42, 3))):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_vmap_over_keys_matches_a_loop():
  keys = random.split(K42, 4)
  batched = jax.vmap(lambda k: random.normal(k, (3,)))(keys)
  for i in range(4):
    np.testing.assert_array_equal(np.asarray(batched[i]),
                                  np.asarray(random.normal(keys[i], (3,))))


def test_threefry_primitive_is_elementwise_over_counts():
  from jaxlite._src.random import threefry2x32_numpy
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
  # traced, the same draws up to summation order (the eager path sums as XLA does)
  mean, cov = mvn_cases.inputs(9, (3,))
  for shape in [(2, 3), (3,)]:
    eager = random.multivariate_normal(K, mean, cov, shape)
    traced = jax.jit(lambda k: random.multivariate_normal(k, mean, cov, shape))(K)
    np.testing.assert_allclose(traced, eager, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("n", [1, 9])
def test_multivariate_normal_differentiates_and_batches_on_every_path(n):
  # the eager bit-exact paths (n = 1's fused FMA, YNNPACK's order) must step aside for
  # tracers: d(sum of draws)/d(mean) counts the draws; vmap over keys gives each key's draws
  mean, cov = mvn_cases.inputs(n)
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


def test_gamma_under_jit_on_both_tiers():
  f = lambda k: (random.gamma(k, jnp.array([0.3, 1.0, 4.0])), random.beta(k, 2., 3., (3,)),
                 random.dirichlet(k, jnp.array([1., 2., 3.])))
  eager = f(K42)
  from jaxlite._src import tiers
  for backend in ("numpy", "xla") if tiers.xla_available() else ("numpy",):
    for got, want in zip(jax.jit(f, backend=backend)(K42), eager):
      np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-6)
