"""``jaxlite.scipy.stats.gaussian_kde`` (``jax.scipy.stats.gaussian_kde``).

A Gaussian kernel density estimate with ``scipy.stats.gaussian_kde``'s interface, as JAX
0.10.2 has it: a frozen dataclass registered as a pytree (its leaves are ``neff``,
``dataset``, ``weights``, ``covariance`` and ``inv_cov``), so an estimate can be passed
through ``jit`` and ``vmap``. ``evaluate``/``pdf``/``__call__``, ``logpdf``,
``integrate_gaussian``, ``integrate_box_1d``, ``integrate_kde`` and ``resample`` are
implemented; ``integrate_box`` and ``set_bandwidth`` raise NotImplementedError, as in JAX.
"""
from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.libraries import random
from jaxlite._src.base import tree
from jaxlite._src.libraries.numpy import namespace as jnp
from jaxlite._src.libraries.numpy.util import check_arraylike, promote_dtypes_inexact
from jaxlite._src.libraries.scipy import linalg
from jaxlite._src.libraries.scipy import special

__all__ = ["gaussian_kde"]


@tree.register_pytree_node_class
@dataclasses.dataclass(frozen=True, init=False, slots=True)
class gaussian_kde:
  """Gaussian kernel density estimator (``scipy.stats.gaussian_kde``).

  Parameters
  ----------
  dataset : array_like, real
    The data: shape ``(n,)`` for one dimension, ``(d, n)`` for ``d``.
  bw_method : None, 'scott', 'silverman', a scalar or a callable
    The bandwidth factor: Scott's rule (the default), Silverman's, the scalar itself, or
    ``bw_method(kde)``.
  weights : array_like, optional
    Weights of the ``n`` points (normalized to sum to 1).
  """
  neff: Any
  dataset: Any
  weights: Any
  covariance: Any
  inv_cov: Any

  def __init__(self, dataset, bw_method=None, weights=None):
    check_arraylike("gaussian_kde", dataset)
    dataset = jnp.atleast_2d(dataset)
    if dtypes.issubdtype(dataset.dtype, np.complexfloating):
      raise NotImplementedError("gaussian_kde does not support complex data")
    if not dataset.size > 1:
      raise ValueError("`dataset` input should have multiple elements.")
    d, n = dataset.shape
    if weights is not None:
      check_arraylike("gaussian_kde", weights)
      dataset, weights = promote_dtypes_inexact(dataset, weights)
      weights = jnp.atleast_1d(weights)
      weights = weights / jnp.sum(weights)
      if weights.ndim != 1:
        raise ValueError("`weights` input should be one-dimensional.")
      if len(weights) != n:
        raise ValueError("`weights` input should be of length n")
    else:
      dataset, = promote_dtypes_inexact(dataset)
      weights = jnp.full(n, 1.0 / n, dtype=dataset.dtype)
    self._set("dataset", dataset)
    self._set("weights", weights)
    neff = self._set("neff", 1 / jnp.sum(weights ** 2))

    bw_method = "scott" if bw_method is None else bw_method
    if isinstance(bw_method, str) and bw_method == "scott":
      factor = jnp.power(neff, -1.0 / (d + 4))
    elif isinstance(bw_method, str) and bw_method == "silverman":
      factor = jnp.power(neff * (d + 2) / 4.0, -1.0 / (d + 4))
    elif jnp.isscalar(bw_method) and not isinstance(bw_method, str):
      factor = bw_method
    elif callable(bw_method):
      factor = bw_method(self)
    else:
      raise ValueError(
          "`bw_method` should be 'scott', 'silverman', a scalar, or a callable.")
    data_covariance = jnp.atleast_2d(jnp.cov(dataset, rowvar=1, bias=False,
                                             aweights=weights))
    self._set("covariance", data_covariance * factor ** 2)
    self._set("inv_cov", jnp.linalg.inv(data_covariance) / factor ** 2)

  def _set(self, name, value):
    object.__setattr__(self, name, value)
    return value

  def tree_flatten(self):
    return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

  @classmethod
  def tree_unflatten(cls, aux_data, children):
    del aux_data
    kde = cls.__new__(cls)
    for name, value in zip(("neff", "dataset", "weights", "covariance", "inv_cov"),
                           children):
      kde._set(name, value)
    return kde

  @property
  def d(self):
    return self.dataset.shape[0]

  @property
  def n(self):
    return self.dataset.shape[1]

  def evaluate(self, points):
    """The estimated density at ``points`` (shape ``(d, m)``, or ``(m,)`` when d is 1)."""
    check_arraylike("evaluate", points)
    points = self._reshape_points(points)
    return _kernel_eval(False, self.dataset.T, self.weights[:, None], points.T,
                        self.inv_cov)[:, 0]

  def __call__(self, points):
    return self.evaluate(points)

  def pdf(self, x):
    """The estimated density at ``x`` (as ``evaluate``)."""
    return self.evaluate(x)

  def logpdf(self, x):
    """The log of the estimated density at ``x``."""
    check_arraylike("logpdf", x)
    x = self._reshape_points(x)
    return _kernel_eval(True, self.dataset.T, self.weights[:, None], x.T,
                        self.inv_cov)[:, 0]

  def integrate_gaussian(self, mean, cov):
    """The integral of the density times the Gaussian ``N(mean, cov)``."""
    mean = jnp.atleast_1d(jnp.squeeze(mean))
    cov = jnp.atleast_2d(cov)
    if mean.shape != (self.d,):
      raise ValueError(f"mean does not have dimension {self.d}")
    if cov.shape != (self.d, self.d):
      raise ValueError(f"covariance does not have dimension {self.d}")
    chol = linalg.cho_factor(self.covariance + cov)
    norm = 1.0 / (jnp.sqrt(2 * np.pi) ** self.d * jnp.prod(jnp.diag(chol[0])))
    return _kernel_convolve(chol, norm, self.dataset, self.weights, mean)

  def integrate_box_1d(self, low, high):
    """The integral of a one-dimensional density from ``low`` to ``high``."""
    if self.d != 1:
      raise ValueError("integrate_box_1d() only handles 1D pdfs")
    if np.ndim(low) != 0 or np.ndim(high) != 0:
      raise ValueError("the limits of integration in integrate_box_1d must be scalars")
    sigma = jnp.squeeze(jnp.sqrt(self.covariance))
    low = jnp.squeeze((low - self.dataset) / sigma)
    high = jnp.squeeze((high - self.dataset) / sigma)
    return jnp.sum(self.weights * (special.ndtr(high) - special.ndtr(low)))

  def integrate_kde(self, other):
    """The integral of the product of this density and ``other``'s."""
    if other.d != self.d:
      raise ValueError("KDEs are not the same dimensionality")
    chol = linalg.cho_factor(self.covariance + other.covariance)
    norm = 1.0 / (jnp.sqrt(2 * np.pi) ** self.d * jnp.prod(jnp.diag(chol[0])))
    small, large = (self, other) if self.n < other.n else (other, self)
    # every point of the smaller set against the whole larger one
    diff = large.dataset[:, None, :] - small.dataset[:, :, None]          # (d, m, n)
    alpha = linalg.cho_solve(chol, diff.reshape(self.d, -1)).reshape(diff.shape)
    arg = 0.5 * jnp.sum(diff * alpha, axis=0)                             # (m, n)
    result = norm * jnp.sum(jnp.exp(-arg) * large.weights, axis=1)
    return jnp.sum(result * small.weights)

  def resample(self, key, shape=()):
    """Draw from the estimate: an array of shape ``(d,) + shape``."""
    ind_key, eps_key = random.split(key)
    ind = random.choice(ind_key, self.n, shape=shape, p=self.weights)
    eps = random.multivariate_normal(eps_key, jnp.zeros(self.d, self.covariance.dtype),
                                     self.covariance, shape=shape,
                                     dtype=self.dataset.dtype).T
    return self.dataset[:, ind] + eps

  def integrate_box(self, low_bounds, high_bounds, maxpts=None):
    """Not implemented, as in JAX."""
    del low_bounds, high_bounds, maxpts
    raise NotImplementedError(
        "only 1D box integrations are supported; use `integrate_box_1d`")

  def set_bandwidth(self, bw_method=None):
    """Not implemented, as in JAX."""
    del bw_method
    raise NotImplementedError("dynamically changing the bandwidth method is not supported")

  def _reshape_points(self, points):
    if dtypes.issubdtype(jnp.result_type(points), np.complexfloating):
      raise NotImplementedError("gaussian_kde does not support complex coordinates")
    points = jnp.atleast_2d(points)
    d, m = points.shape
    if d != self.d:
      if d == 1 and m == self.d:
        points = jnp.reshape(points, (self.d, 1))
      else:
        raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
    return points


def _kernel_convolve(chol, norm, target, weights, mean):
  diff = target - mean[:, None]
  alpha = linalg.cho_solve(chol, diff)
  arg = 0.5 * jnp.sum(diff * alpha, axis=0)
  return norm * jnp.sum(jnp.exp(-arg) * weights)


def _kernel_eval(in_log, points, values, xi, precision):
  """Sum (or log-sum-exp) over the data points of the weighted Gaussian kernel at each
  row of ``xi``: points (n, d), values (n, 1), xi (m, d), precision (d, d) -> (m, 1)."""
  points, values, xi, precision = promote_dtypes_inexact(points, values, xi, precision)
  d = points.shape[1]
  if xi.shape[1] != d:
    raise ValueError("points and xi must have same trailing dim")
  if precision.shape != (d, d):
    raise ValueError("precision matrix must match data dims")
  whitening = linalg.cholesky(precision, lower=True)
  points = jnp.dot(points, whitening)
  xi = jnp.dot(xi, whitening)
  log_norm = jnp.sum(jnp.log(jnp.diag(whitening))) - 0.5 * d * jnp.log(2 * np.pi)
  arg = log_norm - 0.5 * jnp.sum(jnp.square(points[None, :, :] - xi[:, None, :]), axis=-1)
  if in_log:   # (m, n) terms, one column of values
    return special.logsumexp(jnp.log(values[None, :, :]) + arg[:, :, None], axis=1)
  return jnp.sum(values[None, :, :] * jnp.exp(arg)[:, :, None], axis=1)
