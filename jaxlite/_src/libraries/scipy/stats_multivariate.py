"""``jaxlite.scipy.stats``: the multivariate densities (``jax.scipy.stats.dirichlet`` and
``multivariate_normal``), with JAX 0.10.2's shape rules and errors."""
from __future__ import annotations

import functools
import types

import numpy as np

from jaxlite._src.lax import elementwise as lax
from jaxlite._src.lax import linalg as lax_linalg
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.libraries.numpy import namespace as jnp
from jaxlite._src.libraries.numpy.util import promote_dtypes_inexact
from jaxlite._src.libraries.scipy import special


# -- dirichlet
def _is_simplex(x):
  return jnp.all(x > 0, axis=0) & (abs(jnp.sum(x, axis=0) - 1) < 1E-6)


def _dirichlet_logpdf(x, alpha):
  """Dirichlet log probability density function (``scipy.stats.dirichlet.logpdf``).

  Parameters
  ----------
  x : array_like
    Points on the simplex along the first axis, with ``len(alpha)`` entries or one fewer
    (the last is then ``1 - sum``); ``-inf`` off the simplex.
  alpha : array_like
    One-dimensional concentration parameters.

  Returns
  -------
  Array
    ``sum((alpha - 1) log x) - log B(alpha)``, of shape ``x.shape[1:]``.
  """
  x, alpha = promote_dtypes_inexact(x, alpha)
  if alpha.ndim != 1:
    raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
  if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
    raise ValueError(
        "`x` must have either the same number of entries as `alpha` or one entry fewer; "
        f"got x.shape={x.shape}, alpha.shape={alpha.shape}")
  one = lax._const(x, 1)
  if x.shape[0] != alpha.shape[0]:
    x = jnp.concatenate([x, lax.sub(one, x.sum(0, keepdims=True))], axis=0)
  normalize_term = jnp.sum(special.gammaln(alpha)) - special.gammaln(jnp.sum(alpha))
  if x.ndim > 1:
    alpha = lax_shapes.broadcast_in_dim(alpha, alpha.shape + (1,) * (x.ndim - 1), (0,))
  log_probs = lax.sub(jnp.sum(special.xlogy(lax.sub(alpha, one), x), axis=0), normalize_term)
  return jnp.where(_is_simplex(x), log_probs, -np.inf)


def _dirichlet_pdf(x, alpha):
  """Dirichlet probability density function (``scipy.stats.dirichlet.pdf``)."""
  return lax.exp(_dirichlet_logpdf(x, alpha))


dirichlet = types.SimpleNamespace(logpdf=_dirichlet_logpdf, pdf=_dirichlet_pdf)


# -- multivariate_normal
_whiten = jnp.vectorize(
    functools.partial(lax_linalg.triangular_solve, lower=True, transpose_a=True),
    signature="(n,n),(n)->(n)")


def _mvn_logpdf(x, mean, cov, allow_singular=None):
  """Multivariate normal log density (``scipy.stats.multivariate_normal.logpdf``).

  Parameters
  ----------
  x : array_like
    Points, with the event dimension last (batch dimensions broadcast).
  mean : array_like
    The mean; a scalar makes every entry of ``x`` an independent normal.
  cov : array_like
    The ``(n, n)`` covariance (batched), or a scalar variance shared by all dimensions.
  allow_singular : None
    Only ``None``: JAX 0.10.2 has no singular covariances.

  Returns
  -------
  Array
    ``-(x - mean)^T cov^-1 (x - mean) / 2 - n log(2 pi) / 2 - log det(cov) / 2``.
  """
  if allow_singular is not None:
    raise NotImplementedError(
        "allow_singular argument of multivariate_normal.logpdf: JAX 0.10.2 supports only "
        "allow_singular=None (a positive definite cov); add a small multiple of the identity "
        "to a singular cov instead.")
  x, mean, cov = promote_dtypes_inexact(x, mean, cov)
  if not mean.shape:
    return -1/2 * jnp.square(x - mean) / cov - 1/2 * (jnp.log(2 * np.pi) + jnp.log(cov))
  n = mean.shape[-1]
  if not np.shape(cov):
    y = x - mean
    return (-1/2 * jnp.einsum("...i,...i->...", y, y) / cov
            - n/2 * (jnp.log(2 * np.pi) + jnp.log(cov)))
  if cov.ndim < 2 or cov.shape[-2:] != (n, n):
    raise ValueError(
        "multivariate_normal.logpdf got incompatible shapes: "
        f"mean.shape={mean.shape} needs cov of shape (..., {n}, {n}), got cov.shape={cov.shape}")
  L = lax_linalg.cholesky(cov)
  y = _whiten(L, x - mean)
  return (-1/2 * jnp.einsum("...i,...i->...", y, y) - n/2 * jnp.log(2 * np.pi)
          - jnp.log(L.diagonal(axis1=-1, axis2=-2)).sum(-1))


def _mvn_pdf(x, mean, cov):
  """Multivariate normal density (``scipy.stats.multivariate_normal.pdf``)."""
  return lax.exp(_mvn_logpdf(x, mean, cov))


multivariate_normal = types.SimpleNamespace(logpdf=_mvn_logpdf, pdf=_mvn_pdf)
