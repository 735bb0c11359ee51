"""check_grads over the differentiable jnp / nn / scipy functions, in float32 and float64,
at two points each (the primitives themselves are covered in test_autodiff.py)."""
import numpy as np
import pytest

import jaxlite as jax
import jaxlite.numpy as jnp
import jaxlite.scipy.special as jsp
from jaxlite.test_util import check_grads

M = np.array([[1.2, 0.3, -0.4], [0.1, 0.9, 0.2], [-0.3, 0.5, 1.4]])

# name -> (function, domain low, domain high, shape)
FUNCTIONS = {
    "sin": (jnp.sin, -2, 2), "cos": (jnp.cos, -2, 2), "tan": (jnp.tan, -1, 1),
    "arcsin": (jnp.arcsin, -0.8, 0.8), "arccos": (jnp.arccos, -0.8, 0.8),
    "arctan": (jnp.arctan, -2, 2), "sinh": (jnp.sinh, -2, 2), "cosh": (jnp.cosh, -2, 2),
    "tanh": (jnp.tanh, -2, 2), "arcsinh": (jnp.arcsinh, -2, 2),
    "arccosh": (jnp.arccosh, 1.5, 3), "arctanh": (jnp.arctanh, -0.8, 0.8),
    "exp": (jnp.exp, -2, 2), "exp2": (jnp.exp2, -2, 2), "expm1": (jnp.expm1, -2, 2),
    "log": (jnp.log, 0.5, 3), "log1p": (jnp.log1p, -0.5, 2), "log2": (jnp.log2, 0.5, 3),
    "log10": (jnp.log10, 0.5, 3), "sqrt": (jnp.sqrt, 0.5, 3), "cbrt": (jnp.cbrt, 0.5, 3),
    "square": (jnp.square, -2, 2), "reciprocal": (jnp.reciprocal, 0.5, 2),
    "abs": (jnp.abs, 0.5, 2), "negative": (jnp.negative, -2, 2),
    "deg2rad": (jnp.deg2rad, -2, 2), "sinc": (jnp.sinc, 0.2, 0.9),
    "hypot": (lambda x: jnp.hypot(x, 1.5), -2, 2),
    "logaddexp": (lambda x: jnp.logaddexp(x, 0.3), -2, 2),
    "arctan2": (lambda x: jnp.arctan2(x, 1.3), -2, 2),
    "power": (lambda x: jnp.power(x, 2.5), 0.5, 2), "float_power": (
        lambda x: jnp.float_power(x, 1.5), 0.5, 2),
    "clip": (lambda x: jnp.clip(x, -0.5, 0.5), -2, 2),
    "sum": (jnp.sum, -2, 2), "prod": (jnp.prod, 0.5, 1.5), "mean": (jnp.mean, -2, 2),
    "var": (jnp.var, -2, 2), "std": (jnp.std, -2, 2), "max": (jnp.max, -2, 2),
    "min": (jnp.min, -2, 2), "cumsum": (jnp.cumsum, -2, 2), "cumprod": (jnp.cumprod, 0.5, 1.5),
    "sort": (jnp.sort, -2, 2), "norm": (jnp.linalg.norm, -2, 2),
    "logsumexp": (jsp.logsumexp, -2, 2), "softmax": (jax.nn.softmax, -2, 2),
    "log_softmax": (jax.nn.log_softmax, -2, 2), "relu": (jax.nn.relu, 0.3, 2),
    "gelu": (jax.nn.gelu, -2, 2), "silu": (jax.nn.silu, -2, 2),
    "sigmoid": (jax.nn.sigmoid, -2, 2), "softplus": (jax.nn.softplus, -2, 2),
    "elu": (jax.nn.elu, 0.3, 2), "erf": (jsp.erf, -1.5, 1.5), "erfc": (jsp.erfc, -1.5, 1.5),
    "erfinv": (jsp.erfinv, -0.8, 0.8), "gammaln": (jsp.gammaln, 0.5, 3),
    "digamma": (jsp.digamma, 0.5, 3), "expit": (jsp.expit, -2, 2),
    "logit": (jsp.logit, 0.2, 0.8), "xlogy": (lambda x: jsp.xlogy(x, 1.7), -2, 2),
    "ndtr": (jsp.ndtr, -2, 2),
    "outer": (lambda x: jnp.outer(x, x), -2, 2), "kron": (lambda x: jnp.kron(x, x), -2, 2),
    "flip": (jnp.flip, -2, 2), "roll": (lambda x: jnp.roll(x, 1), -2, 2),
    "diff": (jnp.diff, -2, 2), "convolve": (lambda x: jnp.convolve(x, x), -2, 2),
    "matmul": (lambda x: jnp.asarray(M, x.dtype) @ x, -2, 2),
    "einsum": (lambda x: jnp.einsum("ij,j->i", jnp.asarray(M, x.dtype), x), -2, 2),
    "solve": (lambda x: jnp.linalg.solve(jnp.asarray(M, x.dtype), x), -2, 2),
    "det": (lambda x: jnp.linalg.det(jnp.asarray(M, x.dtype) + jnp.diag(x)), -0.3, 0.3),
    "inv": (lambda x: jnp.linalg.inv(jnp.asarray(M, x.dtype) + jnp.diag(x)), -0.3, 0.3),
    "fft_abs": (lambda x: jnp.abs(jnp.fft.rfft(x)), 0.5, 2),
    "interp": (lambda x: jnp.interp(x, jnp.array([-3.0, 0.0, 3.0]), jnp.array([0.0, 1.0, 5.0])),
               -2, 2),
    "where": (lambda x: jnp.where(x > 0, x ** 2, jnp.sin(x)), 0.2, 2),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_function_derivatives_match_finite_differences(name, dtype, x64):
  x64(dtype == np.float64)
  fun, lo, hi = FUNCTIONS[name]
  for seed in (0, 1):
    x = np.random.default_rng(seed).uniform(lo, hi, 3).astype(dtype)
    check_grads(fun, (x,), order=1)
