"""Record reference draws from real JAX into random_reference.json.

Run with a Python that has JAX installed (JAX 0.10 is the spec):
  /work/jaxref/bin/python tests/data/make_random_reference.py
Each case is ``name -> {"dtype", "shape", "values"}``; tests/test_random.py replays the
same calls in jaxlite. Cases under "x64" are drawn with ``jax_enable_x64`` on.
"""
import json
import os

import jax
import jax.numpy as jnp
import numpy as np

import mvn_cases


def cases(random):
  k = random.PRNGKey(0)
  k42 = random.PRNGKey(42)
  p = jnp.array([0.1, 0.2, 0.3, 0.4])
  return {
      "PRNGKey(0)": random.PRNGKey(0),
      "PRNGKey(42)": k42,
      "PRNGKey(-1)": random.PRNGKey(-1),
      "PRNGKey(2**40+3)": random.PRNGKey(2**40 + 3),
      "key_data(key(7))": random.key_data(random.key(7)),
      "split(k42)": random.split(k42),
      "split(k42,5)": random.split(k42, 5),
      "split(k42,(2,3))": random.split(k42, (2, 3)),
      "fold_in(k42,3)": random.fold_in(k42, 3),
      "fold_in(k42,2**31+5)": random.fold_in(k42, 2**31 + 5),
      "bits(k42,(5,))": random.bits(k42, (5,)),
      "bits(k42,(3,),uint8)": random.bits(k42, (3,), jnp.uint8),
      "bits(k42,(3,),uint16)": random.bits(k42, (3,), jnp.uint16),
      "uniform(k42,(7,))": random.uniform(k42, (7,)),
      "uniform(k,(2,3),-2,5)": random.uniform(k, (2, 3), minval=-2., maxval=5.),
      "uniform(k42,(4,),float16)": random.uniform(k42, (4,), jnp.float16),
      "uniform(k42,(4,),bfloat16)": random.uniform(k42, (4,), jnp.bfloat16),
      "normal(k42,(8,))": random.normal(k42, (8,)),
      "normal(k,(3,2))": random.normal(k, (3, 2)),
      "randint(k42,(10,),0,10)": random.randint(k42, (10,), 0, 10),
      "randint(k,(6,),-5,5)": random.randint(k, (6,), -5, 5),
      "randint(k,(6,),0,256,uint8)": random.randint(k, (6,), 0, 256, jnp.uint8),
      "bernoulli(k42,0.3,(10,))": random.bernoulli(k42, 0.3, (10,)),
      "permutation(k42,10)": random.permutation(k42, 10),
      "permutation(k,arange(12).reshape(4,3))": random.permutation(
          k, jnp.arange(12).reshape(4, 3)),
      "permutation(k,arange(12).reshape(4,3),axis=1,independent=True)": random.permutation(
          k, jnp.arange(12).reshape(4, 3), axis=1, independent=True),
      "choice(k42,10,(4,))": random.choice(k42, 10, (4,)),
      "choice(k42,10,(4,),replace=False)": random.choice(k42, 10, (4,), replace=False),
      "choice(k42,4,(6,),p=p)": random.choice(k42, 4, (6,), p=p),
      "choice(k42,4,(3,),replace=False,p=p)": random.choice(k42, 4, (3,), replace=False, p=p),
      "gamma(k42,[0.5,1,3,10])": random.gamma(k42, jnp.array([0.5, 1., 3., 10.])),
      "gamma(k,2.,(5,))": random.gamma(k, 2., (5,)),
      "beta(k42,2.,3.,(4,))": random.beta(k42, 2., 3., (4,)),
      "dirichlet(k42,[1,2,3])": random.dirichlet(k42, jnp.array([1., 2., 3.])),
      "exponential(k42,(5,))": random.exponential(k42, (5,)),
      "laplace(k42,(5,))": random.laplace(k42, (5,)),
      "logistic(k42,(5,))": random.logistic(k42, (5,)),
      "cauchy(k42,(5,))": random.cauchy(k42, (5,)),
      "gumbel(k42,(5,))": random.gumbel(k42, (5,)),
      "categorical(k42,log(p),shape=(6,))": random.categorical(k42, jnp.log(p), shape=(6,)),
      "truncated_normal(k42,-1.,2.,(6,))": random.truncated_normal(k42, -1., 2., (6,)),
      "poisson(k42,3.,(6,))": random.poisson(k42, 3., (6,)),
      "poisson(k42,30.,(4,))": random.poisson(k42, 30., (4,)),
  }


def x64_cases(random):
  k42 = random.PRNGKey(42)
  return {
      "PRNGKey(2**40+3)": random.PRNGKey(2**40 + 3),
      "bits(k42,(3,))": random.bits(k42, (3,)),
      "uniform(k42,(5,))": random.uniform(k42, (5,)),
      "normal(k42,(5,))": random.normal(k42, (5,)),
      "randint(k42,(6,),0,100)": random.randint(k42, (6,), 0, 100),
  }


# Samplers through log / log1p / tan, over sizes that take every vector-lane path of XLA.
SWEEP_SAMPLERS = ("gumbel", "laplace", "cauchy", "exponential", "logistic", "normal")
SWEEP_SHAPES = ((1,), (3,), (5,), (7,), (16,), (33,), (1000,), (2, 3))


# The gamma family (shape parameter after "@"), whose samplers XLA fuses into rejection loops.
SWEEP_ALPHAS = (0.3, 2.5)


def shape_sweep(random):
  """``{"<sampler>[@<alpha>]_<shape>": float32 draws}`` for random_reference_shapes.npz."""
  import jax.numpy as jnp
  key = random.PRNGKey(42)
  out = {f"{name}_{'x'.join(map(str, shape))}": np.asarray(getattr(random, name)(key, shape))
         for name in SWEEP_SAMPLERS for shape in SWEEP_SHAPES}
  for a in SWEEP_ALPHAS:
    for shape in SWEEP_SHAPES:
      tag = f"@{a}_{'x'.join(map(str, shape))}"
      out["gamma" + tag] = np.asarray(random.gamma(key, a, shape))
      out["loggamma" + tag] = np.asarray(random.loggamma(key, a, shape))
      out["beta" + tag] = np.asarray(random.beta(key, a, 2.0, shape))
    out[f"truncated_normal@{a}_1000"] = np.asarray(random.truncated_normal(key, -a, 2.0,
                                                                          (1000,)))
    out[f"dirichlet10@{a}_50"] = np.asarray(random.dirichlet(
        key, jnp.arange(1, 11, dtype=jnp.float32) * a, (50,)))
    out[f"dirichlet@{a}_6"] = np.asarray(random.dirichlet(key, jnp.array([a, 1.0, 2.0, 0.5]),
                                                          (6,)))
  return out


def mvn_sweep(random):
  """``{"mvn@<method>@<n>@<cov batch>_<shape>": float32 draws}`` (see mvn_cases.py)."""
  key = random.PRNGKey(42)
  return {name: np.asarray(random.multivariate_normal(key, *mvn_cases.inputs(n, batch), shape,
                                                      method=method))
          for name, (method, n, batch, shape) in mvn_cases.CASES.items()}


def encode(values):
  out = {}
  for name, v in values.items():
    a = np.asarray(v)
    out[name] = {"dtype": a.dtype.name, "shape": list(a.shape),
                 "values": a.astype(np.float64 if a.dtype.kind == "f" else a.dtype).tolist()}
  return out


if __name__ == "__main__":
  data = {"jax_version": jax.__version__, "x32": encode(cases(jax.random))}
  jax.config.update("jax_enable_x64", True)
  data["x64"] = encode(x64_cases(jax.random))
  path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "random_reference.json")
  with open(path, "w") as f:  # one case per line keeps diffs readable
    f.write(json.dumps(data).replace('}, "', '},\n "') + "\n")
  print(f"wrote {len(data['x32']) + len(data['x64'])} cases to {path}")
  jax.config.update("jax_enable_x64", False)
  import scipy   # multivariate_normal's factorizations come from SciPy's LAPACK
  np.savez_compressed(path.replace(".json", "_shapes.npz"), **shape_sweep(jax.random),
                      **mvn_sweep(jax.random), scipy_version=np.array(scipy.__version__))

