"""Building blocks shared by the ``jaxlite.scipy.stats`` distributions: functions derived
from another one (``pdf = exp(logpdf)``, ``logcdf = log(cdf)``, as JAX derives them) and
the namespace that documents each function from its signature.
"""
from __future__ import annotations

import functools
import inspect
import types

from jaxlite._src.lax import elementwise as lax

_KINDS = {
    "logpdf": "Log of the probability density function",
    "pdf": "Probability density function",
    "cdf": "Cumulative distribution function",
    "logcdf": "Log of the cumulative distribution function",
    "sf": "Survival function ``1 - cdf``",
    "logsf": "Log of the survival function",
    "ppf": "Percent point function, the inverse of ``cdf``",
    "isf": "Inverse survival function, the inverse of ``sf``",
    "logpmf": "Log of the probability mass function",
    "pmf": "Probability mass function",
}


def _compose(outer, inner):
  # functools.wraps keeps inner's signature visible to inspect.signature (__wrapped__)
  @functools.wraps(inner)
  def fn(*args, **kwargs):
    return outer(inner(*args, **kwargs))
  return fn


def exp_of(log_fn):
  """``exp(log_fn(...))`` with ``log_fn``'s signature (``pdf`` from ``logpdf``)."""
  return _compose(lax.exp, log_fn)


def log_of(fn):
  """``log(fn(...))`` with ``fn``'s signature (``logcdf`` from ``cdf``)."""
  return _compose(lax.log, fn)


def _param_doc(param):
  default = "" if param.default is inspect.Parameter.empty else f", default {param.default}"
  return f"{param.name} : array_like{default}"


def _docstring(dist, kind, fn):
  params = "\n".join(_param_doc(p) for p in inspect.signature(fn).parameters.values())
  return (f"{_KINDS[kind]} of the {dist} distribution (``scipy.stats.{dist}.{kind}``).\n\n"
          f"Parameters\n----------\n{params}\n\n"
          "Returns\n-------\nArray\n"
          "  The broadcast result, in the inputs' floating type (integers become the default\n"
          "  float type).\n")


def distribution(dist, **functions):
  """A namespace of ``dist``'s functions, each named and documented as ``scipy.stats``'s."""
  for kind, fn in functions.items():
    if kind not in _KINDS:
      raise ValueError(f"unknown distribution function {kind!r} for {dist}; "
                       f"expected one of {sorted(_KINDS)}")
    fn.__name__ = fn.__qualname__ = kind
    fn.__doc__ = _docstring(dist, kind, fn)
  return types.SimpleNamespace(**functions)
