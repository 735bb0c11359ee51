"""``jax.interpreters.partial_eval``: tracing a function with some inputs known (flax's
``lazy_init`` and ``nn.scan``)."""
from jaxlite._src.base.linear_util import WrappedFun as _WrappedFun
from jaxlite._src.transforms import partial_eval as _pe
from jaxlite._src.transforms import staging as _staging
from jaxlite._src.transforms.partial_eval import PartialVal as PartialVal


def _callable(fun):
  return fun.call_wrapped if isinstance(fun, _WrappedFun) else fun


def trace_to_jaxpr_nounits(fun, pvals, instantiate=False):
  """``(jaxpr, out_pvals, consts)``: the work of ``fun`` (a WrappedFun, flat lists in and
  out) on the known ``pvals`` done now, the rest staged into ``jaxpr``, which computes
  the unknown outputs from ``consts`` (its constvars) and the unknown inputs."""
  return _pe.trace_to_jaxpr_nounits(_callable(fun), pvals, instantiate)


def trace_to_jaxpr_dynamic(fun, in_avals):
  """``(jaxpr, out_avals, consts)``: ``fun`` (flat lists in and out) staged on
  ``in_avals``."""
  closed = _staging.trace_to_jaxpr(_callable(fun), list(in_avals))
  return closed.jaxpr, closed.out_avals, closed.consts
