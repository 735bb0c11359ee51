"""Bayesian linear regression with numpyro's NUTS, written for JAX and run on jaxlite
unchanged.

The program imports ``jax`` and ``numpyro`` as any numpyro user would; started with
``python -m jaxlite`` every ``jax`` module resolves to jaxlite. It draws 50 points from
``y = 1 + 2 x + 0.5 noise`` (NumPy's generator, seed 0), puts weak priors on the intercept,
the slope and the noise scale, runs one NUTS chain (300 warm-up steps, 300 samples, seed 0)
and prints the posterior mean and standard deviation of each parameter.

Run:  pip install numpyro==0.22.0
      python -m jaxlite examples/numpyro_regression.py [--samples 300]

On the real JAX (``python examples/numpyro_regression.py``) it prints the same numbers, up
to float32 rounding.
"""
import argparse
import sys

try:
  import numpyro
  import numpyro.distributions as dist
  from numpyro.infer import MCMC, NUTS
except ImportError as e:
  sys.exit(f"This example needs numpyro ({e}).\nInstall it with: pip install numpyro==0.22.0")

import jax
import jax.numpy as jnp
import numpy as np


def model(x, y=None):
  """y ~ Normal(a + b x, s), with a, b ~ Normal(0, 10) and s ~ HalfNormal(5)."""
  a = numpyro.sample("a", dist.Normal(0.0, 10.0))
  b = numpyro.sample("b", dist.Normal(0.0, 10.0))
  s = numpyro.sample("s", dist.HalfNormal(5.0))
  with numpyro.plate("data", x.shape[0]):
    numpyro.sample("y", dist.Normal(a + b * x, s), obs=y)


def synthetic_data(n=50, seed=0):
  """``n`` points on the line 1 + 2 x with Gaussian noise of scale 0.5."""
  rng = np.random.default_rng(seed)
  x = rng.uniform(-1.0, 1.0, n).astype(np.float32)
  y = (1.0 + 2.0 * x + 0.5 * rng.standard_normal(n)).astype(np.float32)
  return jnp.asarray(x), jnp.asarray(y)


def main(argv=None):
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--warmup", type=int, default=300)
  parser.add_argument("--samples", type=int, default=300)
  args = parser.parse_args(argv)
  x, y = synthetic_data()
  mcmc = MCMC(NUTS(model), num_warmup=args.warmup, num_samples=args.samples,
              progress_bar=False)
  mcmc.run(jax.random.PRNGKey(0), x, y)
  samples = mcmc.get_samples()
  for name in ("a", "b", "s"):
    print(f"{name}: mean {float(jnp.mean(samples[name])):.6f} "
          f"std {float(jnp.std(samples[name])):.6f}")
  divergences = int(jnp.sum(mcmc.get_extra_fields()["diverging"]))
  print(f"samples: {samples['a'].shape[0]}, divergences: {divergences}")


if __name__ == "__main__":
  main()
