"""jaxlite.scipy.special and jaxlite.scipy.stats against SciPy, with gradients."""
import numpy as np
import pytest
import scipy.special as sps
import scipy.stats as ss

import jaxlite
import jaxlite.numpy as jnp
import jaxlite.scipy.special as jsp
import jaxlite.scipy.stats as jst
from jaxlite._src.test_util import check_grads

X = np.array([0.05, 0.5, 1.0, 2.5, 7.0], np.float32)

UNARY = ["erf", "erfc", "gammaln", "digamma", "expit", "i0e", "i1e", "i0", "ndtr",
         "log_ndtr", "entr", "gamma"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_functions_match_scipy(name):
  for x in (X, -X, np.float32(0.5), np.zeros((0,), np.float32)):
    if name in ("gammaln", "digamma", "gamma", "entr") and np.any(np.asarray(x) < 0):
      continue
    out = getattr(jsp, name)(x)
    assert out.dtype == np.float32 and out.shape == np.shape(x)
    np.testing.assert_allclose(out, getattr(sps, name)(np.float64(x)), rtol=3e-5, atol=1e-7)


def test_integer_inputs_are_promoted_to_float():
  assert jsp.erf(jnp.arange(3)).dtype == np.float32
  assert jsp.gammaln(2).dtype == np.float32


def test_inverse_and_two_argument_functions():
  p = np.array([0.01, 0.3, 0.5, 0.9], np.float32)
  np.testing.assert_allclose(jsp.erfinv(2 * p - 1), sps.erfinv(2 * p - 1), rtol=1e-5,
                             atol=1e-7)
  np.testing.assert_allclose(jsp.ndtri(p), sps.ndtri(p), rtol=1e-4)
  np.testing.assert_allclose(jsp.logit(p), sps.logit(p), rtol=1e-5)
  a, b = np.array([0.5, 2.0, 3.0, 9.0], np.float32), np.array([1.5, 0.2, 3.0, 4.0], np.float32)
  for name in ("betaln", "gammainc", "gammaincc", "xlogy", "xlog1py"):
    np.testing.assert_allclose(getattr(jsp, name)(a, b), getattr(sps, name)(a, b), rtol=2e-5)
  assert float(jsp.xlogy(0.0, 0.0)) == 0.0 and float(jsp.xlog1py(0.0, -1.0)) == 0.0
  np.testing.assert_allclose(jsp.polygamma(1, a), sps.polygamma(1, a), rtol=1e-5)


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp_matches_scipy(axis, keepdims):
  a = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32) * 30
  np.testing.assert_allclose(jsp.logsumexp(a, axis=axis, keepdims=keepdims),
                             sps.logsumexp(a, axis=axis, keepdims=keepdims), rtol=1e-5)
  b = np.random.default_rng(1).normal(size=(3, 4)).astype(np.float32)
  out, sign = jsp.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=True)
  eout, esign = sps.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=True)
  np.testing.assert_allclose(out, eout, rtol=1e-4)
  np.testing.assert_array_equal(sign, esign)


def test_logsumexp_edge_cases():
  assert float(jsp.logsumexp(np.array([-np.inf, -np.inf], np.float32))) == -np.inf
  assert float(jsp.logsumexp(np.array([np.inf, 1.0], np.float32))) == np.inf
  assert np.isnan(float(jsp.logsumexp(np.array([0.0, 1.0], np.float32),
                                      b=np.array([1.0, -1.0], np.float32))))


def test_special_gradients(x64):
  x64(True)
  x = np.array([0.3, 1.2, 2.7])
  for f in (jsp.erf, jsp.gammaln, jsp.expit, jsp.ndtr, jsp.i0e, jsp.entr, jsp.log_ndtr):
    check_grads(f, (x,), order=2)
  check_grads(lambda v: jsp.logsumexp(v), (x,), order=2)
  check_grads(jsp.xlogy, (x, x + 1), order=2)
  check_grads(jsp.betaln, (x, x[::-1].copy()), order=1)
  # JAX's xlogy JVP is dx log(y) + dy x / y: at x = y = 0 that is -inf + nan
  assert np.isnan(float(jaxlite.grad(lambda v: jsp.xlogy(v, v))(0.0)))
  assert float(jaxlite.grad(lambda v: jsp.xlogy(v, 2.0))(0.0)) == np.float32(np.log(2.0))


@pytest.mark.parametrize("fun,y", [(jsp.xlogy, 0.0), (jsp.xlog1py, -1.0)])
def test_xlogy_grad_in_x_at_a_python_zero_log_argument_is_minus_inf(fun, y):
  # JAX 0.10.2 gives -inf (numpyro's Beta log_prob gradient at concentration 1, value 0):
  # the JVP divides by y as an array, never as a Python float
  assert float(jaxlite.grad(lambda c: fun(c - 1.0, y))(1.0)) == -np.inf
  assert float(jaxlite.grad(lambda c: fun(c, y))(0.5)) == -np.inf


@pytest.mark.parametrize("fun,y,log_fn,log_arg", [
    (jsp.xlogy, [0.3, 0.6], np.log, lambda y: y),
    (jsp.xlog1py, [-0.3, 0.6], np.log1p, lambda y: 1 + y)])
def test_xlogy_grad_broadcasts_operands_of_different_rank(fun, y, log_fn, log_arg):
  # numpyro's Bernoulli log_prob of (800, 2) values against (2,) probabilities; JAX 0.10.2
  # gives the analytic values: dx = log(y) broadcast, dy = sum of x / y over the rows
  x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], np.float32)
  y = np.array(y, np.float32)
  gx, gy = jaxlite.grad(lambda x, y: fun(x, y).sum(), argnums=(0, 1))(x, y)
  np.testing.assert_allclose(gx, np.broadcast_to(log_fn(y), x.shape), rtol=1e-6)
  np.testing.assert_allclose(gy, x.sum(0) / log_arg(y), rtol=1e-6)
  np.testing.assert_allclose(fun(x, y), x * log_fn(y), rtol=1e-6)


def test_logsumexp_under_jit_and_vmap():
  a = np.random.default_rng(2).normal(size=(5, 3)).astype(np.float32)
  np.testing.assert_allclose(jaxlite.jit(jsp.logsumexp)(a), sps.logsumexp(a), rtol=1e-5)
  np.testing.assert_allclose(jaxlite.vmap(jsp.logsumexp)(a), sps.logsumexp(a, axis=1),
                             rtol=1e-5)


def test_norm_matches_scipy():
  x = np.linspace(-4, 4, 9).astype(np.float32)
  for name in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
    np.testing.assert_allclose(getattr(jst.norm, name)(x, 0.5, 2.0),
                               getattr(ss.norm, name)(x, 0.5, 2.0), rtol=2e-5, atol=1e-7)
  q = np.array([0.05, 0.5, 0.8], np.float32)
  np.testing.assert_allclose(jst.norm.ppf(q, 1.0, 3.0), ss.norm.ppf(q, 1.0, 3.0), rtol=1e-4)


def test_norm_logpdf_with_a_negative_scale_is_jaxs():
  # JAX 0.10.2 works with scale**2, so a negative scale gives |scale|'s density (recorded)
  np.testing.assert_allclose(jst.norm.logpdf(np.array([0.5, -1.], np.float32), 0., -2.),
                             [-1.6433357000350952, -1.7370857000350952], rtol=1e-6)
  assert jst.norm.logpdf(0.5).weak_type


def test_other_distributions_match_scipy():
  x = np.array([0.1, 0.4, 0.7, 2.0, -0.5], np.float32)
  np.testing.assert_allclose(jst.t.logpdf(x, 3.0, 0.2, 1.5), ss.t.logpdf(x, 3.0, 0.2, 1.5),
                             rtol=1e-5)
  np.testing.assert_allclose(jst.t.pdf(x, 5.0), ss.t.pdf(x, 5.0), rtol=1e-5)
  np.testing.assert_allclose(jst.gamma.logpdf(x, 2.5), ss.gamma.logpdf(x, 2.5), rtol=1e-5)
  np.testing.assert_allclose(jst.gamma.cdf(x, 2.5, scale=2.0), ss.gamma.cdf(x, 2.5, scale=2.0),
                             rtol=1e-5, atol=1e-7)
  np.testing.assert_allclose(jst.beta.logpdf(x, 2.0, 3.0), ss.beta.logpdf(x, 2.0, 3.0),
                             rtol=1e-5)
  np.testing.assert_allclose(jst.beta.pdf(x, 2.0, 3.0), ss.beta.pdf(x, 2.0, 3.0), rtol=1e-5)
  k = np.array([0, 1, 2, -1], np.float32)
  np.testing.assert_allclose(jst.bernoulli.logpmf(k, 0.3), ss.bernoulli.logpmf(k, 0.3),
                             rtol=1e-6)
  np.testing.assert_allclose(jst.bernoulli.pmf(k, 0.3), ss.bernoulli.pmf(k, 0.3), rtol=1e-6)
  np.testing.assert_allclose(jst.bernoulli.cdf(k, 0.3), ss.bernoulli.cdf(k, 0.3), rtol=1e-6)
  q = np.array([0.0, 0.5, 0.8, 1.0], np.float32)
  # JAX (the spec) gives 0 at q = 0 where SciPy gives -1
  np.testing.assert_allclose(jst.bernoulli.ppf(q, 0.3), [0.0, 0.0, 1.0, 1.0])


def test_distribution_gradients(x64):
  x64(True)
  check_grads(lambda x, m, s: jst.norm.logpdf(x, m, s),
              (np.array([0.3, -1.0]), np.array([0.1, 0.2]), np.array([1.5, 0.7])), order=2)
  check_grads(lambda x, df: jst.t.logpdf(x, df), (np.array([0.3, -1.0]), np.array([3.0, 6.0])),
              order=1)
  check_grads(lambda x, a: jst.gamma.logpdf(x, a), (np.array([0.3, 2.0]), np.array([2.0, 4.0])),
              order=1)
