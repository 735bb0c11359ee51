"""``jnp.vectorize``: a function of core dimensions broadcast over loop dimensions, by one
``vmap`` over the flattened loop dimensions, as ``numpy.vectorize`` with a gufunc
``signature`` describes it."""
from __future__ import annotations

import functools
import re

import numpy as np

from jaxlite._src.lax.control_flow import vmap_axis
from jaxlite._src.libraries.numpy import lax_numpy
from jaxlite._src.libraries.numpy.creation import asarray

__all__ = ["vectorize"]

_DIMS = r"\w+"
_CORE = rf"(?:{_DIMS}(?:,{_DIMS})*)?"
_ARG = rf"\({_CORE}\)"
_SIGNATURE = re.compile(rf"^{_ARG}(?:,{_ARG})*->{_ARG}(?:,{_ARG})*$")


def _parse_signature(signature):
  if not _SIGNATURE.match(signature.replace(" ", "")):
    raise ValueError(f"not a valid gufunc signature: {signature}")
  ins, outs = signature.replace(" ", "").split("->")
  parse = lambda s: [tuple(re.findall(_DIMS, arg)) for arg in re.findall(r"\((.*?)\)", s)]
  return parse(ins), parse(outs)


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
  """Make ``pyfunc`` broadcast over leading ("loop") dimensions, like
  ``numpy.vectorize``, by ``vmap``-ing it once over the flattened loop dimensions.
  ``signature`` (e.g. ``'(n),(n)->()'``) names the core dimensions each argument keeps."""

  @functools.wraps(pyfunc)
  def wrapped(*args, **kwargs):
    excluded_pos = {e for e in excluded if isinstance(e, int)}
    excluded_kw = {e for e in excluded if isinstance(e, str)}
    fixed_kw = {k: v for k, v in kwargs.items() if k in excluded_kw}
    kwargs = {k: v for k, v in kwargs.items() if k not in excluded_kw}
    names = list(kwargs)
    all_args = list(args) + [kwargs[k] for k in names]
    vec_pos = [i for i in range(len(all_args)) if i not in excluded_pos]
    operands = [asarray(all_args[i]) for i in vec_pos]
    if signature is None:
      in_core = [()] * len(operands)
      out_core = None
    else:
      in_core, out_core = _parse_signature(signature)
      if len(in_core) != len(operands):
        raise TypeError(f"wrong number of positional arguments: expected "
                        f"{len(in_core)}, got {len(operands)}")
    sizes = {}
    loop_shapes = []
    for op, dims in zip(operands, in_core):
      if op.ndim < len(dims):
        raise ValueError(f"input with shape {op.shape} does not have enough dimensions "
                         f"for all core dimensions {dims}")
      core_shape = op.shape[op.ndim - len(dims):]
      for d, n in zip(dims, core_shape):
        if sizes.setdefault(d, n) != n:
          raise ValueError(f"inconsistent size for core dimension {d!r}: {n} vs "
                           f"{sizes[d]}")
      loop_shapes.append(op.shape[:op.ndim - len(dims)])
    loop = lax_numpy.broadcast_shapes(*loop_shapes) if loop_shapes else ()
    nloop = int(np.prod(loop))
    flat = [lax_numpy.reshape(lax_numpy.broadcast_to(op, loop + op.shape[op.ndim - len(d):]),
                              (nloop,) + op.shape[op.ndim - len(d):])
            for op, d in zip(operands, in_core)]

    def call(*vals):
      full = list(all_args)
      for i, v in zip(vec_pos, vals):
        full[i] = v
      pos, kw = full[:len(args)], dict(zip(names, full[len(args):]))
      return pyfunc(*pos, **kw, **fixed_kw)

    out = vmap_axis(lambda xs: call(*xs), tuple(flat), nloop) if flat else call()
    reshape = lambda o: lax_numpy.reshape(o, loop + o.shape[1:])
    if isinstance(out, tuple):
      return tuple(reshape(o) for o in out)
    return reshape(out)

  return wrapped
