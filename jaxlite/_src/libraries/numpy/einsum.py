"""``einsum``: Einstein summation lowered to ``dot_general``, transposes and reductions.

Operands are first simplified on their own (repeated indices become diagonals, indices
no one else needs are summed out), then contracted two at a time in a greedy order: at
each step the pair whose result is smallest (ties: cheapest) goes first, as
``opt_einsum``'s greedy strategy does. Each pairwise contraction is one ``dot_general``
whose batch dimensions are the shared indices still needed later.
"""
from __future__ import annotations

import itertools
import string

import numpy as np

from jaxlite._src.base import dtypes
from jaxlite._src.lax import reductions as lax_red
from jaxlite._src.lax import shapes as lax_shapes
from jaxlite._src.lax.sharding_constraint import (canonicalize_out_sharding,
                                                  constrain)
from jaxlite._src.libraries.numpy import array_ops
from jaxlite._src.lax import elementwise as lax_ew
from jaxlite._src.libraries.numpy.util import as_operand, check_arraylike

__all__ = ["einsum", "einsum_path"]

_LETTERS = string.ascii_letters


def _parse(subscripts, operands):
  """``(input index strings, output index string, operands)`` with ellipses expanded."""
  if not isinstance(subscripts, str):
    # interleaved form: einsum(a, [0, 1], b, [1, 2], [0, 2])
    args = [subscripts] + list(operands)
    out = args.pop() if len(args) % 2 else None
    ops, subs = args[0::2], args[1::2]
    conv = lambda s: "".join("..." if x is Ellipsis else _LETTERS[x] for x in s)
    subscripts = ",".join(conv(s) for s in subs)
    if out is not None:
      subscripts += "->" + conv(out)
    operands = ops
  subscripts = subscripts.replace(" ", "")
  if "->" in subscripts:
    lhs, out = subscripts.split("->")
    explicit = True
  else:
    lhs, out, explicit = subscripts, None, False
  inputs = lhs.split(",")
  if len(inputs) != len(operands):
    raise ValueError(f"einsum: {len(inputs)} operand subscripts for {len(operands)} "
                     "operands.")
  used = set(c for s in inputs for c in s if c != ".")
  spare = iter(c for c in _LETTERS if c not in used)
  ell_dims = 0
  for s, x in zip(inputs, operands):
    if "..." in s:
      ell_dims = max(ell_dims, np.ndim(x) - (len(s) - 3))
  ell = "".join(next(spare) for _ in range(ell_dims))
  expanded = []
  for s, x in zip(inputs, operands):
    if "..." in s:
      k = np.ndim(x) - (len(s) - 3)
      s = s.replace("...", ell[ell_dims - k:] if k else "")
    if len(s) != np.ndim(x):
      raise ValueError(f"einsum: operand with shape {np.shape(x)} has subscripts {s!r} of "
                       "the wrong length.")
    expanded.append(s)
  if explicit:
    out = out.replace("...", ell)
  else:
    counts = {}
    for s in expanded:
      for c in s:
        counts[c] = counts.get(c, 0) + 1
    out = ell + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in ell))
  for c in out:
    if not any(c in s for s in expanded):
      raise ValueError(f"einsum: output subscript {c!r} does not appear in the inputs.")
  if len(set(out)) != len(out):
    raise ValueError(f"einsum: output subscript string {out!r} repeats an index.")
  return expanded, out, list(operands)


def _sizes(inputs, shapes):
  sizes = {}
  for s, shape in zip(inputs, shapes):
    for c, d in zip(s, shape):
      if sizes.get(c, 1) != d and d != 1 and sizes.get(c, 1) != 1:
        raise ValueError(f"einsum: size of index {c!r} differs between operands "
                         f"({sizes[c]} and {d}).")
      sizes[c] = max(sizes.get(c, 1), d)
  return sizes


def _greedy_path(inputs, out, sizes):
  """Pairs (i, j) of positions in the shrinking operand list, as numpy's einsum_path."""
  live = [set(s) for s in inputs]
  path = []
  size_of = lambda idx: int(np.prod([sizes[c] for c in idx], dtype=np.int64))
  while len(live) > 1:
    best = None
    for i, j in itertools.combinations(range(len(live)), 2):
      others = set(out).union(*[s for k, s in enumerate(live) if k not in (i, j)])
      result = (live[i] | live[j]) & others
      key = (size_of(result) - size_of(live[i]) - size_of(live[j]),
             size_of(live[i] | live[j]))
      if best is None or key < best[0]:
        best = (key, (i, j), result)
    _, (i, j), result = best
    path.append((i, j))
    live = [s for k, s in enumerate(live) if k not in (i, j)] + [result]
  return path


def einsum_path(subscripts, /, *operands, optimize="auto"):
  """The contraction order ``einsum`` uses: a list of pairs of positions in the shrinking
  operand list (opt_einsum's form, as JAX's), and a report. Always a greedy order, whatever
  ``optimize`` asks for."""
  inputs, out, ops = _parse(subscripts, operands)
  sizes = _sizes(inputs, [np.shape(x) for x in ops])
  path = _greedy_path(inputs, out, sizes)
  report = (f"  Complete contraction:  {','.join(inputs)}->{out}\n"
            f"  Optimized path: greedy, {len(path)} pairwise contraction(s)")
  return path, report


def _diagonalise(x, s):
  """Repeated indices of one operand become a diagonal (moved to the end)."""
  while True:
    dup = next((c for c in s if s.count(c) > 1), None)
    if dup is None:
      return x, s
    i = s.index(dup)
    j = s.index(dup, i + 1)
    x = array_ops.diagonal(x, 0, i, j)
    s = "".join(c for k, c in enumerate(s) if k not in (i, j)) + dup


def _sum_out(x, s, keep, dtype):
  """``x`` summed over the indices of ``s`` not in ``keep``, in ``dtype`` where the
  operand's type is narrower (an integer operand of a float einsum), as JAX sums."""
  axes = tuple(k for k, c in enumerate(s) if c not in keep)
  if not axes:
    return x, s
  if dtypes.result_type(x.dtype, dtype) != x.dtype:
    x = lax_ew.convert_element_type(x, dtype)
  # booleans sum as a logical or, as in JAX (lax's reduce_sum takes numbers only)
  reduce = lax_red.reduce_or if x.dtype == np.bool_ else lax_red.reduce_sum
  return reduce(x, axes), "".join(c for c in s if c in keep)


def _drop_broadcast(x, s, sizes):
  """Axes of size 1 that broadcast against a larger size are squeezed away."""
  axes = tuple(k for k, c in enumerate(s) if x.shape[k] == 1 and sizes[c] != 1)
  if not axes:
    return x, s
  return lax_shapes.squeeze(x, axes), "".join(c for k, c in enumerate(s) if k not in axes)


def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None, _dot_general=lax_red.dot_general, out_sharding=None):
  """Einstein summation (``numpy.einsum``), lowered to ``dot_general``.

  Parameters
  ----------
  subscripts : str
    E.g. ``'ij,jk->ik'``; ellipses and implicit output are supported, as is the
    interleaved form ``einsum(a, [0, 1], b, [1, 2])``.
  *operands : arrays
  optimize : 'auto', 'greedy', 'optimal', bool, or a path from ``einsum_path``
    Every setting but an explicit path uses the greedy pairwise order.
  precision, preferred_element_type
    Passed to each ``dot_general``.
  _dot_general : callable, optional
    What computes each pairwise contraction, called as ``lax.dot_general`` is (JAX's
    private hook, which flax.linen's attention passes).
  out_sharding : NamedSharding, optional
    How to lay out the result over the devices of its mesh (as in ``lax.dot_general``);
    it changes no value.

  Examples
  --------
  >>> import jaxlite.numpy as jnp
  >>> jnp.einsum('ij,j->i', jnp.ones((2, 3)), jnp.arange(3.0)).tolist()
  [3.0, 3.0]
  """
  if out is not None:
    raise NotImplementedError("The 'out' argument to jnp.einsum is not supported.")
  inputs, out_s, ops = _parse(subscripts, operands)
  check_arraylike("einsum", *ops)
  sharding = canonicalize_out_sharding(out_sharding, "einsum")
  # (as JAX's: the operands keep their dtypes, and every dot_general is asked for the
  # result type, which a library's _dot_general hook receives)
  ops = [as_operand(x) for x in ops]
  if preferred_element_type is None:
    pref, out_weak = dtypes.result_type(*ops, return_weak_type_flag=True)
  else:
    pref, out_weak = dtypes.check_user_dtype_supported(preferred_element_type, "einsum"), False
  sizes = _sizes(inputs, [x.shape for x in ops])
  terms = []
  for x, s in zip(ops, inputs):
    x, s = _drop_broadcast(x, s, sizes)
    x, s = _diagonalise(x, s)
    terms.append((x, s))
  # indices only one operand has and the output lacks are summed out at once
  for k, (x, s) in enumerate(terms):
    others = set(out_s).union(*[set(t) for m, (_, t) in enumerate(terms) if m != k])
    terms[k] = _sum_out(x, s, others, pref)
  if isinstance(optimize, (list, tuple)):   # a path, opt_einsum's or NumPy's (named first)
    path = [p for p in optimize if p != "einsum_path"]
  else:
    path = _greedy_path([s for _, s in terms], out_s, sizes)
  for i, j in path:
    (a, sa), (b, sb) = terms[i], terms[j]
    rest = [t for k, t in enumerate(terms) if k not in (i, j)]
    later = set(out_s).union(*[set(s) for _, s in rest])
    shared = [c for c in sa if c in sb]
    batch = [c for c in shared if c in later]
    contract = [c for c in shared if c not in later]
    free_a = "".join(c for c in sa if c not in shared)
    free_b = "".join(c for c in sb if c not in shared)
    if not rest and "".join(batch) + free_b + free_a == out_s:
      # as JAX does: swap the operands when that order needs no transpose afterwards
      (a, sa), (b, sb), free_a, free_b = (b, sb), (a, sa), free_b, free_a
    dn = ((tuple(sa.index(c) for c in contract), tuple(sb.index(c) for c in contract)),
          (tuple(sa.index(c) for c in batch), tuple(sb.index(c) for c in batch)))
    res = _dot_general(a, b, dn, precision, preferred_element_type=pref)
    s = "".join(batch) + free_a + free_b
    res, s = _sum_out(res, s, later, pref)
    terms = rest + [(res, s)]
  (x, s), = terms
  x, s = _sum_out(x, s, set(out_s), pref)
  if s != out_s:
    x = lax_shapes.transpose(x, tuple(s.index(c) for c in out_s))
  if x.dtype != pref or x.weak_type != out_weak:
    x = lax_ew._convert_element_type(x, pref, weak_type=out_weak)
  return x if sharding is None else constrain(x, sharding)
