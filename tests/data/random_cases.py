"""The jax.random calls that make_random_reference.py records from JAX 0.10.2 and
tests/test_random.py replays in jaxlite, written once for both.

``cases(random, jnp)`` takes either library's ``random`` and ``numpy`` modules and returns
``{name: (draw, exact)}``; ``draw(key)`` makes the call (the tests pass PRNGKey(42)).
``exact`` marks the calls whose results JAX computes by exactly specified operations
(threefry bits, integer arithmetic, bit manipulation, comparisons, floats on [0, 1) built
from bits): the same on every machine, so jaxlite must give them bit for bit. The others
go through functions whose last bits depend on the math library, the CPU and XLA's fusion
(log, tan, erf_inv, fused multiply-adds, LAPACK), in JAX as in jaxlite: they agree to
rounding. Sizes of 1000 give the tolerances some coverage.
"""
import re

import numpy as np


def mvn_inputs(n, batch=()):
  """A mean and an SPD covariance built exactly (small dyadic integers, one division), so
  that the recording and the test construct the same float32 values."""
  a = (np.arange(int(np.prod(batch, dtype=int)) * n * (n + 2)) % 7 - 3.0) / 4
  a = a.reshape(batch + (n, n + 2))
  cov = a @ np.swapaxes(a, -1, -2) / n + 0.5 * np.eye(n)
  mean = np.arange(n) / 4 - 1
  return mean.astype(np.float32), cov.astype(np.float32)


# multivariate_normal: {name: (method, n, covariance batch, shape)}
MVN_CASES = {f"multivariate_normal(k,{m},n={n},batch={b},{s})": (m, n, b, s) for m, n, b, s in (
    ("cholesky", 1, (), (100,)), ("cholesky", 3, (), (10,)), ("cholesky", 9, (3,), (2, 3)),
    ("cholesky", 33, (), (100,)), ("eigh", 8, (), (10,)), ("svd", 17, (), (10,)))}


def _mvn(random, method, n, batch, shape):
  return lambda k: random.multivariate_normal(k, *mvn_inputs(n, batch), shape, method=method)


def _exact_cases(random, jnp):
  grid = jnp.arange(12).reshape(4, 3)
  return {
      "PRNGKey(0)": lambda k: random.PRNGKey(0),
      "PRNGKey(-1)": lambda k: random.PRNGKey(-1),
      "PRNGKey(2**40+3)": lambda k: random.PRNGKey(2**40 + 3),
      "key_data(key(7))": lambda k: random.key_data(random.key(7)),
      "split(k)": lambda k: random.split(k),
      "split(k,5)": lambda k: random.split(k, 5),
      "split(k,(2,3))": lambda k: random.split(k, (2, 3)),
      "fold_in(k,3)": lambda k: random.fold_in(k, 3),
      "fold_in(k,2**31+5)": lambda k: random.fold_in(k, 2**31 + 5),
      "bits(k,(5,))": lambda k: random.bits(k, (5,)),
      "bits(k,(3,),uint8)": lambda k: random.bits(k, (3,), jnp.uint8),
      "bits(k,(3,),uint16)": lambda k: random.bits(k, (3,), jnp.uint16),
      "uniform(k,(1000,))": lambda k: random.uniform(k, (1000,)),
      "uniform(k,(2,3),0,1)": lambda k: random.uniform(k, (2, 3), minval=0., maxval=1.),
      "uniform(k,(4,),float16)": lambda k: random.uniform(k, (4,), jnp.float16),
      "uniform(k,(4,),bfloat16)": lambda k: random.uniform(k, (4,), jnp.bfloat16),
      "randint(k,(10,),0,10)": lambda k: random.randint(k, (10,), 0, 10),
      "randint(k,(6,),-5,5)": lambda k: random.randint(k, (6,), -5, 5),
      "randint(k,(6,),0,256,uint8)": lambda k: random.randint(k, (6,), 0, 256, jnp.uint8),
      "bernoulli(k,0.3,(1000,))": lambda k: random.bernoulli(k, 0.3, (1000,)),
      "bernoulli(k,0.3,(10,),high)": lambda k: random.bernoulli(k, 0.3, (10,), mode="high"),
      "rademacher(k,(10,))": lambda k: random.rademacher(k, (10,)),
      "permutation(k,10)": lambda k: random.permutation(k, 10),
      "permutation(k,2000)": lambda k: random.permutation(k, 2000),   # two sort rounds
      "permutation(k,grid)": lambda k: random.permutation(k, grid),
      "permutation(k,grid,axis=1,independent)": lambda k: random.permutation(
          k, grid, axis=1, independent=True),
      "choice(k,10,(4,))": lambda k: random.choice(k, 10, (4,)),
      "choice(k,10,(4,),replace=False)": lambda k: random.choice(k, 10, (4,), replace=False),
      "choice(k,grid,(2,),axis=1)": lambda k: random.choice(k, grid, (2,), axis=1),
  }


def _rounding_cases(random, jnp):
  p = jnp.array([0.1, 0.2, 0.3, 0.4])
  cases = {
      "uniform(k,(1000,),-2,5)": lambda k: random.uniform(k, (1000,), minval=-2., maxval=5.),
      "normal(k,(1000,))": lambda k: random.normal(k, (1000,)),
      "normal(k,(3,2),float16)": lambda k: random.normal(k, (3, 2), jnp.float16),
      "normal(k,(3,),complex64)": lambda k: random.normal(k, (3,), jnp.complex64),
      "truncated_normal(k,-1,2,(1000,))": lambda k: random.truncated_normal(k, -1., 2.,
                                                                            (1000,)),
      "exponential(k,(1000,))": lambda k: random.exponential(k, (1000,)),
      "laplace(k,(1000,))": lambda k: random.laplace(k, (1000,)),
      "logistic(k,(1000,))": lambda k: random.logistic(k, (1000,)),
      "cauchy(k,(1000,))": lambda k: random.cauchy(k, (1000,)),
      "gumbel(k,(1000,))": lambda k: random.gumbel(k, (1000,)),
      "gumbel(k,(10,),high)": lambda k: random.gumbel(k, (10,), mode="high"),
      "categorical(k,log(p),shape=(1000,))": lambda k: random.categorical(k, jnp.log(p),
                                                                          shape=(1000,)),
      "categorical(k,log(p),shape=(3,),replace=False)": lambda k: random.categorical(
          k, jnp.log(p), shape=(3,), replace=False),
      "choice(k,4,(6,),p=p)": lambda k: random.choice(k, 4, (6,), p=p),
      "choice(k,4,(3,),replace=False,p=p)": lambda k: random.choice(k, 4, (3,), False, p),
      "gamma(k,[0.5,1,3,10])": lambda k: random.gamma(k, jnp.array([0.5, 1., 3., 10.])),
      "gamma(k,0.3,(1000,))": lambda k: random.gamma(k, 0.3, (1000,)),
      "gamma(k,2.5,(1000,))": lambda k: random.gamma(k, 2.5, (1000,)),
      "loggamma(k,0.3,(1000,))": lambda k: random.loggamma(k, 0.3, (1000,)),
      "beta(k,0.3,2,(1000,))": lambda k: random.beta(k, 0.3, 2., (1000,)),
      "dirichlet(k,0.3*arange(1,11),(50,))": lambda k: random.dirichlet(
          k, jnp.arange(1, 11, dtype=jnp.float32) * 0.3, (50,)),
      # Knuth's method below 10, rejection above
      "poisson(k,[3,30],(500,2))": lambda k: random.poisson(k, jnp.array([3., 30.]), (500, 2)),
      "orthogonal(k,3)": lambda k: random.orthogonal(k, 3),
      "orthogonal(k,4,(2,),m=3)": lambda k: random.orthogonal(k, 4, (2,), m=3),
      "chisquare(k,3,(100,))": lambda k: random.chisquare(k, 3., (100,)),
      "f(k,3,4,(100,))": lambda k: random.f(k, 3., 4., (100,)),
      "t(k,3,(100,))": lambda k: random.t(k, 3., (100,)),
      "generalized_normal(k,1.5,(100,))": lambda k: random.generalized_normal(k, 1.5,
                                                                              (100,)),
      "ball(k,3,2,(10,))": lambda k: random.ball(k, 3, 2, (10,)),
      "geometric(k,0.3,(100,))": lambda k: random.geometric(k, 0.3, (100,)),
      "lognormal(k,0.5,(100,))": lambda k: random.lognormal(k, 0.5, (100,)),
      "maxwell(k,(100,))": lambda k: random.maxwell(k, (100,)),
      "double_sided_maxwell(k,0.5,2,(100,))": lambda k: random.double_sided_maxwell(
          k, 0.5, 2., (100,)),
      "pareto(k,3,(100,))": lambda k: random.pareto(k, 3., (100,)),
      "rayleigh(k,2,(100,))": lambda k: random.rayleigh(k, 2., (100,)),
      "triangular(k,0,0.3,1,(100,))": lambda k: random.triangular(k, 0., 0.3, 1., (100,)),
      "wald(k,1.5,(100,))": lambda k: random.wald(k, 1.5, (100,)),
      "weibull_min(k,2,1.5,(100,))": lambda k: random.weibull_min(k, 2., 1.5, (100,)),
      # inversion where n min(p, 1 - p) <= 10, BTRS above
      "binomial(k,[10,100],[0.3,0.7],(50,2))": lambda k: random.binomial(
          k, jnp.array([10., 100.]), jnp.array([0.3, 0.7]), (50, 2)),
      "multinomial(k,[100,7],p,shape=(2,4))": lambda k: random.multinomial(
          k, jnp.array([100., 7.]), p, shape=(2, 4)),
  }
  cases.update({name: _mvn(random, *case) for name, case in MVN_CASES.items()})
  return cases


def cases(random, jnp):
  """``{name: (draw, exact)}`` for float32 draws (``jax_enable_x64`` off)."""
  return {**{name: (f, True) for name, f in _exact_cases(random, jnp).items()},
          **{name: (f, False) for name, f in _rounding_cases(random, jnp).items()}}


def x64_cases(random, jnp):
  """``{name: (draw, exact)}`` for draws with ``jax_enable_x64`` on."""
  return {
      "PRNGKey(2**40+3)": (lambda k: random.PRNGKey(2**40 + 3), True),
      "bits(k,(3,))": (lambda k: random.bits(k, (3,)), True),
      "uniform(k,(5,))": (lambda k: random.uniform(k, (5,)), True),
      "randint(k,(6,),0,100)": (lambda k: random.randint(k, (6,), 0, 100), True),
      "normal(k,(100,))": (lambda k: random.normal(k, (100,)), False),
      "gamma(k,2.5,(100,))": (lambda k: random.gamma(k, 2.5, (100,)), False),
  }


def primitive_names(jaxpr_text):
  """The primitives a printed jaxpr applies, nested jaxprs included."""
  return set(re.findall(r"= ([a-z_][a-z_0-9]*)[\[ \n]", jaxpr_text))
