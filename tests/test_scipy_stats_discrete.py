"""jax.scipy.stats' discrete and multivariate distributions and its summary functions
(mode, rankdata, sem) against scipy.stats, and against values recorded from JAX 0.10.2
where JAX (the spec) departs from SciPy: non-integer and out-of-support points, invalid
parameters, shapes and errors."""
import inspect
import re

import numpy as np
import pytest
import scipy.stats as ss

import jaxlite
import jaxlite.numpy as jnp
import jaxlite.scipy.stats as jst
from jaxlite._src.test_util import check_grads

# (jaxlite function, scipy function, parameters) on integer grids that run past the support
K = np.arange(-2, 13)
PMFS = {
    "binom": (jst.binom, ss.binom, (10, 0.4)),
    "binom_loc": (jst.binom, ss.binom, (6, 0.7, 2)),
    "betabinom": (jst.betabinom, ss.betabinom, (10, 2.0, 3.0)),
    "betabinom_loc": (jst.betabinom, ss.betabinom, (8, 0.5, 1.5, 2)),
    "geom": (jst.geom, ss.geom, (0.3,)),
    "geom_loc": (jst.geom, ss.geom, (0.6, 2)),
    "nbinom": (jst.nbinom, ss.nbinom, (3.5, 0.4)),
    "nbinom_loc": (jst.nbinom, ss.nbinom, (2, 0.7, 1)),
    "poisson": (jst.poisson, ss.poisson, (2.5,)),
    "poisson_loc": (jst.poisson, ss.poisson, (4.0, 3)),
    "bernoulli": (jst.bernoulli, ss.bernoulli, (0.3,)),
    "bernoulli_loc": (jst.bernoulli, ss.bernoulli, (0.8, 1)),
}


@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("name", sorted(PMFS))
def test_pmfs_match_scipy(name, wide, x64):
  x64(wide)
  mine, theirs, params = PMFS[name]
  dtype = np.float64 if wide else np.float32
  k = K.astype(dtype)
  # JAX's betaln (which jaxlite follows) is good to about 1e-7 in float64, not 1e-16
  rtol = (1e-6 if mine is jst.betabinom else 1e-12) if wide else 2e-5
  got = mine.logpmf(k, *params)
  assert got.dtype == dtype
  np.testing.assert_allclose(got, theirs.logpmf(k, *params), rtol=rtol, atol=rtol)
  np.testing.assert_allclose(mine.pmf(k, *params), theirs.pmf(k, *params), rtol=rtol,
                             atol=rtol)


def test_integer_arguments_give_the_default_float():
  assert jst.binom.logpmf(3, 10, 0.4).dtype == jnp.float32
  assert jst.poisson.pmf(jnp.arange(3), 2).dtype == jnp.float32
  assert jst.geom.pmf(3, 1).dtype == jnp.float32
  assert jst.poisson.pmf(jnp.arange(3, dtype=jnp.uint8), jnp.float16(2)).dtype == jnp.float16
  assert jst.multinomial.logpmf(jnp.array([1, 2]), 3, jnp.array([0.5, 0.5])).dtype == \
      jnp.float32


@pytest.mark.parametrize("wide", [False, True])
def test_cdfs_and_entropy_match_scipy(wide, x64):
  x64(wide)
  dtype = np.float64 if wide else np.float32
  rtol = 1e-12 if wide else 2e-5
  k = np.array([-3, -1, -0.5, 0, 0.5, 1, 2, 2.5, 3, 7, 20], dtype)
  for mu, loc in [(2.0, 0), (5.5, 1), (0.3, -2)]:
    got = jst.poisson.cdf(k, mu, loc)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, ss.poisson.cdf(k, mu, loc), rtol=rtol, atol=rtol)
  np.testing.assert_allclose(jst.bernoulli.cdf(k, 0.3), ss.bernoulli.cdf(k, 0.3), rtol=rtol)
  # JAX sums the series below mu = 100 and uses the asymptotic expansion above
  mu = np.array([0.2, 1, 5, 9.9, 10, 40, 99, 100, 300, 5000], dtype)
  np.testing.assert_allclose(jst.poisson.entropy(mu), ss.poisson.entropy(mu),
                             rtol=5e-6 if wide else 2e-5)


# Recorded from JAX 0.10.2 (float32): where JAX's formulas depart from SciPy's
JAX_EDGES = [
    # non-integer k interpolates for binom and bernoulli, is floored for betabinom, -inf
    # for poisson; p outside [0, 1] is not nan for binom at k = 0
    (lambda: jst.binom.logpmf(np.array([-1., 0., 0.5, 1., 2.5, 3., 10., 11.]), 10, 0.4),
     [-np.inf, -5.1082563, -4.0264187, -3.2111359, -1.7677441, -1.537159, -9.162907, -np.inf]),
    (lambda: jst.binom.logpmf(np.array([0., 1., 3.]), 3, 0.0), [0.0, -np.inf, -np.inf]),
    (lambda: jst.binom.logpmf(np.array([0., 1., 3.]), 3, 1.0), [-np.inf, -np.inf, 0.0]),
    (lambda: jst.binom.logpmf(np.array([0., 1.]), 0, 0.3), [0.0, -np.inf]),
    (lambda: jst.binom.logpmf(np.array([0., 1., 2.]), 3, np.array([-0.1, 1.5, np.nan])),
     [0.28593007, np.nan, np.nan]),
    (lambda: jst.binom.logpmf(np.array([0., 1.]), -2, 0.3), [-np.inf, -np.inf]),
    (lambda: jst.betabinom.logpmf(np.array([-1., 0., 0.5, 1., 2.5, 3., 10., 11.]), 10, 2., 3.),
     [-np.inf, -2.7190995, -2.7190995, -2.2082739, -2.0034805, -1.9389415, -4.5108595,
      -np.inf]),
    # a negative loc cuts the support at k = 0, not at loc (SciPy: -0.9917128 at k = -1)
    (lambda: jst.betabinom.logpmf(np.array([-2., -1., 0., 1.]), 8, .5, 1.5, -1),
     [-np.inf, -np.inf, -1.7454839, -2.1021585]),
    (lambda: jst.betabinom.logpmf(np.array([1., 1., 1., 0.]), np.array([-1., 5, 5, 0]),
                                  np.array([1., -1, 1, 1]), np.array([1., 1, 0, 1])),
     [np.nan, np.nan, np.nan, 0.0]),
    (lambda: jst.geom.logpmf(np.array([-1., 0., 1., 2., 2.5, 5.]), 0.3),
     [-np.inf, -np.inf, -1.2039728, -1.5606477, -1.7389853, -2.6306727]),
    (lambda: jst.geom.logpmf(np.array([1., 2., 1., 1.]), np.array([1.0, 1.0, 0.0, -0.5])),
     [0.0, -np.inf, -np.inf, np.nan]),
    (lambda: jst.nbinom.logpmf(np.array([-1., 0., 1., 2.5, 5.]), 3.5, 0.4),
     [-np.inf, -3.2070179, -2.4650786, -2.098536, -2.200344]),
    (lambda: jst.nbinom.logpmf(np.array([0., 1., 0., 2.]), np.array([2., 2., 2., -1.]),
                               np.array([1.0, 1.0, 0.0, 0.5])), [0.0, -np.inf, -np.inf, -np.inf]),
    (lambda: jst.poisson.logpmf(np.array([-1., 0., 1., 2.5, 5.]), 2.0),
     [-np.inf, -2.0, -1.3068528, -np.inf, -3.3217568]),
    (lambda: jst.poisson.logpmf(np.array([0., 1.]), 0.0), [0.0, -np.inf]),
    (lambda: jst.poisson.logpmf(np.array([0., 1.]), -1.0), [1.0, np.nan]),
    (lambda: jst.poisson.logpmf(np.array([1., 2., 2.5]), 2.0, loc=1.5),
     [-np.inf, -1.5326445, -np.inf]),
    (lambda: jst.poisson.cdf(np.array([1., 1.]), np.array([0.0, -1.0])), [1.0, np.nan]),
    (lambda: jst.poisson.entropy(np.array([0., 0.5, 100., 1000., -1.])),
     [0.0, 0.9276376, 3.7206903, 4.8727326, np.nan]),
    (lambda: jst.bernoulli.logpmf(np.array([-1., 0., 0.5, 1., 2.]), 0.3),
     [-np.inf, -0.35667497, -0.78032386, -1.2039728, -np.inf]),
    (lambda: jst.bernoulli.logpmf(np.array([0., 1., 0., 1., 1.]),
                                  np.array([0., 0., 1., 1., 1.5])),
     [0.0, -np.inf, -np.inf, 0.0, 0.4054651]),
    (lambda: jst.bernoulli.cdf(np.array([-1., 0., 0.5, 1., 2., np.nan, 0.5, 0.5]),
                               np.array([0.3] * 6 + [np.nan, 1.5])),
     [0.0, 0.7, 0.7, 1.0, 1.0, np.nan, np.nan, np.nan]),
    (lambda: jst.bernoulli.ppf(np.array([-0.1, 0., 0.5, 1., 1.1, np.nan, 0.5]),
                               np.array([0.3] * 6 + [-0.1])),
     [np.nan, 0.0, 0.0, 1.0, np.nan, np.nan, np.nan]),
    (lambda: jst.multinomial.logpmf(np.array([0, 2, 3]), 5, np.array([0.0, 0.5, 0.5])),
     -1.1631517),
    (lambda: jst.multinomial.logpmf(np.array([1, 2, 3]), 7, np.array([0.2, 0.3, 0.5])),
     -np.inf),
    (lambda: jst.dirichlet.logpdf(np.array([0.2, 0.3]), np.array([1.5, 2.0, 3.0])), 1.6952124),
    (lambda: jst.dirichlet.logpdf(np.array([0.2, 0.3, 0.6]), np.array([1.5, 2.0, 3.0])),
     -np.inf),
    (lambda: jst.dirichlet.logpdf(np.array([-0.2, 0.7, 0.5]), np.array([1.5, 2.0, 3.0])),
     -np.inf),
    (lambda: jst.dirichlet.logpdf(np.array([0, 1]), np.array([1, 1])), -np.inf),
    (lambda: jst.multivariate_normal.logpdf(np.array([0.5, -0.2]), 0.1, 2.0),
     [-1.3055121, -1.2880121]),
    (lambda: jst.multivariate_normal.logpdf(np.array([0.5, -0.2]), np.array([0.1, 0.2]), 2.0),
     -2.6110241),
    (lambda: jst.multivariate_normal.logpdf(np.array([0.5, -0.2]), np.array([0.1, 0.2]),
                                            np.array([[1., 2.], [2., 1.]])), np.nan),
    (lambda: jst.multivariate_normal.logpdf(np.array([1, 0]), np.array([0, 0]),
                                            np.array([[1, 0], [0, 1]])), -2.337877),
]


@pytest.mark.parametrize("case", range(len(JAX_EDGES)))
def test_edge_cases_match_jax(case):
  fun, expected = JAX_EDGES[case]
  got = fun()
  assert got.dtype == jnp.float32
  assert got.shape == np.shape(expected)
  np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-6)


def test_multinomial_matches_scipy(x64):
  x64(True)
  p = np.array([0.2, 0.3, 0.5])
  for x in ([1, 2, 3], [0, 0, 6], [6, 0, 0], [2, 2, 2]):
    np.testing.assert_allclose(jst.multinomial.logpmf(np.array(x), 6, p),
                               ss.multinomial.logpmf(x, 6, p), rtol=1e-12)
    np.testing.assert_allclose(jst.multinomial.pmf(np.array(x), 6, p),
                               ss.multinomial.pmf(x, 6, p), rtol=1e-12)


@pytest.mark.parametrize("wide", [False, True])
def test_dirichlet_matches_scipy(wide, x64):
  x64(wide)
  dtype = np.float64 if wide else np.float32
  alpha = np.array([1.5, 2.0, 3.0])
  x = np.array([[0.2, 0.5, 0.05], [0.3, 0.4, 0.05], [0.5, 0.1, 0.9]])
  got = jst.dirichlet.logpdf(x.astype(dtype), alpha.astype(dtype))
  assert got.dtype == dtype and got.shape == (3,)
  want = ss.dirichlet.logpdf(x, alpha)
  np.testing.assert_allclose(got, want, rtol=1e-10 if wide else 1e-5)
  np.testing.assert_allclose(jst.dirichlet.pdf(x[:, 0], alpha), ss.dirichlet.pdf(x[:, 0], alpha),
                             rtol=1e-10 if wide else 1e-5)
  # one entry fewer than alpha: the last is 1 - sum
  np.testing.assert_allclose(jst.dirichlet.logpdf(x[:2], alpha), want,
                             rtol=1e-10 if wide else 1e-5)


@pytest.mark.parametrize("wide", [False, True])
def test_multivariate_normal_matches_scipy(wide, x64):
  x64(wide)
  dtype = np.float64 if wide else np.float32
  rtol = 1e-12 if wide else 1e-5
  cov = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 0.5]], dtype)
  mean = np.array([0.1, 0.2, -0.3], dtype)
  x = np.random.RandomState(0).normal(size=(4, 3)).astype(dtype)
  got = jst.multivariate_normal.logpdf(x, mean, cov)
  assert got.dtype == dtype and got.shape == (4,)
  np.testing.assert_allclose(got, ss.multivariate_normal.logpdf(x, mean, cov), rtol=rtol)
  np.testing.assert_allclose(jst.multivariate_normal.pdf(x[0], mean, cov),
                             ss.multivariate_normal.pdf(x[0], mean, cov), rtol=rtol)
  # batches of covariances broadcast against batches of points
  covs = np.stack([cov, 2 * cov])[:, None]
  got = jst.multivariate_normal.logpdf(x[:3], mean, covs)
  assert got.shape == (2, 3)
  np.testing.assert_allclose(got[1], ss.multivariate_normal.logpdf(x[:3], mean, 2 * cov),
                             rtol=rtol)


ERRORS = [
    # (call, error class, JAX 0.10.2's message, which ours starts with)
    (lambda: jst.multinomial.logpmf(np.array([1., 2., 3.]), 6, np.array([0.2, 0.3, 0.5])),
     ValueError, "x and n must be of integer type; got x.dtype=float32, n.dtype=float32"),
    (lambda: jst.multinomial.logpmf(np.array([[1, 2, 3], [0, 6, 0]]), np.array([6, 6]),
                                    np.array([0.2, 0.3, 0.5])),
     ValueError, "Incompatible shapes for broadcasting: shapes=[(2, 3), (2,)]"),
    (lambda: jst.dirichlet.logpdf(np.array([0.2, 0.3, 0.5]), np.ones((2, 3))),
     ValueError, "`alpha` must be one-dimensional; got alpha.shape=(2, 3)"),
    (lambda: jst.dirichlet.logpdf(np.array([0.2, 0.3, 0.4, 0.1]), np.ones(2)),
     ValueError, "`x` must have either the same number of entries as `alpha` or one entry "
                 "fewer; got x.shape=(4,), alpha.shape=(2,)"),
    (lambda: jst.multivariate_normal.logpdf(np.zeros(2), np.zeros(2), np.eye(3)),
     ValueError, "multivariate_normal.logpdf got incompatible shapes"),
    (lambda: jst.multivariate_normal.logpdf(np.zeros(2), np.zeros(2), np.ones(2)),
     ValueError, "multivariate_normal.logpdf got incompatible shapes"),
    (lambda: jst.multivariate_normal.logpdf(np.zeros(3), np.zeros(2), np.eye(2)),
     TypeError, "sub got incompatible shapes for broadcasting: (3,), (2,)."),
    (lambda: jst.multivariate_normal.logpdf(np.zeros(2), np.zeros(2), np.eye(2),
                                            allow_singular=True),
     NotImplementedError, "allow_singular argument of multivariate_normal.logpdf"),
    (lambda: jst.mode(np.ones(3), nan_policy="omit"),
     NotImplementedError, "Logic for `nan_policy` of omit is not implemented"),
    (lambda: jst.mode(np.ones(3), nan_policy="raise"),
     NotImplementedError, "In order to best JIT compile `mode`, we cannot know whether `x` "
                          "contains nans. Please check if nans exist in `x` outside of the "
                          "`mode` function."),
    (lambda: jst.mode(np.ones(3), nan_policy="foo"),
     ValueError, "Illegal nan_policy value 'foo'; expected one of "
                 "{'propagate', 'omit', 'raise'}"),
    (lambda: jst.mode(np.ones((2, 2)), axis=2),
     ValueError, "axis 2 is out of bounds for array of dimension 2"),
    (lambda: jst.mode([1, 2, 2]),
     TypeError, "mode requires ndarray or scalar arguments, got <class 'list'> at position 0."),
    (lambda: jst.rankdata(np.ones(3), nan_policy="omit"),
     NotImplementedError, "Logic for `nan_policy` of omit is not implemented"),
    (lambda: jst.rankdata(np.ones(3), nan_policy="raise"),
     NotImplementedError, "In order to best JIT compile `rankdata`"),
    (lambda: jst.rankdata(np.ones(3), nan_policy="x"),
     ValueError, "Illegal nan_policy value 'x'"),
    (lambda: jst.rankdata(np.ones(3), "foo"), ValueError, "unknown method 'foo'"),
    (lambda: jst.sem(np.ones(3), nan_policy="raise"), ValueError, "raise is not supported"),
    (lambda: jst.sem(np.ones(3), nan_policy="bogus"), ValueError, "bogus is not supported"),
    (lambda: jst.sem([1, 2, 4]),
     TypeError, "sem requires ndarray or scalar arguments, got <class 'list'> at position 0."),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_jax(case):
  fun, cls, message = ERRORS[case]
  with pytest.raises(cls, match="^" + re.escape(message)):
    fun()


# Recorded from JAX 0.10.2 with inspect.signature: (name, kind, default) per parameter
_REQ, _KW = inspect.Parameter.empty, inspect.Parameter.KEYWORD_ONLY
_POS = inspect.Parameter.POSITIONAL_OR_KEYWORD
SIGNATURES = {
    "betabinom.logpmf": "k n a b loc=0", "betabinom.pmf": "k n a b loc=0",
    "binom.logpmf": "k n p loc=0", "binom.pmf": "k n p loc=0",
    "geom.logpmf": "k p loc=0", "geom.pmf": "k p loc=0",
    "nbinom.logpmf": "k n p loc=0", "nbinom.pmf": "k n p loc=0",
    "poisson.logpmf": "k mu loc=0", "poisson.pmf": "k mu loc=0",
    "poisson.cdf": "k mu loc=0", "poisson.entropy": "mu loc=0",
    "multinomial.logpmf": "x n p", "multinomial.pmf": "x n p",
    "dirichlet.logpdf": "x alpha", "dirichlet.pdf": "x alpha",
    "multivariate_normal.logpdf": "x mean cov allow_singular=None",
    "multivariate_normal.pdf": "x mean cov",
    "bernoulli.logpmf": "k p loc=0", "bernoulli.pmf": "k p loc=0",
    "bernoulli.cdf": "k p", "bernoulli.ppf": "q p",
    "mode": "a axis=0 nan_policy='propagate' keepdims=False",
    "rankdata": "a method='average' *axis=None *nan_policy='propagate'",
    "sem": "a axis=0 ddof=1 nan_policy='propagate' *keepdims=False",
}


def _described(fun):
  parts = []
  for p in inspect.signature(fun).parameters.values():
    star = "*" if p.kind is _KW else ""
    parts.append(star + p.name + ("" if p.default is _REQ else f"={p.default!r}"))
  return " ".join(parts)


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_signatures_match_jax(name):
  fun = jst
  for part in name.split("."):
    fun = getattr(fun, part)
  assert _described(fun) == SIGNATURES[name]


def test_distribution_modules_export_jax_functions():
  import importlib
  expected = {"betabinom": {"logpmf", "pmf"}, "binom": {"logpmf", "pmf"},
              "geom": {"logpmf", "pmf"}, "nbinom": {"logpmf", "pmf"},
              "poisson": {"cdf", "entropy", "logpmf", "pmf"},
              "multinomial": {"logpmf", "pmf"}, "dirichlet": {"logpdf", "pdf"},
              "multivariate_normal": {"logpdf", "pdf"},
              "bernoulli": {"cdf", "logpmf", "pmf", "ppf"}}
  for name, funs in expected.items():
    module = importlib.import_module(f"jaxlite.scipy.stats.{name}")
    assert {n for n in dir(module) if not n.startswith("_")} == funs, name


# -- gradients: finite differences in float64, and float32 values recorded from JAX 0.10.2
def test_gradients_match_finite_differences(x64):
  x64(True)
  check_grads(lambda p: jst.binom.logpmf(3., 10., p), (np.array([0.2, 0.6]),), order=2)
  check_grads(lambda a, b: jst.betabinom.logpmf(3., 10., a, b),
              (np.array([2.0, 0.7]), np.array([3.0, 1.5])), order=1)
  check_grads(lambda n, p: jst.nbinom.logpmf(3., n, p), (np.array([3.5, 1.2]),
                                                         np.array([0.4, 0.7])), order=1)
  check_grads(lambda mu: jst.poisson.logpmf(3., mu), (np.array([2.5, 0.4]),), order=2)
  check_grads(lambda p: jst.geom.logpmf(3., p), (np.array([0.3, 0.8]),), order=2)
  check_grads(lambda a: jst.dirichlet.logpdf(np.array([0.2, 0.3, 0.5]), a),
              (np.array([1.5, 2.0, 3.0]),), order=1)
  cov = np.array([[2.0, 0.3], [0.3, 1.0]])
  check_grads(lambda x, m, c: jst.multivariate_normal.logpdf(x, m, c),
              (np.array([0.5, -0.2]), np.array([0.1, 0.2]), cov), order=1, modes=["rev"])


def test_gradients_match_jax():
  # recorded from JAX 0.10.2 (float32)
  np.testing.assert_allclose(jaxlite.grad(lambda p: jst.binom.logpmf(3., 10., p))(0.4),
                             -4.166666, rtol=1e-5)
  np.testing.assert_allclose(
      jaxlite.grad(lambda a, b: jst.betabinom.logpmf(3., 10., a, b), argnums=(0, 1))(2., 3.),
      [-0.08489525, 0.16073972], rtol=2e-5)
  np.testing.assert_allclose(
      jaxlite.grad(lambda n, p: jst.nbinom.logpmf(3., n, p), argnums=(0, 1))(3.5, 0.4),
      [-0.22653544, 3.75], rtol=2e-5)
  np.testing.assert_allclose(jaxlite.grad(lambda m: jst.poisson.cdf(3., m))(2.5),
                             -0.21376285, rtol=2e-5)
  np.testing.assert_allclose(jaxlite.grad(lambda m: jst.poisson.entropy(m))(3.0),
                             0.18243074, rtol=2e-5)
  np.testing.assert_allclose(
      jaxlite.grad(lambda p: jst.multinomial.logpmf(jnp.array([1, 2, 3]), 6, p))(
          jnp.array([0.2, 0.3, 0.5])), [5.0, 6.6666665, 6.0], rtol=1e-5)
  gm, gc = jaxlite.grad(lambda m, c: jst.multivariate_normal.logpdf(
      jnp.array([0.5, -0.2]), m, c), argnums=(0, 1))(
          jnp.array([0.1, 0.2]), jnp.array([[2.0, 0.3], [0.3, 1.0]]))
  np.testing.assert_allclose(gm, [0.27225134, -0.48167548], rtol=1e-5)
  np.testing.assert_allclose(gc, [[-0.22471967, 0.012965646], [0.012965646, -0.40755469]],
                             rtol=1e-5)


def test_under_jit_and_vmap():
  k = jnp.array([1., 2.])
  np.testing.assert_allclose(jaxlite.jit(jst.binom.logpmf)(k, 5, 0.3),
                             ss.binom.logpmf([1, 2], 5, 0.3), rtol=1e-5)
  np.testing.assert_allclose(
      jaxlite.vmap(jst.betabinom.pmf, (0, None, None, None))(k, 5, 1.5, 2.),
      ss.betabinom.pmf([1, 2], 5, 1.5, 2.), rtol=1e-5)
  np.testing.assert_allclose(jaxlite.jit(jst.poisson.entropy)(jnp.array([3., 30.])),
                             ss.poisson.entropy([3., 30.]), rtol=2e-5)
  np.testing.assert_allclose(
      jaxlite.vmap(jst.multivariate_normal.logpdf, (0, None, None))(
          jnp.ones((3, 2)), jnp.zeros(2), jnp.eye(2)), [-2.837877] * 3, rtol=1e-6)
  mode, count = jaxlite.vmap(jst.mode)(jnp.array([[1, 2, 2], [3, 3, 1]]))
  np.testing.assert_array_equal(mode, [2, 3])
  np.testing.assert_array_equal(count, [2, 2])
  np.testing.assert_array_equal(
      jaxlite.jit(jst.rankdata, static_argnames="method")(jnp.array([3, 1, 1, 2]), "min"),
      [4., 1., 1., 3.])


# -- summary functions
X1 = np.array([[1, 2, 1, 3, 2, 1], [3, 1, 3, 2, 1, 3], [1, 2, 2, 3, 1, 2]])


@pytest.mark.parametrize("axis", [0, 1, -1, None])
@pytest.mark.parametrize("keepdims", [False, True])
def test_mode_matches_scipy(axis, keepdims):
  for a in (X1, X1.astype(np.float32) / 2):
    mode, count = jst.mode(a, axis=axis, keepdims=keepdims)
    want = ss.mode(a, axis=axis, keepdims=keepdims)
    np.testing.assert_array_equal(mode, want.mode)
    np.testing.assert_array_equal(count, want.count)
    assert mode.dtype == jnp.asarray(a).dtype and count.dtype == jnp.int32


def test_mode_edge_cases_match_jax():
  # recorded from JAX 0.10.2
  result = jst.mode(np.array([1.5, np.nan, np.nan, 2.0], np.float32))
  assert type(result).__name__ == "ModeResult" and result._fields == ("mode", "count")
  assert np.isnan(result.mode) and result.count == 2
  mode, count = jst.mode(3.0)
  assert (float(mode), int(count), mode.dtype, count.dtype) == (3.0, 1, jnp.float32, jnp.int32)
  mode, count = jst.mode(np.zeros((0, 3)))
  assert mode.shape == count.shape == (3,) and count.dtype == jnp.float32
  assert np.isnan(mode).all() and (count == 0).all()
  mode, count = jst.mode(np.array([True, False, True]))
  assert (bool(mode), int(count), mode.dtype) == (True, 2, jnp.bool_)


R = np.array([[3., 1., 3.], [2., 2., 5.]])


@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_rankdata_matches_scipy(method, axis):
  got = jst.rankdata(R, method, axis=axis)
  assert got.dtype == jnp.float32
  np.testing.assert_array_equal(got, ss.rankdata(R, method, axis=axis))


def test_rankdata_edge_cases(x64):
  # recorded from JAX 0.10.2: a slice with a nan ranks all nan (scipy's 'propagate' too)
  np.testing.assert_array_equal(jst.rankdata(np.array([[1., np.nan, 2.], [3., 1., 1.]]),
                                             axis=1),
                                [[np.nan] * 3, [3.0, 1.5, 1.5]])
  np.testing.assert_array_equal(jst.rankdata(np.array([10, 30, 20])), [1., 3., 2.])
  assert jst.rankdata(np.zeros(0)).shape == (0,)
  np.testing.assert_array_equal(jst.rankdata(2.0), [1.0])
  a = np.random.RandomState(1).randint(0, 5, size=(3, 4, 5)).astype(np.float32)
  for method in ("average", "dense", "ordinal"):
    np.testing.assert_array_equal(jst.rankdata(a, method, axis=1),
                                  ss.rankdata(a, method, axis=1))
  x64(True)
  assert jst.rankdata(np.array([3, 1])).dtype == jnp.float64


X2 = np.array([[1, 2, 3, np.nan, 4, 2], [4, 5, 4, 3, np.nan, 1], [7, np.nan, 8, 7, 9, np.nan]])


@pytest.mark.parametrize("wide", [False, True])
def test_sem_matches_scipy(wide, x64):
  x64(wide)
  rtol = 1e-12 if wide else 1e-6
  for axis in (0, 1, -1, None):
    for keepdims in (False, True):
      for ddof in (0, 1):
        for a, policy in ((X1, "propagate"), (X2, "propagate"), (X2, "omit")):
          got = jst.sem(a, axis=axis, ddof=ddof, nan_policy=policy, keepdims=keepdims)
          assert got.dtype == (np.float64 if wide else np.float32)
          want = ss.sem(a, axis=axis, ddof=ddof, nan_policy=policy, keepdims=keepdims)
          np.testing.assert_allclose(got, want, rtol=rtol)
  # recorded from JAX 0.10.2: nan where ddof leaves no degrees of freedom (SciPy: inf)
  assert np.isnan(jst.sem(np.array([1.0])))
  np.testing.assert_allclose(jst.sem(X2, ddof=2, nan_policy="omit"),
                             [2.4494896, np.nan, 2.1602468, np.nan, np.nan, np.nan], rtol=1e-6)
