"""``jaxlite.scipy.cluster.vq`` (``jax.scipy.cluster.vq``): vector quantization."""
from __future__ import annotations

from jaxlite._src.libraries.numpy import namespace as jnp
from jaxlite._src.libraries.numpy.util import check_arraylike, promote_dtypes_inexact

__all__ = ["vq"]


def vq(obs, code_book, check_finite=True):
  """Assign each observation the nearest code (``scipy.cluster.vq.vq``).

  Parameters
  ----------
  obs : array_like
    Observations, ``(M, N)`` (or ``(M,)``: one feature each).
  code_book : array_like
    Codes, ``(K, N)`` (or ``(K,)``), of ``obs``'s rank.
  check_finite : bool
    Unused, as in JAX.

  Returns
  -------
  code, dist : Array
    The index ``(M,)`` of each observation's nearest code (the first of equals), and the
    Euclidean distance to it.
  """
  del check_finite   # unused, as in JAX
  check_arraylike("scipy.cluster.vq.vq", obs, code_book)
  obs, code_book = promote_dtypes_inexact(obs, code_book)
  if obs.ndim != code_book.ndim:
    raise ValueError("Observation and code_book should have the same rank")
  if obs.ndim == 1:
    obs, code_book = obs[:, None], code_book[:, None]
  if obs.ndim != 2:
    raise ValueError("ndim different than 1 or 2 are not supported")
  dist = jnp.linalg.norm(obs[:, None, :] - code_book[None, :, :], axis=-1)
  code = jnp.argmin(dist, axis=-1)
  return code, jnp.take_along_axis(dist, code[:, None], axis=-1)[:, 0]
